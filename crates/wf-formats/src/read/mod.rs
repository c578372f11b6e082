//! `read`: a table's inputs in a format to Arrow batches of the columns asked
//! for, on every core, with no query engine.
//!
//! A [`Table`] is the format, the inputs and the scan options; [`read`] runs
//! one scan of it and gives its batches as an iterator, then what it found
//! ([`ScanReport`]: malformed records, input errors, bytes). `wf sql` is a
//! thin DataFusion table over the same parts (`wf_sql::table`: its partitions
//! read the channel [`scan`] fills; `wf_sql::share`: several readers of one
//! scan), and the Python package's `read` and `read_range` call [`read`]
//! itself, so reading a byte range starts no query engine. DataFusion keeps
//! its `FileOpener` (a file or range to a stream of batches) apart from its
//! plan node the same way, and Polars' CSV reader needs no engine either.
//!
//! The parts: [`job`] (the scan job: records to batches, the virtual columns
//! `_file`, `_offset`, `_line`, the parse counts), [`problem`] (a record that
//! stops a read, named), [`quote`] (CSV files whose quoted fields hold line
//! breaks, read whole), [`sample`] (the first bytes and the format they
//! decide). Streams (stdin, pipes, compressed files) are sampled and fed by
//! whoever opened them, through [`Streams`] (`wf_sql::stream`).

pub mod job;
pub mod problem;
pub mod quote;
pub mod sample;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::{Field as ArrowField, Schema, SchemaRef};
use wf_core::jobs::Job;
use wf_core::scan::{self, Input, InputError, Progress, ScanOptions, Source};

use crate::{Format, FormatError};
use job::{BatchJob, Out, ParseStats, Reader, Virtual, SHOW_BAD};
use problem::RecordError;

/// Why a read stopped part way (what its channels carry besides batches).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// A record that stops the read (see [`problem`]).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Arrow refused a batch (its columns do not fit the schema: a bug).
    #[error("{0}")]
    Batch(String),
}

impl ReadError {
    fn batch(e: arrow_schema::ArrowError) -> Self {
        ReadError::Batch(format!("Arrow error: {e}"))
    }
}

/// What a batch channel carries.
pub type BatchResult = Result<RecordBatch, ReadError>;

/// Why a table could not be opened for reading.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The input to sample could not be read (with its I/O error's kind).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The format cannot be made from `--format`, `--schema` or the sample.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A column asked for that the table does not have.
    #[error("no column named {name:?} (columns: {})", .columns.join(", "))]
    Column { name: String, columns: Vec<String> },
    /// A column asked for twice (a table's names are unique, as SQL's are).
    #[error("column {0:?} is asked for more than once")]
    Repeated(String),
}

/// What the scans of a table found, for `--stats`, `--strict` and the exit status.
#[derive(Debug, Default, Clone)]
pub struct ScanReport {
    pub errors: Vec<InputError>,
    pub stats: ParseStats,
    /// The first malformed records: input name and byte offset.
    pub first_bad: Vec<(String, u64)>,
    /// Per input name, in the order first read: its rows and malformed lines.
    pub inputs: Vec<(String, job::InputRows)>,
    /// Bytes handed to the parsers.
    pub bytes: u64,
    /// Files read whole and serially because quoted fields hold line breaks.
    pub serial_files: Vec<String>,
    /// What `--stats` says of the table's columns (renamed ones, types chosen
    /// so that no digit is lost).
    pub notes: Vec<String>,
    /// Columns renamed because their names were taken (a header's name
    /// used twice, or a virtual column's: `SELECT _line` of a CSV with a
    /// `_line` column read wf's line numbers), said on stderr `--stats` or
    /// not (`wf_sql::warnings`).
    pub renamed: Vec<String>,
    /// Some scan reported: `complete` says whether it read every record.
    pub reported: bool,
    pub complete: bool,
}

impl ScanReport {
    /// Records that did not parse (not rows).
    pub fn malformed(&self) -> u64 {
        self.stats.malformed
    }

    /// Inputs that could not be read, or whose reading failed part way.
    pub fn errors(&self) -> &[InputError] {
        &self.errors
    }

    /// Bytes handed to the parsers.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The stream inputs of a table, sampled already: how one scan reads them.
pub trait Streams: Send + Sync {
    /// The inputs of one scan: each stream handed to it through a pipe
    /// (`direct`: only one scan reads the table) or read from a copy.
    fn resolve(&self, inputs: &[Input], direct: bool, sep: u8) -> Resolved;
}

/// A table without stream inputs.
#[derive(Debug, Default)]
pub struct NoStreams;

impl Streams for NoStreams {
    fn resolve(&self, inputs: &[Input], _direct: bool, _sep: u8) -> Resolved {
        Resolved {
            inputs: inputs.to_vec(),
            ..Resolved::default()
        }
    }
}

/// The inputs of one scan, with the pipes to feed while it runs and the read
/// ends to close once it is done (so a feeder blocked on a full pipe ends).
#[derive(Default)]
pub struct Resolved {
    pub inputs: Vec<Input>,
    pub feeds: Vec<Feed>,
    pub keep: Vec<std::fs::File>,
}

/// Says when a feeder is to stop: the scan ended or its reader left.
pub type Stop<'a> = &'a dyn Fn() -> bool;

/// One pipe to feed during a scan: `feed` runs on a thread of its own until
/// its stream ends or the `stop` it is given says stop; `failed` is called
/// instead when no thread could be started.
pub struct Feed {
    pub feed: Box<dyn FnOnce(Stop<'_>) + Send>,
    pub failed: Box<dyn FnOnce(&std::io::Error) + Send>,
}

/// A table: inputs, their format, and how to scan them.
pub struct Table {
    format: Arc<dyn Format>,
    inputs: Vec<Input>,
    opts: ScanOptions,
    schema: SchemaRef,
    progress: Option<Arc<Progress>>,
    report: Arc<Mutex<ScanReport>>,
    /// `--strict`: every problem stops the read (see [`problem`]).
    strict: bool,
    streams: Arc<dyn Streams>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, n) = (self.format.name(), self.inputs.len());
        write!(f, "{name} over {n} inputs")
    }
}

impl Table {
    /// The table's columns are the format's, then `_file`, `_offset`, `_line`
    /// ([`Virtual`]).
    pub fn new(format: Arc<dyn Format>, inputs: Vec<Input>, opts: ScanOptions) -> Self {
        // A name used twice, or one of the virtual columns', would make the
        // table unqueryable: renamed as DuckDB does (`a`, `a_1`), and said
        // (a CSV header's names are renamed by the format, and said there).
        let names = crate::csv::unique_names(
            format.fields().iter().map(|f| f.name.clone()),
            &crate::VIRTUAL_NAMES,
        );
        let (mut fields, mut renamed) = (Vec::new(), format.renamed());
        for (f, name) in format.fields().iter().zip(names) {
            if name != f.name {
                renamed.push(format!(
                    "column {:?} is named {name:?} (its name was taken)",
                    f.name
                ));
            }
            fields.push(ArrowField::new(name, f.kind.data_type(), true));
        }
        for (name, _, kind) in Virtual::ALL {
            fields.push(ArrowField::new(name, kind.data_type(), true));
        }
        let report = ScanReport {
            notes: format.notes(),
            renamed,
            ..ScanReport::default()
        };
        Table {
            format,
            inputs,
            opts,
            schema: Arc::new(Schema::new(fields)),
            progress: None,
            report: Arc::new(Mutex::new(report)),
            strict: false,
            streams: Arc::new(NoStreams),
        }
    }

    /// Make every malformed record, value not of its column's type and invalid
    /// UTF-8 stop the reads of this table (`--strict`).
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The counters of a progress display.
    pub fn with_progress(mut self, progress: Option<Arc<Progress>>) -> Self {
        self.progress = progress;
        self
    }

    /// The table's stream inputs (`inputs` holds their sources as given).
    pub fn with_streams(mut self, streams: Arc<dyn Streams>) -> Self {
        self.streams = streams;
        self
    }

    /// The same table over `inputs` (the same inputs with byte spans: `wf
    /// sql`'s time push-down), sharing its report.
    pub fn with_inputs(&self, inputs: Vec<Input>) -> Table {
        Table {
            format: self.format.clone(),
            inputs,
            opts: self.opts.clone(),
            schema: self.schema.clone(),
            progress: self.progress.clone(),
            report: self.report.clone(),
            strict: self.strict,
            streams: self.streams.clone(),
        }
    }

    pub fn format(&self) -> &Arc<dyn Format> {
        &self.format
    }

    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    pub fn options(&self) -> &ScanOptions {
        &self.opts
    }

    /// The format's columns, then the virtual ones.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// What the scans of this table found (complete once they ended).
    pub fn report(&self) -> Arc<Mutex<ScanReport>> {
        self.report.clone()
    }

    /// The columns named (in that order), or every format column.
    pub fn projection(&self, names: Option<&[String]>) -> Result<Vec<usize>, OpenError> {
        let Some(names) = names else {
            return Ok((0..self.format.fields().len()).collect());
        };
        let index = |n: &String| {
            self.schema.index_of(n).map_err(|_| OpenError::Column {
                name: n.clone(),
                columns: self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect(),
            })
        };
        let mut seen = names.iter().enumerate();
        if let Some((_, n)) = seen.find(|(k, n)| names[..*k].contains(n)) {
            return Err(OpenError::Repeated(n.clone()));
        }
        names.iter().map(index).collect()
    }
}

/// Rows per batch [`read`] is asked for by the Python package: four of
/// DataFusion's default batches, what `wf sql`'s scan hands it (see
/// `wf_sql::table`).
pub const BATCH_ROWS: usize = 4 * 8192;

/// Batches a reader's channel holds: two per thread, the back-pressure that
/// keeps parsing from running far ahead of the reader.
pub fn channel_bound(table: &Table) -> usize {
    2 * table.opts.threads.max(1)
}

/// One scan of `table` on this thread: batches of the `projection`'s columns
/// (indices into [`Table::schema`]) of `batch_rows` rows to every reader,
/// then the report into the table's. `direct`: the only scan of the table,
/// which may read its streams as they come (CSV streams too: their blocks
/// are cut at record ends, see `quote::CsvEnds`).
pub fn scan(
    table: &Table,
    projection: &[usize],
    batch_rows: usize,
    readers: Vec<Reader>,
    direct: bool,
) {
    let resolved = table
        .streams
        .resolve(&table.inputs, direct, table.format.separator());
    let jobs = scan_jobs(table, &resolved.inputs, projection, batch_rows, readers);
    run_scans(table, jobs, resolved);
}

/// A read of one table: its batches in the order the workers make them
/// (rows in the order of the inputs only at `threads == 1`), ending at the
/// end of the inputs or after the first [`ReadError`]; then
/// [`Batches::finish`] for what the scan found.
pub struct Batches {
    rx: Option<async_channel::Receiver<BatchResult>>,
    scan: Option<std::thread::JoinHandle<()>>,
    schema: SchemaRef,
    table: Arc<Table>,
}

/// Read the `projection`'s columns (indices into [`Table::schema`], see
/// [`Table::projection`]) of `table` in batches of at most `batch_rows`
/// rows; the scan runs on threads of its own while the batches are taken.
pub fn read(table: Arc<Table>, projection: Vec<usize>, batch_rows: usize) -> Batches {
    let schema = Arc::new(table.schema.project(&projection).expect("valid projection"));
    let (tx, rx) = async_channel::bounded(channel_bound(&table));
    let readers = vec![Reader {
        tx,
        cols: None,
        schema: schema.clone(),
    }];
    let t = table.clone();
    let h = std::thread::Builder::new()
        .name("wf-read".into())
        .spawn(move || scan(&t, &projection, batch_rows.max(1), readers, true))
        .expect("starting a scan thread");
    Batches {
        rx: Some(rx),
        scan: Some(h),
        schema,
        table,
    }
}

impl Iterator for Batches {
    type Item = BatchResult;

    /// The next batch; after an error, none (the rows a stopped scan still
    /// sends are not of a complete read).
    fn next(&mut self) -> Option<BatchResult> {
        let b = self.rx.as_ref()?.recv_blocking().ok()?;
        if b.is_err() {
            self.rx = None;
        }
        Some(b)
    }
}

impl Batches {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Stop reading (if the batches were not all taken) and wait for the
    /// scan: what it found.
    pub fn finish(mut self) -> ScanReport {
        self.stop();
        self.table.report.lock().unwrap().clone()
    }

    fn stop(&mut self) {
        // With the receiver gone, the scan reads no further.
        self.rx = None;
        if let Some(h) = self.scan.take() {
            if let Err(p) = h.join() {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(p);
                }
            }
        }
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The jobs of a scan of `projection` (table columns) for `readers`: one per
/// way of cutting records, inputs cut at separators on every core, and CSV
/// files whose quoted fields hold line breaks, read whole.
fn scan_jobs(
    t: &Table,
    inputs: &[Input],
    projection: &[usize],
    batch_rows: usize,
    readers: Vec<Reader>,
) -> Vec<(BatchJob, Vec<Input>)> {
    let flags = match t.format.quoting() {
        Some(q) => quote::quoted_files(inputs, &t.opts, q),
        None => vec![false; inputs.len()],
    };
    // Table input indices: the plain ones, the quoted ones, byte ranges of
    // quoted ones (read apart, see `quote::read_spans`).
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
        if !idx.is_empty() {
            let mine: Vec<Input> = idx.iter().map(|&i| inputs[i].clone()).collect();
            let cut = Cut {
                inputs: &mine,
                idx: &idx,
                quoted: g > 0,
            };
            let job = job(t, cut, projection, batch_rows, readers.clone());
            out.push((job, mine));
        }
    }
    out
}

/// The inputs of one job (`idx`: their indices in the table) and how their
/// records are cut.
struct Cut<'a> {
    inputs: &'a [Input],
    idx: &'a [usize],
    quoted: bool,
}

fn job(
    t: &Table,
    cut: Cut<'_>,
    projection: &[usize],
    batch_rows: usize,
    readers: Vec<Reader>,
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
        names: Arc::new(cut.inputs.iter().map(Input::path_text).collect()),
        layouts: cut.idx.iter().map(|&i| t.format.layout_of(i)).collect(),
        inputs: Arc::new(cut.inputs.to_vec()),
        heads: cut.inputs.iter().map(|_| Default::default()).collect(),
        strict: t.strict,
        failed: Default::default(),
        quoted: cut.quoted,
        max_record: t.opts.max_record,
        ascii_boundaries: t.format.ascii_boundaries(),
        batch_rows,
        readers,
    }
}

/// Run the scans, record what they found, then close the channel (by dropping
/// the jobs, which hold its senders, after the report is in). The streams
/// `resolved` hands over are fed into their pipes meanwhile, each on a thread
/// that stops once the reader needs no more (see `wf_sql::stream`).
fn run_scans(table: &Table, scans: Vec<(BatchJob, Vec<Input>)>, resolved: Resolved) {
    let mut mine = ScanReport {
        reported: true,
        complete: true,
        ..ScanReport::default()
    };
    let done = AtomicBool::new(false);
    let stop = || done.load(Ordering::Relaxed) || scans.iter().any(|(j, _)| j.stopped());
    std::thread::scope(|s| {
        for Feed { feed, failed } in resolved.feeds {
            let stop = &stop;
            let fed = std::thread::Builder::new()
                .name("wf-sql-pipe".into())
                .spawn_scoped(s, move || feed(stop));
            if let Err(e) = fed {
                // The pipe was dropped with the closure: its scan sees an end.
                failed(&e);
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
        mine.renamed = std::mem::take(&mut r.renamed);
        *r = mine;
    }
    drop(r);
    drop(scans);
}

/// Run one scan job over its inputs; add what it found to `mine`.
fn scan_one(table: &Table, job: &BatchJob, inputs: &[Input], mine: &mut ScanReport) {
    let opts = job_options(table, job, inputs);
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let (mut state, errors, bytes) = if job.quoted && inputs[0].span.is_some() {
        quote::read_spans(job, inputs)
    } else {
        let out = scan::run(job, inputs.to_vec(), &opts, table.progress.as_deref());
        (out.state, out.errors, out.bytes)
    };
    job.flush(&mut state);
    mine.complete &= !job.stopped();
    mine.errors.extend(errors);
    let limit = usize::try_from(job.max_record).unwrap_or(usize::MAX);
    for (i, e) in scan::too_long_errors(std::mem::take(&mut state.long), limit) {
        mine.errors.push(InputError {
            name: names[i].clone(),
            ..e
        });
    }
    mine.bytes += bytes;
    let mut stats = state.stats;
    // Name the malformed records' inputs from this scan's own input list.
    for (i, off) in std::mem::take(&mut stats.first_bad) {
        mine.first_bad.push((names[i].clone(), off));
    }
    for (i, rows) in std::mem::take(&mut stats.inputs).into_iter().enumerate() {
        match mine.inputs.iter_mut().find(|(n, _)| *n == names[i]) {
            Some((_, r)) => r.plus(rows),
            None => mine.inputs.push((names[i].clone(), rows)),
        }
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

/// The scan options of one job: the table's, with its format's separator,
/// streams read as they come, and whole files where records must be cut
/// quote-aware or lines counted.
fn job_options(table: &Table, job: &BatchJob, inputs: &[Input]) -> ScanOptions {
    let mut opts = table.opts.clone();
    opts.sep = table.format.separator();
    // Streams here are the pipes of `wf_sql::stream`: records as they come.
    opts.eager_streams = true;
    if job.quoted {
        opts.chunk_size = u64::MAX;
        opts.mmap = true;
        let q = job.format.quoting().expect("a format with quoted records");
        opts.record_ends = Some(Arc::new(quote::CsvEnds(q)));
        // Files mapped whole have their records cut by the job, which skips
        // one longer than `--max-record` (`quoted_records`): the scan's
        // check at line breaks refused one long line of a quoted record,
        // and the record's other lines were read as records.
        if inputs
            .iter()
            .all(|i| matches!(i.source, Source::File { .. }))
        {
            opts.max_record = u64::MAX;
        }
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
    opts
}

#[cfg(test)]
mod tests;
