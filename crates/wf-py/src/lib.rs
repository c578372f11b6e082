//! widefinder's Python module (`widefinder._native`): conversion only.
//!
//! Every function turns Python arguments into the `wf` library's inputs and
//! options, calls the same scan, jobs, formats and SQL as the CLI with the GIL
//! released, and turns the result into Python values: the CLI's own JSON text
//! for the built-in jobs (so the answers are the CLI's, byte for byte), Arrow
//! tables through the Arrow C data interface for SQL and the parsers (no copy
//! of the columns), and `bytes` for partial states (`wf_core::jobs::partial`).
//! `read` and `read_range` go through `wf_formats::read` (no SQL, no query
//! engine started); `sql` through `wf_sql`. The
//! Python API, its defaults and its documentation are in
//! `python/widefinder/__init__.py`; `widefinder.dask` builds on it.
//!
//! A byte range of a file is an input with a span (`wf_core::scan::Input::span`):
//! the engine cuts it into chunks like the whole file, so a range owns exactly
//! the records that start in it. Bytes given instead of a path go into a
//! `memfd` and are read as a file, through the same engine.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::PathBuf;

use std::sync::Arc;

use arrow_pyarrow::{IntoPyArrow, Table};
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyUserWarning, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use wf_sql::arrow::compute::cast;
use wf_sql::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use wf_sql::arrow::error::ArrowError;
use wf_sql::arrow::record_batch::{RecordBatch, RecordBatchOptions};

use wf_core::jobs::count::Count;
use wf_core::jobs::pangram::{Mode, Pangram};
use wf_core::jobs::partial::{self, Partial};
use wf_core::jobs::wf2::Wf2;
use wf_core::jobs::Job;
use wf_core::scan::{
    self, Input, InputError, InputSpec, Outcome, ScanOptions, ScanSettings, Source,
};
use wf_formats::read::{ReadError, BATCH_ROWS};
use wf_formats::FormatOptions;
use wf_sql::{SqlError, SqlOptions, TableSpec};

mod report;

fn value_error(e: impl ToString) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Scan options: all cores unless `threads` says otherwise, through the
/// settings' front door, which reads and checks them as for the CLI: 0
/// threads is every core, as `-j 0` is (it was 1 here), and a chunk size of
/// 0 a `ValueError`, as `--chunk-size 0` is refused (it was 1 byte here).
fn scan_options(threads: Option<usize>, chunk_size: Option<u64>) -> PyResult<ScanOptions> {
    scan_options_within(threads, chunk_size, None)
}

/// [`scan_options`] of a call given `memory`, which bounds the records held
/// whole (a quarter of it at most), as `--memory` does for the CLI.
fn scan_options_within(
    threads: Option<usize>,
    chunk_size: Option<u64>,
    memory: Option<u64>,
) -> PyResult<ScanOptions> {
    let settings = ScanSettings {
        threads,
        chunk_size,
        memory,
        ..ScanSettings::default()
    };
    settings.options().map_err(value_error)
}

/// The `OSError` of an I/O error kind: `FileNotFoundError` for a missing
/// file, `PermissionError` for an unreadable one, else `OSError` itself.
fn os_error(kind: Option<std::io::ErrorKind>, msg: String) -> PyErr {
    match kind {
        Some(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(msg),
        Some(std::io::ErrorKind::PermissionDenied) => PyPermissionError::new_err(msg),
        _ => PyOSError::new_err(msg),
    }
}

/// A failed query or read: `OSError` (see [`os_error`]) for an input that
/// could not be read, `ValueError` for the rest.
fn sql_error(e: SqlError) -> PyErr {
    match e {
        SqlError::Input(i) => os_error(i.kind, i.to_string()),
        e => value_error(e),
    }
}

/// Input errors as one exception, of the first one's kind (see [`os_error`]);
/// none is fine.
fn raise_input_errors(errors: &[InputError]) -> PyResult<()> {
    let Some(first) = errors.first() else {
        return Ok(());
    };
    let msg: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    Err(os_error(first.kind, msg.join("; ")))
}

/// A failure to read windows' text back after a pangram scan.
fn windows_error(e: std::io::Error) -> PyErr {
    os_error(Some(e.kind()), format!("reading windows back: {e}"))
}

/// The inputs, as the CLI collects them (directories walked, compression
/// detected); any path that cannot be used raises.
fn collect(paths: Vec<PathBuf>) -> PyResult<Vec<Input>> {
    if paths.is_empty() {
        return Err(value_error("no paths given"));
    }
    let c = InputSpec {
        paths,
        ..InputSpec::default()
    }
    .collect();
    raise_input_errors(&c.errors)?;
    Ok(c.inputs)
}

/// Run `job` over `inputs` without the GIL; input errors raise.
fn run<J: Job>(
    py: Python<'_>,
    job: &J,
    inputs: Vec<Input>,
    opts: &ScanOptions,
) -> PyResult<Outcome<J::State>>
where
    J::State: Send,
{
    let out = py.detach(|| scan::run(job, inputs, opts, None));
    raise_input_errors(&out.errors)?;
    Ok(out)
}

/// A file given by path, or bytes (the whole file from offset 0) kept in a
/// memfd while it is read; with a span unless the range is the whole file.
struct Ranged {
    input: Input,
    _memfd: Option<File>,
}

fn ranged(source: &Bound<'_, PyAny>, start: u64, end: Option<u64>) -> PyResult<Ranged> {
    let span = (start != 0 || end.is_some()).then(|| (start, end.unwrap_or(u64::MAX)));
    if let Ok(b) = source.cast::<PyBytes>() {
        let data = b.as_bytes();
        let f = memfd_with(data)?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
        let size = data.len() as u64;
        // Compressed bytes are decoded, as a compressed file is (by magic).
        let head = &data[..data.len().min(scan::decompress::MAGIC_LEN)];
        let source = match scan::decompress::detect(head) {
            None => Source::File { path, size },
            Some(codec) => Source::Compressed { path, size, codec },
        };
        let input = Input {
            name: "<bytes>".into(),
            source,
            span,
        };
        whole_if_compressed(&input)?;
        return Ok(Ranged {
            input,
            _memfd: Some(f),
        });
    }
    let path: PathBuf = source.extract()?;
    let mut inputs = collect(vec![path.clone()])?;
    if inputs.len() != 1
        || !matches!(
            inputs[0].source,
            Source::File { .. } | Source::Compressed { .. }
        )
    {
        return Err(value_error(format!(
            "{}: not one regular file",
            path.display()
        )));
    }
    let mut input = inputs.remove(0);
    input.span = span;
    whole_if_compressed(&input)?;
    Ok(Ranged {
        input,
        _memfd: None,
    })
}

/// A compressed input can only be read whole.
fn whole_if_compressed(input: &Input) -> PyResult<()> {
    if input.span.is_some() && !matches!(input.source, Source::File { .. }) {
        return Err(value_error(format!(
            "{}: a compressed file is read whole (start=0, end=None): it cannot be cut at byte offsets",
            input.name
        )));
    }
    Ok(())
}

fn memfd_with(data: &[u8]) -> PyResult<File> {
    // SAFETY: a valid C string and flags; the descriptor is owned by the File.
    let fd = unsafe { libc::memfd_create(c"widefinder-bytes".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(data)?;
    Ok(f)
}

/// `wf count --json` over `paths`.
#[pyfunction]
#[pyo3(signature = (paths, threads=None, chunk_size=None))]
fn count(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<usize>,
    chunk_size: Option<u64>,
) -> PyResult<String> {
    let out = run(
        py,
        &Count { sep: b'\n' },
        collect(paths)?,
        &scan_options(threads, chunk_size)?,
    )?;
    Ok(wf_core::report::count::json(&out.state, out.files))
}

/// `wf wf2 --json --top N` over `paths`.
#[pyfunction]
#[pyo3(signature = (paths, top=10, threads=None, chunk_size=None))]
fn wf2(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    top: usize,
    threads: Option<usize>,
    chunk_size: Option<u64>,
) -> PyResult<String> {
    let out = run(
        py,
        &Wf2,
        collect(paths)?,
        &scan_options(threads, chunk_size)?,
    )?;
    let report = py.detach(|| Wf2.finish(out.state, top));
    Ok(wf_core::report::wf2::json(&report))
}

/// The pangram job of these settings; `max_letters` needs `all`, as the
/// CLI's --max-letters needs --all (it was ignored without a word).
fn pangram_job(top: usize, all: bool, max_letters: Option<u64>) -> PyResult<Pangram> {
    let mode = match (all, max_letters) {
        (true, _) => Mode::All { max_letters },
        (false, None) => Mode::Top(top),
        (false, Some(_)) => return Err(value_error("max_letters needs all=True")),
    };
    Ok(Pangram { mode })
}

/// The lines of `wf pangram --json` over `paths`.
#[pyfunction]
#[pyo3(signature = (paths, top=10, all=false, max_letters=None, threads=None, chunk_size=None))]
fn pangram(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    top: usize,
    all: bool,
    max_letters: Option<u64>,
    threads: Option<usize>,
    chunk_size: Option<u64>,
) -> PyResult<Vec<String>> {
    let job = pangram_job(top, all, max_letters)?;
    let mut opts = scan_options(threads, chunk_size)?;
    opts.spool_streams = true; // window text is read back after the scan
    let out = run(py, &job, collect(paths)?, &opts)?;
    let (state, rest) = out.into_parts();
    let windows = py
        .detach(|| job.finish(state, &mut |i, off, len| rest.read_range(i, off, len)))
        .map_err(windows_error)?;
    let names = rest.inputs();
    Ok(windows
        .iter()
        .map(|w| wf_core::report::pangram::json_line(w, scan::input_path_bytes(&names[w.input])))
        .collect())
}

/// Format options as `wf sql` takes them.
fn sql_options(
    scan: ScanOptions,
    memory: Option<u64>,
    delimiter: Option<String>,
    no_header: bool,
    schema: Option<String>,
) -> PyResult<SqlOptions> {
    let format = FormatOptions::parse(delimiter.as_deref(), no_header, schema.as_deref(), false)
        .map_err(value_error)?;
    // Read-only queries (COPY, CREATE, INSERT refused): `wf_sql` checks
    // them with `wf_sql::sql_options`, as for the CLI.
    Ok(SqlOptions {
        memory,
        ..SqlOptions::new(scan, format)
    })
}

/// Run a query and return its result as a `pyarrow.Table`. Input errors
/// raise OSError; a table none of whose lines parse, ValueError; with
/// `strict`, so do malformed records (ValueError).
fn query_table<'py>(
    py: Python<'py>,
    query: &str,
    tables: Vec<TableSpec>,
    opts: &SqlOptions,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    // A failed query is a ValueError; an input whose sample could not be
    // read, an OSError of its kind.
    let c = py
        .detach(|| wf_sql::collect(query, tables, opts, &mut |_| {}))
        .map_err(sql_error)?;
    raise_input_errors(&wf_sql::errors(&c.runs))?;
    // A table none of whose lines parse: `wf sql` exits 2, this raises.
    if let Some(e) = c.runs.iter().flat_map(wf_sql::unread).next() {
        return Err(value_error(e.to_string()));
    }
    // What `wf sql` says on stderr (lines not rows, keys not read) is a
    // UserWarning here, which a warnings filter can make an error; it went
    // unsaid. Level 2: the user's call, not the package's wrapper.
    for w in c.runs.iter().flat_map(wf_sql::warnings) {
        let text = std::ffi::CString::new(w.replace('\0', "\\0")).map_err(value_error)?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &text, 2)?;
    }
    let malformed: u64 = c
        .runs
        .iter()
        .map(|r| r.report.lock().unwrap().stats.malformed)
        .sum();
    if strict && malformed > 0 {
        return Err(value_error(format!(
            "{malformed} malformed records (strict)"
        )));
    }
    to_pyarrow(py, c.schema, c.batches)
}

/// Batches as a `pyarrow.Table` (see [`plain_strings`]).
fn to_pyarrow<'py>(
    py: Python<'py>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyAny>> {
    let schema = batches.first().map(|b| b.schema()).unwrap_or(schema);
    let (schema, batches) = plain_strings(schema, batches).map_err(value_error)?;
    Table::try_new(batches, schema)
        .map_err(value_error)?
        .into_pyarrow(py)
}

/// What a read gave: the schema, the batches until the first error, that
/// error, the input errors and the columns renamed.
type Read = (
    SchemaRef,
    Vec<RecordBatch>,
    Option<ReadError>,
    Vec<InputError>,
    Vec<String>,
);

/// Read the `columns` of one table through `wf_formats::read` (no SQL, no
/// query engine) as a `pyarrow.Table`; raises as [`query_table`] does.
fn read_table<'py>(
    py: Python<'py>,
    table: TableSpec,
    columns: Option<Vec<String>>,
    opts: &SqlOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let read = || -> Result<Read, SqlError> {
        let opened = wf_sql::open(table, &opts.format, opts.scan.clone(), &mut |_| {})?;
        let mut r = opened.read(columns.as_deref(), BATCH_ROWS)?;
        let schema = r.batches.schema();
        let (mut batches, mut failed) = (Vec::new(), None);
        for b in &mut r.batches {
            match b {
                Ok(b) => batches.push(b),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let (report, errors) = r.finish();
        Ok((schema, batches, failed, errors, report.renamed))
    };
    let (schema, batches, failed, errors, renamed) = py.detach(read).map_err(sql_error)?;
    if let Some(e) = failed {
        return Err(value_error(e));
    }
    raise_input_errors(&errors)?;
    // A column renamed (a CSV header's `_line`), as `sql` warns of it.
    for n in renamed {
        let text = std::ffi::CString::new(n.replace('\0', "\\0")).map_err(value_error)?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &text, 2)?;
    }
    to_pyarrow(py, schema, batches)
}

/// Text columns as Arrow `string` instead of `string_view`: the scan builds
/// views (they point into its buffers and measured faster for DataFusion), but
/// pyarrow 26 cannot sort, take or filter views, so Python gets plain strings
/// (one copy of the text, here rather than in every user's first `cast`).
fn plain_strings(
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8View => f.as_ref().clone().with_data_type(DataType::Utf8),
            _ => f.as_ref().clone(),
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let batches = batches
        .into_iter()
        .map(|b| {
            let cols = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| cast(c, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            let opts = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
            RecordBatch::try_new_with_options(schema.clone(), cols, &opts)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((schema, batches))
}

/// `wf sql QUERY` over tables given as (name, paths, format).
#[pyfunction]
#[pyo3(signature = (query, tables, memory=None, threads=None, chunk_size=None, delimiter=None, no_header=false, schema=None, strict=false, disorder_us=None))]
#[allow(clippy::too_many_arguments)]
fn sql<'py>(
    py: Python<'py>,
    query: &str,
    tables: Vec<(String, Vec<PathBuf>, String)>,
    memory: Option<u64>,
    threads: Option<usize>,
    chunk_size: Option<u64>,
    delimiter: Option<String>,
    no_header: bool,
    schema: Option<String>,
    strict: bool,
    disorder_us: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    if disorder_us.is_some_and(|d| d < 0) {
        return Err(value_error("disorder: a duration of 0 or more"));
    }
    let mut specs = Vec::new();
    for (name, paths, format) in tables {
        let inputs = collect(paths)?;
        specs.push(TableSpec {
            name,
            format,
            inputs,
        });
    }
    let mut opts = sql_options(
        scan_options_within(threads, chunk_size, memory)?,
        memory,
        delimiter,
        no_header,
        schema,
    )?;
    // The scan stops at the first problem and names it (as `wf sql --strict`).
    opts.format.strict = strict;
    opts.disorder = disorder_us;
    query_table(py, query, specs, &opts, strict)
}

/// The records of `paths` (every format column, or `columns`).
#[pyfunction]
#[pyo3(signature = (paths, format="auto".to_string(), columns=None, threads=None, chunk_size=None, delimiter=None, no_header=false, schema=None))]
#[allow(clippy::too_many_arguments)]
fn read<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    format: String,
    columns: Option<Vec<String>>,
    threads: Option<usize>,
    chunk_size: Option<u64>,
    delimiter: Option<String>,
    no_header: bool,
    schema: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let table = TableSpec {
        name: "logs".into(),
        format,
        inputs: collect(paths)?,
    };
    let opts = sql_options(
        scan_options(threads, chunk_size)?,
        None,
        delimiter,
        no_header,
        schema,
    )?;
    read_table(py, table, columns, &opts)
}

/// The records that start in `[start, end)` of one file (or of bytes).
#[pyfunction]
#[pyo3(signature = (source, start, end, format="auto".to_string(), columns=None, threads=1, delimiter=None, no_header=false, schema=None))]
#[allow(clippy::too_many_arguments)]
fn read_range<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    start: u64,
    end: Option<u64>,
    format: String,
    columns: Option<Vec<String>>,
    threads: usize,
    delimiter: Option<String>,
    no_header: bool,
    schema: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    // `_line` counts the lines before a record: a range from inside the
    // file has not read them (it read from the file's start, records
    // before `start` among its rows).
    let line = columns.iter().flatten().any(|c| c == "_line");
    if line && start > 0 {
        return Err(value_error(
            "_line needs the lines before the range: read from start 0, or use _offset",
        ));
    }
    let r = ranged(source, start, end)?;
    let table = TableSpec {
        name: "logs".into(),
        format,
        inputs: vec![r.input.clone()],
    };
    let opts = sql_options(
        scan_options(Some(threads), None)?,
        None,
        delimiter,
        no_header,
        schema,
    )?;
    let t = read_table(py, table, columns, &opts);
    drop(r);
    t
}

/// One job's partial state over one input, as bytes.
fn travel<J: Partial>(
    py: Python<'_>,
    job: &J,
    r: Ranged,
    input: usize,
    opts: &ScanOptions,
) -> PyResult<Vec<u8>>
where
    J::State: Send,
{
    let out = run(py, job, vec![r.input.clone()], opts)?;
    drop(r);
    let mut st = out.state;
    job.relabel(&mut st, input);
    let seen = BTreeSet::from([input as u64]);
    Ok(py.detach(move || partial::encode(job, &st, &seen)))
}

/// The partial state of `job` over the records that start in `[start, end)`.
#[pyfunction]
#[pyo3(signature = (job, source, start=0, end=None, input=0, top=10, all=false, max_letters=None, threads=1))]
#[allow(clippy::too_many_arguments)]
fn partial_state<'py>(
    py: Python<'py>,
    job: &str,
    source: &Bound<'py, PyAny>,
    start: u64,
    end: Option<u64>,
    input: usize,
    top: usize,
    all: bool,
    max_letters: Option<u64>,
    threads: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    if job != "pangram" && (all || max_letters.is_some()) {
        return Err(value_error(format!(
            "all and max_letters are pangram's, not {job}'s"
        )));
    }
    let r = ranged(source, start, end)?;
    let opts = scan_options(Some(threads), None)?;
    let bytes = match job {
        "count" => travel(py, &Count { sep: b'\n' }, r, input, &opts)?,
        "wf2" => travel(py, &Wf2, r, input, &opts)?,
        "pangram" => travel(py, &pangram_job(top, all, max_letters)?, r, input, &opts)?,
        _ => return Err(unknown_job(job)),
    };
    Ok(PyBytes::new(py, &bytes))
}

fn unknown_job(job: &str) -> PyErr {
    value_error(format!("unknown job '{job}' (count, wf2 or pangram)"))
}

/// Merge partial states of one job into one.
#[pyfunction]
fn merge<'py>(
    py: Python<'py>,
    job: &str,
    states: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let owned: Vec<Vec<u8>> = states.iter().map(|b| b.as_bytes().to_vec()).collect();
    let refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let merged = match job {
        "count" => py.detach(|| partial::merge::<Count>(&refs)),
        "wf2" => py.detach(|| partial::merge::<Wf2>(&refs)),
        "pangram" => py.detach(|| partial::merge::<Pangram>(&refs)),
        _ => return Err(unknown_job(job)),
    };
    Ok(PyBytes::new(py, &merged.map_err(value_error)?))
}

/// The answer from a state: a list with the JSON text of `wf count --json` or
/// `wf wf2 --json`, or one line of `wf pangram --json` per window (`paths`
/// names the inputs the state's indices refer to; window text is read back
/// from them).
#[pyfunction]
#[pyo3(signature = (job, state, top=10, paths=None))]
fn finish(
    py: Python<'_>,
    job: &str,
    state: Vec<u8>,
    top: usize,
    paths: Option<Vec<PathBuf>>,
) -> PyResult<Vec<String>> {
    match job {
        "count" => {
            let (_, t) = partial::decode::<Count>(&state).map_err(value_error)?;
            Ok(vec![wf_core::report::count::json(
                &t.state,
                t.inputs.len() as u64,
            )])
        }
        "wf2" => {
            let (job, t) = partial::decode::<Wf2>(&state).map_err(value_error)?;
            let report = py.detach(|| job.finish(t.state, top));
            Ok(vec![wf_core::report::wf2::json(&report)])
        }
        "pangram" => finish_pangram(py, &state, paths.unwrap_or_default()),
        _ => Err(unknown_job(job)),
    }
}

fn finish_pangram(py: Python<'_>, state: &[u8], paths: Vec<PathBuf>) -> PyResult<Vec<String>> {
    let (job, t) = partial::decode::<Pangram>(state).map_err(value_error)?;
    if let Some(&i) = t.inputs.iter().find(|&&i| i as usize >= paths.len()) {
        return Err(value_error(format!(
            "the state has input {i}: give its path in paths"
        )));
    }
    let mut inputs = Vec::new();
    for p in paths {
        // One regular file each, as `partial` takes (an empty directory
        // panicked here; a directory's first file was taken).
        match &collect(vec![p.clone()])?[..] {
            [i] if p.is_file() => inputs.push(i.clone()),
            _ => {
                return Err(value_error(format!(
                    "{}: not one regular file",
                    p.display()
                )))
            }
        }
    }
    let windows = py
        .detach(|| {
            job.finish(t.state, &mut |i, off, len| match inputs.get(i) {
                Some(input) => scan::read_back(input, off, len),
                None => Err(std::io::Error::other(format!(
                    "the state names input {i}: give its path in paths"
                ))),
            })
        })
        .map_err(windows_error)?;
    Ok(windows
        .iter()
        .map(|w| wf_core::report::pangram::json_line(w, scan::input_path_bytes(&inputs[w.input])))
        .collect())
}

/// One input as the CLI collects it: (name, path, size, compression); the
/// path as the OS has it (a name that is not UTF-8 is a `str` with
/// surrogate escapes, as `os.fsdecode` gives: written lossily, Dask could
/// not open it).
type InputRow = (String, std::ffi::OsString, u64, Option<String>);

/// The inputs as the CLI collects them.
#[pyfunction]
fn inputs(paths: Vec<PathBuf>) -> PyResult<Vec<InputRow>> {
    Ok(collect(paths)?
        .into_iter()
        .map(|i| {
            let (path, size, codec) = match &i.source {
                Source::File { path, size } => (path.clone(), *size, None),
                Source::Compressed { path, size, codec } => {
                    (path.clone(), *size, Some(codec.to_string()))
                }
                Source::Stream { path, .. } => {
                    (path.clone().unwrap_or_else(|| "-".into()), 0, None)
                }
            };
            (i.name, path.into_os_string(), size, codec)
        })
        .collect())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("STATE_VERSION", partial::VERSION)?;
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(wf2, m)?)?;
    m.add_function(wrap_pyfunction!(pangram, m)?)?;
    m.add_function(wrap_pyfunction!(sql, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(read_range, m)?)?;
    m.add_function(wrap_pyfunction!(partial_state, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(finish, m)?)?;
    m.add_function(wrap_pyfunction!(inputs, m)?)?;
    m.add_function(wrap_pyfunction!(report::report, m)?)?;
    Ok(())
}
