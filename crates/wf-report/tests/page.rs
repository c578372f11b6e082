//! The HTML page, written to a file and opened in real headless Chromium
//! (Debian's `chromium`): it draws its charts and tables, runs without a
//! script error, sorts and filters, and names no other host.

use serde_json::json;
mod chromium;

use chromium::{chromium, load, Loaded};
use wf_report::html::{render, Chart, ChartKind, Column, Page, Panel, Series};

const NASTY: &str = "</script><script>document.body.setAttribute('data-pwned','1')</script><!--";

fn col(name: &str, numeric: bool) -> Column {
    Column {
        name: name.into(),
        numeric,
    }
}

fn sample() -> Page {
    let codes = ["200", "304", "404", "500"];
    let hits = [57951.0, 35001.0, 2640.0, 53.0];
    let status = Panel {
        id: "status".into(),
        title: "HTTP status codes".into(),
        chart: Some(Chart {
            kind: ChartKind::Bars,
            x_labels: Some(codes.iter().map(|c| c.to_string()).collect()),
            x: vec![],
            x_time: false,
            series: vec![Series {
                label: "Hits".into(),
                values: hits.to_vec(),
            }],
        }),
        columns: vec![col("Status", false), col("Hits", true)],
        rows: codes
            .iter()
            .zip(hits)
            .map(|(c, h)| vec![json!(c), json!(h as u64)])
            .collect(),
    };
    let days = Panel {
        id: "visitors".into(),
        title: "Unique visitors per day".into(),
        chart: Some(Chart {
            kind: ChartKind::Lines,
            x_labels: None,
            x: vec![1_182_038_400.0, 1_182_124_800.0, 1_182_211_200.0],
            x_time: true,
            series: vec![
                Series {
                    label: "Visitors".into(),
                    values: vec![9158.0, 8000.0, 9500.0],
                },
                Series {
                    label: "Requests".into(),
                    values: vec![32523.0, 30000.0, 35000.0],
                },
            ],
        }),
        columns: vec![
            col("Date", false),
            col("Visitors", true),
            col("Agent", false),
        ],
        rows: vec![
            vec![json!("2007-06-17"), json!(9158), json!(NASTY)],
            vec![
                json!("2007-06-18"),
                json!(8000),
                json!("Mozilla/5.0 & <b>bold</b>"),
            ],
            vec![json!("2007-06-19"), json!(9500), json!(null)],
        ],
    };
    Page {
        title: "wf report <test> & more".into(),
        panels: vec![status, days],
    }
}

/// Spans of HTML comments and of `/* */` comments (uPlot's banner).
fn comment_spans(page: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (open, close) in [("<!--", "-->"), ("/*", "*/")] {
        let mut from = 0;
        while let Some(a) = page[from..].find(open).map(|a| a + from) {
            let b = page[a..]
                .find(close)
                .map_or(page.len(), |b| a + b + close.len());
            spans.push((a, b));
            from = b;
        }
    }
    spans
}

#[test]
fn page_names_no_host_outside_comments() {
    let page = render(&sample());
    let spans = comment_spans(&page);
    let mut outside = Vec::new();
    for scheme in ["http://", "https://"] {
        for (at, _) in page.match_indices(scheme) {
            if !spans.iter().any(|&(a, b)| a <= at && at < b) {
                outside.push(page[at..page.len().min(at + 60)].to_owned());
            }
        }
    }
    assert!(
        outside.is_empty(),
        "references outside comments: {outside:?}"
    );
    assert!(page.contains("default-src 'none'"));
    assert!(!page.contains(NASTY), "the data was not escaped");
    assert!(!page.contains("{{DATA}}") && !page.contains("{{UPLOT_JS}}"));
}

/// Clicks the visitors table's "Visitors" header, then filters for "2007-06-1"
/// and "mozilla", and writes what the table showed into the DOM.
const DRIVE: &str = r##"<script>
(function () {
  var s = document.querySelector("#panel-visitors .wf-table");
  var th = s.querySelectorAll("th")[1];
  th.click();
  var order = Array.from(s.querySelectorAll("tbody tr")).map(function (r) { return r.cells[1].textContent; });
  var f = document.querySelector("#panel-visitors input.filter");
  f.value = "MOZILLA"; f.dispatchEvent(new Event("input"));
  var shown = Array.from(s.querySelectorAll("tbody tr")).filter(function (r) { return !r.hidden; }).length;
  document.body.setAttribute("data-test", order.join(",") + ";" + th.getAttribute("aria-sort") + ";" + shown);
})();
</script></body>"##;

#[test]
fn page_draws_sorts_and_filters_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        eprintln!("skipping: chromium absent (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let page = render(&sample()).replace("</body>", DRIVE);
    std::fs::write(&path, page).unwrap();
    // WF_REPORT_KEEP=FILE keeps the page to look at (or screenshot).
    if let Some(keep) = std::env::var_os("WF_REPORT_KEEP") {
        std::fs::copy(&path, keep).unwrap();
    }
    let Loaded { dom, console } = load(&chromium, &path);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish:\n{dom}"
    );
    assert!(
        dom.contains("<pre id=\"wf-errors\"></pre>"),
        "script errors:\n{dom}"
    );
    assert!(!dom.contains("data-pwned=\"1\""), "data ran as a script");
    assert_eq!(dom.matches("class=\"uplot").count(), 2, "two charts");
    assert!(
        dom.matches("<canvas").count() >= 2,
        "charts draw on canvases"
    );
    // Ours are plain rows (the filter hid two); uPlot's legend rows have a class.
    let rows = dom.matches("<tr>").count() + dom.matches("<tr hidden=\"\">").count();
    assert_eq!(rows, 2 + 4 + 3, "header rows and data rows");
    assert!(
        dom.contains("&lt;/script&gt;&lt;script&gt;"),
        "the agent shown as text"
    );
    assert!(
        dom.contains("data-test=\"9500,9158,8000;descending;1\""),
        "sort and filter:\n{dom}"
    );
}

/// The check above can fail: a page that asks another host for an image
/// is refused by its policy, and the refusal shows on the console and in
/// the page's error box.
#[test]
fn a_request_to_another_host_is_refused_and_seen() {
    let Some(chromium) = chromium() else {
        eprintln!("skipping: chromium absent (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leaky.html");
    let leak = "<img src=\"https://example.invalid/pixel.png\"></body>";
    std::fs::write(&path, render(&sample()).replace("</body>", leak)).unwrap();
    let Loaded { dom, console } = load(&chromium, &path);
    assert!(
        console.iter().any(|l| l.contains("example.invalid")),
        "{console:#?}"
    );
    assert!(
        dom.contains("Refused img-src https://example.invalid"),
        "{dom}"
    );
}
