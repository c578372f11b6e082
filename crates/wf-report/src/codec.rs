//! The byte layout of the report's counts ([`Acc`], and the [`Panels`] a
//! spill writes): each table's keys in id order (read back through the same
//! interning, so the ids are the same), the (row, visitor) pairs sorted and
//! written as deltas. Every id read back is checked against the table it
//! points into, so damaged bytes that pass the CRC are an error, never a
//! report that panics or lies.
//!
//! Why apart from `partial.rs`: two users, the `--state` partial state
//! (`partial.rs`, which knows the job) and the `--memory` spill (`spill.rs`,
//! which the job holds); in one file with the job's `Partial` impl they made
//! an import circle (job -> spill -> partial -> job).

use std::collections::HashSet;

use wf_core::jobs::partial::{Damage, Reader, Writer};

use crate::acc::{pair, unpair, Acc, AgentHits, Hb, Panels, ReqHits, Rows, Visitor};
use crate::intern::{hash_key, Keyed, AHEAD};
use crate::pairs::Pairs;

pub(crate) fn int(w: &mut Writer, v: i64) {
    w.uint(((v << 1) ^ (v >> 63)) as u64);
}

fn read_int(r: &mut Reader) -> Result<i64, Damage> {
    let u = r.uint()?;
    Ok((u >> 1) as i64 ^ -((u & 1) as i64))
}

pub(crate) fn hb(w: &mut Writer, h: Hb) {
    w.uint(h.hits);
    w.uint(h.bytes);
}

fn read_hb(r: &mut Reader) -> Result<Hb, Damage> {
    Ok(Hb {
        hits: r.uint()?,
        bytes: r.uint()?,
    })
}

/// A count of items, each at least one byte long: more than the bytes left
/// is damage (so no absurd allocation is made for it).
fn count(r: &mut Reader) -> Result<usize, Damage> {
    r.index(r.left() as u64)
}

pub(crate) fn write_acc(a: &Acc, w: &mut Writer) {
    for n in [
        a.lines,
        a.failed,
        a.skipped,
        a.excluded,
        a.hits,
        a.bytes,
        a.not_found_hits,
    ] {
        w.uint(n);
    }
    for t in [a.first, a.last] {
        w.uint(t.is_some() as u64);
        if let Some((utc, off)) = t {
            int(w, utc);
            int(w, off);
        }
    }
    write_panels(&a.panels, w);
}

/// The panels of an `Acc` (also a spill's partition, `spill`).
pub(crate) fn write_panels(p: &Panels, w: &mut Writer) {
    keyed(w, &p.clients, hb_of);
    keyed(w, &p.agents, agent_hits);
    w.uint(p.visitors.len() as u64);
    for v in &p.visitors.list {
        visitor(w, v, v.client, v.agent);
    }
    hours_and_codes(w, p);
    pairs(w, &p.status_pairs);
    rows(w, &p.requests, req_hits);
    rows(w, &p.referrers, hb_of);
    rows(w, &p.vhosts, hb_of);
}

/// The values of each table, as [`write_panels`] writes them (also for
/// a spill's sections, `spill::split`).
pub(crate) fn hb_of(w: &mut Writer, v: &Hb) {
    hb(w, *v);
}

pub(crate) fn agent_hits(w: &mut Writer, v: &AgentHits) {
    w.uint(v.all);
    hb(w, v.kept);
}

pub(crate) fn req_hits(w: &mut Writer, v: &ReqHits) {
    hb(w, v.ok);
    hb(w, v.not_found);
}

/// A visitor whose client and agent ids are `client` and `agent`.
pub(crate) fn visitor(w: &mut Writer, v: &Visitor, client: u32, agent: u32) {
    int(w, v.day());
    w.uint(client as u64);
    w.uint(agent as u64);
    w.uint(v.hours() as u64);
    w.uint(v.status());
}

/// Hits by hour and by status code.
pub(crate) fn hours_and_codes(w: &mut Writer, p: &Panels) {
    let mut hours: Vec<_> = p.hours().into_iter().collect();
    hours.sort_unstable_by_key(|h| h.0);
    w.uint(hours.len() as u64);
    for (h, v) in hours {
        int(w, h);
        hb(w, v);
    }
    let codes: Vec<_> = (0..p.status.len())
        .filter(|&c| p.status[c] != Hb::default())
        .collect();
    w.uint(codes.len() as u64);
    for c in codes {
        w.uint(c as u64);
        hb(w, p.status[c]);
    }
}

fn keyed<T>(w: &mut Writer, k: &Keyed<T>, each: impl Fn(&mut Writer, &T)) {
    w.uint(k.values.len() as u64);
    for (key, v) in k.keys.keys().zip(&k.values) {
        w.bytes(key);
        each(w, v);
    }
}

/// Sorted distinct pairs as deltas from the one before.
fn pairs(w: &mut Writer, p: &Pairs) {
    let v = p.sorted();
    w.uint(v.len() as u64);
    let mut d = Deltas::default();
    for &x in &v {
        d.put(w, x);
    }
}

/// Increasing pairs written as [`pairs`] writes them, after their count.
#[derive(Default)]
pub(crate) struct Deltas {
    last: u64,
}

impl Deltas {
    #[inline]
    pub(crate) fn put(&mut self, w: &mut Writer, x: u64) {
        w.uint(x - self.last);
        self.last = x;
    }
}

fn rows<T>(w: &mut Writer, r: &Rows<T>, each: impl Fn(&mut Writer, &T)) {
    keyed(w, &r.keyed, each);
    pairs(w, &r.pairs);
}

pub(crate) fn read_acc(r: &mut Reader) -> Result<Acc, Damage> {
    let mut a = Acc::default();
    for n in [
        &mut a.lines,
        &mut a.failed,
        &mut a.skipped,
        &mut a.excluded,
        &mut a.hits,
        &mut a.bytes,
        &mut a.not_found_hits,
    ] {
        *n = r.uint()?;
    }
    if a.failed > a.lines {
        return Err(Damage::Invalid("more failed lines than lines"));
    }
    for t in [&mut a.first, &mut a.last] {
        *t = match r.uint()? {
            0 => None,
            1 => Some((read_int(r)?, read_int(r)?)),
            _ => return Err(Damage::Invalid("a time flag not 0 or 1")),
        };
    }
    a.panels = read_panels(r)?;
    let agent_hits = a
        .panels
        .agents
        .values
        .iter()
        .try_fold(0u64, |n, h| n.checked_add(h.all));
    let valid = a.hits.checked_add(a.excluded);
    if !matches!((agent_hits, valid), (Some(x), Some(v)) if x <= v) {
        // Each valid request (kept or left out by --bots) counts its agent
        // once; the tally subtracts the bots' requests from the valid ones.
        return Err(Damage::Invalid("more agents' requests than requests"));
    }
    Ok(a)
}

/// What [`write_panels`] wrote, as a `Panels` of its own: every key and
/// visitor once, or it is damage.
pub(crate) fn read_panels(r: &mut Reader) -> Result<Panels, Damage> {
    let mut p = Panels::default();
    read_into(&mut p, r, true, None)?;
    Ok(p)
}

/// What [`write_panels`] wrote, folded into `p` as `Panels::merge` folds
/// (a spill's partition into its group, `spill`): each key interned once,
/// straight into `p`'s tables. Read into a `Panels` of their own and then
/// merged, a spill's keys and visitors were interned twice, and the
/// thread that reads the spill back was the end of the 10 GiB report's
/// critical path (perf: 4 of its last 6 s). `fresh`: `p` is new, and a
/// key or visitor read twice is damage. `shared`: the days whose visitors
/// `p` may have or be given again (`None`: every day); a visitor of
/// another day is listed without a table ([`Visitors::list_new`]), and `p`
/// is then only for a tally, never merged.
///
/// [`Visitors::list_new`]: crate::acc::Visitors::list_new
pub(crate) fn read_into(
    p: &mut Panels,
    r: &mut Reader,
    fresh: bool,
    shared: Option<&HashSet<i64>>,
) -> Result<(), Damage> {
    let clients = keyed_into(r, &mut p.clients, fresh, read_hb, Hb::plus)?;
    let agents = keyed_into(r, &mut p.agents, fresh, read_agent_hits, AgentHits::plus)?;
    let had = p.visitors.len() as u32;
    let visitors = visitors_into(r, p, (&clients, &agents), fresh, shared)?;
    let visitors = Read {
        ids: &visitors,
        had,
    };
    for _ in 0..count(r)? {
        let h = read_int(r)?;
        let hb = read_hb(r)?;
        let at = p.hourly.entry(h).or_default();
        if fresh && *at != Hb::default() {
            return Err(Damage::Invalid("an hour twice"));
        }
        at.plus(hb);
    }
    for _ in 0..count(r)? {
        let c = r.index(p.status.len() as u64 - 1)?;
        p.status[c].plus(read_hb(r)?);
    }
    pairs_into(r, &mut p.status_pairs, None, visitors, fresh)?;
    let add = ReqHits::plus;
    rows_into(r, &mut p.requests, visitors, fresh, read_req_hits, add)?;
    rows_into(r, &mut p.referrers, visitors, fresh, read_hb, Hb::plus)?;
    rows_into(r, &mut p.vhosts, visitors, fresh, read_hb, Hb::plus)
}

/// Visitors read and folded into `p`, their clients and agents the ids
/// of `ids`; their ids in `p`. Looked up [`AHEAD`] ahead of the one added,
/// so that their table slots and entries are loaded meanwhile (as the scan
/// does, `job`): the lookups of a spill's visitors in a group of partitions
/// were a cache miss or three each, a quarter of the reading back (perf).
/// Those of a day not `shared` are not looked up (see [`read_into`]).
fn visitors_into(
    r: &mut Reader,
    p: &mut Panels,
    (clients, agents): (&[u32], &[u32]),
    fresh: bool,
    shared: Option<&HashSet<i64>>,
) -> Result<Vec<u32>, Damage> {
    let n = count(r)?;
    let mut read = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n {
        let day = Visitor::day_of(read_int(r)?).ok_or(Damage::Invalid("a day out of range"))?;
        let (c, a) = (id_in(r, clients)?, id_in(r, agents)?);
        let mut v = Visitor::new(day, c, a);
        let (hours, status) = (r.index(u32::MAX as u64)? as u32, r.uint()?);
        if !v.mark(hours, status) {
            return Err(Damage::Invalid("a visitor's hours or codes"));
        }
        let looked_up = match last {
            Some((d, l)) if d == day => l,
            _ => shared.is_none_or(|s| s.contains(&day)),
        };
        last = Some((day, looked_up));
        read.push((v, looked_up.then(|| p.visitor_hash(&v))));
    }
    let mut ids = Vec::with_capacity(n);
    for (i, (v, hash)) in read.iter().enumerate() {
        if let Some((w, Some(h))) = read.get(i + AHEAD) {
            p.visitors.prefetch(w.day(), *h);
        }
        if let Some((w, Some(h))) = read.get(i + AHEAD / 2) {
            p.visitors.prefetch_entry(w.day(), *h);
        }
        let id = match hash {
            Some(hash) => p.visitors.id((v.day(), v.client, v.agent), *hash),
            None => p.visitors.list_new(*v),
        };
        if fresh && id as usize != i {
            return Err(Damage::Invalid("a visitor twice"));
        }
        p.visitors.list[id as usize].mark_as(v);
        ids.push(id);
    }
    Ok(ids)
}

fn read_agent_hits(r: &mut Reader) -> Result<AgentHits, Damage> {
    Ok(AgentHits {
        all: r.uint()?,
        kept: read_hb(r)?,
    })
}

fn read_req_hits(r: &mut Reader) -> Result<ReqHits, Damage> {
    Ok(ReqHits {
        ok: read_hb(r)?,
        not_found: read_hb(r)?,
    })
}

/// An id read from `r`, as one of `ids` (the ids in `p` of the keys read).
fn id_in(r: &mut Reader, ids: &[u32]) -> Result<u32, Damage> {
    let max = ids
        .len()
        .checked_sub(1)
        .ok_or(Damage::Invalid("an id of no key"))?;
    Ok(ids[r.index(max as u64)?])
}

/// Keys and their values folded into `k` with `add`; the keys' ids in `k`.
/// Looked up ahead as the visitors are ([`Keyed::prefetch_ahead`]).
fn keyed_into<T: Default>(
    r: &mut Reader,
    k: &mut Keyed<T>,
    fresh: bool,
    each: impl Fn(&mut Reader) -> Result<T, Damage>,
    add: impl Fn(&mut T, T),
) -> Result<Vec<u32>, Damage> {
    let n = count(r)?;
    let mut read = Vec::with_capacity(n);
    for _ in 0..n {
        let key = r.bytes()?;
        read.push((key, hash_key(key), each(r)?));
    }
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        k.prefetch_ahead(i, |j| read.get(j).map(|&(_, h, _)| h));
        let (key, hash, v) = std::mem::take(&mut read[i]);
        let (id, slot) = k.slot_hashed(key, hash);
        if fresh && id as usize != i {
            return Err(Damage::Invalid("a key twice"));
        }
        add(slot, v);
        ids.push(id);
    }
    Ok(ids)
}

/// The ids of the visitors read, and how many visitors there were before.
#[derive(Clone, Copy)]
struct Read<'a> {
    ids: &'a [u32],
    had: u32,
}

/// Pairs read (increasing, of rows read, or codes under 600 if `rows` is
/// `None`, and visitors read), renumbered and added to `p`; those of
/// visitors new to `p` kept apart, unsorted ([`Pairs::extend_merged`]).
fn pairs_into(
    r: &mut Reader,
    p: &mut Pairs,
    rows: Option<&[u32]>,
    read: Read<'_>,
    fresh: bool,
) -> Result<(), Damage> {
    let visitors = read.ids;
    let n = count(r)?;
    let mut v = Vec::with_capacity(n);
    let mut last = 0u64;
    let nrows = rows.map_or(600, |m| m.len() as u64);
    for i in 0..n {
        let d = r.uint()?;
        if i > 0 && d == 0 {
            return Err(Damage::Invalid("pairs not increasing"));
        }
        last = last
            .checked_add(d)
            .ok_or(Damage::Invalid("a pair past 64 bits"))?;
        let (row, vis) = unpair(last);
        if row as u64 >= nrows || vis as usize >= visitors.len() {
            return Err(Damage::Invalid("a pair of no row or no visitor"));
        }
        v.push(pair(
            rows.map_or(row, |m| m[row as usize]),
            visitors[vis as usize],
        ));
    }
    // Ids of a `Panels` of its own are those read: still increasing.
    if fresh {
        *p = Pairs::from_sorted(v);
        return Ok(());
    }
    p.extend_merged(v, read.had);
    Ok(())
}

fn rows_into<T: Default>(
    r: &mut Reader,
    rows: &mut Rows<T>,
    visitors: Read<'_>,
    fresh: bool,
    each: impl Fn(&mut Reader) -> Result<T, Damage>,
    add: impl Fn(&mut T, T),
) -> Result<(), Damage> {
    let ids = keyed_into(r, &mut rows.keyed, fresh, each, add)?;
    pairs_into(r, &mut rows.pairs, Some(&ids), visitors, fresh)
}
