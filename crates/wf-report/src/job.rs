//! The report as a scan job: each worker thread parses its chunks' records
//! with the format's parser (wf-formats, the same parsers as `wf sql`) into
//! Arrow columns, a batch of records at a time, and counts each row into its
//! own [`Acc`]; the threads' counts merge once at the end.
//!
//! Only the columns the report reads are built (client, time, request,
//! status, bytes, referrer, user agent, virtual host). A record the format
//! cannot read, or whose time or status is missing or not valid, is a failed
//! line, as GoAccess counts it; blank lines and `#` comments are skipped.
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
use wf_formats::bytemap::ByteMap;
use wf_formats::{Columns, Format, Kind, Parser};

use crate::acc::{Acc, Line, NO_TIME};
use crate::agent::AgentCache;
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
        // Each thread keeps its own parser of this reader: no lock per record.
        let id = NEXT_READER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Box::new(move |rec: &[u8]| {
            let rec = rec.strip_suffix(&[format.separator()]).unwrap_or(rec);
            let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
            let mut cols = Columns::new(&[Kind::Time]);
            let ok = TIME_PARSERS.with_borrow_mut(|ps| {
                let i = match ps.iter().position(|(k, _)| *k == id) {
                    Some(i) => i,
                    None => {
                        ps.push((id, format.parser(&[col])));
                        ps.len() - 1
                    }
                };
                ps[i].1.parse(rec, &mut cols)
            });
            if !ok {
                return None;
            }
            let (arrays, _) = cols.take();
            let a = arrays.first()?.as_primitive::<TimestampMicrosecondType>();
            (a.len() == 1 && a.is_valid(0)).then(|| a.value(0))
        }))
    }

    /// The format has a virtual host column.
    pub fn has_vhosts(&self) -> bool {
        self.cols.vhost.is_some()
    }
}

/// Ids of [`ReportJob::time_reader`]s, so that a thread's parsers of two
/// readers (two commands in one process: the Python package) stay apart.
static NEXT_READER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// This thread's parser of each time reader it has used.
    static TIME_PARSERS: std::cell::RefCell<Vec<(usize, Box<dyn Parser>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// One worker thread's parser, buffers and counts.
pub struct ReportState {
    parser: Box<dyn Parser>,
    columns: Columns,
    /// The chunk's separators and the parser's needles (`parse_run`).
    map: ByteMap,
    /// Start and end, in the chunk, of each record parsed into `columns`.
    spans: Vec<(usize, usize)>,
    /// Per agent id under `--bots exclude|only`: 0 not classified yet, 1 a
    /// human, 2 a bot (one classification per distinct agent and thread).
    bot_of: Vec<u8>,
    agents: Option<AgentCache>,
    /// The last log time's date and zone (`rules::local_offset`).
    zones: rules::ZoneCache,
    pub acc: Acc,
}

impl Job for ReportJob {
    type State = ReportState;

    fn new_state(&self) -> ReportState {
        ReportState {
            parser: self.format.parser(&self.projection),
            columns: Columns::new(&self.kinds),
            map: wf_formats::byte_map(self.format.as_ref()),
            spans: Vec::with_capacity(BATCH),
            bot_of: Vec::new(),
            agents: None,
            zones: rules::ZoneCache::default(),
            acc: Acc::default(),
        }
    }

    fn process(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let sep = self.format.separator();
        let data = chunk.data;
        // One UTF-8 check of the chunk instead of one per text value (as
        // `wf sql` does); a chunk that fails it is checked value by value.
        st.columns.utf8_checked =
            self.format.ascii_boundaries() && simdutf8::basic::from_utf8(data).is_ok();
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

    fn merge(&self, into: &mut ReportState, other: ReportState) {
        into.acc.merge(other.acc);
        self.check_memory(into);
    }
}

/// The columns of one batch, each cast to its type once a batch (a cast a
/// value was eight `Any` downcasts a row).
struct Batch<'a> {
    client: &'a StringViewArray,
    request: &'a StringViewArray,
    status: &'a Int64Array,
    time: Option<&'a TimestampMicrosecondArray>,
    bytes: Option<&'a Int64Array>,
    referrer: Option<&'a StringViewArray>,
    agent: Option<&'a StringViewArray>,
    vhost: Option<&'a StringViewArray>,
}

impl<'a> Batch<'a> {
    fn new(arrays: &'a [ArrayRef], c: Cols) -> Self {
        let text = |i: usize| arrays[i].as_string_view();
        let int = |i: usize| arrays[i].as_primitive::<Int64Type>();
        Batch {
            client: text(c.client),
            request: text(c.request),
            status: int(c.status),
            time: c
                .time
                .map(|i| arrays[i].as_primitive::<TimestampMicrosecondType>()),
            bytes: c.bytes.map(int),
            referrer: c.referrer.map(text),
            agent: c.agent.map(text),
            vhost: c.vhost.map(text),
        }
    }
}

/// Row `row` of a text column, unless null.
fn text(a: &StringViewArray, row: usize) -> Option<&[u8]> {
    (!a.is_null(row)).then(|| a.value(row).as_bytes())
}

/// Row `row` of a primitive column, unless null.
fn value<T: ArrowPrimitiveType>(a: &PrimitiveArray<T>, row: usize) -> Option<T::Native> {
    (!a.is_null(row)).then(|| a.value(row))
}

/// One valid request, as read from a row.
struct Hit<'a> {
    line: Line<'a>,
    /// (UTC microseconds, offset seconds), when the format has a time.
    time: Option<(i64, i64)>,
    agent: Option<&'a [u8]>,
}

impl ReportJob {
    /// The record `chunk.data[start..end]`, read on its own: blank lines and
    /// `#` comments skipped, a record the parser rejects failed.
    fn record(&self, st: &mut ReportState, chunk: &Chunk<'_>, start: usize, end: usize) {
        let mut rec = &chunk.data[start..end];
        if rec.last() == Some(&b'\r') {
            rec = &rec[..rec.len() - 1];
        }
        if rec.is_empty() || rec[0] == b'#' {
            st.acc.skipped += 1;
        } else {
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

    /// Counts the rows parsed so far.
    fn flush(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let (arrays, rows) = st.columns.take();
        let batch = Batch::new(&arrays, self.cols);
        let mut spans = std::mem::take(&mut st.spans);
        for (row, &(s, e)) in spans.iter().enumerate().take(rows) {
            if chunk.data[s] == b'#' {
                st.acc.lines -= 1;
                st.acc.skipped += 1;
                continue;
            }
            let Some(hit) = self.hit(&batch, row, &chunk.data[s..e], &mut st.zones) else {
                st.acc.fail(chunk.input, chunk.offset + s as u64);
                continue;
            };
            count(st, &hit, self.bots);
        }
        spans.clear();
        st.spans = spans;
        self.check_memory(st);
    }

    /// Spills the worker's counts past its share of `--memory`.
    fn check_memory(&self, st: &mut ReportState) {
        if let Some(s) = &self.spill {
            if s.check(&mut st.acc.panels) {
                // Agent ids start again.
                st.bot_of.clear();
            }
        }
    }

    /// The row's request, or `None` for a line GoAccess calls failed (no
    /// valid status, a format with a time and no valid time in the line).
    fn hit<'a>(
        &self,
        b: &Batch<'a>,
        row: usize,
        record: &[u8],
        zones: &mut rules::ZoneCache,
    ) -> Option<Hit<'a>> {
        let status = value(b.status, row).filter(|&s| rules::valid_status(s))? as u16;
        let time = match b.time {
            Some(t) => {
                let utc = value(t, row)?;
                Some((utc, rules::local_offset(record, utc, zones)))
            }
            None => None,
        };
        let hour = match time {
            Some((utc, off)) => (utc + off * 1_000_000).div_euclid(MICROS_PER_HOUR),
            None => NO_TIME,
        };
        let opt_text = |a: Option<&'a StringViewArray>| a.and_then(|a| text(a, row));
        Some(Hit {
            line: Line {
                client: text(b.client, row).unwrap_or(b"-"),
                request: text(b.request, row).unwrap_or(b"-"),
                status,
                bytes: b.bytes.and_then(|x| value(x, row)).unwrap_or(0).max(0) as u64,
                hour,
                referrer: opt_text(b.referrer),
                vhost: opt_text(b.vhost),
            },
            time,
            agent: opt_text(b.agent),
        })
    }
}

const MICROS_PER_HOUR: i64 = 3_600_000_000;

/// Whether the agent `id` (bytes `ua`) is a bot, classified once per thread.
fn is_bot(st: &mut ReportState, id: u32, ua: &[u8]) -> bool {
    let i = id as usize;
    if st.bot_of.len() <= i {
        st.bot_of.resize(i + 1, 0);
    }
    if st.bot_of[i] == 0 {
        let cache = st.agents.get_or_insert_with(AgentCache::new);
        st.bot_of[i] = 1 + cache.get(ua).bot.is_some() as u8;
    }
    st.bot_of[i] == 2
}

/// Counts one valid request (see `acc` for what each panel keeps).
fn count(st: &mut ReportState, h: &Hit<'_>, mode: BotMode) {
    let ua = h.agent.unwrap_or(b"");
    let (agent, hits) = st.acc.panels.agents.slot(ua);
    if h.agent.is_some() {
        hits.all += 1;
    }
    let keep = match mode {
        BotMode::Include => true,
        BotMode::Exclude => !is_bot(st, agent, ua),
        BotMode::Only => is_bot(st, agent, ua),
    };
    let acc = &mut st.acc;
    if !keep {
        acc.excluded += 1;
        return;
    }
    acc.hits += 1;
    acc.bytes += h.line.bytes;
    if h.line.status == 404 {
        acc.not_found_hits += 1;
    }
    if let Some((utc, off)) = h.time {
        acc.time(utc, off);
    }
    acc.panels.count(&h.line, (agent, h.agent.is_some()));
}
