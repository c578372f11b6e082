//! wf's side of the format targets: a format's parser driven over records the
//! way `wf sql`'s scan drives it (records cut at the separator or quote-aware,
//! a trailing `\r` removed, blank records skipped, header records passed).

use std::sync::Arc;

use wf_formats::arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int64Array, StringViewArray,
    TimestampMicrosecondArray,
};
use wf_formats::{byte_map, Columns, Format, Kind};

/// One value as the tests compare it (text as UTF-8 with replacement).
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Null,
    Str(String),
    Int(i64),
    /// A float's bits (so -0.0 and 0.0 differ, and NaN equals itself).
    Float(u64),
    Dec(i128),
    Time(i64),
    Bool(bool),
}

/// An integer as a `decimal(38,0)` column holds it (what wf infers for
/// integers beyond 64 bits), if it is one.
pub fn dec_integer(v: &[u8]) -> Option<V> {
    let x = std::str::from_utf8(v).ok()?.parse::<i128>().ok()?;
    (x.unsigned_abs() < 10u128.pow(38)).then_some(V::Dec(x))
}

/// What one run of a parser made of some records.
#[derive(Debug)]
pub struct Parsed {
    /// Per record: it was malformed.
    pub bad: Vec<bool>,
    /// Per row (a record that was not malformed), its values.
    pub rows: Vec<Vec<V>>,
    pub bad_values: u64,
    pub invalid_utf8: u64,
}

/// How records reach the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `Parser::parse` on each record alone.
    Plain,
    /// `Parser::parse_in` through the piece's byte map.
    Mapped,
    /// The scan's runs (`Parser::parse_run`) with the piece checked as UTF-8
    /// once, each record a run stops at through `parse_in`. Only for records
    /// that are the piece's lines (cut at the separator).
    Runs,
}

/// Records of `data` cut at `sep` as the scan cuts them: `(start, end)`
/// without the separator and a trailing `\r`, blank ones left out, the first
/// `skip` records (blank or not: a header) passed.
pub fn line_records(data: &[u8], sep: u8, skip: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut pos, mut k) = (0, 0);
    while pos < data.len() {
        let end = memchr::memchr(sep, &data[pos..]).map_or(data.len(), |i| pos + i);
        let e = if end > pos && data[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        if k >= skip && e > pos {
            out.push((pos, e));
        }
        k += 1;
        pos = end + 1;
    }
    out
}

/// Parse `records` of `data` with a parser of every column of `f`.
pub fn parse(f: &Arc<dyn Format>, data: &[u8], records: &[(usize, usize)], how: How) -> Parsed {
    let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
    let proj: Vec<usize> = (0..kinds.len()).collect();
    let mut cols = Columns::new(&kinds);
    let mut p = f.parser(&proj);
    let mut map = byte_map(f.as_ref());
    map.build(data);
    let mut bad = Vec::new();
    if how == How::Runs {
        cols.utf8_checked =
            f.ascii_boundaries() && (!cols.has_text() || std::str::from_utf8(data).is_ok());
    }
    let mut i = 0;
    while i < records.len() {
        let (s, e) = records[i];
        if how == How::Runs && s > 0 {
            let (_, n) = p.parse_run(data, &map, s, usize::MAX, &mut cols);
            bad.extend(std::iter::repeat_n(false, n));
            i += n;
            if n > 0 {
                continue;
            }
        }
        let ok = match how {
            How::Plain => p.parse(&data[s..e], &mut cols),
            _ => p.parse_in(data, &map, s, e, &mut cols),
        };
        bad.push(!ok);
        i += 1;
    }
    let (bad_values, invalid_utf8) = (cols.bad_values, cols.invalid_utf8);
    let (arrays, n) = cols.take();
    let rows = (0..n)
        .map(|r| arrays.iter().map(|a| value(a, r)).collect())
        .collect();
    Parsed {
        bad,
        rows,
        bad_values,
        invalid_utf8,
    }
}

/// Row `r` of column `a`.
pub fn value(a: &ArrayRef, r: usize) -> V {
    if a.is_null(r) {
        return V::Null;
    }
    let any = a.as_any();
    if let Some(x) = any.downcast_ref::<StringViewArray>() {
        V::Str(x.value(r).to_string())
    } else if let Some(x) = any.downcast_ref::<Int64Array>() {
        V::Int(x.value(r))
    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
        V::Float(x.value(r).to_bits())
    } else if let Some(x) = any.downcast_ref::<Decimal128Array>() {
        V::Dec(x.value(r))
    } else if let Some(x) = any.downcast_ref::<TimestampMicrosecondArray>() {
        V::Time(x.value(r))
    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
        V::Bool(x.value(r))
    } else {
        panic!("a column of type {:?}", a.data_type())
    }
}

/// The format's row parser (if it has one) over `records`: the same records
/// malformed as in `parsed`, and for each row whose record is valid UTF-8
/// (the row parser's callers check that) the same values.
pub fn rows_agree(f: &Arc<dyn Format>, data: &[u8], records: &[(usize, usize)], parsed: &Parsed) {
    let proj: Vec<usize> = (0..f.fields().len()).collect();
    let Some(mut p) = f.row_parser(&proj) else {
        return;
    };
    let mut row = 0;
    for (k, &(s, e)) in records.iter().enumerate() {
        let r = &data[s..e];
        assert_eq!(
            !p.split(r),
            parsed.bad[k],
            "row parser: malformed record {k}"
        );
        if parsed.bad[k] {
            continue;
        }
        if std::str::from_utf8(r).is_ok() {
            for c in 0..proj.len() {
                let v = p.value(r, c);
                let int = matches!(v, wf_formats::Value::Int(_)).then_some(v);
                assert_eq!(
                    p.int(r, c).map(wf_formats::Value::Int),
                    int,
                    "row parser: int {c}"
                );
                if p.verbatim(c) {
                    let t = wf_formats::Value::Text(p.text(r, c));
                    assert_eq!(v, t, "row parser: column {c} is not its text");
                }
            }
            let got: Vec<V> = (0..proj.len())
                .map(|c| match p.value(r, c) {
                    wf_formats::Value::Null => V::Null,
                    wf_formats::Value::Text(t) => text(t),
                    wf_formats::Value::Int(x) => V::Int(x),
                    wf_formats::Value::Float(x) => V::Float(x.to_bits()),
                    wf_formats::Value::Time(x) => V::Time(x),
                })
                .collect();
            assert_eq!(got, parsed.rows[row], "row parser: values of record {k}");
        }
        row += 1;
    }
}

/// Text as wf keeps it: UTF-8, invalid bytes replaced.
pub fn text(b: &[u8]) -> V {
    V::Str(String::from_utf8_lossy(b).into_owned())
}

/// Runs `f` over `records` every way in `hows` and checks that all agree
/// with the first; returns the first.
pub fn parse_agreeing(
    f: &Arc<dyn Format>,
    data: &[u8],
    records: &[(usize, usize)],
    hows: &[How],
) -> Parsed {
    let first = parse(f, data, records, hows[0]);
    for &how in &hows[1..] {
        let other = parse(f, data, records, how);
        assert_eq!(first.bad, other.bad, "malformed records, {how:?}");
        assert_eq!(first.rows, other.rows, "rows, {how:?}");
        assert_eq!(first.bad_values, other.bad_values, "bad values, {how:?}");
        assert_eq!(
            first.invalid_utf8, other.invalid_utf8,
            "invalid UTF-8, {how:?}"
        );
    }
    first
}

/// A target's input: byte 0 (its choices) and the records, each byte of 0xc0
/// and up standing for one of `dense`, the bytes the format cares about (so
/// that random bytes hit them often). `None` for an empty input.
pub fn dense_input(input: &[u8], dense: &[u8; 16]) -> Option<(u8, Vec<u8>)> {
    let (&c0, rest) = input.split_first()?;
    let data = rest
        .iter()
        .map(|&b| {
            if b >= 0xc0 {
                dense[(b & 15) as usize]
            } else {
                b
            }
        })
        .collect();
    Some((c0, data))
}
