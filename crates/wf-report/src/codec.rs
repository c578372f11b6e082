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

use wf_core::jobs::partial::{Damage, Reader, Writer};

use crate::acc::{unpair, Acc, AgentHits, Hb, Panels, ReqHits, Rows, Visitor};
use crate::intern::Keyed;
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
    int(w, v.day);
    w.uint(client as u64);
    w.uint(agent as u64);
    w.uint(v.hours as u64);
    w.uint(v.status);
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

/// What [`write_panels`] wrote.
pub(crate) fn read_panels(r: &mut Reader) -> Result<Panels, Damage> {
    let mut panels = Panels::default();
    let p = &mut panels;
    p.clients = read_keyed(r, read_hb)?;
    p.agents = read_keyed(r, |r| {
        Ok(AgentHits {
            all: r.uint()?,
            kept: read_hb(r)?,
        })
    })?;
    let (nc, na) = (p.clients.len() as u64, p.agents.len() as u64);
    for i in 0..count(r)? {
        let v = Visitor {
            day: read_int(r)?,
            client: r.index(nc.saturating_sub(1))? as u32,
            agent: r.index(na.saturating_sub(1))? as u32,
            hours: r.index(u32::MAX as u64)? as u32,
            status: r.uint()?,
            tag: 0, // made by `visitor_of`
        };
        if nc == 0 || na == 0 || p.visitor_of((v.day, v.client, v.agent)) as usize != i {
            return Err(Damage::Invalid("a visitor twice, or of no client"));
        }
        let s = &mut p.visitors.list[i];
        (s.hours, s.status) = (v.hours, v.status);
    }
    for _ in 0..count(r)? {
        let h = read_int(r)?;
        if p.hourly.insert(h, read_hb(r)?).is_some() {
            return Err(Damage::Invalid("an hour twice"));
        }
    }
    for _ in 0..count(r)? {
        let c = r.index(p.status.len() as u64 - 1)?;
        p.status[c] = read_hb(r)?;
    }
    let nv = p.visitors.len() as u64;
    p.status_pairs = read_pairs(r, 600, nv)?;
    p.requests = read_rows(r, nv, |r| {
        Ok(ReqHits {
            ok: read_hb(r)?,
            not_found: read_hb(r)?,
        })
    })?;
    p.referrers = read_rows(r, nv, read_hb)?;
    p.vhosts = read_rows(r, nv, read_hb)?;
    Ok(panels)
}

fn read_keyed<T: Default>(
    r: &mut Reader,
    each: impl Fn(&mut Reader) -> Result<T, Damage>,
) -> Result<Keyed<T>, Damage> {
    let mut k = Keyed::default();
    for i in 0..count(r)? {
        let key = r.bytes()?;
        let (id, slot) = k.slot(key);
        if id as usize != i {
            return Err(Damage::Invalid("a key twice"));
        }
        *slot = each(r)?;
    }
    Ok(k)
}

/// Pairs whose row is under `rows` and visitor under `visitors`, increasing.
fn read_pairs(r: &mut Reader, rows: u64, visitors: u64) -> Result<Pairs, Damage> {
    let n = count(r)?;
    let mut v = Vec::with_capacity(n);
    let mut last = 0u64;
    for i in 0..n {
        let d = r.uint()?;
        if i > 0 && d == 0 {
            return Err(Damage::Invalid("pairs not increasing"));
        }
        last = last
            .checked_add(d)
            .ok_or(Damage::Invalid("a pair past 64 bits"))?;
        let (row, vis) = unpair(last);
        if row as u64 >= rows || vis as u64 >= visitors {
            return Err(Damage::Invalid("a pair of no row or no visitor"));
        }
        v.push(last);
    }
    Ok(Pairs::from_sorted(v))
}

fn read_rows<T: Default>(
    r: &mut Reader,
    visitors: u64,
    each: impl Fn(&mut Reader) -> Result<T, Damage>,
) -> Result<Rows<T>, Damage> {
    let keyed = read_keyed(r, each)?;
    let pairs = read_pairs(r, keyed.len() as u64, visitors)?;
    Ok(Rows { keyed, pairs })
}
