//! The merged counts as the report's rows: what a line left by id
//! (`acc`) becomes once per distinct string here. A raw request line is split
//! and decoded into GoAccess's (method, URL, protocol) once, a raw referrer
//! decoded and its site found once, an agent classified once; rows that
//! several raw strings become (`%41` and `A`) add up, and their visitors are
//! the distinct (row, visitor) pairs of theirs ([`project`]), so the counts
//! are those of a line-by-line count with the rules applied to every line.

use std::collections::BTreeMap;
use std::ops::Range;

use hashbrown::HashMap;

use crate::acc::{self, Acc, Hb, Rows, NO_TIME, SLOTTED};
use crate::agent::{AgentCache, Parsers};
use crate::bots::BotCategory;
use crate::intern::{filled, Keyed};
use crate::pairs::Pairs;
use crate::rules;

/// One row: its key, hits and bytes, and distinct visitors.
#[derive(Debug, Clone)]
pub struct Tally<K> {
    pub key: K,
    pub hb: Hb,
    pub visitors: u64,
}

/// A request row's key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Request {
    pub method: &'static str,
    pub protocol: &'static str,
    pub url: Vec<u8>,
}

/// A two-level row's key: (group, item).
pub type Pair = (String, String);

/// Every panel's rows, unsorted, and the figures derived with them.
pub struct Tallies<'a> {
    pub unique_visitors: u64,
    pub human: u64,
    pub bot: u64,
    /// Days (days since the epoch, [`NO_TIME`] without a time), in order.
    pub days: Vec<Tally<i64>>,
    /// Local hours since the epoch, in order.
    pub hourly: Vec<Tally<i64>>,
    /// Hours of the day, in order.
    pub hours: Vec<Tally<u8>>,
    pub requests: Vec<Tally<Request>>,
    pub static_requests: Vec<Tally<Request>>,
    pub not_found: Vec<Tally<Request>>,
    pub extensions: Vec<Tally<&'static str>>,
    pub hosts: Vec<Tally<&'a [u8]>>,
    /// Agents as (OS family, OS), (browser family, browser), (bot kind, bot).
    pub os: Vec<Tally<Pair>>,
    pub browsers: Vec<Tally<Pair>>,
    pub bots: Vec<Tally<Pair>>,
    pub status: Vec<Tally<u16>>,
    /// Distinct visitors per status group ("2xx Success").
    pub status_groups: HashMap<&'static str, u64>,
    pub referrers: Vec<Tally<&'a [u8]>>,
    pub referring_sites: Vec<Tally<&'a [u8]>>,
    pub vhosts: Vec<Tally<&'a [u8]>>,
    /// Panels of which only the top rows are here (`combine`): their sums
    /// over every row.
    pub cut: Cuts,
}

/// The sums of the panels cut while a spill's partitions were added up.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cuts {
    pub hosts: Option<Sums>,
    pub requests: Option<Sums>,
    pub static_requests: Option<Sums>,
    pub not_found: Option<Sums>,
    pub referrers: Option<Sums>,
    pub referring_sites: Option<Sums>,
    pub vhosts: Option<Sums>,
}

/// A panel's sums over every row, and its rows.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sums {
    pub hits: u64,
    pub visitors: u64,
    pub bytes: u64,
    pub rows: u64,
}

/// Not a row of the projection.
const NONE: u32 = u32::MAX;

/// Distinct visitors per new row of the pairs (row, visitor) with rows
/// mapped by `map` (old row -> new row or [`NONE`]). The pairs come each
/// visitor's together ([`Pairs::iter`]), so a new row's visitor is counted
/// when it differs from the last one counted there: one pass, no sort. A
/// hash set of the mapped pairs (the referring sites: most of the
/// referrers' pairs), then a sort of those of rows that several old rows
/// map to, was the largest part of the work after the scan on the 1 GiB
/// bench log (perf; the sort ~40% of the tally's 75 ms, timed in place).
pub fn project(pairs: &Pairs, map: &[u32], rows: usize) -> Vec<u64> {
    project_with(pairs, map, rows, |_| {})
}

/// [`project`], calling `each` with every pair's row as it goes (a closure
/// of its own per caller: nothing is added to `project`'s loop).
#[inline(always)]
fn project_with(pairs: &Pairs, map: &[u32], rows: usize, mut each: impl FnMut(u32)) -> Vec<u64> {
    let mut counts = filled(rows, 0u64);
    // Visitor ids are below u32::MAX (a slot keeps id + 1 in 32 bits).
    let mut last = vec![u32::MAX; rows];
    for p in pairs.iter() {
        let (r, v) = acc::unpair(p);
        each(r);
        let m = map[r as usize];
        if m != NONE && last[m as usize] != v {
            last[m as usize] = v;
            counts[m as usize] += 1;
        }
    }
    counts
}

/// The distinct visitors of each row of `pairs` (each pair is one: they
/// are distinct), and [`project`]'s, in one pass: the referrers' rows and
/// their sites' (two passes were a sixth of the tally's critical path).
fn project_both(pairs: &Pairs, map: &[u32], rows: usize) -> (Vec<u64>, Vec<u64>) {
    let mut own = filled(map.len(), 0u64);
    let counts = project_with(pairs, map, rows, |r| own[r as usize] += 1);
    (own, counts)
}

/// The rows of the merged counts `a`, in two halves on two threads: the
/// panels of the request lines, status codes and virtual hosts on one;
/// those counted from the visitors (days, hours, hosts), the agents'
/// classification and the referrers on the other. On the 1 GiB bench log
/// this work after the scan was about a sixth of the run's wall time, on
/// one core; in two halves, with the referrers beside the requests, 0.10 s
/// (the visitors' half done after 0.02 s); with the referrers after the
/// visitors' half, 0.065 s (timed in place, three runs each).
pub fn tally(a: &Acc) -> Tallies<'_> {
    let p = &a.panels;
    let (mine, theirs) = std::thread::scope(|s| {
        let theirs = s.spawn(|| (requests(&p.requests), status(a), by_raw(&p.vhosts)));
        let per = PerVisitor::of(a);
        let times = times(&p.hours(), &per);
        let agents = agents(&p.agents, &per.agents);
        let hosts = hosts(a, &per);
        let refs = referrers(&p.referrers);
        let theirs = theirs
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        ((times, agents, hosts, refs), theirs)
    });
    let ((days, hourly, hours), agents, hosts, (referrers, referring_sites)) = mine;
    let (req, (status, status_groups), vhosts) = theirs;
    Tallies {
        unique_visitors: p.visitors.len() as u64,
        human: a.hits + a.excluded - agents.bot,
        bot: agents.bot,
        days,
        hourly,
        hours,
        requests: req.requests,
        static_requests: req.static_requests,
        not_found: req.not_found,
        extensions: req.extensions,
        hosts,
        os: agents.os,
        browsers: agents.browsers,
        bots: agents.bots,
        status,
        status_groups,
        referrers,
        referring_sites,
        vhosts,
        cut: Cuts::default(),
    }
}

/// The hosts panel: clients, with their visitors counted from the visitors.
fn hosts<'a>(a: &'a Acc, per: &PerVisitor) -> Vec<Tally<&'a [u8]>> {
    let c = &a.panels.clients;
    c.values
        .iter()
        .enumerate()
        .map(|(i, hb)| Tally {
            key: c.keys.get(i as u32),
            hb: *hb,
            visitors: per.clients[i],
        })
        .collect()
}

/// Visitors per day, client, agent, local hour and hour of the day, counted
/// from the visitors themselves (each has one day, client and agent; its
/// hours are bits).
struct PerVisitor {
    days: HashMap<i64, u64>,
    clients: Vec<u64>,
    agents: Vec<u64>,
    hourly: HashMap<i64, u64>,
    hours: [u64; 24],
}

impl PerVisitor {
    fn of(a: &Acc) -> PerVisitor {
        let p = &a.panels;
        let mut d = PerVisitor {
            days: HashMap::new(),
            clients: filled(p.clients.len(), 0),
            agents: filled(p.agents.len(), 0),
            hourly: HashMap::new(),
            hours: [0; 24],
        };
        // Visitors are listed as first seen, so mostly a day after another:
        // a day's counts are kept in a run and added to the maps once a run
        // (a map entry a visitor and an hour was 8% of the work after the
        // scan of the 1 GiB bench log, perf).
        let mut run = DayRun::new(i64::MIN);
        for v in &p.visitors.list {
            if v.day() != run.day {
                run.add_to(&mut d);
                run = DayRun::new(v.day());
            }
            run.visitors += 1;
            d.clients[v.client as usize] += 1;
            d.agents[v.agent as usize] += 1;
            let mut bits = v.hours();
            while bits != 0 {
                let h = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                d.hours[h] += 1;
                run.hours[h] += 1;
            }
        }
        run.add_to(&mut d);
        d
    }
}

/// One day's visitors, and its visitors by hour, counted in a run.
struct DayRun {
    day: i64,
    visitors: u64,
    hours: [u64; 24],
}

impl DayRun {
    fn new(day: i64) -> Self {
        DayRun {
            day,
            visitors: 0,
            hours: [0; 24],
        }
    }

    fn add_to(&self, d: &mut PerVisitor) {
        if self.visitors == 0 {
            return;
        }
        *d.days.entry(self.day).or_default() += self.visitors;
        for (h, &n) in self.hours.iter().enumerate().filter(|(_, &n)| n > 0) {
            *d.hourly.entry(self.day * 24 + h as i64).or_default() += n;
        }
    }
}

type Times = (Vec<Tally<i64>>, Vec<Tally<i64>>, Vec<Tally<u8>>);

/// Days, local hours and hours of the day, each in order.
fn times(hourly: &HashMap<i64, Hb>, per: &PerVisitor) -> Times {
    let mut days: BTreeMap<i64, Hb> = BTreeMap::new();
    let mut of_day = [Hb::default(); 24];
    let mut seen = [false; 24];
    let mut hours: Vec<Tally<i64>> = Vec::new();
    // A partition of a spill (`spill`) has visitors of hours whose hits
    // are in another partition: those hours are rows with no hits here.
    let mut hourly = hourly.clone();
    for &h in per.hourly.keys() {
        hourly.entry(h).or_default();
    }
    for &d in per.days.keys() {
        days.entry(d).or_default();
    }
    for (&h, hb) in &hourly {
        days.entry(acc::day_of_hour(h)).or_default().plus(*hb);
        if h != NO_TIME {
            let hd = h.rem_euclid(24) as usize;
            of_day[hd].plus(*hb);
            seen[hd] |= hb.hits > 0 || per.hours[hd] > 0;
            let visitors = per.hourly.get(&h).copied().unwrap_or(0);
            hours.push(Tally {
                key: h,
                hb: *hb,
                visitors,
            });
        }
    }
    hours.sort_by_key(|t| t.key);
    let days = days
        .into_iter()
        .map(|(d, hb)| Tally {
            key: d,
            hb,
            visitors: per.days.get(&d).copied().unwrap_or(0),
        })
        .collect();
    let of_day = (0..24)
        .filter(|&h| seen[h])
        .map(|h| Tally {
            key: h as u8,
            hb: of_day[h],
            visitors: per.hours[h],
        })
        .collect();
    (days, hours, of_day)
}

struct Requests {
    requests: Vec<Tally<Request>>,
    static_requests: Vec<Tally<Request>>,
    not_found: Vec<Tally<Request>>,
    extensions: Vec<Tally<&'static str>>,
}

/// A request's row key as bytes: method, NUL, protocol, NUL, URL.
fn req_key(r: &rules::Request<'_>) -> Vec<u8> {
    let mut k = Vec::with_capacity(r.url.len() + 16);
    k.extend_from_slice(r.method.as_bytes());
    k.push(0);
    k.extend_from_slice(r.protocol.as_bytes());
    k.push(0);
    k.extend_from_slice(&r.url);
    k
}

/// GoAccess's request rows of the raw request lines, each split once.
fn requests(raw: &Rows<acc::ReqHits>) -> Requests {
    let mut keys: Keyed<(acc::ReqHits, Option<&'static str>)> = Keyed::default();
    let mut parsed: Vec<(&'static str, &'static str)> = Vec::new();
    let mut to_key = Vec::with_capacity(raw.keyed.len());
    let mut to_ext = Vec::with_capacity(raw.keyed.len());
    for (line, hits) in raw.keyed.keys.keys().zip(&raw.keyed.values) {
        let r = rules::request(line);
        let (k, slot) = keys.slot(&req_key(&r));
        if k as usize == parsed.len() {
            parsed.push((r.method, r.protocol));
            slot.1 = rules::static_ext(&r.url);
        }
        slot.0.ok.plus(hits.ok);
        slot.0.not_found.plus(hits.not_found);
        to_key.push(k);
        to_ext.push(slot.1);
    }
    let visitors = project(&raw.pairs, &to_key, keys.len());
    let mut out = Requests {
        requests: Vec::new(),
        static_requests: Vec::new(),
        not_found: Vec::new(),
        extensions: Vec::new(),
    };
    for (k, (hits, ext)) in keys.values.iter().enumerate() {
        let key = || {
            let text = keys.keys.get(k as u32);
            let (m, p) = parsed[k];
            let url = text[m.len() + p.len() + 2..].to_vec();
            Request {
                method: m,
                protocol: p,
                url,
            }
        };
        // No hits but visitors: a partition of a spill.
        if hits.ok.hits > 0 || visitors[k] > 0 {
            let t = Tally {
                key: key(),
                hb: hits.ok,
                visitors: visitors[k],
            };
            match ext {
                Some(_) => out.static_requests.push(t),
                None => out.requests.push(t),
            }
        }
        if hits.not_found.hits > 0 {
            out.not_found.push(Tally {
                key: key(),
                hb: hits.not_found,
                visitors: 0,
            });
        }
    }
    out.extensions = extensions(raw, &keys, &visitors, (&to_key, &to_ext));
    out
}

/// Static files by extension: the hits of the static rows, and the
/// distinct visitors of the raw lines that are static.
fn extensions(
    raw: &Rows<acc::ReqHits>,
    keys: &Keyed<(acc::ReqHits, Option<&'static str>)>,
    key_visitors: &[u64],
    (to_key, to_ext): (&[u32], &[Option<&'static str>]),
) -> Vec<Tally<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    let mut hb: Vec<Hb> = Vec::new();
    let mut index = |e: &'static str| match names.iter().position(|&n| n == e) {
        Some(i) => i,
        None => {
            names.push(e);
            hb.push(Hb::default());
            names.len() - 1
        }
    };
    let mut ext_of_key = vec![NONE; keys.len()];
    for (k, (hits, ext)) in keys.values.iter().enumerate() {
        if let (Some(e), true) = (ext, hits.ok.hits > 0 || key_visitors[k] > 0) {
            let i = index(e);
            ext_of_key[k] = i as u32;
        }
    }
    for (k, (hits, _)) in keys.values.iter().enumerate() {
        if ext_of_key[k] != NONE {
            hb[ext_of_key[k] as usize].plus(hits.ok);
        }
    }
    let map: Vec<u32> = to_key
        .iter()
        .zip(to_ext)
        .map(|(&k, e)| match e {
            Some(_) => ext_of_key[k as usize],
            None => NONE,
        })
        .collect();
    let visitors = project(&raw.pairs, &map, names.len());
    names
        .into_iter()
        .zip(hb)
        .zip(visitors)
        .map(|((key, hb), visitors)| Tally { key, hb, visitors })
        .collect()
}

/// Referrers as written, and their sites. GoAccess 1.7 does not decode a
/// referrer (`/a%20b` and `/a b` are two rows; checked): a decoded one
/// merged rows GoAccess keeps apart, and changed what some said (`%26`).
/// A site's key is the first of its referrers' texts that has it (a part
/// of the text, `rules::referring_site`), and rows borrow their keys: made
/// a `Vec` each, a spilled report's rows of referrers and sites were a
/// malloc and a free each (malloc, free and realloc were a fifth of the
/// tally thread's samples after the 10 GiB bench log's scan, perf, these
/// rows among them).
fn referrers(raw: &Rows<Hb>) -> (Texts<'_>, Texts<'_>) {
    let mut sites: Keyed<Hb> = Keyed::default();
    let mut site_texts = Vec::new();
    let mut to_site = Vec::with_capacity(raw.keyed.len());
    for (text, hb) in raw.keyed.keys.keys().zip(&raw.keyed.values) {
        match rules::referring_site(text) {
            Some(site) => {
                let (s, slot) = sites.slot(site);
                slot.plus(*hb);
                if s as usize == site_texts.len() {
                    site_texts.push(site);
                }
                to_site.push(s);
            }
            None => to_site.push(NONE),
        }
    }
    let (raw_visitors, visitors) = project_both(&raw.pairs, &to_site, sites.len());
    let sites = (site_texts.into_iter().zip(&sites.values).zip(visitors))
        .map(|((key, hb), visitors)| Tally {
            key,
            hb: *hb,
            visitors,
        })
        .collect();
    (keyed_rows(&raw.keyed, raw_visitors), sites)
}

/// Rows keyed by text they borrow.
type Texts<'a> = Vec<Tally<&'a [u8]>>;

/// Rows keyed by the raw strings themselves (virtual hosts, referrers).
fn by_raw(raw: &Rows<Hb>) -> Vec<Tally<&[u8]>> {
    let mut visitors = filled(raw.keyed.len(), 0u64);
    for p in raw.pairs.iter() {
        visitors[acc::unpair(p).0 as usize] += 1;
    }
    keyed_rows(&raw.keyed, visitors)
}

/// The rows of `k`, `visitors[i]` the visitors of its key `i`.
fn keyed_rows(k: &Keyed<Hb>, visitors: Vec<u64>) -> Vec<Tally<&[u8]>> {
    k.keys
        .keys()
        .zip(&k.values)
        .zip(visitors)
        .map(|((key, hb), visitors)| Tally {
            key,
            hb: *hb,
            visitors,
        })
        .collect()
}

struct Agents {
    os: Vec<Tally<Pair>>,
    browsers: Vec<Tally<Pair>>,
    bots: Vec<Tally<Pair>>,
    /// Valid requests (kept or not) of bots.
    bot: u64,
}

/// Agents classified once each; a visitor has one agent, so a row's
/// visitors are the sum of its agents'. A log of many distinct agents (a
/// session token in each) is classified in parts on every core: uap-core's
/// rules take ~10 us an agent, and 200,000 agents took 2.2 s on one core
/// after the scan (GoAccess 3.3 s), where a log of few agents takes none.
/// The parts' rows add up, so the answer is the same whatever the parts.
fn agents(agents: &Keyed<acc::AgentHits>, visitors: &[u64]) -> Agents {
    let n = agents.values.len();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get().min(8));
    let parts = if n < 4096 { 1 } else { cores };
    let per = n.div_ceil(parts).max(1);
    let keys = (0..n).map(|i| agents.keys.get(i as u32));
    let rules = crate::agent::rules_for(keys, n);
    let rules = &*rules;
    let part = |p: usize| agents_in(agents, visitors, rules, p * per..n.min((p + 1) * per));
    let (rows, bot) = std::thread::scope(|s| {
        let others: Vec<_> = (1..parts).map(|p| s.spawn(move || part(p))).collect();
        let mut all = part(0);
        for h in others {
            let (rows, bot) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (mine, theirs) in all.0.iter_mut().zip(rows) {
                for (k, (hb, v)) in theirs {
                    let e = mine.entry(k).or_default();
                    e.0.plus(hb);
                    e.1 += v;
                }
            }
            all.1 += bot;
        }
        all
    });
    let [os, browsers, bots] = rows.map(|m| {
        m.into_iter()
            .map(|(key, (hb, visitors))| Tally { key, hb, visitors })
            .collect()
    });
    Agents {
        os,
        browsers,
        bots,
        bot,
    }
}

/// The rows of OS, browsers and bots (key -> hits and bytes, visitors) of
/// the agents of ids `ids`, and their bots' requests.
type AgentRowsOf = ([BTreeMap<Pair, (Hb, u64)>; 3], u64);

/// [`agents`] of the agents of ids `ids`, classified by `rules`.
fn agents_in(
    agents: &Keyed<acc::AgentHits>,
    visitors: &[u64],
    rules: &Parsers,
    ids: Range<usize>,
) -> AgentRowsOf {
    let mut cache = AgentCache::with_parsers(rules, AgentCache::DEFAULT_LIMIT);
    let mut rows: [BTreeMap<Pair, (Hb, u64)>; 3] = Default::default();
    let mut bot = 0;
    for i in ids {
        let hits = &agents.values[i];
        if hits.all == 0 && visitors[i] == 0 {
            continue;
        }
        let r: AgentRows = agent_rows(&mut cache, agents.keys.get(i as u32));
        if r.bot.is_some() {
            bot += hits.all;
        }
        if hits.kept.hits == 0 && visitors[i] == 0 {
            continue;
        }
        let keys = [Some(r.os), Some(r.browser), r.bot];
        for (panel, key) in rows.iter_mut().zip(keys) {
            if let Some(k) = key {
                let e = panel.entry(k).or_default();
                e.0.plus(hits.kept);
                e.1 += visitors[i];
            }
        }
    }
    (rows, bot)
}

/// Status codes, and distinct visitors per status group: a visitor's codes
/// are bits ([`SLOTTED`]) or (code, visitor) pairs.
fn status(a: &Acc) -> (Vec<Tally<u16>>, HashMap<&'static str, u64>) {
    let p = &a.panels;
    let mut by_code = [0u64; 600];
    let mut group_of_visitor: HashMap<u32, u8> = HashMap::new();
    let group_bit = |code: u16| 1u8 << (code / 100);
    let mut slot_groups = [0u8; 64];
    for (i, &c) in SLOTTED.iter().enumerate() {
        slot_groups[i] = group_bit(c);
    }
    let mut groups = [0u64; 8];
    for pr in p.status_pairs.iter() {
        let (code, v) = acc::unpair(pr);
        by_code[code as usize] += 1;
        *group_of_visitor.entry(v).or_default() |= group_bit(code as u16);
    }
    for (id, v) in p.visitors.list.iter().enumerate() {
        let mut g = group_of_visitor.get(&(id as u32)).copied().unwrap_or(0);
        let mut bits = v.status();
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            by_code[SLOTTED[s] as usize] += 1;
            g |= slot_groups[s];
        }
        for (n, count) in groups.iter_mut().enumerate() {
            *count += (g >> n & 1) as u64;
        }
    }
    let codes = p
        .status
        .iter()
        .enumerate()
        .filter(|&(code, hb)| hb.hits > 0 || by_code[code] > 0)
        .map(|(code, hb)| Tally {
            key: code as u16,
            hb: *hb,
            visitors: by_code[code],
        })
        .collect();
    let names = (1..=5)
        .map(|g| (rules::status_group(g * 100), groups[g as usize]))
        .collect();
    (codes, names)
}

/// The rows an agent adds to in the OS, browser and bot panels, as
/// (group, item) keys.
pub(crate) struct AgentRows {
    pub(crate) os: Pair,
    pub(crate) browser: Pair,
    pub(crate) bot: Option<Pair>,
}

pub(crate) fn agent_rows(cache: &mut AgentCache<'_>, ua: &[u8]) -> AgentRows {
    let a = cache.get(ua);
    let key = |g: &str, i: &str| (g.to_owned(), i.to_owned());
    match &a.bot {
        Some(bot) => AgentRows {
            os: key("Crawlers", &bot.name),
            browser: key("Crawlers", &bot.name),
            bot: Some(key(category_label(bot.category), &bot.name)),
        },
        None => AgentRows {
            os: key(&a.os, &a.os_label()),
            browser: key(&a.browser, &a.browser_label()),
            bot: None,
        },
    }
}

pub fn category_label(c: BotCategory) -> &'static str {
    match c {
        BotCategory::AiCrawler => "AI crawlers",
        BotCategory::SearchEngine => "Search engines",
        BotCategory::Other => "Other bots",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_counts_distinct_pairs_of_merged_rows() {
        let mut pairs = Pairs::default();
        pairs.extend(
            [(0, 1), (1, 1), (1, 2), (2, 3), (3, 4)]
                .into_iter()
                .map(|(r, v)| acc::pair(r, v)),
        );
        pairs.compact();
        // rows 0 and 1 become row 0; row 2 row 1; row 3 is left out.
        assert_eq!(project(&pairs, &[0, 0, 1, NONE], 2), vec![2, 1]);
    }

    /// A projection counts each new row's distinct visitors as a set of the
    /// mapped pairs does, with pairs of a merge and of a saved state kept
    /// apart.
    #[test]
    fn projection_equals_a_set_of_mapped_pairs() {
        let mut x: u64 = 11;
        let mut rand = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((x >> 33) % n) as u32
        };
        let mut pairs = Pairs::default();
        for i in 0..200_000u32 {
            pairs.insert(acc::pair(rand(400), i / 5 + rand(50)));
        }
        let merged: Vec<u64> = (50_000..52_000)
            .flat_map(|v| [acc::pair(v % 400, v), acc::pair(v % 13, v)])
            .collect();
        pairs.extend_merged(merged, 50_000);
        let mut saved: Vec<u64> = (0..3000)
            .map(|i| acc::pair(i % 400, 60_000 + i % 700))
            .collect();
        saved.sort();
        saved.dedup();
        pairs.extend_merged(saved, 60_000);
        pairs.compact();
        let map: Vec<u32> = (0..400)
            .map(|r| if r % 17 == 0 { NONE } else { rand(30) })
            .collect();
        let mut want = vec![0u64; 30];
        let set: std::collections::BTreeSet<(u32, u32)> = pairs
            .iter()
            .map(acc::unpair)
            .filter(|&(r, _)| map[r as usize] != NONE)
            .map(|(r, v)| (map[r as usize], v))
            .collect();
        for (m, _) in set {
            want[m as usize] += 1;
        }
        assert_eq!(project(&pairs, &map, 30), want);
        // With each raw row's own distinct visitors (a set of the pairs).
        let mut own = vec![0u64; 400];
        let set: std::collections::BTreeSet<u64> = pairs.iter().collect();
        for p in set {
            own[acc::unpair(p).0 as usize] += 1;
        }
        assert_eq!(project_both(&pairs, &map, 30), (own, want));
    }

    /// Many distinct agents (classified in parts on every core) give the
    /// rows one part gives: browsers, bots and their hits and visitors.
    #[test]
    fn agents_in_parts_equal_agents_in_one() {
        let mut keyed: Keyed<acc::AgentHits> = Keyed::default();
        let kinds = [
            "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1)",
            "curl/8.5.0",
        ];
        let n = 5000;
        for i in 0..n {
            let ua = format!("{} s{i}", kinds[i % kinds.len()]);
            let (_, h) = keyed.slot(ua.as_bytes());
            h.all += 1 + (i % 3) as u64;
            h.kept.add(100 * i as u64);
        }
        let visitors: Vec<u64> = (0..n as u64).map(|i| i % 4).collect();
        let parts = agents(&keyed, &visitors);
        let (serial, bot) = agents_in(&keyed, &visitors, crate::agent::parsers(), 0..n);
        let rows = |a: &Agents| {
            [&a.os, &a.browsers, &a.bots].map(|p| {
                p.iter()
                    .map(|t| (t.key.clone(), t.hb, t.visitors))
                    .collect::<Vec<_>>()
            })
        };
        let serial = serial.map(|m| {
            m.into_iter()
                .map(|(k, (hb, v))| (k, hb, v))
                .collect::<Vec<_>>()
        });
        assert_eq!(rows(&parts), serial);
        assert_eq!(parts.bot, bot);
        assert!(serial[2].len() >= 2 && bot > 0, "{:?}", serial[2]);
    }
}
