//! The report as a scan job: each worker thread parses its chunks' records
//! with the format's parser (wf-formats, the same parsers as `wf sql`) and
//! counts each into its own [`Acc`]; the threads' counts merge once at the
//! end. A format with a [`RowParser`] (the Apache and nginx formats) is read
//! a record at a time, its values taken from the record itself; others, and
//! chunks that are not valid UTF-8 (whose text the columns repair), are
//! parsed into Arrow columns a batch at a time and counted row by row.
//! Building the columns and reading them back, with the byte map they are
//! split by, cost ~1,100 of the 5,650 instructions a combined-log line took
//! (cachegrind, -j 1, 300,000 lines of the bench log): 4,030 now, with the
//! time read from its own field through [`rules::clf_time`] and fields found
//! 16 bytes at a time; 2.88 -> 2.37 s on the 1 GiB log (7 interleaved runs).
//!
//! Only the columns the report reads are built (client, time, request,
//! status, bytes, referrer, user agent, virtual host). A record the format
//! cannot read, or whose client, time or status is missing or not valid, is
//! a failed line, as GoAccess counts it; so is one whose size is neither a number nor
//! `-`, which GoAccess counts as no bytes: a combined log read as common had
//! every size run on into the referrer and agent, and the report counted no
//! byte of it, silently. Blank lines and `#` comments are skipped.
//! User agents go through one [`AgentCache`] per thread.

use std::path::PathBuf;
use std::sync::Arc;

use wf_core::jobs::{Chunk, Job};
use wf_formats::arrow_array::cast::AsArray;
use wf_formats::arrow_array::types::ArrowPrimitiveType;
use wf_formats::arrow_array::types::{Int64Type, TimestampMicrosecondType};
use wf_formats::arrow_array::{
    Array, ArrayRef, Int64Array, PrimitiveArray, StringViewArray, TimestampMicrosecondArray,
};
use wf_formats::arrow_schema::DataType;
use wf_formats::bytemap::ByteMap;
use wf_formats::{Columns, Format, Kind, Parser, RowParser, Value};

use crate::acc::{Acc, Hashes, Line, NO_TIME};
use crate::agent::AgentCache;
use crate::intern::{hash_key, Keyed};
use crate::rules;
use crate::spill::Spill;
pub use crate::tally::category_label;

/// Which requests `--bots` keeps in the panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BotMode {
    /// Humans and bots (GoAccess's default).
    #[default]
    Include,
    /// Humans only.
    Exclude,
    /// Bots only.
    Only,
}

/// A format the report cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub format: String,
    /// The column the report needs and the format lacks.
    pub missing: &'static str,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "format {} has no '{}' column: wf report needs the client (%h, $remote_addr), \
             the request line (%r, $request) and the status (%>s, $status)",
            self.format, self.missing
        )
    }
}

impl std::error::Error for FormatError {}

/// Where each column the report reads is in the parser's projection.
#[derive(Debug, Clone, Copy)]
struct Cols {
    client: usize,
    request: usize,
    status: usize,
    time: Option<usize>,
    bytes: Option<usize>,
    referrer: Option<usize>,
    agent: Option<usize>,
    vhost: Option<usize>,
}

/// The report job.
#[derive(Clone)]
pub struct ReportJob {
    format: Arc<dyn Format>,
    projection: Vec<usize>,
    kinds: Vec<Kind>,
    cols: Cols,
    bots: BotMode,
    /// `--memory`: where workers spill their counts (`None`: never).
    spill: Option<Arc<Spill>>,
}

/// Records parsed into columns before they are counted.
const BATCH: usize = 4096;

/// Requests read ahead of the one counted (`read_rows`).
const AHEAD: usize = 16;

impl ReportJob {
    pub fn new(format: Arc<dyn Format>, bots: BotMode) -> Result<Self, FormatError> {
        let fields = format.fields();
        let mut projection = Vec::new();
        let mut find = |names: &[&str]| -> Option<usize> {
            let i = names
                .iter()
                .find_map(|n| fields.iter().position(|f| f.name == *n))?;
            projection.push(i);
            Some(projection.len() - 1)
        };
        let missing = |m| FormatError {
            format: format.name(),
            missing: m,
        };
        let client = find(&["client", "client_ip", "x_forwarded_for"]).ok_or(missing("client"))?;
        let request = find(&["request"]).ok_or(missing("request"))?;
        let status = find(&["status"]).ok_or(missing("status"))?;
        let cols = Cols {
            client,
            request,
            status,
            time: find(&["time"]),
            bytes: find(&["bytes", "bytes_sent"]),
            referrer: find(&["referrer"]),
            agent: find(&["user_agent"]),
            vhost: find(&["vhost", "host", "server_name"]),
        };
        let kinds = projection.iter().map(|&i| fields[i].kind).collect();
        Ok(ReportJob {
            format,
            projection,
            kinds,
            cols,
            bots,
            spill: None,
        })
    }

    /// Counts kept under `memory` bytes over `threads` workers, spilled to
    /// a directory under `temp` beyond it (`spill`).
    pub fn with_memory(mut self, memory: u64, threads: usize, temp: Option<PathBuf>) -> Self {
        self.spill = Some(Arc::new(Spill::new(memory, threads, temp)));
        self
    }

    /// The spills of `--memory`, if bounded.
    pub fn spill(&self) -> Option<&Spill> {
        self.spill.as_deref()
    }

    /// The format has a user agent column (browsers, OS and bots panels).
    pub fn has_agents(&self) -> bool {
        self.cols.agent.is_some()
    }

    /// `--bots`.
    pub fn bots(&self) -> BotMode {
        self.bots
    }

    /// The format's name (with its LogFormat or mapping): what a `--state`
    /// file must have been made with.
    pub fn format_name(&self) -> String {
        self.format.name()
    }

    /// The format's separator of records.
    pub fn separator(&self) -> u8 {
        self.format.separator()
    }

    /// A record's time as this report reads it (UTC microseconds; `None`
    /// when the format has no time), for `--since`/`--until` and their
    /// search: the format's own parser on the time column, so an Apache
    /// `LogFormat` whose `%t` is not the first `[...]` is read right. Each
    /// thread keeps its own parser of the reader (`TIME_PARSERS`), so a
    /// record takes no lock (a pool behind a mutex took two a record); a
    /// scan's threads drop theirs when they end.
    pub fn time_reader(&self) -> Option<Box<wf_core::jobs::time::TimeFn>> {
        let col = self.projection[self.cols.time?];
        let format = self.format.clone();
        Some(match format.row_parser(&[col]) {
            Some(_) => row_time_reader(format, col),
            None => column_time_reader(format, col),
        })
    }

    /// The format is a named one (`combined`, `nginx-main`, ...): its time
    /// is the record's first `[...]`.
    pub fn named_format(&self) -> bool {
        wf_formats::clf::LogFormat::is_named(&self.format.name())
    }

    /// The format has a virtual host column.
    pub fn has_vhosts(&self) -> bool {
        self.cols.vhost.is_some()
    }
}

/// [`ReportJob::time_reader`] through a one-column batch a record.
fn column_time_reader(format: Arc<dyn Format>, col: usize) -> Box<wf_core::jobs::time::TimeFn> {
    // Each thread keeps its own parser of this reader: no lock per record.
    let id = NEXT_READER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Box::new(move |rec: &[u8]| {
        let rec = rec.strip_suffix(&[format.separator()]).unwrap_or(rec);
        let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
        let mut cols = Columns::new(&[Kind::Time]);
        let ok = TIME_PARSERS.with_borrow_mut(|ps| {
            let p = own(ps, id, || Some(format.parser(&[col])))?;
            Some(p.parse(rec, &mut cols))
        });
        if ok != Some(true) {
            return None;
        }
        let (arrays, _) = cols.take();
        let a = arrays.first()?.as_primitive::<TimestampMicrosecondType>();
        (a.len() == 1 && a.is_valid(0)).then(|| a.value(0))
    })
}

/// [`ReportJob::time_reader`] of a format with a [`RowParser`]: the record
/// split and its time field read, with no one-column batch built a record
/// (each thread its own parser, as the columns' reader below).
fn row_time_reader(format: Arc<dyn Format>, col: usize) -> Box<wf_core::jobs::time::TimeFn> {
    let id = NEXT_READER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Box::new(move |rec: &[u8]| {
        let rec = rec.strip_suffix(&[format.separator()]).unwrap_or(rec);
        let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
        ROW_PARSERS.with_borrow_mut(|ps| {
            let p = own(ps, id, || format.row_parser(&[col]))?;
            match p.split(rec).then(|| p.value(rec, 0)) {
                Some(Value::Time(t)) => Some(t),
                _ => None,
            }
        })
    })
}

/// This thread's parser of reader `id`, made by `make` on first use.
fn own<P>(ps: &mut Vec<(usize, P)>, id: usize, make: impl FnOnce() -> Option<P>) -> Option<&mut P> {
    let i = match ps.iter().position(|(k, _)| *k == id) {
        Some(i) => i,
        None => {
            ps.push((id, make()?));
            ps.len() - 1
        }
    };
    Some(&mut ps[i].1)
}

/// Ids of [`ReportJob::time_reader`]s, so that a thread's parsers of two
/// readers (two commands in one process: the Python package) stay apart.
static NEXT_READER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// This thread's parser of each time reader it has used.
    static TIME_PARSERS: std::cell::RefCell<Vec<(usize, Box<dyn Parser>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// The same, of formats with a row parser.
    static ROW_PARSERS: std::cell::RefCell<Vec<(usize, Box<dyn RowParser>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// One worker thread's parser, buffers and counts.
pub struct ReportState {
    parser: Box<dyn Parser>,
    /// The format's row parser, if it has one: chunks that are valid UTF-8
    /// are read through it, others through `parser`'s columns.
    rows: Option<Box<dyn RowParser>>,
    /// Bit `col`: `rows` reads column `col` as its text ([`RowParser::verbatim`]).
    verbatim: u64,
    columns: Columns,
    /// The chunk's separators and the parser's needles (`parse_run`).
    map: ByteMap,
    /// Start and end, in the chunk, of each record parsed into `columns`.
    spans: Vec<(usize, usize)>,
    /// Per agent id under `--bots exclude|only`: 0 not classified yet, 1 a
    /// human, 2 a bot (one classification per distinct agent and thread).
    bot_of: Vec<u8>,
    /// Per agent id: 0 not asked yet, 1 its key is its text as written
    /// (`rules::agent_is_key`), 2 not (`agent_id`).
    plain: Vec<u8>,
    /// Agents' texts that are not their keys (CloudFront's %-encoded
    /// ones): their agent's id and key's hash, so that such a line is not
    /// decoded and hashed again (at most [`ENCODED`]).
    encoded: Keyed<(u32, u64)>,
    agents: Option<AgentCache<'static>>,
    /// The last log time's date and zone (`rules::local_offset`).
    zones: rules::ZoneCache,
    pub acc: Acc,
}

impl ReportState {
    /// What is kept per agent id, for ids that start again (a spill).
    fn forget_agents(&mut self) {
        self.bot_of.clear();
        self.plain.clear();
        self.encoded = Keyed::default();
    }
}

impl Job for ReportJob {
    type State = ReportState;

    fn new_state(&self) -> ReportState {
        let rows = self.format.row_parser(&self.projection);
        let verbatim = (0..self.projection.len().min(64))
            .filter(|&c| rows.as_ref().is_some_and(|r| r.verbatim(c)))
            .fold(0, |m, c| m | 1 << c);
        ReportState {
            parser: self.format.parser(&self.projection),
            rows,
            verbatim,
            columns: Columns::new(&self.kinds),
            map: wf_formats::byte_map(self.format.as_ref()),
            spans: Vec::with_capacity(BATCH),
            bot_of: Vec::new(),
            plain: Vec::new(),
            encoded: Keyed::default(),
            agents: None,
            zones: rules::ZoneCache::default(),
            acc: Acc::default(),
        }
    }

    fn process(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let lines = st.acc.lines;
        self.read(st, chunk);
        st.acc.input(chunk.input).lines += st.acc.lines - lines;
    }

    /// A worker done after a spill spills its counts now, beside the
    /// workers still reading (`Spill::done`).
    fn worker_done(&self, st: &mut ReportState) {
        if self
            .spill
            .as_ref()
            .is_some_and(|s| s.done(&mut st.acc.panels))
        {
            st.forget_agents();
        }
    }

    fn merge(&self, into: &mut ReportState, mut other: ReportState) {
        if let Some(s) = &self.spill {
            if s.apart(&mut into.acc.panels, &mut other.acc.panels) {
                // `into`'s agent ids start again.
                into.forget_agents();
            }
        }
        // The rules the agents of both need, compiled while they are merged.
        let (mine, theirs) = (&into.acc.panels.agents, &other.acc.panels.agents);
        let agents = mine.keys.keys().chain(theirs.keys.keys());
        crate::agent::compile_ahead(agents, mine.len() + theirs.len());
        into.acc.merge(other.acc);
        self.check_memory(into);
    }
}

impl ReportJob {
    /// The records of `chunk`, counted into `st`.
    fn read(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let sep = self.format.separator();
        let data = chunk.data;
        // One UTF-8 check of the chunk instead of one per text value (as
        // `wf sql` does); a chunk that fails it is checked value by value.
        st.columns.utf8_checked =
            self.format.ascii_boundaries() && simdutf8::basic::from_utf8(data).is_ok();
        if st.columns.utf8_checked {
            if let Some(mut rows) = st.rows.take() {
                self.read_rows(st, rows.as_mut(), chunk);
                st.rows = Some(rows);
                return;
            }
        }
        let runs = st.parser.has_runs();
        if runs {
            st.map.build(data);
        }
        // Records to read one by one before a run is tried again (after a
        // run that took none, as `wf sql` does).
        let mut wait = 0u32;
        let mut start = 0;
        while start < data.len() {
            if runs && wait == 0 && (start > 0 || chunk.offset > 0) {
                let (next, took) = self.runs(st, chunk, start);
                start = next;
                if !took {
                    wait = 32;
                }
                if start >= data.len() {
                    break;
                }
            }
            wait = wait.saturating_sub(1);
            let end = memchr::memchr(sep, &data[start..]).map_or(data.len(), |e| start + e);
            self.record(st, chunk, start, end);
            start = end + 1;
        }
        self.flush(st, chunk);
    }
}

/// One record's values by projected column: a row of a batch of columns, or
/// a record a [`RowParser`] split.
trait Fields<'a> {
    fn text(&self, col: usize) -> Option<&'a [u8]>;
    fn int(&self, col: usize) -> Option<i64>;
    fn time(&self, col: usize) -> Option<i64>;
    /// The time field's text as written, when it is at hand.
    fn time_text(&self, _col: usize) -> Option<&'a [u8]> {
        None
    }
    /// Number column `col` holds something that is not a number (nor `-`
    /// or nothing, which are NULL): the record is not of its format.
    fn not_a_number(&self, col: usize) -> bool;
}

/// A column of a batch, cast to its type once a batch (a cast a value was
/// eight `Any` downcasts a row).
enum Col<'a> {
    Text(&'a StringViewArray),
    Int(&'a Int64Array),
    Time(&'a TimestampMicrosecondArray),
}

/// Row `row` of a batch's columns.
struct BatchRow<'b, 'a> {
    cols: &'b [Col<'a>],
    row: usize,
    /// A value of the row did not convert to its column's type (made NULL).
    bad: bool,
}

fn cast(a: &ArrayRef) -> Col<'_> {
    match a.data_type() {
        DataType::Int64 => Col::Int(a.as_primitive::<Int64Type>()),
        DataType::Timestamp(..) => Col::Time(a.as_primitive::<TimestampMicrosecondType>()),
        _ => Col::Text(a.as_string_view()),
    }
}

impl<'a> Fields<'a> for BatchRow<'_, 'a> {
    fn text(&self, col: usize) -> Option<&'a [u8]> {
        match self.cols[col] {
            Col::Text(a) => (!a.is_null(self.row)).then(|| a.value(self.row).as_bytes()),
            _ => None,
        }
    }

    fn int(&self, col: usize) -> Option<i64> {
        match self.cols[col] {
            Col::Int(a) => value(a, self.row),
            _ => None,
        }
    }

    fn time(&self, col: usize) -> Option<i64> {
        match self.cols[col] {
            Col::Time(a) => value(a, self.row),
            _ => None,
        }
    }

    fn not_a_number(&self, col: usize) -> bool {
        self.bad && self.int(col).is_none()
    }
}

/// Row `row` of a primitive column, unless null.
fn value<T: ArrowPrimitiveType>(a: &PrimitiveArray<T>, row: usize) -> Option<T::Native> {
    (!a.is_null(row)).then(|| a.value(row))
}

/// A record a [`RowParser`] split.
struct Split<'p, 'a> {
    parser: &'p dyn RowParser,
    record: &'a [u8],
    /// Bit `col`: the column's value is its text (`ReportState::verbatim`).
    verbatim: u64,
}

impl<'a> Fields<'a> for Split<'_, 'a> {
    fn text(&self, col: usize) -> Option<&'a [u8]> {
        if col < 64 && self.verbatim >> col & 1 == 1 {
            return Some(self.parser.text(self.record, col));
        }
        match self.parser.value(self.record, col) {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    fn int(&self, col: usize) -> Option<i64> {
        self.parser.int(self.record, col)
    }

    fn time(&self, col: usize) -> Option<i64> {
        match self.parser.value(self.record, col) {
            Value::Time(x) => Some(x),
            _ => None,
        }
    }

    fn not_a_number(&self, col: usize) -> bool {
        let t = self.parser.text(self.record, col);
        !(t.is_empty() || t == b"-") && self.int(col).is_none()
    }

    fn time_text(&self, col: usize) -> Option<&'a [u8]> {
        Some(self.parser.text(self.record, col))
    }
}

/// One valid request, as read from a row.
struct Hit<'a> {
    line: Line<'a>,
    /// (UTC microseconds, offset seconds), when the format has a time.
    time: Option<(i64, i64)>,
    /// Trimmed ([`rules::agent_trimmed`]; its key is found in `count`);
    /// `None` when the format has no agent.
    agent: Option<&'a [u8]>,
}

impl Hit<'_> {
    /// The user agent, trimmed ("" in a format without one: every
    /// visitor's agent).
    fn agent(&self) -> &[u8] {
        self.agent.unwrap_or(b"")
    }

    fn hashes(&self) -> Hashes {
        Hashes::of(&self.line, self.agent())
    }
}

impl ReportJob {
    /// The record `chunk.data[start..end]`, read on its own: blank lines and
    /// `#` comments skipped, a record the parser rejects failed.
    fn record(&self, st: &mut ReportState, chunk: &Chunk<'_>, start: usize, end: usize) {
        let Some(rec) = content(&chunk.data[start..end]) else {
            st.acc.skipped += 1;
            return;
        };
        st.acc.lines += 1;
        if st.parser.parse(rec, &mut st.columns) {
            st.spans.push((start, start + rec.len()));
            if st.spans.len() == BATCH {
                self.flush(st, chunk);
            }
        } else {
            st.acc.fail(chunk.input, chunk.offset + start as u64);
        }
    }

    /// Runs of plain records from `pos`, parsed in one call each (the
    /// format's `parse_run`, through the chunk's byte map: 20% less time
    /// than a call per record in `wf sql`); returns where the runs stopped
    /// (at a record to read on its own) and whether they took any. A record
    /// of a run that is a `#` comment is skipped at the flush.
    fn runs(&self, st: &mut ReportState, chunk: &Chunk<'_>, mut pos: usize) -> (usize, bool) {
        let data = chunk.data;
        let mut took = false;
        loop {
            let room = BATCH - st.spans.len();
            let (next, n) = st
                .parser
                .parse_run(data, &st.map, pos, room, &mut st.columns);
            let mut p = pos;
            for _ in 0..n {
                let end = st.map.next(0, p, data.len()).unwrap_or(data.len());
                st.spans.push((p, end));
                p = end + 1;
            }
            st.acc.lines += n as u64;
            took |= n > 0;
            pos = next;
            if st.spans.len() == BATCH {
                self.flush(st, chunk);
            }
            if n < room || pos >= data.len() {
                return (pos, took);
            }
        }
    }

    /// The chunk's records, each split and counted as it is read (a chunk
    /// that is valid UTF-8, of a format with a [`RowParser`]); the same
    /// records skipped, failed and counted as through columns. A request
    /// is counted [`AHEAD`] requests after it is read, its keys hashed and
    /// their table slots loaded meanwhile.
    fn read_rows(&self, st: &mut ReportState, rows: &mut dyn RowParser, chunk: &Chunk<'_>) {
        let (sep, data) = (self.format.separator(), chunk.data);
        let mut ahead = std::collections::VecDeque::with_capacity(AHEAD + 1);
        let mut start = 0;
        let mut since_check = 0;
        while start < data.len() {
            let end = memchr::memchr(sep, &data[start..]).map_or(data.len(), |e| start + e);
            if let Some(rec) = content(&data[start..end]) {
                st.acc.lines += 1;
                let hit = match rows.split(rec) {
                    true => {
                        let split = Split {
                            parser: &*rows,
                            record: rec,
                            verbatim: st.verbatim,
                        };
                        self.hit(&split, rec, &mut st.zones)
                    }
                    false => None,
                };
                match hit {
                    Some(hit) => {
                        let h = hit.hashes();
                        st.acc.panels.prefetch(&h);
                        ahead.push_back((hit, h));
                        if let Some(i) = ahead.len().checked_sub(AHEAD / 2 + 1) {
                            st.acc.panels.prefetch_keys(&ahead[i].1);
                        }
                        if ahead.len() > AHEAD {
                            // Counted where it is: a move out of the queue
                            // copied its 184 bytes (memmove: 3.3% of the
                            // samples of `-j 1` on a log of few distinct
                            // keys, 2.4% counted in place).
                            let (hit, h) = &ahead[0];
                            count(st, hit, h, self.bots);
                            ahead.pop_front();
                        }
                    }
                    None => st.acc.fail(chunk.input, chunk.offset + start as u64),
                }
            } else {
                st.acc.skipped += 1;
            }
            since_check += 1;
            if since_check == BATCH {
                since_check = 0;
                self.check_memory(st);
            }
            start = end + 1;
        }
        for (hit, h) in ahead.drain(..) {
            count(st, &hit, &h, self.bots);
        }
        self.check_memory(st);
    }

    /// Counts the rows parsed so far.
    fn flush(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let (arrays, rows) = st.columns.take();
        let cols: Vec<Col<'_>> = arrays.iter().map(cast).collect();
        // Some value of the batch did not convert: which row's is asked below.
        let any_bad = std::mem::take(&mut st.columns.bad_values) > 0;
        let mut spans = std::mem::take(&mut st.spans);
        for (row, &(s, e)) in spans.iter().enumerate().take(rows) {
            if chunk.data[s] == b'#' {
                st.acc.lines -= 1;
                st.acc.skipped += 1;
                continue;
            }
            let mut fields = BatchRow {
                cols: &cols,
                row,
                bad: false,
            };
            let rec = &chunk.data[s..e];
            fields.bad = any_bad && self.has_bad_value(&fields, st.parser.as_mut(), rec);
            let Some(hit) = self.hit(&fields, rec, &mut st.zones) else {
                st.acc.fail(chunk.input, chunk.offset + s as u64);
                continue;
            };
            count(st, &hit, &hit.hashes(), self.bots);
        }
        spans.clear();
        st.spans = spans;
        self.check_memory(st);
    }

    /// Whether `row`'s size (record `rec`) is NULL for a value that did not
    /// convert: `rec` parsed again alone (only in a batch that had such a
    /// value; a batch's count of them names no row). Its time and status
    /// would have failed the line already.
    fn has_bad_value(&self, row: &BatchRow<'_, '_>, parser: &mut dyn Parser, rec: &[u8]) -> bool {
        if self.cols.bytes.is_none_or(|i| row.int(i).is_some()) {
            return false;
        }
        let mut one = Columns::new(&self.kinds);
        parser.parse(rec, &mut one) && one.bad_values > 0
    }

    /// Spills the worker's counts past its share of `--memory`.
    fn check_memory(&self, st: &mut ReportState) {
        if let Some(s) = &self.spill {
            if s.check(&mut st.acc.panels) {
                // Agent ids start again.
                st.forget_agents();
            }
        }
    }

    /// The row's request, or `None` for a line GoAccess calls failed (no
    /// client, no valid status, a format with a time and no valid time in
    /// the line).
    fn hit<'a>(
        &self,
        f: &impl Fields<'a>,
        record: &[u8],
        zones: &mut rules::ZoneCache,
    ) -> Option<Hit<'a>> {
        let c = self.cols;
        let status = f.int(c.status).filter(|&s| rules::valid_status(s))? as u16;
        let (time, hour) = match c.time {
            Some(t) => match f.time_text(t).and_then(|x| rules::clf_time(x, zones)) {
                Some((utc, off, hour)) => (Some((utc, off)), hour),
                None => {
                    let utc = f.time(t)?;
                    let off = match self.format.zone_of(record) {
                        Some(off) => off,
                        None => rules::local_offset(record, utc, zones),
                    };
                    (Some((utc, off)), rules::hour_of(utc, off))
                }
            },
            None => (None, NO_TIME),
        };
        let opt_text = |col: Option<usize>| col.and_then(|i| f.text(i));
        // A size that is not a number fails the line: a combined log read
        // as common would otherwise count no byte of it, and say nothing.
        let bytes = match c.bytes.map(|i| (i, f.int(i))) {
            Some((_, Some(n))) => n,
            Some((i, None)) if f.not_a_number(i) => return None,
            _ => 0,
        };
        // A record without a client (a JSON log's missing or null key) is
        // failed, as GoAccess fails it: counted as the client "-", a typo in
        // the mapping made every line one visitor, exit 0.
        let client = f.text(c.client).map(rules::client_key)?;
        Some(Hit {
            line: Line {
                client,
                request: f.text(c.request).unwrap_or(b"-"),
                status,
                bytes: bytes.max(0) as u64,
                hour,
                referrer: opt_text(c.referrer).map(rules::referrer_key),
                vhost: opt_text(c.vhost),
            },
            time,
            // A line without an agent (a JSON log's missing header) is
            // GoAccess's "-" agent, as an empty one is: three such requests
            // of one client were two visitors here, one there.
            agent: c
                .agent
                .map(|i| f.text(i).map_or(&b"-"[..], rules::agent_trimmed)),
        })
    }
}

/// A record without its trailing CR; `None` for a blank line or a `#`
/// comment (skipped, as GoAccess does).
fn content(rec: &[u8]) -> Option<&[u8]> {
    let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
    (!rec.is_empty() && rec[0] != b'#').then_some(rec)
}

/// Whether the agent `id` is a bot, classified once per thread.
fn is_bot(st: &mut ReportState, id: u32) -> bool {
    let i = id as usize;
    if st.bot_of.len() <= i {
        st.bot_of.resize(i + 1, 0);
    }
    if st.bot_of[i] == 0 {
        let cache = st.agents.get_or_insert_with(AgentCache::new);
        let ua = st.acc.panels.agents.keys.get(id);
        st.bot_of[i] = 1 + cache.get(ua).bot.is_some() as u8;
    }
    st.bot_of[i] == 2
}

/// The id of the agent a line writes as `raw` (trimmed, of hash
/// `h.agent`; `None` in a format without agents: every visitor's is ""),
/// and the line's hashes with its key's. Found by `raw` itself when that
/// is a key that is its own text (asked once per agent,
/// [`ReportState::plain`]: most agents), else by its key
/// ([`rules::agent_key`]), remembered for the text ([`ReportState::encoded`]).
fn agent_id(st: &mut ReportState, raw: Option<&[u8]>, h: &Hashes) -> (u32, Hashes) {
    let agents = &mut st.acc.panels.agents;
    let Some(raw) = raw else {
        return (agents.slot_hashed(b"", h.agent).0, *h);
    };
    if let Some(id) = agents.keys.find_hashed(raw, h.agent) {
        let i = id as usize;
        if st.plain.len() <= i {
            st.plain.resize(i + 1, 0);
        }
        if st.plain[i] == 0 {
            st.plain[i] = 1 + !rules::agent_is_key(raw) as u8;
        }
        if st.plain[i] == 1 {
            return (id, *h);
        }
    }
    if let Some(e) = st.encoded.keys.find_hashed(raw, h.agent) {
        let (id, hash) = st.encoded.values[e as usize];
        return (id, h.with_agent(hash));
    }
    let key = rules::agent_key(raw);
    let hash = hash_key(&key);
    let (id, _) = agents.slot_hashed(&key, hash);
    // Also a text decoding leaves as it is (`a%zz`): it is not plain.
    if !rules::agent_is_key(raw) {
        if st.encoded.len() >= ENCODED {
            st.encoded = Keyed::default();
        }
        *st.encoded.slot_hashed(raw, h.agent).1 = (id, hash);
    }
    (id, h.with_agent(hash))
}

/// Agents written otherwise than their keys that a thread remembers
/// ([`ReportState::encoded`]); past it, it starts again.
const ENCODED: usize = 4096;

/// Counts one valid request (see `acc` for what each panel keeps).
fn count(st: &mut ReportState, h: &Hit<'_>, hashes: &Hashes, mode: BotMode) {
    let (agent, hashes) = agent_id(st, h.agent, hashes);
    st.acc.panels.agents.values[agent as usize].all += 1;
    let keep = match mode {
        BotMode::Include => true,
        BotMode::Exclude => !is_bot(st, agent),
        BotMode::Only => is_bot(st, agent),
    };
    let acc = &mut st.acc;
    if !keep {
        acc.excluded += 1;
        return;
    }
    acc.hits += 1;
    acc.bytes = acc.bytes.saturating_add(h.line.bytes);
    if h.line.status == 404 {
        acc.not_found_hits += 1;
    }
    if let Some((utc, off)) = h.time {
        acc.time(utc, off);
    }
    acc.panels.count(&h.line, &hashes, agent);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acc::InputLines;

    /// Lines of every kind the two paths must agree on: plain, CR-ended,
    /// blank, comments, malformed, a status or time that does not convert,
    /// escaped quotes, a request without spaces, a time of another zone.
    const LINES: &[&str] = &[
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a.css HTTP/1.0" 200 2 "http://x/" "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0""#,
        "5.6.7.8 - - [11/Oct/2000:13:55:36 -0700] \"GET /b HTTP/1.0\" 404 3 \"-\" \"Googlebot/2.1\"\r",
        "",
        "# a comment",
        "bad line",
        r#"1.2.3.4 - - [11/Oct/2000:14:55:36 -0700] "GET /c HTTP/1.0" OK 4 "-" "curl/8""#,
        r#"1.2.3.4 - - [-] "GET /c HTTP/1.0" 200 4 "-" "curl/8""#,
        r#"1.2.3.4 - - [11/Oct/2000:14:55:99 -0700] "GET /c HTTP/1.0" 200 4 "-" "curl/8""#,
        r#"9.9.9.9 - u [11/Oct/2000:23:59:59 +0530] "GET /q?\"x\" HTTP/1.1" 301 - "http://r/\"y\"" "a \"quoted\" agent""#,
        r#"9.9.9.9 - - [12/Oct/2000:00:00:00 +0530] "-" 400 0 "-" "-""#,
        r#"9.9.9.9 - - [12/Oct/2000:00:00:01 +0530] "GET /d HTTP/1.1" 200 -5 "-" "-"  "#,
        r#"9.9.9.9 - - [12/Oct/2000:00:00:02 +0530] "GET /e HTTP/1.1" 200 12x "-" "-""#,
        r#"9.9.9.9 - - [12/Oct/2000:00:00:03 +0530] "GET /f HTTP/1.1" 200 7"#,
    ];

    /// The counts of `data` cut into chunks of `size` bytes at line ends,
    /// through the row parser or through columns.
    fn counted(job: &ReportJob, data: &[u8], size: usize, rows: bool) -> Acc {
        let mut st = job.new_state();
        if !rows {
            st.rows = None;
        }
        let mut start = 0;
        while start < data.len() {
            let end = (start + size).min(data.len());
            let end = memchr::memchr(b'\n', &data[end.max(1) - 1..])
                .map_or(data.len(), |e| end.max(1) + e);
            let chunk = Chunk {
                input: 0,
                offset: start as u64,
                data: &data[start..end],
            };
            job.process(&mut st, &chunk);
            start = end;
        }
        st.acc
    }

    use crate::report::tests::json;

    /// A format without agents keys every visitor's agent "" (as a state
    /// saved by an older wf holds it: a "-" made each of its returning
    /// visitors a second one), through rows and through columns.
    #[test]
    fn a_format_without_agents_keys_the_empty_agent() {
        let job = ReportJob::new(crate::format("common", b"").unwrap(), BotMode::Include).unwrap();
        let data = b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2\n";
        for rows in [true, false] {
            let a = counted(&job, data, data.len(), rows);
            let keys: Vec<&[u8]> = a.panels.agents.keys.keys().collect();
            assert_eq!(keys, [b""], "rows: {rows}");
        }
    }

    /// A record's time read through the row parser is the one the columns
    /// read, with and without its separator and CR.
    #[test]
    fn time_readers_agree() {
        for spec in ["combined", "apache:%h %>s [%{%d/%b/%Y}t] %t \"%r\""] {
            let format = crate::format(spec, b"").unwrap();
            let job = ReportJob::new(format.clone(), BotMode::Include).unwrap();
            let col = job.projection[job.cols.time.unwrap()];
            let (rows, columns) = (
                row_time_reader(format.clone(), col),
                column_time_reader(format, col),
            );
            let mut read = 0;
            for l in LINES
                .iter()
                .chain(&[r#"1.2.3.4 200 [10/Oct/2000] [10/Oct/2000:13:55:36 -0700] "GET / H""#])
            {
                for rec in [l.to_string(), format!("{l}\n"), format!("{l}\r\n")] {
                    assert_eq!(
                        rows(rec.as_bytes()),
                        columns(rec.as_bytes()),
                        "{spec}: {rec}"
                    );
                    read += rows(rec.as_bytes()).is_some() as usize;
                }
            }
            assert!(read >= 3, "{spec}: {read}");
        }
    }

    /// A record read through the row parser is counted, skipped or failed
    /// exactly as through Arrow columns, at every chunk size; also in a
    /// format whose last field, a number, takes the rest of a longer line
    /// (combined lines read as common).
    #[test]
    fn rows_count_as_columns_do() {
        let mut data = Vec::new();
        for i in 0..300 {
            data.extend_from_slice(LINES[i * 7 % LINES.len()].as_bytes());
            data.push(b'\n');
        }
        for (spec, size) in ["combined", "common"]
            .into_iter()
            .flat_map(|f| [1, 97, 4096, data.len()].map(|s| (f, s)))
        {
            let job = ReportJob::new(crate::format(spec, b"").unwrap(), BotMode::Include).unwrap();
            let (a, b) = (
                counted(&job, &data, size, true),
                counted(&job, &data, size, false),
            );
            assert_eq!(
                (a.lines, a.skipped, a.failed),
                (b.lines, b.skipped, b.failed)
            );
            assert_eq!(a.failed_at, b.failed_at, "failed offsets at {size}");
            assert!(a.failed > 50 && a.skipped > 20 && a.lines > 200);
            let input = InputLines {
                lines: a.lines,
                failed: a.failed,
                first_failed: a.failed_at[0].1,
            };
            assert_eq!((&a.inputs, &b.inputs), (&vec![input], &vec![input]));
            assert_eq!(json(a), json(b), "{spec}, chunks of {size}");
        }
    }

    /// A size that is not a number (nor `-`) fails its line, through rows
    /// and through columns; a negative one is no bytes.
    #[test]
    fn a_size_that_is_not_a_number_fails_the_line() {
        let line = |bytes: &str| {
            format!(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 {bytes}"#)
        };
        for (spec, tail) in [("common", ""), ("combined", r#" "-" "curl/8""#)] {
            let job = ReportJob::new(crate::format(spec, b"").unwrap(), BotMode::Include).unwrap();
            for (bytes, valid, sent) in [("12", 1, 12), ("-", 1, 0), ("-5", 1, 0), ("12x", 0, 0)] {
                let data = format!("{}{tail}\n", line(bytes));
                for rows in [true, false] {
                    let a = counted(&job, data.as_bytes(), data.len(), rows);
                    assert_eq!(
                        (a.hits, a.bytes),
                        (valid, sent),
                        "{spec} {bytes} rows {rows}"
                    );
                    assert_eq!(a.failed, 1 - valid, "{spec} {bytes} rows {rows}");
                }
            }
        }
    }
}
