//! `logfmt` against a plain splitter (`wf_fuzz::logfmt_ref`): the columns
//! (keys first seen in the sample, or `--schema`'s), which records are
//! malformed, every value (a flag is `true`, the last of a repeated key
//! wins, a missing key is NULL, an empty value NULL outside text columns),
//! values converted to the column's type (int as Rust's `i64` parser, float
//! as Rust's `f64` parser on the trimmed text, bool by its spellings; NULL and
//! counted when they do not convert), and the counts of bad values and of
//! invalid UTF-8 (a value, or the key of a value, that is not UTF-8).
//!
//! Input: byte 0 chooses types inferred from the data (bit 0) or a schema of
//! keys `a` (text), `b` (int), `c` (float), `d` (bool); the rest are the
//! records, each byte of 0xc0 and up standing for a byte logfmt cares about.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_formats::{parse_schema, FormatOptions, Kind};
use wf_fuzz::drive::{self, How, V};
use wf_fuzz::logfmt_ref::{get, pairs, sample_lines};

const DENSE: &[u8; 16] = b"=\"\" \t\\abcdnt1.-\xff";

fuzz_target!(|input: &[u8]| {
    let Some((c0, data)) = drive::dense_input(input, DENSE) else {
        return;
    };
    let inferred = c0 & 1 == 1;
    let opts = FormatOptions {
        schema: (!inferred).then(|| parse_schema("a:string,b:int,c:float,d:bool").unwrap()),
        ..FormatOptions::default()
    };
    let keys: Vec<Vec<u8>> = if inferred {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for line in sample_lines(&data, 1000) {
            for (k, _) in pairs(line).unwrap_or_default() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys
    } else {
        [b"a", b"b", b"c", b"d"].map(|k| k.to_vec()).to_vec()
    };
    let Ok(f) = wf_formats::from_spec("logfmt", &opts, &data) else {
        assert!(keys.is_empty(), "logfmt refused {} keys", keys.len());
        return;
    };
    let names: Vec<String> = keys
        .iter()
        .map(|k| String::from_utf8_lossy(k).into())
        .collect();
    let cols: Vec<&String> = f.fields().iter().map(|x| &x.name).collect();
    assert_eq!(cols, names.iter().collect::<Vec<_>>(), "columns");
    let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
    let recs = drive::line_records(&data, b'\n', 0);
    let got = drive::parse_agreeing(&f, &data, &recs, &[How::Plain, How::Mapped, How::Runs]);
    let (mut bad, mut rows, mut bad_values, mut invalid) = (Vec::new(), Vec::new(), 0, 0);
    for &(s, e) in &recs {
        let Some(p) = pairs(&data[s..e]) else {
            bad.push(true);
            continue;
        };
        bad.push(false);
        let mut row = Vec::new();
        for (c, key) in keys.iter().enumerate() {
            let v = get(&p, key).filter(|v| !v.is_empty() || kinds[c] == Kind::Str);
            let Some(v) = v else {
                row.push(V::Null);
                continue;
            };
            invalid += std::str::from_utf8(key).is_err() as u64;
            let x = match kinds[c] {
                Kind::Str => {
                    invalid += std::str::from_utf8(v).is_err() as u64;
                    Some(drive::text(v))
                }
                Kind::Int => std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .map(V::Int),
                Kind::Float => std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .map(|x| V::Float(x.to_bits())),
                Kind::Bool => match v {
                    b"true" | b"TRUE" | b"True" | b"t" | b"1" => Some(V::Bool(true)),
                    b"false" | b"FALSE" | b"False" | b"f" | b"0" => Some(V::Bool(false)),
                    _ => None,
                },
                // No reference for timestamps here: wf's own value, NULL counted.
                Kind::Time => got
                    .rows
                    .get(rows.len())
                    .map(|r| r[c].clone())
                    .filter(|x| *x != V::Null),
                // Integers beyond 64 bits (decimal(38,0)): the value exactly.
                Kind::Decimal { scale: 0, .. } => drive::dec_integer(v),
                Kind::Decimal { .. } => panic!("a decimal column with a scale"),
            };
            bad_values += x.is_none() as u64;
            row.push(x.unwrap_or(V::Null));
        }
        rows.push(row);
    }
    assert_eq!(got.bad, bad, "malformed records");
    assert_eq!(got.rows, rows, "rows");
    assert_eq!(got.bad_values, bad_values, "bad values");
    assert_eq!(got.invalid_utf8, invalid, "invalid UTF-8");
});
