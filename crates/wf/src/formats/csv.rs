//! `csv` and `tsv` (RFC 4180): fields split at the delimiter; a field in double
//! quotes may hold the delimiter, doubled quotes (`""` is one `"`) and line
//! breaks (LF or CRLF, kept as written). An unquoted empty field is NULL, a
//! quoted empty one is the empty string (as DuckDB reads them).
//!
//! Columns: from the header line (the first line of every file), or `c1..cN`
//! with `--no-header`, or names and types from `--schema`. Types are inferred
//! from the first 1000 records of the first input, in the order int, float,
//! timestamp (ISO 8601), bool, text; a later value that does not convert is
//! NULL. A record with another number of fields than the columns is malformed.
//!
//! Records longer than a line: a file whose quoted fields hold line breaks can
//! not be cut at any newline, so `sql::table` checks each CSV file first (one
//! memchr pass for `"`, and only where there are quotes a pass that follows the
//! quote state) and reads a file with quoted line breaks as one serial chunk;
//! every other file is cut at newlines and parsed on every core.

use super::bytemap::{ByteMap, Finder, Mapped, Plain};
use super::{columns, time, Columns, Field, Format, FormatOptions, Kind, Parser};

#[derive(Debug, Clone)]
pub struct Csv {
    delim: u8,
    header: bool,
    fields: Vec<Field>,
}

impl Csv {
    pub fn new(delim: u8, opts: &FormatOptions, sample: &[u8]) -> Result<Self, String> {
        let header = !opts.no_header;
        let records = sample_records(sample, delim, 1001);
        let fields = match &opts.schema {
            Some(s) => s.clone(),
            None => infer(&records, header),
        };
        if fields.is_empty() {
            return Err("csv: no columns (empty input?)".into());
        }
        Ok(Csv {
            delim,
            header,
            fields,
        })
    }
}

/// A sampled record: its fields, `None` for NULL.
type Record = Vec<Option<Vec<u8>>>;

/// The first `n` records of a sample, split into fields (the last, maybe cut
/// by the sample's end, is dropped when there are others).
fn sample_records(sample: &[u8], delim: u8, n: usize) -> Vec<Record> {
    let mut out = Vec::new();
    let mut pos = 0;
    // The first n records, malformed ones included in the count (they are
    // records too; skipping them must not reach further into the file).
    for _ in 0..n {
        let Some(end) = record_end(sample, pos) else {
            break;
        };
        out.extend(owned_fields(trim_cr(&sample[pos..end]), delim));
        pos = end + 1;
    }
    if out.is_empty() && pos < sample.len() {
        out.extend(owned_fields(trim_cr(&sample[pos..]), delim));
    }
    out
}

fn trim_cr(r: &[u8]) -> &[u8] {
    r.strip_suffix(b"\r").unwrap_or(r)
}

/// The newline ending the record that starts at `pos` (quote-aware), if any.
pub fn record_end(data: &[u8], mut pos: usize) -> Option<usize> {
    let mut quoted = false;
    loop {
        let at = pos + memchr::memchr2(b'"', b'\n', &data[pos..])?;
        if data[at] == b'"' {
            quoted = !quoted;
        } else if !quoted {
            return Some(at);
        }
        pos = at + 1;
    }
}

/// True when some line break of `data` lies inside quotes (the file's records
/// can not be cut at newlines).
pub fn has_quoted_newline(data: &[u8]) -> bool {
    if memchr::memchr(b'"', data).is_none() {
        return false;
    }
    let mut quoted = false;
    for at in memchr::memchr2_iter(b'"', b'\n', data) {
        if data[at] == b'"' {
            quoted = !quoted;
        } else if quoted {
            return true;
        }
    }
    false
}

/// Column names and types from sampled records.
fn infer(records: &[Record], header: bool) -> Vec<Field> {
    let (names, rows): (Vec<String>, &[Record]) = match records.split_first() {
        Some((h, rest)) if header => (
            h.iter()
                .enumerate()
                .map(|(i, n)| match n {
                    Some(n) if !n.is_empty() => String::from_utf8_lossy(n).into_owned(),
                    _ => format!("c{}", i + 1),
                })
                .collect(),
            rest,
        ),
        _ => {
            let n = records.iter().map(Vec::len).max().unwrap_or(0);
            ((1..=n).map(|i| format!("c{i}")).collect(), records)
        }
    };
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let values = rows
                .iter()
                .filter_map(|r| r.get(i).and_then(|v| v.as_deref()));
            Field::new(name, infer_kind(values))
        })
        .collect()
}

pub fn infer_kind<'a>(values: impl Iterator<Item = &'a [u8]> + Clone) -> Kind {
    let vals = values.filter(|v| !v.is_empty());
    let all = |f: &dyn Fn(&[u8]) -> bool| {
        let mut any = false;
        for v in vals.clone() {
            if !f(v) {
                return false;
            }
            any = true;
        }
        any
    };
    if all(&|v| columns::parse_int(v).is_some()) {
        Kind::Int
    } else if all(&|v| decimal(v).is_some()) {
        Kind::Float
    } else if all(&|v| time::parse_iso(v).is_some()) {
        Kind::Time
    } else if all(&|v| {
        matches!(
            v,
            b"true" | b"false" | b"TRUE" | b"FALSE" | b"True" | b"False"
        )
    }) {
        Kind::Bool
    } else {
        Kind::Str
    }
}

/// A plain decimal (`-12.3`, `4`, `.5`, `1e3`) as a float; the common
/// `digits.digits` shape is read without the general parser, exactly (an
/// integer of at most 15 digits divided by a power of ten is correctly rounded).
pub fn decimal(v: &[u8]) -> Option<f64> {
    let p = columns::plain_number(v)?;
    let digits = p.int_digits + p.decimals;
    if !p.whole || digits == 0 || digits > 15 {
        return general_float(v);
    }
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let x = p.m as f64 / POW10[p.decimals];
    Some(if p.neg { -x } else { x })
}

fn general_float(v: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(v).ok()?;
    // Only numbers: Rust's parser also takes "inf", "nan" and "infinity".
    if s.bytes()
        .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
    {
        return None;
    }
    s.parse().ok()
}

/// One field of a record being split: NULL (unquoted and empty), a span of the
/// record, or a span of the scratch buffer (a quoted field with `""` inside).
#[derive(Debug, Clone, Copy)]
enum Val {
    Null,
    Raw(usize, usize),
    Unescaped(usize, usize),
}

/// Split one record into `vals` (quotes removed, `""` unescaped into
/// `scratch`). False when quotes are unbalanced or text follows a closing quote.
#[inline(always)]
fn split_fields(
    r: &[u8],
    delim: u8,
    vals: &mut Vec<Val>,
    scratch: &mut Vec<u8>,
    f: &impl Finder,
) -> bool {
    vals.clear();
    scratch.clear();
    let mut pos = 0;
    loop {
        if r.get(pos) == Some(&b'"') {
            let Some((value, after)) = quoted_field(r, pos + 1, scratch) else {
                return false;
            };
            vals.push(value);
            match r.get(after) {
                None => return true,
                Some(&c) if c == delim => pos = after + 1,
                Some(_) => return false,
            }
        } else {
            let end = f.find_byte(r, pos, delim).unwrap_or(r.len());
            vals.push(if end > pos {
                Val::Raw(pos, end)
            } else {
                Val::Null
            });
            if end == r.len() {
                return true;
            }
            pos = end + 1;
        }
    }
}

/// A quoted field starting after its opening quote: its value and the index
/// after the closing quote.
fn quoted_field(r: &[u8], start: usize, scratch: &mut Vec<u8>) -> Option<(Val, usize)> {
    let mut pos = start;
    let mut from = None;
    loop {
        let q = pos + memchr::memchr(b'"', &r[pos..])?;
        if r.get(q + 1) == Some(&b'"') {
            from.get_or_insert(scratch.len());
            scratch.extend_from_slice(&r[pos..=q]);
            pos = q + 2;
            continue;
        }
        return Some(match from {
            None => (Val::Raw(start, q), q + 1),
            Some(f) => {
                scratch.extend_from_slice(&r[pos..q]);
                (Val::Unescaped(f, scratch.len()), q + 1)
            }
        });
    }
}

fn value<'a>(v: Val, r: &'a [u8], scratch: &'a [u8]) -> Option<&'a [u8]> {
    match v {
        Val::Null => None,
        Val::Raw(s, e) => Some(&r[s..e]),
        Val::Unescaped(s, e) => Some(&scratch[s..e]),
    }
}

/// The fields of one record as owned values (for sampling and tests).
fn owned_fields(r: &[u8], delim: u8) -> Option<Record> {
    let (mut vals, mut scratch) = (Vec::new(), Vec::new());
    split_fields(r, delim, &mut vals, &mut scratch, &Plain).then(|| {
        vals.iter()
            .map(|&v| value(v, r, &scratch).map(<[u8]>::to_vec))
            .collect()
    })
}

impl Format for Csv {
    fn name(&self) -> String {
        match self.delim {
            b',' => "csv".into(),
            b'\t' => "tsv".into(),
            d => format!("csv (delimiter '{}')", d as char),
        }
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let mut want = vec![None; self.fields.len()];
        for (o, &c) in projection.iter().enumerate() {
            want[c] = Some(o);
        }
        Box::new(CsvParser {
            delim: self.delim,
            want,
            ncols: self.fields.len(),
            vals: Vec::new(),
            scratch: Vec::new(),
        })
    }

    fn multiline(&self) -> bool {
        true
    }

    fn header_lines(&self) -> usize {
        self.header as usize
    }

    fn needles(&self) -> Vec<u8> {
        vec![self.delim]
    }
}

struct CsvParser {
    delim: u8,
    want: Vec<Option<usize>>,
    ncols: usize,
    vals: Vec<Val>,
    scratch: Vec<u8>,
}

impl Parser for CsvParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        self.parse_with(record, out, &Plain)
    }

    fn parse_in(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        start: usize,
        end: usize,
        out: &mut Columns,
    ) -> bool {
        let found = Mapped { map, base: start };
        self.parse_with(&piece[start..end], out, &found)
    }
}

impl CsvParser {
    #[inline(always)]
    fn parse_with(&mut self, record: &[u8], out: &mut Columns, f: &impl Finder) -> bool {
        if !split_fields(record, self.delim, &mut self.vals, &mut self.scratch, f)
            || self.vals.len() != self.ncols
        {
            return false;
        }
        for (i, &v) in self.vals.iter().enumerate() {
            let Some(o) = self.want[i] else { continue };
            match value(v, record, &self.scratch) {
                None => out.null(o),
                Some(v) => match out.kind(o) {
                    Kind::Float => {
                        let x = decimal(v);
                        out.bad_values += x.is_none() as u64;
                        out.float(o, x)
                    }
                    Kind::Decimal { precision, scale } => {
                        let x = columns::parse_decimal(v, precision, scale);
                        out.bad_values += x.is_none() as u64;
                        out.decimal(o, x)
                    }
                    _ => out.text_as_kind(o, v),
                },
            }
        }
        out.end_row();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields_of(r: &str) -> Option<Vec<Option<String>>> {
        owned_fields(r.as_bytes(), b',').map(|v| {
            v.into_iter()
                .map(|f| f.map(|x| String::from_utf8_lossy(&x).into_owned()))
                .collect()
        })
    }

    #[test]
    fn quotes_delimiters_and_line_breaks() {
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            fields_of(r#"a,"b,c","d""e",,"""#),
            Some(vec![s("a"), s("b,c"), s("d\"e"), None, s("")])
        );
        assert_eq!(fields_of("\"x\ny\",2"), Some(vec![s("x\ny"), s("2")]));
        assert_eq!(fields_of(r#""open,2"#), None);
        assert_eq!(fields_of(r#""a"b,2"#), None);
        let data = b"h1,h2\n\"a\nb\",1\nc,2\n";
        assert_eq!(record_end(data, 0), Some(5));
        assert_eq!(record_end(data, 6), Some(13));
        assert!(has_quoted_newline(data));
        assert!(!has_quoted_newline(b"a,\"b,c\"\nd,e\n"));
    }

    #[test]
    fn decimals_are_exact() {
        for s in ["12.3", "-0.1", "99.9", "1234567.891", ".5", "7", "-45.67"] {
            assert_eq!(
                decimal(s.as_bytes()),
                Some(s.parse::<f64>().unwrap()),
                "{s}"
            );
        }
        assert_eq!(decimal(b"1e3"), Some(1000.0));
        assert_eq!(decimal(b"nan"), None);
        assert_eq!(decimal(b"1.2.3"), None);
    }

    #[test]
    fn inference() {
        let c = Csv::new(
            b',',
            &FormatOptions::default(),
            b"a,b,c,d\n1,2.5,x,2024-01-01\n-3,4,y,2024-01-02T10:00:00Z\n",
        )
        .unwrap();
        let kinds: Vec<Kind> = c.fields().iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [Kind::Int, Kind::Float, Kind::Str, Kind::Time]);
    }
}
