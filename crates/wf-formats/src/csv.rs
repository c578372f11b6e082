//! `csv` and `tsv` (RFC 4180): fields split at the delimiter; a field in double
//! quotes may hold the delimiter, doubled quotes (`""` is one `"`) and line
//! breaks (LF or CRLF, kept as written). A quote inside an unquoted field is
//! data (`1,x"y,3`), as Python's `csv` and DuckDB read it; see [`Quoting`] for
//! a quote that opens a field and never closes it. A file whose `"` is data
//! (its sampled lines split evenly only without quoting, [`sniff_quote`]:
//! a TSV of `"Hello" she said`) is read without quoting, every line a
//! record, as DuckDB's sniffer picks no quote. An unquoted empty field is
//! NULL, a quoted empty one is the empty string in a text column (as polars
//! reads them, and DuckDB with `allow_quoted_nulls=false`: its default makes
//! it NULL, checked with DuckDB 2.0) and NULL in any other, never a value
//! that does not fit its type.
//!
//! Columns: from the header line (the first line of every file; files whose
//! headers differ are matched by name, [`Csv::by_name`]), or `c1..cN` with
//! `--no-header`, or names and types from `--schema`. Types are inferred from
//! the first 1000 records of the first input (a column with no value there:
//! up to 20,480 records of its sample, DuckDB's; or, when the first file
//! has only a header, the first later file that has a value), in the order int, float,
//! timestamp (ISO 8601), bool, text; a later value that does not convert
//! stops the query (`read::problem`), where with `--schema` it is NULL and
//! counted. A record with another number of fields than the columns is malformed.
//! A blank line is no row, but in a file of one column, where it is a NULL
//! (an empty field), as DuckDB reads both.
//!
//! Records longer than a line: a file whose quoted fields hold line breaks can
//! not be cut at any newline, so `read::quote` checks each CSV file first (one
//! scan on every core for `"`, and only in a file with quotes a serial pass
//! that follows the quote state) and reads a file with quoted line breaks as one serial chunk;
//! every other file is cut at newlines and parsed on every core.
//!
//! Speed: most records of most files are plain (no quotes, no CR, the right
//! number of fields), so [`Parser::parse_run`] takes runs of them in one call,
//! splitting at the delimiter's marks in the piece's byte map and converting in
//! place; numbers of at most 8 bytes are read as one word ([`short_number`]).
//! Any other record goes to the general split, with every check. On 1BRC (56 M
//! rows) this took the query from 45.7 to 33.3 G instructions (perf stat).
//! A run first notes its records' field spans, found in one walk over the separator's and the
//! delimiter's marks, then appends them a column at a time
//! ([`CsvParser::run_columns`]): appended as each field was found, a record
//! took about 390 instructions, too many for the processor to overlap one
//! record's number conversion (a chain of multiplies and a division) with the
//! next record's; now about 280 (callgrind, 64 MiB of 1BRC), and the 1 GiB
//! query 11% less time (user CPU 2.34 to 2.05 s, 9-round pass). Text from a
//! piece that is not valid UTF-8, times and bools are converted value by value
//! in the same loop per column.

use super::bytemap::{ByteMap, Finder, Plain};
use super::columns::NULL_SPAN;
use super::{
    columns, time, Columns, Field, FindingParser, Format, FormatError, FormatOptions, Kind, Parser,
};

#[derive(Debug, Clone)]
pub struct Csv {
    delim: u8,
    /// `"` quotes fields (RFC 4180); false for a file the sample shows has
    /// no quoting ([`sniff_quote`]).
    quote: bool,
    header: bool,
    fields: Vec<Field>,
    inferred: bool,
    /// Per layout of a file's columns, the table column of each (layout 0:
    /// the first file's header, every column in order); see [`Csv::by_name`].
    layouts: Vec<Vec<usize>>,
    /// The layout of each of the table's inputs (empty: all layout 0).
    layout_of: Vec<usize>,
    /// Per column, whether its type rests on a value (or `--schema`): one
    /// without is text until a later file's sample shows one, if the first
    /// file's sample was the whole file ([`Csv::by_name`]).
    seen: Vec<bool>,
    /// The first file's sample has rows (not a header alone).
    rows: bool,
    /// The sample ends inside a quoted field ([`open_at_end`]).
    open: bool,
    /// The first file's header names renamed ([`Format::renamed`]).
    renamed: Vec<String>,
}

impl Csv {
    pub fn new(delim: u8, opts: &FormatOptions, sample: &[u8]) -> Result<Self, FormatError> {
        let header = !opts.no_header;
        let cut = !opts.whole_sample.unwrap_or(sample.len() < crate::SAMPLE);
        // A sample taken for whole by its length alone (a stream's, which
        // ends at a pause, maybe mid-record) is sniffed to its last line
        // break: `2,2024-01-0` typed a column of times text, exit 0.
        let sniffed = match opts.whole_sample {
            None if !cut => memchr::memrchr(b'\n', sample).map_or(sample, |i| &sample[..=i]),
            _ => sample,
        };
        let (quote, records) = sniff_quote(sniffed, delim, 1001, cut);
        let (fields, seen) = match &opts.schema {
            Some(s) => (s.clone(), vec![true; s.len()]),
            None => infer_sampled(sniffed, (delim, quote, cut), &records, header),
        };
        if fields.is_empty() {
            return Err(FormatError::NoCsvColumns);
        }
        let header_record = records.first().filter(|_| header && opts.schema.is_none());
        Ok(Csv {
            delim,
            quote,
            header,
            renamed: renamed_of(header_record, fields.iter().map(|f| f.name.as_str())),
            inferred: opts.schema.is_none(),
            layouts: vec![(0..fields.len()).collect()],
            layout_of: Vec::new(),
            fields,
            seen,
            rows: records.len() > usize::from(header),
            open: open_at_end(sample, delim, quote),
        })
    }

    /// The sample ends inside a quoted field (with quoting on or not: its
    /// open quote may be what turned quoting off): its record, and the
    /// types of the records after it, are in bytes past the sample, which
    /// is read on when there are more ([`crate::read::sample::needs_wider_sample`]).
    /// Read as records, that field's lines turned quoting off for the
    /// whole file (60,012 rows of a CSV of 12, exit 0), or typed the
    /// columns (`max(id)` 9 of 1..12).
    pub fn open_at_end(&self) -> bool {
        self.open
    }

    /// The field delimiter.
    pub fn delimiter(&self) -> u8 {
        self.delim
    }

    /// Some column has no value in the sample (nor a type from `--schema`).
    pub fn has_unseen(&self) -> bool {
        self.seen.iter().any(|s| !s)
    }

    /// The table over inputs whose headers may differ (their samples, with
    /// their names): columns are matched by header name, as DuckDB's
    /// `union_by_name` does. The table has the first file's columns, then
    /// each column another file adds, in the order first seen; a file
    /// without a column gives NULL for it. A column's type is the first
    /// file's, widened by the types inferred from the other files' samples
    /// where their headers differ. A file whose first line shares no name with
    /// the table's columns has no header: an error naming it. Files with
    /// `--schema` or `--no-header` are read by position instead, and so is
    /// every file when all headers are the first file's.
    ///
    /// As DuckDB's: a column with no value in the first file is typed by a
    /// later file's values only if the first file was sampled whole
    /// (`first_whole`) or is a header alone; one with rows past its sample
    /// is text.
    pub fn by_name(
        mut self,
        samples: &[(String, Vec<u8>)],
        first_whole: bool,
    ) -> Result<Csv, FormatError> {
        if !self.header || !self.inferred || samples.len() < 2 {
            return Ok(self);
        }
        if !first_whole && self.rows {
            self.seen.fill(true);
        }
        let first: Vec<String> = self.fields.iter().map(|f| f.name.clone()).collect();
        let mut layout_of = Vec::with_capacity(samples.len());
        for (name, sample) in samples {
            // A later file's sample: whole if shorter than a sample's least.
            let cut = sample.len() >= crate::SAMPLE;
            let records = sample_records(sample, (self.delim, self.quote, cut), 1001);
            let Some((header, rows)) = records.split_first() else {
                layout_of.push(0); // an empty file: no records
                continue;
            };
            let names = header_names(header);
            // This file's renames, said once (a later file's `_file` column
            // was renamed unsaid).
            for r in renamed_of(Some(header), names.iter().map(String::as_str)) {
                if !self.renamed.contains(&r) {
                    self.renamed.push(r);
                }
            }
            if names == first {
                // Read by position; columns with no value yet take their
                // types from this file's (a first file of a header only
                // made every column text: max(a) of 3, 100, 25 was 3).
                self.fill_unseen(rows);
                layout_of.push(0);
                continue;
            }
            let known = self.fields.len();
            let map = self.add_columns(&names, rows);
            if map.iter().all(|&c| c >= known) {
                let first_file = samples.iter().find(|(_, s)| !s.is_empty());
                return Err(FormatError::Headers {
                    file: name.clone(),
                    names,
                    first_file: first_file
                        .map_or("the first file", |(n, _)| n.as_str())
                        .to_string(),
                    first,
                });
            }
            let l = match self.layouts.iter().position(|m| *m == map) {
                Some(l) => l,
                None => {
                    self.layouts.push(map);
                    self.layouts.len() - 1
                }
            };
            layout_of.push(l);
        }
        self.layout_of = layout_of;
        Ok(self)
    }

    /// The table columns of a file with header `names` and sampled `rows`,
    /// adding the columns the table lacks and widening the types of those it
    /// has by the file's.
    fn add_columns(&mut self, names: &[String], rows: &[Record]) -> Vec<usize> {
        let mut map = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            let values = rows
                .iter()
                .filter_map(|r| r.get(i).and_then(|v| v.as_deref()));
            let kind = infer_kind(values.clone());
            let any = values.clone().any(|v| !v.is_empty());
            match self.fields.iter().position(|f| f.name == *n) {
                Some(c) if any && !self.seen[c] => {
                    (self.fields[c].kind, self.seen[c]) = (kind, true);
                    map.push(c);
                }
                Some(c) => {
                    if any {
                        self.fields[c].kind = unify(self.fields[c].kind, kind);
                    }
                    map.push(c);
                }
                None => {
                    self.fields.push(Field::new(n.clone(), kind));
                    self.seen.push(any);
                    map.push(self.fields.len() - 1);
                }
            }
        }
        map
    }

    /// The columns of no value so far typed by `rows` (of a file with the
    /// first file's header) where they hold one.
    fn fill_unseen(&mut self, rows: &[Record]) {
        let unseen: Vec<usize> = (0..self.fields.len()).filter(|&c| !self.seen[c]).collect();
        for c in unseen.into_iter().filter(|&c| has_value(rows, c)) {
            let values = rows
                .iter()
                .filter_map(|r| r.get(c).and_then(|v| v.as_deref()));
            (self.fields[c].kind, self.seen[c]) = (infer_kind(values), true);
        }
    }
}

/// The type that holds values of both `a` and `b` (text when no number type does).
fn unify(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (a, b) if a == b => a,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        (Kind::Int, d @ Kind::Decimal { .. }) | (d @ Kind::Decimal { .. }, Kind::Int) => d,
        (Kind::Float, Kind::Decimal { .. }) | (Kind::Decimal { .. }, Kind::Float) => Kind::Float,
        _ => Kind::Str,
    }
}

/// The names of a header line's fields: an empty one is `cN` (its place), and
/// a name seen before, or one of the virtual columns' ([`crate::VIRTUAL_NAMES`]),
/// gets a suffix as DuckDB gives one (`a`, `a_1`, `a_2`).
fn header_names(h: &Record) -> Vec<String> {
    unique_names(written_names(h), &crate::VIRTUAL_NAMES)
}

/// A header line's fields as written (an empty one `cN`, its place).
fn written_names(h: &Record) -> Vec<String> {
    let name = |(i, n): (usize, &Option<Vec<u8>>)| match n {
        Some(n) if !n.is_empty() => String::from_utf8_lossy(n).into_owned(),
        _ => format!("c{}", i + 1),
    };
    h.iter().enumerate().map(name).collect()
}

/// What stderr says of a header's names (`names`, as [`header_names`] made
/// them) that were renamed, each name escaped as Rust writes a string.
fn renamed_of<'a>(header: Option<&Record>, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let Some(h) = header else {
        return Vec::new();
    };
    let written = written_names(h).into_iter().zip(names);
    written
        .filter(|(w, n)| w != n)
        .map(|(w, n)| format!("column {w:?} is named {n:?} (its name was taken)"))
        .collect()
}

/// Names made unique, and apart from the `reserved` ones: a repeated or
/// reserved name gets the first free suffix `_1`, `_2`, ...
pub fn unique_names(names: impl IntoIterator<Item = String>, reserved: &[&str]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> =
        reserved.iter().map(|r| r.to_string()).collect();
    let mut out = Vec::new();
    for n in names {
        let mut name = n.clone();
        let mut k = 1;
        while taken.contains(&name) {
            name = format!("{n}_{k}");
            k += 1;
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

/// A sampled record: its fields, `None` for NULL.
type Record = Vec<Option<Vec<u8>>>;

/// The first `n` records of a sample, split into fields (the last, maybe cut
/// by the sample's end, is dropped when there are others and the sample is
/// `cut`).
fn sample_records(sample: &[u8], (delim, quote, cut): (u8, bool, bool), n: usize) -> Vec<Record> {
    read_sample(sample, delim, quote, n, cut)
        .into_iter()
        .flatten()
        .collect()
}

/// The first `n` records of a sample, `None` for a malformed one (records
/// too: skipping them must not reach further into the file); with `quote`
/// off, every line is a record. A quote that does not close in the sample
/// makes its record its first line in a whole input (the quote is data);
/// a sample `cut` from a file's start ends before that record (its lines
/// typed the columns of a later file sampled so), and is read on when it is
/// the first input's ([`Csv::open_at_end`]).
fn read_sample(sample: &[u8], delim: u8, quote: bool, n: usize, cut: bool) -> Vec<Option<Record>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let q = Quoting { delim };
    for _ in 0..n {
        let end = match quote {
            true if cut => q.stream_end(sample, pos),
            true => q.record_end(sample, pos),
            false => memchr::memchr(b'\n', &sample[pos..]).map(|i| pos + i),
        };
        let Some(end) = end else {
            break;
        };
        out.push(owned_fields(trim_cr(&sample[pos..end]), delim, quote));
        pos = end + 1;
    }
    // The bytes after the last line break: a record cut by the sample's
    // end, but in a whole input its last record (a sample known whole:
    // `Csv::new` cuts one taken for whole at its last line break). Left
    // out there, a last record `7,"8,9` without a line break made a
    // quote-free CSV quoted (its other records split alike), and the
    // record malformed.
    if pos < sample.len() && out.len() < n && (out.is_empty() || !cut) {
        out.push(owned_fields(trim_cr(&sample[pos..]), delim, quote));
    }
    out
}

/// Whether `"` quotes fields in the file of `sample`, as DuckDB's sniffer
/// picks a quote, and the sample's first `n` records read so (well-formed
/// ones): not when the sample read with quotes has malformed records or
/// records of another field count than the first, and read without (a
/// record a line, split at every delimiter) has none. A TSV of `"Hello" she
/// said` (MySQL's, PostgreSQL's text COPY, IANA's TSV: no quoting) lost
/// such lines from every answer; DuckDB read them all.
fn sniff_quote(sample: &[u8], delim: u8, n: usize, cut: bool) -> (bool, Vec<Record>) {
    let even = |recs: &[Option<Record>]| match recs.first() {
        Some(Some(first)) => recs
            .iter()
            .all(|r| r.as_ref().map(Vec::len) == Some(first.len())),
        _ => false,
    };
    let quoted = read_sample(sample, delim, true, n, cut);
    if memchr::memchr(b'"', sample).is_none() || even(&quoted) {
        return (true, quoted.into_iter().flatten().collect());
    }
    let plain = read_sample(sample, delim, false, n, cut);
    match even(&plain) {
        true => (false, plain.into_iter().flatten().collect()),
        false => (true, quoted.into_iter().flatten().collect()),
    }
}

/// The start of the last record of `sample` (a prefix of a file, or all of
/// it), records cut from `from` (a record start), if a quote in it has no
/// closing quote.
pub fn open_record(sample: &[u8], delim: u8, from: usize) -> Option<usize> {
    memchr::memchr(b'"', &sample[from..])?;
    let q = Quoting { delim };
    let mut pos = from;
    while let Some(end) = q.stream_end(sample, pos) {
        pos = end + 1;
    }
    (pos < sample.len() && q.cut_open(sample, pos).1).then_some(pos)
}

/// Whether the sample ends inside a quoted field: its last record opens a
/// quote that does not close, and quoting is on, or would be without that
/// record (its open quote may be what turned it off: a pipe that paused
/// inside one). A TSV whose `"` is data and a last line `1\t"hello` is
/// not: read on, a live pipe waited for a quote that never came.
fn open_at_end(sample: &[u8], delim: u8, quote: bool) -> bool {
    match open_record(sample, delim, 0) {
        Some(start) => quote || sniff_quote(&sample[..start], delim, 1001, false).0,
        None => false,
    }
}

fn trim_cr(r: &[u8]) -> &[u8] {
    r.strip_suffix(b"\r").unwrap_or(r)
}

/// How records of a CSV file are cut when quoted fields may hold line breaks.
///
/// A `"` opens a quoted field only at the start of a field (the record's first
/// byte or just after the delimiter); anywhere else it is data, as Python's
/// `csv` module and DuckDB read `1,x"y,3`. A quoted field ends at a quote that
/// is not doubled. A quoted field that never ends, or whose closing quote is
/// followed by anything but the delimiter or the line's end, after spanning
/// a line break, was no quoted field: its record is only its first line
/// (malformed, counted), and the next line starts the next record. Without
/// that rule one stray quote at a field's start swallowed every line up to
/// the next quote as one malformed record. A record that is quoted
/// consistently but malformed for another reason (say, a field too many) keeps
/// its line breaks: cutting it at them could make rows that are not in the
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoting {
    pub delim: u8,
}

/// Where a record starting at some position ends (see [`Quoting::cut`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The newline ending the record, or the data's length.
    pub end: usize,
    /// The record holds a line break (inside quotes).
    pub multiline: bool,
}

impl Quoting {
    /// The newline ending the record that starts at `pos`, if any.
    pub fn record_end(self, data: &[u8], pos: usize) -> Option<usize> {
        Some(self.cut(data, pos).end).filter(|&e| e < data.len())
    }

    /// The record that starts at `start`: where it ends, and whether it spans
    /// lines.
    pub fn cut(self, data: &[u8], start: usize) -> Cut {
        self.cut_open(data, start).0
    }

    /// The separator ending the record that starts at `start` of a stream's
    /// bytes so far, `None` when later bytes could change it: the record
    /// runs past `data`, or a quote in it has no closing quote yet (at the
    /// end of the input such a quote is data, see [`Quoting::cut`]).
    pub fn stream_end(self, data: &[u8], start: usize) -> Option<usize> {
        let (c, open) = self.cut_open(data, start);
        (c.end < data.len() && !open).then_some(c.end)
    }

    /// [`Quoting::cut`], and whether the cut was made at a quote that has no
    /// closing quote in `data`.
    fn cut_open(self, data: &[u8], start: usize) -> (Cut, bool) {
        let line_end =
            |from: usize| memchr::memchr(b'\n', &data[from..]).map_or(data.len(), |i| from + i);
        let mut pos = start;
        let mut multiline = false;
        // A file's byte-order mark is not part of its first field: a quote
        // right after it opens a quoted field (else that field's line breaks
        // would cut the record).
        let start = if start == 0 && data.starts_with(b"\xef\xbb\xbf") {
            3
        } else {
            start
        };
        loop {
            let Some(i) = memchr::memchr2(b'"', b'\n', &data[pos..]) else {
                let end = data.len();
                return (Cut { end, multiline }, false);
            };
            let at = pos + i;
            if data[at] == b'\n' {
                return (Cut { end: at, multiline }, false);
            }
            if at != start && data[at - 1] != self.delim {
                pos = at + 1; // a quote inside an unquoted field: data
                continue;
            }
            let close = quote_close(data, at + 1);
            let spans = close.is_none_or(|c| memchr::memchr(b'\n', &data[at..c]).is_some());
            let ends_well = close.is_some_and(|c| {
                matches!(data.get(c + 1), None | Some(b'\n' | b'\r')) || data[c + 1] == self.delim
            });
            match close {
                Some(c) if ends_well || !spans => {
                    multiline |= spans;
                    pos = c + 1;
                }
                // No quoted field after all: the record ends with the line
                // this quote is on.
                _ => {
                    let end = line_end(at);
                    return (Cut { end, multiline }, close.is_none());
                }
            }
        }
    }

    /// True when some record of `data` spans lines (the file can not be cut
    /// at every newline).
    pub fn has_quoted_newline(self, data: &[u8]) -> bool {
        if memchr::memchr(b'"', data).is_none() {
            return false;
        }
        let mut pos = 0;
        while pos < data.len() {
            let c = self.cut(data, pos);
            if c.multiline {
                return true;
            }
            pos = c.end + 1;
        }
        false
    }

    /// The first record start at or after `from`, cutting records from `pos`,
    /// a record's start (the file's start, or a record start found earlier):
    /// a byte range's first record, see `read::quote`.
    pub fn record_start_from(self, data: &[u8], mut pos: usize, from: usize) -> usize {
        while pos < from && pos < data.len() {
            pos = self.cut(data, pos).end + 1;
        }
        pos.min(data.len())
    }
}

/// The closing quote of a quoted field whose value starts at `pos` (a `""`
/// inside is one quote), if any.
fn quote_close(data: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        let q = pos + memchr::memchr(b'"', &data[pos..])?;
        if data.get(q + 1) == Some(&b'"') {
            pos = q + 2;
        } else {
            return Some(q);
        }
    }
}

/// Whether a sample's first record is a header, as DuckDB's sniffer decides
/// it: yes when some column's first value (not empty) is not of the type the
/// records after it give the column (`id,2,name` over `1,2,x`), when every
/// column of those is text, or when every first value is empty; no when
/// every first value fits (`1,,3` over `1,2,3`). The rule was "no header
/// when some column is a number in every record", which took `a,,c` over
/// `1,2,3` for data (its empty field a NULL number): one row more than
/// DuckDB, exit 0.
pub fn has_header(sample: &[u8], delim: u8) -> bool {
    let cut = sample.len() >= crate::SAMPLE;
    // Not known whole: its bytes after the last line break may be half a
    // record (see `Csv::new`).
    let sample = memchr::memrchr(b'\n', sample).map_or(sample, |i| &sample[..=i]);
    let (_, records) = sniff_quote(sample, delim, 1001, cut);
    let Some((first, rest)) = records.split_first().filter(|(_, r)| !r.is_empty()) else {
        return true;
    };
    let n = records.iter().map(Vec::len).max().unwrap_or(0);
    let kind = |rows: &[Record], i: usize| {
        infer_kind(
            rows.iter()
                .filter_map(|r| r.get(i).and_then(|v| v.as_deref())),
        )
    };
    let kinds: Vec<Kind> = (0..n).map(|i| kind(rest, i)).collect();
    let empty = |i: usize| {
        first
            .get(i)
            .and_then(|v| v.as_deref())
            .is_none_or(<[u8]>::is_empty)
    };
    if kinds.iter().all(|k| *k == Kind::Str) || (0..n).all(empty) {
        return true;
    }
    (0..n).any(|i| !empty(i) && kind(&records, i) != kinds[i])
}

/// DuckDB's sample: a column with no value in the first 1000 records is
/// typed by up to this many of the sample (1,500 empty values then 5 and 40
/// were text: `max` 5, where DuckDB gives 40). JSON lines the same.
pub const WIDE_SAMPLE: usize = 20_480;

/// [`infer`] of a sample's first `records`, the columns with no value there
/// typed by up to [`WIDE_SAMPLE`] records of it (the header among them, as
/// DuckDB counts them: a value on data line 20,480 is not seen); and per
/// column whether it has a value in them.
fn infer_sampled(
    sample: &[u8],
    (delim, quote, cut): (u8, bool, bool),
    records: &[Record],
    header: bool,
) -> (Vec<Field>, Vec<bool>) {
    let mut fields = infer(records, header);
    let rows = |recs: &'_ [Record]| recs.len().saturating_sub(usize::from(header));
    let mut seen: Vec<bool> = (0..fields.len())
        .map(|c| has_value(&records[records.len() - rows(records)..], c))
        .collect();
    if seen.iter().all(|&s| s) || rows(records) == 0 {
        return (fields, seen);
    }
    let more = sample_records(sample, (delim, quote, cut), WIDE_SAMPLE);
    let wide = infer(&more, header);
    let unseen: Vec<usize> = (0..fields.len()).filter(|&c| !seen[c]).collect();
    for c in unseen {
        match wide.get(c) {
            Some(w) if has_value(&more[more.len() - rows(&more)..], c) => {
                (fields[c].kind, seen[c]) = (w.kind, true);
            }
            _ => {}
        }
    }
    (fields, seen)
}

/// Whether column `c` has a value (not NULL, not empty) in `rows`.
fn has_value(rows: &[Record], c: usize) -> bool {
    let v = |r: &Record| {
        r.get(c)
            .and_then(|v| v.as_deref())
            .is_some_and(|v| !v.is_empty())
    };
    rows.iter().any(v)
}

/// Column names and types from sampled records.
fn infer(records: &[Record], header: bool) -> Vec<Field> {
    let (names, rows): (Vec<String>, &[Record]) = match records.split_first() {
        Some((h, rest)) if header => (header_names(h), rest),
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
    // Numbers with spaces or tabs around them are numbers (DuckDB's too).
    let number = |v: &[u8], f: &dyn Fn(&[u8]) -> bool| {
        let v = trim(v);
        written_as_number(v) && f(v)
    };
    if all(&|v| number(v, &|v| columns::parse_int(v).is_some())) {
        Kind::Int
    } else if all(&|v| number(v, &integer)) {
        // Integers beyond 64 bits: a float would round them (9223372036854775809
        // read as 9.223372036854776e18). DuckDB's sniffer makes them HUGEINT
        // (BIGNUM past 38 digits); here a decimal(38,0), or text past it.
        match all(&|v| trim(v).strip_prefix(b"-").unwrap_or(trim(v)).len() <= 38) {
            true => Kind::Decimal {
                precision: 38,
                scale: 0,
            },
            false => Kind::Str,
        }
    } else if all(&|v| number(v, &|v| decimal(v).is_some())) {
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

/// Digits, with a `-` or not.
fn integer(v: &[u8]) -> bool {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// A value a number column may have been written from: not `+7`, nor a
/// zero-padded `007` or `-01.5` (a zip code, an id, a time of day), which a
/// number would not give back as written; DuckDB's sniffer reads such a
/// column as text too (checked with DuckDB 2.0). `0`, `0.5` and `-0` are
/// numbers.
fn written_as_number(v: &[u8]) -> bool {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    match digits {
        [b'+', ..] => false,
        [b'0', d, ..] => !d.is_ascii_digit(),
        _ => true,
    }
}

/// A value without the spaces and tabs around it (a number's, as DuckDB
/// reads `1, 9`: `max` was the text ' 9' of 9, 10 and 100).
#[inline]
pub fn trim(v: &[u8]) -> &[u8] {
    let blank = |c: &u8| *c == b' ' || *c == b'\t';
    let start = v.iter().position(|c| !blank(c)).unwrap_or(v.len());
    let end = v.iter().rposition(|c| !blank(c)).map_or(start, |e| e + 1);
    &v[start..end]
}

/// An integer column's value: [`columns::parse_int`], of the value without
/// the spaces and tabs around it if it has some.
#[inline(always)]
fn int_of(v: &[u8]) -> Option<i64> {
    columns::parse_int(v).or_else(|| {
        let t = trim(v);
        (t.len() < v.len()).then(|| columns::parse_int(t)).flatten()
    })
}

/// A plain decimal (`-12.3`, `4`, `.5`, `1e3`, spaces around it allowed,
/// `NaN` and `inf` as DuckDB reads them) as a float; the common
/// `digits.digits` shape is read without the general parser, exactly (an
/// integer of at most 15 digits divided by a power of ten is correctly rounded).
pub fn decimal(v: &[u8]) -> Option<f64> {
    let p = columns::plain_number(v)?;
    let digits = p.int_digits + p.decimals;
    if !p.whole || digits == 0 || digits > 15 {
        return general_float(v);
    }
    let x = p.m as f64 / POW10F[p.decimals];
    Some(if p.neg { -x } else { x })
}

const POW10F: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// [`decimal`] of `piece[s..e]`. A value of at most 8 bytes with 8 bytes of the
/// piece from `s` is read as one word ([`short_number`]), without a branch per
/// digit: the digit loops' mispredicted exits made `decimal` 11% of a 1BRC
/// query's cycles (perf).
#[inline(always)]
pub fn decimal_at(piece: &[u8], s: usize, e: usize) -> Option<f64> {
    if let Some((neg, m, decimals)) = short_at(piece, s, e) {
        // The sign bit set without a branch: a branch on it mispredicted on
        // every other 1BRC value.
        let x = m as f64 / POW10F[decimals];
        return Some(f64::from_bits(x.to_bits() | (neg as u64) << 63));
    }
    decimal(&piece[s..e])
}

/// [`columns::parse_decimal`] of `piece[s..e]`, a short value read as one word
/// as in [`decimal_at`].
#[inline(always)]
fn decimal128_at(piece: &[u8], s: usize, e: usize, precision: u8, scale: i8) -> Option<i128> {
    let scale_u = scale.max(0) as usize;
    if let Some((neg, m, decimals)) = short_at(piece, s, e) {
        if decimals <= scale_u {
            let n = (m as i128).checked_mul(columns::POW10[scale_u - decimals])?;
            return (n < columns::POW10[precision as usize]).then_some(if neg { -n } else { n });
        }
    }
    columns::parse_decimal(&piece[s..e], precision, scale)
}

/// [`short_number`] of the value `piece[s..e]` of 1 to 8 bytes, read as the 8
/// bytes of the piece from `s` (`None` where the piece has fewer).
#[inline(always)]
fn short_at(piece: &[u8], s: usize, e: usize) -> Option<(bool, u64, usize)> {
    let w = piece.get(s..s + 8).filter(|_| (1..=8).contains(&(e - s)))?;
    short_number(u64::from_le_bytes(w.try_into().expect("8 bytes")), e - s)
}

/// `-?digits[.digits]` in the first `len` (1..=8) bytes of `w` (little-endian,
/// so the first byte is the lowest): the sign, the digits as one integer, and
/// the number of decimals. `None` for every other shape (the caller then takes
/// the general path, which also decides what is no number at all).
#[inline(always)]
pub fn short_number(w: u64, len: usize) -> Option<(bool, u64, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let neg = (w as u8 == b'-') as usize;
    let n = len - neg;
    if n == 0 {
        return None;
    }
    let keep = u64::MAX >> (64 - 8 * n);
    // Digits become 0..=9; any other byte is 10 or more, and its high bit set
    // after adding 0x76 (or before: then a carry may also mark the next byte,
    // which only sends the value to the general path).
    let t = ((w >> (8 * neg)) ^ (0x30 * ONES)) & keep;
    let other = (t.wrapping_add(0x76 * ONES) | t) & (0x80 * ONES) & keep;
    let (digits, decimals) = if other == 0 {
        (t, 0)
    } else {
        let p = (other.trailing_zeros() / 8) as usize;
        // One other byte, a dot ('.' ^ '0' is 0x1e), and a digit beside it.
        if other & (other - 1) != 0 || (t >> (8 * p)) as u8 != 0x1e || n == 1 {
            return None;
        }
        let before = t & !(u64::MAX << (8 * p));
        let after = (t >> (8 * p)) >> 8;
        (before | (after << (8 * p)), n - 1 - p)
    };
    Some((
        neg == 1,
        word_digits(digits, n - (other != 0) as usize),
        decimals,
    ))
}

/// The integer of the `k` (1..=8) digit values in the low bytes of `x`, the
/// first (most significant) lowest: pairs, then quads, then all eight, each
/// step one multiply (the leading bytes shifted in are zeros).
#[inline(always)]
fn word_digits(x: u64, k: usize) -> u64 {
    let x = x << (8 * (8 - k));
    let x = (x.wrapping_mul(10 * 256 + 1) >> 8) & 0x00ff_00ff_00ff_00ff;
    let x = (x.wrapping_mul(100 * 65536 + 1) >> 16) & 0x0000_ffff_0000_ffff;
    x.wrapping_mul(10000 * (1 << 32) + 1) >> 32
}

fn general_float(v: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(trim(v)).ok()?;
    // Rust's parser also takes "infinity" and "nan" in any case, and
    // "1e5" with other letters nowhere: these are checked apart.
    if s.bytes()
        .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
    {
        return not_a_number(s);
    }
    s.parse().ok()
}

/// `NaN`, `inf`, `-Infinity` (any case), as DuckDB reads them into a DOUBLE
/// (a column of floats with a `NaN` was text: `min` 10.25 of 9.5 and 10.25).
fn not_a_number(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let x = match body.to_ascii_lowercase().as_str() {
        "nan" => f64::NAN,
        "inf" | "infinity" => f64::INFINITY,
        _ => return None,
    };
    Some(if s.starts_with('-') { -x } else { x })
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
    (delim, quote): (u8, bool),
    vals: &mut Vec<Val>,
    scratch: &mut Vec<u8>,
    f: &impl Finder,
) -> bool {
    vals.clear();
    scratch.clear();
    let mut pos = 0;
    loop {
        if quote && r.get(pos) == Some(&b'"') {
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
fn owned_fields(r: &[u8], delim: u8, quote: bool) -> Option<Record> {
    let (mut vals, mut scratch) = (Vec::new(), Vec::new());
    split_fields(r, (delim, quote), &mut vals, &mut scratch, &Plain).then(|| {
        vals.iter()
            .map(|&v| value(v, r, &scratch).map(<[u8]>::to_vec))
            .collect()
    })
}

impl Format for Csv {
    fn name(&self) -> String {
        let name = match self.delim {
            b',' => "csv".into(),
            b'\t' => "tsv".into(),
            d => format!("csv (delimiter '{}')", d as char),
        };
        match self.quote {
            true => name,
            false => format!("{name} (no quoting: \" is data)"),
        }
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn renamed(&self) -> Vec<String> {
        self.renamed.clone()
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        self.parser_in(0, projection)
    }

    fn layout_of(&self, input: usize) -> usize {
        self.layout_of.get(input).copied().unwrap_or(0)
    }

    fn parser_in(&self, layout: usize, projection: &[usize]) -> Box<dyn Parser> {
        let map = &self.layouts[layout];
        let mut want = vec![None; map.len()];
        let mut missing = Vec::new();
        for (o, &c) in projection.iter().enumerate() {
            match map.iter().position(|&t| t == c) {
                Some(f) => want[f] = Some(o),
                None => missing.push(o),
            }
        }
        let mut slot = vec![None; map.len()];
        let mut plan = Vec::new();
        for (c, o) in want.iter().enumerate() {
            if let Some(o) = *o {
                slot[c] = Some(plan.len());
                plan.push(o);
            }
        }
        Box::new(CsvParser {
            delim: self.delim,
            quote: self.quote,
            want,
            missing,
            ncols: map.len(),
            vals: Vec::new(),
            scratch: Vec::new(),
            slot,
            plan,
            runs: Vec::new(),
        })
    }

    fn as_csv(&self) -> Option<&Csv> {
        Some(self)
    }

    fn quoting(&self) -> Option<Quoting> {
        self.quote.then_some(Quoting { delim: self.delim })
    }

    fn header_lines(&self) -> usize {
        self.header as usize
    }

    fn types_inferred(&self) -> bool {
        self.inferred
    }

    fn needles(&self) -> Vec<u8> {
        vec![self.delim]
    }
}

struct CsvParser {
    delim: u8,
    /// `"` quotes fields ([`Csv::quote`]).
    quote: bool,
    /// Per field of the file, its place among the projected columns.
    want: Vec<Option<usize>>,
    /// Projected columns the file does not have (NULL in every row).
    missing: Vec<usize>,
    ncols: usize,
    vals: Vec<Val>,
    scratch: Vec<u8>,
    /// Per field, its place among the projected fields (in field order).
    slot: Vec<Option<usize>>,
    /// The projected fields' columns, in field order.
    plan: Vec<usize>,
    /// The spans of the projected fields of a run's records, record by record
    /// (`plan.len()` each; [`NULL_SPAN`] for an empty field).
    runs: Vec<[u32; 2]>,
}

impl FindingParser for CsvParser {
    #[inline(always)]
    fn parse_with(&mut self, record: &[u8], out: &mut Columns, f: &impl Finder) -> bool {
        self.parse_fields(record, out, f)
    }

    /// A file of one column: its blank line is an empty field, NULL.
    fn blank_row(&self) -> bool {
        self.want.len() == 1
    }

    /// Plain records (no quotes, no CR, the right number of fields) split at the
    /// delimiter's marks in the map, their values converted in place.
    fn run(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize) {
        let Some(dk) = map.class(self.delim).filter(|&k| k != 0) else {
            return (pos, 0);
        };
        // Spans are 32-bit: a piece of 4 GiB or more (`--chunk-size`) is
        // read record by record.
        if piece.len() >= u32::MAX as usize {
            return (pos, 0);
        }
        self.run_columns(piece, map, dk, pos, room, out)
    }
}

impl CsvParser {
    /// [`Parser::parse_run`] a column at a time: the run's plain records are
    /// split first, at the marks of the separator and the delimiter taken in
    /// one walk ([`ByteMap::marks`]), keeping the spans of the projected fields
    /// in `runs`; then each column's values are appended in one loop. A record
    /// a run stops at (blank, ending in CR, with a field that starts with a
    /// quote, or with another number of fields) is left to the caller.
    fn run_columns(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        dk: usize,
        mut pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize) {
        self.runs.clear();
        let stride = self.plan.len();
        let mut marks = map.marks(0, dk, pos);
        let mut n = 0;
        'records: while n < room {
            self.runs.reserve(stride);
            let base = self.runs.len();
            let slots = &mut self.runs.spare_capacity_mut()[..stride];
            let (mut f, mut i) = (pos, 0);
            let end = loop {
                let Some((p, sep)) = marks.next_mark() else {
                    break 'records;
                };
                // `piece[p]` is the mark, so `piece[f]` exists.
                if i == self.ncols || (self.quote && piece[f] == b'"') {
                    break 'records;
                }
                if let Some(k) = self.slot[i] {
                    slots[k].write(if f == p {
                        NULL_SPAN
                    } else {
                        [f as u32, p as u32]
                    });
                }
                i += 1;
                f = p + 1;
                if sep {
                    break p;
                }
            };
            if end == pos || i != self.ncols || piece[end - 1] == b'\r' {
                break;
            }
            // SAFETY: a record of `ncols` fields wrote every projected slot.
            unsafe { self.runs.set_len(base + stride) };
            n += 1;
            pos = end + 1;
        }
        let spans = &self.runs;
        for (k, &o) in self.plan.iter().enumerate() {
            let done = match out.kind(o) {
                Kind::Float => {
                    out.extend_floats(o, spans, stride, k, |s, e| decimal_at(piece, s, e))
                }
                Kind::Decimal { precision, scale } => {
                    out.extend_decimals(o, spans, stride, k, |s, e| {
                        decimal128_at(piece, s, e, precision, scale)
                    })
                }
                Kind::Int => out.extend_ints(o, spans, stride, k, |s, e| int_of(&piece[s..e])),
                _ => {
                    out.extend_texts(o, piece, spans, stride, k);
                    true
                }
            };
            assert!(done, "column {o} is not of its kind");
        }
        for &o in &self.missing {
            (0..n).for_each(|_| out.null(o));
        }
        out.add_rows(n);
        (pos, n)
    }

    /// One record, its fields found with `f` (see [`FindingParser`]).
    #[inline(always)]
    fn parse_fields(&mut self, record: &[u8], out: &mut Columns, f: &impl Finder) -> bool {
        let dialect = (self.delim, self.quote);
        if !split_fields(record, dialect, &mut self.vals, &mut self.scratch, f)
            || self.vals.len() != self.ncols
        {
            return false;
        }
        for (i, &v) in self.vals.iter().enumerate() {
            let Some(o) = self.want[i] else { continue };
            match value(v, record, &self.scratch) {
                None => out.null(o),
                // A quoted empty value is text: in another column, NULL.
                Some([]) if out.kind(o) != Kind::Str => out.null(o),
                Some(v) => match out.kind(o) {
                    Kind::Float => {
                        let x = decimal(v);
                        if x.is_none() {
                            out.bad(o, v);
                        }
                        out.float(o, x)
                    }
                    Kind::Decimal { precision, scale } => {
                        let x = columns::parse_decimal(v, precision, scale);
                        if x.is_none() {
                            out.bad(o, v);
                        }
                        out.decimal(o, x)
                    }
                    Kind::Int => {
                        let x = int_of(v);
                        if x.is_none() {
                            out.bad(o, v);
                        }
                        out.int(o, x)
                    }
                    _ => out.text_as_kind(o, v),
                },
            }
        }
        for &o in &self.missing {
            out.null(o);
        }
        out.end_row();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields_of(r: &str) -> Option<Vec<Option<String>>> {
        owned_fields(r.as_bytes(), b',', true).map(|v| {
            v.into_iter()
                .map(|f| f.map(|x| String::from_utf8_lossy(&x).into_owned()))
                .collect()
        })
    }

    /// A stream's record ends: only where no later byte can move them.
    #[test]
    fn stream_ends_wait_for_a_closing_quote() {
        let q = Quoting { delim: b',' };
        assert_eq!(q.stream_end(b"a,b\nc", 0), Some(3));
        assert_eq!(q.stream_end(b"a,b", 0), None);
        assert_eq!(q.stream_end(b"a,\"b\nc", 0), None); // open quote
        assert_eq!(q.cut(b"a,\"b\nc", 0).end, 4); // at the end: data
        assert_eq!(q.stream_end(b"a,\"b\nc\"\nd", 0), Some(7));
        assert_eq!(q.stream_end(b"a,\"b\nc\"", 0), None);
        assert_eq!(q.stream_end(b"a,x\"b\nc", 0), Some(5)); // a quote inside a field
    }

    /// A byte-order mark before a quoted first field: the field's line break
    /// is inside the record (it was cut there, the quote taken as data).
    #[test]
    fn a_quoted_field_after_a_byte_order_mark_spans_lines() {
        let q = Quoting { delim: b',' };
        let data = b"\xef\xbb\xbf\"a\nb\",1\nc,2\n";
        assert_eq!(
            q.cut(data, 0),
            Cut {
                end: 10,
                multiline: true
            }
        );
        assert!(q.has_quoted_newline(data));
        assert_eq!(q.record_start_from(data, 0, 1), 11);
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
        let q = Quoting { delim: b',' };
        let data = b"h1,h2\n\"a\nb\",1\nc,2\n";
        assert_eq!(q.record_end(data, 0), Some(5));
        assert_eq!(q.record_end(data, 6), Some(13));
        assert!(q.has_quoted_newline(data));
        assert!(!q.has_quoted_newline(b"a,\"b,c\"\nd,e\n"));
    }

    /// Where records end: a quote inside an unquoted field is data; a quoted
    /// field may span lines; a quote that opens a field and never closes it
    /// well ends the record with its own line.
    #[test]
    fn records_end_where_python_and_duckdb_end_them() {
        let q = Quoting { delim: b',' };
        let ends = |data: &[u8]| {
            let (mut pos, mut out) = (0, Vec::new());
            while pos < data.len() {
                let c = q.cut(data, pos);
                out.push((c.end, c.multiline));
                pos = c.end + 1;
            }
            out
        };
        // Stray quotes in unquoted fields, 2 lines apart: three records.
        assert_eq!(
            ends(b"1,x\"y,3\n4,5,6\n7,a\",9\n"),
            [(7, false), (13, false), (20, false)]
        );
        // A quoted line break, a doubled quote, a quote after the delimiter.
        assert_eq!(ends(b"1,\"a\n\"\"b\",2\n3,4\n"), [(11, true), (15, false)]);
        // An opening quote that never closes: its line only.
        assert_eq!(ends(b"1,\"x,2\n3,y,4\n"), [(6, false), (12, false)]);
        // One "closed" lines later by a quote followed by text: its line only.
        assert_eq!(
            ends(b"1,\"x,2\n3,\"y,4\n5,6\n"),
            [(6, false), (13, false), (17, false)]
        );
        // Text after a closing quote on the same line: one (malformed) record.
        assert_eq!(ends(b"1,\"ab\"c,2\n3\n"), [(9, false), (11, false)]);
        assert!(!q.has_quoted_newline(b"1,\"x,2\n3,\"y,4\n"));
        assert!(q.has_quoted_newline(b"h\n1,\"x\ny\"\n"));
        assert_eq!(q.record_start_from(b"a\n\"b\nc\"\nd\n", 0, 3), 8);
        assert_eq!(q.record_start_from(b"a\n\"b\nc\"\nd\n", 0, 2), 2);
        assert_eq!(
            fields_of("1,x\"y,3"),
            Some(vec![
                Some("1".into()),
                Some("x\"y".into()),
                Some("3".into())
            ])
        );
    }

    /// Files whose headers differ are matched by name; repeated names and the
    /// virtual columns' names get suffixes, said.
    #[test]
    fn headers_are_matched_by_name() {
        let o = FormatOptions::default();
        let c = Csv::new(b',', &o, b"a,b\n1,2\n").unwrap();
        let samples = [
            ("1".to_string(), b"a,b\n1,2\n".to_vec()),
            ("2".to_string(), b"b,a\n1.5,2\n".to_vec()),
            ("3".to_string(), b"c,a,a\nx,1,2\n".to_vec()),
        ];
        let u = c.clone().by_name(&samples, true).unwrap();
        let names: Vec<&str> = u.fields().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "a_1"]);
        assert_eq!(u.fields()[1].kind, Kind::Float);
        assert_eq!(u.layouts, [vec![0, 1], vec![1, 0], vec![2, 0, 3]]);
        assert_eq!(u.layout_of, [0, 1, 2]);
        let bad = [samples[0].clone(), ("4".to_string(), b"5,6\n".to_vec())];
        assert!(c
            .by_name(&bad, true)
            .unwrap_err()
            .to_string()
            .starts_with("4: "));
        assert_eq!(
            unique_names(["_file", "a", "a", "a_1"].map(String::from), &["_file"]),
            ["_file_1", "a", "a_1", "a_1_1"]
        );
        let header = |h: &str| h.split(',').map(|n| Some(n.as_bytes().to_vec())).collect();
        assert_eq!(
            header_names(&header("_line,_line,_line_1")),
            ["_line_1", "_line_2", "_line_1_1"]
        );
        let c = Csv::new(b',', &o, b"_line,_line,_line_1,,b\n1,2,3,4,5\n").unwrap();
        assert_eq!(
            c.renamed(),
            [
                "column \"_line\" is named \"_line_1\" (its name was taken)",
                "column \"_line\" is named \"_line_2\" (its name was taken)",
                "column \"_line_1\" is named \"_line_1_1\" (its name was taken)"
            ]
        );
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
        assert!(decimal(b"nan").is_some_and(f64::is_nan));
        assert_eq!(decimal(b" -Infinity\t"), Some(f64::NEG_INFINITY));
        assert_eq!(decimal(b" 2.5 "), Some(2.5));
        assert_eq!(decimal(b"nano"), None);
        assert_eq!(decimal(b"1.2.3"), None);
    }

    /// The word read gives what the digit loops give, on every short shape, at
    /// the end of a piece too (there it must not read past it).
    #[test]
    fn short_values_read_as_a_word_equal_the_loops() {
        let alphabet = b"0123456789.-+e ;";
        let mut s = 11u64;
        for _ in 0..300_000 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (s >> 61) as usize;
            let piece: Vec<u8> = (0..12)
                .map(|k| alphabet[((s >> (5 * k % 55)) as usize + 3 * k) % alphabet.len()])
                .collect();
            for end in [len, 12] {
                let v = &piece[end - len..end];
                let got = decimal_at(&piece[..end], end - len, end);
                assert_eq!(
                    got.map(f64::to_bits),
                    decimal(v).map(f64::to_bits),
                    "{:?}",
                    String::from_utf8_lossy(v)
                );
                for (p, sc) in [(3u8, 1i8), (18, 4), (5, 0), (38, 38)] {
                    assert_eq!(
                        decimal128_at(&piece[..end], end - len, end, p, sc),
                        columns::parse_decimal(v, p, sc),
                        "{:?} decimal({p},{sc})",
                        String::from_utf8_lossy(v)
                    );
                }
            }
        }
        for v in [
            "-12.3", "99.9", "-0.0", "12345678", "1234567.", ".1234567", "-.5",
        ] {
            let mut piece = v.as_bytes().to_vec();
            piece.extend_from_slice(b"\n;;;;;;;;");
            let got = decimal_at(&piece, 0, v.len());
            assert_eq!(
                got.map(f64::to_bits),
                Some(v.parse::<f64>().unwrap().to_bits()),
                "{v}"
            );
            assert!(
                short_number(u64::from_le_bytes(piece[..8].try_into().unwrap()), v.len()).is_some(),
                "{v}"
            );
        }
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
        // Zero-padded or signed numbers are text, as written (DuckDB's
        // sniffer agrees); 0, 0.5 and -0 are numbers.
        let kinds = |sample: &[u8]| -> Vec<Kind> {
            let c = Csv::new(b',', &FormatOptions::default(), sample).unwrap();
            c.fields().iter().map(|f| f.kind).collect()
        };
        let padded = b"zip,id,t,plus\n02134,1,-01.5,+7\n10001,007,2.5,8\n";
        assert_eq!(kinds(padded), [Kind::Str; 4]);
        let zeros = b"a,b,c\n0,0.5,-0\n10,-0.25,3\n";
        assert_eq!(kinds(zeros), [Kind::Int, Kind::Float, Kind::Int]);
        // Integers beyond 64 bits are exact decimals (DuckDB: HUGEINT), text
        // past 38 digits (DuckDB: BIGNUM); with fractions, floats (DOUBLE).
        let wide = format!(
            "a,b,c\n9223372036854775808,1.5,{}\n-1,9223372036854775808,1\n",
            "9".repeat(39)
        );
        let exact = Kind::Decimal {
            precision: 38,
            scale: 0,
        };
        assert_eq!(kinds(wide.as_bytes()), [exact, Kind::Float, Kind::Str]);
    }

    /// A whole input's last record without a line break is sampled as the
    /// others: it decides the quoting and the types as it does with one.
    /// Left out, `7,"8,9` made this quote-free CSV quoted (2 rows and a
    /// malformed one, where DuckDB reads 3), and `3,x` typed `b` int. A
    /// sample only taken for whole by its length (a pipe's, which may end
    /// at a pause mid-record) is sniffed without those bytes: `2,2024-01-0`
    /// typed a column of times text.
    #[test]
    fn the_last_record_counts_without_a_line_break() {
        let whole = FormatOptions {
            whole_sample: Some(true),
            ..Default::default()
        };
        for end in ["\n", ""] {
            let stray = format!("x,y,z\n1,2,3\n4,5,6\n7,\"8,9{end}");
            let c = Csv::new(b',', &whole, stray.as_bytes()).unwrap();
            assert_eq!(c.name(), "csv (no quoting: \" is data)", "{end:?}");
            let typed = format!("a,b\n1,2\n3,x{end}");
            let c = Csv::new(b',', &whole, typed.as_bytes()).unwrap();
            assert_eq!(c.fields()[1].kind, Kind::Str, "{end:?}");
        }
        let paused = b"a,t\n1,2024-01-01T00:00:00\n2,2024-01-0";
        let c = Csv::new(b',', &FormatOptions::default(), paused).unwrap();
        assert_eq!(c.fields()[1].kind, Kind::Time);
    }
}
