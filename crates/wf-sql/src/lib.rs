//! `wf sql`: SQL over the user's own logs and delimited files.
//!
//! Apache DataFusion plans and runs the query (filters, GROUP BY, aggregates,
//! windows, joins, spilling within `--memory`); wf supplies the input side: each
//! table is a [`table::LogTable`] whose scan is wf's scan engine feeding the
//! format parsers of [`wf_formats`] on every core, building only the columns
//! the query uses. `output` prints or writes the result.

/// The Arrow crate of DataFusion's batches (for the Python package).
pub use datafusion::arrow;

pub mod cleanup;
pub mod job;
pub mod memory;
pub mod output;
pub mod problem;
mod share;
pub mod stream;
pub mod sum;
pub mod table;

use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::context::SQLOptions;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;

use wf_core::scan::{Input, InputError, Progress, ScanOptions, Source};
use wf_formats::{self, Format, FormatOptions};

pub use output::Output;
pub use table::{LogTable, ScanReport};

/// One table of a query: its name, `--format` and inputs.
pub struct TableSpec {
    pub name: String,
    pub format: String,
    pub inputs: Vec<Input>,
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
    meter: Arc<wf_core::scan::decompress::Meter>,
    streams: Arc<stream::Streams>,
}

/// Why a query failed.
#[derive(Debug)]
pub enum SqlError {
    /// Bad arguments: unknown format, unreadable sample, bad `--schema`.
    Usage(String),
    /// DataFusion's planning or execution error (with the columns when one is unknown).
    Query(String),
    /// Writing the result failed.
    Output(String),
    /// A statement that writes or changes the session, refused by default.
    ReadOnly(String),
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SqlError::Usage(m) | SqlError::Query(m) | SqlError::Output(m) => f.write_str(m),
            SqlError::ReadOnly(m) => write!(
                f,
                "{m}: queries are read-only (wf sql --allow-write permits COPY, CREATE, \
                 INSERT and SET; -o FILE writes the result)"
            ),
        }
    }
}

/// Bytes read from the start of the first input to detect a format or infer types.
const SAMPLE: usize = 256 << 10;
const MAX_SAMPLE: usize = 64 << 20;

/// A record without the UTF-8 byte order mark that may start a file (Excel's CSV).
pub fn strip_bom(r: &[u8]) -> &[u8] {
    r.strip_prefix(BOM).unwrap_or(r)
}

const BOM: &[u8] = b"\xef\xbb\xbf";

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
    for mut t in tables {
        let meter = Arc::new(wf_core::scan::decompress::Meter::default());
        let (opened, spool_errors) = open_streams(&mut t.inputs, &meter);
        let format = table_format(&t, &opened, &opts.format)?;
        let streams = Arc::new(stream::Streams::new(opened, format.quoting()));
        if t.format == "auto" {
            notes(format!("{}: format {} (detected)", t.name, format.name()));
        }
        let table = LogTable::new(
            format.clone(),
            t.inputs,
            opts.scan.clone(),
            progress.clone(),
        )
        .with_strict(opts.format.strict)
        .with_streams(streams.clone());
        runs.push(TableRun {
            name: t.name.clone(),
            format: format.name(),
            report: table.report(),
            spool_errors,
            decoded: Default::default(),
            scans: table.scans(),
            meter,
            streams,
        });
        ctx.register_table(t.name.as_str(), Arc::new(table))
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
/// directory and integer `sum` ([`sum::WideSum`]).
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

/// The format of a table: `--format` read against a sample of its first input
/// (`streams`: the samples of its streams, by input index).
fn table_format(
    t: &TableSpec,
    streams: &[(usize, stream::Stream)],
    fopts: &FormatOptions,
) -> Result<Arc<dyn Format>, SqlError> {
    let sample = |k: usize| -> Result<std::borrow::Cow<'_, [u8]>, String> {
        match streams.iter().find(|(i, _)| *i == k) {
            Some((_, s)) => Ok(s.sample().into()),
            None => read_sample(&t.inputs[k]).map(Into::into),
        }
    };
    // The first input with data: an empty first file says nothing of the format.
    let mut first = std::borrow::Cow::Borrowed(&[][..]);
    for (k, i) in t.inputs.iter().enumerate() {
        first = sample(k).map_err(|e| SqlError::Usage(format!("{}: {e}", i.name)))?;
        if !first.is_empty() {
            break;
        }
    }
    let format = wf_formats::from_spec(&t.format, fopts, &first)
        .map_err(|e| SqlError::Usage(e.to_string()))?;
    match format.as_csv() {
        Some(csv) if t.inputs.len() > 1 => {
            let mut samples = Vec::with_capacity(t.inputs.len());
            for (k, i) in t.inputs.iter().enumerate() {
                // An input that cannot be read is named by the scan.
                let s = sample(k).map(|s| s.into_owned()).unwrap_or_default();
                samples.push((i.name.clone(), s));
            }
            let by_name = csv
                .clone()
                .by_name(&samples)
                .map_err(|e| SqlError::Usage(e.to_string()))?;
            Ok(Arc::new(by_name))
        }
        _ => Ok(format),
    }
}

fn read_sample(i: &Input) -> Result<Vec<u8>, String> {
    let Source::File { path, size } = &i.source else {
        return Ok(Vec::new()); // streams are sampled by `sql::stream`
    };
    let mut f = std::fs::File::open(path).map_err(|e| wf_core::scan::io_message(&e))?;
    sample_of(&mut f, *size).map_err(|e| wf_core::scan::io_message(&e))
}

/// The sample of a reader: at least SAMPLE bytes, then on to the end of a
/// record (at most MAX_SAMPLE), so a long first record is sampled whole;
/// without a leading byte order mark. `size` (the input's, if known) sizes the
/// buffer for a long record at once.
///
/// Each byte is searched once and copied once: `buf[SAMPLE..searched]` holds
/// no newline (a search from SAMPLE after every read made a 64 MiB line
/// quadratic), and the reads go straight into the buffer (`read_to_end` in
/// steps of SAMPLE probed with small reads and grew the buffer by copying, and
/// the BOM was stripped by a copy of the whole sample: 60% of the CPU time of
/// `wf sql` over one 64 MiB line went to faulting in and copying those pages).
fn sample_of(r: &mut dyn Read, size: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(SAMPLE);
    let mut searched = SAMPLE;
    loop {
        if buf.len() >= SAMPLE {
            if buf.len() >= MAX_SAMPLE || memchr::memchr(b'\n', &buf[searched..]).is_some() {
                break;
            }
            searched = buf.len();
            let want = (size as usize).clamp(buf.len(), MAX_SAMPLE);
            buf.reserve_exact(want.saturating_sub(buf.capacity()));
        }
        if append(r, &mut buf, SAMPLE)? == 0 {
            break;
        }
    }
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok(buf)
}

/// Append up to `n` bytes of `r` to `buf` (fewer only at its end); returns
/// how many. Read into the buffer's spare room, which is not zeroed first.
fn append(r: &mut dyn Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<usize> {
    buf.reserve(n);
    r.take(n as u64).read_to_end(buf)
}

/// Start reading the stream inputs (stdin, pipes, compressed files) and take
/// their samples (see `sql::stream`): the streams by input index, and the
/// errors of those that could not be opened (which leave the table).
fn open_streams(
    inputs: &mut Vec<Input>,
    meter: &Arc<wf_core::scan::decompress::Meter>,
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

/// `--stats` lines for one table.
pub fn stats_text(t: &TableRun) -> String {
    let r = t.report.lock().unwrap();
    let mut s = format!("table {} ({}):\n", t.name, t.format);
    s.push_str(&format!("  rows:           {}\n", r.stats.rows));
    s.push_str(&format!("  malformed lines: {}\n", r.stats.malformed));
    for (name, off) in &r.first_bad {
        s.push_str(&format!("    at {name}: byte {off}\n"));
    }
    for n in &r.notes {
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
    for f in &r.serial_files {
        s.push_str(&format!("  read serially (quoted line breaks): {f}\n"));
    }
    if r.reported && !r.complete {
        s.push_str(&format!(
            "  the query stopped the scan early (LIMIT) after {} bytes: the counts above are of those\n",
            r.bytes
        ));
    }
    s
}
