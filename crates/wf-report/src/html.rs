//! The report as one self-contained HTML page: it opens from disk, offline,
//! and can be mailed, so it requests nothing from any host.
//!
//! The page is a template of its own (`page.html`): our CSS, and the script
//! that turns the data into panels (a uPlot chart and a table sortable by
//! each column and filtered by a text box). `render` fills the template's
//! markers once each, in one pass, so that nothing inserted (uPlot's 51 KB,
//! the data) is ever scanned for markers again. The data goes in as JSON in a
//! `<script type="application/json">` element with every `<`, `>` and `&`
//! written as a `\u` escape: no agent or URL in a log can close the element
//! (`</script>`) or open a comment in it, and `JSON.parse` reads it back
//! unchanged. A Content-Security-Policy of `default-src 'none'` makes the
//! browser refuse any request the page might still make.

use serde::Serialize;

const TEMPLATE: &str = include_str!("page.html");
const UPLOT_JS: &str = include_str!("../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uplot/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../assets/uplot/LICENSE");

/// The whole page's data.
#[derive(Clone, Debug, Serialize)]
pub struct Page {
    pub title: String,
    pub panels: Vec<Panel>,
}

/// One panel: a chart (optional) and a table.
#[derive(Clone, Debug, Serialize)]
pub struct Panel {
    /// Part of the section's element id (`panel-<id>`).
    pub id: String,
    pub title: String,
    pub chart: Option<Chart>,
    pub columns: Vec<Column>,
    /// One value per column: numbers sort as numbers, the rest as text.
    pub rows: Vec<Vec<serde_json::Value>>,
}

#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    Bars,
    Lines,
}

/// A chart: bars over `x_labels` (status codes, hours), or lines over `x`
/// (numbers, or Unix seconds when `x_time`).
#[derive(Clone, Debug, Serialize)]
pub struct Chart {
    pub kind: ChartKind,
    pub x_labels: Option<Vec<String>>,
    pub x: Vec<f64>,
    pub x_time: bool,
    pub series: Vec<Series>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub label: String,
    pub values: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub name: String,
    pub numeric: bool,
}

/// The page, complete.
pub fn render(page: &Page) -> String {
    render_with(page, None)
}

/// The page, reloading itself every `reload` seconds when given (`wf report
/// --follow -o page.html` rewrites it): a `<meta http-equiv="refresh">`,
/// which reloads the page's own address, no other host (a CSP does not
/// govern it). The page's script keeps the reader's scroll position and
/// filters across the reloads (in `sessionStorage`, when the browser has it).
pub fn render_with(page: &Page, reload: Option<u64>) -> String {
    let refresh = match reload {
        Some(s) => format!("<meta http-equiv=\"refresh\" content=\"{s}\">"),
        None => String::new(),
    };
    let data = script_json(&serde_json::to_string(page).expect("a Page always serialises"));
    let title = escape_text(&page.title);
    fill(
        TEMPLATE,
        &[
            ("{{REFRESH}}", &refresh),
            ("{{TITLE}}", &title),
            ("{{UPLOT_LICENSE}}", &UPLOT_LICENSE.replace("--", "- -")),
            ("{{UPLOT_CSS}}", UPLOT_CSS),
            ("{{DATA}}", &data),
            ("{{UPLOT_JS}}", UPLOT_JS),
        ],
    )
}

/// Replaces each marker, in template order, by its value; values are
/// copied, never scanned. A marker the template lacks is a bug in this file.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let extra: usize = values.iter().map(|(_, v)| v.len()).sum();
    let mut out = String::with_capacity(template.len() + extra);
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter_map(|&(m, v)| rest.find(m).map(|at| (at, m, v)))
            .min();
        let Some((at, marker, value)) = next else {
            break;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + marker.len()..];
    }
    out.push_str(rest);
    out
}

/// JSON safe inside a `<script>` element: `<`, `>` and `&` only occur inside
/// JSON strings, where `\u003c` etc. mean the same characters. U+2028 and
/// U+2029 too, which older JavaScript engines took for line ends.
fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for an HTML element's content.
fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_following_page_reloads() {
        let page = Page {
            title: "t".into(),
            panels: vec![],
        };
        assert!(!render(&page).contains("<meta http-equiv=\"refresh\""));
        let live = render_with(&page, Some(2));
        assert!(live.contains("<meta http-equiv=\"refresh\" content=\"2\">"));
        assert!(!live.contains("{{REFRESH}}") && !live.contains("{{TITLE}}"));
    }

    #[test]
    fn fill_never_rescans_values() {
        let out = fill("a{{X}}b{{Y}}c", &[("{{X}}", "{{Y}}"), ("{{Y}}", "y")]);
        assert_eq!(out, "a{{Y}}byc");
    }

    #[test]
    fn script_json_round_trips_and_cannot_close_the_element() {
        let v = serde_json::json!({"ua": "</script><!-- x & y \u{2028}", "n": [1, 2]});
        let s = script_json(&v.to_string());
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
    }
}
