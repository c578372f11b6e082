//! The finished report: the merged counts as panels of rows, in GoAccess's
//! JSON shape where a panel exists in both (`general`, then per panel
//! `metadata` totals and `data` rows of `hits`/`visitors`/`bytes` with
//! `count` and `percent`, `items` under a group). `--json`, `-o x.json`, the
//! terminal report and the HTML page are all made from this one value, so
//! their numbers cannot differ.
//!
//! Rows are sorted by hits, most first, then by key (byte order): the order is
//! the same whatever the chunking. Totals in `metadata` are over every row,
//! also those beyond `--max-rows`. GoAccess's avg/max/min are left out.

use serde::Serialize;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::acc::{Acc, NO_TIME};
use crate::rules;
use crate::tally::{self, Pair, Request, Tallies, Tally};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub general: General,
    pub visitors: Panel,
    /// Visitors and requests per hour, when the log spans under three days.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visitors_per_hour: Option<Panel>,
    pub requests: Panel,
    pub static_requests: Panel,
    pub not_found: Panel,
    pub static_extensions: Panel,
    pub hosts: Panel,
    pub os: Panel,
    pub browsers: Panel,
    pub bots: Panel,
    pub visit_time: Panel,
    pub status_codes: Panel,
    pub referring_sites: Panel,
    pub referrers: Panel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vhosts: Option<Panel>,
}

/// The overview, with GoAccess's names where it has the figure.
#[derive(Debug, Clone, Serialize)]
pub struct General {
    /// First and last day as GoAccess writes them (`17/Jun/2007`), in the log's zone.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// First and last request time, RFC 3339 in the log's zone.
    pub first_time: Option<String>,
    pub last_time: Option<String>,
    pub total_requests: u64,
    pub valid_requests: u64,
    pub failed_requests: u64,
    /// Blank lines and `#` comments (GoAccess skips them too).
    pub skipped_lines: u64,
    /// Valid requests left out by `--bots`.
    pub excluded_hits: u64,
    pub human_requests: u64,
    pub bot_requests: u64,
    pub unique_visitors: u64,
    pub unique_files: u64,
    pub unique_static_files: u64,
    pub unique_not_found: u64,
    pub unique_referrers: u64,
    /// Requests answered 404.
    pub not_found_requests: u64,
    pub bandwidth: u64,
    pub log_size: u64,
    pub log_path: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    pub metadata: Metadata,
    pub data: Vec<PanelRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Metadata {
    pub hits: Total,
    pub visitors: Total,
    pub bytes: Total,
    /// Rows in the panel (also those beyond `--max-rows`).
    pub data: Total,
}

#[derive(Debug, Clone, Serialize)]
pub struct Total {
    pub total: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct Value {
    pub value: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PanelRow {
    pub hits: Count,
    pub visitors: Count,
    pub bytes: Count,
    pub data: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<PanelRow>,
    /// The hosts panel's reverse-DNS name, with `--resolve` only (empty:
    /// none found in time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

/// A number and its share of the report's total, as GoAccess writes it ("05.37").
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub count: u64,
    pub percent: String,
}

/// What the rows' shares are of.
#[derive(Clone, Copy)]
struct Totals {
    hits: u64,
    visitors: u64,
    bytes: u64,
}

fn percent(n: u64, of: u64) -> String {
    let p = if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    };
    format!("{p:05.2}")
}

fn row(t: Totals, data: String, hits: u64, visitors: u64, bytes: u64) -> PanelRow {
    PanelRow {
        hits: Count {
            count: hits,
            percent: percent(hits, t.hits),
        },
        visitors: Count {
            count: visitors,
            percent: percent(visitors, t.visitors),
        },
        bytes: Count {
            count: bytes,
            percent: percent(bytes, t.bytes),
        },
        data,
        method: None,
        protocol: None,
        items: Vec::new(),
        hostname: None,
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The panel of `rows` (key, row), sorted by hits then key, cut at `max`.
fn panel(mut rows: Vec<(String, PanelRow)>, max: usize, sort: bool) -> Panel {
    if sort {
        rows.sort_by(|a, b| b.1.hits.count.cmp(&a.1.hits.count).then(a.0.cmp(&b.0)));
    }
    let sum = |f: fn(&PanelRow) -> u64| Total {
        total: Value {
            value: sum_of(rows.iter().map(|(_, r)| f(r))),
        },
    };
    let metadata = Metadata {
        hits: sum(|r| r.hits.count),
        visitors: sum(|r| r.visitors.count),
        bytes: sum(|r| r.bytes.count),
        data: Total {
            total: Value {
                value: rows.len() as u64,
            },
        },
    };
    rows.truncate(max);
    Panel {
        metadata,
        data: rows.into_iter().map(|(_, r)| r).collect(),
    }
}

/// The `max` rows of most hits, then of the smallest `key`, sorted so: a
/// selection over every row, then a sort of the kept ones (a panel of
/// 100,000 URLs keeps 1,000: making and sorting every row's text was most
/// of the report's time after the scan). The keys are made only for the
/// rows with at least the hits of the `max`-th most: the text of every one
/// of the bench log's 190,000 hosts was 12 of the 22 ms these panels took.
fn top<'a, T, K: Ord>(
    rows: &'a [T],
    hits: impl Fn(&T) -> u64,
    key: impl Fn(&'a T) -> K,
    max: usize,
) -> Vec<&'a T> {
    let least = match max.checked_sub(1).filter(|&m| m < rows.len()) {
        Some(m) => {
            let mut h: Vec<u64> = rows.iter().map(&hits).collect();
            *h.select_nth_unstable_by(m, |a, b| b.cmp(a)).1
        }
        None if max == 0 => return Vec::new(),
        None => 0,
    };
    let mut v: Vec<(u64, K, &T)> = rows
        .iter()
        .filter(|r| hits(r) >= least)
        .map(|r| (hits(r), key(r), r))
        .collect();
    let order = |a: &(u64, K, &T), b: &(u64, K, &T)| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1));
    if max < v.len() {
        v.select_nth_unstable_by(max, order);
        v.truncate(max);
    }
    v.sort_unstable_by(order);
    v.into_iter().map(|(_, _, r)| r).collect()
}

/// Totals over every row of a panel.
/// A sum that stops at `u64::MAX` (see [`crate::acc::Hb`]).
fn sum_of(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0, u64::saturating_add)
}

fn metadata<K>(rows: &[Tally<K>]) -> Metadata {
    let total = |value| Total {
        total: Value { value },
    };
    Metadata {
        hits: total(sum_of(rows.iter().map(|r| r.hb.hits))),
        visitors: total(sum_of(rows.iter().map(|r| r.visitors))),
        bytes: total(sum_of(rows.iter().map(|r| r.hb.bytes))),
        data: total(rows.len() as u64),
    }
}

/// A panel of one level, named by `name`: its top `max` rows. Rows of the
/// same hits and name (keys that are not UTF-8 alike but for their bytes
/// left out) are in the order of their keys, not that of their coming:
/// which of them a spilled report kept depended on its partitions.
fn simple<'k, K: Ord + 'k>(
    t: Totals,
    rows: &'k [Tally<K>],
    name: impl Fn(&'k K) -> Cow<'k, str>,
    max: usize,
) -> Panel {
    let key = |r: &'k Tally<K>| (name(&r.key), &r.key);
    let data = top(rows, |r| r.hb.hits, key, max)
        .into_iter()
        .map(|r| {
            row(
                t,
                name(&r.key).into_owned(),
                r.hb.hits,
                r.visitors,
                r.hb.bytes,
            )
        })
        .collect();
    Panel {
        metadata: metadata(rows),
        data,
    }
}

/// Requests, sorted by hits, then by method, protocol and URL (as their
/// text joined by NULs sorts), then by the URL's bytes (URLs alike as text).
fn requests(t: Totals, rows: &[Tally<Request>], max: usize) -> Panel {
    fn key(r: &Tally<Request>) -> (&str, &str, Cow<'_, str>, &[u8]) {
        let k = &r.key;
        (
            k.method,
            k.protocol,
            String::from_utf8_lossy(&k.url),
            &k.url,
        )
    }
    let data = top(rows, |r| r.hb.hits, key, max)
        .into_iter()
        .map(|r| {
            let k = &r.key;
            let mut pr = row(t, text(&k.url), r.hb.hits, r.visitors, r.hb.bytes);
            pr.method = Some(k.method.to_owned());
            pr.protocol = Some(k.protocol.to_owned());
            pr
        })
        .collect();
    Panel {
        metadata: metadata(rows),
        data,
    }
}

/// A group's hits, visitors, bytes and item rows.
type GroupSum = (u64, u64, u64, Vec<(String, PanelRow)>);

/// A two-level panel: groups, each with its items; a group's visitors are
/// `visitors(group)`, or the sum of its items' when the items' visitors are
/// disjoint (`None`: a visitor has one agent). Its rows (`metadata.data`)
/// are its items, as GoAccess counts its own (its 61 OS versions in 7
/// groups on ongoing-1000, where this counted its 9 groups, not its 34 OS
/// versions; the names differ, so the numbers do too).
fn grouped(
    t: Totals,
    rows: &[Tally<Pair>],
    visitors: impl Fn(&str) -> Option<u64>,
    max: usize,
) -> Panel {
    let items = rows.len();
    let mut groups: BTreeMap<&str, GroupSum> = BTreeMap::new();
    for r in rows {
        let (g, i) = (&r.key.0[..], &r.key.1);
        let e = groups.entry(g).or_default();
        e.0 += r.hb.hits;
        e.1 += r.visitors;
        e.2 += r.hb.bytes;
        e.3.push((
            i.clone(),
            row(t, i.clone(), r.hb.hits, r.visitors, r.hb.bytes),
        ));
    }
    let rows = groups
        .into_iter()
        .map(|(g, (h, v, b, items))| {
            let v = visitors(g).unwrap_or(v);
            let mut pr = row(t, g.to_owned(), h, v, b);
            pr.items = panel(items, max, true).data;
            (g.to_owned(), pr)
        })
        .collect();
    let mut p = panel(rows, max, true);
    p.metadata.data.total.value = items as u64;
    p
}

fn status(t: Totals, tl: &Tallies<'_>, max: usize) -> Panel {
    let rows: Vec<Tally<Pair>> = tl
        .status
        .iter()
        .map(|r| Tally {
            key: (
                rules::status_group(r.key).to_owned(),
                rules::status_label(r.key),
            ),
            hb: r.hb,
            visitors: r.visitors,
        })
        .collect();
    let groups = |g: &str| Some(tl.status_groups.get(g).copied().unwrap_or(0));
    grouped(t, &rows, groups, max)
}

/// `17/Jun/2007` and `20070617` of a day number.
fn day_names(day: i64) -> (String, String) {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d) = civil_from_days(day);
    (
        format!("{d:02}/{}/{y:04}", MONTHS[m as usize - 1]),
        format!("{y:04}{m:02}{d:02}"),
    )
}

/// Howard Hinnant's `civil_from_days`: (year, month 1-12, day 1-31).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// RFC 3339 in the zone `offset` (seconds).
fn rfc3339(utc: i64, offset: i64) -> String {
    let local = utc.div_euclid(1_000_000) + offset;
    let (y, m, d) = civil_from_days(local.div_euclid(86_400));
    let s = local.rem_euclid(86_400);
    let sign = if offset < 0 { '-' } else { '+' };
    let o = offset.abs();
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        o / 3600,
        o / 60 % 60
    )
}

/// The whole report as JSON (pretty, with a final newline).
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("a report always serialises") + "\n"
}

/// The report as one line of JSON (`--json --follow`: one report a line).
pub fn json_line(r: &Report) -> String {
    serde_json::to_string(r).expect("a report always serialises") + "\n"
}

/// What the report needs besides the counts.
pub struct Meta {
    pub log_size: u64,
    pub log_path: Vec<String>,
    pub max_rows: usize,
    pub has_vhosts: bool,
    /// The format has user agents; without, the OS and browser panels are
    /// empty, as GoAccess leaves them (not one row "Other" of every request).
    pub has_agents: bool,
}

/// The report of merged counts.
pub fn build(a: &mut Acc, meta: &Meta) -> Report {
    a.panels.finish();
    let a = &*a;
    let tl = tally::tally(a);
    from_tallies(a, &tl, meta)
}

/// The report of the rows `tl` (of `a`'s panels, or of a spill's partitions
/// added up, `combine`) and `a`'s totals.
pub fn from_tallies(a: &Acc, tl: &Tallies<'_>, meta: &Meta) -> Report {
    let mut r = from_rows(a, tl, meta);
    // Rows beyond the top ones were dropped while adding up: their sums.
    let c = &tl.cut;
    let g = &mut r.general;
    for (n, s) in [
        (&mut g.unique_files, c.requests),
        (&mut g.unique_static_files, c.static_requests),
        (&mut g.unique_not_found, c.not_found),
        (&mut g.unique_referrers, c.referrers),
    ] {
        if let Some(s) = s {
            *n = s.rows;
        }
    }
    for (panel, s) in [
        (Some(&mut r.hosts), c.hosts),
        (Some(&mut r.requests), c.requests),
        (Some(&mut r.static_requests), c.static_requests),
        (Some(&mut r.not_found), c.not_found),
        (Some(&mut r.referrers), c.referrers),
        (Some(&mut r.referring_sites), c.referring_sites),
        (r.vhosts.as_mut(), c.vhosts),
    ] {
        if let (Some(p), Some(s)) = (panel, s) {
            let total = |value| Total {
                total: Value { value },
            };
            p.metadata = Metadata {
                hits: total(s.hits),
                visitors: total(s.visitors),
                bytes: total(s.bytes),
                data: total(s.rows),
            };
        }
    }
    r
}

fn from_rows(a: &Acc, tl: &Tallies<'_>, meta: &Meta) -> Report {
    let t = Totals {
        hits: a.hits,
        visitors: tl.unique_visitors,
        bytes: a.bytes,
    };
    let max = meta.max_rows;
    // The earliest and latest dates written, as GoAccess gives them: of a
    // log of several zones, not those of the first and last instants
    // (02/Jan +1400 is before 01/Jan -1200: the span ran backwards).
    let mut dated = tl.days.iter().map(|d| d.key).filter(|&d| d != NO_TIME);
    let (first_day, last_day) = (dated.next(), dated.next_back());
    let general = General {
        start_date: first_day.map(|d| day_names(d).0),
        end_date: last_day.or(first_day).map(|d| day_names(d).0),
        first_time: a.first.map(|(u, o)| rfc3339(u, o)),
        last_time: a.last.map(|(u, o)| rfc3339(u, o)),
        total_requests: a.lines,
        valid_requests: a.lines - a.failed,
        failed_requests: a.failed,
        skipped_lines: a.skipped,
        excluded_hits: a.excluded,
        human_requests: tl.human,
        bot_requests: tl.bot,
        unique_visitors: t.visitors,
        unique_files: tl.requests.len() as u64,
        unique_static_files: tl.static_requests.len() as u64,
        unique_not_found: tl.not_found.len() as u64,
        unique_referrers: tl.referrers.len() as u64,
        not_found_requests: a.not_found_hits,
        bandwidth: a.bytes,
        log_size: meta.log_size,
        log_path: meta.log_path.clone(),
    };
    fn bytes<'a>(k: &'a &[u8]) -> Cow<'a, str> {
        String::from_utf8_lossy(k)
    }
    let disjoint = |_: &str| None;
    let agents = |rows| if meta.has_agents { rows } else { &[][..] };
    Report {
        general,
        visitors: days(t, &tl.days),
        visitors_per_hour: short_span(a).then(|| hourly(t, &tl.hourly)),
        requests: requests(t, &tl.requests, max),
        static_requests: requests(t, &tl.static_requests, max),
        not_found: requests(t, &tl.not_found, max),
        static_extensions: simple(t, &tl.extensions, |e| Cow::Borrowed(*e), max),
        hosts: simple(t, &tl.hosts, bytes, max),
        os: grouped(t, agents(&tl.os), disjoint, max),
        browsers: grouped(t, agents(&tl.browsers), disjoint, max),
        bots: grouped(t, &tl.bots, disjoint, max),
        visit_time: hours(t, &tl.hours),
        status_codes: status(t, tl, max),
        referring_sites: simple(t, &tl.referring_sites, bytes, max),
        referrers: simple(t, &tl.referrers, bytes, max),
        vhosts: meta.has_vhosts.then(|| simple(t, &tl.vhosts, bytes, max)),
    }
}

/// The log spans less than [`HOURLY_SPAN`]: the report has a per-hour chart.
fn short_span(a: &Acc) -> bool {
    match (a.first, a.last) {
        (Some((f, _)), Some((l, _))) => l - f < HOURLY_SPAN,
        _ => false,
    }
}

/// Under this span (microseconds: three days) visitors and requests are
/// also counted per hour.
pub const HOURLY_SPAN: i64 = 3 * 86_400 * 1_000_000;

/// Every day, in order (a chart, not a top list: never cut).
fn days(t: Totals, rows: &[Tally<i64>]) -> Panel {
    let name = |d: i64| {
        if d == NO_TIME {
            "-".to_owned()
        } else {
            day_names(d).1
        }
    };
    in_order(t, rows, |&d| name(d))
}

/// Every hour of the log, in order: `2007061713` is 13:00-13:59 on 17 June 2007.
fn hourly(t: Totals, rows: &[Tally<i64>]) -> Panel {
    in_order(t, rows, |&h| {
        format!("{}{:02}", day_names(h.div_euclid(24)).1, h.rem_euclid(24))
    })
}

/// The 24 hours of the day, in order.
fn hours(t: Totals, rows: &[Tally<u8>]) -> Panel {
    in_order(t, rows, |h| format!("{h:02}"))
}

/// A panel of rows already in order, never cut.
fn in_order<K>(t: Totals, rows: &[Tally<K>], name: impl Fn(&K) -> String) -> Panel {
    let rows = rows
        .iter()
        .map(|r| {
            let n = name(&r.key);
            (n.clone(), row(t, n, r.hb.hits, r.visitors, r.hb.bytes))
        })
        .collect();
    panel(rows, usize::MAX, false)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The JSON report of counts `a` (no log size, names or virtual hosts;
    /// 100 rows a panel), for tests that compare counts made two ways.
    pub(crate) fn json(mut a: crate::acc::Acc) -> String {
        let meta = Meta {
            log_size: 0,
            log_path: vec![],
            max_rows: 100,
            has_vhosts: false,
            has_agents: true,
        };
        super::json(&build(&mut a, &meta))
    }

    #[test]
    fn dates_and_percents() {
        assert_eq!(
            day_names(13681),
            ("17/Jun/2007".to_string(), "20070617".to_string())
        );
        assert_eq!(percent(537, 10000), "05.37");
        assert_eq!(percent(1, 1), "100.00");
        assert_eq!(
            rfc3339(1_182_063_600_000_000, -7 * 3600),
            "2007-06-17T00:00:00-07:00"
        );
    }

    /// The top rows are those of a sort of every row by hits, then key,
    /// cut at `max`: with ties at the cut, none, one row, and every row.
    #[test]
    fn top_rows_are_those_of_a_whole_sort() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for len in [0, 1, 2, 5, 50, 300] {
            let rows: Vec<(u64, u64)> = (0..len).map(|_| (next(6), next(40))).collect();
            let mut want: Vec<&(u64, u64)> = rows.iter().collect();
            want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for max in [0, 1, 2, 3, 10, 49, 50, 51, 299, 300, 301] {
                let got = top(&rows, |r| r.0, |r| r.1, max);
                let cut = &want[..max.min(want.len())];
                let keys = |v: &[&(u64, u64)]| v.iter().map(|r| **r).collect::<Vec<_>>();
                assert_eq!(keys(&got), keys(cut), "{len} rows, {max}");
            }
        }
    }
}
