//! Byte strings interned to dense `u32` ids, one table per thread.
//!
//! A line of a log repeats the clients, agents, requests and referrers of
//! thousands of other lines. The report's first counter kept a hash map per
//! panel keyed by the bytes themselves and a hash set of visitor ids per row:
//! some fifteen hashes of long keys and seven set insertions a line, half of
//! its CPU (perf, 256 MB log). Here each distinct string is hashed once a
//! line, into the one table of its kind, and everything else is keyed by the
//! small id it gets: counts live in vectors indexed by it, visitors are
//! (day, client id, agent id) triples. The keys are kept in one growing
//! buffer (no allocation per key) with their hashes, so that the table grows
//! without hashing any key again.
//!
//! The table is a plain open-addressing one (linear probing, at most three
//! quarters full) rather than hashbrown's, for one reason: a key's slot can
//! be loaded before the key is looked up. Tables of hundreds of thousands of
//! clients and referrers do not fit in the cache; hashbrown's lookup read
//! the control bytes, the entry, then the key, each a dependent cache miss
//! (perf, 10 GiB bench log: `id` and `memcmp` 30% of the report's CPU).
//! The report hashes a line's keys when it reads the line, loads their
//! slots ([`Interner::prefetch`]) and counts the line sixteen lines later
//! (`job::read_rows`): `id` 4% of the CPU, the report 0.79x of its time
//! (3 interleaved runs; with the visitors' table done alike, 0.75x).
//! A slot holds the key's hash's high half (its tag), its id, and its place
//! in the key buffer, so that a lookup reads the slot, then the key's bytes.
//! Where a slot goes is from its tag too ([`home`]), so that a table grows
//! without reading a key or its hash again (the visitors' table, grown
//! again after every spill, had its growth at 4% of the CPU with the hashes
//! made again). Spill partitions are from the hash's low bits, apart from
//! the tag: from the same bits, a partition's keys crowded one part of
//! every table they were merged into (1.7x the report's time).
//! An entry that also held the key's first 16 bytes (hashbrown's table,
//! 2026-11-28) made the tables twice as large and the report no faster.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use hashbrown::DefaultHashBuilder;

/// The hasher of every interner of the process: one random seed (a log's
/// keys cannot be chosen to collide), the same hash in every thread, so
/// that a key's spill partition comes from the hash its table keeps
/// (`spill`: a second hash of every key per spill, SipHash, was most of a
/// spill's time).
pub(crate) fn key_hasher() -> &'static DefaultHashBuilder {
    static HASHER: OnceLock<DefaultHashBuilder> = OnceLock::new();
    HASHER.get_or_init(DefaultHashBuilder::default)
}

/// The hash of `key` ([`key_hasher`]'s), as [`Interner::id_hashed`] takes it:
/// its bytes alone, without the length that `Hash for [u8]` writes first (a
/// key is compared whole on a match, so the length adds nothing; hashing it
/// was a mix of its own for each of a line's five keys).
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    hash_from(&built_hasher(), key)
}

/// A hasher [`key_hasher`] built ([`built_hasher`]).
pub type KeyHasher = <DefaultHashBuilder as BuildHasher>::Hasher;

/// A hasher of [`key_hasher`], for [`hash_from`].
#[inline]
pub fn built_hasher() -> KeyHasher {
    key_hasher().build_hasher()
}

/// [`hash_key`] of `key`, from a hasher [`built_hasher`] made: a line's
/// keys hashed from one (`acc::Hashes::of`; one built a key, `key_hasher`'s
/// `OnceLock` asked and the seeds copied each time, was ~24 of ~2,850
/// instructions a line with `rules::referrer_key`'s blanks, cachegrind).
#[inline]
pub fn hash_from(built: &KeyHasher, key: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = built.clone();
    h.write(key);
    h.finish()
}

/// Asks the CPU to load the cache line at `p` (a hint: it never faults).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The high half of a hash (its tag): what a slot keeps of it, and where
/// its key is looked for first ([`home`]), so that a table grows without
/// hashing or reading any key again.
#[inline]
pub(crate) fn tag_of(hash: u64) -> u64 {
    hash & !0xFFFF_FFFF
}

/// The first slot of a tag ([`tag_of`]) in a table of `mask + 1` slots.
#[inline]
pub(crate) fn home(tag: u64, mask: usize) -> usize {
    (tag >> 32) as usize & mask
}

/// Distinct byte strings and their ids, `0..len()` in order of first sight.
#[derive(Default)]
pub struct Interner {
    /// Open addressing, linear probing, a power of two long (or empty),
    /// at most three quarters full.
    slots: Vec<Slot>,
    /// The hash of each key, by id ([`Interner::hash_of`]: spill
    /// partitions, merges into other tables).
    hashes: Vec<u64>,
    /// End of each key in `bytes` (the key before ends where it starts).
    ends: Vec<usize>,
    bytes: Vec<u8>,
}

/// A key's table entry: the high half of its hash and its id + 1 (0: an
/// empty slot), and its place in `bytes`: start << 16 | length (`LONG`
/// for a key of `LONG` bytes or more, whose end is read from `ends`). A
/// lookup reads the slot, then the key's bytes, and nothing else.
#[derive(Clone, Copy, Default)]
struct Slot {
    tag_id: u64,
    place: u64,
}

const LONG: u64 = 0xFFFF;

impl Interner {
    /// The id of `key`, and whether it is new.
    #[inline]
    pub fn id(&mut self, key: &[u8]) -> (u32, bool) {
        self.id_hashed(key, hash_key(key))
    }

    /// [`Interner::id`] of a key whose hash ([`hash_key`]) is known.
    #[inline]
    pub fn id_hashed(&mut self, key: &[u8], hash: u64) -> (u32, bool) {
        if self.ends.len() * 4 >= self.slots.len() * 3 {
            self.grow();
        }
        let tag = tag_of(hash);
        let mask = self.slots.len() - 1;
        let mut i = home(tag, mask);
        loop {
            let s = self.slots[i];
            if s.tag_id == 0 {
                return (self.insert(i, key, hash), true);
            }
            if tag_of(s.tag_id) == tag && self.holds(s, key) {
                return ((s.tag_id as u32) - 1, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `key` (of hash `hash`, [`hash_key`]), if it has one.
    #[inline]
    pub fn find_hashed(&self, key: &[u8], hash: u64) -> Option<u32> {
        let mask = self.slots.len().checked_sub(1)?;
        let tag = tag_of(hash);
        let mut i = home(tag, mask);
        loop {
            let s = self.slots[i];
            if s.tag_id == 0 {
                return None;
            }
            if tag_of(s.tag_id) == tag && self.holds(s, key) {
                return Some((s.tag_id as u32) - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// Loads the slot where a key of `hash` is looked for first.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        prefetch_home(&self.slots, hash);
    }

    /// Loads the first and last bytes of the key that a key of `hash` is
    /// likely to be (of a key of `LONG` bytes or more, byte `LONG - 1`),
    /// once [`Interner::prefetch`] has loaded the slot; returns its id. With the first alone, the compare of a found key
    /// (`memcmp`) was 9.7% of the report's samples (1 GiB bench log), most
    /// of them on its loads: a request or referrer of 33-64 bytes runs into
    /// a second cache line as often as not.
    #[inline]
    pub fn prefetch_key(&self, hash: u64) -> Option<u32> {
        let s = likely(&self.slots, hash, |s| s.tag_id)?;
        let start = self.bytes.as_ptr().wrapping_add((s.place >> 16) as usize);
        prefetch(start);
        prefetch(start.wrapping_add(((s.place & LONG) as usize).saturating_sub(1)));
        Some((s.tag_id as u32).wrapping_sub(1))
    }

    /// Whether slot `s` is `key`'s.
    #[inline]
    fn holds(&self, s: Slot, key: &[u8]) -> bool {
        let len = s.place & LONG;
        if len == LONG {
            return self.get((s.tag_id as u32) - 1) == key;
        }
        let start = (s.place >> 16) as usize;
        len as usize == key.len() && same(&self.bytes[start..start + key.len()], key)
    }

    /// Adds `key` as a new id in the empty slot `i`.
    fn insert(&mut self, i: usize, key: &[u8], hash: u64) -> u32 {
        let id = self.ends.len() as u32;
        self.slots[i] = Slot {
            tag_id: tag_of(hash) | (id as u64 + 1),
            place: (self.bytes.len() as u64) << 16 | (key.len() as u64).min(LONG),
        };
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        self.hashes.push(hash);
        id
    }

    /// Twice the slots (16 at first), each placed again by its tag.
    #[cold]
    fn grow(&mut self) {
        self.slots = regrow(&self.slots, |s| s.tag_id);
    }

    /// The key of `id`.
    pub fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The hash of the key of `id` ([`key_hasher`]'s).
    pub fn hash_of(&self, id: u32) -> u64 {
        self.hashes[id as usize]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + (self.hashes.capacity() + self.ends.capacity()) * 8
            + self.bytes.capacity()
    }

    /// Every key, in id order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len() as u32).map(|i| self.get(i))
    }
}

/// Whether `a` and `b` are the same bytes: a key of 16 to 64 bytes (most
/// clients, requests and referrers) compared in two or four loads of each
/// here, not in a call to `memcmp`. With the key's last bytes loaded ahead
/// ([`Interner::prefetch_key`]), the report 0.96x -> 0.94x of its time
/// (1 GiB bench log, 11 interleaved runs; the prefetch alone 0.96x).
/// Equal to `a == b` (test `same_is_slice_equality`).
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w = |s: &[u8], i: usize| u128::from_ne_bytes(s[i..i + 16].try_into().unwrap());
    let d = |i: usize| w(a, i) ^ w(b, i);
    match n {
        16..=32 => d(0) | d(n - 16) == 0,
        33..=64 => d(0) | d(16) | d(n - 32) | d(n - 16) == 0,
        _ => a == b,
    }
}

/// Loads the slot of `slots` where a key of `hash` is looked for first.
#[inline]
pub(crate) fn prefetch_home<S>(slots: &[S], hash: u64) {
    if let Some(mask) = slots.len().checked_sub(1) {
        prefetch(&slots[home(tag_of(hash), mask)]);
    }
}

/// The slot a key of `hash` is likely to be in: the first with its tag
/// (the high half of `tag(slot)`) of the first four it is looked for in,
/// if one comes before an empty slot.
#[inline]
pub(crate) fn likely<S: Copy>(slots: &[S], hash: u64, tag: impl Fn(&S) -> u64) -> Option<S> {
    let mask = slots.len().checked_sub(1)?;
    let want = tag_of(hash);
    let mut i = home(want, mask);
    for _ in 0..4 {
        let t = tag(&slots[i]);
        if t == 0 {
            return None;
        }
        if tag_of(t) == want {
            return Some(slots[i]);
        }
        i = (i + 1) & mask;
    }
    None
}

/// The slots of `old` in a table twice as long (16 at first), each placed
/// by its tag (the high half of `tag(slot)`; 0 is an empty slot).
pub(crate) fn regrow<S: Copy + Default>(old: &[S], tag: impl Fn(&S) -> u64) -> Vec<S> {
    let n = (old.len() * 2).max(16);
    let mut slots = filled(n, S::default());
    for s in old {
        let t = tag(s);
        if t != 0 {
            let mut i = home(tag_of(t), n - 1);
            while tag(&slots[i]) != 0 {
                i = (i + 1) & (n - 1);
            }
            slots[i] = *s;
        }
    }
    slots
}

/// `n` copies of `x`, written now. `vec![0u64; n]` takes fresh pages from
/// the kernel unwritten (calloc): the first read of each maps the shared
/// zero page, and the first write after it faults again and flushes the
/// TLB of every core the process runs on (an interrupt to each, a VM exit
/// here). A table read before it is written (a lookup before an insert, a
/// count's `+= 1`) paid that per page: perf found the flushes (`do_wp_page`,
/// `flush_tlb_mm_range`) under the visitors' lookups, 1.5% of the report's
/// samples (1 GiB bench log) and half of those of the visitors' merge.
pub(crate) fn filled<T: Clone>(n: usize, x: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, x);
    v
}

/// Keys looked up ahead of the one added ([`Keyed::prefetch_ahead`]): a
/// key's slot and bytes in a table of another's keys (a merge, a spill's
/// group read back) were a cache miss each.
pub(crate) const AHEAD: usize = 16;

/// Interned keys, each with a value of `T` (its counts).
pub struct Keyed<T> {
    pub keys: Interner,
    pub values: Vec<T>,
}

impl<T: Default> Default for Keyed<T> {
    fn default() -> Self {
        Keyed {
            keys: Interner::default(),
            values: Vec::new(),
        }
    }
}

impl<T: Default> Keyed<T> {
    /// The id of `key` and its value (a new key starts at `T::default()`).
    #[inline]
    pub fn slot(&mut self, key: &[u8]) -> (u32, &mut T) {
        self.slot_hashed(key, hash_key(key))
    }

    /// [`Keyed::slot`] of a key whose hash ([`hash_key`]) is known.
    #[inline]
    pub fn slot_hashed(&mut self, key: &[u8], hash: u64) -> (u32, &mut T) {
        let (id, new) = self.keys.id_hashed(key, hash);
        if new {
            self.values.push(T::default());
        }
        (id, &mut self.values[id as usize])
    }

    /// Loads the key and the value that a key of `hash` is likely to have,
    /// once [`Interner::prefetch`] has loaded the slot: a value's counts
    /// added in `Panels::count` missed the cache for most lines (perf
    /// annotate: 3/4 of `job::count`'s samples on three loads of values).
    #[inline]
    pub fn prefetch_entry(&self, hash: u64) {
        if let Some(id) = self.keys.prefetch_key(hash) {
            prefetch(self.values.as_ptr().wrapping_add(id as usize));
        }
    }

    /// [`Keyed::slot`] of the key `id` of `other` (its hash not made again).
    #[inline]
    pub fn slot_from(&mut self, other: &Interner, id: u32) -> (u32, &mut T) {
        self.slot_hashed(other.get(id), other.hash_of(id))
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        self.keys.heap_bytes() + self.values.capacity() * std::mem::size_of::<T>()
    }

    /// Loads, for the `i`th of keys added in a row (`hash_at(j)`: the `j`th
    /// one's hash, `None` past the last), the slot of the key [`AHEAD`]
    /// on and the bytes and value of the key half as far on, as a line's
    /// are loaded before it is counted (`job::read_rows`).
    #[inline]
    pub fn prefetch_ahead(&self, i: usize, hash_at: impl Fn(usize) -> Option<u64>) {
        if let Some(h) = hash_at(i + AHEAD) {
            self.keys.prefetch(h);
        }
        if let Some(h) = hash_at(i + AHEAD / 2) {
            self.prefetch_entry(h);
        }
    }

    /// Folds `other` in with `add`; returns other's ids as this one's (the
    /// keys looked up ahead, [`Keyed::prefetch_ahead`]).
    pub fn merge(&mut self, other: Keyed<T>, add: impl Fn(&mut T, T)) -> Vec<u32> {
        let n = other.len();
        let mut remap = Vec::with_capacity(n);
        let hash_at = |j: usize| (j < n).then(|| other.keys.hash_of(j as u32));
        for (i, v) in other.values.into_iter().enumerate() {
            self.prefetch_ahead(i, hash_at);
            let (id, slot) = self.slot_from(&other.keys, i as u32);
            add(slot, v);
            remap.push(id);
        }
        remap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `same` against `==`: every length to 80, equal and with one byte
    /// changed at each place, and of two lengths.
    #[test]
    fn same_is_slice_equality() {
        for n in 0..=80usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
            assert!(same(&a, &a.clone()));
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same(&a, &b), "length {n}, byte {i}");
            }
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0);
            assert!(!same(&a[..n / 2], &a) || n == 0);
        }
    }

    #[test]
    fn ids_are_dense_and_stable_through_growth() {
        let mut k = Interner::default();
        let words: Vec<Vec<u8>> = (0..10_000).map(|i| format!("k{i}").into_bytes()).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(k.id(w), (i as u32, true));
        }
        assert_eq!(k.id(b""), (10_000, true));
        for (i, w) in words.iter().enumerate() {
            assert_eq!(k.id(w), (i as u32, false));
            assert_eq!(k.get(i as u32), &w[..]);
        }
        assert_eq!(k.get(10_000), b"");
        assert_eq!(k.keys().count(), 10_001);
    }

    /// Keys alike but for their last bytes, trailing zeros and lengths: each
    /// its own id, as a plain map of the bytes gives.
    #[test]
    fn keys_alike_are_told_apart() {
        let mut keys: Vec<Vec<u8>> =
            vec![vec![], vec![0], vec![0, 0], b"a".to_vec(), b"a\0".to_vec()];
        for len in [15, 16, 17, 31, 32, 33, 100, 65_534, 65_535, 65_536, 70_000] {
            for last in [b'x', b'y', 0] {
                let mut k = vec![b'k'; len];
                k[len - 1] = last;
                keys.push(k.clone());
                k.push(0);
                keys.push(k);
            }
        }
        let mut k = Interner::default();
        let mut plain = std::collections::HashMap::new();
        for round in 0..2 {
            for key in &keys {
                let next = plain.len() as u32;
                let want = *plain.entry(key.clone()).or_insert(next);
                assert_eq!(k.id(key), (want, round == 0 && want == next), "{key:?}");
                assert_eq!(k.get(want), &key[..]);
            }
        }
        assert_eq!(k.len(), plain.len());
    }

    #[test]
    fn merge_adds_values_and_renumbers() {
        let mut a: Keyed<u64> = Keyed::default();
        *a.slot(b"x").1 += 1;
        let mut b: Keyed<u64> = Keyed::default();
        *b.slot(b"y").1 += 5;
        *b.slot(b"x").1 += 2;
        let remap = a.merge(b, |s, v| *s += v);
        assert_eq!(remap, vec![1, 0]);
        assert_eq!(a.values, vec![3, 5]);
    }
}
