//! formats: parsers from records (whole lines) to typed Arrow columns, used by
//! `wf sql` and the Python package. A crate of its own on the `arrow` crates,
//! with no query engine: parsing a record needs none.
//!
//! Why this shape: a format only says which columns it has ([`Format::fields`])
//! and turns one record into one row ([`Parser::parse`]); it never sees files,
//! chunks or threads (the scan engine and [`read`] do), so the same parser runs
//! on every core over any chunking. A parser is made for a *projection*: it still
//! checks every field of a record (so the number of rows never depends on which
//! columns a query uses), but it builds only the projected columns, and those are
//! the expensive part (string copies, timestamp and number conversion).
//!
//! A parser must validate a whole record before appending anything to its
//! [`Columns`], so a malformed record leaves no half row behind: it returns
//! `false` and the caller counts it.

pub mod bytemap;
pub mod clf;
pub mod columns;
pub mod csv;
pub mod detect;
pub mod error;
pub mod fields;
pub mod jsonl;
pub mod logfmt;
pub mod read;
pub mod regex;
pub mod time;

/// The Arrow crates the columns are made with.
pub use {arrow_array, arrow_buffer, arrow_schema};

use std::sync::Arc;

use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};

pub use columns::{Columns, UnknownKeys};
pub use error::FormatError;

/// Bytes read from the start of the first input to detect a format or
/// infer types (`read::sample`); here, not there, because a CSV sample
/// shorter than this is a whole input (`csv`), and `read::sample` uses
/// `csv`.
pub const SAMPLE: usize = 256 << 10;

/// The names of the virtual columns every table has after the format's
/// (`read::job::Virtual`); a format column of one of these names is renamed
/// (`a_1`), here because `csv` names its header's columns apart from them.
pub const VIRTUAL_NAMES: [&str; 3] = ["_file", "_offset", "_line"];

/// The type of one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text (Arrow `Utf8View`); invalid UTF-8 is replaced and counted.
    Str,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float. Sums and averages of floats depend on the order DataFusion
    /// adds them in, so their last digits may differ between runs; see `Decimal`.
    Float,
    /// A fixed-point decimal (Arrow `Decimal128(precision, scale)`, only from
    /// `--schema`): sums and averages are exact, so the same at every `-j`.
    Decimal { precision: u8, scale: i8 },
    /// A UTC timestamp in microseconds.
    Time,
    /// true/false.
    Bool,
}

impl Kind {
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Str => DataType::Utf8View,
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
            Kind::Time => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Bool => DataType::Boolean,
        }
    }

    /// The name used in `--schema 'name:type'` and `--help`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Str => "string",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Decimal { .. } => "decimal",
            Kind::Time => "timestamp",
            Kind::Bool => "bool",
        }
    }

    /// The type as `--schema` reads it back (a decimal with its precision and scale).
    pub fn spec(self) -> String {
        match self {
            Kind::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            k => k.name().into(),
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        let s = s.trim().to_ascii_lowercase();
        if let Some(d) = parse_decimal_type(&s) {
            return d;
        }
        Some(match s.as_str() {
            "string" | "str" | "text" | "varchar" | "utf8" => Kind::Str,
            "int" | "integer" | "bigint" | "int64" | "long" => Kind::Int,
            "float" | "double" | "real" | "float64" => Kind::Float,
            "timestamp" | "time" | "datetime" => Kind::Time,
            "bool" | "boolean" => Kind::Bool,
            _ => return None,
        })
    }
}

/// `decimal`, `decimal(P)` or `decimal(P,S)` (also `numeric`), with SQL's
/// defaults as DataFusion has them (`decimal` is `decimal(38,10)`, `decimal(P)`
/// is `decimal(P,0)`): `None` if `s` is no decimal type, `Some(None)` if it is
/// one with an impossible precision or scale.
fn parse_decimal_type(s: &str) -> Option<Option<Kind>> {
    let rest = s
        .strip_prefix("decimal")
        .or_else(|| s.strip_prefix("numeric"))?
        .trim();
    let (precision, scale) = if rest.is_empty() {
        (38, 10)
    } else {
        let args = rest.strip_prefix('(')?.strip_suffix(')')?;
        let mut it = args.split(',').map(|a| a.trim().parse::<u8>().ok());
        match (it.next(), it.next(), it.next()) {
            (Some(Some(p)), None, None) => (p, 0),
            (Some(Some(p)), Some(Some(s)), None) => (p, s),
            _ => return Some(None),
        }
    };
    Some(
        (1..=38)
            .contains(&precision)
            .then_some(())
            .filter(|_| scale <= precision)
            .map(|_| Kind::Decimal {
                precision,
                scale: scale as i8,
            }),
    )
}

/// One column of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub kind: Kind,
}

impl Field {
    pub fn new(name: impl Into<String>, kind: Kind) -> Self {
        Field {
            name: name.into(),
            kind,
        }
    }
}

/// A record format: its columns, and parsers that build some of them.
pub trait Format: Send + Sync + std::fmt::Debug {
    /// What `--format` names it (e.g. `combined`, `csv`), for messages.
    fn name(&self) -> String;
    /// Every column, in table order.
    fn fields(&self) -> &[Field];
    /// A parser that builds the columns `projection` (indices into `fields`, in
    /// the order the batch wants them). One per worker thread.
    fn parser(&self, projection: &[usize]) -> Box<dyn Parser>;
    /// The layout of the table's input `input` (CSV files whose headers
    /// differ, see [`csv::Csv::by_name`]); 0 for every input by default.
    fn layout_of(&self, _input: usize) -> usize {
        0
    }
    /// A parser that reads the columns `projection` of one record at a time
    /// as values ([`RowParser`]), building no columns; `None` when the format
    /// has none (then [`Format::parser`]).
    fn row_parser(&self, _projection: &[usize]) -> Option<Box<dyn RowParser>> {
        None
    }
    /// A parser as [`Format::parser`] for the inputs of layout `layout`.
    fn parser_in(&self, _layout: usize, projection: &[usize]) -> Box<dyn Parser> {
        self.parser(projection)
    }
    /// This format as CSV, for what only CSV does (matching files' headers).
    fn as_csv(&self) -> Option<&csv::Csv> {
        None
    }
    /// This format as JSON lines, for what only it does (typing columns by
    /// later files' samples).
    fn as_jsonl(&self) -> Option<&jsonl::JsonLines> {
        None
    }
    /// Records are cut at this byte (a trailing `\r` is removed by the caller).
    fn separator(&self) -> u8 {
        b'\n'
    }
    /// How records that may span lines are cut (CSV with quoted line breaks):
    /// the caller must then cut them from the file's start with
    /// [`csv::Quoting::record_end`]. `None`: every record is one line.
    fn quoting(&self) -> Option<csv::Quoting> {
        None
    }
    /// The columns' types were inferred from a sample (not given with
    /// `--schema` nor fixed by the format): a later value that does not fit
    /// its column's type is an error, as in DuckDB (`read::job`), where a
    /// declared type makes it NULL (counted; an error with `--strict`).
    fn types_inferred(&self) -> bool {
        false
    }
    /// The columns renamed because their names were taken (a header's
    /// name used twice, or a virtual column's), as stderr says them:
    /// `column "_line" is named "_line_1" (its name was taken)`.
    fn renamed(&self) -> Vec<String> {
        Vec::new()
    }
    /// What `--stats` should say about how the columns were made (a type
    /// chosen so that no digit is lost, say).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The offset from UTC, in seconds, of the time written in `record`, for
    /// a format whose time is neither `dd/Mon/yyyy:HH:MM:SS +hhmm` nor ISO
    /// 8601 text (which the record can be searched for) but written with a
    /// zone of its own layout (Apache's `%{%Y-%m-%d %H:%M:%S %z}t`): the
    /// report's days and hours are those written. `None` by default.
    fn zone_of(&self, _record: &[u8]) -> Option<i64> {
        None
    }
    /// Lines to skip at the start of every file (a CSV header).
    fn header_lines(&self) -> usize {
        0
    }
    /// Every text value the parser appends starts and ends at an ASCII byte of
    /// the record (a delimiter, quote, space), so a record that is valid UTF-8
    /// as a whole needs no check per value. Not so for `regex`, whose groups may
    /// cut anywhere.
    fn ascii_boundaries(&self) -> bool {
        true
    }
    /// Bytes the parser looks for, which the caller marks once per piece of
    /// records in a [`bytemap::ByteMap`] for [`Parser::parse_in`] (at most
    /// [`bytemap::MAX`] - 1: the separator is marked too).
    fn needles(&self) -> Vec<u8> {
        Vec::new()
    }
    /// The marked bytes as classes: a class of several bytes is one plane of
    /// the map (any of them marks it). By default each needle is its own class.
    fn needle_classes(&self) -> Vec<Vec<u8>> {
        self.needles().into_iter().map(|c| vec![c]).collect()
    }
}

/// The byte map a parser of `f` reads: the separator, then `f`'s classes.
pub fn byte_map(f: &dyn Format) -> bytemap::ByteMap {
    let mut classes = vec![vec![f.separator()]];
    classes.extend(f.needle_classes());
    let refs: Vec<&[u8]> = classes.iter().map(Vec::as_slice).collect();
    bytemap::ByteMap::with_classes(&refs)
}

/// Turns one record into one row of the projected columns.
pub trait Parser: Send {
    /// Parse `record` (no separator, no trailing `\r`). On success append one
    /// value to every column of `out` and return true; on a malformed record
    /// append nothing and return false.
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool;

    /// Parse the record `piece[start..end]`, where `map` marks the piece's
    /// [`Format::needles`] (a parser may hop from mark to mark instead of
    /// searching bytes); the same rules as [`Parser::parse`].
    fn parse_in(
        &mut self,
        piece: &[u8],
        _map: &bytemap::ByteMap,
        start: usize,
        end: usize,
        out: &mut Columns,
    ) -> bool {
        self.parse(&piece[start..end], out)
    }

    /// The parser has a [`Parser::parse_run`] of its own (a call to the default
    /// per record was 0.6% of a log query, for nothing).
    fn has_runs(&self) -> bool {
        false
    }

    /// A blank line is a row (NULL in every column), not skipped: a CSV file
    /// of one column, as DuckDB reads it (`x`, `1`, ``, `3` is three rows).
    fn blank_is_row(&self) -> bool {
        false
    }

    /// Parse the records that start at `pos` of `piece`, each ended by the
    /// separator (class 0 of `map`), at most `room` of them, for as long as each
    /// is one the parser reads without help: no CR before the separator, not
    /// blank, not malformed, nothing to count. Returns where it stopped and how
    /// many rows it appended; the caller reads the record there with
    /// [`Parser::parse_in`], which handles (and counts) every case. Only the
    /// first record of an input is never given (it may hold a BOM or a header).
    fn parse_run(
        &mut self,
        _piece: &[u8],
        _map: &bytemap::ByteMap,
        pos: usize,
        _room: usize,
        _out: &mut Columns,
    ) -> (usize, usize) {
        (pos, 0)
    }
}

/// One value of a record read by a [`RowParser`]: what its column would hold
/// (`Text` borrows the record's bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'r> {
    Null,
    Text(&'r [u8]),
    Int(i64),
    Float(f64),
    /// UTC microseconds.
    Time(i64),
}

/// Reads one record's projected fields as [`Value`]s, for a caller that uses
/// each record once and keeps no column (the report counts it): the same
/// records are rows, and the same values as [`Parser::parse`] would append
/// to its columns, for a record that is valid UTF-8 (the caller checks that;
/// a text value is not checked or replaced here, and a value that does not
/// convert is `Null` without being counted). Building Arrow columns and
/// reading them back, with the byte map, was ~1,100 of the report's 5,650
/// instructions a line (cachegrind).
pub trait RowParser: Send {
    /// Splits `record` (no separator, no trailing `\r`) into its fields;
    /// false when it is malformed.
    fn split(&mut self, record: &[u8]) -> bool;
    /// Projected column `col` of `record`, which was the last one split.
    fn value<'r>(&self, record: &'r [u8], col: usize) -> Value<'r>;
    /// The text of the field column `col` comes from, as written (a time
    /// without its brackets, a request line whole), of the last record split.
    fn text<'r>(&self, record: &'r [u8], col: usize) -> &'r [u8];
    /// Whether column `col`'s value is always `Value::Text` of its
    /// [`RowParser::text`] (a text field whole), so that a caller can read
    /// the text instead of the value: a value's call, through its
    /// conversions, was 4.5% of the report's samples, for texts mostly.
    fn verbatim(&self, _col: usize) -> bool {
        false
    }
    /// Column `col`'s value if it is an integer: [`RowParser::value`]'s,
    /// in a call that does only that (a status, a size: two a line).
    fn int(&self, record: &[u8], col: usize) -> Option<i64> {
        match self.value(record, col) {
            Value::Int(x) => Some(x),
            _ => None,
        }
    }
}

/// A parser that reads a record through a [`bytemap::Finder`]: by searching its
/// bytes ([`Parser::parse`]), or by hopping between the byte map's marks
/// ([`Parser::parse_in`]), and that has a [`Parser::parse_run`] of its own.
/// Its [`Parser`] is the impl below, written once; it is monomorphic (one copy
/// per parser, the finder a type parameter), so the hot path's calls are
/// static and inlined as when each parser wrote them.
pub(crate) trait FindingParser: Send {
    /// Parse `record` as [`Parser::parse`] says, finding bytes with `f`.
    fn parse_with(&mut self, record: &[u8], out: &mut Columns, f: &impl bytemap::Finder) -> bool;

    /// [`Parser::parse_run`].
    fn run(
        &mut self,
        piece: &[u8],
        map: &bytemap::ByteMap,
        pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize);

    /// [`Parser::blank_is_row`].
    fn blank_row(&self) -> bool {
        false
    }
}

impl<P: FindingParser> Parser for P {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        self.parse_with(record, out, &bytemap::Plain)
    }

    fn blank_is_row(&self) -> bool {
        self.blank_row()
    }

    fn parse_in(
        &mut self,
        piece: &[u8],
        map: &bytemap::ByteMap,
        start: usize,
        end: usize,
        out: &mut Columns,
    ) -> bool {
        let found = bytemap::Mapped { map, base: start };
        self.parse_with(&piece[start..end], out, &found)
    }

    fn has_runs(&self) -> bool {
        true
    }

    fn parse_run(
        &mut self,
        piece: &[u8],
        map: &bytemap::ByteMap,
        pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize) {
        self.run(piece, map, pos, room, out)
    }
}

/// The records of `piece` from `pos`, each ended by the separator (class 0 of
/// `map`), at most `room` of them, handed to `each` as `(start, end)` for as
/// long as it takes them and none is blank or ends in CR: the loop of the
/// parsers' [`Parser::parse_run`]. Returns where it stopped and how many it
/// took.
#[inline(always)]
pub fn run_records(
    piece: &[u8],
    map: &bytemap::ByteMap,
    mut pos: usize,
    room: usize,
    mut each: impl FnMut(usize, usize) -> bool,
) -> (usize, usize) {
    let mut n = 0;
    while n < room {
        let Some(end) = map.next(0, pos, piece.len()) else {
            break;
        };
        if end == pos || piece[end - 1] == b'\r' || !each(pos, end) {
            break;
        }
        n += 1;
        pos = end + 1;
    }
    (pos, n)
}

/// The Arrow schema of `fields`.
pub fn schema(fields: &[Field]) -> SchemaRef {
    Arc::new(Schema::new(
        fields
            .iter()
            .map(|f| ArrowField::new(&f.name, f.kind.data_type(), true))
            .collect::<Vec<_>>(),
    ))
}

/// The first `c` at or after `pos`: up to 64 bytes 16 at a time with SSE2
/// (most fields are shorter, and memchr's set-up cost more than the search
/// there: memchr was 10-13% of a log or 1BRC scan in perf), memchr beyond.
/// A plain loop over those bytes was most of the 1,065 instructions that
/// splitting a combined-log line took without a byte map (cachegrind).
#[inline]
pub(crate) fn next_byte(r: &[u8], mut pos: usize, c: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    for _ in 0..4 {
        if pos + 16 > r.len() {
            break;
        }
        match sse2_find(&r[pos..pos + 16], c) {
            Some(i) => return Some(pos + i),
            None => pos += 16,
        }
    }
    let near = r.len().min(pos + 16);
    match r[pos..near].iter().position(|&b| b == c) {
        Some(i) => Some(pos + i),
        None => memchr::memchr(c, &r[near..]).map(|i| near + i),
    }
}

/// The first `c` in the 16 bytes of `w`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sse2_find(w: &[u8], c: u8) -> Option<usize> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    assert!(w.len() >= 16);
    // SAFETY: `w` holds 16 bytes (checked above), read unaligned; SSE2 is
    // part of every x86_64 processor.
    let m = unsafe {
        let v = _mm_loadu_si128(w.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)))
    };
    (m != 0).then(|| m.trailing_zeros() as usize)
}

/// Parse `--format` (without a table name). `sample` is the start of the first
/// input, for `auto` and for CSV type inference.
pub fn from_spec(
    spec: &str,
    opts: &FormatOptions,
    sample: &[u8],
) -> Result<Arc<dyn Format>, FormatError> {
    let (name, arg) = match spec.split_once(':') {
        Some((n, a)) => (n.to_ascii_lowercase(), Some(unquote(a))),
        // Names in any case: GoAccess's are upper case (`COMBINED`).
        None => (spec.to_ascii_lowercase(), None),
    };
    Ok(match (name.as_str(), arg) {
        ("auto", None) => detect::detect(sample, opts)?,
        (n, None) if clf::LogFormat::is_named(n) => Arc::new(clf::LogFormat::named(n)?),
        ("apache", Some(f)) => Arc::new(clf::LogFormat::apache(f)?),
        ("nginx", Some(f)) => Arc::new(clf::LogFormat::nginx(f)?),
        ("csv", None) => Arc::new(csv::Csv::new(opts.delimiter.unwrap_or(b','), opts, sample)?),
        ("tsv", None) => Arc::new(csv::Csv::new(
            opts.delimiter.unwrap_or(b'\t'),
            opts,
            sample,
        )?),
        ("jsonl" | "json" | "ndjson", None) => Arc::new(jsonl::JsonLines::new(opts, sample)?),
        ("logfmt", None) => Arc::new(logfmt::Logfmt::new(opts, sample)?),
        ("fields", None) => Arc::new(fields::Fields::new(opts, sample)?),
        ("regex", Some(re)) => Arc::new(regex::RegexFormat::new(re)?),
        _ => return Err(FormatError::Unknown(spec.to_string())),
    })
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return &t[1..t.len() - 1];
        }
    }
    s
}

/// Options that shape a format (from the command line).
#[derive(Debug, Clone, Default)]
pub struct FormatOptions {
    /// CSV/TSV field delimiter.
    pub delimiter: Option<u8>,
    /// CSV/TSV: the first line is data, columns are c1..cN.
    pub no_header: bool,
    /// Columns and types given by the user (`name:type,...`), instead of inferred.
    pub schema: Option<Vec<Field>>,
    /// `--strict`: the first malformed record, value not of its column's type
    /// or invalid UTF-8 stops the query with an error that names it.
    pub strict: bool,
    /// Whether the sample a format is made from is its whole input (set by
    /// `read::sample` and `wf_sql` when they know it, never by a user): a
    /// CSV quote that does not close in a whole input is data; in a file's
    /// first bytes, the record it opens is left out of the sample (its line
    /// breaks are not records). Not known (`None`): a sample shorter than
    /// [`SAMPLE`] is taken for the whole input. Judged by length alone, a
    /// whole file of 256 KiB or more had its columns typed text.
    pub whole_sample: Option<bool>,
}

impl FormatOptions {
    /// These options, with the sample known to be the whole input when
    /// `whole` (else as they were: see [`FormatOptions::whole_sample`]).
    pub fn whole_if(&self, whole: bool) -> Self {
        FormatOptions {
            whole_sample: if whole { Some(true) } else { self.whole_sample },
            ..self.clone()
        }
    }

    /// `--delimiter`, `--no-header`, `--schema` and `--strict` as the user
    /// gave them: the one way the CLI and the Python package make the options
    /// (the delimiter is one ASCII character, or `\t` or `tab` for a tab).
    pub fn parse(
        delimiter: Option<&str>,
        no_header: bool,
        schema: Option<&str>,
        strict: bool,
    ) -> Result<FormatOptions, FormatError> {
        let delimiter = match delimiter.map(str::as_bytes) {
            None => None,
            // Written as a shell makes it hard to type: as DuckDB's delim.
            Some(br"\t" | b"tab" | b"TAB") => Some(b'\t'),
            // A quote or a line break cannot split fields: DuckDB refuses
            // them too; taken, they read every record as one odd field.
            Some(&[c]) if !matches!(c, b'"' | b'\n' | b'\r') => Some(c),
            Some(_) => {
                let d = delimiter.unwrap_or_default().to_string();
                return Err(FormatError::Delimiter(d));
            }
        };
        let schema = schema.map(parse_schema).transpose()?;
        Ok(FormatOptions {
            delimiter,
            no_header,
            schema,
            strict,
            whole_sample: None,
        })
    }
}

/// Parse `--schema 'name:type,name:type'` (a comma inside a type's parentheses,
/// as in `decimal(5,1)`, does not end it).
pub fn parse_schema(s: &str) -> Result<Vec<Field>, FormatError> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[from..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (n, t) = p
                .split_once(':')
                .ok_or_else(|| FormatError::SchemaEntry(p.to_string()))?;
            let kind = Kind::parse(t).ok_or_else(|| FormatError::SchemaType(t.to_string()))?;
            Ok(Field::new(n.trim(), kind))
        })
        .collect()
}

/// Records of a sample: its first lines (without `\r`), at most `n`.
pub fn sample_lines(sample: &[u8], n: usize) -> Vec<&[u8]> {
    // memchr, not a per-byte split: one 64 MiB line took 13% of `wf sql`'s CPU
    // here (bench/results/sqlc-longrecord-2026-11-27.txt).
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', sample).take(n + 1) {
        lines.push(&sample[start..nl]);
        start = nl + 1;
    }
    if lines.len() <= n {
        lines.push(&sample[start..]);
    }
    // The last piece may be cut by the sample's end; keep it only if the sample
    // ended the input (no way to know here), so drop it when more came before.
    if lines.len() > 1 {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .take(n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `next_byte` finds what a plain search finds, at every start and
    /// record length around its 16-byte steps.
    #[test]
    fn next_byte_as_a_plain_search() {
        let mut x: u64 = 3;
        for len in 0..150 {
            let r: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    [b'a', b'b', b' ', b'"'][(x >> 60) as usize % 4]
                })
                .collect();
            for pos in 0..=len {
                for c in [b' ', b'"', b'z'] {
                    let want = r[pos..].iter().position(|&b| b == c).map(|i| pos + i);
                    assert_eq!(next_byte(&r, pos, c), want, "{len} {pos} {c}");
                }
            }
        }
    }

    /// Format names in any case (GoAccess's are upper case); a format string's
    /// own text as written.
    #[test]
    fn names_in_any_case() {
        let opts = FormatOptions::default();
        for spec in ["COMBINED", "Common", "NGINX-MAIN", "CombinedIO"] {
            let f = from_spec(spec, &opts, b"").unwrap();
            assert_eq!(f.name(), spec.to_ascii_lowercase());
        }
        let f = from_spec("APACHE:'%h %U'", &opts, b"").unwrap();
        let names: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["client", "url_path"], "%U is not %u");
        assert!(from_spec("nosuch", &opts, b"").is_err());
    }

    /// The per-byte split `sample_lines` used before memchr, as the reference.
    fn sample_lines_plain(sample: &[u8], n: usize) -> Vec<&[u8]> {
        let mut lines: Vec<&[u8]> = sample.split(|&b| b == b'\n').take(n + 1).collect();
        if lines.len() > 1 {
            lines.pop();
        }
        let lines = lines
            .into_iter()
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        lines.filter(|l| !l.is_empty()).take(n).collect()
    }

    #[test]
    fn sample_lines_equals_a_plain_split() {
        let samples: [&[u8]; 7] = [
            b"",
            b"a",
            b"a\n",
            b"a\nb",
            b"a\r\n\nb\nc\n",
            b"\n\n\n",
            b"x\ny\nz",
        ];
        for s in samples {
            for n in 0..5 {
                assert_eq!(sample_lines(s, n), sample_lines_plain(s, n), "{s:?} {n}");
            }
        }
    }

    #[test]
    fn decimal_types_and_values() {
        let f = parse_schema("station:string, t:decimal(3,1),x:NUMERIC , y:decimal(5)").unwrap();
        let kinds: Vec<Kind> = f.iter().map(|x| x.kind).collect();
        let dec = |precision, scale| Kind::Decimal { precision, scale };
        assert_eq!(kinds, [Kind::Str, dec(3, 1), dec(38, 10), dec(5, 0)]);
        assert_eq!(f[1].kind.data_type(), DataType::Decimal128(3, 1));
        for bad in [
            "t:decimal(0,0)",
            "t:decimal(39,1)",
            "t:decimal(3,4)",
            "t:decimal(3,x)",
        ] {
            assert!(parse_schema(bad).is_err(), "{bad}");
        }
        let p = |v: &str| columns::parse_decimal(v.as_bytes(), 5, 2);
        assert_eq!(p("12.3"), Some(1230));
        assert_eq!(p("-0.05"), Some(-5));
        assert_eq!(p(" +7 "), Some(700));
        assert_eq!(p(".5"), Some(50));
        assert_eq!(p("5."), Some(500));
        assert_eq!(p("1.005"), Some(101), "half away from zero");
        assert_eq!(p("-1.004"), Some(-100));
        assert_eq!(p("-1.0051"), Some(-101));
        assert_eq!(p("999.99"), Some(99999));
        assert_eq!(p("999.995"), None, "rounds past the precision");
        assert_eq!(p("1000"), None);
        for bad in ["", "-", ".", "1e3", "1.2.3", "nan", "1,5", "0x10"] {
            assert_eq!(p(bad), None, "{bad}");
        }
        let long = "1".repeat(60);
        assert_eq!(columns::parse_decimal(long.as_bytes(), 38, 0), None);
    }

    /// Random records of the bytes formats cut at (quotes, brackets, blanks,
    /// delimiters, backslashes, invalid UTF-8), mixed with well-formed ones.
    fn odd_records(seed: u64, n: usize, good: &[&str]) -> Vec<Vec<u8>> {
        let alphabet = b" \"[]\\,;\t={}:-/.0123456789aZ\xff\xc3\xa9";
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as usize
        };
        (0..n)
            .map(|_| {
                let mut r = good[next() % good.len()].as_bytes().to_vec();
                for _ in 0..next() % 4 {
                    let len = r.len() + 1;
                    let at = next() % len;
                    match next() % 3 {
                        0 if !r.is_empty() => {
                            r.remove(at.min(r.len() - 1));
                        }
                        _ => r.insert(at, alphabet[next() % alphabet.len()]),
                    }
                }
                r.retain(|&c| c != b'\n');
                r
            })
            .collect()
    }

    /// Every format, every column: parsing records one by one and parsing them
    /// in one piece through the byte map give the same rows and the same
    /// malformed count, and neither panics.
    #[test]
    fn piece_and_record_parsing_agree_on_odd_records() {
        let log = r#"1.2.3.4 - u [10/Oct/2000:13:55:36 -0700] "GET /a?b=1 HTTP/1.1" 200 123 "http://r/" "Mozilla/5.0 (X; \"q\")""#;
        let cases: &[(&str, &[&str])] = &[
            ("combined", &[log]),
            (
                "common",
                &[r#"h - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.0" 404 -"#],
            ),
            ("vcombined", &[&format!("v.example:443 {log}")]),
            (
                r#"nginx:$remote_addr [$time_local] "$request" $status $request_time "$http_user_agent""#,
                &[r#"1.2.3.4 [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 0.004 "ua x""#],
            ),
            (
                "csv",
                &["a,b,c", "1,\"x,y\",2.5", "2,\"q\"\"r\",", "3,z,-1"],
            ),
            ("tsv", &["a\tb", "1\tx", "2\t\"y\""]),
            (
                "jsonl",
                &[
                    r#"{"a":1,"b":"x\"y","c":{"d":[1,2]}}"#,
                    r#"{"a":-0,"b":null}"#,
                ],
            ),
            ("logfmt", &[r#"a=1 b="x y" c=2.5"#, "a=2 b=z"]),
            ("fields", &["a b  c", " x\ty z w"]),
        ];
        for (k, (spec, good)) in cases.iter().enumerate() {
            let sample = good.join("\n");
            let f = from_spec(spec, &FormatOptions::default(), sample.as_bytes()).unwrap();
            let proj: Vec<usize> = (0..f.fields().len()).collect();
            let kinds: Vec<Kind> = f.fields().iter().map(|x| x.kind).collect();
            let recs = odd_records(k as u64 + 1, 3000, good);
            let (mut one, mut piece) = (f.parser(&proj), f.parser(&proj));
            let (mut a, mut b) = (Columns::new(&kinds), Columns::new(&kinds));
            let mut c = Columns::new(&kinds);
            let bad_a = recs.iter().filter(|r| !one.parse(r, &mut a)).count();
            let data = recs.join(&b'\n');
            let mut map = byte_map(f.as_ref());
            map.build(&data);
            let (mut pos, mut bad_b) = (0, 0);
            for r in &recs {
                bad_b += !piece.parse_in(&data, &map, pos, pos + r.len(), &mut b) as usize;
                pos += r.len() + 1;
            }
            let bad_c = parse_runs(piece.as_mut(), &data, &map, &recs, &mut c);
            assert_eq!(bad_a, bad_b, "{spec}: malformed");
            assert_eq!(bad_a, bad_c, "{spec}: malformed (runs)");
            // Some records malformed, not all (`fields` takes any line).
            assert!(bad_a < recs.len(), "{spec}: all malformed");
            assert!(bad_a > 0 || *spec == "fields", "{spec}: none malformed");
            let schema = schema(f.fields());
            let a = a.finish(&schema).unwrap();
            assert_eq!(a, b.finish(&schema).unwrap(), "{spec}");
            assert_eq!(a, c.finish(&schema).unwrap(), "{spec} (runs)");
        }
    }

    /// Runs over a piece checked as a whole (`utf8_checked`, so `fields`
    /// writes every column through `Columns::texts`) give the rows of the
    /// records parsed one by one, for projections with gaps, out of order and
    /// empty, and records with fewer fields than the columns.
    #[test]
    fn runs_over_checked_pieces_agree_with_records() {
        let good = ["a b  c d", " x\ty z w\x0bv ", "\u{e9}  \u{20ac}\x0c1"];
        let f = from_spec(
            "fields",
            &FormatOptions::default(),
            good.join("\n").as_bytes(),
        );
        let f = f.unwrap();
        assert_eq!(f.fields().len(), 5);
        let (recs, data, map) = utf8_piece(f.as_ref(), 9, 3000, &good);
        for proj in [
            vec![0, 1, 2, 3, 4],
            vec![4, 1],
            vec![2],
            vec![3, 0, 2],
            vec![],
        ] {
            let kinds = vec![Kind::Str; proj.len()];
            let (mut one, mut runs) = (f.parser(&proj), f.parser(&proj));
            let (mut a, mut c) = (Columns::new(&kinds), Columns::new(&kinds));
            c.utf8_checked = true;
            for r in &recs {
                assert!(one.parse(r, &mut a));
            }
            assert_eq!(parse_runs(runs.as_mut(), &data, &map, &recs, &mut c), 0);
            let fields: Vec<Field> = proj.iter().map(|&i| f.fields()[i].clone()).collect();
            let schema = schema(&fields);
            assert_eq!(a.rows(), recs.len());
            let a = a.finish(&schema).unwrap();
            assert_eq!(a, c.finish(&schema).unwrap(), "{proj:?}");
        }
    }

    /// The valid UTF-8 ones of [`odd_records`], the piece they make (joined
    /// by newlines) and its byte map for `f`.
    fn utf8_piece(
        f: &dyn Format,
        seed: u64,
        n: usize,
        good: &[&str],
    ) -> (Vec<Vec<u8>>, Vec<u8>, bytemap::ByteMap) {
        let recs: Vec<Vec<u8>> = odd_records(seed, n, good)
            .into_iter()
            .filter(|r| std::str::from_utf8(r).is_ok())
            .collect();
        let data = recs.join(&b'\n');
        let mut map = byte_map(f);
        map.build(&data);
        (recs, data, map)
    }

    /// CSV runs over a checked piece append a column at a time (text and
    /// number columns) and give the rows, NULLs, bad values and malformed
    /// counts of the records parsed one by one: every kind, projections with
    /// gaps, out of order and empty, and one with a bool column (no
    /// columnar run).
    #[test]
    fn csv_runs_a_column_at_a_time_agree_with_records() {
        let good = [
            "ab,12,2.5,1.25,true",
            "\"q,r\",-3,.5,-0.1,false",
            "x,,1e3,7,",
            "\u{e9}\u{20ac} long enough to leave the view,9223372036854775807,-12.5,999.99,1",
            ",4,x,y,z",
        ];
        let opts = FormatOptions {
            no_header: true,
            schema: Some(parse_schema("s:string,i:int,f:float,d:decimal(5,2),b:bool").unwrap()),
            ..FormatOptions::default()
        };
        let f = from_spec("csv", &opts, good.join("\n").as_bytes()).unwrap();
        let (recs, data, map) = utf8_piece(f.as_ref(), 17, 4000, &good);
        for proj in [
            vec![0, 1, 2, 3],
            vec![2, 0],
            vec![3],
            vec![1, 3, 2],
            vec![],
            vec![4, 0, 2],
        ] {
            let kinds: Vec<Kind> = proj.iter().map(|&i| f.fields()[i].kind).collect();
            let (mut one, mut runs) = (f.parser(&proj), f.parser(&proj));
            let (mut a, mut c) = (Columns::new(&kinds), Columns::new(&kinds));
            c.utf8_checked = true;
            let bad_a = recs.iter().filter(|r| !one.parse(r, &mut a)).count();
            let bad_c = parse_runs(runs.as_mut(), &data, &map, &recs, &mut c);
            assert_eq!(bad_a, bad_c, "{proj:?}: malformed");
            assert!(
                bad_a > 0 && bad_a < recs.len() / 2,
                "{proj:?}: {bad_a} malformed"
            );
            assert_eq!(a.bad_values, c.bad_values, "{proj:?}: bad values");
            assert_eq!(a.rows(), c.rows(), "{proj:?}: rows");
            let fields: Vec<Field> = proj.iter().map(|&i| f.fields()[i].clone()).collect();
            let schema = schema(&fields);
            let a = a.finish(&schema).unwrap();
            assert_eq!(a, c.finish(&schema).unwrap(), "{proj:?}");
        }
    }

    /// The records of `data` read as the SQL scan reads them: runs of
    /// [`Parser::parse_run`] (after the first record), each record a run stops
    /// at with [`Parser::parse_in`]. Returns how many did not parse.
    fn parse_runs(
        p: &mut dyn Parser,
        data: &[u8],
        map: &bytemap::ByteMap,
        recs: &[Vec<u8>],
        out: &mut Columns,
    ) -> usize {
        let ends: Vec<usize> = recs
            .iter()
            .scan(0, |pos, r| {
                *pos += r.len() + 1;
                Some(*pos - 1)
            })
            .collect();
        let (mut pos, mut bad) = (0, 0);
        while pos < data.len() {
            if pos > 0 {
                pos = p.parse_run(data, map, pos, usize::MAX, out).0;
                if pos >= data.len() {
                    break;
                }
            }
            let end = ends[ends.partition_point(|&e| e < pos)];
            bad += !p.parse_in(data, map, pos, end, out) as usize;
            pos = end + 1;
        }
        bad
    }

    #[test]
    fn format_options_parse_checks_delimiter_and_schema() {
        let o = FormatOptions::parse(Some(";"), true, Some("a:int,b:decimal(5,1)"), true).unwrap();
        assert_eq!(
            (o.delimiter, o.no_header, o.strict),
            (Some(b';'), true, true)
        );
        let schema = o.schema.unwrap();
        assert_eq!(schema[0], Field::new("a", Kind::Int));
        assert_eq!(
            schema[1].kind,
            Kind::Decimal {
                precision: 5,
                scale: 1
            }
        );
        let none = FormatOptions::parse(None, false, None, false).unwrap();
        assert_eq!((none.delimiter, none.schema), (None, None));
        for tab in [r"\t", "tab", "\t"] {
            let o = FormatOptions::parse(Some(tab), false, None, false).unwrap();
            assert_eq!(o.delimiter, Some(b'\t'), "{tab}");
        }
        let err = |d: Option<&str>, s: Option<&str>| {
            FormatOptions::parse(d, false, s, false)
                .unwrap_err()
                .to_string()
        };
        let tail = ": must be one ASCII character, not a quote or a line break (or \\t for a tab)";
        for (given, shown) in [
            ("ab", r#""ab""#),
            ("é", r#""é""#),
            ("", r#""""#),
            ("\"", r#""\"""#),
            ("\n", r#""\n""#),
            ("\r", r#""\r""#),
        ] {
            assert_eq!(err(Some(given), None), format!("--delimiter {shown}{tail}"));
        }
        assert_eq!(err(None, Some("a")), "--schema: 'a' is not name:type");
        assert!(err(None, Some("a:nope")).starts_with("--schema: unknown type 'nope'"));
    }
}
