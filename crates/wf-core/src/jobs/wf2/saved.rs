//! A saved state read back (`--state`, the Python package's partial states)
//! is kept as its encoded tables, not decoded into the tables a scan counts
//! into: the counts of a run are added to it as it is written again and as
//! its report is made, each a pass front to back over the saved keys.
//!
//! Why: the hourly `--state` run on the 10 GiB bench log (a 9.5 MB state of
//! 229 k keys, 1% of the log new: 60 k keys) spent 19% of its CPU decoding
//! the state into tables (every key copied into a 64-byte entry, hashed and
//! inserted; 18 k page faults in the run, 2.8 us each on this VM) and more
//! merging the scan's tables into them (perf, `incremental-2026-11-28d.txt`),
//! all for a state that is then read once, front to back, to be written and
//! reported. Here reading it is a check of its bytes and an index of its keys
//! (an offset a key, built while the scan runs); after the scan only this
//! run's keys are looked up, by the hashes their tables hold.
//!
//! The saved keys are distinct (a state is written from tables), so each key
//! comes out once: a saved key with this run's values added, then this run's
//! keys the state did not have.

use std::ops::Range;
use std::sync::Arc;

use hashbrown::HashTable;

use super::{key_hash, Table, UriVals};
use crate::jobs::partial::{Damage, Reader, Shared, Writer};

/// Values of a table's key, as a state holds them.
pub(super) trait Vals: bytemuck::Pod + Default {
    fn read(r: &mut Reader) -> Result<Self, Damage>;
    fn write(&self, w: &mut Writer);
    /// Adds `o`'s counts (the merge of two states' values of one key).
    fn add(&mut self, o: &Self);
}

impl Vals for UriVals {
    fn read(r: &mut Reader) -> Result<Self, Damage> {
        Ok(UriVals {
            bytes: r.uint()?,
            hits: r.uint()?,
            not_found: r.uint()?,
            recorded: r.index(1)? as u64,
        })
    }

    fn write(&self, w: &mut Writer) {
        for n in [self.bytes, self.hits, self.not_found, self.recorded] {
            w.uint(n);
        }
    }

    fn add(&mut self, o: &Self) {
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.hits += o.hits;
        self.not_found += o.not_found;
        self.recorded |= o.recorded;
    }
}

impl Vals for u64 {
    fn read(r: &mut Reader) -> Result<Self, Damage> {
        r.uint()
    }

    fn write(&self, w: &mut Writer) {
        w.uint(*self);
    }

    fn add(&mut self, o: &Self) {
        *self += *o;
    }
}

/// The uris', clients' and referrers' tables of a saved state, encoded.
pub(super) struct Saved {
    /// The bytes the tables are part of: the state's own (a `--state` file's,
    /// kept, not copied: a 9.5 MB copy is 2,300 page faults, 6.5 ms here) or
    /// a copy. Offsets below count from `base`.
    bytes: Shared,
    base: usize,
    /// Per table: its entries' bytes, and how many there are.
    tables: [(Range<usize>, u64); 3],
    /// Per table: the offset of each entry, by its key's hash (the hash of
    /// this process's tables, so that their stored hashes find saved keys).
    index: [HashTable<u64>; 3],
}

/// The tables' indices in [`Saved`].
pub(super) const URIS: usize = 0;
pub(super) const CLIENTS: usize = 1;
pub(super) const REFS: usize = 2;

const CHECKED: &str = "a saved table was checked when it was read";

impl Saved {
    /// Reads (and checks) the three tables as `write_state` wrote them: each
    /// its entry count, then per entry the key and the values; indexes their
    /// keys by `rs`'s hash.
    pub(super) fn read(r: &mut Reader, rs: &ahash::RandomState) -> Result<Saved, Damage> {
        let start = r.pos();
        let mut index: [HashTable<u64>; 3] = Default::default();
        let tables = [
            table::<UriVals>(r, start, rs, &mut index[URIS])?,
            table::<u64>(r, start, rs, &mut index[CLIENTS])?,
            table::<u64>(r, start, rs, &mut index[REFS])?,
        ];
        let (bytes, base) = match r.shared_since(start) {
            Some((bytes, range)) => (bytes, range.start),
            None => (Arc::new(r.since(start).to_vec()) as Shared, 0),
        };
        Ok(Saved {
            bytes,
            base,
            tables,
            index,
        })
    }

    /// The bytes the offsets count from.
    fn data(&self) -> &[u8] {
        &(*self.bytes).as_ref()[self.base..]
    }

    /// Bytes of the encoded tables.
    pub(super) fn len(&self) -> usize {
        self.tables.iter().map(|(r, _)| r.len()).sum()
    }

    /// Table `t`'s number of keys.
    pub(super) fn keys(&self, t: usize) -> u64 {
        self.tables[t].1
    }

    /// Table `t`'s entries in the order they were saved: each its offset,
    /// key and values.
    pub(super) fn entries<V: Vals>(&self, t: usize) -> impl Iterator<Item = (u64, &[u8], V)> {
        let (range, n) = &self.tables[t];
        let data = self.data();
        let mut r = Reader::new(&data[..range.end]);
        r.skip_to(range.start);
        (0..*n).map(move |_| {
            let at = r.pos() as u64;
            let k = r.bytes().expect(CHECKED);
            (at, k, V::read(&mut r).expect(CHECKED))
        })
    }

    /// Table `t`'s entry at `at`: its key, its values and where it ends.
    fn entry_at<V: Vals>(&self, t: usize, at: u64) -> (&[u8], V, usize) {
        let mut r = Reader::new(&self.data()[..self.tables[t].0.end]);
        r.skip_to(at as usize);
        let k = r.bytes().expect(CHECKED);
        let v = V::read(&mut r).expect(CHECKED);
        (k, v, r.pos())
    }

    /// The key of the entry at `at`.
    fn key(&self, at: u64) -> &[u8] {
        let mut r = Reader::new(&self.data()[at as usize..]);
        r.bytes().expect(CHECKED)
    }

    /// The offset of table `t`'s entry of `key` (hash `h`), if saved.
    fn find(&self, t: usize, h: u64, key: &[u8]) -> Option<u64> {
        self.index[t].find(h, |&at| self.key(at) == key).copied()
    }
}

/// One table's entries checked and indexed: their range (from `start`) and
/// count.
fn table<V: Vals>(
    r: &mut Reader,
    start: usize,
    rs: &ahash::RandomState,
    index: &mut HashTable<u64>,
) -> Result<(Range<usize>, u64), Damage> {
    let n = r.uint()?;
    // No more than its bytes can hold (two a key), whatever it says.
    index.reserve(n.min(r.left() as u64 / 2) as usize, |_| 0);
    let from = r.pos();
    for _ in 0..n {
        let at = (r.pos() - start) as u64;
        let k = r.bytes()?;
        V::read(r)?;
        // Room was made for all: the rehash closure is never called.
        index.insert_unique(key_hash(rs, k), at, |_| unreachable!("reserved"));
    }
    Ok((from - start..r.pos() - start, n))
}

/// Saved table `t` matched with a table of this process: the saved entries
/// that table also has (by offset, in order, with the table's entry), found
/// once for both the count and the pass.
#[derive(Default)]
pub(super) struct Matched {
    /// (saved entry's offset, delta's entry), by offset.
    pairs: Vec<(u64, u32)>,
    /// Per delta entry (by its first line): saved too.
    met: Vec<bool>,
    /// Keys of the two tables merged.
    pub(super) len: u64,
}

impl Matched {
    /// Finds each key of `delta` among saved table `t`'s, by the hash
    /// `delta` holds.
    pub(super) fn new<V: Vals>(saved: Option<&Saved>, t: usize, delta: &Table<V>) -> Self {
        let mut m = Matched {
            len: delta.len() as u64,
            ..Matched::default()
        };
        let Some(s) = saved else { return m };
        m.len += s.keys(t);
        if delta.is_empty() || s.keys(t) == 0 {
            return m;
        }
        m.met = vec![false; delta.lines.len()];
        for i in delta.entries() {
            let (h, k) = Table::<V>::entry(&delta.lines, i);
            if let Some(at) = s.find(t, h, k) {
                m.pairs.push((at, i));
                m.met[i as usize] = true;
                m.len -= 1;
            }
        }
        // By offset (distinct: a key is saved once); a radix sort took a
        // fifth of the comparison sort's 15 M instructions (60 k pairs).
        radsort::sort_by_key(&mut m.pairs, |p| p.0);
        m
    }
}

/// Every key of saved table `t` and of `delta` once (as `m` matched them),
/// with its values added: the saved keys in their order, then the delta's
/// other keys.
pub(super) fn merged<'a, V: Vals>(
    saved: Option<&'a Saved>,
    t: usize,
    delta: &'a Table<V>,
    m: &'a Matched,
) -> impl Iterator<Item = (&'a [u8], V)> + 'a {
    let lines = &delta.lines;
    let mut pairs = m.pairs.iter().peekable();
    let old = saved.into_iter().flat_map(move |s| s.entries::<V>(t));
    let old = old.map(move |(at, k, mut v)| {
        if let Some(&(_, i)) = pairs.next_if(|p| p.0 == at) {
            v.add(Table::<V>::vals(lines, i));
        }
        (k, v)
    });
    old.chain(fresh(delta, m))
}

/// The keys of `delta` that `m` did not find saved, with their values.
fn fresh<'a, V: Vals>(
    delta: &'a Table<V>,
    m: &'a Matched,
) -> impl Iterator<Item = (&'a [u8], V)> + 'a {
    let lines = &delta.lines;
    let met = |i: u32| m.met.get(i as usize).copied().unwrap_or(false);
    let new = delta.entries().filter(move |&i| !met(i));
    new.map(move |i| (Table::<V>::entry(lines, i).1, *Table::<V>::vals(lines, i)))
}

/// Writes table `t` (saved and `delta` merged, as `m` matched them) as
/// `write_state` does: its key count, then each key and its values. The
/// saved entries this run did not count are copied as they are, a run of
/// them at a time: decoding and encoding each of a 10 GiB log's 229 k saved
/// keys was 25 ms of the hourly run's 136 (timing prints), where 1% of new
/// log touches 60 k keys. The bytes are those of [`merged`] written one by
/// one (test `saved_tables_merge_as_decoded_ones`).
pub(super) fn write<V: Vals>(
    w: &mut Writer,
    saved: Option<&Saved>,
    t: usize,
    delta: &Table<V>,
    m: &Matched,
) {
    w.uint(m.len);
    if let Some(s) = saved {
        let (range, _) = &s.tables[t];
        let data = &s.data()[..range.end];
        let mut from = range.start;
        for &(at, i) in &m.pairs {
            w.raw(&data[from..at as usize]);
            let (k, mut v, end) = s.entry_at::<V>(t, at);
            v.add(Table::<V>::vals(&delta.lines, i));
            put(w, k, &v);
            from = end;
        }
        w.raw(&data[from..]);
    }
    for (k, v) in fresh(delta, m) {
        put(w, k, &v);
    }
}

/// One entry as a state holds it: the key, then its values.
fn put<V: Vals>(w: &mut Writer, k: &[u8], v: &V) {
    w.bytes(k);
    v.write(w);
}

/// [`write`] as every key of [`merged`], one by one: the reference.
#[cfg(test)]
pub(super) fn write_each<V: Vals>(
    w: &mut Writer,
    saved: Option<&Saved>,
    t: usize,
    delta: &Table<V>,
    m: &Matched,
) {
    w.uint(m.len);
    for (k, v) in merged(saved, t, delta, m) {
        put(w, k, &v);
    }
}

/// Adds every key of `saved` to the tables (two states that were both read
/// back, merged: the Python package's `merge` of several; rare).
pub(super) fn absorb(
    saved: &Saved,
    tables: (&mut Table<UriVals>, &mut Table<u64>, &mut Table<u64>),
    hash: impl Fn(&[u8]) -> u64,
) {
    let (uris, clients, refs) = tables;
    uris.reserve(saved.keys(URIS) as usize, saved.len());
    for (_, k, v) in saved.entries::<UriVals>(URIS) {
        uris.get(hash(k), k).add(&v);
    }
    for (t, table) in [(CLIENTS, clients), (REFS, refs)] {
        table.reserve(saved.keys(t) as usize, saved.len());
        for (_, k, v) in saved.entries::<u64>(t) {
            table.get(hash(k), k).add(&v);
        }
    }
}
