//! `jsonl`: one JSON object per line. The top-level keys seen in the first 1000
//! records of each of the first 32 inputs become columns, in the order first
//! seen (or `--schema` names them); a key only `null` there is typed by up to
//! 20,480 records of each sample, as DuckDB's sample. Types: a key whose sampled values are all integers is
//! `int`, all numbers `float`, all booleans `bool`, anything else (strings,
//! mixes, nested objects and arrays) text; nested values and numbers in a text
//! column are kept as their JSON text. A number column with integers beyond
//! 2^53 in the sample is `decimal(38,0)` (text when it has fractions too): a
//! float would round them, and `--stats` says so. A missing key or `null` is
//! NULL; a value that does not fit its column's type stops the query when the
//! types were inferred (`read::problem`), and is NULL (counted) when `--schema`
//! gave them; a line that is not a JSON object is malformed. A key first
//! seen after the sample is not a column: the records that have one are
//! counted (`Columns::unknown`) and `wf sql` says so, where `SELECT *` left
//! its values out unsaid (DuckDB stops at such a record; a log's rare key,
//! an `error` in its failures, must not stop every query of it).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{columns, Columns, Field, Format, FormatError, FormatOptions, Kind, Parser};

#[derive(Debug, Clone)]
pub struct JsonLines {
    fields: Vec<Field>,
    inferred: bool,
    notes: Vec<String>,
    /// Some key had only nulls in the samples (typed text).
    untyped: bool,
}

/// The largest integer every smaller one of which a float holds exactly (2^53).
const EXACT: u64 = 1 << 53;

/// An integer a float would round (beyond 2^53 either way).
fn beyond_float(n: &serde_json::Number) -> bool {
    n.as_u64().is_some_and(|u| u > EXACT) || n.as_i64().is_some_and(|i| i.unsigned_abs() > EXACT)
}

/// serde_json (without `arbitrary_precision`) reads an integer beyond the
/// 64-bit range as a float, losing its text. The integer literals of the
/// record (number tokens, not text in strings) whose float value is `n`'s: a
/// sign and at least 19 digits (i64::MIN has 19), no fraction or exponent, in
/// the order they appear.
fn big_literals<'a>(record: &'a [u8], n: &serde_json::Number) -> Vec<&'a [u8]> {
    let Some(f) = n
        .as_f64()
        .filter(|f| !n.is_i64() && !n.is_u64() && f.fract() == 0.0)
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < record.len() {
        match record[i] {
            b'"' => i = string_end(record, i + 1),
            b'-' | b'0'..=b'9' => {
                let digits = usize::from(record[i] == b'-');
                let len = record[i + digits..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                let end = i + digits + len;
                let whole = !matches!(record.get(end), Some(b'.' | b'e' | b'E'));
                let token = i == 0
                    || matches!(
                        record[i - 1],
                        b' ' | b'\t' | b'\r' | b'\n' | b':' | b'[' | b','
                    );
                let text = &record[i..end];
                if len >= 19 && whole && token && parse_f64(text) == Some(f) {
                    found.push(text);
                }
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    found
}

/// Where the string whose text starts at `i` ends (after its closing quote).
fn string_end(r: &[u8], mut i: usize) -> usize {
    while i < r.len() {
        match r[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    r.len()
}

fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// The one literal `big_literals` finds for `n` (None when none, or several
/// different texts: then which one is `n` cannot be told).
fn big_literal<'a>(record: &'a [u8], n: &serde_json::Number) -> Option<&'a [u8]> {
    let found = big_literals(record, n);
    let first = *found.first()?;
    found.iter().all(|t| *t == first).then_some(first)
}

/// A number's JSON text: its literal when serde_json read an integer beyond
/// 64 bits as a float (the float's text would lose digits).
fn number_text(n: &serde_json::Number, record: &[u8]) -> String {
    match big_literal(record, n) {
        Some(t) => String::from_utf8_lossy(t).into_owned(),
        None => n.to_string(),
    }
}

/// Inputs whose samples type the columns of several (DuckDB's
/// `maximum_sample_files`).
pub const SAMPLE_FILES: usize = 32;

impl JsonLines {
    pub fn new(opts: &FormatOptions, sample: &[u8]) -> Result<Self, FormatError> {
        Self::of_samples(opts, &[sample])
    }

    /// Its columns were inferred from a sample (no `--schema`).
    pub fn inferred(&self) -> bool {
        self.inferred
    }

    /// Some key had only nulls in the samples (its column is text).
    pub fn has_untyped(&self) -> bool {
        self.untyped
    }

    /// The columns of the keys of each sample's first 1000 records (in the
    /// order first seen), typed by their values; a key only `null` there is
    /// typed by the samples' later values. Up to [`SAMPLE_FILES`] inputs'
    /// samples, as DuckDB's: a key of nulls in the first of two files was
    /// text, `max` 9 of 9 and 100 in the second; a key only in the second
    /// was no column.
    pub fn of_samples(opts: &FormatOptions, samples: &[&[u8]]) -> Result<Self, FormatError> {
        if let Some(s) = &opts.schema {
            return Ok(JsonLines {
                fields: s.clone(),
                inferred: false,
                notes: Vec::new(),
                untyped: false,
            });
        }
        let mut fields: Vec<Field> = Vec::new();
        let mut kinds: Vec<Option<Kind>> = Vec::new();
        // Per column: an integer beyond 2^53 seen, a number with a fraction seen.
        let mut big: Vec<(bool, bool)> = Vec::new();
        // Each sample in turn: its first 1000 records' keys; a key of only
        // nulls so far is typed by up to 20,480 records of each sample
        // (`csv::WIDE_SAMPLE`; `sample_lines` of 1000 is a prefix of it).
        let lines = samples.iter().take(SAMPLE_FILES).flat_map(|s| {
            let early = super::sample_lines(s, 1000).len();
            let lines = super::sample_lines(s, super::csv::WIDE_SAMPLE).into_iter();
            lines.enumerate().map(move |(n, line)| (line, n >= early))
        });
        for (line, late) in lines {
            if late && kinds.iter().all(Option::is_some) {
                continue;
            }
            let Ok(obj) = serde_json::from_slice::<Map<String, Value>>(line) else {
                continue;
            };
            for (k, v) in &obj {
                let i = match fields.iter().position(|f| &f.name == k) {
                    Some(i) if late && kinds[i].is_some() => continue,
                    Some(i) => i,
                    None if late => continue,
                    None => {
                        fields.push(Field::new(k.clone(), Kind::Str));
                        kinds.push(None);
                        big.push((false, false));
                        fields.len() - 1
                    }
                };
                kinds[i] = widen(kinds[i], v);
                if let Value::Number(n) = v {
                    let huge = !big_literals(line, n).is_empty();
                    big[i].0 |= beyond_float(n) || huge;
                    big[i].1 |= !(n.is_i64() || n.is_u64() || is_minus_zero(n) || huge);
                }
            }
        }
        if fields.is_empty() {
            return Err(FormatError::NoJsonObject);
        }
        let mut notes = Vec::new();
        let untyped = kinds.iter().any(Option::is_none);
        for ((f, k), (big, frac)) in fields.iter_mut().zip(kinds).zip(big) {
            f.kind = k.unwrap_or(Kind::Str);
            if f.kind == Kind::Float && big {
                f.kind = exact_kind(frac);
                notes.push(format!(
                    "column {}: integers beyond 2^53, which a float would round: typed {}",
                    f.name,
                    f.kind.spec()
                ));
            }
        }
        Ok(JsonLines {
            fields,
            inferred: true,
            notes,
            untyped,
        })
    }
}

/// The type of a number column holding integers a float would round: an
/// exact decimal when all are integers, text (their JSON) when some have a
/// fraction too.
fn exact_kind(frac: bool) -> Kind {
    if frac {
        Kind::Str
    } else {
        Kind::Decimal {
            precision: 38,
            scale: 0,
        }
    }
}

/// serde_json reads the integer `-0` as the float -0.0 (its text is lost); JSON's
/// `-0` has no fraction or exponent, so it is taken as the integer 0.
fn is_minus_zero(n: &serde_json::Number) -> bool {
    n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())
}

/// The kind of a column after seeing one more value (`None`: only nulls yet).
fn widen(k: Option<Kind>, v: &Value) -> Option<Kind> {
    let this = match v {
        Value::Null => return k,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() || is_minus_zero(n) => Kind::Int,
        Value::Number(_) => Kind::Float,
        _ => Kind::Str,
    };
    Some(match (k, this) {
        (None, t) => t,
        (Some(a), b) if a == b => a,
        (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
        _ => Kind::Str,
    })
}

impl Format for JsonLines {
    fn as_jsonl(&self) -> Option<&JsonLines> {
        Some(self)
    }

    fn name(&self) -> String {
        "jsonl".into()
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let all = || self.fields.iter().map(|f| f.name.clone()).collect();
        Box::new(JsonParser {
            names: projection
                .iter()
                .map(|&c| self.fields[c].name.clone())
                .collect(),
            inferred: self.inferred,
            known: self.inferred.then(all),
        })
    }

    fn types_inferred(&self) -> bool {
        self.inferred
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

struct JsonParser {
    /// The projected keys, in batch order.
    names: Vec<String>,
    /// The types were inferred: an integer a float column would round does
    /// not fit it (it stops the query, see `read::problem`).
    inferred: bool,
    /// Every column's key, when the columns are a sample's keys: a record
    /// with another key is counted ([`Columns::unknown`]), for `SELECT *`
    /// would leave its value out unsaid (DuckDB stops at such a record).
    known: Option<HashSet<String>>,
}

impl Parser for JsonParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        let Ok(obj) = serde_json::from_slice::<Map<String, Value>>(record) else {
            return false;
        };
        for (o, name) in self.names.iter().enumerate() {
            append(out, o, obj.get(name), self.inferred, record);
        }
        if let Some(known) = &self.known {
            if obj.keys().any(|k| !known.contains(k)) {
                let others = obj.keys().filter(|k| !known.contains(*k));
                out.unknown.add(others.map(|k| k.as_bytes()));
            }
        }
        out.end_row();
        true
    }
}

/// Append `v` to column `o`; a value that does not convert to the column's
/// kind (a string in an int column, say; with inferred types, an integer a
/// float column would round) is NULL and counted.
fn append(out: &mut Columns, o: usize, v: Option<&Value>, inferred: bool, record: &[u8]) {
    let v = match v {
        None | Some(Value::Null) => return out.null(o),
        Some(v) => v,
    };
    let ok = match out.kind(o) {
        Kind::Str => {
            match v {
                Value::String(s) => out.str(o, s.as_bytes()),
                Value::Number(n) => out.str(o, number_text(n, record).as_bytes()),
                other => out.str(o, other.to_string().as_bytes()),
            }
            true
        }
        Kind::Int => match v {
            Value::Number(n) if is_minus_zero(n) => out.put(o, Some(0), Columns::int),
            _ => out.put(o, v.as_i64(), Columns::int),
        },
        Kind::Float => match v {
            Value::Number(n)
                if inferred && (beyond_float(n) || !big_literals(record, n).is_empty()) =>
            {
                out.put(o, None, Columns::float)
            }
            _ => out.put(o, v.as_f64(), Columns::float),
        },
        Kind::Decimal { precision, scale } => {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => number_text(n, record),
                _ => String::new(),
            };
            let x = columns::parse_decimal(text.as_bytes(), precision, scale);
            out.put(o, x, Columns::decimal)
        }
        Kind::Bool => out.put(o, v.as_bool(), Columns::bool),
        Kind::Time => {
            let t = match v {
                Value::String(s) => super::time::parse_any(s.as_bytes()),
                Value::Number(n) => n.as_f64().map(|s| (s * 1e6) as i64),
                _ => None,
            };
            out.put(o, t, Columns::time)
        }
    };
    if !ok {
        out.bad(o, v.to_string().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys first seen after the sample are counted per record and named
    /// (the first three by name), whatever the projection; with `--schema`
    /// the columns are the user's and other keys are not counted.
    #[test]
    fn keys_after_the_sample_are_counted() {
        let sample = b"{\"a\": 1}\n{\"a\": 2}\n";
        let f = JsonLines::new(&FormatOptions::default(), sample).unwrap();
        let records = [
            r#"{"a": 3}"#,
            r#"{"a": 4, "z": 1}"#,
            r#"{"y": 1, "a": 5, "x": "", "w": null}"#,
        ];
        for projection in [&[][..], &[0]] {
            let kinds: Vec<Kind> = projection.iter().map(|_| Kind::Int).collect();
            let mut cols = Columns::new(&kinds);
            let mut p = f.parser(projection);
            for r in records {
                assert!(p.parse(r.as_bytes(), &mut cols));
            }
            let u = &cols.unknown;
            let names: Vec<&str> = u.names.iter().map(String::as_str).collect();
            assert_eq!((u.records, names, u.more), (2, vec!["w", "x", "y"], true));
        }
        let opts = FormatOptions {
            schema: Some(vec![Field::new("a", Kind::Int)]),
            ..Default::default()
        };
        let f = JsonLines::new(&opts, sample).unwrap();
        let mut cols = Columns::new(&[Kind::Int]);
        assert!(f.parser(&[0]).parse(records[1].as_bytes(), &mut cols));
        assert_eq!(cols.unknown, crate::UnknownKeys::default());
    }

    /// Numbers in a float column are the nearest float to their text, as
    /// DuckDB and Python read them, and every finite number is one (serde_json's
    /// default parser, without `float_roundtrip`, was a unit in the last place
    /// off on such numbers and called the first one out of range, losing the row).
    #[test]
    fn floats_are_read_correctly_rounded() {
        let nums = [
            "1.7976931348623157999e308",
            "1e-45",
            "2.2250738585072011e-308",
            "123456789.123456789123456789",
            "18446744073756059151",
            "0.1",
        ];
        let lines: Vec<String> = nums.iter().map(|n| format!("{{\"x\":{n}}}")).collect();
        let opts = FormatOptions {
            schema: Some(vec![Field::new("x", Kind::Float)]),
            ..FormatOptions::default()
        };
        let f = JsonLines::new(&opts, b"").unwrap();
        let mut p = f.parser(&[0]);
        let mut cols = Columns::new(&[Kind::Float]);
        for l in &lines {
            assert!(p.parse(l.as_bytes(), &mut cols), "{l}: malformed");
        }
        let (arrays, _) = cols.take();
        let got = arrays[0]
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        for (i, n) in nums.iter().enumerate() {
            let want: f64 = n.parse().unwrap();
            assert_eq!(got.value(i).to_bits(), want.to_bits(), "{n}");
        }
    }

    /// Parse `lines` with the types inferred from them; the column's kind and
    /// its values as text.
    fn infer_and_read(lines: &[&str]) -> (Kind, Vec<Option<String>>, u64) {
        let sample = lines.join("\n") + "\n";
        let f = JsonLines::new(&FormatOptions::default(), sample.as_bytes()).unwrap();
        let kind = f.fields()[0].kind;
        let mut p = f.parser(&[0]);
        let mut cols = Columns::new(&[kind]);
        for l in lines {
            assert!(p.parse(l.as_bytes(), &mut cols), "{l}: malformed");
        }
        let bad = cols.bad_values;
        let (arrays, _) = cols.take();
        let a = &arrays[0];
        let text = (0..a.len())
            .map(|i| (!a.is_null(i)).then(|| arrow_cast_text(a, i)))
            .collect();
        (kind, text, bad)
    }

    fn arrow_cast_text(a: &arrow_array::ArrayRef, i: usize) -> String {
        use arrow_array::{Array, Decimal128Array, StringViewArray};
        if let Some(d) = a.as_any().downcast_ref::<Decimal128Array>() {
            return d.value(i).to_string();
        }
        a.as_any()
            .downcast_ref::<StringViewArray>()
            .unwrap()
            .value(i)
            .to_string()
    }

    /// Integers beyond 64 bits (which serde_json reads as floats, text lost)
    /// are typed exactly and keep every digit, as those beyond 2^53 do.
    #[test]
    fn integers_beyond_64_bits_keep_their_digits() {
        let (kind, got, _) = infer_and_read(&[
            r#"{"x":123456789012345678901}"#,
            r#"{"x":-99999999999999999999999}"#,
            r#"{"x":7}"#,
        ]);
        let dec = Kind::Decimal {
            precision: 38,
            scale: 0,
        };
        assert_eq!(kind, dec);
        let want = ["123456789012345678901", "-99999999999999999999999", "7"];
        assert_eq!(got, want.map(|w| Some(w.to_string())));
        // With a fraction in the column too: text, each value's own JSON text.
        let (kind, got, _) = infer_and_read(&[
            r#"{"x":123456789012345678901, "s":"123456789012345678901"}"#,
            r#"{"x":1.5}"#,
        ]);
        assert_eq!(kind, Kind::Str);
        assert_eq!(
            got,
            [Some("123456789012345678901".into()), Some("1.5".into())]
        );
    }

    /// A float column (inferred from the sample) meeting such an integer
    /// later: not a rounded float but a value that does not fit (it stops
    /// the query, as one beyond 2^53 does).
    #[test]
    fn a_later_integer_beyond_64_bits_does_not_fit_a_float_column() {
        let f = JsonLines::new(&FormatOptions::default(), b"{\"x\":1.5}\n").unwrap();
        assert_eq!(f.fields()[0].kind, Kind::Float);
        let mut p = f.parser(&[0]);
        let mut cols = Columns::new(&[Kind::Float]);
        for l in [
            r#"{"x":123456789012345678901}"#,
            r#"{"x":1e21}"#,
            r#"{"x":2.5}"#,
        ] {
            assert!(p.parse(l.as_bytes(), &mut cols));
        }
        assert_eq!(cols.bad_values, 1);
        let (arrays, _) = cols.take();
        assert_eq!(arrays[0].null_count(), 1);
    }

    #[test]
    fn big_literals_are_whole_integers_only() {
        let n = |t: &str| serde_json::from_str::<serde_json::Number>(t).unwrap();
        let rec = br#"{"a":123456789012345678901,"b":123456789012345678901.0,"c":"x"}"#;
        assert_eq!(
            big_literals(rec, &n("123456789012345678901")),
            [&b"123456789012345678901"[..]]
        );
        assert!(big_literals(br#"{"a":1e21}"#, &n("1e21")).is_empty());
        assert!(big_literals(br#"{"a":7}"#, &n("7")).is_empty());
        // Below i64::MIN with 19 digits; digits in strings are text, not numbers.
        let low = "-9223372036854775809";
        let rec = format!(r#"{{"s":"{low}","a":{low}}}"#);
        assert_eq!(big_literals(rec.as_bytes(), &n(low)), [low.as_bytes()]);
        let rec = br#"{"s":"123456789012345678901","a":1.23456789012345678901e20}"#;
        assert!(big_literals(rec, &n("1.23456789012345678901e20")).is_empty());
    }
}
