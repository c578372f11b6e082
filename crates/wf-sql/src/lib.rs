//! `wf sql`: SQL over the user's own logs and delimited files.
//!
//! Apache DataFusion plans and runs the query (filters, GROUP BY, aggregates,
//! windows, joins, spilling within `--memory`); wf supplies the input side: each
//! table is a [`table::LogTable`], a thin adapter over [`wf_formats::read`]
//! (wf's scan engine feeding the format parsers on every core, building only
//! the columns the query uses). `output` prints or writes the result.
//! [`open`] starts a table's streams and decides its format without DataFusion:
//! the Python package's `read` goes from there to [`wf_formats::read`] itself.

/// The Arrow crate of DataFusion's batches (for the Python package).
pub use datafusion::arrow;

pub use wf_core::cleanup;
mod checked;
mod csv_text;
mod distinct_zero;
mod inner;
pub mod memory;
pub mod output;
mod share;
mod shared;
pub mod stream;
pub mod sum;
mod sum256;
pub mod table;
mod time;
mod time_order;

/// The scan job and a record's problems live with the reader now.
pub use wf_formats::read::{job, problem};

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::context::SQLOptions;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;

use wf_core::scan::decompress::Meter;
use wf_core::scan::{Input, InputError, Progress, ScanOptions, Source};
use wf_formats::read::job::InputRows;
use wf_formats::read::{self, OpenError};
use wf_formats::{FormatError, FormatOptions};

// `stream` takes its samples as a file's are taken.
pub use wf_formats::read::sample::strip_bom;
pub(crate) use wf_formats::read::sample::SampleEnd;

pub use output::Output;
pub use table::{LogTable, ScanReport};

/// One table of a query: its name, `--format` and inputs.
pub struct TableSpec {
    pub name: String,
    pub format: String,
    pub inputs: Vec<Input>,
}

impl TableSpec {
    /// `--table NAME=PATH`: the table's name and one of its paths.
    pub fn parse(s: &str) -> Result<(String, PathBuf), SqlError> {
        let (name, path) = s
            .split_once('=')
            .ok_or_else(|| SqlError::TableArg(s.to_string()))?;
        Ok((name.to_string(), path.into()))
    }
}

/// How to run a query.
#[derive(Debug, Clone, Default)]
pub struct SqlOptions {
    pub scan: ScanOptions,
    pub format: FormatOptions,
    /// Memory pool limit in bytes; beyond it, aggregations and sorts spill.
    pub memory: Option<u64>,
    /// Where spill files go (default: the system's temporary directory).
    pub temp_dir: Option<PathBuf>,
    /// Let the query write (COPY, INSERT, CREATE ... and SET); by default
    /// queries are read-only (DataFusion's `SQLOptions`).
    pub allow_write: bool,
    /// Malformed records are an error: [`run`] then writes no output at all.
    pub strict: bool,
    /// The time push-down's slack in microseconds (`--disorder`): how much
    /// earlier than one before it a record may be; `None`: 5 minutes.
    pub disorder: Option<i64>,
}

impl SqlOptions {
    /// Read-only queries with these scan and format options, no memory
    /// limit, spill files in the system's temporary directory.
    pub fn new(scan: ScanOptions, format: FormatOptions) -> Self {
        SqlOptions {
            scan,
            format,
            ..SqlOptions::default()
        }
    }
}

/// A table after the run: what was scanned and found.
pub struct TableRun {
    pub name: String,
    pub format: String,
    pub report: Arc<Mutex<ScanReport>>,
    /// Streams and compressed inputs that could not be opened, or whose
    /// reading failed part way (what was read of them is in the table).
    pub spool_errors: Vec<InputError>,
    /// The decoding of the table's compressed inputs.
    pub decoded: wf_core::scan::Decoded,
    scans: table::Scans,
    meter: Arc<Meter>,
    streams: Arc<stream::Streams>,
    /// What the time push-down did in each scan of the table.
    time_notes: inner::TimeNotes,
}

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// Bad arguments: stdin twice, an `-o` that is an input, the runtime.
    #[error("{0}")]
    Usage(String),
    /// A `--table` argument that is not NAME=PATH.
    #[error("--table {0}: expected NAME=PATH")]
    TableArg(String),
    /// An input whose sample could not be read (with its I/O error's kind).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A format that cannot be made: unknown format, bad `--schema`, headers.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// DataFusion's planning or execution error (with the columns when one is unknown).
    #[error("{0}")]
    Query(String),
    /// Writing the result failed.
    #[error("{0}")]
    Output(String),
    /// A statement that writes or changes the session, refused by default.
    #[error(
        "{0}: queries are read-only (wf sql --allow-write permits COPY, CREATE, \
         INSERT and SET; -o FILE writes the result)"
    )]
    ReadOnly(String),
}

impl From<OpenError> for SqlError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Input(e) => SqlError::Input(e),
            OpenError::Format(e) => SqlError::Format(e),
            e @ (OpenError::Column { .. } | OpenError::Repeated(_)) => {
                SqlError::Query(e.to_string())
            }
        }
    }
}

/// Run `query` over `tables`, sending the rows to `out`. Streams given as inputs
/// are sampled, then read by the query as they come, or copied to unlinked
/// temporary files first where a query reads them twice (see `sql::stream`);
/// `notes` receives what stderr should say (the formats chosen by `auto`).
/// An `-o` file that is one of the
/// inputs is refused before anything runs; under `opts.strict`, nothing is
/// printed or written when [`strict_failure`] finds malformed records (the
/// runs are returned for the caller to report).
pub fn run(
    query: &str,
    tables: Vec<TableSpec>,
    opts: &SqlOptions,
    out: &Output,
    progress: Option<Arc<Progress>>,
    notes: &mut dyn FnMut(String),
) -> Result<Vec<TableRun>, SqlError> {
    if let Output::File(target) = out {
        output::refuse_input(target, tables.iter().flat_map(|t| &t.inputs))
            .map_err(|e| SqlError::Usage(e.to_string()))?;
    }
    let sink = |schema| {
        let stdout = Box::new(std::io::BufWriter::with_capacity(
            1 << 16,
            output::Stdout::new(),
        ));
        output::sink(out, schema, stdout, opts.strict)
    };
    run_into(query, tables, opts, progress, notes, Box::new(sink)).map(|(runs, _)| runs)
}

/// The result of a query kept in memory (the Python package's Arrow tables).
pub struct Collected {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub runs: Vec<TableRun>,
}

/// Run `query` over `tables` like [`run`], keeping the result's batches.
pub fn collect(
    query: &str,
    tables: Vec<TableSpec>,
    opts: &SqlOptions,
    notes: &mut dyn FnMut(String),
) -> Result<Collected, SqlError> {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink = |_| Ok(Box::new(output::Memory(kept.clone())) as Box<dyn output::Sink>);
    let (runs, schema) = run_into(query, tables, opts, None, notes, Box::new(sink))?;
    let batches = std::mem::take(&mut *kept.lock().unwrap());
    Ok(Collected {
        schema,
        batches,
        runs,
    })
}

/// Makes the sink for a result of the given schema.
type MakeSink<'a> =
    dyn FnOnce(SchemaRef) -> Result<Box<dyn output::Sink>, output::OutputError> + 'a;

/// Register the tables, plan and run the query into the sink `make` gives for
/// the result's schema; returns the tables' runs and that schema.
fn run_into(
    query: &str,
    tables: Vec<TableSpec>,
    opts: &SqlOptions,
    progress: Option<Arc<Progress>>,
    notes: &mut dyn FnMut(String),
    make: Box<MakeSink<'_>>,
) -> Result<(Vec<TableRun>, SchemaRef), SqlError> {
    refuse_stdin_twice(&tables)?;
    let mut runs = Vec::new();
    let spill = cleanup::SpillDir::new(opts.temp_dir.as_deref())
        .map_err(|e| SqlError::Usage(format!("spill directory: {e}")))?;
    let ctx = context(opts, spill.path())?;
    for t in tables {
        let name = t.name.clone();
        let o = open(t, &opts.format, opts.scan.clone(), notes)?;
        let format = o.table.format().name();
        let disorder = opts.disorder.unwrap_or(time::DISORDER_US);
        let table = LogTable::new(o.table.with_progress(progress.clone()), disorder);
        runs.push(TableRun {
            name: name.clone(),
            format,
            report: table.report(),
            spool_errors: o.spool_errors,
            decoded: Default::default(),
            scans: table.scans(),
            meter: o.meter,
            streams: o.streams,
            time_notes: table.time_notes(),
        });
        ctx.register_table(name.as_str(), Arc::new(table))
            .map_err(|e| SqlError::Usage(e.to_string()))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.scan.threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| SqlError::Usage(format!("starting the query runtime: {e}")))?;
    let result = rt.block_on(execute(&ctx, query, opts.allow_write, make));
    // The plan is gone, and with it every batch channel's receiver: scans a
    // LIMIT left unfinished stop reading now. Their reports are in once they end.
    for r in &mut runs {
        r.scans.wait();
        r.decoded = r.meter.totals();
        r.spool_errors.extend(r.streams.take_errors());
    }
    let (schema, sink) = result.map_err(|e| memory_hint(e, opts))?;
    if !(opts.strict && strict_failure(&runs).is_some()) {
        sink.finish().map_err(|e| SqlError::Output(e.to_string()))?;
    }
    Ok((runs, schema))
}

/// A query that ran out of `--memory`: the error, and what to do about it.
fn memory_hint(e: SqlError, opts: &SqlOptions) -> SqlError {
    match (e, opts.memory) {
        (SqlError::Query(m), Some(limit)) if m.contains("Resources exhausted") => {
            let hint = memory::too_little(limit, opts.scan.threads.max(1));
            SqlError::Query(format!("{m}\n{hint}"))
        }
        (e, _) => e,
    }
}

/// Standard input can be read once: named for two tables, one would be empty.
fn refuse_stdin_twice(tables: &[TableSpec]) -> Result<(), SqlError> {
    let stdin = |t: &TableSpec| {
        t.inputs
            .iter()
            .any(|i| matches!(i.source, Source::Stream { path: None, .. }))
    };
    let named: Vec<&str> = tables
        .iter()
        .filter(|t| stdin(t))
        .map(|t| t.name.as_str())
        .collect();
    if named.len() > 1 {
        return Err(SqlError::Usage(format!(
            "standard input (-) is named for more than one table ({}): it can be read once",
            named.join(", ")
        )));
    }
    Ok(())
}

/// Why `--strict` fails the query: malformed records, with the first one's place.
pub fn strict_failure(runs: &[TableRun]) -> Option<String> {
    let mut n = 0;
    let mut first = None;
    for r in runs {
        let rep = r.report.lock().unwrap();
        n += rep.stats.malformed;
        if first.is_none() {
            first = rep.first_bad.first().cloned();
        }
    }
    match (n, first) {
        (0, _) => None,
        (n, Some((name, off))) => Some(format!(
            "{n} malformed lines (--strict; the first in {name} at byte {off}); nothing written"
        )),
        (n, None) => Some(format!("{n} malformed lines (--strict); nothing written")),
    }
}

/// A DataFusion session with wf's threads, batch size, memory limit, spill
/// directory, integer `sum` ([`sum::WideSum`]), integer arithmetic that
/// fails on overflow ([`checked`]) and DISTINCT aggregates that take `-0.0`
/// for `0.0` ([`distinct_zero`]).
fn context(opts: &SqlOptions, spill: &std::path::Path) -> Result<SessionContext, SqlError> {
    // DataFusion's own settings from `DATAFUSION_*` variables (for example
    // `DATAFUSION_EXECUTION_BATCH_SIZE`), as `datafusion-cli` reads them; `-j` wins.
    let config = SessionConfig::from_env()
        .map_err(|e| SqlError::Usage(format!("DATAFUSION_* settings: {e}")))?
        .with_target_partitions(opts.scan.threads.max(1))
        .with_information_schema(true);
    let mut rt = RuntimeEnvBuilder::new();
    if let Some(m) = opts.memory {
        rt = rt.with_memory_pool(Arc::new(memory::Pool::new(m as usize)));
    }
    rt = rt.with_temp_file_path(spill);
    let rt = rt.build_arc().map_err(|e| SqlError::Usage(e.to_string()))?;
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(rt)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(share::ShareScans))
        .with_analyzer_rule(Arc::new(checked::CheckedArithmetic::default()))
        .with_analyzer_rule(Arc::new(distinct_zero::DistinctZero))
        .build();
    let ctx = SessionContext::new_with_state(state);
    ctx.register_udaf(sum::WideSum::udaf());
    Ok(ctx)
}

/// What a query may do: read, unless `allow_write` (COPY, INSERT, CREATE
/// EXTERNAL TABLE and the like could write or read any file: issue 36).
pub fn sql_options(allow_write: bool) -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(allow_write)
        .with_allow_dml(allow_write)
        .with_allow_statements(allow_write)
}

/// Plan and run the query into a new sink, returned unfinished (nothing is
/// visible until the caller finishes it).
async fn execute(
    ctx: &SessionContext,
    query: &str,
    allow_write: bool,
    make: Box<MakeSink<'_>>,
) -> Result<(SchemaRef, Box<dyn output::Sink>), SqlError> {
    let plan = ctx
        .state()
        .create_logical_plan(query)
        .await
        .map_err(|e| query_error(ctx, e))?;
    sql_options(allow_write)
        .verify_plan(&plan)
        .map_err(|e| SqlError::ReadOnly(e.strip_backtrace()))?;
    let df = ctx
        .execute_logical_plan(plan)
        .await
        .map_err(|e| query_error(ctx, e))?;
    let schema = Arc::new(df.schema().as_arrow().clone());
    let mut sink = make(schema.clone()).map_err(|e| SqlError::Output(e.to_string()))?;
    let mut stream = df.execute_stream().await.map_err(|e| query_error(ctx, e))?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| query_error(ctx, e))?;
        sink.write(&batch)
            .map_err(|e| SqlError::Output(e.to_string()))?;
    }
    Ok((schema, sink))
}

/// DataFusion's message; for an unknown column, the tables' columns after it.
fn query_error(ctx: &SessionContext, e: datafusion::error::DataFusionError) -> SqlError {
    if let Some(r) = problem::record_error(&e) {
        return SqlError::Query(r.to_string());
    }
    let msg = e.to_string();
    let unknown = msg.contains("No field named") || msg.contains("not found");
    if !unknown || msg.contains("Valid fields are") {
        return SqlError::Query(msg);
    }
    let mut hint = String::new();
    for name in ctx.catalog_names() {
        let Some(cat) = ctx.catalog(&name) else {
            continue;
        };
        for sname in cat.schema_names() {
            let Some(schema) = cat.schema(&sname) else {
                continue;
            };
            for t in schema.table_names() {
                if let Some(cols) = table_columns(ctx, &t) {
                    hint.push_str(&format!("\ncolumns of {t}: {cols}"));
                }
            }
        }
    }
    SqlError::Query(msg + &hint)
}

fn table_columns(ctx: &SessionContext, t: &str) -> Option<String> {
    let provider = futures::executor::block_on(ctx.table_provider(t)).ok()?;
    let cols: Vec<String> = provider
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    Some(cols.join(", "))
}

/// A table opened for reading: its streams started and sampled, its format
/// decided; no query engine yet (the Python package's `read` takes
/// [`Opened::read`], `wf sql` registers [`Opened::table`] with DataFusion).
pub struct Opened {
    pub table: read::Table,
    /// Streams that could not be opened (they left the table).
    pub spool_errors: Vec<InputError>,
    meter: Arc<Meter>,
    streams: Arc<stream::Streams>,
}

/// Open table `t`: start reading its stream inputs (stdin, pipes, compressed
/// files) and take their samples (see [`stream`]), decide its format from
/// `--format` and a sample of its first input; `notes` hears the format
/// `auto` chose.
pub fn open(
    mut t: TableSpec,
    fopts: &FormatOptions,
    scan: ScanOptions,
    notes: &mut dyn FnMut(String),
) -> Result<Opened, SqlError> {
    let meter = Arc::new(Meter::default());
    let (mut opened, spool_errors) = open_streams(&mut t.inputs, &meter);
    let format_of = |opened: &[(usize, stream::Stream)]| {
        let samples: Vec<(usize, &[u8])> = opened.iter().map(|(i, s)| (*i, s.sample())).collect();
        // A first input that is a stream that ended while sampled: its
        // sample is all of it (a piped CSV's last record without a line
        // break typed its columns only when the sample was known whole).
        let ended = first_stream(&t.inputs, opened).is_some_and(|p| opened[p].1.ended());
        read::sample::format_of(&t.format, &t.inputs, &samples, &fopts.whole_if(ended))
    };
    let mut format = format_of(&opened)?;
    // A first input that is a stream is read on only when its sample left
    // a column untyped (a regular file is, in `format_of`).
    if read::sample::needs_wider_sample(format.as_ref()) {
        if let Some(k) = first_stream(&t.inputs, &opened) {
            opened[k].1.widen();
            format = format_of(&opened)?;
            // A sample ending inside a quoted field: read on until it closes.
            if let Some(delim) = format
                .as_csv()
                .filter(|c| c.open_at_end())
                .map(|c| c.delimiter())
            {
                if !opened[k].1.read_through(delim) {
                    // The stream ended: its sample is all of it.
                    let whole = fopts.whole_if(true);
                    let samples: Vec<(usize, &[u8])> =
                        opened.iter().map(|(i, s)| (*i, s.sample())).collect();
                    format = read::sample::format_of(&t.format, &t.inputs, &samples, &whole)?;
                } else {
                    format = format_of(&opened)?;
                }
            }
        }
    }
    let streams = Arc::new(stream::Streams::new(opened, format.quoting()));
    if t.format == "auto" {
        notes(format!("{}: format {} (detected)", t.name, format.name()));
    }
    let table = read::Table::new(format, t.inputs, scan)
        .with_strict(fopts.strict)
        .with_streams(Arc::new(Feeds(streams.clone())));
    Ok(Opened {
        table,
        spool_errors,
        meter,
        streams,
    })
}

/// A read of an [`Opened`] table (see [`Opened::read`]).
pub struct Reading {
    pub batches: read::Batches,
    spool_errors: Vec<InputError>,
    streams: Arc<stream::Streams>,
}

impl Opened {
    /// Read the `columns` named (every format column without them) in
    /// batches of `batch_rows` rows, through [`wf_formats::read`].
    pub fn read(self, columns: Option<&[String]>, batch_rows: usize) -> Result<Reading, SqlError> {
        let projection = self.table.projection(columns)?;
        let batches = read::read(Arc::new(self.table), projection, batch_rows);
        Ok(Reading {
            batches,
            spool_errors: self.spool_errors,
            streams: self.streams,
        })
    }
}

impl Reading {
    /// Stop reading (if not at the end), wait for the scan: what it found, and
    /// the input errors (the streams' first, as [`errors`] orders them).
    pub fn finish(self) -> (read::ScanReport, Vec<InputError>) {
        let report = self.batches.finish();
        let mut errors = self.spool_errors;
        errors.extend(self.streams.take_errors());
        errors.extend(report.errors.iter().cloned());
        (report, errors)
    }
}

/// A table's streams as `wf_formats::read` takes them: each pipe a scan
/// gets is fed by [`stream::Streams::feed`].
struct Feeds(Arc<stream::Streams>);

impl read::Streams for Feeds {
    fn resolve(&self, inputs: &[Input], direct: bool, sep: u8) -> read::Resolved {
        let r = self.0.resolve(inputs, direct, sep);
        let feeds = r
            .pipes
            .into_iter()
            .map(|p| {
                let (streams, on_fail) = (self.0.clone(), self.0.clone());
                let name = p.name().to_string();
                read::Feed {
                    feed: Box::new(move |stop| streams.feed(p, stop)),
                    failed: Box::new(move |e| on_fail.failed_to_feed(name, e)),
                }
            })
            .collect();
        read::Resolved {
            inputs: r.inputs,
            feeds,
            keep: r.keep,
        }
    }
}

/// The place in `opened` of the table's first input with data, if that is
/// a stream.
fn first_stream(inputs: &[Input], opened: &[(usize, stream::Stream)]) -> Option<usize> {
    for (k, inp) in inputs.iter().enumerate() {
        match opened.iter().position(|(i, _)| *i == k) {
            Some(p) if !opened[p].1.sample().is_empty() => return Some(p),
            Some(_) => {}
            None => match inp.source {
                Source::File { size: 0, .. } => {}
                _ => return None,
            },
        }
    }
    None
}

/// Start reading the stream inputs (stdin, pipes, compressed files) and take
/// their samples (see `sql::stream`): the streams by input index, and the
/// errors of those that could not be opened (which leave the table).
fn open_streams(
    inputs: &mut Vec<Input>,
    meter: &Arc<Meter>,
) -> (Vec<(usize, stream::Stream)>, Vec<InputError>) {
    let (mut opened, mut errors, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for inp in inputs.drain(..) {
        if matches!(inp.source, Source::File { .. }) {
            kept.push(inp);
            continue;
        }
        match stream::Stream::open(&inp, meter) {
            Ok(s) => {
                opened.push((kept.len(), s));
                kept.push(inp);
            }
            Err(e) => errors.push(e),
        }
    }
    *inputs = kept;
    (opened, errors)
}

/// The input errors, parse counts and serial files of all tables, for the CLI.
pub fn errors(runs: &[TableRun]) -> Vec<InputError> {
    runs.iter()
        .flat_map(|r| {
            let scanned = r.report.lock().unwrap().errors.clone();
            r.spool_errors.iter().cloned().chain(scanned)
        })
        .collect()
}

/// What to say on stderr, `--stats` or not, of a table read mostly wrong:
/// most lines malformed, or as many values not of their type as rows (a log
/// in another format than `--format`'s: a common log read as combined has
/// no row, a combined one read as common a NULL size in every row); more
/// briefly, of any line not a row or value read as NULL (an answer that
/// leaves out 2 of 5 TSV lines with stray quotes said nothing, exit 0); of
/// text that is not valid UTF-8, read with U+FFFD (said only under
/// `--stats` before, where DuckDB stops); of records with keys that are
/// not columns (JSON lines, logfmt), whose values no query reads; and of
/// columns renamed because their names were taken (`SELECT _line` of a
/// CSV with a `_line` column read wf's line numbers, nothing said).
/// A table none of whose lines read parsed ([`unread`]) is an error, not
/// one of these.
pub fn warnings(t: &TableRun) -> Vec<String> {
    let r = t.report.lock().unwrap();
    let (rows, bad, malformed) = (r.stats.rows, r.stats.bad_values, r.stats.malformed);
    let mut out = Vec::new();
    if rows > 0 && malformed >= rows {
        out.push(format!(
            "table {}: {malformed} of {} lines do not parse as {} and are not rows: \
             is that the files' format? (--format; --stats locates the first)",
            t.name,
            rows + malformed,
            t.format
        ));
    } else if malformed > 0 {
        // A few: the answer leaves them out, which DuckDB would not do
        // silently (it stops); one line, not one per record.
        out.push(format!(
            "table {}: {malformed} of {} lines do not parse as {} and are not rows \
             (--stats locates the first; --strict stops at one)",
            t.name,
            rows + malformed,
            t.format
        ));
    }
    for n in &r.renamed {
        out.push(format!("table {}: {n}", t.name));
    }
    let unknown = &r.stats.unknown;
    if unknown.records > 0 {
        let n = unknown.records;
        out.push(format!(
            "table {}: {n} {} keys that are not its columns ({}{}), whose values are not \
             read: the columns are the keys of the first records (up to 1000) of the first input; \
             --schema 'name:type,...' naming every key reads them",
            t.name,
            if n == 1 { "record has" } else { "records have" },
            unknown.names.join(", "),
            if unknown.more { ", ..." } else { "" },
        ));
    }
    let utf8 = r.stats.invalid_utf8;
    if utf8 > 0 {
        // Replaced, the answer may differ from the file's bytes (two
        // different bad sequences group as one): DuckDB stops; say it.
        let n = if utf8 == 1 { "value is" } else { "values are" };
        out.push(format!(
            "table {}: {utf8} text {n} not valid UTF-8, read with U+FFFD for each bad \
             sequence (--stats; --strict stops at the first)",
            t.name
        ));
    }
    if bad > 0 && bad >= rows {
        out.push(format!(
            "table {}: {bad} values in {rows} rows are not of their column's type (read as \
             NULL): is {} the files' format? (--format; --strict stops at the first)",
            t.name, t.format
        ));
    } else if bad > 0 {
        let (n, is) = match bad {
            1 => ("value", "is not of its column's type and is"),
            _ => ("values", "are not of their column's type and are"),
        };
        out.push(format!(
            "table {}: {bad} {n} in {rows} rows {is} read as NULL (--stats; --strict stops \
             at the first)",
            t.name
        ));
    }
    out
}

/// The errors of a table some of whose inputs had lines and none parsed in
/// its format, each named with its first such line's offset (or the table
/// of no row, if no input is known): the answer is still printed, but the
/// run fails (exit 2), as `wf report` fails on such a log and DuckDB stops
/// on a CSV file whose lines do not have its columns. `count(*) = 0` with
/// exit 0 was a wrong answer a script would take; so was a vhosts' log
/// beside a combined one, none of its lines a row, with one warning of the
/// table's total.
pub fn unread(t: &TableRun) -> Vec<InputError> {
    let r = t.report.lock().unwrap();
    let none = |n: u64, at: String| {
        format!(
            "table {}: none of {n} lines parse as {}{at}: is that the files' format? \
             (--format; --stats locates the first)",
            t.name, t.format
        )
    };
    let at = |off: u64| format!(" (the first at byte {off})");
    let unread = |(_, i): &&(String, InputRows)| i.rows == 0 && i.malformed > 0;
    let error = |(name, i): &(String, InputRows)| {
        InputError::new(name.clone(), none(i.malformed, at(i.first_malformed)))
    };
    let inputs: Vec<InputError> = r.inputs.iter().filter(unread).map(error).collect();
    let (rows, malformed) = (r.stats.rows, r.stats.malformed);
    if !inputs.is_empty() || rows > 0 || malformed == 0 {
        return inputs;
    }
    let (name, at) = match r.first_bad.first() {
        Some((name, off)) => (name.clone(), at(*off)),
        None => (format!("table {}", t.name), String::new()),
    };
    vec![InputError::new(name, none(malformed, at))]
}

/// `--stats` lines for one table.
pub fn stats_text(t: &TableRun) -> String {
    let r = t.report.lock().unwrap();
    let mut s = format!("table {} ({}):\n", t.name, t.format);
    s.push_str(&format!("  rows:           {}\n", r.stats.rows));
    s.push_str(&format!("  malformed lines: {}\n", r.stats.malformed));
    for (name, off) in &r.first_bad {
        s.push_str(&format!("    at {name}: byte {off}\n"));
    }
    for n in r.renamed.iter().chain(&r.notes) {
        s.push_str(&format!("  note: {n}\n"));
    }
    if r.stats.blank > 0 {
        s.push_str(&format!("  blank lines:    {}\n", r.stats.blank));
    }
    if r.stats.invalid_utf8 > 0 {
        s.push_str(&format!(
            "  invalid UTF-8 values (replaced): {}\n",
            r.stats.invalid_utf8
        ));
    }
    if r.stats.bad_values > 0 {
        s.push_str(&format!(
            "  values not of their column's type (NULL): {}\n",
            r.stats.bad_values
        ));
    }
    if r.stats.unknown.records > 0 {
        s.push_str(&format!(
            "  records with keys not columns (not read): {} ({})\n",
            r.stats.unknown.records,
            r.stats.unknown.names.join(", ")
        ));
    }
    for f in &r.serial_files {
        s.push_str(&format!("  read serially (quoted line breaks): {f}\n"));
    }
    for n in t.time_notes.lock().unwrap().iter() {
        let (span, size) = n.bytes();
        s.push_str(&format!(
            "  time push-down {}: {span} of {size} bytes of files in the spans (slack +/- {} s), \
             {} probed\n",
            n.bounds,
            n.disorder / 1_000_000,
            n.probed
        ));
        for (name, why) in &n.whole {
            s.push_str(&format!("    read whole and filtered: {name}: {why}\n"));
        }
    }
    if r.reported && !r.complete {
        s.push_str(&format!(
            "  the query stopped the scan early (LIMIT) after {} bytes: the counts above are of those\n",
            r.bytes
        ));
    }
    s
}

#[cfg(test)]
mod tests;
