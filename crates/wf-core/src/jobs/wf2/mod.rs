//! `wf wf2`: the Wide Finder 2 report (Tim Bray, 2008), exact and at memory speed.
//!
//! # Rules (one record = one line; a final unterminated line counts)
//! - Fields are split on runs of ASCII whitespace (space, `\t`, `\n`, `\x0b`, `\x0c`,
//!   `\r`); a line starting with whitespace has an empty field 0 (Ruby's
//!   `line.split(/\s+/)`).
//! - Only lines whose field 5 is exactly `"GET` count. client = field 0, uri = 6,
//!   status = 8, bytes = 9, referrer = 10.
//! - status `200` records the leading ASCII digits of field 9 (saturating at
//!   `u64::MAX`; 0 if none or absent); `304` records 0; `404` counts a 404 for the uri;
//!   anything else (or no status) does nothing.
//! - record(n): `uri_bytes[uri] += n` (the sum saturates at `u64::MAX` too); if the uri
//!   is an article (`^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$`):
//!   `uri_hits[uri] += 1`, `clients[client] += 1`, and if field 10 exists, is not
//!   `"-"` and does not start with `"http://www.tbray.org/ongoing/`,
//!   `referrers[field 10 minus its first and last byte] += 1`.
//! - A line longer than 1 MiB ([`LONG_LINE`]) is judged by its first MiB, as if it
//!   ended there (and counted once): a log line is a few hundred bytes, and
//!   holding the rest of a 200 MB line, or of an endless one, would cost memory
//!   without the fields anyone asked for (see [`Job::long_records`]).
//!
//! # How it is fast
//! - Bitmaps, not bytes: a chunk is cut into ~32 KiB windows of whole lines; one
//!   AVX2 (or SSE2) pass per window makes three bitmaps: whitespace, newlines and
//!   field starts (not whitespace, after whitespace). Lines come from the newline
//!   bits and a line's fields 0..=10 from its field-start bits, taken word by word
//!   with `trailing_zeros` and clearing the lowest bit; a field's end is one
//!   unaligned read of the whitespace map. No per-byte loop, no UTF-8 validation,
//!   no regex, no allocation per line; odd lines (tabs, runs of spaces, CR, NUL,
//!   invalid UTF-8, huge fields) take the same exact path. This replaced a
//!   field-by-field search over four lines in lockstep: 11% fewer instructions
//!   (cachegrind, 200 MB sample), the same speed on its own (the time was in the
//!   tables, below). Later, 9% fewer again (184 M to 168 M on a 50 MB sample;
//!   `-j 2` CPU time 4% less, medians of 9): the AVX2 whitespace test is a
//!   `vpshufb` table lookup and one compare, and a line's ten field starts are
//!   taken without a bound test each (sentinel bits after the window stop the
//!   search) and checked against the line's end once.
//! - Word-at-a-time article matcher and byte-count parser.
//! - `uri_hits`, `uri_bytes` and `404s` share one table keyed by uri, so an article
//!   hit costs one uri lookup. Each key is hashed once with `ahash`, keyed randomly
//!   once per process (logs are untrusted input).
//! - Table updates wait for the end of their window, and their loads are started
//!   early, in two steps: when a line queues an update, a prefetch of the key's
//!   hint slot; at the window's end, a prefetch of the entry the hint names for
//!   every queued update, then the updates. A lookup first checks the hinted entry
//!   (full hash and key compared), then asks the `hashbrown` table. Measured
//!   (`wf wf2 -j 1`, 1 GiB, warm): skipping the client and referrer lookups
//!   altogether saved 0.3 s of 0.9 s, about 240 ns for each of their 1.3 M
//!   lookups, i.e. misses to memory (137 k clients, 8 MB of entries); with the
//!   queue, the two-step prefetch and the hint, `wf wf2` took 0.77x the time of
//!   the previous version (-j 1 and -j 2, medians of 7).
//! - A state read back (`--state`, partial states) keeps its tables encoded, with
//!   an index of their keys made while the scan runs (`saved`): the run's keys
//!   are found in it by their stored hashes and added as the state is written
//!   and reported. The hourly bench run: 13% less CPU, 35% fewer page faults,
//!   RSS 72 -> 50 MB, the same wall time; with the state then written as it is
//!   encoded (`partial::encode_to`), 0.152 -> 0.136 s (`incremental-2026-11-28f.txt`).
//! - States merge once, the smaller into the larger, reusing stored hashes. Top-N
//!   uses a bounded heap: O(keys · log N) time, O(N) extra memory; whole tables are
//!   never sorted. Memory is proportional to the distinct keys (plus per-thread
//!   window buffers), not to the input.
//!
//! # Counters (for `--stats`)
//! - `lines`: records seen.
//! - `not_get`: lines whose field 5 is missing or is not exactly `"GET`. This
//!   includes every line counted in `too_few_fields`.
//! - `too_few_fields`: lines with fewer than 6 fields (blank lines included).

use std::collections::BinaryHeap;

use hashbrown::hash_table::{Entry, HashTable};

use super::partial::{Damage, Partial, Reader, Writer};
use super::{Chunk, Job, Piece};

mod saved;

use saved::{Saved, Vals};

/// The Wide Finder 2 job.
pub struct Wf2;

/// Per-thread state of [`Wf2`].
pub struct Wf2State {
    /// Records (lines) seen.
    pub lines: u64,
    /// Lines whose field 5 is missing or not exactly `"GET` (includes `too_few_fields`).
    pub not_get: u64,
    /// Lines with fewer than 6 fields (a subset of `not_get`).
    pub too_few_fields: u64,
    rs: ahash::RandomState,
    avx2: bool,
    bm: Bitmaps,
    uris: Table<UriVals>,
    clients: Table<u64>,
    refs: Table<u64>,
    /// Table updates of the current window, applied at its end.
    uri_q: Vec<(Pending, UriOp)>,
    client_q: Vec<Pending>,
    ref_q: Vec<Pending>,
    /// The tables of a state read back, encoded (`saved`): what the tables
    /// above count is added to them when the state is written or finished.
    saved: Option<Saved>,
    /// The saved tables matched with the tables above, once, for both
    /// `write_state` and `finish` (reset by anything that counts more).
    matched: std::sync::OnceLock<Box<[saved::Matched; 3]>>,
}

/// The finished report: totals and the five top-N lists (best first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wf2Report {
    /// Records (lines) seen.
    pub lines: u64,
    /// Distinct article URIs hit.
    pub resources: u64,
    /// Distinct URIs with a 404.
    pub not_found: u64,
    /// Distinct clients of article hits.
    pub clients: u64,
    /// `[uri_hits, uri_bytes, 404s, clients, referrers]`, each sorted by value
    /// descending, then key ascending by bytes; at most `top_n` entries.
    pub top: [Vec<(Vec<u8>, u64)>; 5],
    /// Lines whose field 5 is missing or not exactly `"GET` (includes `too_few_fields`).
    pub not_get: u64,
    /// Lines with fewer than 6 fields (a subset of `not_get`).
    pub too_few_fields: u64,
}

/// Index of each list in [`Wf2Report::top`].
pub const URI_HITS: usize = 0;
pub const URI_BYTES: usize = 1;
pub const NOT_FOUND: usize = 2;
pub const CLIENTS: usize = 3;
pub const REFERRERS: usize = 4;

// ---------------------------------------------------------------------------------
// Byte-keyed tables: a `hashbrown::HashTable` of slots (a `u32` entry number and
// the top half of the key's hash) over an entry store of 64-byte lines. An entry
// starts on a line: its hash, the key's length, the values, then the key bytes, so
// the key is compared where its values are (one line for most clients) and the
// index stays small. Keys are copied once, when first seen; a lookup compares the
// stored hash, then the length, then the bytes. Stored hashes serve the merge (no rehashing); the half kept in each slot
// serves the index's regrowth and the hint array's, and skips other keys met on a
// probe, without loading their entries (perf: regrowth went from 5.2% of
// `wf wf2`'s samples to under 1%). A merge reads the other table's entries front
// to back and starts its loads 64 keys at a time.
//
// Beside the table, a hint array maps the hash's top bits to the entry last used
// with them: its only uses are to prefetch that entry before a lookup and to try
// it first (compared in full, so a stale or colliding hint costs a table lookup,
// never a wrong answer). Entries never move, so a hint is always a valid entry.
//
// Why: perf put 39% of `wf wf2 -j 1` on two dependent misses per lookup in the
// first design (hashbrown slots holding key offsets into a separate arena). The
// entry store alone (key beside its values) measured within noise of it; the gain
// came with the hints, which let the misses of a window's updates overlap.
//
// What is left: a key the hint does not name goes to hashbrown's probe, whose
// loads start only when it runs. On the 1 GiB generated log that is 26% of the
// client and referrer lookups (332 k of 1.29 M, two threads), 263 k of them new
// keys, against 2.4% of the uri lookups; skipping the client and referrer updates
// saves about 0.2 s of `-j 1`'s 0.7 s. hashbrown has no way yet to start a probe's
// loads early (rust-lang/hashbrown#677, an open pull request #727); with one, the
// probe could be started where the hint slot is now.

/// One ahash state per process, shared by every thread's state (states merge by
/// stored hash). Randomly keyed, so crafted log lines cannot force collisions.
fn random_state() -> &'static ahash::RandomState {
    static RS: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
    RS.get_or_init(ahash::RandomState::new)
}

/// The hash of `key` under `rs` (see [`Wf2State::hash`]).
#[inline(always)]
fn key_hash(rs: &ahash::RandomState, key: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rs.build_hasher();
    h.write(key);
    h.finish()
}

/// Start loading the cache line at `p` (no effect on the program's state; a no-op
/// off x86_64).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing into the program and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(p as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// One cache line of a table's entry store.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// Values kept per uri: `uri_bytes`, `uri_hits` and `404s` share one key.
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct UriVals {
    /// Sum for `uri_bytes` (saturating).
    bytes: u64,
    /// `uri_hits` count.
    hits: u64,
    /// `404s` count.
    not_found: u64,
    /// 1 if the uri is a `uri_bytes` key (recorded at least once).
    recorded: u64,
}

/// Bytes before an entry's values: the hash and the key's length.
const HEAD: usize = 16;

/// A slot of a table's index: an entry number (the index of the entry's first
/// line) and the top half of the key's hash, so that the index regrows, and
/// passes over other keys, without loading entries.
#[derive(Clone, Copy)]
struct Slot {
    i: u32,
    top: u32,
}

/// The hash half kept in a [`Slot`].
#[inline(always)]
fn top(h: u64) -> u32 {
    (h >> 32) as u32
}

/// The hash `hashbrown` places a slot by, from the kept half alone (an odd
/// multiplier: uniform low bits stay uniform, and the high bits, hashbrown's tag,
/// mix all 32).
#[inline(always)]
fn placed(top: u32) -> u64 {
    (top as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

struct Table<V> {
    /// Entries by the top half of their hash.
    map: HashTable<Slot>,
    /// Entries, each starting on a line: `[hash, key length, values, key bytes]`.
    lines: Vec<Line>,
    /// Prefetch hints: the entry last found for each value of the hash's top bits
    /// (`hint.len()` is a power of two). Only ever used to start loading a line early.
    hint: Vec<u32>,
    _v: std::marker::PhantomData<V>,
}

impl<V: bytemuck::Pod + Default> Table<V> {
    /// Byte offset of the key within an entry.
    const KEY: usize = HEAD + std::mem::size_of::<V>();

    fn new() -> Self {
        assert!(std::mem::align_of::<V>() <= 8 && std::mem::size_of::<V>().is_multiple_of(8));
        Table {
            map: HashTable::new(),
            lines: Vec::new(),
            hint: vec![0; 1024],
            _v: std::marker::PhantomData,
        }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Entry `i`'s hash and key.
    #[inline(always)]
    fn entry(lines: &[Line], i: u32) -> (u64, &[u8]) {
        let words: &[u64] = bytemuck::cast_slice(lines);
        let bytes: &[u8] = bytemuck::cast_slice(lines);
        let at = i as usize * 8;
        let len = words[at + 1] as usize;
        let k = at * 8 + Self::KEY;
        (words[at], &bytes[k..k + len])
    }

    /// Does entry `i` hold `key` (hash `h`)? Compares the stored hash, then the
    /// length, then the bytes.
    #[inline(always)]
    fn holds(lines: &[Line], i: u32, h: u64, key: &[u8]) -> bool {
        let words: &[u64] = bytemuck::cast_slice(lines);
        let at = i as usize * 8;
        words[at] == h && words[at + 1] == key.len() as u64 && {
            let bytes: &[u8] = bytemuck::cast_slice(lines);
            let k = at * 8 + Self::KEY;
            bytes_eq(&bytes[k..k + key.len()], key)
        }
    }

    /// Entry `i`'s values.
    #[inline(always)]
    fn vals(lines: &[Line], i: u32) -> &V {
        let bytes: &[u8] = bytemuck::cast_slice(lines);
        let v = i as usize * 64 + HEAD;
        bytemuck::from_bytes(&bytes[v..v + std::mem::size_of::<V>()])
    }

    /// Slot of `hint` for hash `h` (its top bits, so also known from a [`Slot`]).
    #[inline(always)]
    fn hint_at(&self, h: u64) -> usize {
        (h >> (64 - self.hint.len().trailing_zeros())) as usize
    }

    /// Start loading the hint for `h` (step one of two: see [`Table::prefetch`]).
    #[inline(always)]
    fn prefetch_hint(&self, h: u64) {
        prefetch(&self.hint[self.hint_at(h)] as *const u32 as *const u8);
    }

    /// Start loading the entry that `h`'s key probably has (a hint, no more).
    #[inline(always)]
    fn prefetch(&self, h: u64) {
        let i = self.hint[self.hint_at(h)] as usize;
        // The entry's first two lines (most keys fit in them).
        for line in self.lines.get(i..).unwrap_or_default().iter().take(2) {
            prefetch(line as *const Line as *const u8);
        }
    }

    /// The values for `key` (hash `h`), inserted as `V::default()` if new.
    #[inline(always)]
    fn get(&mut self, h: u64, key: &[u8]) -> &mut V {
        // The hinted entry, if it holds the key (full hash and bytes compared).
        let at = self.hint_at(h);
        let i = self.hint[at] as usize;
        if i < self.lines.len() && Self::holds(&self.lines, i as u32, h, key) {
            return self.vals_mut(i);
        }
        let lines = &self.lines;
        let t = top(h);
        let eq = |s: &Slot| s.top == t && Self::holds(lines, s.i, h, key);
        let i = match self.map.entry(placed(t), eq, |s| placed(s.top)) {
            Entry::Occupied(e) => e.get().i,
            Entry::Vacant(e) => {
                let i = self.lines.len();
                let n = (Self::KEY + key.len()).div_ceil(64);
                // 2^32 lines are 256 GiB of keys in one thread's table: memory runs
                // out long before.
                let i32 = u32::try_from(i).expect("a table of over 256 GiB");
                self.lines.resize(i + n, Line([0; 8]));
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.lines[i..]);
                bytes[..8].copy_from_slice(&h.to_ne_bytes());
                bytes[8..16].copy_from_slice(&(key.len() as u64).to_ne_bytes());
                *bytemuck::from_bytes_mut(&mut bytes[HEAD..Self::KEY]) = V::default();
                bytes[Self::KEY..Self::KEY + key.len()].copy_from_slice(key);
                e.insert(Slot { i: i32, top: t });
                self.hint_room(self.map.len());
                i32
            }
        };
        let at = self.hint_at(h);
        self.hint[at] = i;
        self.vals_mut(i as usize)
    }

    /// Entry `i`'s values, to update.
    #[inline(always)]
    fn vals_mut(&mut self, i: usize) -> &mut V {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.lines);
        let v = i * 64 + HEAD;
        bytemuck::from_bytes_mut(&mut bytes[v..v + std::mem::size_of::<V>()])
    }

    /// Keep the hint array at least twice `keys` long.
    #[inline(always)]
    /// Room for `keys` more keys, of at most `key_bytes` bytes in all, without
    /// growing as they arrive (a state read back: its counts are known before
    /// its keys, and its bytes left bound their lengths). An entry takes
    /// `ceil((KEY + len) / 64)` lines, at most `1 + (KEY + len) / 64`; the bound
    /// is generous, but lines reserved and never written cost no memory. With
    /// one line a key reserved, the entry store of the 10 GiB bench's state
    /// regrew while it was read back: 27% of the hourly run's page faults were
    /// the copies of that growth (perf record -e page-faults).
    fn reserve(&mut self, keys: usize, key_bytes: usize) {
        self.lines
            .reserve(keys + (keys * Self::KEY + key_bytes).div_ceil(64));
        self.map.reserve(keys, |s| placed(s.top));
        self.hint_room(self.len() + keys);
    }

    fn hint_room(&mut self, keys: usize) {
        while keys * 2 > self.hint.len() {
            self.regrow_hint();
        }
    }

    /// Double the hint array (see [`Table::hint_room`]).
    #[cold]
    fn regrow_hint(&mut self) {
        self.hint = vec![0; self.hint.len() * 2];
        for s in self.map.iter() {
            // The slot's half holds the bits `hint_at` takes (at most 32 of them).
            let at = self.hint_at((s.top as u64) << 32);
            self.hint[at] = s.i;
        }
    }

    /// Every entry number, in the order the entries were stored (front to back
    /// through the entry store, not in the index's random order).
    fn entries(&self) -> impl Iterator<Item = u32> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            (i < self.lines.len()).then(|| {
                let at = i as u32;
                i += (Self::KEY + Self::entry(&self.lines, at).1.len()).div_ceil(64);
                at
            })
        })
    }

    /// Fold `other` in, `add(into_values, other_values)` per key, reusing its
    /// stored hashes. `other`'s entries are read in the order they were stored
    /// (front to back, not in its index's random order), and this table's loads
    /// are started for 64 of them at a time, in the same two steps as a window's
    /// updates: hint slots, then the hinted entries.
    fn merge(&mut self, other: &Table<V>, add: impl Fn(&mut V, &V)) {
        const BATCH: usize = 64;
        // Grow once, not by doubling as keys arrive.
        self.lines.reserve(other.lines.len());
        self.map.reserve(other.len(), |s| placed(s.top));
        self.hint_room(self.len() + other.len());
        let mut batch = [(0u64, 0u32); BATCH];
        let mut entries = other.entries().peekable();
        while entries.peek().is_some() {
            let mut n = 0;
            for i in entries.by_ref().take(BATCH) {
                let h = Self::entry(&other.lines, i).0;
                self.prefetch_hint(h);
                batch[n] = (h, i);
                n += 1;
            }
            for &(h, _) in &batch[..n] {
                self.prefetch(h);
            }
            for &(h, j) in &batch[..n] {
                let key = Self::entry(&other.lines, j).1;
                let v = self.get(h, key);
                add(v, Self::vals(&other.lines, j));
            }
        }
    }
}

/// `a == b` for slices of equal length, inline (keys are short; a libc call costs
/// more than the compare).
#[inline(always)]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    debug_assert_eq!(n, b.len());
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if r8(a, i) != r8(b, i) {
                return false;
            }
            i += 8;
        }
        r8(a, n - 8) == r8(b, n - 8)
    } else if n >= 4 {
        r4(a, 0) == r4(b, 0) && r4(a, n - 4) == r4(b, n - 4)
    } else {
        (0..n).all(|i| a[i] == b[i])
    }
}

#[inline(always)]
fn r8(k: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(k[i..i + 8].try_into().unwrap())
}

#[inline(always)]
fn r4(k: &[u8], i: usize) -> u64 {
    u32::from_le_bytes(k[i..i + 4].try_into().unwrap()) as u64
}

// ---------------------------------------------------------------------------------
// Field scanning.
//
// A chunk is cut into windows of whole lines (about `WINDOW` bytes). For each
// window, one SIMD pass builds two bitmaps, one bit per byte: whitespace and
// newline. Field splitting then reads 57+ bits at any position with one unaligned
// load and finds field ends and starts with `trailing_zeros`, with no per-byte loop
// and few branches. Bits past the window's end are set in both maps, so every scan
// stops there: a final line without a newline ends at the end of the data.

/// Bytes per window (the bitmaps, 1/4 of that, stay in L1).
const WINDOW: usize = 32 * 1024;

#[inline(always)]
fn is_ws(b: u8) -> bool {
    b == b' ' || b.wrapping_sub(9) <= 4
}

/// Whitespace and newline bits of 64 bytes.
#[inline(always)]
fn classify64_scalar(b: &[u8; 64]) -> (u64, u64) {
    let (mut w, mut l) = (0u64, 0u64);
    for (i, &c) in b.iter().enumerate() {
        w |= (is_ws(c) as u64) << i;
        l |= ((c == b'\n') as u64) << i;
    }
    (w, l)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn classify64_sse2(p: *const u8) -> (u64, u64) {
    use std::arch::x86_64::*;
    let sp = _mm_set1_epi8(0x20);
    let nine = _mm_set1_epi8(9);
    let four = _mm_set1_epi8(4);
    let nl = _mm_set1_epi8(b'\n' as i8);
    let (mut w, mut l) = (0u64, 0u64);
    for k in 0..4 {
        let v = _mm_loadu_si128(p.add(16 * k) as *const __m128i);
        let t = _mm_sub_epi8(v, nine);
        // (b - 9) <= 4 unsigned, or b == ' '
        let r = _mm_or_si128(
            _mm_cmpeq_epi8(v, sp),
            _mm_cmpeq_epi8(_mm_min_epu8(t, four), t),
        );
        w |= (_mm_movemask_epi8(r) as u32 as u64) << (16 * k);
        l |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) as u32 as u64) << (16 * k);
    }
    (w, l)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn classify64_avx2(p: *const u8) -> (u64, u64) {
    use std::arch::x86_64::*;
    // Whitespace by table: the whitespace byte with each low nibble (0x20 for 0,
    // 9..=13 for themselves, 0 elsewhere, which no byte with that nibble equals);
    // `shuffle` gives 0 for bytes >= 0x80. A byte is whitespace iff it equals its
    // entry: two instructions instead of five (compare, min, sub, compare, or).
    let table = _mm256_setr_epi8(
        0x20, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0, //
        0x20, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0,
    );
    let nl = _mm256_set1_epi8(b'\n' as i8);
    let (mut w, mut l) = (0u64, 0u64);
    for k in 0..2 {
        let v = _mm256_loadu_si256(p.add(32 * k) as *const __m256i);
        let r = _mm256_cmpeq_epi8(v, _mm256_shuffle_epi8(table, v));
        w |= (_mm256_movemask_epi8(r) as u32 as u64) << (32 * k);
        l |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)) as u32 as u64) << (32 * k);
    }
    (w, l)
}

/// Fill `ws`/`nl` for the full 64-byte blocks of `d` (one word per block).
#[inline(always)]
fn build_blocks(d: &[u8], ws: &mut [u64], nl: &mut [u64], avx2: bool) {
    let blocks = d.chunks_exact(64).zip(ws.iter_mut().zip(nl.iter_mut()));
    #[cfg(target_arch = "x86_64")]
    {
        if avx2 {
            // SAFETY: AVX2 was detected at run time.
            unsafe { build_blocks_avx2(d, ws, nl) };
            return;
        }
        for (b, (w, l)) in blocks {
            // SAFETY: SSE2 is part of x86_64; `b` has 64 bytes.
            let (x, y) = unsafe { classify64_sse2(b.as_ptr()) };
            *w = x.to_le();
            *l = y.to_le();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = avx2;
        for (b, (w, l)) in blocks {
            let (x, y) = classify64_scalar(b.try_into().unwrap());
            *w = x.to_le();
            *l = y.to_le();
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn build_blocks_avx2(d: &[u8], ws: &mut [u64], nl: &mut [u64]) {
    for (b, (w, l)) in d.chunks_exact(64).zip(ws.iter_mut().zip(nl.iter_mut())) {
        let (x, y) = classify64_avx2(b.as_ptr());
        *w = x.to_le();
        *l = y.to_le();
    }
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Bitmaps of one window, one bit per byte: whitespace, newlines, and field starts
/// (a byte that is not whitespace after one that is, or at the window's start).
#[derive(Default)]
struct Bitmaps {
    ws: Vec<u64>,
    nl: Vec<u64>,
    st: Vec<u64>,
}

impl Bitmaps {
    /// Build the maps for `d`; bits at and past `d.len()` are set in both.
    fn build(&mut self, d: &[u8], avx2: bool) {
        let words = d.len() / 64;
        // Room for the tail word plus padding for unaligned reads at `d.len()`.
        let total = words + 3;
        if self.ws.len() < total {
            self.ws.resize(total, 0);
            self.nl.resize(total, 0);
            self.st.resize(total, 0);
        }
        build_blocks(d, &mut self.ws, &mut self.nl, avx2);
        self.ws[words..total].fill(!0);
        self.nl[words..total].fill(!0);
        let rest = &d[words * 64..];
        if !rest.is_empty() {
            // Pad with newlines: whitespace and newline both.
            let mut b = [b'\n'; 64];
            b[..rest.len()].copy_from_slice(rest);
            let (x, y) = classify64_scalar(&b);
            self.ws[words] = x.to_le();
            self.nl[words] = y.to_le();
        }
        // Field starts: not whitespace, and the byte before is (the byte before
        // the window counts as whitespace: windows hold whole lines). The words
        // after the tail word are sentinels, all set: 128 "field starts" past the
        // window's end, so that [`Bitmaps::fields`] always finds its bits.
        let mut carry = 1;
        for (st, &w) in self.st[..=words].iter_mut().zip(&self.ws[..=words]) {
            let w = u64::from_le(w);
            *st = (!w & ((w << 1) | carry)).to_le();
            carry = w >> 63;
        }
        self.st[words + 1..total].fill(!0);
    }

    /// Bits `i..`: at least the 57 low bits are valid, the rest are 0.
    #[inline(always)]
    fn rd(map: &[u64], i: usize) -> u64 {
        debug_assert!((i >> 3) + 8 <= map.len() * 8);
        // SAFETY: scans never pass the first set bit at or after the window's end,
        // and `build` leaves two padding words after it.
        let w = unsafe { ((map.as_ptr() as *const u8).add(i >> 3) as *const u64).read_unaligned() };
        u64::from_le(w) >> (i & 7)
    }

    #[inline(always)]
    fn is_ws(&self, i: usize) -> bool {
        Self::rd(&self.ws, i) & 1 != 0
    }

    /// First whitespace position at or after `i`.
    #[inline(always)]
    fn next_ws(&self, mut i: usize) -> usize {
        loop {
            let m = Self::rd(&self.ws, i);
            if m != 0 {
                return i + m.trailing_zeros() as usize;
            }
            i += 56;
        }
    }

    /// First newline position at or after `i`.
    #[cfg(test)]
    fn next_nl(&self, mut i: usize) -> usize {
        loop {
            let m = Self::rd(&self.nl, i);
            if m != 0 {
                return i + m.trailing_zeros() as usize;
            }
            i += 56;
        }
    }

    /// The starts of the first fields of the line `[s, l)` (`l`: its newline or the
    /// window's end) into `f`; returns how many were found (at most `FIELDS`).
    /// Field 0 starts at `s` and is empty if the line starts with whitespace
    /// (Ruby's `split(/\s+/)`), so it always counts; the others are the field-start
    /// bits after `s`, taken lowest first from whole words. The first `FIELDS - 1`
    /// bits are taken without looking at `l` (past the line they are the next
    /// lines' fields, and the sentinel words after the window end the search), and
    /// only then compared with `l`: one test per line instead of one per field.
    #[inline(always)]
    fn fields(&self, s: usize, l: usize, f: &mut [usize; FIELDS]) -> usize {
        let mut j = (s + 1) >> 6;
        let mut m = u64::from_le(self.st[j]) & (u64::MAX << ((s + 1) & 63));
        let mut next = || {
            while m == 0 {
                j += 1;
                m = u64::from_le(self.st[j]);
            }
            let p = (j << 6) + m.trailing_zeros() as usize;
            m &= m - 1;
            p
        };
        // Unrolled by hand: as a loop over `f` it ran 10% more instructions.
        *f = [
            s,
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
        ];
        if f[FIELDS - 1] < l {
            FIELDS
        } else {
            1 + f[1..].iter().take_while(|&&p| p < l).count()
        }
    }

    /// End of the field starting at `i` (empty if `i` is whitespace).
    #[inline(always)]
    fn end(&self, i: usize) -> usize {
        self.next_ws(i)
    }
}

/// The newlines of a window in order, word by word.
struct Newlines<'a> {
    nl: &'a [u64],
    j: usize,
    m: u64,
}

impl<'a> Newlines<'a> {
    fn new(bm: &'a Bitmaps) -> Self {
        Newlines {
            nl: &bm.nl,
            j: 0,
            m: u64::from_le(bm.nl[0]),
        }
    }

    /// The next newline (past the window's end, the padding bits act as newlines).
    #[inline(always)]
    fn next(&mut self) -> usize {
        while self.m == 0 {
            self.j += 1;
            self.m = u64::from_le(self.nl[self.j]);
        }
        let p = (self.j << 6) + self.m.trailing_zeros() as usize;
        self.m &= self.m - 1;
        p
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit of each byte of `x` that is not an ASCII digit; the lowest flagged byte
/// is exact (higher ones may be wrong only above a non-digit).
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    let d = x ^ (LO * b'0' as u64);
    (d | d.wrapping_add(LO * 0x76)) & HI
}

/// Does `x` hold a byte equal to `b`? (Exact.)
#[inline(always)]
fn has_byte(x: u64, b: u8) -> bool {
    let y = x ^ (LO * b as u64);
    y.wrapping_sub(LO) & !y & HI != 0
}

/// `^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$` on a field (which
/// holds no whitespace), with word-at-a-time checks.
#[inline]
pub fn is_article(u: &[u8]) -> bool {
    let n = u.len();
    if n < 31 || r8(u, 0) != r8(b"/ongoing/When/", 0) || r8(u, 6) != r8(b"/ongoing/When/", 6) {
        return false;
    }
    // Bytes 14..30: `DDDx/DDD` `D/DD/DD/` (D a digit).
    const P: &[u8; 16] = b"000x/0000/00/00/";
    let (a, b) = (r8(u, 14), r8(u, 22));
    let (pa, pb) = (r8(P, 0), r8(P, 8));
    // Literal bytes: where the pattern is not '0'.
    let la = non_digits(pa) >> 7;
    let lb = non_digits(pb) >> 7;
    let (ma, mb) = (la * 0xff, lb * 0xff);
    if (a ^ pa) & ma != 0 || (b ^ pb) & mb != 0 {
        return false;
    }
    // Everything else must be a digit (literal bytes are exact by now, so cannot
    // disturb the check).
    if non_digits(a) & !ma & HI != 0 || non_digits(b) & !mb & HI != 0 {
        return false;
    }
    // The rest: at least one byte, none of them '.' or ' '.
    let rest = &u[30..];
    let bad = |x: u64| has_byte(x, b'.') || has_byte(x, b' ');
    if rest.len() >= 8 {
        let mut i = 0;
        while i + 8 < rest.len() {
            if bad(r8(rest, i)) {
                return false;
            }
            i += 8;
        }
        !bad(r8(rest, rest.len() - 8))
    } else {
        !rest.iter().any(|&c| c == b'.' || c == b' ')
    }
}

/// Leading ASCII digits as an unsigned integer, saturating at `u64::MAX`.
#[inline]
pub fn leading_number(f: &[u8]) -> u64 {
    let mut v: u64 = 0;
    let mut i = 0;
    // Up to 19 digits cannot overflow.
    while i < f.len() && i < 19 {
        let c = f[i].wrapping_sub(b'0');
        if c > 9 {
            return v;
        }
        v = v * 10 + c as u64;
        i += 1;
    }
    while i < f.len() {
        let c = f[i].wrapping_sub(b'0');
        if c > 9 {
            break;
        }
        v = v.saturating_mul(10).saturating_add(c as u64);
        i += 1;
    }
    v
}

/// [`leading_number`] of the field at `d[x..]` (followed by whitespace or the end
/// of `d`): fewer than 8 digits in one word without a loop.
#[inline(always)]
fn leading_number_at(d: &[u8], x: usize) -> u64 {
    if x + 8 <= d.len() {
        let w = r8(d, x);
        let m = non_digits(w);
        if m != 0 {
            // k digits (the field ends at whitespace, a non-digit).
            let k = m.trailing_zeros() / 8;
            if k == 0 {
                return 0;
            }
            // Digits as values 0..9, the first (most significant) in the low byte;
            // shift them to the top so that missing digits act as leading zeros.
            let mut v = (w ^ (LO * b'0' as u64)) << (64 - 8 * k);
            v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
            v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
            v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
            return v;
        }
    }
    leading_number(&d[x..])
}

const SELF_REF: &[u8] = b"\"http://www.tbray.org/ongoing/";

impl Wf2State {
    /// The key's hash: one ahash `write` (which mixes in the length itself, so the
    /// length prefix `Hash for [u8]` would add is left out).
    #[inline(always)]
    fn hash(&self, key: &[u8]) -> u64 {
        key_hash(&self.rs, key)
    }

    /// The saved tables matched with this state's (see `saved`), made once.
    fn matched(&self) -> &[saved::Matched; 3] {
        self.matched.get_or_init(|| {
            let s = self.saved.as_ref();
            Box::new([
                saved::Matched::new(s, saved::URIS, &self.uris),
                saved::Matched::new(s, saved::CLIENTS, &self.clients),
                saved::Matched::new(s, saved::REFS, &self.refs),
            ])
        })
    }

    /// Apply the client and referrer updates queued for window `d`. They wait for
    /// the window's end so that the loads of their entries, started when queued,
    /// overlap the parsing of the lines in between.
    #[inline(always)]
    fn flush(&mut self, d: &[u8]) {
        for (p, _) in &self.uri_q {
            self.uris.prefetch(p.h);
        }
        for p in &self.client_q {
            self.clients.prefetch(p.h);
        }
        for p in &self.ref_q {
            self.refs.prefetch(p.h);
        }
        for &(p, op) in &self.uri_q {
            let v = self.uris.get(p.h, &d[p.a..p.b]);
            match op {
                UriOp::Record { nbytes, article } => {
                    v.bytes = v.bytes.saturating_add(nbytes);
                    v.hits += article as u64;
                    v.recorded = 1;
                }
                UriOp::NotFound => v.not_found += 1,
            }
        }
        for p in &self.client_q {
            *self.clients.get(p.h, &d[p.a..p.b]) += 1;
        }
        for p in &self.ref_q {
            *self.refs.get(p.h, &d[p.a..p.b]) += 1;
        }
        self.uri_q.clear();
        self.client_q.clear();
        self.ref_q.clear();
    }

    /// Queue `op` for the key `d[a..b]` of window `d` (see [`Wf2State::flush`]).
    #[inline(always)]
    fn pending<V: bytemuck::Pod + Default>(
        &self,
        table: &Table<V>,
        d: &[u8],
        a: usize,
        b: usize,
    ) -> Pending {
        let h = self.hash(&d[a..b]);
        table.prefetch_hint(h);
        Pending { a, b, h }
    }

    /// Apply the rules to the line `[s, l)` of window `d`.
    #[inline(always)]
    fn line(&mut self, d: &[u8], bm: &Bitmaps, s: usize, l: usize) {
        let mut f = [0usize; FIELDS];
        let n = bm.fields(s, l, &mut f);
        if n < 6 {
            self.not_get += 1;
            self.too_few_fields += 1;
            return;
        }
        // Field 5 is exactly `"GET`: those bytes, then whitespace (the padding
        // past the window's end counts as whitespace).
        if d.get(f[5]..f[5] + 4) != Some(b"\"GET") || !bm.is_ws(f[5] + 4) {
            self.not_get += 1;
            return;
        }
        if n < 9 {
            return;
        }
        let status = match d.get(f[8]..f[8] + 3) {
            Some(x) if bm.is_ws(f[8] + 3) => x,
            _ => return,
        };
        let (u0, u1) = (f[6], bm.end(f[6]));
        let uri = &d[u0..u1];
        let nbytes = match status {
            b"200" if n > 9 => leading_number_at(d, f[9]),
            b"200" | b"304" => 0,
            b"404" => {
                let p = self.pending(&self.uris, d, u0, u1);
                self.uri_q.push((p, UriOp::NotFound));
                return;
            }
            _ => return,
        };
        let article = is_article(uri);
        let p = self.pending(&self.uris, d, u0, u1);
        self.uri_q.push((p, UriOp::Record { nbytes, article }));
        if !article {
            return;
        }
        let p = self.pending(&self.clients, d, s, bm.end(s));
        self.client_q.push(p);
        if n > 10 {
            let r = &d[f[10]..bm.end(f[10])];
            if r != b"\"-\"" && !r.starts_with(SELF_REF) {
                let (a, b) = if r.len() <= 2 {
                    (f[10], f[10])
                } else {
                    (f[10] + 1, f[10] + r.len() - 1)
                };
                let p = self.pending(&self.refs, d, a, b);
                self.ref_q.push(p);
            }
        }
    }
}

/// Fields used: 0 to 10.
const FIELDS: usize = 11;

/// A table update waiting for the end of its window: the key `d[a..b]` of the
/// window and its hash.
#[derive(Clone, Copy)]
struct Pending {
    a: usize,
    b: usize,
    h: u64,
}

/// What a pending uri update does.
#[derive(Clone, Copy)]
enum UriOp {
    /// `uri_bytes[uri] += nbytes`, and `uri_hits[uri] += 1` for an article.
    Record { nbytes: u64, article: bool },
    /// `404s[uri] += 1`.
    NotFound,
}

/// The longest line judged whole; a longer one is judged by its first
/// `LONG_LINE` bytes (see the rules).
pub const LONG_LINE: usize = 1 << 20;

impl Job for Wf2 {
    type State = Wf2State;

    fn long_records(&self) -> Option<usize> {
        Some(LONG_LINE)
    }

    /// A long line: its first `LONG_LINE` bytes are the line; the rest is not
    /// looked at.
    fn piece(&self, st: &mut Wf2State, piece: &Piece<'_>) {
        st.matched.take();
        if piece.first {
            let chunk = Chunk {
                input: piece.input,
                offset: piece.offset,
                data: &piece.data[..LONG_LINE.min(piece.data.len())],
            };
            self.process(st, &chunk);
        }
    }

    /// Offsets are not used: a compressed file may be decoded in parts.
    fn offsets(&self) -> bool {
        false
    }

    fn new_state(&self) -> Wf2State {
        Wf2State {
            lines: 0,
            not_get: 0,
            too_few_fields: 0,
            rs: random_state().clone(),
            avx2: has_avx2(),
            bm: Bitmaps::default(),
            uris: Table::new(),
            clients: Table::new(),
            refs: Table::new(),
            uri_q: Vec::new(),
            client_q: Vec::new(),
            ref_q: Vec::new(),
            saved: None,
            matched: std::sync::OnceLock::new(),
        }
    }

    fn process(&self, st: &mut Wf2State, chunk: &Chunk<'_>) {
        st.matched.take();
        let d = chunk.data;
        let n = d.len();
        let mut bm = std::mem::take(&mut st.bm);
        let mut p = 0;
        while p < n {
            // A window of whole lines: up to the last newline within WINDOW bytes, or
            // to the end of a line longer than that.
            let mut end = (p + WINDOW).min(n);
            if end < n {
                end = match memchr::memrchr(b'\n', &d[p..end]) {
                    Some(i) => p + i + 1,
                    None => memchr::memchr(b'\n', &d[end..]).map_or(n, |i| end + i + 1),
                };
            }
            let w = &d[p..end];
            bm.build(w, st.avx2);
            let mut nls = Newlines::new(&bm);
            let mut s = 0;
            while s < w.len() {
                let l = nls.next();
                st.line(w, &bm, s, l);
                st.lines += 1;
                s = l + 1;
            }
            st.flush(w);
            p = end;
        }
        st.bm = bm;
    }

    fn merge(&self, into: &mut Wf2State, mut other: Wf2State) {
        into.matched.take();
        let saved = [into.saved.take(), other.saved.take()];
        self.merge_tables(into, other);
        into.saved = match saved {
            [Some(a), Some(b)] => {
                let rs = into.rs.clone();
                let st = &mut *into;
                let hash = |k: &[u8]| key_hash(&rs, k);
                saved::absorb(&b, (&mut st.uris, &mut st.clients, &mut st.refs), hash);
                Some(a)
            }
            [a, b] => a.or(b),
        };
    }
}

impl Wf2 {
    /// [`Job::merge`] of the tables (the saved ones apart).
    fn merge_tables(&self, into: &mut Wf2State, mut other: Wf2State) {
        // Fold the smaller tables into the larger ones.
        if other.uris.len() + other.clients.len() + other.refs.len()
            > into.uris.len() + into.clients.len() + into.refs.len()
        {
            std::mem::swap(into, &mut other);
        }
        into.lines += other.lines;
        into.not_get += other.not_get;
        into.too_few_fields += other.too_few_fields;
        // The clients take the longest (on 1 GiB: 28 ms against 4 ms for the uris
        // and 7 ms for the referrers), so they merge on a thread of their own
        // while this one does the other two. With two workers both are done by
        // now; with more, later ones may still be running, as in any merge.
        let (clients, other_clients) = (&mut into.clients, &other.clients);
        std::thread::scope(|s| {
            s.spawn(|| clients.merge(other_clients, |a, b| *a += *b));
            into.uris.merge(&other.uris, UriVals::add);
            into.refs.merge(&other.refs, |a, b| *a += *b);
        });
    }
}

/// A state travels as its counts and its three tables, each as its entry
/// count, then per entry the key and the values, in the order the keys were
/// first seen. Read back, the tables stay encoded (`saved`: checked, not hashed)
/// and a run's counts are added to them as the state is written or finished.
impl Partial for Wf2 {
    const TAG: u8 = 2;
    const NAME: &'static str = "wf2";

    fn params(&self) -> Vec<u64> {
        Vec::new()
    }

    fn from_params(p: &[u64]) -> Result<Self, Damage> {
        match p {
            [] => Ok(Wf2),
            _ => Err(Damage::Settings(Self::NAME)),
        }
    }

    fn write_state(&self, st: &Wf2State, w: &mut Writer) {
        // At most what the tables hold in memory: 64-byte lines of a key and
        // its counts (a 10 GiB log's state: 9.5 MB written, 15 ms less).
        let lines = st.uris.lines.len() + st.clients.lines.len() + st.refs.lines.len();
        w.reserve(lines * std::mem::size_of::<Line>() + st.saved.as_ref().map_or(0, Saved::len));
        for n in [st.lines, st.not_get, st.too_few_fields] {
            w.uint(n);
        }
        let (saved, m) = (st.saved.as_ref(), st.matched());
        saved::write(w, saved, saved::URIS, &st.uris, &m[saved::URIS]);
        saved::write(w, saved, saved::CLIENTS, &st.clients, &m[saved::CLIENTS]);
        saved::write(w, saved, saved::REFS, &st.refs, &m[saved::REFS]);
    }

    fn read_state(&self, r: &mut Reader) -> Result<Wf2State, Damage> {
        let mut st = self.new_state();
        st.lines = r.uint()?;
        st.not_get = r.uint()?;
        st.too_few_fields = r.uint()?;
        st.saved = Some(Saved::read(r, &st.rs)?);
        Ok(st)
    }
}

/// A candidate for a top-N list, ordered so that "greater" means "ranks lower":
/// the heap's top is the worst entry kept.
struct Cand<'a>(u64, &'a [u8]);

impl Ord for Cand<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.cmp(&self.0).then_with(|| self.1.cmp(o.1))
    }
}
impl PartialOrd for Cand<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Cand<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}
impl Eq for Cand<'_> {}

/// The `n` best `(key, value)` pairs: value descending, then key ascending by bytes.
pub fn select_top<'a>(
    items: impl Iterator<Item = (&'a [u8], u64)>,
    n: usize,
) -> Vec<(Vec<u8>, u64)> {
    let mut top = Top::new(n);
    for (k, v) in items {
        top.push(k, v);
    }
    top.into_vec()
}

/// A top-N list being chosen (a bounded heap: O(N) memory).
struct Top<'a> {
    heap: BinaryHeap<Cand<'a>>,
    n: usize,
}

impl<'a> Top<'a> {
    fn new(n: usize) -> Self {
        Top {
            heap: BinaryHeap::new(),
            n,
        }
    }

    fn push(&mut self, k: &'a [u8], v: u64) {
        let c = Cand(v, k);
        if self.heap.len() < self.n {
            self.heap.push(c);
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if c < *worst {
                *worst = c;
            }
        }
    }

    fn into_vec(self) -> Vec<(Vec<u8>, u64)> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Cand(v, k)| (k.to_vec(), v))
            .collect()
    }
}

impl Wf2 {
    /// Turn a merged state into the report with `top_n` entries per list.
    /// The uris' lists are chosen on a thread of their own while the
    /// clients' and referrers' are chosen here: after a `--state` run's scan
    /// this is a pass over every saved key (229 k in the 10 GiB bench's
    /// state), about a tenth of the hourly run on one core (perf).
    pub fn finish(&self, st: Wf2State, top_n: usize) -> Wf2Report {
        let (saved, m) = (st.saved.as_ref(), st.matched());
        let (uris, (by_client, refs)) = std::thread::scope(|s| {
            let uris = s.spawn(|| uri_lists(saved, &st.uris, &m[saved::URIS], top_n));
            let clients = saved::merged(saved, saved::CLIENTS, &st.clients, &m[saved::CLIENTS]);
            let refs = saved::merged(saved, saved::REFS, &st.refs, &m[saved::REFS]);
            let here = (select_top(clients, top_n), select_top(refs, top_n));
            (
                uris.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                here,
            )
        });
        let (resources, not_found, [hits, bytes, nf]) = uris;
        Wf2Report {
            lines: st.lines,
            resources,
            not_found,
            clients: m[saved::CLIENTS].len,
            top: [hits, bytes, nf, by_client, refs],
            not_get: st.not_get,
            too_few_fields: st.too_few_fields,
        }
    }
}

/// A top list: keys and their values, best first.
type Ranked = Vec<(Vec<u8>, u64)>;

/// The resources and 404s counted, and the top lists by hits, bytes and
/// 404s, of the uris (saved and this run's, as `m` matched them).
fn uri_lists(
    saved: Option<&Saved>,
    uris: &Table<UriVals>,
    m: &saved::Matched,
    top_n: usize,
) -> (u64, u64, [Ranked; 3]) {
    let (mut resources, mut not_found) = (0, 0);
    let [mut hits, mut bytes, mut nf] = [(); 3].map(|_| Top::new(top_n));
    for (k, v) in saved::merged(saved, saved::URIS, uris, m) {
        if v.hits > 0 {
            resources += 1;
            hits.push(k, v.hits);
        }
        if v.recorded != 0 {
            bytes.push(k, v.bytes);
        }
        if v.not_found > 0 {
            not_found += 1;
            nf.push(k, v.not_found);
        }
    }
    let lists = [hits.into_vec(), bytes.into_vec(), nf.into_vec()];
    (resources, not_found, lists)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> Wf2Report {
        let job = Wf2;
        let mut st = job.new_state();
        for (i, c) in chunks.iter().enumerate() {
            let mut s = job.new_state();
            job.process(
                &mut s,
                &Chunk {
                    input: 0,
                    offset: i as u64,
                    data: c,
                },
            );
            job.merge(&mut st, s);
        }
        job.finish(st, 10)
    }

    #[test]
    fn whitespace_set() {
        for b in 0..=255u8 {
            assert_eq!(is_ws(b), b" \t\n\x0b\x0c\r".contains(&b), "{b}");
        }
    }

    #[test]
    fn bitmaps_exact_everywhere() {
        // Every byte value at every offset of a window, both SIMD widths.
        for avx2 in [false, has_avx2()] {
            for len in [1usize, 63, 64, 65, 130, 200] {
                for pos in 0..len {
                    for b in 0..=255u8 {
                        let mut d = vec![b'a'; len];
                        d[pos / 2] = 1; // a non-whitespace control byte
                        d[pos] = b;
                        let mut bm = Bitmaps::default();
                        bm.build(&d, avx2);
                        let ws = |i: usize| d.get(i).is_none_or(|&c| is_ws(c));
                        let nl = |i: usize| d.get(i).is_none_or(|&c| c == b'\n');
                        for i in [0, pos / 2, pos, len - 1, len] {
                            assert_eq!(bm.is_ws(i), ws(i), "len {len} pos {pos} b {b} i {i}");
                            let want = (i..).find(|&j| ws(j)).unwrap();
                            assert_eq!(bm.next_ws(i), want);
                            let want = (i..).find(|&j| nl(j)).unwrap();
                            assert_eq!(bm.next_nl(i), want);
                            let start = !ws(i) && (i == 0 || ws(i - 1));
                            assert_eq!(Bitmaps::rd(&bm.st, i) & 1 != 0, start, "start {i}");
                        }
                    }
                }
            }
        }
    }

    /// Every line's fields as text, the way `Wf2State::line` sees them.
    fn fields_of(d: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut bm = Bitmaps::default();
        bm.build(d, has_avx2());
        let mut nls = Newlines::new(&bm);
        let mut out = Vec::new();
        let mut s = 0;
        while s < d.len() {
            let l = nls.next();
            let mut f = [0; FIELDS];
            let n = bm.fields(s, l, &mut f);
            out.push(f[..n].iter().map(|&a| d[a..bm.end(a)].to_vec()).collect());
            s = l + 1;
        }
        out
    }

    /// The same, plainly: Ruby's `split(/\s+/)` (an empty field 0 when the line
    /// starts with whitespace or is blank), the first `FIELDS` fields.
    fn fields_naive(d: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut lines: Vec<&[u8]> = d.split(|&c| c == b'\n').collect();
        if d.last() == Some(&b'\n') || d.is_empty() {
            lines.pop();
        }
        lines
            .iter()
            .map(|line| {
                let mut f: Vec<Vec<u8>> = Vec::new();
                if line.first().is_none_or(|&c| is_ws(c)) {
                    f.push(Vec::new());
                }
                f.extend(
                    line.split(|&c| is_ws(c))
                        .filter(|t| !t.is_empty())
                        .map(|t| t.to_vec()),
                );
                f.truncate(FIELDS);
                f
            })
            .collect()
    }

    /// A small deterministic pseudo-random sequence for the tests.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn fields_vs_naive_split() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let alphabet = b"ab ab ab \t\r\x0b\x0c\n\n\x00\xff\"";
        for round in 0..3000 {
            let len = (next() % [40, 300, 2000][round % 3]) as usize;
            let d: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(
                fields_of(&d),
                fields_naive(&d),
                "{:?}",
                String::from_utf8_lossy(&d)
            );
        }
    }

    #[test]
    fn long_runs() {
        // Fields and separator runs far longer than one 57-bit read.
        let mut d = vec![b'x'; 300];
        d.extend(std::iter::repeat_n(b' ', 200));
        d.extend(b"\t\x0b\x0cy\r\n");
        let mut bm = Bitmaps::default();
        bm.build(&d, has_avx2());
        assert_eq!(bm.next_ws(0), 300);
        assert_eq!(bm.next_nl(0), 505);
        assert_eq!(bm.next_nl(506), 506);
        let mut f = [0; FIELDS];
        assert_eq!(bm.fields(0, 505, &mut f), 2);
        assert_eq!((f[0], bm.end(f[0]), f[1], bm.end(f[1])), (0, 300, 503, 504));
        assert_eq!(bm.fields(0, 502, &mut f), 1);
        d.truncate(300);
        bm.build(&d, false);
        assert_eq!(bm.fields(0, 300, &mut f), 1);
        assert_eq!(bm.end(0), 300);
        d[0] = b' ';
        bm.build(&d, false);
        assert_eq!(bm.fields(0, 300, &mut f), 2);
        assert_eq!((f[0], bm.end(f[0]), f[1], bm.end(f[1])), (0, 0, 1, 300));
    }

    #[test]
    fn numbers() {
        assert_eq!(leading_number(b""), 0);
        assert_eq!(leading_number(b"-"), 0);
        assert_eq!(leading_number(b"12abc"), 12);
        assert_eq!(leading_number(b"18446744073709551615"), u64::MAX);
        assert_eq!(leading_number(b"18446744073709551614x"), u64::MAX - 1);
        assert_eq!(leading_number(b"18446744073709551616"), u64::MAX);
        assert_eq!(leading_number(b"99999999999999999999999999"), u64::MAX);
        assert_eq!(leading_number(b"0000000000000000000000000000012"), 12);
    }

    fn is_article_ref(u: &[u8]) -> bool {
        let dig = |b: u8| b.is_ascii_digit();
        u.len() >= 31
            && &u[..14] == b"/ongoing/When/"
            && u[14..17].iter().all(|&b| dig(b))
            && &u[17..19] == b"x/"
            && u[19..23].iter().all(|&b| dig(b))
            && u[23] == b'/'
            && u[24..26].iter().all(|&b| dig(b))
            && u[26] == b'/'
            && u[27..29].iter().all(|&b| dig(b))
            && u[29] == b'/'
            && !u[30..].iter().any(|&b| b == b'.' || b == b' ')
    }

    #[test]
    fn article_matcher_vs_reference() {
        let base = b"/ongoing/When/200x/2007/06/17/Slug-Name-Here".to_vec();
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let alphabet = b"0123456789x/.- \x00\xff\x8a\x9a:aZ";
        for _ in 0..200_000 {
            let mut u = base.clone();
            u.truncate(25 + (next() % 30) as usize);
            for _ in 0..(next() % 3) {
                let i = (next() as usize) % u.len();
                u[i] = alphabet[(next() as usize) % alphabet.len()];
            }
            assert_eq!(
                is_article(&u),
                is_article_ref(&u),
                "{:?}",
                String::from_utf8_lossy(&u)
            );
        }
    }

    #[test]
    fn numbers_in_words() {
        let cases: &[&[u8]] = &[
            b"0 ",
            b"1 ",
            b"12 ",
            b"1234567 ",
            b"12345678 ",
            b"123456789012 ",
            b"- ",
            b"12abc ",
            b"007 ",
            b"9x",
            b"99999999999999999999999 ",
            b"1\xff",
            b"5\x8a\x8a",
        ];
        for c in cases {
            let mut d = c.to_vec();
            let e = d.iter().position(|&b| b == b' ').unwrap_or(d.len());
            assert_eq!(
                leading_number_at(&d[..e], 0),
                leading_number(&d[..e]),
                "{c:?}"
            );
            d.extend_from_slice(b"        ");
            assert_eq!(leading_number_at(&d, 0), leading_number(&d[..e]), "{c:?}");
        }
        for v in [
            0u64, 1, 9, 10, 99, 100, 12345, 999_999, 1_000_000, 9_999_999,
        ] {
            let d = format!("{v} \"-\"");
            assert_eq!(leading_number_at(d.as_bytes(), 0), v);
        }
    }

    #[test]
    fn articles() {
        assert!(is_article(b"/ongoing/When/200x/2007/06/17/Slug"));
        assert!(is_article(b"/ongoing/When/123x/0000/00/00/a"));
        assert!(is_article(b"/ongoing/When/200x/2007/06/17/a\x00\xff/b"));
        assert!(!is_article(b"/ongoing/When/200x/2007/06/17/"));
        assert!(!is_article(b"/ongoing/When/200x/2007/06/17/a.html"));
        assert!(!is_article(b"/ongoing/When/20xx/2007/06/17/a"));
        assert!(!is_article(b"/ongoing/When/200y/2007/06/17/a"));
        assert!(!is_article(b"/ongoing/When/200x/2007/6/17/ab"));
        assert!(!is_article(b"/Ongoing/When/200x/2007/06/17/a"));
        assert!(!is_article(b"x/ongoing/When/200x/2007/06/17/a"));
    }

    #[test]
    fn top_order_and_ties() {
        let items: Vec<(&[u8], u64)> = vec![
            (b"b", 5),
            (b"a", 5),
            (b"c", 7),
            (b"d", 1),
            (b"\xff", 5),
            (b"", 5),
        ];
        let t = select_top(items.iter().copied(), 4);
        let keys: Vec<&[u8]> = t.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(keys, vec![&b"c"[..], b"", b"a", b"b"]);
        assert_eq!(select_top(items.iter().copied(), 0), vec![]);
        assert_eq!(select_top(items.iter().copied(), 100).len(), 6);
    }

    const L1: &[u8] = b"h1 - - [d -0700] \"GET /ongoing/When/200x/2007/06/17/A HTTP/1.1\" 200 1234 \"http://x.com/\" \"UA\"\n";

    #[test]
    fn basic_line() {
        let r = run(&[L1]);
        assert_eq!(r.lines, 1);
        assert_eq!((r.resources, r.not_found, r.clients), (1, 0, 1));
        assert_eq!(
            r.top[URI_BYTES],
            vec![(b"/ongoing/When/200x/2007/06/17/A".to_vec(), 1234)]
        );
        assert_eq!(r.top[REFERRERS], vec![(b"http://x.com/".to_vec(), 1)]);
        assert_eq!(r.top[CLIENTS], vec![(b"h1".to_vec(), 1)]);
    }

    #[test]
    fn odd_lines() {
        let data: &[u8] = b"\n\
            \t  \r\n\
            a b c d e\n\
            a b c d e \"GET\n\
            a b c d e \"GETX /u p 200 5\n\
            a b c d \"GET /u p 200 5\n\
            \x20b c d e \"GET /ongoing/When/200x/2007/06/17/A p 200\n\
            h\tb\x0bc\x0cd  e \"GET /ongoing/When/200x/2007/06/17/A p 304 - \"\"\r\n\
            h b c d e \"GET /ongoing/When/200x/2007/06/17/A p 200 12abc \"-\"\n\
            h b c d e \"GET /ongoing/When/200x/2007/06/17/A p 200 - \"http://www.tbray.org/ongoing/x\"\n\
            h b c d e \"GET /x p 404\n\
            h b c d e \"GET /x p 2000 5\n\
            h b c d e \"GET /y p 200 99999999999999999999999\n\
            h b c d e \"GET /y p 200 5\n\
            h\x00 b c d e \"GET /ongoing/When/200x/2007/06/17/A p 304 - x";
        let r = run(&[data]);
        assert_eq!(r.lines, 15);
        assert_eq!(r.too_few_fields, 3);
        assert_eq!(r.not_get, 5);
        assert_eq!((r.resources, r.not_found, r.clients), (1, 1, 3));
        let hits = &r.top[URI_HITS];
        assert_eq!(
            hits,
            &vec![(b"/ongoing/When/200x/2007/06/17/A".to_vec(), 5)]
        );
        assert_eq!(r.top[URI_BYTES][0], (b"/y".to_vec(), u64::MAX));
        assert_eq!(
            r.top[URI_BYTES][1],
            (b"/ongoing/When/200x/2007/06/17/A".to_vec(), 12)
        );
        assert_eq!(r.top[NOT_FOUND], vec![(b"/x".to_vec(), 1)]);
        assert_eq!(
            r.top[CLIENTS],
            vec![
                (b"h".to_vec(), 3),
                (b"".to_vec(), 1),
                (b"h\x00".to_vec(), 1)
            ]
        );
        assert_eq!(r.top[REFERRERS], vec![(b"".to_vec(), 2)]);
    }

    #[test]
    fn any_chunking_same_answer() {
        let mut data = Vec::new();
        for i in 0..200u32 {
            data.extend_from_slice(
                format!(
                    "c{} - - [d z] \"GET /ongoing/When/200x/2007/06/{:02}/S{} H\" {} {} \"r{}\" ua\n",
                    i % 7,
                    i % 30,
                    i % 11,
                    [200, 304, 404, 500][i as usize % 4],
                    i * 13,
                    i % 5
                )
                .as_bytes(),
            );
        }
        let whole = run(&[&data]);
        let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
        for k in [1, 2, 3, 7, 50] {
            let chunks: Vec<Vec<u8>> = lines.chunks(k).map(|c| c.concat()).collect();
            let refs: Vec<&[u8]> = chunks.iter().map(|c| c.as_slice()).collect();
            assert_eq!(run(&refs), whole, "k={k}");
        }
    }

    /// A state read back (its tables kept encoded) with a run's counts added,
    /// in either order of the merge, written and read back again, and two
    /// read-back states merged: the report of the whole every time.
    #[test]
    fn saved_tables_merge_as_decoded_ones() {
        let mut data = Vec::new();
        for i in 0..3000u32 {
            let line = format!(
                "c{} - - [d z] \"GET /ongoing/When/200x/2007/06/{:02}/S{} H\" {} {} \"r{}\" ua\n",
                i % 97,
                i % 30,
                i % 41,
                [200, 304, 404, 200, 500][i as usize % 5],
                i * 13,
                i % 53
            );
            data.extend_from_slice(line.as_bytes());
        }
        let state = |d: &[u8]| {
            let mut s = Wf2.new_state();
            let chunk = Chunk {
                input: 0,
                offset: 0,
                data: d,
            };
            Wf2.process(&mut s, &chunk);
            s
        };
        let again = |s: &Wf2State| {
            let mut w = Writer::new();
            Wf2.write_state(s, &mut w);
            let bytes = w.into_bytes();
            let mut r = Reader::new(&bytes);
            let back = Wf2.read_state(&mut r).unwrap();
            assert_eq!(r.left(), 0);
            back
        };
        let whole = Wf2.finish(state(&data), 10);
        let cut = data[..data.len() / 3]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let (a, b) = data.split_at(cut);
        assert_eq!(Wf2.finish(again(&state(&data)), 10), whole);
        // Saved into delta, and delta into saved.
        for saved_first in [true, false] {
            let (mut into, other) = (again(&state(a)), state(b));
            let st = if saved_first {
                Wf2.merge(&mut into, other);
                into
            } else {
                let mut o = other;
                Wf2.merge(&mut o, into);
                o
            };
            assert!(st.saved.is_some() && !st.uris.is_empty());
            assert!(
                written(&st) == written_each(&st),
                "runs copied as written one by one"
            );
            let twice = again(&st);
            assert_eq!(Wf2.finish(twice, 10), whole);
            assert_eq!(Wf2.finish(st, 10), whole);
        }
        // Two saved states, and a third part as a delta.
        let third = data[cut..].len() / 2 + cut;
        let third = third + data[third..].iter().position(|&b| b == b'\n').unwrap() + 1;
        let mut st = again(&state(a));
        Wf2.merge(&mut st, again(&state(&data[cut..third])));
        Wf2.merge(&mut st, state(&data[third..]));
        assert_eq!(Wf2.finish(again(&st), 10), whole);
        assert_eq!(Wf2.finish(st, 10), whole);
    }

    fn written(st: &Wf2State) -> Vec<u8> {
        let mut w = Writer::new();
        Wf2.write_state(st, &mut w);
        w.into_bytes()
    }

    /// [`Partial::write_state`] with each table written key by key.
    fn written_each(st: &Wf2State) -> Vec<u8> {
        let mut w = Writer::new();
        for n in [st.lines, st.not_get, st.too_few_fields] {
            w.uint(n);
        }
        let (saved, m) = (st.saved.as_ref(), st.matched());
        saved::write_each(&mut w, saved, saved::URIS, &st.uris, &m[saved::URIS]);
        saved::write_each(
            &mut w,
            saved,
            saved::CLIENTS,
            &st.clients,
            &m[saved::CLIENTS],
        );
        saved::write_each(&mut w, saved, saved::REFS, &st.refs, &m[saved::REFS]);
        w.into_bytes()
    }

    /// A state written to a file as it is encoded (`partial::encode_to`,
    /// a MiB at a time) is the same bytes as one encoded in memory; a sink
    /// that fails is an error.
    #[test]
    fn a_state_streamed_out_is_the_same_bytes() {
        let mut data = Vec::new();
        for i in 0..40_000u32 {
            let line = format!(
                "client{i} - - [d z] \"GET /ongoing/When/200x/2007/06/01/S{i} H\" 200 {i} \"r{i}\" ua\n"
            );
            data.extend_from_slice(line.as_bytes());
        }
        let mut st = Wf2.new_state();
        let chunk = Chunk {
            input: 0,
            offset: 0,
            data: &data,
        };
        Wf2.process(&mut st, &chunk);
        // Saved tables (copied to the file in runs of over a MiB) and a
        // delta of keys old and new.
        let bytes = written(&st);
        let mut st = Wf2.read_state(&mut Reader::new(&bytes)).unwrap();
        let chunk = Chunk {
            input: 0,
            offset: 0,
            data: b"client7 - - [d z] \"GET /ongoing/When/200x/2007/06/01/S7 H\" 200 5 \"r7\" ua\n\
                    new - - [d z] \"GET /ongoing/When/200x/2007/06/01/Sn H\" 200 5 \"r\" ua\n",
        };
        Wf2.process(&mut st, &chunk);
        assert_eq!(st.matched()[saved::CLIENTS].len, 40_001);
        let inputs = std::collections::BTreeSet::from([0, 3]);
        let trailer = b"a trailer";
        let want = crate::jobs::partial::encode_with(&Wf2, &st, &inputs, trailer);
        assert!(want.len() > 2 << 20, "{}", want.len());
        let mut got = Vec::new();
        crate::jobs::partial::encode_to(&Wf2, &st, &inputs, trailer, &mut got).unwrap();
        assert!(got == want);
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0 < b.len() {
                    return Err(std::io::Error::other("full"));
                }
                self.0 -= b.len();
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let r = crate::jobs::partial::encode_to(&Wf2, &st, &inputs, trailer, &mut Full(3 << 19));
        assert_eq!(r.unwrap_err().to_string(), "full");
    }
}
