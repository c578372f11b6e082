//! The report as text for a terminal (the top rows of each panel, as `wf
//! wf2` prints its lists) and as the HTML page's data (`html::Page`): every
//! number in either is taken from the one [`Report`], so the page's tables
//! equal `--json`. The time the report took (GoAccess's `generation_time`)
//! is shown in these two overviews only: `--json` stays the same bytes at
//! every `-j` and chunk size, and `--stats` prints the wall time for
//! machines.

use serde_json::json;
use std::fmt::Write;
use std::time::Duration;

use wf_core::report::visible::visible;

use crate::html::{Chart, ChartKind, Column, Page, Panel as HtmlPanel, Series};
use crate::report::{Panel, PanelRow, Report};

/// Every panel but the overview: (JSON name, title, grouped).
pub fn panels(r: &Report) -> Vec<(&'static str, &'static str, &Panel)> {
    let mut v = vec![("visitors", "Unique visitors per day", &r.visitors)];
    if let Some(h) = &r.visitors_per_hour {
        v.push(("visitors_per_hour", "Unique visitors per hour", h));
    }
    v.extend([
        ("requests", "Requested files", &r.requests),
        ("static_requests", "Static requests", &r.static_requests),
        (
            "static_extensions",
            "Static files by extension",
            &r.static_extensions,
        ),
        ("not_found", "Not found URLs (404)", &r.not_found),
        ("hosts", "Visitor hosts", &r.hosts),
        ("os", "Operating systems", &r.os),
        ("browsers", "Browsers", &r.browsers),
        ("bots", "Crawlers and bots", &r.bots),
        ("visit_time", "Time of day", &r.visit_time),
        ("status_codes", "HTTP status codes", &r.status_codes),
        ("referring_sites", "Referring sites", &r.referring_sites),
        ("referrers", "Referrer URLs", &r.referrers),
    ]);
    if let Some(vh) = &r.vhosts {
        v.push(("vhosts", "Virtual hosts", vh));
    }
    v
}

/// The overview's figures, in order: (label, value); with the time the
/// report took last, when given.
pub fn overview(r: &Report, took: Option<Duration>) -> Vec<(&'static str, String)> {
    let g = &r.general;
    let span = match (&g.first_time, &g.last_time) {
        (Some(a), Some(b)) => format!("{a} .. {b}"),
        _ => "-".into(),
    };
    let mut rows = vec![
        ("Total requests", g.total_requests.to_string()),
        ("Valid requests", g.valid_requests.to_string()),
        ("Failed requests", g.failed_requests.to_string()),
        ("Unique visitors", g.unique_visitors.to_string()),
        ("Requested files", g.unique_files.to_string()),
        ("Static files", g.unique_static_files.to_string()),
        ("Not found (404) requests", g.not_found_requests.to_string()),
        ("Not found URLs", g.unique_not_found.to_string()),
        ("Human requests", g.human_requests.to_string()),
        ("Bot requests", g.bot_requests.to_string()),
        ("Excluded by --bots", g.excluded_hits.to_string()),
        ("Bytes sent", g.bandwidth.to_string()),
        ("Log size", g.log_size.to_string()),
        ("Time span", span),
    ];
    if let Some(t) = took {
        rows.push(("Report took", format!("{:.3} s", t.as_secs_f64())));
    }
    rows
}

/// The terminal report: the overview (`took`: the time the report took),
/// then the top `top` rows of each panel.
pub fn text(r: &Report, top: usize, took: Option<Duration>) -> String {
    let mut out = String::new();
    for (label, value) in overview(r, took) {
        let _ = writeln!(out, "{label:>26}  {}", visible(&value));
    }
    for (_, title, p) in panels(r) {
        let rows = p.metadata.data.total.value;
        let _ = writeln!(out, "\n{title} ({rows} rows)");
        let _ = writeln!(out, "{:>10} {:>9} {:>14}  ", "hits", "visitors", "bytes");
        for row in p.data.iter().take(top) {
            text_row(&mut out, row, "");
            for item in row.items.iter().take(top) {
                text_row(&mut out, item, "  ");
            }
        }
    }
    out
}

fn text_row(out: &mut String, r: &PanelRow, indent: &str) {
    let _ = writeln!(
        out,
        "{:>10} {:>9} {:>14}  {indent}{}",
        r.hits.count,
        r.visitors.count,
        r.bytes.count,
        label(r)
    );
}

/// A row's key as shown: the request's method and protocol around its URL;
/// a host's name after its address (`--resolve`).
/// Control characters are shown as escapes (`wf_core::report::visible`): a
/// URL or agent is the sender's text, and an escape sequence in it would act
/// on the reader's terminal.
fn label(r: &PanelRow) -> String {
    let label = match (&r.method, &r.protocol, &r.hostname) {
        (Some(m), Some(p), _) => format!("{m} {} {p}", r.data),
        (_, _, Some(h)) if !h.is_empty() => format!("{} ({h})", r.data),
        _ => r.data.clone(),
    };
    visible(&label).into_owned()
}

fn col(name: &str, numeric: bool) -> Column {
    Column {
        name: name.into(),
        numeric,
    }
}

/// The HTML page's data: the overview as a table (`took`: the time the
/// report took), then a chart and a table per panel (rows of a grouped
/// panel are its items, with their group).
pub fn page(r: &Report, title: &str, took: Option<Duration>) -> Page {
    let mut panels = vec![HtmlPanel {
        id: "general".into(),
        title: "Overview".into(),
        chart: None,
        columns: vec![col("Figure", false), col("Value", false)],
        rows: overview(r, took)
            .into_iter()
            .map(|(l, v)| match v.parse::<u64>() {
                Ok(n) => vec![json!(l), json!(n)],
                Err(_) => vec![json!(l), json!(v)],
            })
            .collect(),
    }];
    for (id, title, p) in panels_of(r) {
        panels.push(html_panel(id, title, p));
    }
    Page {
        title: title.to_owned(),
        panels,
    }
}

fn panels_of(r: &Report) -> Vec<(&'static str, &'static str, &Panel)> {
    panels(r)
}

fn html_panel(id: &str, title: &str, p: &Panel) -> HtmlPanel {
    let grouped = p.data.iter().any(|r| !r.items.is_empty());
    let requests = p.data.iter().any(|r| r.method.is_some());
    let mut columns = Vec::new();
    if grouped {
        columns.push(col("Group", false));
    }
    columns.push(col(if requests { "URL" } else { "Name" }, false));
    if requests {
        columns.push(col("Method", false));
        columns.push(col("Protocol", false));
    }
    if p.data.iter().any(|r| r.hostname.is_some()) {
        columns.push(col("Hostname", false));
    }
    for c in [
        "Hits",
        "Hits %",
        "Visitors",
        "Visitors %",
        "Bytes",
        "Bytes %",
    ] {
        columns.push(col(c, true));
    }
    let mut rows = Vec::new();
    for r in &p.data {
        if grouped {
            for i in &r.items {
                rows.push(html_row(Some(&r.data), i));
            }
        } else {
            rows.push(html_row(None, r));
        }
    }
    HtmlPanel {
        id: id.into(),
        title: title.into(),
        chart: Some(chart(id, p)),
        columns,
        rows,
    }
}

fn html_row(group: Option<&str>, r: &PanelRow) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    if let Some(g) = group {
        v.push(json!(g));
    }
    v.push(json!(r.data));
    if let (Some(m), Some(p)) = (&r.method, &r.protocol) {
        v.push(json!(m));
        v.push(json!(p));
    }
    if let Some(h) = &r.hostname {
        v.push(json!(h));
    }
    for c in [&r.hits, &r.visitors, &r.bytes] {
        v.push(json!(c.count));
        v.push(json!(c.percent.parse::<f64>().unwrap_or(0.0)));
    }
    v
}

/// Visitors and hits per day as lines over time; hours and the rest as bars
/// (the first ten rows).
fn chart(id: &str, p: &Panel) -> Chart {
    let series = |rows: &[&PanelRow]| {
        vec![
            Series {
                label: "Hits".into(),
                values: rows.iter().map(|r| r.hits.count as f64).collect(),
            },
            Series {
                label: "Visitors".into(),
                values: rows.iter().map(|r| r.visitors.count as f64).collect(),
            },
        ]
    };
    let when = |s: &str| match id {
        "visitors" => day_seconds(s),
        "visitors_per_hour" => hour_seconds(s),
        _ => None,
    };
    let times: Vec<f64> = p.data.iter().filter_map(|r| when(&r.data)).collect();
    if times.len() == p.data.len() && times.len() > 1 {
        let rows: Vec<&PanelRow> = p.data.iter().collect();
        return Chart {
            kind: ChartKind::Lines,
            x_labels: None,
            x: times,
            x_time: true,
            series: series(&rows),
        };
    }
    let rows: Vec<&PanelRow> = if matches!(id, "visit_time" | "visitors" | "visitors_per_hour") {
        p.data.iter().collect()
    } else {
        p.data.iter().take(10).collect()
    };
    Chart {
        kind: ChartKind::Bars,
        x_labels: Some(rows.iter().map(|r| short(&r.data, ends_say(id))).collect()),
        x: vec![],
        x_time: false,
        series: series(&rows),
    }
}

/// A bar's label: at most 16 characters (ten labels share the chart's
/// width); of a longer one its end when `end` (a URL's or a host's says more
/// than its start), else its start ("4xx Client Erro…", not "…x Client
/// Errors").
fn short(s: &str, end: bool) -> String {
    const MAX: usize = 16;
    let n = s.chars().count();
    if n <= MAX {
        return s.to_owned();
    }
    if end {
        std::iter::once('\u{2026}')
            .chain(s.chars().skip(n - (MAX - 1)))
            .collect()
    } else {
        s.chars().take(MAX - 1).chain(['\u{2026}']).collect()
    }
}

/// Whether a panel's labels say most at their end: URLs and host names,
/// not names (status groups, browsers, bots, extensions).
fn ends_say(id: &str) -> bool {
    matches!(
        id,
        "requests" | "static_requests" | "not_found" | "hosts" | "referrers" | "referring_sites"
    )
}

/// `20070617` as Unix seconds.
fn day_seconds(s: &str) -> Option<f64> {
    if s.len() != 8 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (y, m, d) = (&s[0..4], &s[4..6], &s[6..8]);
    let days = wf_formats::time::days_from_civil(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    Some(days as f64 * 86_400.0)
}

/// `2007061713` (13:00 on 17 June 2007) as Unix seconds.
fn hour_seconds(s: &str) -> Option<f64> {
    let hour: u8 = s.get(8..10)?.parse().ok()?;
    (s.len() == 10 && hour < 24).then_some(())?;
    Some(day_seconds(&s[..8])? + hour as f64 * 3600.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_labels_keep_the_end_of_urls_and_the_start_of_names() {
        assert_eq!(short("4xx Client Errors", false), "4xx Client Erro\u{2026}");
        assert_eq!(
            short("GET /a/very/long/path.html", true),
            "\u{2026}/long/path.html"
        );
        assert_eq!(short("200 OK", false), "200 OK");
        assert_eq!(short("0123456789abcdef", true), "0123456789abcdef");
        assert!(ends_say("requests") && !ends_say("status_codes") && !ends_say("bots"));
    }
}
