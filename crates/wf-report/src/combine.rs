//! The rows of a spill's partitions (`spill`) added up into one report.
//!
//! Partitions share no visitor (each holds the visitors of its clients), so
//! a row's hits, bytes and visitors over the whole log are the sums of the
//! row's in each partition, and the unique visitors the sum of each
//! partition's. Hosts are the partitions' own clients, so they never meet:
//! only the top `--max-rows` of them are kept (by the report's own order)
//! with the sums over all, since there are as many as clients. The panels
//! of as many rows as the log has URLs or referrers (requests, static files,
//! 404s, referrers, referring sites, virtual hosts) are added up by key a
//! partition at a time too: each group's rows are written to [`PARTS`] files
//! by a hash of their key, then each file is added up and cut to its top
//! rows. The small panels (days, hours, agents, statuses, extensions) are
//! added up in memory.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use hashbrown::HashMap;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use wf_core::jobs::partial::{Reader, Writer};

use crate::acc::{Acc, Hb};
use crate::intern::Keyed;
use crate::report::{self, Meta, Report};
use crate::spill::{part_of, Spill, SpillError, PARTS};
use crate::tally::{self, Cuts, Pair, Request, Sums, Tallies, Tally};

type Map<K> = BTreeMap<K, (Hb, u64)>;

/// The partitions' rows, added up.
struct Combined {
    max_rows: usize,
    rows: RowFiles,
    unique_visitors: u64,
    bot: u64,
    days: Map<i64>,
    hourly: Map<i64>,
    hours: Map<u8>,
    extensions: Map<&'static str>,
    hosts: Vec<Tally<Vec<u8>>>,
    hosts_sums: Sums,
    vhosts: Vec<Tally<Vec<u8>>>,
    referrers: Vec<Tally<Vec<u8>>>,
    referring_sites: Vec<Tally<Vec<u8>>>,
    os: Map<Pair>,
    browsers: Map<Pair>,
    bots: Map<Pair>,
    status: Map<u16>,
    status_groups: HashMap<&'static str, u64>,
}

fn add<K: Ord>(m: &mut Map<K>, rows: Vec<Tally<K>>) {
    for r in rows {
        let e = m.entry(r.key).or_default();
        e.0.plus(r.hb);
        e.1 += r.visitors;
    }
}

fn rows<K: Ord>(m: Map<K>) -> Vec<Tally<K>> {
    m.into_iter()
        .map(|(key, (hb, visitors))| Tally { key, hb, visitors })
        .collect()
}

/// Rows whose keys borrow from `rows` (what [`Tallies`] holds).
fn borrowed(rows: &[Tally<Vec<u8>>]) -> Vec<Tally<&[u8]>> {
    rows.iter().map(borrow).collect()
}

fn borrow(t: &Tally<Vec<u8>>) -> Tally<&[u8]> {
    Tally {
        key: &t.key[..],
        hb: t.hb,
        visitors: t.visitors,
    }
}

/// Keeps the top `max` rows, as `report` chooses them (most hits, then the
/// smallest key as text).
fn cut<K: AsRef<[u8]>>(rows: &mut Vec<Tally<K>>, max: usize) {
    cut_by(rows, max, |a, b| text_order(a.key.as_ref(), b.key.as_ref()));
}

/// Two keys in the order of their texts (`String::from_utf8_lossy`'s, as
/// `report` orders rows), then of their bytes (keys alike as text): that
/// of their bytes when both are ASCII, without the UTF-8 pass (44 of the
/// ~330 samples of the 10 GiB bench log's last 0.35 s, after the groups'
/// reading, perf).
fn text_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    let text = String::from_utf8_lossy(a).cmp(&String::from_utf8_lossy(b));
    text.then_with(|| a.cmp(b))
}

/// Keeps the top `max` rows: most hits, then by `names`.
fn cut_by<K>(
    rows: &mut Vec<Tally<K>>,
    max: usize,
    names: impl Fn(&Tally<K>, &Tally<K>) -> Ordering,
) {
    let order = |a: &Tally<K>, b: &Tally<K>| b.hb.hits.cmp(&a.hb.hits).then_with(|| names(a, b));
    if max < rows.len() {
        rows.select_nth_unstable_by(max, order);
        rows.truncate(max);
    }
}

impl Combined {
    fn add(&mut self, tl: Tallies<'_>) -> Result<(), SpillError> {
        self.unique_visitors += tl.unique_visitors;
        self.bot += tl.bot;
        add(&mut self.days, tl.days);
        add(&mut self.hourly, tl.hourly);
        add(&mut self.hours, tl.hours);
        for (panel, rows) in [tl.requests, tl.static_requests, tl.not_found]
            .into_iter()
            .enumerate()
        {
            for r in rows {
                self.rows.request(panel, &r)?;
            }
        }
        for (panel, rows) in [(REFERRERS, tl.referrers), (SITES, tl.referring_sites)] {
            for r in rows {
                self.rows.write(panel, r.key, r.hb, r.visitors)?;
            }
        }
        for r in tl.vhosts {
            self.rows.write(VHOSTS, r.key, r.hb, r.visitors)?;
        }
        add(&mut self.extensions, tl.extensions);
        add(&mut self.os, tl.os);
        add(&mut self.browsers, tl.browsers);
        add(&mut self.bots, tl.bots);
        add(&mut self.status, tl.status);
        for (g, n) in tl.status_groups {
            *self.status_groups.entry(g).or_default() += n;
        }
        let mut hosts = tl.hosts;
        for h in &hosts {
            let s = &mut self.hosts_sums;
            s.hits += h.hb.hits;
            s.bytes = s.bytes.saturating_add(h.hb.bytes);
            s.visitors += h.visitors;
            s.rows += 1;
        }
        cut(&mut hosts, self.max_rows);
        self.hosts.extend(hosts.into_iter().map(|h| Tally {
            key: h.key.to_vec(),
            hb: h.hb,
            visitors: h.visitors,
        }));
        cut(&mut self.hosts, self.max_rows);
        Ok(())
    }

    /// The rows as one [`Tallies`]; `human`: valid requests of the log.
    fn tallies(&mut self, valid: u64) -> Result<Tallies<'_>, SpillError> {
        let keyed = self.rows.add_up(self.max_rows)?;
        let days = rows(std::mem::take(&mut self.days));
        let hourly = rows(std::mem::take(&mut self.hourly));
        let hours = rows(std::mem::take(&mut self.hours));
        let extensions = rows(std::mem::take(&mut self.extensions));
        let os = rows(std::mem::take(&mut self.os));
        let browsers = rows(std::mem::take(&mut self.browsers));
        let bots = rows(std::mem::take(&mut self.bots));
        let status = rows(std::mem::take(&mut self.status));
        let status_groups = std::mem::take(&mut self.status_groups);
        let [requests, static_requests, not_found] = keyed.requests;
        let [referrers, referring_sites, vhosts] = keyed.texts;
        (self.vhosts, self.referrers) = (vhosts, referrers);
        self.referring_sites = referring_sites;
        let this: &Self = self;
        let [sr, ss, sn, sf, si, sv] = keyed.sums.map(Some);
        Ok(Tallies {
            unique_visitors: this.unique_visitors,
            human: valid - this.bot,
            bot: this.bot,
            days,
            hourly,
            hours,
            requests,
            static_requests,
            not_found,
            extensions,
            hosts: borrowed(&this.hosts),
            os,
            browsers,
            bots,
            status,
            status_groups,
            referrers: borrowed(&this.referrers),
            referring_sites: borrowed(&this.referring_sites),
            vhosts: borrowed(&this.vhosts),
            cut: Cuts {
                hosts: Some(this.hosts_sums),
                requests: sr,
                static_requests: ss,
                not_found: sn,
                referrers: sf,
                referring_sites: si,
                vhosts: sv,
            },
        })
    }
}

/// The report of `a` whose panels were spilled to `spill` (the rest of
/// them, in `a`, is spilled too and read back with them).
pub fn report(a: &mut Acc, spill: &Spill, meta: &Meta) -> Result<Report, SpillError> {
    // Every partition classifies its agents: with every rule, compiled once
    // (`agent::rules_for` would compile those of each partition's agents).
    crate::agent::parsers();
    let r = combined(a, spill, meta);
    spill.remove();
    r
}

fn combined(a: &mut Acc, spill: &Spill, meta: &Meta) -> Result<Report, SpillError> {
    let c = Combined {
        max_rows: meta.max_rows,
        rows: RowFiles::new(spill)?,
        unique_visitors: 0,
        bot: 0,
        days: Map::new(),
        hourly: Map::new(),
        hours: Map::new(),
        extensions: Map::new(),
        hosts: Vec::new(),
        hosts_sums: Sums::default(),
        vhosts: Vec::new(),
        referrers: Vec::new(),
        referring_sites: Vec::new(),
        os: Map::new(),
        browsers: Map::new(),
        bots: Map::new(),
        status: Map::new(),
        status_groups: HashMap::new(),
    };
    let (hits, excluded) = (a.hits, a.excluded);
    // Groups are counted on one or two threads, added up one at a time.
    let added = Mutex::new((c, Ok(())));
    spill.read_back(&mut a.panels, |panels| {
        // The totals only keep `tally`'s human count from going below zero;
        // `tallies` makes it again from the sums.
        let mut part = Acc {
            hits,
            excluded,
            panels,
            ..Acc::default()
        };
        part.panels.finish();
        let tl = tally::tally(&part);
        let mut added = added.lock().unwrap();
        let (c, failed) = &mut *added;
        if failed.is_ok() {
            *failed = c.add(tl);
        }
        failed.is_ok()
    })?;
    let (mut c, failed) = added.into_inner().unwrap();
    failed?;
    let tl = c.tallies(hits + excluded)?;
    Ok(report::from_tallies(a, &tl, meta))
}

/// Panels of [`RowFiles`]: requests, static requests, 404s (0, 1, 2), then:
const REFERRERS: usize = 3;
const SITES: usize = 4;
const VHOSTS: usize = 5;

/// The keyed panels' rows of every group, in [`PARTS`] files by key.
struct RowFiles {
    files: Vec<(PathBuf, BufWriter<File>)>,
    /// Methods and protocols of the requests written (a key holds their text).
    names: Vec<&'static str>,
    /// The buffers of a row's key and bytes, kept for the next ([`RowFiles::write`]).
    key: Vec<u8>,
    line: Vec<u8>,
}

/// The keyed panels added up: top rows and sums over every row.
struct Keyed6 {
    requests: [Vec<Tally<Request>>; 3],
    texts: [Vec<Tally<Vec<u8>>>; 3],
    sums: [Sums; 6],
}

impl RowFiles {
    fn new(spill: &Spill) -> Result<Self, SpillError> {
        let files = (0..PARTS)
            .map(|q| spill.create(&format!("rows-{q}")))
            .collect::<Result<_, _>>()?;
        Ok(RowFiles {
            files,
            names: Vec::new(),
            key: Vec::new(),
            line: Vec::new(),
        })
    }

    fn request(&mut self, panel: usize, r: &Tally<Request>) -> Result<(), SpillError> {
        for n in [r.key.method, r.key.protocol] {
            if !self.names.contains(&n) {
                self.names.push(n);
            }
        }
        let (k, mut key) = (&r.key, std::mem::take(&mut self.key));
        key.clear();
        key.extend_from_slice(k.method.as_bytes());
        key.push(0);
        key.extend_from_slice(k.protocol.as_bytes());
        key.push(0);
        key.extend_from_slice(&k.url);
        let written = self.write(panel, &key, r.hb, r.visitors);
        self.key = key;
        written
    }

    /// One row, through a buffer kept for the next (not a buffer made,
    /// grown and freed for each row: malloc, realloc and free were a fifth
    /// of the tally thread's samples after the 10 GiB bench log's scan).
    fn write(&mut self, panel: usize, key: &[u8], hb: Hb, visitors: u64) -> Result<(), SpillError> {
        let mut w = Writer::appending(std::mem::take(&mut self.line));
        w.uint(panel as u64);
        w.bytes(key);
        w.uint(hb.hits);
        w.uint(hb.bytes);
        w.uint(visitors);
        self.line = w.into_bytes();
        let (path, f) = &mut self.files[part_of(key) as usize];
        let written = f.write_all(&self.line).map_err(|error| SpillError {
            path: path.clone(),
            what: "cannot write the spill file",
            error,
        });
        self.line.clear();
        written
    }

    /// Each file added up by key, its top `max` rows per panel kept.
    fn add_up(&mut self, max: usize) -> Result<Keyed6, SpillError> {
        let mut out = Keyed6 {
            requests: Default::default(),
            texts: Default::default(),
            sums: [Sums::default(); 6],
        };
        for (path, f) in std::mem::take(&mut self.files) {
            let err = |what, error| SpillError {
                path: path.clone(),
                what,
                error,
            };
            drop(
                f.into_inner()
                    .map_err(|e| err("cannot write the spill file", e.into_error()))?,
            );
            let bytes = std::fs::read(&path).map_err(|e| err("cannot read the spill file", e))?;
            let _ = std::fs::remove_file(&path);
            let mut panels: [Keyed<(Hb, u64)>; 6] = Default::default();
            let mut r = Reader::new(&bytes);
            while r.left() > 0 {
                let damaged = |d| {
                    let e = std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{d:?}"));
                    err("damaged spill file", e)
                };
                let panel = r.index(5).map_err(damaged)?;
                let key = r.bytes().map_err(damaged)?;
                let (hits, b, v) = (r.uint(), r.uint(), r.uint());
                let (hits, b, v) = (
                    hits.map_err(damaged)?,
                    b.map_err(damaged)?,
                    v.map_err(damaged)?,
                );
                let e = panels[panel].slot(key).1;
                e.0.plus(Hb { hits, bytes: b });
                e.1 += v;
            }
            for (i, k) in panels.iter().enumerate() {
                let s = &mut out.sums[i];
                for (hb, v) in &k.values {
                    s.hits += hb.hits;
                    s.bytes = s.bytes.saturating_add(hb.bytes);
                    s.visitors += v;
                }
                s.rows += k.len() as u64;
            }
            let [r0, r1, r2, t0, t1, t2] = panels;
            for (i, k) in [r0, r1, r2].into_iter().enumerate() {
                let mut rows = self.requests_of(&k);
                // As `report` orders requests: method, protocol, URL as text,
                // then as bytes (`text_order`).
                cut_by(&mut rows, max, |a, b| {
                    let (a, b) = (&a.key, &b.key);
                    (a.method, a.protocol)
                        .cmp(&(b.method, b.protocol))
                        .then_with(|| text_order(&a.url, &b.url))
                });
                out.requests[i].append(&mut rows);
            }
            for (i, k) in [t0, t1, t2].into_iter().enumerate() {
                let mut rows: Vec<Tally<Vec<u8>>> = k
                    .keys
                    .keys()
                    .zip(&k.values)
                    .map(|(key, &(hb, visitors))| Tally {
                        key: key.to_vec(),
                        hb,
                        visitors,
                    })
                    .collect();
                cut(&mut rows, max);
                out.texts[i].append(&mut rows);
            }
        }
        Ok(out)
    }

    /// Request rows of keys "method NUL protocol NUL url".
    fn requests_of(&self, k: &Keyed<(Hb, u64)>) -> Vec<Tally<Request>> {
        let name = |b: &[u8]| {
            self.names
                .iter()
                .copied()
                .find(|n| n.as_bytes() == b)
                .unwrap_or("-")
        };
        k.keys
            .keys()
            .zip(&k.values)
            .map(|(key, &(hb, visitors))| {
                let mut parts = key.splitn(3, |&c| c == 0);
                let (m, p) = (parts.next().unwrap_or(b""), parts.next().unwrap_or(b""));
                Tally {
                    key: Request {
                        method: name(m),
                        protocol: name(p),
                        url: parts.next().unwrap_or(b"").to_vec(),
                    },
                    hb,
                    visitors,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::text_order;

    /// Keys of ASCII bytes, of UTF-8 and of bytes that are not: the order
    /// of their lossy texts (fails if any key is ordered by its bytes),
    /// then of their bytes where the texts are alike (`\xff`, `\xfe` and
    /// the replacement character itself).
    #[test]
    fn keys_are_in_the_order_of_their_texts() {
        let keys: Vec<&[u8]> = vec![
            b"",
            b"a",
            b"ab",
            b"b",
            b"\x7f",
            "é".as_bytes(),
            "\u{fffd}".as_bytes(),
            "\u{10000}".as_bytes(),
            b"\xff",
            b"a\xff",
            b"a\xc3",
            b"\xef\xbf\xbe",
            "\u{ffff}".as_bytes(),
            b"\xf0\x90\x80",
            b"\xfe",
            b"z",
        ];
        for a in &keys {
            for b in &keys {
                let lossy = String::from_utf8_lossy(a).cmp(&String::from_utf8_lossy(b));
                assert_eq!(text_order(a, b), lossy.then(a.cmp(b)), "{a:?} {b:?}");
            }
        }
    }
}
