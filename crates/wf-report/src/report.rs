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

use hashbrown::HashMap;

use crate::acc::{self, Acc, Row, Table, PAIR_SEP};
use crate::job::Labels;
use crate::rules;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub general: General,
    pub visitors: Panel,
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
            value: rows.iter().map(|(_, r)| f(r)).sum(),
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

fn simple<K>(t: Totals, table: &Table<K>, name: impl Fn(&K) -> String, max: usize) -> Panel {
    simple_with(t, table, name, |_, r| r.visitors.len() as u64, max)
}

/// As [`simple`], with each row's visitors from `visitors`.
fn simple_with<K>(
    t: Totals,
    table: &Table<K>,
    name: impl Fn(&K) -> String,
    visitors: impl Fn(&K, &Row) -> u64,
    max: usize,
) -> Panel {
    let rows = table
        .iter()
        .map(|(k, r)| {
            let n = name(k);
            (n.clone(), row(t, n, r.hits, visitors(k, r), r.bytes))
        })
        .collect();
    panel(rows, max, true)
}

fn requests(t: Totals, table: &Table<Box<[u8]>>, max: usize) -> Panel {
    let rows = table
        .iter()
        .map(|(k, r)| {
            let (m, p, url) = acc::split_req_key(k);
            let mut pr = row(t, text(url), r.hits, r.visitors.len() as u64, r.bytes);
            pr.method = Some(text(m));
            pr.protocol = Some(text(p));
            (text(k), pr)
        })
        .collect();
    panel(rows, max, true)
}

/// A group's hits, visitors, bytes and item rows.
type GroupSum = (u64, u64, u64, Vec<(String, PanelRow)>);

/// A two-level panel of agents: groups, each with its items, visitors from
/// `visitors` (item key -> count). A visitor has one agent, so its items'
/// visitors are disjoint and a group's are their sum.
fn grouped(
    t: Totals,
    table: &Table<Box<str>>,
    visitors: &HashMap<Box<str>, u64>,
    max: usize,
) -> Panel {
    let mut groups: std::collections::BTreeMap<&str, GroupSum> = Default::default();
    for (k, r) in table {
        let (g, i) = k.split_once(PAIR_SEP).unwrap_or((k, ""));
        let v = visitors.get(k).copied().unwrap_or(0);
        let e = groups.entry(g).or_default();
        e.0 += r.hits;
        e.1 += v;
        e.2 += r.bytes;
        e.3.push((i.to_owned(), row(t, i.to_owned(), r.hits, v, r.bytes)));
    }
    let rows = groups
        .into_iter()
        .map(|(g, (h, v, b, items))| {
            let mut pr = row(t, g.to_owned(), h, v, b);
            pr.items = panel(items, max, true).data;
            (g.to_owned(), pr)
        })
        .collect();
    panel(rows, max, true)
}

/// Visitors per day, client and agent row, counted from the visitor keys.
struct Derived {
    days: HashMap<i64, u64>,
    clients: HashMap<Box<[u8]>, u64>,
    os: HashMap<Box<str>, u64>,
    browsers: HashMap<Box<str>, u64>,
    bots: HashMap<Box<str>, u64>,
}

impl Derived {
    fn of(a: &Acc) -> Derived {
        let mut d = Derived {
            days: HashMap::new(),
            clients: HashMap::new(),
            os: HashMap::new(),
            browsers: HashMap::new(),
            bots: HashMap::new(),
        };
        let mut agents: HashMap<&[u8], u64> = HashMap::new();
        for key in a.visitors.keys() {
            let (day, client, agent) = acc::split_visitor_key(key);
            *d.days.entry(day).or_default() += 1;
            *d.clients.entry_ref(client).or_default() += 1;
            *agents.entry(agent).or_default() += 1;
        }
        if a.panels.os.is_empty() {
            return d;
        }
        let mut labels = Labels::new();
        for (agent, n) in agents {
            let r = labels.get(agent);
            *d.os.entry_ref(&*r.os).or_default() += n;
            *d.browsers.entry_ref(&*r.browser).or_default() += n;
            if let Some(b) = &r.bot {
                *d.bots.entry_ref(&**b).or_default() += n;
            }
        }
        d
    }
}

type Groups<'a> = std::collections::BTreeMap<String, (Row, Vec<(String, &'a Row)>)>;

fn group_rows<'a>(it: impl Iterator<Item = (String, String, &'a Row)>) -> Groups<'a> {
    let mut groups: Groups<'a> = Default::default();
    for (g, item, r) in it {
        let e = groups.entry(g).or_default();
        e.0.hits += r.hits;
        e.0.bytes += r.bytes;
        e.0.visitors.extend(r.visitors.iter().copied());
        e.1.push((item, r));
    }
    groups
}

fn finish_groups(t: Totals, groups: Groups<'_>, max: usize) -> Panel {
    let rows = groups
        .into_iter()
        .map(|(g, (gr, items))| {
            let items = items
                .into_iter()
                .map(|(i, r)| {
                    (
                        i.clone(),
                        row(t, i, r.hits, r.visitors.len() as u64, r.bytes),
                    )
                })
                .collect();
            let mut pr = row(t, g.clone(), gr.hits, gr.visitors.len() as u64, gr.bytes);
            pr.items = panel(items, max, true).data;
            (g, pr)
        })
        .collect();
    panel(rows, max, true)
}

fn status(t: Totals, table: &Table<u16>, max: usize) -> Panel {
    let groups = group_rows(table.iter().map(|(&code, r)| {
        (
            rules::status_group(code).to_owned(),
            rules::status_label(code),
            r,
        )
    }));
    finish_groups(t, groups, max)
}

/// `17/Jun/2007` and `20070617` of a day number.
fn day_names(day: i64) -> (String, String) {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, m, d) = civil_from_days(day);
    (
        format!("{d:02}/{}/{y}", MONTHS[m as usize - 1]),
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

/// What the report needs besides the counts.
pub struct Meta {
    pub log_size: u64,
    pub log_path: Vec<String>,
    pub max_rows: usize,
    pub has_vhosts: bool,
}

/// The report of merged counts.
pub fn build(a: &Acc, meta: &Meta) -> Report {
    let t = Totals {
        hits: a.hits,
        visitors: a.visitors.len() as u64,
        bytes: a.bytes,
    };
    let max = meta.max_rows;
    let p = &a.panels;
    let d = Derived::of(a);
    let day_of = |t: Option<(i64, i64)>| {
        t.map(|(utc, off)| day_names((utc.div_euclid(1_000_000) + off).div_euclid(86_400)).0)
    };
    let general = General {
        start_date: day_of(a.first),
        end_date: day_of(a.last),
        first_time: a.first.map(|(u, o)| rfc3339(u, o)),
        last_time: a.last.map(|(u, o)| rfc3339(u, o)),
        total_requests: a.lines,
        valid_requests: a.lines - a.failed,
        failed_requests: a.failed,
        skipped_lines: a.skipped,
        excluded_hits: a.excluded,
        human_requests: a.human,
        bot_requests: a.bot,
        unique_visitors: t.visitors,
        unique_files: p.requests.len() as u64,
        unique_static_files: p.static_requests.len() as u64,
        unique_not_found: p.not_found.len() as u64,
        unique_referrers: p.referrers.len() as u64,
        not_found_requests: a.not_found_hits,
        bandwidth: a.bytes,
        log_size: meta.log_size,
        log_path: meta.log_path.clone(),
    };
    Report {
        general,
        visitors: days(t, &p.days, &d.days),
        requests: requests(t, &p.requests, max),
        static_requests: requests(t, &p.static_requests, max),
        not_found: requests(t, &p.not_found, max),
        static_extensions: simple(t, &p.extensions, |e| e.to_string(), max),
        hosts: simple_with(
            t,
            &p.hosts,
            |k| text(k),
            |k, _| d.clients.get(&k[..]).copied().unwrap_or(0),
            max,
        ),
        os: grouped(t, &p.os, &d.os, max),
        browsers: grouped(t, &p.browsers, &d.browsers, max),
        bots: grouped(t, &p.bots, &d.bots, max),
        visit_time: hours(t, &p.hours),
        status_codes: status(t, &p.status, max),
        referring_sites: simple(t, &p.referring_sites, |k| text(k), max),
        referrers: simple(t, &p.referrers, |k| text(k), max),
        vhosts: meta
            .has_vhosts
            .then(|| simple(t, &p.vhosts, |k| text(k), max)),
    }
}

/// Every day, in order (a chart, not a top list: never cut).
fn days(t: Totals, table: &Table<i64>, visitors: &HashMap<i64, u64>) -> Panel {
    let mut keys: Vec<i64> = table.keys().copied().collect();
    keys.sort_unstable();
    let rows = keys
        .into_iter()
        .map(|d| {
            let r = &table[&d];
            let name = if d == i64::MIN {
                "-".to_owned()
            } else {
                day_names(d).1
            };
            let v = visitors.get(&d).copied().unwrap_or(0);
            (name.clone(), row(t, name, r.hits, v, r.bytes))
        })
        .collect();
    panel(rows, usize::MAX, false)
}

/// The 24 hours of the day, in order.
fn hours(t: Totals, table: &Table<u8>) -> Panel {
    let mut keys: Vec<u8> = table.keys().copied().collect();
    keys.sort_unstable();
    let rows = keys
        .into_iter()
        .map(|h| {
            let r = &table[&h];
            let name = format!("{h:02}");
            (
                name.clone(),
                row(t, name, r.hits, r.visitors.len() as u64, r.bytes),
            )
        })
        .collect();
    panel(rows, usize::MAX, false)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
