//! The scan job behind a read: each worker thread parses the records of its
//! chunks into Arrow batches of the projected columns and sends them through
//! one bounded channel per reader (one, or one per scan that shares this one,
//! see `wf_sql::share`: each gets its own columns of every batch, a projection
//! of shared arrays, not a copy). The reader is [`super::read`]'s iterator or
//! DataFusion's partitions (`wf_sql::table`).
//!
//! Why one channel for all partitions (MPMC), not one per partition: a worker's
//! state lives until the whole scan ends (states merge at the end), so a
//! partition fed by one worker would stay open until every worker is done; a plan
//! that drains partition 0 before it polls partition 1 would then deadlock on a
//! full channel. With one channel every partition takes whatever batch is ready
//! and all of them end when the scan ends. The channel's bound (two batches per
//! thread) is the back-pressure: parsing never runs far ahead of the query.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

use super::problem::{line_at, schema_hint, ProblemKind, RecordError};
use super::sample::strip_bom;
use super::{BatchResult, ReadError};
use crate::bytemap::ByteMap;
use crate::{Columns, Format, Kind, Parser, UnknownKeys};
use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{Input, Source};

/// A column of the table that is not in the records: where a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Virtual {
    /// The input's name as given.
    File,
    /// Byte offset of the record's first byte in its input.
    Offset,
    /// Line number (from 1) of the record's first line in its input. Needs the
    /// lines before a record, so a table with `_line` in the query reads each
    /// file front to back on one worker (files still in parallel).
    Line,
}

impl Virtual {
    pub const ALL: [(&'static str, Virtual, Kind); 3] = [
        (crate::VIRTUAL_NAMES[0], Virtual::File, Kind::Str),
        (crate::VIRTUAL_NAMES[1], Virtual::Offset, Kind::Int),
        (crate::VIRTUAL_NAMES[2], Virtual::Line, Kind::Int),
    ];
}

/// One output column: a format column (index among the projected format
/// columns) or a virtual one.
#[derive(Debug, Clone, Copy)]
pub enum Out {
    Format(usize),
    Virtual(usize),
}

/// How a scan's records are cut and which columns are built.
pub struct BatchJob {
    pub format: Arc<dyn Format>,
    /// Projected format columns (indices into `format.fields()`).
    pub format_cols: Vec<usize>,
    /// Projected virtual columns, in order.
    pub virtuals: Vec<Virtual>,
    /// Output order of the batch's columns.
    pub order: Vec<Out>,
    /// The projected schema of every batch.
    pub schema: SchemaRef,
    /// Input names, for `_file` (`Input::path_text`; messages use `name`).
    pub names: Arc<Vec<String>>,
    /// Cut records quote-aware (CSV files with quoted line breaks, read whole).
    pub quoted: bool,
    /// `--max-record`: a quoted record longer is skipped (the scan, which
    /// bounds records cut at line breaks, hands such a file over whole).
    pub max_record: u64,
    pub batch_rows: usize,
    /// Where the batches go: one reader, or several that share this scan.
    pub readers: Vec<Reader>,
    /// The format cuts text values at ASCII bytes ([`Format::ascii_boundaries`]).
    pub ascii_boundaries: bool,
    /// The inputs, to find the line of a record that stops the query.
    pub inputs: Arc<Vec<Input>>,
    /// Per input, where its blank head ends ([`blank_head`]), found when a
    /// blank line that would be a row is first met.
    pub heads: Vec<std::sync::OnceLock<u64>>,
    /// The format's layout of each input ([`Format::layout_of`]).
    pub layouts: Vec<usize>,
    /// `--strict`: every problem stops the query (see [`BatchJob::fatal`]).
    pub strict: bool,
    /// Set once a problem stopped the query: the scan reads no further.
    pub failed: AtomicBool,
}

/// A reader of a scan's batches: its channel (of one `ScanExec`, or of
/// [`super::read`]), and which of the scan's columns it takes (see `wf_sql::share`).
#[derive(Clone)]
pub struct Reader {
    pub tx: async_channel::Sender<BatchResult>,
    /// Indices into the scan's columns; `None` takes all of them, in order.
    pub cols: Option<Vec<usize>>,
    pub schema: SchemaRef,
}

impl Reader {
    /// Send this reader's columns of a batch (an error goes to every reader).
    /// A send fails only once the reader stopped listening; `stopped` then says
    /// so to the scan.
    fn send(&self, batch: &BatchResult) {
        if self.tx.is_closed() {
            return;
        }
        let mine = match (batch, &self.cols) {
            (Ok(b), Some(cols)) => {
                let columns = cols.iter().map(|&c| b.column(c).clone()).collect();
                let opts = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
                RecordBatch::try_new_with_options(self.schema.clone(), columns, &opts)
                    .map_err(ReadError::batch)
            }
            (Ok(b), None) => Ok(b.clone()),
            (Err(e), _) => Err(e.clone()),
        };
        let _ = self.tx.send_blocking(mine);
    }
}

/// Counts a scan keeps for `--stats` and `--strict`.
#[derive(Debug, Default, Clone)]
pub struct ParseStats {
    pub rows: u64,
    pub malformed: u64,
    pub blank: u64,
    pub invalid_utf8: u64,
    /// Values that did not convert to their column's type (NULL instead).
    pub bad_values: u64,
    /// Records with keys that are not columns (their values not read).
    pub unknown: UnknownKeys,
    /// The first malformed records: (input index, byte offset).
    pub first_bad: Vec<(usize, u64)>,
    /// Per input of the scan, by its index: an input of no row and some
    /// malformed lines is not of the table's format (`wf_sql::unread`).
    pub inputs: Vec<InputRows>,
}

/// The records of one input: rows, malformed lines, and where the first
/// malformed one starts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct InputRows {
    pub rows: u64,
    pub malformed: u64,
    pub first_malformed: u64,
}

impl InputRows {
    pub fn plus(&mut self, o: InputRows) {
        if o.malformed > 0 && (self.malformed == 0 || o.first_malformed < self.first_malformed) {
            self.first_malformed = o.first_malformed;
        }
        self.rows += o.rows;
        self.malformed += o.malformed;
    }
}

/// How many malformed records are located in `--stats`.
pub const SHOW_BAD: usize = 5;

impl ParseStats {
    pub fn merge(&mut self, o: ParseStats) {
        self.rows += o.rows;
        self.malformed += o.malformed;
        self.blank += o.blank;
        self.invalid_utf8 += o.invalid_utf8;
        self.bad_values += o.bad_values;
        self.unknown.merge(o.unknown);
        self.first_bad.extend(o.first_bad);
        self.first_bad.sort_unstable();
        self.first_bad.truncate(SHOW_BAD);
        for (i, o) in o.inputs.into_iter().enumerate() {
            self.input(i).plus(o);
        }
    }

    /// Input `i`'s records.
    pub fn input(&mut self, i: usize) -> &mut InputRows {
        if self.inputs.len() <= i {
            self.inputs.resize(i + 1, InputRows::default());
        }
        &mut self.inputs[i]
    }
}

pub struct BatchState {
    parser: Box<dyn Parser>,
    /// The layout `parser` reads (see [`Format::layout_of`]).
    layout: usize,
    /// The separator and the format's needles, marked per piece.
    map: ByteMap,
    cols: Columns,
    virt: Columns,
    pub stats: ParseStats,
    /// The offset of the chunk's first malformed record.
    first_malformed: Option<u64>,
    lines: Lines,
    /// (input, offset) of quoted records longer than `--max-record`.
    pub long: Vec<(usize, u64)>,
}

impl Job for BatchJob {
    type State = BatchState;

    fn new_state(&self) -> BatchState {
        let fields = self.format.fields();
        let kinds: Vec<Kind> = self.format_cols.iter().map(|&c| fields[c].kind).collect();
        let vkinds: Vec<Kind> = self.virtuals.iter().map(|v| virtual_kind(*v)).collect();
        BatchState {
            parser: self.format.parser(&self.format_cols),
            layout: 0,
            map: crate::byte_map(self.format.as_ref()),
            cols: Columns::new(&kinds),
            virt: Columns::new(&vkinds),
            stats: ParseStats::default(),
            first_malformed: None,
            lines: Lines::default(),
            long: Vec::new(),
        }
    }

    fn process(&self, st: &mut BatchState, chunk: &Chunk<'_>) {
        if self.stopped() || chunk.data.is_empty() {
            return;
        }
        let data = chunk.data;
        let skip = if chunk.offset == 0 {
            self.format.header_lines()
        } else {
            0
        };
        // One UTF-8 check of the piece instead of one per text value (from_utf8
        // per value was 14% of a 1BRC scan in perf); a piece that fails it is
        // checked value by value, so invalid bytes are still replaced and counted.
        // simdutf8, not std's check, which was itself 14% of a 1BRC scan whose
        // station names are not ASCII (perf, now 1.4%); none when no text is built.
        st.cols.utf8_checked = self.ascii_boundaries
            && (!st.cols.has_text() || simdutf8::basic::from_utf8(data).is_ok());
        st.lines.start(chunk);
        // Rows built (flushed or not) and malformed lines before the chunk.
        let built = st.stats.rows + st.cols.rows() as u64;
        let malformed = st.stats.malformed;
        let layout = self.layout(chunk.input);
        if st.layout != layout {
            st.parser = self.format.parser_in(layout, &self.format_cols);
            st.layout = layout;
        }
        if self.quoted {
            self.quoted_records(st, chunk, skip);
        } else {
            self.plain_records(st, chunk, skip);
        }
        st.lines.end(chunk);
        let input = InputRows {
            rows: st.stats.rows + st.cols.rows() as u64 - built,
            malformed: st.stats.malformed - malformed,
            first_malformed: st.first_malformed.take().unwrap_or(0),
        };
        st.stats.input(chunk.input).plus(input);
        // A stream's block is what came before the stream went quiet (or a
        // full block): its rows go out now, not once a batch is full, or a
        // LIMIT over a stream that stays open would wait for them forever.
        if matches!(self.inputs[chunk.input].source, Source::Stream { .. }) {
            self.flush(st);
        }
    }

    /// States merge when the workers are done: what a state still holds goes out
    /// as a last batch (the caller flushes the final state, see [`BatchJob::flush`]).
    fn merge(&self, into: &mut BatchState, mut other: BatchState) {
        self.flush(&mut other);
        into.stats.merge(other.stats);
        into.long.extend(other.long);
    }

    /// The query stopped listening (a LIMIT is satisfied, so DataFusion dropped
    /// the batch channel's receiver): the scan reads no further, so `SELECT *
    /// FROM logs LIMIT 10` over a 50 GB log returns at once instead of after
    /// reading the rest unparsed.
    fn stopped(&self) -> bool {
        self.failed.load(Ordering::Relaxed) || self.readers.iter().all(|r| r.tx.is_closed())
    }
}

/// The problems a state has counted: malformed records, values not of their
/// column's type, invalid UTF-8 (those still in its columns and those flushed).
fn tally(st: &BatchState) -> [u64; 3] {
    [
        st.stats.malformed,
        st.stats.bad_values + st.cols.bad_values,
        st.stats.invalid_utf8 + st.cols.invalid_utf8,
    ]
}

/// A value that did not fit its column: the column (among the projected
/// ones) and the value.
type BadValue = (usize, Vec<u8>);

fn virtual_kind(v: Virtual) -> Kind {
    match v {
        Virtual::File => Kind::Str,
        Virtual::Offset | Virtual::Line => Kind::Int,
    }
}

/// Where `_line` counting stands: the input and offset the next piece must
/// start at to continue, and the line there.
#[derive(Default)]
struct Lines {
    next: Option<(usize, u64)>,
    /// The line of the record being parsed; None where it cannot be known.
    line: Option<u64>,
}

impl Lines {
    /// A piece starts: its first line, if it starts its input or continues
    /// the previous piece.
    fn start(&mut self, chunk: &Chunk<'_>) {
        if chunk.offset == 0 {
            self.line = Some(1);
        } else if self.next != Some((chunk.input, chunk.offset)) {
            self.line = None;
        }
    }

    /// The bytes of a record and its separator were passed.
    fn pass(&mut self, bytes: &[u8]) {
        if let Some(l) = &mut self.line {
            *l += memchr::memchr_iter(b'\n', bytes).count() as u64;
        }
    }

    fn end(&mut self, chunk: &Chunk<'_>) {
        self.next = Some((chunk.input, chunk.offset + chunk.data.len() as u64));
    }
}

impl BatchJob {
    /// Records cut at the separator. They end at the separator's marks in the
    /// piece's byte map, built in the same pass as the parser's needles (a
    /// memchr pass of its own was 8% of a log scan; a memchr call per record
    /// paid its set-up per line). Runs of plain records go to the parser's
    /// [`Parser::parse_run`] in one call (no virtual columns to add per row);
    /// the record a run stops at is read here, one by one, with every check.
    fn plain_records(&self, st: &mut BatchState, chunk: &Chunk<'_>, skip: usize) {
        let data = chunk.data;
        st.map.build(data);
        let lines = self.virtuals.contains(&Virtual::Line);
        let run = self.virtuals.is_empty() && st.parser.has_runs();
        // Records to read one by one before trying a run again: after a run
        // that took nothing (say every record has a quoted field), most of the
        // next ones would be split twice.
        let mut wait = 0u32;
        let mut pos = 0;
        let mut k = 0;
        while pos < data.len() {
            if run && wait == 0 && k >= skip && (pos > 0 || chunk.offset > 0) {
                let room = self.batch_rows.saturating_sub(st.cols.rows()).max(1);
                let before = tally(st);
                let (next, n) = st.parser.parse_run(data, &st.map, pos, room, &mut st.cols);
                if self.fatal(before, tally(st)) {
                    return self.fail_in_run(chunk, pos, next);
                }
                (pos, k) = (next, k + n);
                if st.cols.rows() >= self.batch_rows {
                    self.flush(st);
                }
                if n == room || pos >= data.len() {
                    continue;
                }
                if n == 0 {
                    wait = 32;
                }
            }
            wait = wait.saturating_sub(1);
            let end = st.map.next(0, pos, data.len()).unwrap_or(data.len());
            if k >= skip && !self.record(st, chunk, pos, end) {
                return;
            }
            if lines {
                st.lines.pass(&data[pos..data.len().min(end + 1)]);
            }
            k += 1;
            pos = end + 1;
        }
    }

    /// Records cut quote-aware (a CSV file with quoted line breaks, read whole).
    fn quoted_records(&self, st: &mut BatchState, chunk: &Chunk<'_>, mut skip: usize) {
        let data = chunk.data;
        let lines = self.virtuals.contains(&Virtual::Line);
        let q = self.format.quoting().expect("a format with quoted records");
        let mut pos = 0;
        // The whole file is one chunk here: look for a stopped query per record.
        while pos < data.len() && !self.stopped() {
            let end = q.cut(data, pos).end;
            if skip > 0 {
                skip -= 1;
            } else if (end - pos) as u64 > self.max_record {
                // Held whole, a field of 150 MB in 100-byte lines took 360 MB
                // past `--max-record 8M`, exit 0.
                st.long.push((chunk.input, chunk.offset + pos as u64));
            } else if !self.record(st, chunk, pos, end) {
                return;
            }
            if lines {
                st.lines.pass(&data[pos..data.len().min(end + 1)]);
            }
            pos = end + 1;
        }
    }

    /// Parse the record `chunk.data[pos..end]` into the state's columns; flush a
    /// full batch. False when the record stopped the query.
    fn record(&self, st: &mut BatchState, chunk: &Chunk<'_>, pos: usize, end: usize) -> bool {
        let before = tally(st);
        self.parse_record(st, chunk, pos, end);
        if self.fatal(before, tally(st)) {
            let at = chunk.offset + pos as u64;
            self.fail(chunk.input, at, &chunk.data[pos..end]);
            return false;
        }
        if st.cols.rows() >= self.batch_rows {
            self.flush(st);
        }
        true
    }

    fn parse_record(&self, st: &mut BatchState, chunk: &Chunk<'_>, pos: usize, end: usize) {
        let data = chunk.data;
        let end = if end > pos && data[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        let start = if chunk.offset == 0 && pos == 0 {
            end - strip_bom(&data[pos..end]).len()
        } else {
            pos
        };
        // Blank lines before an input's first record are no rows, even where
        // a blank line is one (a CSV of one column), as DuckDB skips them.
        let head =
            || *self.heads[chunk.input].get_or_init(|| blank_head(&self.inputs[chunk.input]));
        if start == end && (!st.parser.blank_is_row() || chunk.offset + (pos as u64) < head()) {
            st.stats.blank += 1;
            return;
        }
        // Quoted records are cut without the byte map (it is built per piece of
        // plain records only), so they are parsed on their own.
        let parsed = if self.quoted {
            st.parser.parse(&data[start..end], &mut st.cols)
        } else {
            st.parser.parse_in(data, &st.map, start, end, &mut st.cols)
        };
        if !parsed {
            if st.first_malformed.is_none() {
                st.first_malformed = Some(chunk.offset + pos as u64);
            }
            st.stats.malformed += 1;
            if st.stats.first_bad.len() < SHOW_BAD {
                st.stats
                    .first_bad
                    .push((chunk.input, chunk.offset + pos as u64));
            }
            return;
        }
        for (i, v) in self.virtuals.iter().enumerate() {
            match v {
                Virtual::File => st.virt.str(i, self.names[chunk.input].as_bytes()),
                Virtual::Offset => st.virt.int(i, Some((chunk.offset + pos as u64) as i64)),
                Virtual::Line => st.virt.int(i, st.lines.line.map(|l| l as i64)),
            }
        }
        st.virt.end_row();
    }

    /// The format's layout of input `input` (see [`Format::layout_of`]).
    fn layout(&self, input: usize) -> usize {
        self.layouts.get(input).copied().unwrap_or(0)
    }

    /// Does the change of the problem counts (see [`tally`]) stop the query?
    /// Under `--strict` any problem does; otherwise a value that does not fit
    /// a type inferred from a sample (see [`super::problem`]).
    fn fatal(&self, before: [u64; 3], after: [u64; 3]) -> bool {
        if self.strict {
            before != after
        } else {
            self.format.types_inferred() && after[1] > before[1]
        }
    }

    /// A run of records over `chunk.data[from..to]` had a problem that stops
    /// the query: find its record (parsing them one by one) and stop.
    #[cold]
    fn fail_in_run(&self, chunk: &Chunk<'_>, from: usize, to: usize) {
        let data = chunk.data;
        let mut pos = from;
        while pos < to {
            let end =
                memchr::memchr(self.format.separator(), &data[pos..to]).map_or(to, |i| pos + i);
            if self.problem(chunk.input, &data[pos..end]).is_some() {
                return self.fail(chunk.input, chunk.offset + pos as u64, &data[pos..end]);
            }
            pos = end + 1;
        }
        // Not found alone (it should be): name the run's first record.
        let end = memchr::memchr(self.format.separator(), &data[from..to]).map_or(to, |i| from + i);
        self.fail(chunk.input, chunk.offset + from as u64, &data[from..end]);
    }

    /// The problem that stops the query in `record` parsed alone, with the
    /// column and value for a bad value.
    fn problem(&self, input: usize, record: &[u8]) -> Option<(ProblemKind, Option<BadValue>)> {
        let record = record.strip_suffix(b"\r").unwrap_or(record);
        let record = strip_bom(record);
        let kinds: Vec<Kind> = (self.format_cols.iter())
            .map(|&c| self.format.fields()[c].kind)
            .collect();
        let mut cols = Columns::new(&kinds);
        let mut parser = (self.format).parser_in(self.layout(input), &self.format_cols);
        let parsed = parser.parse(record, &mut cols);
        let after = [!parsed as u64, cols.bad_values, cols.invalid_utf8];
        if !self.fatal([0; 3], after) {
            return None;
        }
        Some(if after[0] > 0 {
            (ProblemKind::Malformed, None)
        } else if after[1] > 0 {
            (ProblemKind::BadValue, cols.first_bad.take())
        } else {
            (ProblemKind::InvalidUtf8, None)
        })
    }

    /// Stop the query at the record at byte `at` of input `input`: every
    /// reader gets the error (the first failure only), and the scan reads no
    /// further.
    #[cold]
    fn fail(&self, input: usize, at: u64, record: &[u8]) {
        if self.failed.swap(true, Ordering::Relaxed) {
            return;
        }
        let (kind, bad) = self
            .problem(input, record)
            .unwrap_or((ProblemKind::Malformed, None));
        let fields = self.format.fields();
        let column = bad
            .as_ref()
            .map(|(c, _)| fields[self.format_cols[*c]].clone());
        let text = bad.as_ref().map_or(record, |(_, v)| v.as_slice());
        let hint = match &column {
            Some(c) if !self.strict => schema_hint(fields, &c.name, text),
            _ => "--strict".to_string(),
        };
        let err = RecordError {
            kind,
            input: self.inputs[input].name.clone(),
            byte: at,
            line: line_at(&self.inputs[input], at),
            column,
            text: RecordError::cut(text),
            hint,
        };
        for r in &self.readers {
            if !r.tx.is_closed() {
                let _ = r.tx.send_blocking(Err(ReadError::Record(err.clone())));
            }
        }
    }

    /// Send the rows built so far as one batch. Batches are cut by row count, not
    /// by chunk: the engine hands a job one 32 KiB piece of records at a time,
    /// and a batch per piece (about 160 log lines) cost 66,000 context switches
    /// and 0.5 s of system time per GiB in channel wake-ups (perf stat).
    pub fn flush(&self, st: &mut BatchState) {
        if st.cols.rows() == 0 {
            return;
        }
        st.stats.invalid_utf8 += std::mem::take(&mut st.cols.invalid_utf8);
        st.stats.bad_values += std::mem::take(&mut st.cols.bad_values);
        (st.stats.unknown).merge(std::mem::take(&mut st.cols.unknown));
        let (arrays, rows) = st.cols.take();
        let (varrays, _) = st.virt.take();
        st.stats.rows += rows as u64;
        let columns: Vec<ArrayRef> = self
            .order
            .iter()
            .map(|o| match *o {
                Out::Format(i) => arrays[i].clone(),
                Out::Virtual(i) => varrays[i].clone(),
            })
            .collect();
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        let batch = RecordBatch::try_new_with_options(self.schema.clone(), columns, &opts)
            .map_err(ReadError::batch);
        for r in &self.readers {
            r.send(&batch);
        }
    }
}

/// Where the blank lines at the start of a regular file end (its first byte
/// other than `\n` and `\r`); `u64::MAX` for a stream or a compressed file,
/// whose start cannot be read again: all its blank lines are no rows. Found
/// once per input: a test of the bytes before each blank line took the
/// chunk's blank head (tried with 4 M of them) quadratically, and a head
/// longer than the first chunk counted its later blank lines as rows.
fn blank_head(input: &Input) -> u64 {
    use std::io::Read;
    let Source::File { path, .. } = &input.source else {
        return u64::MAX;
    };
    let Ok(f) = std::fs::File::open(path) else {
        return u64::MAX;
    };
    let (mut r, mut buf, mut at) = (std::io::BufReader::new(f), [0u8; 64 << 10], 0u64);
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return at,
            Ok(n) => match buf[..n].iter().position(|&b| b != b'\n' && b != b'\r') {
                Some(i) => return at + i as u64,
                None => at += n as u64,
            },
        }
    }
}
