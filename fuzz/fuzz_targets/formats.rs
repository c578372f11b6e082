//! The `wf sql` format parsers on arbitrary records: for every format, the fast
//! path the scan uses (`parse_in`, hopping through the piece's byte map) gives the
//! same rows, values and malformed count as the plain `parse` of each record; a
//! parser built for a random projection keeps exactly the same rows (the number
//! of rows never depends on the columns a query uses) and the same values in the
//! columns it builds; the scan's runs of records (`parse_run`, with the piece
//! checked as UTF-8 once) give the same rows again; and `fields` splits as a
//! plain awk-like split does. A wrong
//! answer fails like a crash.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use wf_formats::arrow_array::{Array, ArrayRef, StringViewArray};
use wf_formats::{byte_map, Columns, Format, FormatOptions, Kind};
use wf_fuzz::{awk_split, Rng};

const SPECS: [&str; 13] = [
    "combined",
    "common",
    "vcombined",
    "apache:'%h %l %u %t \"%r\" %>s %b %D \"%{Referer}i\"'",
    // Apache's own times: a strftime pattern with a zone, and milliseconds.
    "apache:'%h [%{%Y-%m-%d %H:%M:%S %z}t] %>s %{msec}t'",
    "apache:'%h [%{%d/%b/%Y %T}t.%{msec_frac}t] \"%r\" %>s'",
    "nginx:'$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent $request_time'",
    "csv",
    "tsv",
    "jsonl",
    "logfmt",
    "fields",
    "regex:'^(?P<a>[a-z]+) (?P<n>[0-9]+)'",
];

/// One run of a parser over `records`: the built columns, and which records
/// were malformed.
fn run(
    f: &Arc<dyn Format>,
    proj: &[usize],
    data: &[u8],
    records: &[(usize, usize)],
    mapped: bool,
) -> (Vec<ArrayRef>, Vec<bool>) {
    let kinds: Vec<Kind> = proj.iter().map(|&c| f.fields()[c].kind).collect();
    let mut cols = Columns::new(&kinds);
    let mut parser = f.parser(proj);
    let mut map = byte_map(f.as_ref());
    map.build(data);
    let bad = records
        .iter()
        .map(|&(s, e)| {
            !if mapped {
                parser.parse_in(data, &map, s, e, &mut cols)
            } else {
                parser.parse(&data[s..e], &mut cols)
            }
        })
        .collect();
    (cols.take().0, bad)
}

/// The scan's own way through `records`: runs of records through
/// [`wf_formats::Parser::parse_run`] (after the first record, with the piece
/// checked as UTF-8 once where the format allows, as the scan checks it), and
/// each record a run stops at through `parse_in`.
fn run_runs(
    f: &Arc<dyn Format>,
    proj: &[usize],
    data: &[u8],
    records: &[(usize, usize)],
) -> (Vec<ArrayRef>, Vec<bool>) {
    let kinds: Vec<Kind> = proj.iter().map(|&c| f.fields()[c].kind).collect();
    let mut cols = Columns::new(&kinds);
    cols.utf8_checked =
        f.ascii_boundaries() && (!cols.has_text() || std::str::from_utf8(data).is_ok());
    let mut parser = f.parser(proj);
    let mut map = byte_map(f.as_ref());
    map.build(data);
    let mut bad = Vec::new();
    let mut i = 0;
    while i < records.len() {
        let (s, e) = records[i];
        if s > 0 {
            let (_, n) = parser.parse_run(data, &map, s, usize::MAX, &mut cols);
            bad.extend(std::iter::repeat_n(false, n));
            i += n;
            if n > 0 {
                continue;
            }
        }
        bad.push(!parser.parse_in(data, &map, s, e, &mut cols));
        i += 1;
    }
    (cols.take().0, bad)
}

fuzz_target!(|input: &[u8]| {
    let (seed, data) = input.split_at(input.len().min(4));
    let mut rng = Rng::new(seed);
    let spec = SPECS[rng.below(SPECS.len() as u64) as usize];
    let opts = FormatOptions {
        delimiter: [None, Some(b';'), Some(b'|')][rng.below(3) as usize],
        no_header: rng.below(2) == 0,
        schema: None,
        strict: false,
    };
    let Ok(f) = wf_formats::from_spec(spec, &opts, data) else {
        return; // e.g. no columns in the sample
    };
    let n = f.fields().len();
    let all: Vec<usize> = (0..n).collect();
    let recs = wf_fuzz::drive::line_records(data, f.separator(), 0);
    let (plain, bad) = run(&f, &all, data, &recs, false);
    let (fast, bad_fast) = run(&f, &all, data, &recs, true);
    assert_eq!(bad, bad_fast, "{spec}: malformed records differ");
    for (c, (a, b)) in plain.iter().zip(&fast).enumerate() {
        assert_eq!(a.as_ref(), b.as_ref(), "{spec}: column {c}");
    }
    let (runs, bad_runs) = run_runs(&f, &all, data, &recs);
    assert_eq!(bad, bad_runs, "{spec}: malformed records differ (runs)");
    for (c, (a, b)) in plain.iter().zip(&runs).enumerate() {
        assert_eq!(a.as_ref(), b.as_ref(), "{spec}: column {c} (runs)");
    }
    // A random projection, in a random order.
    let mut proj: Vec<usize> = all.iter().copied().filter(|_| rng.below(2) == 0).collect();
    for i in (1..proj.len()).rev() {
        proj.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (some, bad_some) = run(&f, &proj, data, &recs, true);
    assert_eq!(
        bad, bad_some,
        "{spec}: rows depend on the projection {proj:?}"
    );
    for (k, &c) in proj.iter().enumerate() {
        assert_eq!(
            some[k].as_ref(),
            plain[c].as_ref(),
            "{spec}: column {c} alone"
        );
    }
    if spec == "fields" {
        check_fields(data, &recs, &plain);
    }
});

/// Every `fields` row against a plain split; text as UTF-8 with replacement.
fn check_fields(data: &[u8], recs: &[(usize, usize)], cols: &[ArrayRef]) {
    for (row, &(s, e)) in recs.iter().enumerate() {
        let want = awk_split(&data[s..e]);
        for (c, col) in cols.iter().enumerate() {
            let col = col.as_any().downcast_ref::<StringViewArray>().unwrap();
            let got = (!col.is_null(row)).then(|| col.value(row).to_string());
            let want = want.get(c).map(|v| String::from_utf8_lossy(v).into_owned());
            assert_eq!(got, want, "fields: row {row} column {c}");
        }
    }
}
