//! Where a query's rows go: an aligned table (as `datafusion-cli` and `duckdb`
//! print), CSV or JSON lines on stdout, or a file whose extension picks Parquet,
//! Arrow IPC, CSV or JSON lines. Everything streams batch by batch, so
//! `SELECT * ... -o big.parquet` never holds the result in memory; the aligned
//! table keeps only the `--max-rows` it shows and counts the rest (issue 36: a
//! `SELECT *` of a 300 MB log to the terminal held 9.6 GB).
//!
//! `-o FILE` is written to a temporary file beside FILE and renamed onto it
//! only when the whole result is written (and, under `--strict`, the input was
//! clean): a failed, refused or interrupted query leaves FILE as it was and no
//! temporary behind ([`super::cleanup`] removes it on a signal). A FILE that is
//! one of the query's inputs is refused before anything is opened for writing.

use std::fs::File;
use std::io::{Seek, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{ArrowPrimitiveType, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use datafusion::parquet::errors::ParquetError;

use wf_core::scan::Input;

use crate::csv_text::CsvText;

/// How results are printed or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// An aligned table of at most `max_rows` rows (0: all, held in memory).
    Table {
        max_rows: usize,
    },
    Csv,
    Json,
    File(PathBuf),
}

/// Rows the aligned table shows unless `--max-rows` says otherwise.
pub const MAX_ROWS: usize = 40;

/// A sink for result batches. Nothing is visible until `finish` (a file is
/// renamed into place then; a table printed); dropped without it, a sink
/// leaves no file behind.
pub trait Sink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError>;
    fn finish(self: Box<Self>) -> Result<(), OutputError>;
}

/// Why the result could not be printed or written; `Display` is the message
/// the CLI prints. The I/O, Arrow and Parquet errors are kept whole (with their
/// `io::ErrorKind`), and an `-o` error names the file.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// `-o FILE` could not be opened, written or put in place.
    #[error("-o {}: {source}", .path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `-o FILE` is the query's input `input`.
    #[error("-o {}: the output is the input {input} (writing it would destroy it)", .path.display())]
    IsInput { path: PathBuf, input: String },
    #[error("-o {}: unknown extension (use .parquet, .arrow, .csv, .tsv or .jsonl)", .path.display())]
    Extension { path: PathBuf },
    /// The temporary file of `--strict` output could not be made.
    #[error("spooling the result: {0}")]
    Spool(std::io::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    #[error(transparent)]
    Parquet(#[from] ParquetError),
}

/// A sink for `out`; `stdout` receives what is printed. With `spool`, CSV and
/// JSON lines go to an unlinked temporary file first and reach `stdout` only
/// at `finish` (`--strict`: nothing printed for a query that fails late).
pub fn sink(
    out: &Output,
    schema: SchemaRef,
    stdout: Box<dyn Write + Send>,
    spool: bool,
) -> Result<Box<dyn Sink>, OutputError> {
    if spool && matches!(out, Output::Csv | Output::Json) {
        return Spooled::open(out, schema, stdout);
    }
    Ok(match out {
        Output::Table { max_rows } => Box::new(TableSink {
            batches: Vec::new(),
            schema,
            out: stdout,
            max_rows: *max_rows,
            kept: 0,
            rows: 0,
        }),
        Output::Csv => Box::new(CsvSink(CsvText::new(stdout, b','), schema)),
        Output::Json => Box::new(JsonSink(json_lines(stdout), 0)),
        Output::File(p) => Atomic::open(p, schema)?,
    })
}

/// An error if `target` (of `-o`) is one of `inputs`, or the file standard
/// input reads (same device and inode, `scan::input_at`): writing it would
/// destroy the input.
pub fn refuse_input<'a>(
    target: &Path,
    inputs: impl IntoIterator<Item = &'a Input>,
) -> Result<(), OutputError> {
    match wf_core::scan::input_at(target, inputs) {
        Some(i) => Err(OutputError::IsInput {
            path: target.to_path_buf(),
            input: i.name.clone(),
        }),
        None => Ok(()),
    }
}

/// The file formats of `-o`, by extension.
#[derive(Clone, Copy)]
enum Kind {
    Parquet,
    Ipc,
    Csv,
    /// CSV with tabs (what `wf sql --format tsv` and DuckDB's sniffer read).
    Tsv,
    Json,
}

fn file_kind(p: &Path) -> Result<Kind, OutputError> {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Ok(match ext.as_str() {
        "parquet" | "pq" => Kind::Parquet,
        "arrow" | "ipc" | "feather" => Kind::Ipc,
        "csv" => Kind::Csv,
        "tsv" | "tab" => Kind::Tsv,
        "json" | "jsonl" | "ndjson" => Kind::Json,
        _ => {
            return Err(OutputError::Extension {
                path: p.to_path_buf(),
            })
        }
    })
}

/// The writer of a file format, writing into `f`.
fn file_format(kind: Kind, schema: SchemaRef, f: File) -> Result<Box<dyn Sink>, OutputError> {
    Ok(match kind {
        Kind::Parquet => Box::new(ParquetSink(
            datafusion::parquet::arrow::ArrowWriter::try_new(f, schema, None)
                .map_err(OutputError::from)?,
        )),
        Kind::Ipc => Box::new(IpcSink(
            datafusion::arrow::ipc::writer::FileWriter::try_new(f, &schema)
                .map_err(OutputError::from)?,
        )),
        Kind::Csv | Kind::Tsv => Box::new(CsvSink(
            CsvText::new(
                Box::new(std::io::BufWriter::new(f)),
                if matches!(kind, Kind::Tsv) {
                    b'\t'
                } else {
                    b','
                },
            ),
            schema,
        )),
        Kind::Json => Box::new(JsonSink(
            json_lines(Box::new(std::io::BufWriter::new(f))),
            0,
        )),
    })
}

/// `-o FILE` through a temporary file beside FILE, renamed onto it by `finish`.
struct Atomic {
    inner: Box<dyn Sink>,
    tmp: tempfile::TempPath,
    target: PathBuf,
    _reg: super::cleanup::Registered,
}

impl Atomic {
    fn open(p: &Path, schema: SchemaRef) -> Result<Box<dyn Sink>, OutputError> {
        let named = |source| OutputError::File {
            path: p.to_path_buf(),
            source,
        };
        let kind = file_kind(p)?;
        // A symbolic link is followed: its target is replaced, not the link.
        let target = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let meta = std::fs::metadata(&target).ok();
        if meta.as_ref().is_some_and(|m| !m.is_file()) {
            // A FIFO or a device (`-o /dev/null.csv` is not a thing, but a
            // named pipe `out.csv` is): written in place, never renamed over.
            let f = std::fs::OpenOptions::new().write(true).open(&target);
            return file_format(kind, schema, f.map_err(named)?);
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let base = target.file_name().unwrap_or_default().to_string_lossy();
        let mut b = tempfile::Builder::new();
        // A new file gets 0666 less the umask, as `File::create` gives; one
        // replaced keeps its mode.
        let mode = meta
            .as_ref()
            .map_or(0o666, |m| m.permissions().mode() & 0o7777);
        let prefix = format!(".{base}.wf-");
        b.prefix(&prefix).suffix(".tmp");
        b.permissions(std::fs::Permissions::from_mode(mode));
        let (f, tmp) = b.tempfile_in(dir).map_err(named)?.into_parts();
        if meta.is_some() {
            // (the umask narrowed what the builder asked for)
            f.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(named)?;
        }
        let reg = super::cleanup::register(&tmp);
        let inner = file_format(kind, schema, f)?;
        Ok(Box::new(Atomic {
            inner,
            tmp,
            target,
            _reg: reg,
        }))
    }
}

impl Sink for Atomic {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.inner.write(batch)
    }

    fn finish(self: Box<Self>) -> Result<(), OutputError> {
        let Atomic {
            inner, tmp, target, ..
        } = *self;
        inner.finish()?;
        tmp.persist(&target).map_err(|e| OutputError::File {
            path: target,
            source: e.error,
        })
    }
}

/// CSV or JSON lines for stdout, held in an unlinked temporary file until `finish`.
struct Spooled {
    inner: Box<dyn Sink>,
    file: File,
    stdout: Box<dyn Write + Send>,
}

impl Spooled {
    fn open(
        out: &Output,
        schema: SchemaRef,
        stdout: Box<dyn Write + Send>,
    ) -> Result<Box<dyn Sink>, OutputError> {
        let file = tempfile::tempfile().map_err(OutputError::Spool)?;
        let w: Box<dyn Write + Send> = Box::new(std::io::BufWriter::with_capacity(
            1 << 16,
            file.try_clone().map_err(OutputError::from)?,
        ));
        let inner = sink(out, schema, w, false)?;
        Ok(Box::new(Spooled {
            inner,
            file,
            stdout,
        }))
    }
}

impl Sink for Spooled {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.inner.write(batch)
    }

    fn finish(self: Box<Self>) -> Result<(), OutputError> {
        let Spooled {
            inner,
            mut file,
            mut stdout,
        } = *self;
        inner.finish()?;
        file.rewind().map_err(OutputError::from)?;
        std::io::copy(&mut file, &mut stdout).map_err(OutputError::from)?;
        stdout.flush().map_err(OutputError::from)
    }
}

/// Batches kept in memory (see [`super::collect`]).
pub struct Memory(pub std::sync::Arc<std::sync::Mutex<Vec<RecordBatch>>>);

impl Sink for Memory {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.0.lock().unwrap().push(batch.clone());
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), OutputError> {
        Ok(())
    }
}

struct TableSink {
    /// The first `max_rows` rows (all with 0).
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
    out: Box<dyn Write + Send>,
    max_rows: usize,
    kept: usize,
    rows: usize,
}

impl Sink for TableSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.rows += batch.num_rows();
        let room = match self.max_rows {
            0 => batch.num_rows(),
            m => (m - self.kept).min(batch.num_rows()),
        };
        if room > 0 {
            self.batches.push(batch.slice(0, room));
            self.kept += room;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), OutputError> {
        if self.batches.is_empty() {
            self.batches
                .push(RecordBatch::new_empty(self.schema.clone()));
        }
        let opts = FormatOptions::default().with_null("NULL");
        let shown: Vec<RecordBatch> = self.batches.iter().map(shown).collect::<Result<_, _>>()?;
        let t = pretty_format_batches_with_options(&shown, &opts).map_err(OutputError::from)?;
        let (rows, kept) = (self.rows, self.kept);
        let s = if rows == 1 { "" } else { "s" };
        if kept < rows {
            writeln!(
                self.out,
                "{t}\n{rows} row{s}, {kept} shown (--max-rows 0 shows all, --csv prints all)"
            )
        } else {
            writeln!(self.out, "{t}\n{rows} row{s}")
        }
        .map_err(OutputError::from)?;
        self.out.flush().map_err(OutputError::from)
    }
}

/// `batch` with the control characters of its text shown as `\xHH`, and its
/// bidirectional formatting characters as `\u{HHHH}`
/// (`wf_core::report::visible`): the table is read on a terminal, where a
/// log's value with an escape sequence in it would act, a line break in a
/// value broke the table's rows, and U+202E made `/\u{202e}gnp.exe` read
/// `/exe.png`; CSV and JSON keep the bytes. So are the column names (a CSV
/// header's).
fn shown(batch: &RecordBatch) -> Result<RecordBatch, OutputError> {
    use datafusion::arrow::array::{ArrayRef, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use wf_core::report::visible::{needs_escape, visible};
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    let mut changed = false;
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        let name = visible(f.name());
        changed |= needs_escape(f.name());
        let text = matches!(
            c.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        );
        if text {
            let utf8 = datafusion::arrow::compute::cast(c, &DataType::Utf8)?;
            let values = utf8.as_string::<i32>();
            if values.iter().flatten().any(needs_escape) {
                let v: StringArray = values.iter().map(|v| v.map(|v| visible(v))).collect();
                fields.push(Field::new(name, DataType::Utf8, true));
                columns.push(std::sync::Arc::new(v) as ArrayRef);
                changed = true;
                continue;
            }
        }
        fields.push(f.as_ref().clone().with_name(name));
        columns.push(c.clone());
    }
    if !changed {
        // As it is (a statement's answer may have no column at all).
        return Ok(batch.clone());
    }
    let schema = std::sync::Arc::new(Schema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// CSV ([`CsvText`]: `''` written `""`, apart from NULL), and the result's
/// schema: an answer of no rows is still its header line, as DuckDB writes
/// it (Arrow's writer wrote the header with the first batch, so it was an
/// empty file).
struct CsvSink<W: Write>(CsvText<W>, SchemaRef);

impl<W: Write> Sink for CsvSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.0.write(batch).map_err(OutputError::from)
    }

    fn finish(mut self: Box<Self>) -> Result<(), OutputError> {
        self.0.header(&self.1)?;
        self.0.into_inner().flush().map_err(OutputError::from)
    }
}

/// JSON lines, and the floats written so far that JSON has no number for
/// (inf, -inf, NaN): Arrow writes them as `null`, which stderr then says,
/// where DuckDB writes `Infinity`, which is not JSON (jq refuses it).
struct JsonSink<W: Write>(datafusion::arrow::json::LineDelimitedWriter<W>, u64);

/// The non-null values of `batch`'s float columns that are not finite.
fn non_finite(batch: &RecordBatch) -> u64 {
    use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type};
    let count = |c: &dyn Array| match c.data_type() {
        DataType::Float64 => non_finite_of::<Float64Type>(c),
        DataType::Float32 => non_finite_of::<Float32Type>(c),
        _ => 0,
    };
    batch
        .columns()
        .iter()
        .map(|c| count(c.as_ref()) as u64)
        .sum()
}

fn non_finite_of<T: ArrowPrimitiveType>(c: &dyn Array) -> usize
where
    T::Native: Into<f64>,
{
    let values = c.as_primitive::<T>().iter().flatten();
    values.filter(|&v| !v.into().is_finite()).count()
}

/// JSON lines with every column in every row, a NULL as `null` (as DuckDB
/// writes them): Arrow's writer leaves a NULL's key out by default, so a
/// row's keys changed with its values and a column of NULLs was nowhere.
fn json_lines<W: Write>(w: W) -> datafusion::arrow::json::LineDelimitedWriter<W> {
    use datafusion::arrow::json::{writer::LineDelimited, WriterBuilder};
    WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, LineDelimited>(w)
}

impl<W: Write> Sink for JsonSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.1 += non_finite(batch);
        self.0.write(batch).map_err(OutputError::from)
    }

    fn finish(mut self: Box<Self>) -> Result<(), OutputError> {
        if self.1 > 0 {
            wf_core::warn!(
                "wf sql: {} float values (inf, -inf or NaN) written as null: JSON has no \
                 number for them (--csv or the table show them)",
                self.1
            );
        }
        self.0.finish().map_err(OutputError::from)?;
        self.0.into_inner().flush().map_err(OutputError::from)
    }
}

struct ParquetSink(datafusion::parquet::arrow::ArrowWriter<File>);

impl Sink for ParquetSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.0.write(batch).map_err(OutputError::from)
    }

    fn finish(self: Box<Self>) -> Result<(), OutputError> {
        self.0.close().map(|_| ()).map_err(OutputError::from)
    }
}

struct IpcSink(datafusion::arrow::ipc::writer::FileWriter<File>);

impl Sink for IpcSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.0.write(batch).map_err(OutputError::from)
    }

    fn finish(mut self: Box<Self>) -> Result<(), OutputError> {
        self.0.finish().map_err(OutputError::from)
    }
}

/// Standard output where a closed pipe (`wf sql ... | head`) is not an error:
/// once the reader is gone, further output is dropped.
pub struct Stdout {
    closed: bool,
}

impl Stdout {
    pub fn new() -> Self {
        Stdout { closed: false }
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match std::io::stdout().lock().write_all(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.closed = true,
            other => other?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}
