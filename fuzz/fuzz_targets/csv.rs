//! wf's CSV reader against the `csv` crate, on inputs dense in quotes,
//! delimiters, line breaks and `\r` (random quotes, quoted line breaks, stray
//! quotes inside unquoted fields, `""`, unclosed quotes, invalid UTF-8).
//!
//! wf's records are cut as `wf sql` cuts them (quote-aware with
//! `Quoting::cut` from the file's start, and at newlines too when the file has
//! no quoted line break, as the scan then does), and parsed three ways (each
//! record alone, through the byte map, the scan's runs), which must agree.
//! The rows, each field's value, NULLs, the malformed records and the counts
//! of bad values and invalid UTF-8 must be the reference's
//! (`wf_fuzz::csv_ref`, whose comment lists where wf and the crate
//! legitimately differ and how that is normalised), and `has_quoted_newline`
//! must say whether any record spans lines.
//!
//! Input: byte 0 chooses a header line (bit 0), types inferred from the data
//! (bit 1; else every column text from `--schema`) and the delimiter (bits
//! 2-3); byte 1 the number of columns (1-6); the rest is the body, each byte
//! of 0xc0 and up standing for one of the bytes CSV cares about.
//! A leading BOM is dropped from a body without header: `wf sql` strips it
//! (outside the parser), the crate too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_formats::{Field, FormatOptions, Kind};
use wf_fuzz::csv_ref::{self, csv_float};
use wf_fuzz::drive::{self, How, V};

const DELIMS: [u8; 4] = [b',', b';', b'|', b'\t'];
const DENSE: &[u8; 16] = b"\"\"\n\r,;|\t a1-e\xff\xc3\xa9";

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let (c0, c1) = (input[0], input[1]);
    let (header, inferred) = (c0 & 1 == 1, c0 & 2 == 2);
    let delim = DELIMS[(c0 >> 2 & 3) as usize];
    let n = (c1 % 6 + 1) as usize;
    let body: Vec<u8> = input[2..]
        .iter()
        .map(|&b| match b {
            0xc0.. => match DENSE[(b & 15) as usize] {
                b',' => delim,
                d => d,
            },
            _ => b,
        })
        .collect();
    let mut data = Vec::new();
    if header {
        let names: Vec<String> = (1..=n).map(|i| format!("h{i}")).collect();
        data.extend_from_slice(names.join(&(delim as char).to_string()).as_bytes());
        data.push(b'\n');
        data.extend_from_slice(&body);
    } else {
        data.extend_from_slice(body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&body));
    }
    let schema = (!inferred).then(|| {
        (1..=n)
            .map(|i| Field::new(format!("c{i}"), Kind::Str))
            .collect()
    });
    let opts = FormatOptions {
        delimiter: Some(delim),
        no_header: !header,
        schema,
        strict: false,
    };
    let Ok(f) = wf_formats::from_spec("csv", &opts, &data) else {
        assert!(inferred, "csv with a schema refused");
        return; // no columns: nothing in the sample
    };
    let ncols = f.fields().len();
    if !inferred || header {
        assert_eq!(ncols, n, "columns");
    }
    // A sample whose quotes are data (every line splits evenly without them,
    // not with) is read without quoting, a record a line, as DuckDB's
    // sniffer reads it.
    let Some(q) = f.quoting() else {
        let want = csv_ref::plain_records(&data, delim, header as usize, ncols);
        let recs: Vec<(usize, usize)> = want.iter().map(|r| (r.start, r.end)).collect();
        let got = drive::parse_agreeing(&f, &data, &recs, &[How::Plain, How::Mapped, How::Runs]);
        let bad: Vec<bool> = want.iter().map(|r| r.row.is_none()).collect();
        assert_eq!(got.bad, bad, "malformed records (no quoting)");
        return;
    };
    let (want, multiline) = csv_ref::records(&data, delim, header as usize, ncols);

    // wf's records: quote-aware, as `wf sql` cuts a file with quoted line breaks.
    assert_eq!(q.has_quoted_newline(&data), multiline, "has_quoted_newline");
    let mut recs = Vec::new();
    let (mut pos, mut k) = (0, 0);
    while pos < data.len() {
        let end = q.cut(&data, pos).end;
        let e = end - (end > pos && data[end - 1] == b'\r') as usize;
        if k >= header as usize && e > pos {
            recs.push((pos, e));
        }
        k += 1;
        pos = end + 1;
    }
    let spans: Vec<(usize, usize)> = want.iter().map(|r| (r.start, r.end)).collect();
    assert_eq!(recs, spans, "record boundaries");
    let got = if multiline {
        drive::parse_agreeing(&f, &data, &recs, &[How::Plain])
    } else {
        // Cut at newlines, as the scan cuts a file without quoted line breaks.
        assert_eq!(drive::line_records(&data, b'\n', header as usize), recs);
        drive::parse_agreeing(&f, &data, &recs, &[How::Plain, How::Mapped, How::Runs])
    };
    let bad: Vec<bool> = want.iter().map(|r| r.row.is_none()).collect();
    assert_eq!(got.bad, bad, "malformed records");

    let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
    let (mut bad_values, mut invalid) = (0, 0);
    let rows = want.iter().filter_map(|r| r.row.as_ref());
    for (i, (w, g)) in rows.zip(&got.rows).enumerate() {
        for (c, (v, kind)) in w.iter().zip(&kinds).enumerate() {
            let (x, is_bad) = expect(v.as_deref(), *kind, &g[c]);
            bad_values += is_bad as u64;
            invalid += (*kind == Kind::Str
                && v.as_ref().is_some_and(|v| std::str::from_utf8(v).is_err()))
                as u64;
            assert_eq!(
                g[c],
                x,
                "row {i} column {c} ({kind:?}) of {:?}",
                v.as_ref().map(|v| String::from_utf8_lossy(v))
            );
        }
    }
    assert_eq!(got.rows.len(), bad.iter().filter(|b| !**b).count(), "rows");
    assert_eq!(got.bad_values, bad_values, "values that did not convert");
    assert_eq!(got.invalid_utf8, invalid, "invalid UTF-8 values");
});

/// The value wf must give a field of kind `kind` (`got`, wf's own, only for
/// timestamps, whose parser has no reference here: then only NULL against
/// the count is checked), and whether it is a bad value.
fn expect(v: Option<&[u8]>, kind: Kind, got: &V) -> (V, bool) {
    let v = match v {
        None => return (V::Null, false),
        Some(v) if v.is_empty() && kind != Kind::Str => return (V::Null, false),
        Some(v) => v,
    };
    let x = match kind {
        Kind::Str => return (drive::text(v), false),
        Kind::Int => std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse().ok())
            .map(V::Int),
        Kind::Float => csv_float(v).map(|x| V::Float(x.to_bits())),
        Kind::Bool => match v {
            b"true" | b"TRUE" | b"True" | b"t" | b"1" => Some(V::Bool(true)),
            b"false" | b"FALSE" | b"False" | b"f" | b"0" => Some(V::Bool(false)),
            _ => None,
        },
        Kind::Time => match got {
            V::Time(_) => Some(got.clone()),
            _ => None,
        },
        // Integers beyond 64 bits (decimal(38,0)): the value exactly.
        Kind::Decimal { scale: 0, .. } => drive::dec_integer(v),
        Kind::Decimal { .. } => panic!("a decimal column with a scale inferred"),
    };
    match x {
        Some(x) => (x, false),
        None => (V::Null, true),
    }
}
