//! A DataFusion table over the scan engine: [`LogTable`] is the
//! `TableProvider`, [`ScanExec`] the leaf of the physical plan.
//!
//! DataFusion asks the table for the columns a query uses (projection push-down)
//! and [`ScanExec`] passes exactly those to the format's parser, so
//! `SELECT status, count(*) ... GROUP BY status` never builds the user agent.
//! Its output partitions (one per worker thread) all read from one channel fed
//! by one run of the scan engine (see `sql::job`), started on a thread of its own
//! when the first partition is executed. When the scan ends it leaves its input
//! errors and parse counts in the table's [`ScanReport`] *before* it closes the
//! channel, so once a query's streams are done the report is complete.
//!
//! A query may scan a table more than once (a self-join, a scalar subquery);
//! the lines and errors are reported once, from the first scan that read every
//! record. A scan that a LIMIT stopped early reports only while no complete scan
//! has (the two-scan test in `tests/sql.rs` runs both orders).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Field as ArrowField, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::Result;
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::coop::cooperative;
use datafusion::physical_plan::execution_plan::SchedulingType;
use datafusion::physical_plan::execution_plan::{
    Boundedness, ChildrenPropertiesMode, EmissionType, ReplaceChildrenOptions,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::StreamExt;

use super::job::{BatchJob, BatchResult, BatchState, Out, ParseStats, Reader, Virtual, SHOW_BAD};
use super::share::Shared;
use super::stream::{Resolved, Streams};
use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{self, Input, InputError, Progress, ScanOptions, Source};
use wf_formats::csv::Quoting;
use wf_formats::{self, Format};

/// What the scans of a table found, for `--stats`, `--strict` and the exit status.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub errors: Vec<InputError>,
    pub stats: ParseStats,
    /// The first malformed records: input name and byte offset.
    pub first_bad: Vec<(String, u64)>,
    /// Bytes handed to the parsers.
    pub bytes: u64,
    /// Files read whole and serially because quoted fields hold line breaks.
    pub serial_files: Vec<String>,
    /// What `--stats` says of the table's columns (renamed ones, types chosen
    /// so that no digit is lost).
    pub notes: Vec<String>,
    /// Some scan reported: `complete` says whether it read every record.
    pub reported: bool,
    pub complete: bool,
}

/// Scan threads of a table (see [`LogTable::scans`]).
#[derive(Debug, Clone, Default)]
pub struct Scans(Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>);

impl Scans {
    /// Wait for every scan thread started so far.
    pub fn wait(&self) {
        let started = std::mem::take(&mut *self.0.lock().unwrap());
        for h in started {
            h.join().expect("scan thread panicked");
        }
    }
}

/// A table: inputs, their format, and how to scan them.
#[derive(Debug)]
pub struct LogTable {
    inner: Arc<TableInner>,
}

pub(super) struct TableInner {
    format: Arc<dyn Format>,
    inputs: Vec<Input>,
    opts: ScanOptions,
    schema: SchemaRef,
    progress: Option<Arc<Progress>>,
    report: Arc<Mutex<ScanReport>>,
    /// The scan threads started so far; [`LogTable::scans`] waits for them.
    threads: Scans,
    /// `--strict`: every problem stops the query (see `sql::problem`).
    strict: bool,
    /// The stream inputs, until a scan takes them (see `sql::stream`).
    streams: Arc<Streams>,
}

impl fmt::Debug for TableInner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} over {} inputs",
            self.format.name(),
            self.inputs.len()
        )
    }
}

impl LogTable {
    pub fn new(
        format: Arc<dyn Format>,
        inputs: Vec<Input>,
        opts: ScanOptions,
        progress: Option<Arc<Progress>>,
    ) -> Self {
        // A name used twice, or one of the virtual columns', would make the
        // table unqueryable: renamed as DuckDB does (`a`, `a_1`).
        let names = wf_formats::csv::unique_names(format.fields().iter().map(|f| f.name.clone()));
        let mut notes = format.notes();
        let mut fields = Vec::new();
        for (f, name) in format.fields().iter().zip(names) {
            if name != f.name {
                notes.push(format!(
                    "column {:?} is named {name} (its name was taken)",
                    f.name
                ));
            }
            fields.push(ArrowField::new(name, f.kind.data_type(), true));
        }
        for (name, _, kind) in Virtual::ALL {
            fields.push(ArrowField::new(name, kind.data_type(), true));
        }
        let report = ScanReport {
            notes,
            ..ScanReport::default()
        };
        LogTable {
            inner: Arc::new(TableInner {
                format,
                inputs,
                opts,
                schema: Arc::new(Schema::new(fields)),
                progress,
                report: Arc::new(Mutex::new(report)),
                threads: Scans::default(),
                strict: false,
                streams: Arc::default(),
            }),
        }
    }

    /// Make every malformed record, value not of its column's type and invalid
    /// UTF-8 stop the queries over this table (`--strict`).
    pub fn with_strict(mut self, strict: bool) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("a table not yet shared")
            .strict = strict;
        self
    }

    /// The table's stream inputs (`inputs` holds their sources as given): the
    /// query's scans take them from here (see `sql::stream`).
    pub fn with_streams(mut self, streams: Arc<Streams>) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("a table not yet shared")
            .streams = streams;
        self
    }

    /// What the scans of this table found (complete once its queries are done
    /// and [`LogTable::scans`] waited for them).
    pub fn report(&self) -> Arc<Mutex<ScanReport>> {
        self.inner.report.clone()
    }

    /// The table's scan threads, to wait for once the query is done: a scan a
    /// LIMIT stopped ends on its own soon after (it reads no further once its
    /// channel is closed), and only then is its report in.
    pub fn scans(&self) -> Scans {
        self.inner.threads.clone()
    }

    pub fn format(&self) -> &Arc<dyn Format> {
        &self.inner.format
    }
}

impl TableInner {
    pub(super) fn streams(&self) -> &Streams {
        &self.streams
    }

    pub(super) fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    pub(super) fn sep(&self) -> u8 {
        self.format.separator()
    }
}

/// The scan's batches hold this many of DataFusion's batches (its
/// `batch_size`, 8192 rows by default): the operators just above the scan pay
/// a cost per batch (a regex compiled per call, hash tables and accumulators
/// set up per batch). The Wide Finder 2 report as SQL took 7% less time with
/// four, and the 20 million clients of `bench/sql.sh` 12% less (medians of 9,
/// 1 GiB); status counts and 1BRC the same. A scan with a LIMIT keeps one (it
/// stops once the rows are in), and so does a query under `--memory`: with four,
/// the 24 MB spill test (`group_by_beyond_memory_spills_and_never_hangs`) failed
/// to allocate in 1 attempt of 5, as it did with DataFusion's own batch size
/// raised to 32768 (which is therefore left as it is).
const SCAN_BATCHES: usize = 4;

#[async_trait]
impl TableProvider for LogTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let all: Vec<usize> = (0..self.inner.schema.fields().len()).collect();
        let projection = projection.cloned().unwrap_or(all);
        let bounded = !matches!(
            state.runtime_env().memory_pool.memory_limit(),
            MemoryLimit::Infinite
        );
        let batches = if limit.is_some() || bounded {
            1
        } else {
            SCAN_BATCHES
        };
        let batch_rows = state.config().batch_size() * batches;
        Ok(Arc::new(ScanExec::new(
            self.inner.clone(),
            projection,
            batch_rows,
        )))
    }
}

/// The physical scan: `threads` partitions fed by one scan of the table, its
/// own or one it shares with other scans of the table (see `sql::share`).
pub struct ScanExec {
    pub(super) table: Arc<TableInner>,
    pub(super) projection: Vec<usize>,
    pub(super) schema: SchemaRef,
    batch_rows: usize,
    props: Arc<PlanProperties>,
    /// The channel's receiver, for partitions yet to be executed, and how many
    /// were: once all were, it is dropped, so the channel closes when the
    /// partitions' streams are gone even while the plan lives on (`EXPLAIN
    /// ANALYZE` keeps it to the end: a LIMIT's reader of a shared scan then
    /// never closed and held the other readers back, found in review).
    rx: Mutex<(Option<async_channel::Receiver<BatchResult>>, usize)>,
    /// The shared scan this one reads, and its place among the readers.
    share: Option<(Arc<Shared>, usize)>,
    /// The only scan of its table in the plan (`sql::share` says so): it may
    /// read the table's streams as they come (see `sql::stream`).
    sole: bool,
}

impl fmt::Debug for ScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScanExec({:?})", self.table)
    }
}

impl ScanExec {
    fn new(table: Arc<TableInner>, projection: Vec<usize>, batch_rows: usize) -> Self {
        let schema = Arc::new(table.schema.project(&projection).expect("valid projection"));
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(table.opts.threads.max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        )
        .with_scheduling_type(SchedulingType::Cooperative);
        ScanExec {
            table,
            projection,
            schema,
            batch_rows: batch_rows.max(1),
            props: Arc::new(props),
            rx: Mutex::new((None, 0)),
            share: None,
            sole: false,
        }
    }

    pub(super) fn batch_rows(&self) -> usize {
        self.batch_rows
    }

    /// This scan as reader `i` of a shared scan.
    pub(super) fn shared(&self, share: Arc<Shared>, i: usize) -> Self {
        let mut s = ScanExec::new(self.table.clone(), self.projection.clone(), self.batch_rows);
        s.share = Some((share, i));
        s
    }

    /// This scan as the only one of its table in the plan.
    pub(super) fn sole(&self) -> Self {
        let mut s = ScanExec::new(self.table.clone(), self.projection.clone(), self.batch_rows);
        s.sole = true;
        s
    }

    /// The receiver of the batch channel; the first call joins the shared scan
    /// or, if there is none (or it started without this one), starts a scan.
    fn receiver(&self) -> async_channel::Receiver<BatchResult> {
        let mut rx = self.rx.lock().unwrap();
        let (cached, executed) = &mut *rx;
        let r = match cached.clone() {
            Some(r) => r,
            None => self.start(),
        };
        *executed += 1;
        if *executed == self.props.partitioning.partition_count() {
            (*cached, *executed) = (None, 0);
        } else {
            *cached = Some(r.clone());
        }
        r
    }

    /// Join the shared scan, or start a scan of this one's own.
    fn start(&self) -> async_channel::Receiver<BatchResult> {
        if let Some(r) = self.share.as_ref().and_then(|(sh, i)| sh.join(*i)) {
            return r;
        }
        let (tx, r) = async_channel::bounded(channel_bound(&self.table));
        let schema = self.schema.clone();
        let readers = vec![Reader {
            tx,
            cols: None,
            schema,
        }];
        let direct = self.sole;
        let (table, projection, rows) =
            (self.table.clone(), self.projection.clone(), self.batch_rows);
        spawn_scan(&self.table, move || {
            let sep = table.format.separator();
            let resolved = table.streams.resolve(&table.inputs, direct, sep);
            let jobs = scan_jobs(&table, &resolved.inputs, &projection, rows, readers);
            run_scans(&table, jobs, resolved);
        });
        r
    }
}

/// Batches a reader's channel holds: two per thread, the back-pressure that
/// keeps parsing from running far ahead of the query.
pub(super) fn channel_bound(table: &TableInner) -> usize {
    2 * table.opts.threads.max(1)
}

/// Run `scan` on a thread of its own, which [`LogTable::scans`] waits for.
pub(super) fn spawn_scan(table: &TableInner, scan: impl FnOnce() + Send + 'static) {
    let h = std::thread::Builder::new()
        .name("wf-sql-scan".into())
        .spawn(scan)
        .expect("starting a scan thread");
    table.threads.0.lock().unwrap().push(h);
}

/// The jobs of a scan of `projection` (table columns) for `readers`: one per
/// way of cutting records, inputs cut at separators on every core, and CSV
/// files whose quoted fields hold line breaks, read whole.
pub(super) fn scan_jobs(
    t: &TableInner,
    inputs: &[Input],
    projection: &[usize],
    batch_rows: usize,
    readers: Vec<Reader>,
) -> Vec<(BatchJob, Vec<Input>)> {
    let flags = match t.format.quoting() {
        Some(q) => quoted_files(inputs, &t.opts, q),
        None => vec![false; inputs.len()],
    };
    // Table input indices: the plain ones, the quoted ones, byte ranges of
    // quoted ones (read apart, see `read_spans`).
    let mut groups: [Vec<usize>; 3] = Default::default();
    for (i, q) in flags.into_iter().enumerate() {
        let g = match (q, inputs[i].span.is_some()) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        };
        groups[g].push(i);
    }
    let mut out = Vec::new();
    for (g, idx) in groups.into_iter().enumerate() {
        let quoted = g > 0;
        if !idx.is_empty() {
            let mine: Vec<Input> = idx.iter().map(|&i| inputs[i].clone()).collect();
            let job = job(
                t,
                &mine,
                projection,
                batch_rows,
                readers.clone(),
                &idx,
                quoted,
            );
            out.push((job, mine));
        }
    }
    out
}

fn job(
    t: &TableInner,
    inputs: &[Input],
    projection: &[usize],
    batch_rows: usize,
    readers: Vec<Reader>,
    idx: &[usize],
    quoted: bool,
) -> BatchJob {
    let nformat = t.format.fields().len();
    let mut format_cols = Vec::new();
    let mut virtuals = Vec::new();
    let order = projection
        .iter()
        .map(|&c| {
            if c < nformat {
                format_cols.push(c);
                Out::Format(format_cols.len() - 1)
            } else {
                virtuals.push(Virtual::ALL[c - nformat].1);
                Out::Virtual(virtuals.len() - 1)
            }
        })
        .collect();
    BatchJob {
        format: t.format.clone(),
        format_cols,
        virtuals,
        order,
        schema: Arc::new(t.schema.project(projection).expect("valid projection")),
        names: Arc::new(inputs.iter().map(|i| i.name.clone()).collect()),
        layouts: idx.iter().map(|&i| t.format.layout_of(i)).collect(),
        inputs: Arc::new(inputs.to_vec()),
        strict: t.strict,
        failed: Default::default(),
        quoted,
        ascii_boundaries: t.format.ascii_boundaries(),
        batch_rows,
        readers,
    }
}

/// For each input: is it a regular file with a line break inside quotes? One
/// scan (every core, nothing parsed) finds the files with any `"`, and only
/// those get the serial pass that follows the quote state. A serial pass over
/// every file (mmap and memchr) was 9% of a 1BRC query's CPU in perf, all of it
/// before the query's scan could start. The files are read as the query's scan
/// reads them (`pread` into each worker's reused buffer, unless `--mmap`), no
/// longer always mapped: on the AMD EPYC host, 1 GiB of 1BRC
/// took 0.083 s read against 0.122 s mapped (11 rounds of `wf count` with and
/// without `--mmap`; mapped, the search ran on freshly mapped pages and the
/// process's RSS grew by the file's size), where on the 2.25 GHz host reading
/// had cost 0.35 s of system time on the 1BRC query.
fn quoted_files(inputs: &[Input], opts: &ScanOptions, q: Quoting) -> Vec<bool> {
    let files: Vec<usize> = (0..inputs.len())
        .filter(|&i| matches!(inputs[i].source, Source::File { .. }))
        .collect();
    // A stream is read front to back, so its records can be cut quote-aware
    // as they come (`CsvEnds`) rather than after a pass of its own.
    let streams = (0..inputs.len()).filter(|&i| matches!(inputs[i].source, Source::Stream { .. }));
    let mut opts = opts.clone();
    opts.chunk_size = opts.chunk_size.max(1 << 20);
    let mine = files.iter().map(|&i| inputs[i].clone()).collect();
    // Unreadable files are reported by the query's own scan.
    let found = scan::run(&AnyQuote, mine, &opts, None).state;
    let mut flags = vec![false; inputs.len()];
    for i in streams {
        flags[i] = true;
    }
    for k in found {
        flags[files[k]] = has_quoted_newline(&inputs[files[k]], q);
    }
    flags
}

/// The inputs (indices) that hold a double quote anywhere.
struct AnyQuote;

impl Job for AnyQuote {
    type State = BTreeSet<usize>;

    fn new_state(&self) -> Self::State {
        BTreeSet::new()
    }

    fn process(&self, found: &mut Self::State, chunk: &Chunk<'_>) {
        if !found.contains(&chunk.input) && memchr::memchr(b'"', chunk.data).is_some() {
            found.insert(chunk.input);
        }
    }

    fn merge(&self, into: &mut Self::State, other: Self::State) {
        into.extend(other);
    }

    fn offsets(&self) -> bool {
        false
    }
}

/// A CSV stream's record ends, for the scan to cut its blocks at (never at a
/// line break inside quotes).
#[derive(Debug)]
struct CsvEnds(Quoting);

impl wf_core::scan::RecordEnds for CsvEnds {
    fn record_end(&self, data: &[u8], start: usize) -> Option<usize> {
        self.0.stream_end(data, start)
    }
}

/// True for a regular file that holds a line break inside quotes.
fn has_quoted_newline(input: &Input, q: Quoting) -> bool {
    map_file(input).is_ok_and(|m| q.has_quoted_newline(&m))
}

/// A regular file input, mapped (the scan reports the errors).
fn map_file(input: &Input) -> std::io::Result<memmap2::Mmap> {
    let Source::File { path, .. } = &input.source else {
        return Err(std::io::ErrorKind::Unsupported.into());
    };
    let f = std::fs::File::open(path)?;
    // SAFETY: read-only map of a file this process does not write; a file
    // truncated meanwhile could fault, as with `--mmap`.
    unsafe { memmap2::Mmap::map(&f) }
}

/// Run the scans, record what they found, then close the channel (by dropping
/// the jobs, which hold its senders, after the report is in). The streams
/// `resolved` hands over are fed into their pipes meanwhile, each on a thread
/// that stops once the query needs no more (see `sql::stream`).
pub(super) fn run_scans(
    table: &TableInner,
    scans: Vec<(BatchJob, Vec<Input>)>,
    resolved: Resolved,
) {
    let mut mine = ScanReport {
        reported: true,
        complete: true,
        ..ScanReport::default()
    };
    let done = AtomicBool::new(false);
    let stop = || done.load(Ordering::Relaxed) || scans.iter().any(|(j, _)| j.stopped());
    std::thread::scope(|s| {
        for p in resolved.pipes {
            let (stop, streams, name) = (&stop, &table.streams, p.name().to_string());
            let fed = std::thread::Builder::new()
                .name("wf-sql-pipe".into())
                .spawn_scoped(s, move || streams.feed(p, stop));
            if let Err(e) = fed {
                // The pipe was dropped with the closure: its scan sees an end.
                table.streams.failed_to_feed(name, &e);
            }
        }
        for (job, inputs) in &scans {
            scan_one(table, job, inputs, &mut mine);
        }
        done.store(true, Ordering::Relaxed);
        // No reader left: a feeder blocked on a full pipe ends too.
        drop(resolved.keep);
    });
    let mut r = table.report.lock().unwrap();
    if !r.reported || (mine.complete && !r.complete) {
        mine.notes = std::mem::take(&mut r.notes);
        *r = mine;
    }
    drop(r);
    drop(scans);
}

/// Run one scan job over its inputs; add what it found to `mine`.
fn scan_one(table: &TableInner, job: &BatchJob, inputs: &[Input], mine: &mut ScanReport) {
    let mut opts = table.opts.clone();
    opts.sep = table.format.separator();
    // Streams here are the pipes of `sql::stream`: records as they come.
    opts.eager_streams = true;
    if job.quoted {
        opts.chunk_size = u64::MAX;
        opts.mmap = true;
        let q = job.format.quoting().expect("a format with quoted records");
        opts.record_ends = Some(Arc::new(CsvEnds(q)));
    }
    if job.virtuals.contains(&Virtual::Line) {
        // Each file one chunk: read front to back by one worker, which
        // counts its lines (see `Virtual::Line`); a stream's blocks go out in
        // turn to any worker, so a scan with a stream has one.
        opts.chunk_size = u64::MAX;
        if inputs
            .iter()
            .any(|i| matches!(i.source, Source::Stream { .. }))
        {
            opts.threads = 1;
        }
    }
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let (mut state, errors, bytes) = if job.quoted && inputs[0].span.is_some() {
        read_spans(job, inputs)
    } else {
        let out = scan::run(job, inputs.to_vec(), &opts, table.progress.as_deref());
        (out.state, out.errors, out.bytes)
    };
    job.flush(&mut state);
    mine.complete &= !job.stopped();
    mine.errors.extend(errors);
    mine.bytes += bytes;
    let mut stats = state.stats;
    // Name the malformed records' inputs from this scan's own input list.
    for (i, off) in std::mem::take(&mut stats.first_bad) {
        mine.first_bad.push((names[i].clone(), off));
    }
    mine.first_bad.truncate(SHOW_BAD);
    mine.stats.merge(stats);
    if job.quoted {
        // Streams are cut quote-aware as they come, by blocks on every core.
        let files = inputs.iter().zip(names);
        let files = files.filter(|(i, _)| matches!(i.source, Source::File { .. }));
        mine.serial_files.extend(files.map(|(_, n)| n));
    }
}

/// The records of byte ranges of CSV files whose quoted fields hold line
/// breaks (ranges of the Python package's `read_range`, one per Dask task).
/// The engine cuts a range at newlines, which may lie inside quotes, so each
/// range is read here whole, on this thread: from the first record that
/// starts at or after the range's start to the first that starts at or after
/// its end, both found by cutting the file's records from its start (one pass
/// over its quotes and newlines up to the range's end). The ranges of a file
/// thus hold each of its records exactly once, as the CLI reads them.
fn read_spans(job: &BatchJob, inputs: &[Input]) -> (BatchState, Vec<InputError>, u64) {
    let q = job.format.quoting().expect("a format with quoted records");
    let mut state = job.new_state();
    let (mut errors, mut bytes) = (Vec::new(), 0);
    for (i, input) in inputs.iter().enumerate() {
        let (s, e) = input.span.unwrap_or((0, u64::MAX));
        let m = match map_file(input) {
            Ok(m) => m,
            Err(err) => {
                errors.push(InputError::io(&input.name, &err));
                continue;
            }
        };
        let clip = |x: u64| x.min(m.len() as u64) as usize;
        let start = q.record_start_from(&m, 0, clip(s));
        let end = q.record_start_from(&m, start, clip(e));
        let chunk = Chunk {
            input: i,
            offset: start as u64,
            data: &m[start..end],
        };
        job.process(&mut state, &chunk);
        bytes += (end - start) as u64;
    }
    (state, errors, bytes)
}

impl DisplayAs for ScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let cols: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        write!(
            f,
            "WfScan: format={}, inputs={}, columns=[{}]",
            self.table.format.name(),
            self.table.inputs.len(),
            cols.join(", ")
        )?;
        match &self.share {
            Some((sh, i)) => write!(f, ", shared: reader {} of {}", i + 1, sh.readers()),
            None => Ok(()),
        }
    }
}

impl ExecutionPlan for ScanExec {
    fn name(&self) -> &'static str {
        "WfScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let rx = self.receiver();
        let stream =
            futures::stream::unfold(
                rx,
                |rx| async move { rx.recv().await.ok().map(|b| (b, rx)) },
            );
        // Cooperative: each batch takes from tokio's task budget, so the task
        // reading this partition yields now and then. DataFusion wraps a leaf
        // that does not in a `CooperativeExec`, but not below an operator that
        // is cooperative itself (a repartition, a coalesce), and those read
        // their inputs on tasks of their own. Such a task never yielded while
        // the channel held batches, and a partition spawned into the same
        // tokio worker's LIFO slot (which no other worker may steal) then never
        // ran: in about one run in two of the Wide Finder 2 report as SQL, one
        // of the two workers had no CPU time until the scan ended (per-thread
        // times from /proc). Median 4.5 s to 3.7 s, 6 runs each.
        Ok(Box::pin(cooperative(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream.boxed(),
        ))))
    }
}
