//! `wf pangram`: minimal pangrammatic windows (stretches of text holding all 26
//! letters, with no shorter such stretch inside), found in one O(N) pass.
//!
//! A letter is an ASCII `A`-`Z` or `a`-`z`, case folded; every other byte is
//! skipped without breaking a window. Windows never span two inputs.
//!
//! The serial algorithm keeps the last position of each letter. A letter read at
//! `e` closes a minimal window exactly when, after the update, all 26 letters are
//! present and its previous occurrence lies before every other letter's last
//! position, i.e. it was the letter with the oldest last position (`minl`). The
//! window then runs from the new oldest last position to `e`. So the hot loop is a
//! table add and one store per byte, plus a SIMD test per 32 bytes for the
//! letter `minl`; only when it occurs are the 26 last positions rescanned (about
//! once per 2 KB of English).
//!
//! Chunks arrive in any order on any thread, so each thread scans a run of
//! contiguous chunks (a "live" range) starting from an empty letter state. Before
//! the range has seen all 26 letters ("saturation"), a window can only end at the
//! first occurrence of a letter in the range (the oldest letter is one not yet
//! seen here, and the closing letter's previous occurrence must be older still),
//! so the range records those first occurrences (at most 25). From saturation on,
//! every window is fully inside the range and found right away. At the end the
//! ranges of each input are walked in order with a carried global state, which
//! resolves the windows ending at recorded first occurrences. The result is the
//! same as one serial pass for every chunking and thread count.
//!
//! Records mean nothing here (windows run across them), so a long record is
//! taken in pieces like any chunk ([`Job::long_records`]): a book with no line
//! breaks is read in bounded memory, with the same windows.
//!
//! Memory per thread: the kept windows (the `K` best in top mode), plus at most 51
//! events per range of contiguous chunks. Text is read back only for the windows
//! that are finally reported.

use std::collections::{BTreeMap, BinaryHeap};
use std::io;

use super::partial::{Damage, Partial, Reader, Writer};
use super::{Chunk, Job, Piece};

/// What to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The `k` shortest windows, shortest first, ties by (input, offset).
    Top(usize),
    /// Every window (optionally only those of at most `max_letters` letters), by
    /// (input, offset).
    All { max_letters: Option<u64> },
}

/// The pangram job.
#[derive(Debug, Clone)]
pub struct Pangram {
    pub mode: Mode,
}

/// A reported minimal pangrammatic window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Index of the input.
    pub input: usize,
    /// Byte offset of the first letter within the input.
    pub offset: u64,
    /// Bytes from the first to the last letter, inclusive.
    pub bytes: u64,
    /// Number of letters in the window.
    pub letters: u64,
    /// The window's bytes (`bytes` of them, from `offset`).
    pub text: Vec<u8>,
}

/// A window without its text. The derived order, (letters, input, offset), is the
/// top-K order; (input, offset) identifies a minimal window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Found {
    letters: u64,
    input: usize,
    offset: u64,
    bytes: u64,
}

/// Class of each byte: letter index 0..26, or `NL` for a non-letter.
const NL: u8 = 26;
static CLASS: [u8; 256] = {
    let mut t = [NL; 256];
    let mut i = 0;
    while i < 26 {
        t[b'a' as usize + i] = i as u8;
        t[b'A' as usize + i] = i as u8;
        i += 1;
    }
    t
};

/// Key increment per byte: one byte, plus one letter for a letter.
static STEP: [u64; 256] = {
    let mut t = [1u64; 256];
    let mut i = 0;
    while i < 256 {
        if CLASS[i] != NL {
            t[i] = 1 + ONE_LETTER;
        }
        i += 1;
    }
    t
};

/// Position keys inside a live range: `(letters so far) << 32 | (bytes so far)`,
/// taken just after a byte, so a letter at relative position `r` with ordinal `o`
/// (1-based) has key `o << 32 | (r + 1)`. Keys grow with position, 0 means "not
/// seen", and one add per byte maintains them.
const ORD_SHIFT: u32 = 32;
const POS_MASK: u64 = (1 << ORD_SHIFT) - 1;
const ONE_LETTER: u64 = 1 << ORD_SHIFT;

/// Longest live range, so that both halves of a key fit in 32 bits. (Small under
/// `cfg(test)` so unit tests also cut ranges inside chunks.)
const LIVE_MAX: u64 = if cfg!(test) { 1 << 12 } else { 1 << 31 };

/// Where found windows go: all of them (up to a letter limit) or the best `k`
/// (of all inputs, or of every input apart: [`Incremental`]).
#[derive(Debug, Clone)]
struct Sink {
    top: Option<usize>,
    /// Windows with more letters are dropped at once (the hot loop tests this).
    limit: u64,
    list: Vec<Found>,
    heap: BinaryHeap<Found>,
    /// Top mode of an incremental run: the best `k` of each input (by index),
    /// since the inputs' order, which breaks ties, may change by the next run.
    per_input: Option<BTreeMap<usize, BinaryHeap<Found>>>,
}

impl Sink {
    fn new(mode: Mode) -> Sink {
        let (top, limit) = match mode {
            Mode::Top(0) => (Some(0), 0),
            Mode::Top(k) => (Some(k), u64::MAX),
            Mode::All { max_letters } => (None, max_letters.unwrap_or(u64::MAX)),
        };
        Sink {
            top,
            limit,
            list: Vec::new(),
            heap: BinaryHeap::new(),
            per_input: None,
        }
    }

    fn per_input(mode: Mode) -> Sink {
        let mut s = Sink::new(mode);
        s.per_input = Some(BTreeMap::new());
        s
    }

    #[inline(always)]
    fn offer(&mut self, f: Found) {
        if f.letters <= self.limit {
            self.keep(f);
        }
    }

    #[inline(never)]
    fn keep(&mut self, f: Found) {
        let Some(k) = self.top else {
            return self.list.push(f);
        };
        if let Some(heaps) = &mut self.per_input {
            return keep_best(heaps.entry(f.input).or_default(), k, f);
        }
        keep_best(&mut self.heap, k, f);
        if self.heap.len() >= k {
            self.limit = self.heap.peek().map_or(0, |w| w.letters);
        }
    }

    fn merge(&mut self, other: Sink) {
        for f in other.into_found() {
            self.offer(f);
        }
    }

    /// Every window kept, in no order.
    fn found(&self) -> impl Iterator<Item = &Found> {
        let heaps = self.per_input.iter().flat_map(|m| m.values());
        (self.list.iter().chain(self.heap.iter())).chain(heaps.flatten())
    }

    fn into_found(self) -> Vec<Found> {
        let mut v = self.list;
        v.extend(self.heap);
        v.extend(
            self.per_input
                .into_iter()
                .flat_map(|m| m.into_values())
                .flatten(),
        );
        v
    }

    /// Top mode of an incremental run: drop the windows of any input that
    /// have more letters than the `k`th best of all. Exact for every later
    /// run: that many windows with no more letters are kept for good (a
    /// state keeps the windows of files gone), so these could never be
    /// reported; ties stay.
    fn prune(&mut self) {
        let (Some(k), Some(heaps)) = (self.top, &mut self.per_input) else {
            return;
        };
        let mut letters: Vec<u64> = heaps.values().flatten().map(|f| f.letters).collect();
        if k == 0 || letters.len() < k {
            return;
        }
        let (_, &mut kth, _) = letters.select_nth_unstable(k - 1);
        for h in heaps.values_mut() {
            h.retain(|f| f.letters <= kth);
        }
        heaps.retain(|_, h| !h.is_empty());
    }

    /// Top: best first. All: by (input, offset).
    fn into_sorted(self) -> Vec<Found> {
        let top = self.top;
        let mut v = self.into_found();
        match top {
            Some(k) => {
                v.sort_unstable();
                v.truncate(k);
            }
            None => v.sort_unstable_by_key(|f| (f.input, f.offset)),
        }
        v
    }
}

/// Keep `f` in `heap` if it is among the best `k`.
fn keep_best(heap: &mut BinaryHeap<Found>, k: usize, f: Found) {
    if heap.len() < k {
        heap.push(f);
    } else if let Some(mut worst) = heap.peek_mut() {
        if f < *worst {
            *worst = f;
        }
    }
}

/// A range of contiguous chunks being scanned by one thread.
#[derive(Debug, Clone)]
struct Live {
    input: usize,
    /// Input offset of the range's first byte.
    offset: u64,
    /// Key after the last byte scanned: letters << 32 | bytes.
    k: u64,
    /// Key of the last occurrence of each byte value (0: none yet). Indexing by
    /// the raw byte, `a` and `A` apart (a letter's last occurrence is the larger
    /// of its two keys), makes the hot store's address come straight from the
    /// loaded byte, with no class lookup in between: about twice as fast.
    last: [u64; 256],
    /// Letters seen so far, as a count and as a bit set (26: saturated).
    seen: usize,
    seen_set: u32,
    /// Once saturated: the letter with the oldest last occurrence.
    minl: usize,
    /// First occurrences before saturation: keys and letters.
    nfirst: usize,
    first: [u64; 26],
    first_letter: [u8; 26],
}

impl Live {
    fn new(input: usize, offset: u64) -> Live {
        Live {
            input,
            offset,
            k: 0,
            last: [0; 256],
            seen: 0,
            seen_set: 0,
            minl: 0,
            nfirst: 0,
            first: [0; 26],
            first_letter: [0; 26],
        }
    }

    fn bytes(&self) -> u64 {
        self.k & POS_MASK
    }

    fn end(&self) -> u64 {
        self.offset + self.bytes()
    }

    /// Scan `data`, which directly follows what was scanned so far.
    fn scan(&mut self, data: &[u8], sink: &mut Sink) {
        debug_assert!(self.bytes() + data.len() as u64 <= LIVE_MAX);
        let mut i = 0;
        if self.seen < 26 {
            i = self.scan_unsaturated(data, sink);
        }
        if i < data.len() {
            self.scan_saturated(&data[i..], sink);
        }
    }

    /// Scan until saturation; returns the bytes consumed. Same stores as the hot
    /// loop, plus a test for the first occurrence of a byte value (at most 256
    /// times per range, so the branch is predictable).
    fn scan_unsaturated(&mut self, data: &[u8], sink: &mut Sink) -> usize {
        let mut k = self.k;
        for (i, &x) in data.iter().enumerate() {
            let x = x as usize;
            k += STEP[x];
            let prev = self.last[x];
            self.last[x] = k;
            if prev != 0 {
                continue;
            }
            let c = CLASS[x] as usize;
            if c == NL as usize || self.seen_set & 1 << c != 0 {
                continue;
            }
            self.seen_set |= 1 << c;
            self.seen += 1;
            if self.seen == 26 {
                // This first occurrence closes the range's first window. Its
                // previous occurrence, if any, is before the range, so before
                // every other letter's: the window is minimal whatever came
                // before, and starts at the oldest last occurrence in the range.
                self.minl = closed(&self.last, k, self.input, self.offset, sink);
                self.k = k;
                return i + 1;
            }
            self.first[self.nfirst] = k;
            self.first_letter[self.nfirst] = c as u8;
            self.nfirst += 1;
        }
        self.k = k;
        data.len()
    }

    /// The hot loop, once all 26 letters have been seen in the range.
    ///
    /// Per 32 bytes, SIMD compares tell whether the oldest letter occurs among
    /// them (rare: only then can a window close). If not, each byte costs a table
    /// add and a store; otherwise the block goes byte by byte.
    fn scan_saturated(&mut self, data: &[u8], sink: &mut Sink) {
        let last = &mut self.last;
        let mut k = self.k;
        let mut minl = self.minl;
        let (input, offset) = (self.input, self.offset);
        let mut probe = Probe::new(minl);
        let mut blocks = data.chunks_exact(32);
        for b in &mut blocks {
            if !(probe.hit(&b[..16]) || probe.hit(&b[16..])) {
                for &x in b {
                    // Tables, not tests: the letter/non-letter pattern is random.
                    k += STEP[x as usize];
                    last[x as usize] = k;
                }
                continue;
            }
            for &x in b {
                k += STEP[x as usize];
                last[x as usize] = k;
                if CLASS[x as usize] as usize == minl {
                    minl = closed(last, k, input, offset, sink);
                    probe = Probe::new(minl);
                }
            }
        }
        for &x in blocks.remainder() {
            k += STEP[x as usize];
            last[x as usize] = k;
            if CLASS[x as usize] as usize == minl {
                minl = closed(last, k, input, offset, sink);
            }
        }
        self.k = k;
        self.minl = minl;
    }

    /// The range's summary for the final walk (nothing if it holds no letter).
    fn summarize(&self, sums: &mut Vec<Summary>, evs: &mut Vec<Ev>) {
        if self.k >> ORD_SHIFT == 0 {
            return;
        }
        let ev = evs.len();
        let at = |key: u64, c: usize| Ev {
            pos: self.offset + (key & POS_MASK) - 1,
            ol: (key >> ORD_SHIFT) << 5 | c as u64,
        };
        // A range that starts its input has nothing before it: no window can end
        // before its saturation, so its first occurrences are not needed.
        let nfirst = if self.offset == 0 { 0 } else { self.nfirst };
        for j in 0..nfirst {
            evs.push(at(self.first[j], self.first_letter[j] as usize));
        }
        let mut nlast = 0;
        for c in 0..26 {
            let key = letter_key(&self.last, c);
            if key != 0 {
                evs.push(at(key, c));
                nlast += 1;
            }
        }
        sums.push(Summary {
            input: self.input,
            offset: self.offset,
            letters: self.k >> ORD_SHIFT,
            ev,
            nfirst: nfirst as u8,
            nlast,
        });
    }
}

/// Key of the last occurrence of letter `c` in either case.
#[inline(always)]
fn letter_key(last: &[u64; 256], c: usize) -> u64 {
    last[b'a' as usize + c].max(last[b'A' as usize + c])
}

/// The oldest letter was just read again (key `k`), or the range has just seen
/// its 26th letter: a minimal window ends here, from the oldest last occurrence.
/// Returns the letter of that oldest occurrence.
#[inline(never)]
fn closed(last: &[u64; 256], k: u64, input: usize, offset: u64, sink: &mut Sink) -> usize {
    let mut m = 0;
    let mut v = letter_key(last, 0);
    for c in 1..26 {
        let x = letter_key(last, c);
        if x < v {
            v = x;
            m = c;
        }
    }
    emit(sink, input, offset, v, k);
    m
}

/// Finds 16-byte blocks that hold a given letter (in either case).
#[derive(Clone, Copy)]
struct Probe {
    #[cfg(target_arch = "x86_64")]
    lo: std::arch::x86_64::__m128i,
    #[cfg(target_arch = "x86_64")]
    up: std::arch::x86_64::__m128i,
    #[cfg(not(target_arch = "x86_64"))]
    lo: u64,
    #[cfg(not(target_arch = "x86_64"))]
    up: u64,
}

impl Probe {
    #[inline(always)]
    fn new(c: usize) -> Probe {
        let (lo, up) = (b'a' + c as u8, b'A' + c as u8);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe {
            use std::arch::x86_64::*;
            Probe {
                lo: _mm_set1_epi8(lo as i8),
                up: _mm_set1_epi8(up as i8),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            const ONES: u64 = 0x0101_0101_0101_0101;
            Probe {
                lo: ONES * lo as u64,
                up: ONES * up as u64,
            }
        }
    }

    /// Does the 16-byte block `b` hold the letter?
    #[inline(always)]
    fn hit(&self, b: &[u8]) -> bool {
        let b: &[u8; 16] = b.try_into().unwrap();
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of the x86_64 baseline; the load is unaligned and
        // reads exactly the 16 bytes of `b`. (An asm load, so the compiler does
        // not take the block's bytes out of the vector through the stack, which
        // costs more than loading them again.)
        unsafe {
            use std::arch::x86_64::*;
            let v: __m128i;
            std::arch::asm!(
                "movdqu {v}, [{p}]",
                p = in(reg) b.as_ptr(),
                v = out(xmm_reg) v,
                options(pure, readonly, nostack, preserves_flags)
            );
            let eq = _mm_or_si128(_mm_cmpeq_epi8(v, self.lo), _mm_cmpeq_epi8(v, self.up));
            _mm_movemask_epi8(eq) != 0
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // Nonzero iff some byte of `v` is zero (exact as a yes/no answer).
            fn zero_byte(v: u64) -> u64 {
                v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080
            }
            let w0 = u64::from_le_bytes(b[..8].try_into().unwrap());
            let w1 = u64::from_le_bytes(b[8..].try_into().unwrap());
            (zero_byte(w0 ^ self.lo)
                | zero_byte(w0 ^ self.up)
                | zero_byte(w1 ^ self.lo)
                | zero_byte(w1 ^ self.up))
                != 0
        }
    }
}

/// Offer the window between two keys of the live range at `offset`.
#[inline(always)]
fn emit(sink: &mut Sink, input: usize, offset: u64, start: u64, end: u64) {
    let letters = (end >> ORD_SHIFT) - (start >> ORD_SHIFT) + 1;
    let s = start & POS_MASK;
    sink.offer(Found {
        letters,
        input,
        offset: offset + s - 1,
        bytes: (end & POS_MASK) - s + 1,
    });
}

/// A letter occurrence of a finished range: absolute position, and the ordinal
/// within the range (1-based) << 5 | letter.
#[derive(Debug, Clone, Copy)]
struct Ev {
    pos: u64,
    ol: u64,
}

/// A finished range: `nfirst` first-occurrence events (before saturation, in
/// order), then `nlast` last-occurrence events, from `evs[ev..]`.
#[derive(Debug, Clone, Copy)]
struct Summary {
    input: usize,
    offset: u64,
    letters: u64,
    ev: usize,
    nfirst: u8,
    nlast: u8,
}

/// Per-thread state of [`Pangram`] and [`Incremental`].
#[derive(Debug, Clone)]
pub struct PangramState {
    sink: Sink,
    live: Option<Live>,
    sums: Vec<Summary>,
    evs: Vec<Ev>,
    /// [`Incremental`]: the text of kept windows, by (input, offset).
    texts: Texts,
}

type Texts = BTreeMap<(usize, u64), Vec<u8>>;

impl PangramState {
    fn flush(&mut self) {
        if let Some(l) = self.live.take() {
            l.summarize(&mut self.sums, &mut self.evs);
        }
    }
}

impl Job for Pangram {
    type State = PangramState;

    fn new_state(&self) -> PangramState {
        PangramState {
            sink: Sink::new(self.mode),
            live: None,
            sums: Vec::new(),
            evs: Vec::new(),
            texts: Texts::new(),
        }
    }

    fn process(&self, st: &mut PangramState, chunk: &Chunk<'_>) {
        let mut data = chunk.data;
        let mut off = chunk.offset;
        while !data.is_empty() {
            let go_on = matches!(&st.live,
                Some(l) if l.input == chunk.input && l.end() == off && l.bytes() < LIVE_MAX);
            if !go_on {
                st.flush();
                st.live = Some(Live::new(chunk.input, off));
            }
            let live = st.live.as_mut().unwrap();
            let take = ((LIVE_MAX - live.bytes()) as usize).min(data.len());
            live.scan(&data[..take], &mut st.sink);
            data = &data[take..];
            off += take as u64;
        }
    }

    /// Windows run across records: a piece is scanned like any chunk.
    fn long_records(&self) -> Option<usize> {
        Some(64 << 10)
    }

    fn piece(&self, st: &mut PangramState, piece: &Piece<'_>) {
        let chunk = Chunk {
            input: piece.input,
            offset: piece.offset,
            data: piece.data,
        };
        self.process(st, &chunk);
    }

    fn merge(&self, into: &mut PangramState, mut other: PangramState) {
        into.flush();
        other.flush();
        into.sink.merge(other.sink);
        let shift = into.evs.len();
        into.sums.extend(other.sums.into_iter().map(|s| Summary {
            ev: s.ev + shift,
            ..s
        }));
        into.evs.extend(other.evs);
        into.texts.extend(other.texts);
    }
}

impl Pangram {
    /// Stitch the ranges, pick the windows to report, and read their text with
    /// `read(input, offset, len)`. Top: shortest first, ties by (input, offset);
    /// all: by (input, offset).
    pub fn finish(
        &self,
        mut st: PangramState,
        read: &mut dyn FnMut(usize, u64, usize) -> io::Result<Vec<u8>>,
    ) -> io::Result<Vec<Window>> {
        st.flush();
        let PangramState {
            mut sink,
            mut sums,
            evs,
            mut texts,
            ..
        } = st;
        sums.sort_unstable_by_key(|s| (s.input, s.offset));
        let mut walk = Walk::new(usize::MAX);
        for s in &sums {
            if s.input != walk.input {
                walk = Walk::new(s.input);
            }
            walk.apply(s, &evs, &mut sink);
        }
        sink.into_sorted()
            .into_iter()
            .map(|f| {
                Ok(Window {
                    input: f.input,
                    offset: f.offset,
                    bytes: f.bytes,
                    letters: f.letters,
                    text: match texts.remove(&(f.input, f.offset)) {
                        Some(t) => t,
                        None => read(f.input, f.offset, f.bytes as usize)?,
                    },
                })
            })
            .collect()
    }
}

/// A state travels as the job's mode (states of other modes do not merge), the
/// windows its sink keeps, and its ranges' summaries with their events: what
/// [`Pangram::finish`] stitches, whichever process made them.
impl Partial for Pangram {
    const TAG: u8 = 3;
    const NAME: &'static str = "pangram";

    /// The mode: top (0) with K, or all (1) with the letter limit (0: none,
    /// else limit + 1).
    fn params(&self) -> Vec<u64> {
        match self.mode {
            Mode::Top(k) => vec![0, k as u64],
            Mode::All { max_letters } => vec![1, max_letters.map_or(0, |m| m.saturating_add(1))],
        }
    }

    fn from_params(p: &[u64]) -> Result<Self, Damage> {
        let mode = match *p {
            [0, k] => Mode::Top(usize::try_from(k).map_err(|_| Damage::Range {
                value: k,
                max: usize::MAX as u64,
            })?),
            [1, 0] => Mode::All { max_letters: None },
            [1, m] => Mode::All {
                max_letters: Some(m - 1),
            },
            _ => return Err(Damage::Settings(Self::NAME)),
        };
        Ok(Pangram { mode })
    }

    fn write_state(&self, st: &PangramState, w: &mut Writer) {
        match &st.live {
            None => self.write_parts(&st.sink, &st.sums, &st.evs, w),
            Some(live) => {
                // The range still being scanned is summarized on a copy.
                let (mut sums, mut evs) = (st.sums.clone(), st.evs.clone());
                live.summarize(&mut sums, &mut evs);
                self.write_parts(&st.sink, &sums, &evs, w)
            }
        }
    }

    fn read_state(&self, r: &mut Reader) -> Result<PangramState, Damage> {
        self.read_parts(r, Sink::new(self.mode))
    }

    fn relabel(&self, st: &mut PangramState, to: usize) {
        st.flush();
        let mut found = std::mem::replace(&mut st.sink, Sink::new(self.mode)).into_sorted();
        for f in &mut found {
            f.input = to;
            st.sink.offer(*f);
        }
        for s in &mut st.sums {
            s.input = to;
        }
    }
}

impl Pangram {
    fn read_parts(&self, r: &mut Reader, mut sink: Sink) -> Result<PangramState, Damage> {
        for _ in 0..r.uint()? {
            let (letters, input) = (r.uint()?, r.index(u32::MAX as u64)?);
            let (offset, bytes) = (r.uint()?, r.uint()?);
            sink.offer(Found {
                letters,
                input,
                offset,
                bytes,
            });
        }
        let mut sums = Vec::new();
        let nev = r.uint()?;
        for _ in 0..r.uint()? {
            let (input, offset, letters) = (r.index(u32::MAX as u64)?, r.uint()?, r.uint()?);
            let (ev, nfirst, nlast) = (r.index(nev)?, r.index(26)?, r.index(26)?);
            if (ev + nfirst + nlast) as u64 > nev {
                return Err(Damage::Invalid("a range whose events run past the list"));
            }
            let (nfirst, nlast) = (nfirst as u8, nlast as u8);
            sums.push(Summary {
                input,
                offset,
                letters,
                ev,
                nfirst,
                nlast,
            });
        }
        let mut evs = Vec::new();
        for _ in 0..nev {
            let (pos, ol) = (r.uint()?, r.uint()?);
            // The low 5 bits are the letter, an index into 26-letter arrays.
            if ol & 31 >= 26 {
                return Err(Damage::Invalid("an event of a letter past z"));
            }
            evs.push(Ev { pos, ol });
        }
        Ok(PangramState {
            sink,
            live: None,
            sums,
            evs,
            texts: Texts::new(),
        })
    }

    fn write_parts(&self, sink: &Sink, sums: &[Summary], evs: &[Ev], w: &mut Writer) {
        let found: Vec<&Found> = sink.found().collect();
        w.uint(found.len() as u64);
        for f in found {
            for n in [f.letters, f.input as u64, f.offset, f.bytes] {
                w.uint(n);
            }
        }
        w.uint(evs.len() as u64);
        w.uint(sums.len() as u64);
        for s in sums {
            for n in [s.input as u64, s.offset, s.letters, s.ev as u64] {
                w.uint(n);
            }
            w.uint(s.nfirst as u64);
            w.uint(s.nlast as u64);
        }
        for e in evs {
            w.uint(e.pos);
            w.uint(e.ol);
        }
    }
}

/// The serial state carried across the ranges of one input, in order: last
/// position and (input-wide, 1-based) ordinal of each letter.
struct Walk {
    input: usize,
    pos: [u64; 26],
    ord: [u64; 26],
    present: usize,
    letters: u64,
}

impl Walk {
    fn new(input: usize) -> Walk {
        Walk {
            input,
            pos: [0; 26],
            ord: [0; 26],
            present: 0,
            letters: 0,
        }
    }

    fn apply(&mut self, s: &Summary, evs: &[Ev], sink: &mut Sink) {
        let base = self.letters;
        let firsts = &evs[s.ev..s.ev + s.nfirst as usize];
        let lasts = &evs[s.ev + s.nfirst as usize..s.ev + s.nfirst as usize + s.nlast as usize];
        for e in firsts {
            let c = (e.ol & 31) as usize;
            let ord = base + (e.ol >> 5);
            let prev = self.ord[c];
            self.ord[c] = ord;
            self.pos[c] = e.pos;
            if prev == 0 {
                self.present += 1;
            }
            if self.present < 26 {
                continue;
            }
            // c is now the newest letter; the window closes iff its previous
            // occurrence is older than every other letter's last one.
            let mut m = usize::MAX;
            let mut v = u64::MAX;
            for x in 0..26 {
                if x != c && self.ord[x] < v {
                    v = self.ord[x];
                    m = x;
                }
            }
            if prev < v {
                sink.offer(Found {
                    letters: ord - v + 1,
                    input: self.input,
                    offset: self.pos[m],
                    bytes: e.pos - self.pos[m] + 1,
                });
            }
        }
        for e in lasts {
            let c = (e.ol & 31) as usize;
            if self.ord[c] == 0 {
                self.present += 1;
            }
            self.ord[c] = base + (e.ol >> 5);
            self.pos[c] = e.pos;
        }
        self.letters += s.letters;
    }
}

/// The pangram job of incremental runs (`wf pangram --state FILE`).
///
/// Why a job of its own: a later run must report windows of files it can no
/// longer read as they were (rotated, compressed, truncated by copytruncate,
/// gone), and windows that start before a file's saved offset and end after
/// it. So its state keeps, besides [`Pangram`]'s, the text of every kept
/// window, and per input one summary of the letters before the offset (see
/// [`Incremental::compact`]), which the next run's ranges are stitched to.
/// And in top mode it keeps the best `K` windows of every input rather than
/// of all: ties are broken by input order, which a rotation changes, so a
/// window beyond the `K`th today may be among the best `K` tomorrow; any
/// later top `K` is among the inputs' top `K`s. Its payload differs, so it
/// has a tag of its own.
#[derive(Debug, Clone)]
pub struct Incremental(pub Pangram);

impl Job for Incremental {
    type State = PangramState;

    fn new_state(&self) -> PangramState {
        let mut st = self.0.new_state();
        st.sink = Sink::per_input(self.0.mode);
        st
    }

    fn process(&self, st: &mut PangramState, chunk: &Chunk<'_>) {
        self.0.process(st, chunk)
    }

    fn long_records(&self) -> Option<usize> {
        self.0.long_records()
    }

    fn piece(&self, st: &mut PangramState, piece: &Piece<'_>) {
        self.0.piece(st, piece)
    }

    fn merge(&self, into: &mut PangramState, other: PangramState) {
        self.0.merge(into, other)
    }
}

impl Incremental {
    /// Give every window, range and text of input `i` the input `to(i)`, or
    /// drop them where it is `None`.
    pub fn remap(&self, st: &mut PangramState, to: &dyn Fn(usize) -> Option<usize>) {
        st.flush();
        let sink = std::mem::replace(&mut st.sink, Sink::per_input(self.0.mode));
        for f in sink.into_found() {
            if let Some(input) = to(f.input) {
                st.sink.offer(Found { input, ..f });
            }
        }
        st.sums.retain_mut(|s| match to(s.input) {
            Some(i) => {
                s.input = i;
                true
            }
            None => false,
        });
        let texts = std::mem::take(&mut st.texts);
        st.texts = texts
            .into_iter()
            .filter_map(|((i, o), t)| Some(((to(i)?, o), t)))
            .collect();
    }

    /// Stitch the ranges of each input (windows that end in them are found)
    /// and keep one summary per input: the last occurrence and ordinal of each
    /// letter, all a later range of the input needs.
    pub fn compact(&self, st: &mut PangramState) {
        st.flush();
        let mut sums = std::mem::take(&mut st.sums);
        let evs = std::mem::take(&mut st.evs);
        sums.sort_unstable_by_key(|s| (s.input, s.offset));
        let mut walk: Option<Walk> = None;
        for s in &sums {
            if walk.as_ref().is_none_or(|w| w.input != s.input) {
                if let Some(w) = walk.take() {
                    w.summarize(&mut st.sums, &mut st.evs);
                }
                walk = Some(Walk::new(s.input));
            }
            if let Some(w) = &mut walk {
                w.apply(s, &evs, &mut st.sink);
            }
        }
        if let Some(w) = walk {
            w.summarize(&mut st.sums, &mut st.evs);
        }
    }

    /// Drop the windows no later run can report; read the text of every
    /// kept window that has none yet, with
    /// `read(input, offset, len)`, and forget the text of windows no longer
    /// kept.
    pub fn keep_texts(
        &self,
        st: &mut PangramState,
        read: &mut dyn FnMut(usize, u64, usize) -> io::Result<Vec<u8>>,
    ) -> io::Result<()> {
        st.flush();
        st.sink.prune();
        let mut texts = Texts::new();
        for f in st.sink.found() {
            let key = (f.input, f.offset);
            let t = match st.texts.remove(&key) {
                Some(t) => t,
                None => read(f.input, f.offset, f.bytes as usize)?,
            };
            texts.insert(key, t);
        }
        st.texts = texts;
        Ok(())
    }

    /// The windows to report, as [`Pangram::finish`] (texts kept are used).
    pub fn finish(
        &self,
        st: PangramState,
        read: &mut dyn FnMut(usize, u64, usize) -> io::Result<Vec<u8>>,
    ) -> io::Result<Vec<Window>> {
        self.0.finish(st, read)
    }
}

impl Walk {
    /// The walk's state as one range from the input's start, with no first
    /// occurrences (the windows that end in it were found): what
    /// [`Walk::apply`] makes again.
    fn summarize(&self, sums: &mut Vec<Summary>, evs: &mut Vec<Ev>) {
        if self.letters == 0 {
            return;
        }
        let ev = evs.len();
        for c in (0..26).filter(|&c| self.ord[c] != 0) {
            evs.push(Ev {
                pos: self.pos[c],
                ol: self.ord[c] << 5 | c as u64,
            });
        }
        sums.push(Summary {
            input: self.input,
            offset: 0,
            letters: self.letters,
            ev,
            nfirst: 0,
            nlast: (evs.len() - ev) as u8,
        });
    }
}

/// [`Pangram`]'s payload, then the kept windows' texts: a count, then
/// (input, offset, text) each. Every kept window has its text.
impl Partial for Incremental {
    const TAG: u8 = 5;
    const NAME: &'static str = "pangram";

    fn params(&self) -> Vec<u64> {
        self.0.params()
    }

    fn from_params(p: &[u64]) -> Result<Self, Damage> {
        Pangram::from_params(p).map(Incremental)
    }

    fn write_state(&self, st: &PangramState, w: &mut Writer) {
        self.0.write_state(st, w);
        w.uint(st.texts.len() as u64);
        for ((i, o), t) in &st.texts {
            w.uint(*i as u64);
            w.uint(*o);
            w.bytes(t);
        }
    }

    fn read_state(&self, r: &mut Reader) -> Result<PangramState, Damage> {
        let mut st = self.0.read_parts(r, Sink::per_input(self.0.mode))?;
        for _ in 0..r.index(r.left() as u64)? {
            let (i, o) = (r.index(u32::MAX as u64)?, r.uint()?);
            st.texts.insert((i, o), r.bytes()?.to_vec());
        }
        let n = st.sink.found().count();
        let whole = st.sink.found().all(|f| {
            let t = st.texts.get(&(f.input, f.offset));
            t.is_some_and(|t| t.len() as u64 == f.bytes)
        });
        if n != st.texts.len() || !whole {
            return Err(Damage::Invalid("kept windows and their texts do not match"));
        }
        Ok(st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn letter(b: u8) -> Option<u8> {
        b.is_ascii_alphabetic()
            .then(|| b.to_ascii_lowercase() - b'a')
    }

    /// Brute force: from every letter, extend until all 26 letters appear; the
    /// window is minimal iff its first letter does not occur again in it.
    /// Returns (offset, bytes, letters) by offset.
    fn brute(t: &[u8]) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        for s in 0..t.len() {
            let Some(c0) = letter(t[s]) else { continue };
            let mut seen = 1u32 << c0;
            let mut n = 1;
            for (e, &b) in t.iter().enumerate().skip(s + 1) {
                let Some(c) = letter(b) else { continue };
                if c == c0 {
                    break;
                }
                n += 1;
                seen |= 1 << c;
                if seen == (1 << 26) - 1 {
                    out.push((s as u64, (e - s + 1) as u64, n));
                    break;
                }
            }
        }
        out
    }

    /// Cut `t` into chunks the way the engine does: each ends just after a
    /// newline (or at the end), at least `size` bytes long when possible.
    fn cut_lines(t: &[u8], size: usize) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        let mut s = 0;
        while s < t.len() {
            let want = (s + size.max(1)).min(t.len());
            let e = match t[want - 1..].iter().position(|&b| b == b'\n') {
                Some(p) => want + p,
                None => t.len(),
            };
            v.push((s as u64, e - s));
            s = e;
        }
        v
    }

    /// Cut anywhere, at random sizes up to `max`.
    fn cut_random(t: &[u8], max: usize, rng: &mut impl Rng) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        let mut s = 0;
        while s < t.len() {
            let n = rng.random_range(0..=max).min(t.len() - s);
            v.push((s as u64, n));
            s += n;
        }
        v
    }

    /// Run the job over `inputs`, each cut into `cuts[i]`, with the chunks
    /// shuffled over `threads` states (runs of neighbours kept together
    /// sometimes), merged in a random grouping.
    fn run(
        mode: Mode,
        inputs: &[&[u8]],
        cuts: &[Vec<(u64, usize)>],
        threads: usize,
        rng: &mut impl Rng,
    ) -> Vec<Window> {
        let job = Pangram { mode };
        let mut work: Vec<(usize, u64, usize)> = Vec::new();
        for (i, c) in cuts.iter().enumerate() {
            work.extend(c.iter().map(|&(o, n)| (i, o, n)));
        }
        // Shuffle blocks of neighbours, so threads sometimes see contiguous runs.
        let block = rng.random_range(1..=4);
        let mut blocks: Vec<_> = work.chunks(block).map(|b| b.to_vec()).collect();
        blocks.shuffle(rng);
        let mut states: Vec<PangramState> = (0..threads).map(|_| job.new_state()).collect();
        for b in blocks {
            let t = rng.random_range(0..threads);
            for (i, o, n) in b {
                let data = &inputs[i][o as usize..o as usize + n];
                if n == 0 && rng.random_bool(0.5) {
                    continue; // empty chunks may be skipped
                }
                job.process(
                    &mut states[t],
                    &Chunk {
                        input: i,
                        offset: o,
                        data,
                    },
                );
            }
        }
        while states.len() > 1 {
            let a = rng.random_range(0..states.len());
            let s = states.swap_remove(a);
            let b = rng.random_range(0..states.len());
            job.merge(&mut states[b], s);
        }
        let st = states.pop().unwrap();
        let mut read = |i: usize, o: u64, n: usize| -> io::Result<Vec<u8>> {
            Ok(inputs[i][o as usize..o as usize + n].to_vec())
        };
        job.finish(st, &mut read).unwrap()
    }

    fn expected(mode: Mode, inputs: &[&[u8]]) -> Vec<Window> {
        let mut all = Vec::new();
        for (i, t) in inputs.iter().enumerate() {
            for (offset, bytes, letters) in brute(t) {
                all.push(Window {
                    input: i,
                    offset,
                    bytes,
                    letters,
                    text: t[offset as usize..(offset + bytes) as usize].to_vec(),
                });
            }
        }
        match mode {
            Mode::All { max_letters } => {
                all.retain(|w| w.letters <= max_letters.unwrap_or(u64::MAX));
                all
            }
            Mode::Top(k) => {
                all.sort_by_key(|w| (w.letters, w.input, w.offset));
                all.truncate(k);
                all
            }
        }
    }

    fn check(inputs: &[&[u8]], rng: &mut impl Rng, rounds: usize) {
        let modes = [
            Mode::All { max_letters: None },
            Mode::All {
                max_letters: Some(40),
            },
            Mode::Top(1),
            Mode::Top(10),
            Mode::Top(0),
        ];
        let wants: Vec<_> = modes.iter().map(|&m| expected(m, inputs)).collect();
        for round in 0..rounds {
            let mode_i = round % modes.len();
            let cuts: Vec<_> = inputs
                .iter()
                .map(|t| match round % 4 {
                    0 => vec![(0, t.len())],
                    1 => cut_lines(t, rng.random_range(1..200)),
                    2 => cut_random(t, rng.random_range(1..20), rng),
                    _ => cut_random(t, rng.random_range(1..3000), rng),
                })
                .collect();
            let threads = rng.random_range(1..6);
            let got = run(modes[mode_i], inputs, &cuts, threads, rng);
            assert_eq!(
                got, wants[mode_i],
                "mode {:?} round {round} threads {threads}",
                modes[mode_i]
            );
        }
    }

    /// Random text over `alpha`, with runs of non-letters and newlines.
    fn gen(rng: &mut impl Rng, len: usize, alpha: &[u8]) -> Vec<u8> {
        let mut t = Vec::with_capacity(len);
        while t.len() < len {
            match rng.random_range(0..100) {
                0..=79 => t.push(alpha[rng.random_range(0..alpha.len())]),
                80..=89 => t.push(b' '),
                90..=93 => t.push(b'\n'),
                94 => t.extend_from_slice("é—ü".as_bytes()),
                95 => t.push(rng.random()),
                96 => {
                    let n = rng.random_range(0..5000);
                    t.extend((0..n).map(|_| b"0123456789 .,;\n\t\xff"[rng.random_range(0..16)]));
                }
                _ => t.extend_from_slice(b".\n\n"),
            }
        }
        t
    }

    fn upper_lower() -> Vec<u8> {
        (b'a'..=b'z').chain(b'A'..=b'Z').collect()
    }

    #[test]
    fn brute_force_sanity() {
        let t = b"The quick brown fox jumps over the lazy dog";
        let w = brute(t);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0], (4, t.len() as u64 - 4, 32)); // "quick ... dog"
        let t = b"abcdefghijklmnopqrstuvwxyza";
        assert_eq!(brute(t), vec![(0, 26, 26), (1, 26, 26)]);
        assert!(brute(b"abcdefghijklmnopqrstuvwxy").is_empty());
    }

    #[test]
    fn quick_brown_fox() {
        let t: &[u8] = b"xx The quick brown fox\njumps over\n the lazy dog. ok\n";
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let got = run(Mode::Top(10), &[t], &[cut_lines(t, 1)], 2, &mut rng);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].offset, 7);
        assert_eq!(got[0].letters, 32);
        assert_eq!(got[0].text, b"quick brown fox\njumps over\n the lazy dog");
    }

    #[test]
    fn random_texts_all_chunkings() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
        let full = upper_lower();
        let small: Vec<u8> = b"abcdefghijklmnopqrstuvwxyzz".to_vec();
        // Skewed: mostly a few letters, rare others (long windows).
        let mut skewed: Vec<u8> = b"etaoin".repeat(40);
        skewed.extend(b"bcdfghjklmpqrsuvwxyz".iter());
        for case in 0..24 {
            let alpha: &[u8] = match case % 3 {
                0 => &full,
                1 => &small,
                _ => &skewed,
            };
            let len = rng.random_range(0..20_000);
            let t = gen(&mut rng, len, alpha);
            check(&[&t], &mut rng, 10);
        }
    }

    #[test]
    fn several_inputs_and_missing_letters() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let full = upper_lower();
        let no_q: Vec<u8> = full
            .iter()
            .copied()
            .filter(|b| !b"qQ".contains(b))
            .collect();
        let a = gen(&mut rng, 30_000, &full);
        let b = gen(&mut rng, 10_000, &no_q);
        let c = Vec::new();
        let d = b"abcdefghijklmnopqrstuvwxyz\nabcdefghijklmnopqrstuvwxyz".to_vec();
        let e = gen(&mut rng, 5_000, &full);
        let inputs: Vec<&[u8]> = vec![&a, &b, &c, &d, &e, &a];
        check(&inputs, &mut rng, 40);
    }

    #[test]
    fn long_gaps_and_tiny_chunks() {
        // Letters far apart: windows spanning hundreds of chunks and live ranges.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
        let mut t = Vec::new();
        for _ in 0..6 {
            for c in (b'a'..=b'z').rev() {
                t.push(c);
                let gap = rng.random_range(0..700);
                t.extend((0..gap).map(|i| if i % 9 == 8 { b'\n' } else { b'.' }));
                if rng.random_bool(0.2) {
                    t.push(b'e');
                }
            }
        }
        check(&[&t], &mut rng, 40);
    }

    /// Many more random cases than the default run: `cargo test --release --lib
    /// pangram_stress -- --ignored`.
    #[test]
    #[ignore]
    fn pangram_stress() {
        let full = upper_lower();
        let small: Vec<u8> = b"abcdefghijklmnopqrstuvwxyzzzz".to_vec();
        for seed in 0..300 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + seed);
            let alpha: &[u8] = if seed % 2 == 0 { &full } else { &small };
            let n = rng.random_range(1..4);
            let texts: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = rng.random_range(0..15_000);
                    gen(&mut rng, len, alpha)
                })
                .collect();
            let inputs: Vec<&[u8]> = texts.iter().map(|t| t.as_slice()).collect();
            check(&inputs, &mut rng, 20);
        }
    }

    /// A state whose event names a letter past z is damaged: found by
    /// `fuzz/fuzz_targets/partial.rs` (an index out of bounds in `Walk::apply`
    /// when such a state was finished), for both pangram jobs.
    #[test]
    fn an_event_of_no_letter_is_damage() {
        use crate::jobs::partial;
        let text = b"The quick brown fox jumps over the lazy dog. Pack my box.";
        let pangram = Pangram { mode: Mode::Top(3) };
        let mut st = pangram.new_state();
        for (offset, data) in [(0, &text[..20]), (20, &text[20..])] {
            let chunk = Chunk {
                input: 0,
                offset,
                data,
            };
            pangram.process(&mut st, &chunk);
        }
        st.flush();
        assert!(!st.evs.is_empty());
        let b = partial::encode(&pangram, &st, &Default::default());
        assert!(partial::decode::<Pangram>(&b).is_ok());
        st.evs[0].ol |= 31;
        let b = partial::encode(&pangram, &st, &Default::default());
        assert!(partial::decode::<Pangram>(&b).is_err());
        let inc = Incremental(pangram);
        let b = partial::encode(&inc, &st, &Default::default());
        assert!(partial::decode::<Incremental>(&b).is_err());
    }

    /// Incremental runs: two texts grown in pieces cut anywhere, their order
    /// swapped at every run (as a rotation renames), the state through its
    /// bytes after each run: every run reports what one run over the texts'
    /// current bytes does, with no text read back for windows of earlier runs.
    #[test]
    fn incremental_runs_equal_one_run() {
        use crate::jobs::partial;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let modes = [
            Mode::Top(3),
            Mode::All { max_letters: None },
            Mode::All {
                max_letters: Some(35),
            },
            Mode::Top(10),
        ];
        let small: Vec<u8> = b"abcdefghijklmnopqrstuvwxyzzzz".to_vec();
        for case in 0..16 {
            let mode = modes[case % modes.len()];
            let job = Incremental(Pangram { mode });
            let alpha = if case % 2 == 0 {
                upper_lower()
            } else {
                small.clone()
            };
            let texts = [gen(&mut rng, 12_000, &alpha), gen(&mut rng, 9_000, &alpha)];
            let mut at = [0usize; 2];
            let mut saved: Option<Vec<u8>> = None;
            for step in 0..12 {
                // Input index of text t in this run.
                let index = |t: usize| (t + step) % 2;
                let mut st = job.new_state();
                for t in 0..2 {
                    let end = (at[t] + rng.random_range(0..3000)).min(texts[t].len());
                    let part = &texts[t][at[t]..end];
                    for (o, n) in cut_random(part, rng.random_range(1..500), &mut rng) {
                        let data = &part[o as usize..o as usize + n];
                        let offset = at[t] as u64 + o;
                        let chunk = Chunk {
                            input: index(t),
                            offset,
                            data,
                        };
                        job.process(&mut st, &chunk);
                    }
                    at[t] = end;
                }
                let now: Vec<&[u8]> = (0..2)
                    .map(|i| &texts[(i + step) % 2][..at[(i + step) % 2]])
                    .collect();
                if let Some(b) = saved.take() {
                    let (_, mut old) = partial::decode::<Incremental>(&b).unwrap();
                    // Last run's input i is this run's input 1 - i.
                    job.remap(&mut old.state, &|i| Some(1 - i));
                    job.merge(&mut st, old.state);
                }
                job.compact(&mut st);
                let mut read = |i: usize, o: u64, n: usize| -> io::Result<Vec<u8>> {
                    Ok(now[i][o as usize..o as usize + n].to_vec())
                };
                job.keep_texts(&mut st, &mut read).unwrap();
                let b = partial::encode(&job, &st, &Default::default());
                saved = Some(b);
                let mut none = |i: usize, o: u64, _: usize| -> io::Result<Vec<u8>> {
                    panic!("text of window ({i}, {o}) read back")
                };
                let got = job.finish(st, &mut none).unwrap();
                assert_eq!(
                    got,
                    expected(mode, &now),
                    "case {case} step {step} {mode:?}"
                );
            }
        }
    }

    #[test]
    fn real_text_prefix() {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/gutenberg/milton-paradise.txt"
        );
        let Ok(t) = std::fs::read(p) else {
            eprintln!("skipping: shared data absent");
            return;
        };
        let t = &t[..t.len().min(150_000)];
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        check(&[t], &mut rng, 10);
    }
}
