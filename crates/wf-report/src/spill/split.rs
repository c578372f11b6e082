//! A worker's counts cut into a spill's partitions, each written as the
//! bytes of a [`Panels`] (`codec::read_into` reads it back) straight from
//! the worker's tables: no partition is built as a `Panels` first.
//!
//! Why so: a partition's ids are ranks. Its clients, visitors and rows are
//! written in the worker's id order, so each one's id in the partition is
//! the count of the partition's before it, and the worker's sorted (row,
//! visitor) pairs stay sorted once renumbered: they are grouped by
//! partition in one counting sort and written, never interned, sorted or
//! deduplicated again. Each partition is then written from its own
//! entries only. Building each partition as a `Panels` (every key hashed
//! into new tables, the pairs sorted again, eight partitions a pass over
//! the worker's counts) was 15% of the 10 GiB bench log's report CPU
//! (perf, 8 spills of 1.6 M visitors and 6.5 M pairs, about 0.9 s each);
//! passes writing eight partitions each without a `Panels` were no faster
//! (a visitor's partition looked up at random 16 times a pair).

use wf_core::jobs::partial::Writer;

use crate::acc::{pair, unpair, Hb, Panels, ReqHits, Visitor};
use crate::codec::{self, Deltas};
use crate::intern::{hash_key, prefetch, Interner, Keyed};
use crate::pairs::Pairs;

use super::PARTS;

/// An agent not (yet) in the partition being written.
const NONE: u32 = u32::MAX;

/// Visitors loaded ahead of the one written (`Split::visitors_of`).
const AHEAD: usize = 16;

/// The partition of a key (the same in every thread).
pub(crate) fn part_of(key: &[u8]) -> u8 {
    part_of_hash(hash_key(key))
}

/// The partition of a key of hash `h` ([`hash_key`]'s, as interned):
/// from its low bits, as the tables' slots are from its high half
/// (`intern::home`): a partition's keys alike in the bits of their slots
/// would crowd a part of every table they go into (the 10 GiB report took
/// 1.7x its time with partitions from bits 40 to 45).
fn part_of_hash(h: u64) -> u8 {
    (h % PARTS as u64) as u8
}

/// Keys of `i`, with their partitions.
fn parts_of(i: &Interner) -> Vec<u8> {
    (0..i.len() as u32)
        .map(|id| part_of_hash(i.hash_of(id)))
        .collect()
}

/// Where each partition's entries start when grouped by partition (of
/// `parts`, an entry's), and where the last ends.
fn starts(parts: &[u8]) -> [usize; PARTS + 1] {
    let mut starts = [0; PARTS + 1];
    for &q in parts {
        starts[q as usize + 1] += 1;
    }
    for q in 0..PARTS {
        starts[q + 1] += starts[q];
    }
    starts
}

/// The ids of a table grouped by partition, in id order within each (a
/// counting sort).
struct Grouped {
    part: Vec<u8>,
    ids: Vec<u32>,
    /// Partition `q`'s ids are `ids[starts[q]..starts[q + 1]]`.
    starts: [usize; PARTS + 1],
}

impl Grouped {
    fn of(part: Vec<u8>) -> Grouped {
        let starts = starts(&part);
        let mut next = starts;
        let mut ids = vec![0; part.len()];
        for (i, &q) in part.iter().enumerate() {
            ids[next[q as usize]] = i as u32;
            next[q as usize] += 1;
        }
        Grouped { part, ids, starts }
    }

    fn ids(&self, q: usize) -> &[u32] {
        &self.ids[self.starts[q]..self.starts[q + 1]]
    }
}

/// A table grouped by partition ([`Grouped`]), with each id's rank in its
/// partition: its id there (clients and visitors; rows are ranked as
/// they are written, with the rows of their pairs).
struct Ranked {
    grouped: Grouped,
    rank: Vec<u32>,
}

impl Ranked {
    fn of(part: Vec<u8>) -> Ranked {
        let grouped = Grouped::of(part);
        let mut rank = vec![0; grouped.ids.len()];
        for q in 0..PARTS {
            for (r, &i) in grouped.ids(q).iter().enumerate() {
                rank[i as usize] = r as u32;
            }
        }
        Ranked { grouped, rank }
    }

    fn part(&self, i: u32) -> u8 {
        self.grouped.part[i as usize]
    }

    fn ids(&self, q: usize) -> &[u32] {
        self.grouped.ids(q)
    }
}

/// (row, visitor) pairs grouped by their visitor's partition, the visitor
/// as its rank there: each partition's in row order, then visitor order.
struct Bucketed {
    pairs: Vec<u64>,
    starts: [usize; PARTS + 1],
}

impl Bucketed {
    /// `pairs` (sorted) grouped by the partitions of `vis`.
    fn of(pairs: Pairs, vis: &Ranked) -> Bucketed {
        let pairs = pairs.into_sorted();
        let parts: Vec<u8> = (pairs.iter()).map(|&p| vis.part(unpair(p).1)).collect();
        let starts = starts(&parts);
        let mut next = starts;
        let mut out = vec![0; pairs.len()];
        for (p, q) in pairs.into_iter().zip(parts) {
            let (row, v) = unpair(p);
            out[next[q as usize]] = pair(row, vis.rank[v as usize]);
            next[q as usize] += 1;
        }
        Bucketed { pairs: out, starts }
    }

    fn part(&self, q: usize) -> &[u64] {
        &self.pairs[self.starts[q]..self.starts[q + 1]]
    }

    /// The pairs as they were before [`Bucketed::of`].
    fn unbucket(&self, vis: &Ranked) -> Pairs {
        let mut out = Pairs::default();
        for q in 0..PARTS {
            let ids = vis.ids(q);
            out.extend(self.part(q).iter().map(|&p| {
                let (row, v) = unpair(p);
                pair(row, ids[v as usize])
            }));
        }
        out.compact();
        out
    }
}

/// Rows of a panel, each partition's with its pairs.
struct RowsSplit<'a, T> {
    keyed: &'a Keyed<T>,
    own: Grouped,
    pairs: Bucketed,
}

impl<'a, T> RowsSplit<'a, T> {
    fn of(keyed: &'a Keyed<T>, pairs: Pairs, vis: &Ranked) -> Self {
        RowsSplit {
            own: Grouped::of(parts_of(&keyed.keys)),
            pairs: Bucketed::of(pairs, vis),
            keyed,
        }
    }
}

/// A worker's counts, cut (see the module comment).
pub(super) struct Split<'a> {
    p: &'a Panels,
    clients: Ranked,
    visitors: Ranked,
    status_pairs: Bucketed,
    requests: RowsSplit<'a, ReqHits>,
    referrers: RowsSplit<'a, Hb>,
    vhosts: RowsSplit<'a, Hb>,
    /// Each agent's rank in the partition being written, or `NONE`.
    agent_rank: Vec<u32>,
    /// The buffer of a panel's pairs ([`rows`]), kept for the next.
    pairs_bytes: Vec<u8>,
}

impl<'a> Split<'a> {
    /// Cuts `p`, whose pairs must be compacted (`Panels::finish`); its
    /// pairs are moved out.
    pub(super) fn of(p: &'a mut Panels) -> Split<'a> {
        let take = std::mem::take::<Pairs>;
        let status = take(&mut p.status_pairs);
        let (requests, referrers) = (take(&mut p.requests.pairs), take(&mut p.referrers.pairs));
        let vhosts = take(&mut p.vhosts.pairs);
        let p: &'a Panels = p;
        let clients = Ranked::of(parts_of(&p.clients.keys));
        let visitors = (p.visitors.list.iter())
            .map(|v| clients.part(v.client))
            .collect();
        let visitors = Ranked::of(visitors);
        Split {
            status_pairs: Bucketed::of(status, &visitors),
            requests: RowsSplit::of(&p.requests.keyed, requests, &visitors),
            referrers: RowsSplit::of(&p.referrers.keyed, referrers, &visitors),
            vhosts: RowsSplit::of(&p.vhosts.keyed, vhosts, &visitors),
            agent_rank: vec![NONE; p.agents.len()],
            pairs_bytes: Vec::new(),
            p,
            clients,
            visitors,
        }
    }

    /// The bytes of partition `q`, appended to `buf` (a buffer kept from
    /// section to section: see `Writer::appending`).
    pub(super) fn section(&mut self, q: usize, buf: Vec<u8>) -> Vec<u8> {
        let (p, mut w) = (self.p, Writer::appending(buf));
        w.uint(self.clients.ids(q).len() as u64);
        for &i in self.clients.ids(q) {
            w.bytes(p.clients.keys.get(i));
            codec::hb(&mut w, p.clients.values[i as usize]);
        }
        let agents = self.agents(&mut w, q);
        w.uint(self.visitors.ids(q).len() as u64);
        for v in visitors_of(&self.visitors, &p.visitors.list, q) {
            let client = self.clients.rank[v.client as usize];
            codec::visitor(&mut w, v, client, self.agent_rank[v.agent as usize]);
        }
        for a in agents {
            self.agent_rank[a as usize] = NONE;
        }
        if q == 0 {
            codec::hours_and_codes(&mut w, p);
        } else {
            w.uint(0); // no hours
            w.uint(0); // no status codes
        }
        let status = self.status_pairs.part(q);
        w.uint(status.len() as u64);
        let mut d = Deltas::default();
        for &pr in status {
            d.put(&mut w, pr);
        }
        let pairs = &mut self.pairs_bytes;
        rows(&mut w, (&self.requests, q), codec::req_hits, pairs);
        rows(&mut w, (&self.referrers, q), codec::hb_of, pairs);
        rows(&mut w, (&self.vhosts, q), codec::hb_of, pairs);
        w.into_bytes()
    }

    /// The pairs moved out by [`Split::of`], as they were (status codes',
    /// requests', referrers', virtual hosts'): for a spill that could not
    /// be written, whose counts stay in memory.
    pub(super) fn give_back(self) -> [Pairs; 4] {
        let vis = &self.visitors;
        [
            self.status_pairs.unbucket(vis),
            self.requests.pairs.unbucket(vis),
            self.referrers.pairs.unbucket(vis),
            self.vhosts.pairs.unbucket(vis),
        ]
    }

    /// Writes partition `q`'s agents: those whose hits go there (by id, as
    /// `PARTS` agents are few), and with no hits those of its visitors;
    /// ranks them in `agent_rank` and returns them.
    fn agents(&mut self, w: &mut Writer, q: usize) -> Vec<u32> {
        let (p, rank) = (self.p, &mut self.agent_rank);
        let own = (q..p.agents.len()).step_by(PARTS).map(|i| i as u32);
        let of_visitors = visitors_of(&self.visitors, &p.visitors.list, q).map(|v| v.agent);
        let mut ids = Vec::new();
        for a in own.chain(of_visitors) {
            if rank[a as usize] == NONE {
                rank[a as usize] = 0;
                ids.push(a);
            }
        }
        ids.sort_unstable();
        w.uint(ids.len() as u64);
        for (rank, &i) in ids.iter().enumerate() {
            self.agent_rank[i as usize] = rank as u32;
            w.bytes(p.agents.keys.get(i));
            let own = i as usize % PARTS == q;
            codec::agent_hits(
                w,
                &if own {
                    p.agents.values[i as usize]
                } else {
                    Default::default()
                },
            );
        }
        ids
    }
}

/// Partition `q`'s visitors (of `vis`, in `list`) in id order, each
/// loaded [`AHEAD`] before it is read: they lie apart in the list (a
/// partition's share), and were a cache miss each, half of the sections'
/// time (perf).
fn visitors_of<'v>(
    vis: &'v Ranked,
    list: &'v [Visitor],
    q: usize,
) -> impl Iterator<Item = &'v Visitor> + 'v {
    let ids = vis.ids(q);
    ids.iter().enumerate().map(move |(j, &i)| {
        if let Some(&ahead) = ids.get(j + AHEAD) {
            prefetch(list.as_ptr().wrapping_add(ahead as usize));
        }
        &list[i as usize]
    })
}

/// Writes partition `q`'s rows of a panel and their pairs: a row once in
/// each partition of its hits or of its visitors, its hits only in its
/// own partition. The pairs go through `buf` (kept for the next).
fn rows<T: Copy + Default>(
    w: &mut Writer,
    (r, q): (&RowsSplit<'_, T>, usize),
    each: impl Fn(&mut Writer, &T),
    buf: &mut Vec<u8>,
) {
    let (own, pairs) = (r.own.ids(q), r.pairs.part(q));
    w.uint(Merged::new(own, pairs).count() as u64);
    let mut pw = Writer::appending(std::mem::take(buf));
    pw.uint(pairs.len() as u64);
    let mut d = Deltas::default();
    for (rank, (row, hits, its)) in Merged::new(own, pairs).enumerate() {
        w.bytes(r.keyed.keys.get(row));
        each(
            w,
            &if hits {
                r.keyed.values[row as usize]
            } else {
                T::default()
            },
        );
        for &pr in its {
            d.put(&mut pw, pair(rank as u32, unpair(pr).1));
        }
    }
    *buf = pw.into_bytes();
    w.raw(buf);
    buf.clear();
}

/// The rows of a partition in row order: its own (`own`, sorted) and those
/// of its pairs (sorted by row), each once: (row, whether its hits are
/// here, its pairs).
struct Merged<'a> {
    own: &'a [u32],
    pairs: &'a [u64],
}

impl<'a> Merged<'a> {
    fn new(own: &'a [u32], pairs: &'a [u64]) -> Self {
        Merged { own, pairs }
    }
}

impl<'a> Iterator for Merged<'a> {
    type Item = (u32, bool, &'a [u64]);

    fn next(&mut self) -> Option<Self::Item> {
        let of_pair = self.pairs.first().map(|&p| unpair(p).0);
        let row = match (self.own.first(), of_pair) {
            (None, None) => return None,
            (Some(&a), b) => b.map_or(a, |b| a.min(b)),
            (None, Some(b)) => b,
        };
        let hits = self.own.first() == Some(&row);
        if hits {
            self.own = &self.own[1..];
        }
        // A row's pairs in a partition are few: a scan, not a search (the
        // search was 12% of the sections' time).
        let n = (self.pairs.iter())
            .position(|&p| unpair(p).0 != row)
            .unwrap_or(self.pairs.len());
        let its;
        (its, self.pairs) = self.pairs.split_at(n);
        Some((row, hits, its))
    }
}

#[cfg(test)]
mod tests {
    use wf_core::jobs::partial::Reader;

    use super::*;
    use crate::acc::{Hashes, Line};
    use crate::codec::{read_panels, write_panels};

    /// Counts of `n` lines of many clients, agents, codes and rows.
    fn panels(n: u32) -> Panels {
        lines(0..n)
    }

    /// Counts of lines `is` (see [`panels`]).
    fn lines(is: std::ops::Range<u32>) -> Panels {
        let mut p = Panels::default();
        for i in is {
            let client = format!("10.0.{}.{}", i % 7, i % 251);
            let agent = format!("agent {}", i % 71);
            let request = format!("GET /{} HTTP/1.1", i % 97);
            let referrer = format!("http://r{}/", i % 13);
            let l = Line {
                client: client.as_bytes(),
                request: request.as_bytes(),
                status: [200, 299, 404, 304, 599][i as usize % 5],
                bytes: i as u64,
                hour: 24 * 1000 + (i % 50) as i64,
                referrer: Some(referrer.as_bytes()),
                vhost: Some(b"v"),
            };
            let (a, _) = p.agents.slot(agent.as_bytes());
            p.count(&l, &Hashes::of(&l, agent.as_bytes()), a);
        }
        p.finish();
        p
    }

    fn bytes(p: &Panels) -> Vec<u8> {
        let mut w = Writer::new();
        write_panels(p, &mut w);
        w.into_bytes()
    }

    #[test]
    fn pairs_given_back_are_those_taken() {
        let mut p = panels(20_000);
        let want = bytes(&p);
        let mut split = Split::of(&mut p);
        let _ = split.section(3, Vec::new());
        [
            p.status_pairs,
            p.requests.pairs,
            p.referrers.pairs,
            p.vhosts.pairs,
        ] = split.give_back();
        assert!(p.requests.pairs.len() > 1000);
        assert_eq!(bytes(&p), want);
    }

    /// Every section reads back; each client, visitor and pair is in one,
    /// each row's and agent's hits in one.
    #[test]
    fn sections_share_the_counts_out() {
        sections_share_out(panels(20_000));
    }

    /// The same of a merge, whose pairs of visitors new to it were kept
    /// apart, unsorted (`Pairs::extend_merged`): a section's rows and pairs
    /// are still in order, each row once.
    #[test]
    fn sections_of_a_merge_share_its_counts_out() {
        let mut p = lines(0..20_000);
        p.merge(lines(13_000..40_000));
        p.finish();
        sections_share_out(p);
    }

    fn sections_share_out(mut p: Panels) {
        let n = |p: &Panels| {
            [
                p.clients.len(),
                p.visitors.len(),
                p.status_pairs.len(),
                p.requests.pairs.len(),
                p.referrers.pairs.len(),
                p.vhosts.pairs.len(),
            ]
        };
        let hits = |p: &Panels| {
            let req: u64 = p.requests.keyed.values.iter().map(|v| v.ok.hits).sum();
            let agents: u64 = p.agents.values.iter().map(|v| v.kept.hits).sum();
            [req, agents, p.status.iter().map(|h| h.hits).sum()]
        };
        let (want, want_hits) = (n(&p), hits(&p));
        let mut split = Split::of(&mut p);
        let (mut got, mut got_hits) = ([0; 6], [0; 3]);
        for q in 0..PARTS {
            let s = read_panels(&mut Reader::new(&split.section(q, Vec::new()))).unwrap();
            for (g, x) in got.iter_mut().zip(n(&s)) {
                *g += x;
            }
            for (g, x) in got_hits.iter_mut().zip(hits(&s)) {
                *g += x;
            }
        }
        assert_eq!(got, want);
        assert_eq!(got_hits, want_hits);
    }
}
