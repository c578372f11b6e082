//! The report's counts, one [`Acc`] per worker thread, merged at the end.
//!
//! Unique visitors are exact. A visitor is GoAccess's (day, client, agent);
//! clients and agents are interned per thread (`intern`), so a visitor is a
//! 16-byte key interned in its turn to a `u32`. What a line adds is counted
//! by id, in vectors: a client's, an agent's, a request's hits and bytes.
//! Per-row visitors are found the cheapest exact way for each panel:
//!
//! - days, hosts, OS, browsers and bots: a visitor key holds its day, client
//!   and agent, so their visitors are counted from the keys at the end;
//! - hours of the day, and status codes: bits of the visitor (`hours`,
//!   `status`: one bit per hour, per common status code), ORed in; a code
//!   without a bit goes into a set of (code, visitor) pairs;
//! - requests, referrers, virtual hosts: a set of (row id, visitor id) pairs
//!   as `u64`s per panel; the panel's rows (a request's decoded URL, a
//!   referrer's site, a static file's extension) are made once per distinct
//!   raw string at the end (`tally`), not once a line.
//!
//! So a line costs about five hashes of its strings and at most two
//! appends of a `u64` (perf: the first counter hashed each long key several
//! times and made seven set insertions a line); a visitor's pair that
//! repeats its last one in a panel is not appended ([`Visitors::pair_once`]:
//! 43% of them on the bench log). Ids are a thread's own: [`Acc::merge`]
//! interns the other thread's keys into this one's and renumbers its ids and
//! pairs, a union of the keys themselves, the same whatever the thread count
//! or chunk size. Nothing is an estimate; the price is memory (every
//! distinct string and visitor once per thread, 8 bytes per distinct
//! (row, visitor) pair), bounded by `--memory`: past its share a worker's
//! [`Panels`] are spilled to disk by client (`spill`, [`Panels::heap_bytes`]).

use std::hash::BuildHasher;

use hashbrown::HashMap;

use crate::intern::{
    built_hasher, hash_from, home, key_hasher, likely, prefetch, prefetch_home, regrow, tag_of,
    Interner, Keyed,
};
use crate::pairs::Pairs;

/// Hits and bytes of a row. Bytes add up saturating: a log's sizes are
/// what it says, and a few corrupt ones near 2^63 wrapped the sum round to
/// a small number (a row at 200% of the total); at `u64::MAX` the CLI says
/// the sizes overflowed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hb {
    pub hits: u64,
    pub bytes: u64,
}

impl Hb {
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        self.hits += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }

    #[inline]
    pub fn plus(&mut self, o: Hb) {
        self.hits += o.hits;
        self.bytes = self.bytes.saturating_add(o.bytes);
    }
}

/// One visitor (GoAccess's: the same day, client and agent) and what the
/// report keeps per visitor, in 32 bytes: two to a cache line, where 40
/// straddled two lines one visitor in two (and at 10 GiB the visitors are
/// half of what a worker holds when it spills: 101 of ~205 MB).
#[derive(Debug, Clone, Copy)]
pub struct Visitor {
    /// Days since 1970-01-01 in the log's own zone ([`Visitor::day`]);
    /// `NO_DAY` without a time.
    day: i32,
    pub client: u32,
    pub agent: u32,
    /// The high half of its hash ([`visitor_hash`], `intern::tag_of`), so
    /// that a visitor goes into another table (a merge, a spill's
    /// partition) without its hash made again; never saved (the hash's
    /// seed is the process's).
    pub tag: u32,
    /// The request and referrer rows (id + 1; 0: none) of this visitor's
    /// last pair in each panel: a pair the visitor has just added is not
    /// appended again ([`Visitors::pair_once`]). Never saved: a visitor
    /// read back or merged has none.
    pub last: [u32; 2],
    /// Bit `i` (under [`HOUR_BITS`]): a request answered `SLOTTED[i]`; bit
    /// `HOUR_BITS + h`: a request in hour `h` of the day.
    marks: u64,
}

const _: () = assert!(std::mem::size_of::<Visitor>() == 32);

/// `Visitor::day` of a visitor without a time.
const NO_DAY: i32 = i32::MIN;

/// Where a visitor's hours start in its marks (above the status codes').
const HOUR_BITS: u32 = 40;

impl Visitor {
    /// A visitor of `day` ([`day_of_hour`]'s; [`NO_TIME`] without a time),
    /// with no request marked yet. A day is from a time in microseconds, so
    /// within 107 million days of 1970: an `i32`.
    pub fn new(day: i64, client: u32, agent: u32) -> Self {
        let day = match day {
            NO_TIME => NO_DAY,
            d => i32::try_from(d).expect("a day of an i64 of microseconds"),
        };
        Visitor {
            day,
            client,
            agent,
            tag: 0,
            last: [0; 2],
            marks: 0,
        }
    }

    /// A day read from a file, if a day can be that.
    pub fn day_of(day: i64) -> Option<i64> {
        (day == NO_TIME || i32::try_from(day).is_ok_and(|d| d != NO_DAY)).then_some(day)
    }

    /// Days since 1970-01-01 in the log's own zone; [`NO_TIME`] without a time.
    #[inline]
    pub fn day(&self) -> i64 {
        match self.day {
            NO_DAY => NO_TIME,
            d => d as i64,
        }
    }

    /// Bit `h`: a request in hour `h` of the day.
    #[inline]
    pub fn hours(&self) -> u32 {
        (self.marks >> HOUR_BITS) as u32
    }

    /// Bit `i`: a request answered `SLOTTED[i]`.
    #[inline]
    pub fn status(&self) -> u64 {
        self.marks & ((1 << HOUR_BITS) - 1)
    }

    /// Marks hours `hours` (under `1 << 24`) and codes `status` (bits of
    /// [`SLOTTED`]); `false` if they are not that.
    pub fn mark(&mut self, hours: u32, status: u64) -> bool {
        if hours >= 1 << 24 || status >> SLOTTED.len() != 0 {
            return false;
        }
        self.marks |= (hours as u64) << HOUR_BITS | status;
        true
    }

    /// Marks a request in hour `h` (under 24) of the day.
    #[inline]
    fn mark_hour(&mut self, h: u32) {
        self.marks |= 1 << (HOUR_BITS + h);
    }

    /// Marks a request answered `SLOTTED[slot]`.
    #[inline]
    fn mark_slot(&mut self, slot: u8) {
        self.marks |= 1 << slot;
    }

    /// Marks what `o` marks.
    #[inline]
    pub fn mark_as(&mut self, o: &Visitor) {
        self.marks |= o.marks;
    }
}

/// Visitors interned to ids, a table of slots for each day. A table is as
/// the interners' (`intern`): linear probing, at most three quarters full,
/// a slot the high half of the visitor's hash and its id + 1 (0: empty). A
/// visitor's hash comes from its day and the hashes of its client's and
/// agent's keys ([`visitor_hash`]), known as soon as the line is read: its
/// slot is loaded a few lines before it is looked up (`Panels::prefetch`).
/// The table of hashbrown it replaced took three dependent cache misses a
/// line (control bytes, id, visitor: 10% of the 10 GiB report's CPU).
///
/// Why a table per day: a visitor holds its day, so no two days share
/// one, and a log comes in time order mostly. One table for all days grew
/// to millions of slots, and the prefetch of a line's slot was the costliest
/// instruction of the scan (perf annotate, `-j 1`, 1 GiB: 40% of
/// `process`'s samples, a TLB and cache miss a line); a day's table (tens
/// of thousands of visitors on the bench logs) and its visitors, listed one
/// after the other as they come, stay in the L2 cache.
#[derive(Default)]
pub struct Visitors {
    days: Vec<DaySlots>,
    /// Where each day's table is in `days`.
    index: HashMap<i64, usize>,
    /// The table looked up last (the next line's day, mostly).
    last: usize,
    /// Slots of all the tables (for [`Visitors::heap_bytes`], asked every
    /// few thousand lines: a log may have thousands of days).
    slots: usize,
    pub list: Vec<Visitor>,
    /// Some visitors were listed without a table ([`Visitors::list_new`]).
    untabled: bool,
}

/// The slots of one day's visitors.
struct DaySlots {
    day: i64,
    slots: Vec<u64>,
    len: usize,
}

/// A visitor's hash, from its day and its client's and agent's key hashes
/// ([`crate::intern::Interner::hash_of`]).
#[inline]
pub fn visitor_hash(day: i64, client: u64, agent: u64) -> u64 {
    key_hasher().hash_one((day, client, agent))
}

impl Visitors {
    /// Folds `o` in, its clients and agents renumbered by `cmap`, `amap`;
    /// returns o's visitor ids as this one's (new ones numbered in o's
    /// order). A day only `o` has takes o's table whole, its slots given
    /// the new ids ([`Visitors::adopt`]): two workers' regions of one file
    /// share a day or two, and inserting the other's ~600,000 visitors one
    /// by one took 38-40 ms of the merge's 66-88 (1 GiB bench log, timed in
    /// place, 3 runs); taken whole, 20-26 ms (the list's growth, the ids).
    /// New visitors are numbered in o's order, so that o's pairs, sorted by
    /// visitor, stay sorted renumbered (`Pairs::extend_merged` keeps them
    /// apart, and `Pairs::compact` sorts them only if they are not). Not
    /// done: taking the days on another thread beside the clients' merge
    /// numbered the taken days' visitors first, and the radix sort of those
    /// pairs it brought back cost as much as it saved (reverted, d26d342).
    pub fn merge(&mut self, o: Visitors, cmap: &[u32], amap: &[u32]) -> Vec<u32> {
        assert!(!o.untabled, "a merge of visitors listed without a table");
        // (day, whether it is only theirs) of the visitor before.
        let mut only_theirs = None;
        let mut ids = Vec::with_capacity(o.list.len());
        for v in &o.list {
            let key = (v.day(), cmap[v.client as usize], amap[v.agent as usize]);
            let theirs = match only_theirs {
                Some((day, theirs)) if day == key.0 => theirs,
                _ => self.table(key.0).is_none(),
            };
            only_theirs = Some((key.0, theirs));
            let id = if theirs {
                self.list.push(Visitor {
                    client: key.1,
                    agent: key.2,
                    last: [0; 2],
                    ..*v
                });
                self.list.len() as u32 - 1
            } else {
                let id = self.id(key, (v.tag as u64) << 32);
                self.list[id as usize].mark_as(v);
                id
            };
            ids.push(id);
        }
        for t in o.days {
            if self.table(t.day).is_none() {
                self.adopt(t, &ids);
            }
        }
        ids
    }

    /// Takes `t`, a table of another's visitors of a day this one has no
    /// table for, its ids made this one's by `ids`.
    fn adopt(&mut self, mut t: DaySlots, ids: &[u32]) {
        for s in t.slots.iter_mut().filter(|s| **s != 0) {
            let id = ids[(*s as u32 - 1) as usize];
            *s = tag_of(*s) | (id as u64 + 1);
        }
        self.slots += t.slots.len();
        self.index.insert(t.day, self.days.len());
        self.days.push(t);
    }

    /// The id of the visitor (day, client, agent) of hash `hash` (only
    /// its high half is read).
    #[inline]
    pub fn id(&mut self, (day, client, agent): (i64, u32, u32), hash: u64) -> u32 {
        let d = self.table_of(day);
        let (t, list) = (&mut self.days[d], &mut self.list);
        if t.len * 4 >= t.slots.len() * 3 {
            let old = t.slots.len();
            t.slots = regrow(&t.slots, |&s| s);
            self.slots += t.slots.len() - old;
        }
        let tag = tag_of(hash);
        let mask = t.slots.len() - 1;
        let mut i = home(tag, mask);
        loop {
            let s = t.slots[i];
            if s == 0 {
                let id = list.len() as u32;
                t.slots[i] = tag | (id as u64 + 1);
                t.len += 1;
                let mut v = Visitor::new(day, client, agent);
                v.tag = (tag >> 32) as u32;
                list.push(v);
                return id;
            }
            if tag_of(s) == tag {
                let id = s as u32 - 1;
                let v = &list[id as usize];
                if v.day() == day && v.client == client && v.agent == agent {
                    return id;
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Lists `v`, a visitor known to be new, of a day whose visitors no
    /// other source has (a spill's section read back, `codec::read_into`):
    /// no table is looked up or kept for it, and [`Visitors::id`] never
    /// finds it (nor its tag set: such visitors are never merged). A spill
    /// file's days are mostly its own, and their lookups were a fifth of
    /// the reading back of the 10 GiB bench log's spills (perf), the end
    /// of the report's critical path.
    pub fn list_new(&mut self, v: Visitor) -> u32 {
        self.untabled = true;
        self.list.push(Visitor {
            tag: 0,
            last: [0; 2],
            ..v
        });
        self.list.len() as u32 - 1
    }

    /// The days of the visitors, each once, sorted.
    pub fn days(&self) -> Vec<i64> {
        let mut days: Vec<i64> = Vec::new();
        for v in &self.list {
            if days.last() != Some(&v.day()) {
                days.push(v.day());
            }
        }
        days.sort_unstable();
        days.dedup();
        days
    }

    /// Adds (row, visitor) to `pairs` unless it is the visitor's last pair
    /// of panel `panel` ([`Visitor::last`]): a visitor's lines mostly repeat
    /// the referrer and often the request of its line before (on the bench
    /// log, 43% of the pairs a line made), and each pair appended is sorted
    /// before it is found a duplicate (`pairs`).
    #[inline]
    pub fn pair_once(&mut self, panel: usize, pairs: &mut Pairs, row: u32, visitor: u32) {
        let last = &mut self.list[visitor as usize].last[panel];
        if *last != row.wrapping_add(1) {
            *last = row.wrapping_add(1);
            pairs.insert(pair(row, visitor));
        }
    }

    /// Where the table of `day` is, if it has one.
    #[inline]
    fn table(&self, day: i64) -> Option<usize> {
        match self.days.get(self.last) {
            Some(t) if t.day == day => Some(self.last),
            _ => self.index.get(&day).copied(),
        }
    }

    /// Where the table of `day` is, made if new; the next lookup's first guess.
    #[inline]
    fn table_of(&mut self, day: i64) -> usize {
        let d = self.table(day).unwrap_or_else(|| {
            self.days.push(DaySlots {
                day,
                slots: Vec::new(),
                len: 0,
            });
            self.index.insert(day, self.days.len() - 1);
            self.days.len() - 1
        });
        self.last = d;
        d
    }

    /// Loads the slot where a visitor of `day` and `hash` is looked for first.
    #[inline]
    pub fn prefetch(&self, day: i64, hash: u64) {
        if let Some(d) = self.table(day) {
            prefetch_home(&self.days[d].slots, hash);
        }
    }

    /// Loads the visitor a visitor of `day` and `hash` is likely to be,
    /// once [`Visitors::prefetch`] has loaded the slot.
    #[inline]
    pub fn prefetch_entry(&self, day: i64, hash: u64) {
        let Some(d) = self.table(day) else { return };
        if let Some(s) = likely(&self.days[d].slots, hash, |&s| s) {
            prefetch(self.list.as_ptr().wrapping_add(s as u32 as usize - 1));
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        self.slots * 8
            + self.days.capacity() * std::mem::size_of::<DaySlots>()
            + self.index.capacity() * 16
            + self.list.capacity() * std::mem::size_of::<Visitor>()
    }
}

/// Status codes that are a bit of [`Visitor::status`]: the registered codes
/// that can have visitors (4xx never do), 34 of 64 bits.
pub const SLOTTED: [u16; 34] = [
    100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304,
    305, 306, 307, 308, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
];

const NO_SLOT: u8 = u8::MAX;

/// `SLOT[code]`: the bit of `code` in [`Visitor::status`], or `NO_SLOT`.
const SLOT: [u8; 600] = {
    let mut t = [NO_SLOT; 600];
    let mut i = 0;
    while i < SLOTTED.len() {
        t[SLOTTED[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// A (row, visitor) pair as one `u64`.
#[inline]
pub fn pair(row: u32, visitor: u32) -> u64 {
    (row as u64) << 32 | visitor as u64
}

/// (row, visitor) of a [`pair`].
#[inline]
pub fn unpair(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

/// An agent's requests: all valid ones (also those `--bots` leaves out),
/// and those counted in the panels.
#[derive(Debug, Default, Clone, Copy)]
pub struct AgentHits {
    pub all: u64,
    pub kept: Hb,
}

impl AgentHits {
    pub fn plus(&mut self, o: AgentHits) {
        self.all += o.all;
        self.kept.plus(o.kept);
    }
}

/// A raw request line's hits: answered 404, and otherwise.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReqHits {
    pub ok: Hb,
    pub not_found: Hb,
}

impl ReqHits {
    pub fn plus(&mut self, o: ReqHits) {
        self.ok.plus(o.ok);
        self.not_found.plus(o.not_found);
    }
}

/// Rows keyed by interned raw strings, with their (row, visitor) pairs.
pub struct Rows<T> {
    pub keyed: Keyed<T>,
    pub pairs: Pairs,
}

impl<T: Default> Default for Rows<T> {
    fn default() -> Self {
        Rows {
            keyed: Keyed::default(),
            pairs: Pairs::default(),
        }
    }
}

/// Every panel's counts by id.
pub struct Panels {
    /// Clients (the hosts panel).
    pub clients: Keyed<Hb>,
    /// User agents; a format without them has only "" (every visitor's agent).
    pub agents: Keyed<AgentHits>,
    pub visitors: Visitors,
    /// By local hour since the epoch (`i64::MIN` for a format without time):
    /// days, hours of the day and the hourly chart. The hour of the last
    /// lines is counted in `hour_run` until another comes (lines come in
    /// time order mostly: one map lookup per hour, not per line).
    pub hourly: HashMap<i64, Hb>,
    pub hour_run: Option<(i64, Hb)>,
    /// By status code (100..=599).
    pub status: Vec<Hb>,
    /// (code, visitor) for codes not in [`SLOTTED`].
    pub status_pairs: Pairs,
    /// Raw request lines; pairs only for the requests not answered 404.
    pub requests: Rows<ReqHits>,
    /// Raw referrers.
    pub referrers: Rows<Hb>,
    pub vhosts: Rows<Hb>,
}

impl Default for Panels {
    fn default() -> Self {
        Panels {
            clients: Keyed::default(),
            agents: Keyed::default(),
            visitors: Visitors::default(),
            hourly: HashMap::new(),
            hour_run: None,
            status: vec![Hb::default(); 600],
            status_pairs: Pairs::default(),
            requests: Rows::default(),
            referrers: Rows::default(),
            vhosts: Rows::default(),
        }
    }
}

/// The local hour since the epoch of a line without a time.
pub const NO_TIME: i64 = i64::MIN;

/// One valid request, as counted. Texts are the raw bytes of the line.
pub struct Line<'a> {
    pub client: &'a [u8],
    pub request: &'a [u8],
    pub status: u16,
    pub bytes: u64,
    /// Local hour since the epoch, or [`NO_TIME`].
    pub hour: i64,
    pub referrer: Option<&'a [u8]>,
    pub vhost: Option<&'a [u8]>,
}

/// The hashes of a line's keys ([`crate::intern::hash_key`]), made a few lines before the
/// line is counted so that their table slots can be loaded meanwhile
/// ([`Panels::prefetch`]).
#[derive(Clone, Copy)]
pub struct Hashes {
    pub agent: u64,
    /// The line's day (`day_of_hour`): which visitors' table.
    day: i64,
    client: u64,
    visitor: u64,
    request: u64,
    referrer: u64,
    vhost: u64,
}

impl Hashes {
    /// The hashes of `l`'s keys, its agent's `agent` ("" without one).
    #[inline]
    pub fn of(l: &Line<'_>, agent: &[u8]) -> Self {
        let built = built_hasher();
        let hash = |t: &[u8]| hash_from(&built, t);
        let opt = |t: Option<&[u8]>| t.map_or(0, hash);
        let (client, agent) = (hash(l.client), hash(agent));
        let day = day_of_hour(l.hour);
        Hashes {
            agent,
            day,
            client,
            visitor: visitor_hash(day, client, agent),
            request: hash(l.request),
            referrer: opt(l.referrer),
            vhost: opt(l.vhost),
        }
    }
}

impl Hashes {
    /// These hashes, of a line whose agent's key hashes to `agent` (its
    /// visitor's hash made again).
    pub fn with_agent(self, agent: u64) -> Self {
        Hashes {
            agent,
            visitor: visitor_hash(self.day, self.client, agent),
            ..self
        }
    }
}

/// The day of a local hour since the epoch.
pub fn day_of_hour(h: i64) -> i64 {
    if h == NO_TIME {
        NO_TIME
    } else {
        h.div_euclid(24)
    }
}

impl Panels {
    /// Counts one kept request whose agent has the id `agent` (that of ""
    /// for a line without one).
    #[inline]
    pub fn count(&mut self, l: &Line<'_>, h: &Hashes, agent: u32) {
        let b = l.bytes;
        let (client, hb) = self.clients.slot_hashed(l.client, h.client);
        hb.add(b);
        self.agents.values[agent as usize].kept.add(b);
        match &mut self.hour_run {
            Some((h, hb)) if *h == l.hour => hb.add(b),
            run => {
                if let Some((h, hb)) = run.take() {
                    self.hourly.entry(h).or_default().plus(hb);
                }
                let mut hb = Hb::default();
                hb.add(b);
                *run = Some((l.hour, hb));
            }
        }
        self.status[l.status as usize].add(b);
        // GoAccess's visitor: same day, client and agent, over requests not 4xx.
        let v = (l.status / 100 != 4).then(|| {
            // The day is the hashes' (`day_of_hour`, made once a line).
            let v = (self.visitors).id((h.day, client, agent), h.visitor);
            let s = &mut self.visitors.list[v as usize];
            if l.hour != NO_TIME {
                s.mark_hour((l.hour - h.day * 24) as u32);
            }
            match SLOT[l.status as usize] {
                NO_SLOT => {
                    self.status_pairs.insert(pair(l.status as u32, v));
                }
                slot => s.mark_slot(slot),
            }
            v
        });
        let (r, hits) = self.requests.keyed.slot_hashed(l.request, h.request);
        if l.status == 404 {
            hits.not_found.add(b);
        } else {
            hits.ok.add(b);
            if let Some(v) = v {
                self.visitors.pair_once(0, &mut self.requests.pairs, r, v);
            }
        }
        if let Some(t) = l.referrer {
            let rows = &mut self.referrers;
            let (r, hits) = rows.keyed.slot_hashed(t, h.referrer);
            hits.add(b);
            if let Some(v) = v {
                self.visitors.pair_once(1, &mut rows.pairs, r, v);
            }
        }
        if let Some(t) = l.vhost {
            let (r, hits) = self.vhosts.keyed.slot_hashed(t, h.vhost);
            hits.add(b);
            if let Some(v) = v {
                self.vhosts.pairs.insert(pair(r, v));
            }
        }
    }

    /// The hash of `v` ([`visitor_hash`]), its client and agent ids ours
    /// (a visitor read from a file).
    pub fn visitor_hash(&self, v: &Visitor) -> u64 {
        let (c, a) = (&self.clients.keys, &self.agents.keys);
        visitor_hash(v.day(), c.hash_of(v.client), a.hash_of(v.agent))
    }

    /// Loads the table slots of a line's keys, to be counted a few lines on.
    #[inline]
    pub fn prefetch(&self, h: &Hashes) {
        self.visitors.prefetch(h.day, h.visitor);
        for (keys, hash) in self.interned(h) {
            keys.prefetch(hash);
        }
    }

    /// Loads the keys and values of a line's slots, loaded by
    /// [`Panels::prefetch`].
    #[inline]
    pub fn prefetch_keys(&self, h: &Hashes) {
        self.visitors.prefetch_entry(h.day, h.visitor);
        self.clients.prefetch_entry(h.client);
        self.requests.keyed.prefetch_entry(h.request);
        self.referrers.keyed.prefetch_entry(h.referrer);
        self.vhosts.keyed.prefetch_entry(h.vhost);
    }

    /// The interners a line's keys go into, with the keys' hashes (the
    /// agent's, in a small table, is left out).
    #[inline]
    fn interned(&self, h: &Hashes) -> [(&Interner, u64); 4] {
        [
            (&self.clients.keys, h.client),
            (&self.requests.keyed.keys, h.request),
            (&self.referrers.keyed.keys, h.referrer),
            (&self.vhosts.keyed.keys, h.vhost),
        ]
    }

    /// Bytes held on the heap by what grows with the log's distinct
    /// strings, visitors and pairs (capacities: what `--memory` bounds).
    pub fn heap_bytes(&self) -> usize {
        self.clients.heap_bytes()
            + self.agents.heap_bytes()
            + self.visitors.heap_bytes()
            + self.status_pairs.heap_bytes()
            + self.requests.keyed.heap_bytes()
            + self.requests.pairs.heap_bytes()
            + self.referrers.keyed.heap_bytes()
            + self.referrers.pairs.heap_bytes()
            + self.vhosts.keyed.heap_bytes()
            + self.vhosts.pairs.heap_bytes()
    }

    /// Nothing counted: no line has keyed an agent (every line counted or
    /// left out as a bot does, `job::count`), a client, a visitor or an hour.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
            && self.clients.is_empty()
            && self.visitors.is_empty()
            && self.hour_run.is_none()
            && self.hourly.is_empty()
    }

    /// Sorts the (row, visitor) pairs for reading ([`Pairs::compact`]).
    /// The requests' pairs (most of them) are sorted on a thread of their own.
    pub fn finish(&mut self) {
        let Panels {
            status_pairs,
            requests,
            referrers,
            vhosts,
            ..
        } = self;
        std::thread::scope(|s| {
            s.spawn(|| requests.pairs.compact());
            status_pairs.compact();
            referrers.pairs.compact();
            vhosts.pairs.compact();
        });
    }

    /// Hits and bytes by local hour ([`Panels::hourly`] with the run).
    pub fn hours(&self) -> HashMap<i64, Hb> {
        let mut all = self.hourly.clone();
        if let Some((h, hb)) = self.hour_run {
            all.entry(h).or_default().plus(hb);
        }
        all
    }

    /// Folds `o` in: its keys re-interned, its ids renumbered. The rows of
    /// requests, referrers and virtual hosts are re-interned on a thread of
    /// their own while clients, agents and visitors are here (their pairs
    /// need the visitors' new ids, so they are renumbered after): the merge
    /// of two workers' counts of the 1 GiB bench log was ~0.2 s on one core.
    pub fn merge(&mut self, o: Panels) {
        let hours = o.hours();
        let Panels {
            clients,
            agents,
            visitors,
            requests,
            referrers,
            vhosts,
            ..
        } = self;
        // Their pairs are sorted in while their visitors are merged.
        let mut theirs = [
            o.status_pairs,
            o.requests.pairs,
            o.referrers.pairs,
            o.vhosts.pairs,
        ];
        let ((vmap, had), rows) = std::thread::scope(|s| {
            let rows = s.spawn(|| {
                let req = requests.keyed.merge(o.requests.keyed, ReqHits::plus);
                let refs = referrers.keyed.merge(o.referrers.keyed, Hb::plus);
                let r = (req, refs, vhosts.keyed.merge(o.vhosts.keyed, Hb::plus));
                for p in &mut theirs {
                    p.compact();
                }
                r
            });
            let cmap = clients.merge(o.clients, Hb::plus);
            let amap = agents.merge(o.agents, AgentHits::plus);
            let had = visitors.len() as u32;
            let vmap = visitors.merge(o.visitors, &cmap, &amap);
            (
                (vmap, had),
                rows.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        });
        for (h, hb) in hours {
            self.hourly.entry(h).or_default().plus(hb);
        }
        for (a, b) in self.status.iter_mut().zip(o.status) {
            a.plus(b);
        }
        // A pair of a visitor new here is new here: kept apart, unsorted.
        let renumber = |pairs: &mut Pairs, mut o: Pairs, rmap: Option<&[u32]>| {
            o.compact();
            let renumbered = o.into_vec().into_iter().map(|p| {
                let (r, v) = unpair(p);
                pair(rmap.map_or(r, |m| m[r as usize]), vmap[v as usize])
            });
            pairs.extend_merged(renumbered, had);
        };
        let (req, refs, vh) = (
            &mut self.requests.pairs,
            &mut self.referrers.pairs,
            &mut self.vhosts.pairs,
        );
        let [status_pairs, req_pairs, ref_pairs, vh_pairs] = theirs;
        std::thread::scope(|s| {
            s.spawn(|| renumber(req, req_pairs, Some(&rows.0)));
            renumber(&mut self.status_pairs, status_pairs, None);
            renumber(refs, ref_pairs, Some(&rows.1));
            renumber(vh, vh_pairs, Some(&rows.2));
        });
    }
}

/// The counts of one thread, or of all once merged.
#[derive(Default)]
pub struct Acc {
    /// Records read (not blank, not `#` comments).
    pub lines: u64,
    /// Records the format could not read, or without a valid time or status.
    pub failed: u64,
    /// Blank lines and `#` comments, skipped as GoAccess skips them.
    pub skipped: u64,
    /// Valid requests left out by `--bots`.
    pub excluded: u64,
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
    /// Per input of this run's scan, by its index: an input none of whose
    /// lines read is an error of the run (`run::unread`). Never saved: a
    /// state's or a partial's inputs are another run's.
    pub inputs: Vec<InputLines>,
    pub panels: Panels,
}

/// The lines of one input: read (not blank, not `#`), failed, and where the
/// first failed one starts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InputLines {
    pub lines: u64,
    pub failed: u64,
    pub first_failed: u64,
}

impl InputLines {
    fn plus(&mut self, o: InputLines) {
        if o.failed > 0 && (self.failed == 0 || o.first_failed < self.first_failed) {
            self.first_failed = o.first_failed;
        }
        self.lines += o.lines;
        self.failed += o.failed;
    }
}

/// How many failed records are named by offset.
pub const FAILED_SHOWN: usize = 5;

impl Acc {
    pub fn fail(&mut self, input: usize, offset: u64) {
        self.failed += 1;
        note_failed(&mut self.failed_at, (input, offset));
        let failed = InputLines {
            lines: 0,
            failed: 1,
            first_failed: offset,
        };
        self.input(input).plus(failed);
    }

    /// Input `i`'s lines.
    pub fn input(&mut self, i: usize) -> &mut InputLines {
        if self.inputs.len() <= i {
            self.inputs.resize(i + 1, InputLines::default());
        }
        &mut self.inputs[i]
    }

    #[inline]
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
        self.lines += other.lines;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.excluded += other.excluded;
        self.hits += other.hits;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.not_found_hits += other.not_found_hits;
        for (t, o) in [other.first, other.last].into_iter().flatten() {
            self.time(t, o);
        }
        for at in other.failed_at {
            note_failed(&mut self.failed_at, at);
        }
        for (i, o) in other.inputs.into_iter().enumerate() {
            self.input(i).plus(o);
        }
        self.panels.merge(other.panels);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intern::hash_key;

    fn line<'a>(client: &'a [u8], request: &'a [u8], status: u16, hour: i64) -> Line<'a> {
        Line {
            client,
            request,
            status,
            bytes: 10,
            hour,
            referrer: Some(b"-"),
            vhost: None,
        }
    }

    fn count(a: &mut Acc, l: &Line<'_>, agent: &[u8]) {
        let (g, _) = a.panels.agents.slot(agent);
        a.panels.count(l, &Hashes::of(l, agent), g);
    }

    /// Visitors' ids through the table's growth, as a plain map gives them,
    /// with the hash from ids equal to the hash from the lines' keys.
    /// A line's hashes are each key's own (`hash_key`, as the interners,
    /// merges and spill partitions hash them), in every thread.
    #[test]
    fn a_lines_hashes_are_its_keys() {
        let check = || {
            for i in 0..500u32 {
                let client = format!("10.{}.0.{}", i % 7, i);
                let request = format!("GET /{} HTTP/1.1", "x".repeat(i as usize % 300));
                let agent = "Mozilla/5.0 ".repeat(i as usize % 20);
                let mut l = line(
                    client.as_bytes(),
                    request.as_bytes(),
                    200,
                    24 * 9000 + i as i64,
                );
                let referrer = format!("http://r{i}/");
                l.referrer = (i % 3 != 0).then_some(referrer.as_bytes());
                let h = Hashes::of(&l, agent.as_bytes());
                let key = |t: Option<&[u8]>| t.map_or(0, hash_key);
                assert_eq!(h.client, hash_key(l.client));
                assert_eq!(h.agent, hash_key(agent.as_bytes()));
                assert_eq!(h.request, hash_key(l.request));
                assert_eq!((h.referrer, h.vhost), (key(l.referrer), key(l.vhost)));
                assert_eq!(h.day, day_of_hour(l.hour));
                let (c, a) = (hash_key(l.client), hash_key(agent.as_bytes()));
                assert_eq!(h.visitor, visitor_hash(day_of_hour(l.hour), c, a));
            }
        };
        check();
        std::thread::scope(|s| {
            s.spawn(check);
            s.spawn(check);
        });
    }

    #[test]
    fn visitor_ids_are_those_of_a_plain_map() {
        let mut p = Panels::default();
        let mut plain = std::collections::HashMap::new();
        for round in 0..2 {
            for i in 0..20_000u32 {
                let (client, agent) = (format!("c{}", i % 997), format!("a{}", i % 13));
                let day = (i % 7) as i64 - 3;
                let (c, _) = p.clients.slot(client.as_bytes());
                let (a, _) = p.agents.slot(agent.as_bytes());
                let hash =
                    visitor_hash(day, hash_key(client.as_bytes()), hash_key(agent.as_bytes()));
                let id = p.visitors.id((day, c, a), hash);
                let next = plain.len() as u32;
                assert_eq!(
                    id,
                    *plain.entry((day, c, a)).or_insert(next),
                    "round {round}"
                );
                let v = Visitor::new(day, c, a);
                assert_eq!(p.visitor_hash(&v), hash);
            }
        }
        assert_eq!(p.visitors.len(), plain.len());
        tables_hold_their_days(&p.visitors);
    }

    /// Each day's table holds that day's visitors, each once, and the
    /// slots are counted.
    fn tables_hold_their_days(v: &Visitors) {
        let held = v.days.iter().flat_map(|t| {
            let ids = t.slots.iter().filter(|&&s| s != 0).map(|&s| s as u32 - 1);
            ids.map(move |id| (t.day, id))
        });
        let mut seen = vec![false; v.len()];
        for (day, id) in held {
            assert_eq!(v.list[id as usize].day(), day);
            assert!(!std::mem::replace(&mut seen[id as usize], true));
        }
        assert!(seen.iter().all(|&s| s));
        let slots: usize = v.days.iter().map(|t| t.slots.len()).sum();
        assert_eq!(v.slots, slots);
    }

    /// Visitor `i` of a test: its client, agent and day (`first + i % days`).
    fn nth_visitor(p: &mut Panels, i: u32, first: i64, days: u32) -> u32 {
        let (client, agent) = (format!("c{}", i % 397), format!("a{}", i % 5));
        let day = first + (i % days) as i64;
        let (c, _) = p.clients.slot(client.as_bytes());
        let (a, _) = p.agents.slot(agent.as_bytes());
        let hash = visitor_hash(day, hash_key(client.as_bytes()), hash_key(agent.as_bytes()));
        p.visitors.id((day, c, a), hash)
    }

    /// A merge's visitors, of days both counts have and of days only the
    /// other has (whose tables are taken whole, `Visitors::adopt`), are
    /// numbered as a plain map numbers them, keep their marks, and are
    /// found again (and new ones added) in the merged tables.
    #[test]
    fn merged_visitors_are_those_of_a_plain_map() {
        let (mut a, mut b) = (Panels::default(), Panels::default());
        // a: days 0..5; b: days 3..10, its clients and agents first seen
        // in another order than a's.
        for i in 0..5_000 {
            nth_visitor(&mut a, i, 0, 5);
        }
        for i in (0..6_000).rev() {
            let v = nth_visitor(&mut b, i, 3, 7);
            b.visitors.list[v as usize].mark_hour(i % 24);
            b.visitors.list[v as usize].last = [1, 1];
        }
        let key = |p: &Panels, v: &Visitor| {
            let c = p.clients.keys.get(v.client).to_vec();
            (v.day(), c, p.agents.keys.get(v.agent).to_vec())
        };
        let mut plain = std::collections::HashMap::new();
        for (i, v) in a.visitors.list.iter().enumerate() {
            plain.insert(key(&a, v), (i as u32, v.marks));
        }
        let theirs: Vec<_> = b
            .visitors
            .list
            .iter()
            .map(|v| (key(&b, v), v.marks))
            .collect();
        for (k, marks) in &theirs {
            let next = plain.len() as u32;
            plain.entry(k.clone()).or_insert((next, 0)).1 |= marks;
        }
        let cmap = a.clients.merge(std::mem::take(&mut b.clients), Hb::plus);
        let amap = a
            .agents
            .merge(std::mem::take(&mut b.agents), AgentHits::plus);
        let ids = a
            .visitors
            .merge(std::mem::take(&mut b.visitors), &cmap, &amap);
        assert_eq!(a.visitors.len(), plain.len());
        for ((k, _), id) in theirs.iter().zip(&ids) {
            assert_eq!(plain[k].0, *id);
        }
        for (i, v) in a.visitors.list.iter().enumerate() {
            assert_eq!(plain[&key(&a, v)], (i as u32, v.marks));
            assert!(v.last == [0, 0] || i < 5_000);
        }
        tables_hold_their_days(&a.visitors);
        // Found again, and counted on: days 0..12, 9..12 new.
        for i in 0..12_000 {
            let v = nth_visitor(&mut a, i, 0, 12);
            let k = key(&a, &a.visitors.list[v as usize]);
            let next = plain.len() as u32;
            assert_eq!(plain.entry(k).or_insert((next, 0)).0, v);
        }
        assert_eq!(a.visitors.len(), plain.len());
        tables_hold_their_days(&a.visitors);
    }

    #[test]
    fn merge_renumbers_visitors_and_keeps_the_first_failures() {
        let mut a = Acc::default();
        count(
            &mut a,
            &line(b"x", b"GET / HTTP/1.1", 200, 24 * 100 + 3),
            b"ua",
        );
        let mut b = Acc::default();
        count(
            &mut b,
            &line(b"y", b"GET / HTTP/1.1", 200, 24 * 100 + 3),
            b"ua",
        );
        count(
            &mut b,
            &line(b"x", b"GET / HTTP/1.1", 299, 24 * 100 + 5),
            b"ua",
        );
        count(
            &mut b,
            &line(b"x", b"GET /a HTTP/1.1", 404, 24 * 100 + 5),
            b"ua",
        );
        for i in 0..7 {
            b.fail(0, 100 - i);
        }
        a.fail(0, 1);
        a.merge(b);
        a.panels.finish();
        let p = &a.panels;
        assert_eq!(p.visitors.len(), 2);
        let x = &p.visitors.list[0];
        assert_eq!((x.hours(), x.status()), (1 << 3 | 1 << 5, 1 << 4));
        assert_eq!(p.status_pairs.len(), 1);
        assert_eq!(p.requests.keyed.len(), 2);
        assert_eq!(p.requests.pairs.len(), 2);
        assert_eq!(p.referrers.pairs.len(), 2);
        assert_eq!(p.clients.values[0].hits, 3);
        assert_eq!(a.failed, 8);
        assert_eq!(
            a.failed_at,
            vec![(0, 1), (0, 94), (0, 95), (0, 96), (0, 97)]
        );
    }
}
