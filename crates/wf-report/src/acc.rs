//! The report's counts, one [`Acc`] per worker thread, merged at the end.
//!
//! Unique visitors are exact: a visitor is the bytes of (day, client, agent)
//! (GoAccess's rule), interned per thread to a `u32`, and every panel row keeps
//! the set of its visitors' ids. Ids are a thread's own, so [`Acc::merge`]
//! first interns the other thread's visitor keys into this one and renumbers
//! the other's sets: the merge is a union of sets of the keys themselves,
//! associative and the same whatever the thread count or chunk size. Nothing
//! is an estimate; the price is memory (every distinct visitor key once per
//! thread, and four bytes per (row, visitor) pair): spilling, as the issue asks
//! for logs of tens of millions of clients, is not done yet.

use hashbrown::{HashMap, HashSet};
use std::hash::Hash;

/// The hits, bytes and visitors of one panel row.
#[derive(Debug, Default, Clone)]
pub struct Row {
    pub hits: u64,
    pub bytes: u64,
    pub visitors: HashSet<u32>,
}

impl Row {
    fn add(&mut self, bytes: u64, visitor: Option<u32>) {
        self.hits += 1;
        self.bytes += bytes;
        if let Some(v) = visitor {
            self.visitors.insert(v);
        }
    }
}

/// A panel: rows by key.
pub type Table<K> = HashMap<K, Row>;

/// A request's key: method, protocol and URL as [`req_key`] writes them.
pub type ReqKey = Box<[u8]>;

/// A two-level panel's key (OS family and version, bot kind and name): the
/// two joined by [`PAIR_SEP`], so that a row is found with a reused buffer.
pub type Pair = Box<str>;

pub const PAIR_SEP: char = '\u{1}';

/// Writes a request's key into `buf`: method, NUL, protocol, NUL, URL.
pub fn req_key(buf: &mut Vec<u8>, method: &str, protocol: &str, url: &[u8]) {
    buf.clear();
    buf.extend_from_slice(method.as_bytes());
    buf.push(0);
    buf.extend_from_slice(protocol.as_bytes());
    buf.push(0);
    buf.extend_from_slice(url);
}

/// (method, protocol, URL) of a [`req_key`].
pub fn split_req_key(k: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let mut it = k.splitn(3, |&c| c == 0);
    let m = it.next().unwrap_or(b"");
    let p = it.next().unwrap_or(b"");
    (m, p, it.next().unwrap_or(b""))
}

/// Writes a visitor's key into `buf`: the day, the client's length and
/// bytes, the agent's bytes.
pub fn visitor_key(buf: &mut Vec<u8>, day: i64, client: &[u8], agent: &[u8]) {
    buf.clear();
    buf.extend_from_slice(&day.to_le_bytes());
    buf.extend_from_slice(&(client.len() as u32).to_le_bytes());
    buf.extend_from_slice(client);
    buf.extend_from_slice(agent);
}

/// (day, client, agent) of a [`visitor_key`].
pub fn split_visitor_key(k: &[u8]) -> (i64, &[u8], &[u8]) {
    let day = i64::from_le_bytes(k[..8].try_into().expect("8 bytes"));
    let n = u32::from_le_bytes(k[8..12].try_into().expect("4 bytes")) as usize;
    (day, &k[12..12 + n], &k[12 + n..])
}

/// Writes a [`Pair`] into `buf`.
pub fn pair(buf: &mut String, group: &str, item: &str) {
    buf.clear();
    buf.push_str(group);
    buf.push(PAIR_SEP);
    buf.push_str(item);
}

/// Every panel of the report. The rows of `days`, `hosts`, `os`, `browsers`
/// and `bots` keep no visitor sets: a visitor key holds its day, client and
/// agent, so their visitors are counted from the keys once at the end
/// (`report::Derived`), which saved five set insertions per line.
#[derive(Debug, Default)]
pub struct Panels {
    /// Day number (days since 1970-01-01, in the log's own zone); `i64::MIN`
    /// for a format without time.
    pub days: Table<i64>,
    pub hours: Table<u8>,
    pub requests: Table<ReqKey>,
    pub static_requests: Table<ReqKey>,
    pub not_found: Table<ReqKey>,
    pub extensions: Table<&'static str>,
    pub hosts: Table<Box<[u8]>>,
    pub os: Table<Pair>,
    pub browsers: Table<Pair>,
    pub bots: Table<Pair>,
    pub status: Table<u16>,
    pub referring_sites: Table<Box<[u8]>>,
    pub referrers: Table<Box<[u8]>>,
    pub vhosts: Table<Box<[u8]>>,
}

/// The counts of one thread, or of all once merged.
#[derive(Debug, Default)]
pub struct Acc {
    /// Visitor key -> this Acc's id for it.
    pub visitors: HashMap<Box<[u8]>, u32>,
    /// Records read (not blank, not `#` comments).
    pub lines: u64,
    /// Records the format could not read, or without a valid time or status.
    pub failed: u64,
    /// Blank lines and `#` comments, skipped as GoAccess skips them.
    pub skipped: u64,
    /// Valid requests left out by `--bots`.
    pub excluded: u64,
    pub human: u64,
    pub bot: u64,
    /// Valid requests counted in the panels.
    pub hits: u64,
    pub bytes: u64,
    /// Requests with status 404.
    pub not_found_hits: u64,
    /// First and last time (UTC microseconds) and the first's and last's
    /// offsets from UTC in seconds.
    pub first: Option<(i64, i64)>,
    pub last: Option<(i64, i64)>,
    /// The first few failed records: (input, byte offset), smallest first.
    pub failed_at: Vec<(usize, u64)>,
    pub panels: Panels,
}

/// How many failed records are named by offset.
pub const FAILED_SHOWN: usize = 5;

impl Acc {
    /// The id of a visitor key, interned.
    pub fn visitor(&mut self, key: &[u8]) -> u32 {
        let next = self.visitors.len() as u32;
        *self.visitors.entry_ref(key).or_insert(next)
    }

    pub fn fail(&mut self, input: usize, offset: u64) {
        self.failed += 1;
        note_failed(&mut self.failed_at, (input, offset));
    }

    pub fn time(&mut self, utc: i64, offset: i64) {
        if self.first.is_none_or(|(t, _)| utc < t) {
            self.first = Some((utc, offset));
        }
        if self.last.is_none_or(|(t, _)| utc > t) {
            self.last = Some((utc, offset));
        }
    }

    /// Fold `other` into `self` (see the module comment).
    pub fn merge(&mut self, other: Acc) {
        let mut remap = vec![0u32; other.visitors.len()];
        for (key, id) in other.visitors {
            remap[id as usize] = self.visitor(&key);
        }
        self.lines += other.lines;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.excluded += other.excluded;
        self.human += other.human;
        self.bot += other.bot;
        self.hits += other.hits;
        self.bytes += other.bytes;
        self.not_found_hits += other.not_found_hits;
        for (t, o) in [other.first, other.last].into_iter().flatten() {
            self.time(t, o);
        }
        for at in other.failed_at {
            note_failed(&mut self.failed_at, at);
        }
        self.panels.merge(other.panels, &remap);
    }
}

/// Keeps the `FAILED_SHOWN` smallest positions: the same whatever the chunking.
fn note_failed(list: &mut Vec<(usize, u64)>, at: (usize, u64)) {
    if list.len() == FAILED_SHOWN && list.last().is_some_and(|&l| l < at) {
        return;
    }
    let i = list.partition_point(|&x| x < at);
    list.insert(i, at);
    list.truncate(FAILED_SHOWN);
}

impl Panels {
    fn merge(&mut self, o: Panels, remap: &[u32]) {
        merge_table(&mut self.days, o.days, remap);
        merge_table(&mut self.hours, o.hours, remap);
        merge_table(&mut self.requests, o.requests, remap);
        merge_table(&mut self.static_requests, o.static_requests, remap);
        merge_table(&mut self.not_found, o.not_found, remap);
        merge_table(&mut self.extensions, o.extensions, remap);
        merge_table(&mut self.hosts, o.hosts, remap);
        merge_table(&mut self.os, o.os, remap);
        merge_table(&mut self.browsers, o.browsers, remap);
        merge_table(&mut self.bots, o.bots, remap);
        merge_table(&mut self.status, o.status, remap);
        merge_table(&mut self.referring_sites, o.referring_sites, remap);
        merge_table(&mut self.referrers, o.referrers, remap);
        merge_table(&mut self.vhosts, o.vhosts, remap);
    }
}

fn merge_table<K: Hash + Eq>(into: &mut Table<K>, other: Table<K>, remap: &[u32]) {
    for (k, row) in other {
        let r = into.entry(k).or_default();
        r.hits += row.hits;
        r.bytes += row.bytes;
        r.visitors
            .extend(row.visitors.into_iter().map(|v| remap[v as usize]));
    }
}

/// Adds one hit to the row `key` of `table`.
pub fn add<K: Hash + Eq>(table: &mut Table<K>, key: K, bytes: u64, visitor: Option<u32>) {
    table.entry(key).or_default().add(bytes, visitor);
}

/// As [`add`] for a borrowed byte key, copied only when the row is new.
pub fn add_bytes(table: &mut Table<Box<[u8]>>, key: &[u8], bytes: u64, visitor: Option<u32>) {
    table.entry_ref(key).or_default().add(bytes, visitor);
}

/// As [`add_bytes`] for a text key.
pub fn add_str(table: &mut Table<Box<str>>, key: &str, bytes: u64, visitor: Option<u32>) {
    table.entry_ref(key).or_default().add(bytes, visitor);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_renumbers_visitors_and_keeps_the_first_failures() {
        let mut a = Acc::default();
        let va = a.visitor(b"x");
        add(&mut a.panels.hours, 1, 10, Some(va));
        let mut b = Acc::default();
        let vb = b.visitor(b"y");
        let vx = b.visitor(b"x");
        add(&mut b.panels.hours, 1, 5, Some(vb));
        add(&mut b.panels.hours, 1, 5, Some(vx));
        for i in 0..7 {
            b.fail(0, 100 - i);
        }
        a.fail(0, 1);
        a.merge(b);
        let row = &a.panels.hours[&1];
        assert_eq!((row.hits, row.bytes, row.visitors.len()), (3, 20, 2));
        assert_eq!(a.visitors.len(), 2);
        assert_eq!(a.failed, 8);
        assert_eq!(
            a.failed_at,
            vec![(0, 1), (0, 94), (0, 95), (0, 96), (0, 97)]
        );
    }
}
