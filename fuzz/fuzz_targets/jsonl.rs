//! `jsonl` against an independent JSON reader (`wf_fuzz::json_ref`, not
//! serde_json, which wf uses): the columns (keys first seen in the sample, in
//! order, or `--schema`'s), their inferred types (int, float, bool, text;
//! `decimal(38,0)` or text for a number column with integers beyond 2^53),
//! which records are malformed (not one JSON object: syntax, invalid UTF-8,
//! lone surrogates, nesting past serde_json's limit), and every value:
//! strings with their escapes decoded, nested values and non-strings in text
//! columns as JSON text (read back and compared as values), missing keys and
//! `null` as NULL, a repeated key's last value, integers exact in int and
//! decimal columns, floats bit for bit, an integer beyond 2^53 NULL in an
//! inferred float column; and the counts of values that did not convert.
//!
//! An integer that fits neither i64 nor u64, which serde_json reads as a
//! float, is one beyond 2^53 too: wf finds its text in the record, and so
//! does the reference (`json_ref::big_text`); where two different such texts
//! have the same float, which one a value was cannot be told, and wf's
//! decimal or text for it is taken as it is.
//!
//! Input: byte 0 chooses inferred types (bit 0) or a schema `a:string,
//! b:int, c:float, d:bool`; the rest are the records, bytes of 0xc0 and up
//! standing for bytes JSON cares about.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_formats::{parse_schema, FormatOptions, Kind};
use wf_fuzz::drive::{self, How, V};
use wf_fuzz::json_ref::{big_text, object, same, value_of, Num, J};
use wf_fuzz::logfmt_ref::sample_lines;

const DENSE: &[u8; 16] = b"{}[]\"\":,\\u1-.e 0";
const EXACT: i128 = 1 << 53;

fuzz_target!(|input: &[u8]| {
    let Some((c0, data)) = drive::dense_input(input, DENSE) else {
        return;
    };
    let inferred = c0 & 1 == 1;
    let opts = FormatOptions {
        schema: (!inferred).then(|| parse_schema("a:string,b:int,c:float,d:bool").unwrap()),
        ..FormatOptions::default()
    };
    let (names, kinds) = if inferred {
        columns(&data)
    } else {
        let k = [Kind::Str, Kind::Int, Kind::Float, Kind::Bool];
        (["a", "b", "c", "d"].map(String::from).to_vec(), k.to_vec())
    };
    let Ok(f) = wf_formats::from_spec("jsonl", &opts, &data) else {
        assert!(names.is_empty(), "jsonl refused {names:?}");
        return;
    };
    let cols: Vec<&String> = f.fields().iter().map(|x| &x.name).collect();
    assert_eq!(cols, names.iter().collect::<Vec<_>>(), "columns");
    let got_kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
    assert_eq!(got_kinds, kinds, "types");
    let recs = drive::line_records(&data, b'\n', 0);
    let got = drive::parse_agreeing(&f, &data, &recs, &[How::Plain, How::Mapped, How::Runs]);
    let (mut bad, mut rows, mut bad_values) = (Vec::new(), Vec::new(), 0);
    for &(s, e) in &recs {
        let Some(obj) = object(&data[s..e]) else {
            bad.push(true);
            continue;
        };
        bad.push(false);
        let r = rows.len();
        let row: Vec<V> = names
            .iter()
            .zip(&kinds)
            .enumerate()
            .map(|(c, (name, &kind))| {
                let v = obj.iter().find(|(k, _)| k == name).map(|(_, v)| v);
                let got = got.rows.get(r).map_or(&V::Null, |row| &row[c]);
                let x = expect(v.unwrap_or(&J::Null), kind, inferred, got, &data[s..e]);
                bad_values += x.is_none() as u64;
                x.unwrap_or(V::Null)
            })
            .collect();
        rows.push(row);
    }
    assert_eq!(got.bad, bad, "malformed records");
    assert_eq!(got.rows, rows, "rows");
    assert_eq!(got.bad_values, bad_values, "bad values");
    assert_eq!(got.invalid_utf8, 0, "invalid UTF-8 in a row");
});

/// The columns and types wf must infer from the sample.
fn columns(data: &[u8]) -> (Vec<String>, Vec<Kind>) {
    let mut names: Vec<String> = Vec::new();
    // Per column: the type so far, an integer beyond 2^53 seen, a fraction seen.
    let mut seen: Vec<(Option<Kind>, bool, bool)> = Vec::new();
    for line in sample_lines(data, 1000) {
        for (k, v) in object(line).unwrap_or_default() {
            let i = names.iter().position(|n| *n == k).unwrap_or_else(|| {
                names.push(k);
                seen.push((None, false, false));
                names.len() - 1
            });
            let this = match &v {
                J::Null => continue,
                J::Bool(_) => Kind::Bool,
                J::Num(t) => match Num::of(t) {
                    Num::Int(n) => {
                        seen[i].1 |= n.abs() > EXACT;
                        if n <= i64::MAX as i128 {
                            Kind::Int
                        } else {
                            Kind::Float
                        }
                    }
                    Num::Float(x) if x == 0.0 && x.is_sign_negative() => Kind::Int,
                    Num::Float(_) => {
                        seen[i].2 = true;
                        Kind::Float
                    }
                    Num::Big(_) => {
                        seen[i].1 = true;
                        Kind::Float
                    }
                },
                _ => Kind::Str,
            };
            seen[i].0 = Some(match (seen[i].0, this) {
                (None, t) => t,
                (Some(a), b) if a == b => a,
                (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
                _ => Kind::Str,
            });
        }
    }
    let kinds = seen
        .into_iter()
        .map(|(k, big, frac)| match k.unwrap_or(Kind::Str) {
            Kind::Float if big && frac => Kind::Str,
            Kind::Float if big => Kind::Decimal {
                precision: 38,
                scale: 0,
            },
            k => k,
        })
        .collect();
    (names, kinds)
}

/// The value of `v` in a column of `kind`; `None` when it does not convert
/// (NULL, counted). `got` (wf's) is taken only for a decimal column's
/// strings and fractions, which have no reference here.
fn expect(v: &J, kind: Kind, inferred: bool, got: &V, rec: &[u8]) -> Option<V> {
    let num = |v: &J| match v {
        J::Num(t) => Some(Num::of(t)),
        _ => None,
    };
    match (kind, v) {
        (_, J::Null) => Some(V::Null),
        (Kind::Str, J::Str(s)) => Some(V::Str(s.clone())),
        (Kind::Str, other) => {
            let V::Str(text) = got else {
                panic!("text column holds {got:?}")
            };
            let back = value_of(text.as_bytes()).expect("wf's JSON text reads back");
            assert!(same(&back, other), "{text} is not {other:?}");
            if let Some(Num::Big(x)) = num(other) {
                if let Some(t) = big_text(rec, x) {
                    assert_eq!(*text, t, "an integer beyond 64 bits lost its digits");
                }
            }
            Some(got.clone())
        }
        (Kind::Int, _) => match num(v)? {
            Num::Int(n) => i64::try_from(n).ok().map(V::Int),
            Num::Float(x) if x == 0.0 && x.is_sign_negative() => Some(V::Int(0)),
            Num::Float(_) | Num::Big(_) => None,
        },
        (Kind::Float, _) => match num(v)? {
            Num::Int(n) if inferred && n.abs() > EXACT => None,
            Num::Int(n) => Some(V::Float((n as f64).to_bits())),
            Num::Big(_) if inferred => None,
            Num::Float(x) | Num::Big(x) => Some(V::Float(x.to_bits())),
        },
        (Kind::Decimal { .. }, J::Num(_)) => match num(v)? {
            Num::Int(n) => Some(V::Dec(n)),
            Num::Big(x) => match big_text(rec, x) {
                // decimal(38,0): at most 38 digits.
                Some(t) => t
                    .parse::<i128>()
                    .ok()
                    .filter(|n| n.unsigned_abs() < 10u128.pow(38))
                    .map(V::Dec),
                None => (*got != V::Null).then(|| got.clone()),
            },
            Num::Float(_) => (*got != V::Null).then(|| got.clone()),
        },
        (Kind::Decimal { .. }, J::Str(_)) => (*got != V::Null).then(|| got.clone()),
        (Kind::Bool, J::Bool(b)) => Some(V::Bool(*b)),
        _ => None,
    }
}
