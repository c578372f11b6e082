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
//! A table entry is the key's place and id, not the key: an entry that also
//! held the key's first 16 bytes (a client's address compared in the table
//! alone) made the tables twice as large and the 10 GiB report no faster
//! (perf had most of `id` in loading the entry, then the key; 23.9 s
//! without, 25.2 s with, 3 interleaved runs, 2026-11-28).

use std::hash::BuildHasher;
use std::sync::OnceLock;

use hashbrown::{DefaultHashBuilder, HashTable};

/// The hasher of every interner of the process: one random seed (a log's
/// keys cannot be chosen to collide), the same hash in every thread, so
/// that a key's spill partition comes from the hash its table keeps
/// (`spill`: a second hash of every key per spill, SipHash, was most of a
/// spill's time).
pub(crate) fn key_hasher() -> &'static DefaultHashBuilder {
    static HASHER: OnceLock<DefaultHashBuilder> = OnceLock::new();
    HASHER.get_or_init(DefaultHashBuilder::default)
}

/// Distinct byte strings and their ids, `0..len()` in order of first sight.
pub struct Interner {
    /// Per key: where it starts in `bytes`, its length and its id, in the
    /// table itself, so that a lookup reads the table, then the key's bytes
    /// (an id alone took one more dependent load, of `ends`).
    table: HashTable<Entry>,
    hashes: Vec<u64>,
    /// End of each key in `bytes` (the key before ends where it starts).
    ends: Vec<usize>,
    bytes: Vec<u8>,
    hasher: DefaultHashBuilder,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            table: HashTable::new(),
            hashes: Vec::new(),
            ends: Vec::new(),
            bytes: Vec::new(),
            hasher: *key_hasher(),
        }
    }
}

/// A key's place in `bytes`, and its id.
#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    len: u32,
    id: u32,
}

impl Entry {
    /// Whether this is the entry of `key`, whose bytes are in `bytes`.
    #[inline]
    fn holds(&self, key: &[u8], bytes: &[u8]) -> bool {
        self.len as usize == key.len() && bytes[self.start..self.start + key.len()] == *key
    }
}

impl Interner {
    /// The id of `key`, and whether it is new.
    #[inline]
    pub fn id(&mut self, key: &[u8]) -> (u32, bool) {
        let hash = self.hasher.hash_one(key);
        let bytes = &self.bytes;
        let same = |e: &Entry| e.holds(key, bytes);
        if let Some(e) = self.table.find(hash, same) {
            return (e.id, false);
        }
        let id = self.ends.len() as u32;
        let hashes = &self.hashes;
        let entry = Entry {
            start: self.bytes.len(),
            len: key.len() as u32,
            id,
        };
        self.table
            .insert_unique(hash, entry, |e| hashes[e.id as usize]);
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        self.hashes.push(hash);
        (id, true)
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
        self.table.capacity() * (std::mem::size_of::<Entry>() + 1)
            + (self.hashes.capacity() + self.ends.capacity()) * 8
            + self.bytes.capacity()
    }

    /// Every key, in id order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len() as u32).map(|i| self.get(i))
    }
}

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
        let (id, new) = self.keys.id(key);
        if new {
            self.values.push(T::default());
        }
        (id, &mut self.values[id as usize])
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

    /// Folds `other` in with `add`; returns other's ids as this one's.
    pub fn merge(&mut self, other: Keyed<T>, add: impl Fn(&mut T, T)) -> Vec<u32> {
        let mut remap = Vec::with_capacity(other.len());
        for (key, v) in other.keys.keys().zip(other.values) {
            let (id, slot) = self.slot(key);
            add(slot, v);
            remap.push(id);
        }
        remap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for len in [15, 16, 17, 31, 32, 33, 100] {
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
