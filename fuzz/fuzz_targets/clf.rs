//! The web-log formats (`combined`, `common`, `vcombined`, an Apache
//! `LogFormat` and an nginx `log_format`) against a plain splitter over
//! hand-written item lists (`wf_fuzz::clf_ref`): the columns, which records
//! are rows and which malformed, every value (text, `-` and empty NULL in
//! number and time columns, numbers as Rust's parsers read them, CLF times,
//! the request's three parts) and the counts of bad values and invalid
//! UTF-8; and the three ways through the parser agree, and the row parser
//! (`RowParser`, what `wf report` reads) with them.
//!
//! Input: byte 0 picks the format; the rest are the records, bytes of 0xc0
//! and up standing for bytes log lines are cut at.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_formats::{FormatOptions, Kind};
use wf_fuzz::clf_ref::{clf_time, columns, formats, request_parts, split, Conv, It};
use wf_fuzz::drive::{self, How, V};

const DENSE: &[u8; 16] = b"  \"\"[]\\-/:+0a\t\xff\x00";

fuzz_target!(|input: &[u8]| {
    let Some((c0, data)) = drive::dense_input(input, DENSE) else {
        return;
    };
    let all = formats();
    let (spec, items) = &all[c0 as usize % all.len()];
    let f = wf_formats::from_spec(spec, &FormatOptions::default(), &data).expect(spec);
    let cols = columns(items);
    let got_cols: Vec<(String, Kind)> = f
        .fields()
        .iter()
        .map(|x| (x.name.clone(), x.kind))
        .collect();
    let want_cols: Vec<(String, Kind)> = cols
        .iter()
        .map(|(n, c)| {
            let k = match c {
                Conv::Int => Kind::Int,
                Conv::Float => Kind::Float,
                Conv::Time => Kind::Time,
                _ => Kind::Str,
            };
            (n.clone(), k)
        })
        .collect();
    assert_eq!(got_cols, want_cols, "{spec}: columns");
    let recs = drive::line_records(&data, b'\n', 0);
    let got = drive::parse_agreeing(&f, &data, &recs, &[How::Plain, How::Mapped, How::Runs]);
    drive::rows_agree(&f, &data, &recs, &got);
    let (mut bad, mut rows, mut bad_values, mut invalid) = (Vec::new(), Vec::new(), 0, 0);
    let convs: Vec<Conv> = items
        .iter()
        .filter_map(|it| match it {
            It::F(_, c) => Some(*c),
            It::Lit(_) => None,
        })
        .collect();
    for &(s, e) in &recs {
        let Some(fields) = split(items, &data[s..e]) else {
            bad.push(true);
            continue;
        };
        bad.push(false);
        let mut row = Vec::new();
        let mut text = |v: &[u8], row: &mut Vec<V>| {
            invalid += std::str::from_utf8(v).is_err() as u64;
            row.push(drive::text(v));
        };
        for (v, conv) in fields.iter().zip(&convs) {
            let typed = |parse: &dyn Fn(&[u8]) -> Option<V>| -> (V, bool) {
                if *v == b"-" || v.is_empty() {
                    return (V::Null, false);
                }
                parse(v).map_or((V::Null, true), |x| (x, false))
            };
            let (x, b) = match conv {
                Conv::Str => {
                    text(v, &mut row);
                    continue;
                }
                Conv::Request => {
                    match request_parts(v) {
                        Some(parts) => parts.iter().for_each(|p| text(p, &mut row)),
                        None => row.extend([V::Null, V::Null, V::Null]),
                    }
                    text(v, &mut row);
                    continue;
                }
                Conv::Int => typed(&|v| std::str::from_utf8(v).ok()?.parse().ok().map(V::Int)),
                Conv::Float => typed(&|v| {
                    let x: f64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
                    Some(V::Float(x.to_bits()))
                }),
                Conv::Time | Conv::BracketTime => typed(&|v| clf_time(v).map(V::Time)),
            };
            bad_values += b as u64;
            row.push(x);
        }
        rows.push(row);
    }
    assert_eq!(got.bad, bad, "{spec}: malformed records");
    assert_eq!(got.rows, rows, "{spec}: rows");
    assert_eq!(got.bad_values, bad_values, "{spec}: bad values");
    assert_eq!(got.invalid_utf8, invalid, "{spec}: invalid UTF-8");
});
