//! Where a query's rows go: an aligned table (as `datafusion-cli` and `duckdb`
//! print), CSV or JSON lines on stdout, or a file whose extension picks Parquet,
//! Arrow IPC, CSV or JSON lines. Everything but the aligned table streams batch
//! by batch, so `SELECT * ... -o big.parquet` never holds the result in memory.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;

/// How results are printed or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Table,
    Csv,
    Json,
    File(PathBuf),
}

/// A sink for result batches.
pub trait Sink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String>;
    fn finish(self: Box<Self>) -> Result<(), String>;
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A sink for `out`; `stdout` receives what is printed.
pub fn sink(
    out: &Output,
    schema: SchemaRef,
    stdout: Box<dyn Write + Send>,
) -> Result<Box<dyn Sink>, String> {
    Ok(match out {
        Output::Table => Box::new(TableSink {
            batches: Vec::new(),
            schema,
            out: stdout,
        }),
        Output::Csv => Box::new(CsvSink(datafusion::arrow::csv::Writer::new(stdout))),
        Output::Json => Box::new(JsonSink(datafusion::arrow::json::LineDelimitedWriter::new(
            stdout,
        ))),
        Output::File(p) => file_sink(p, schema)?,
    })
}

fn file_sink(p: &Path, schema: SchemaRef) -> Result<Box<dyn Sink>, String> {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let open = || File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    Ok(match ext.as_str() {
        "parquet" | "pq" => Box::new(ParquetSink(
            datafusion::parquet::arrow::ArrowWriter::try_new(open()?, schema, None).map_err(err)?,
        )),
        "arrow" | "ipc" | "feather" => Box::new(IpcSink(
            datafusion::arrow::ipc::writer::FileWriter::try_new(open()?, &schema).map_err(err)?,
        )),
        "csv" => Box::new(CsvSink(datafusion::arrow::csv::Writer::new(Box::new(
            std::io::BufWriter::new(open()?),
        )))),
        "json" | "jsonl" | "ndjson" => {
            Box::new(JsonSink(datafusion::arrow::json::LineDelimitedWriter::new(
                Box::new(std::io::BufWriter::new(open()?)),
            )))
        }
        _ => {
            return Err(format!(
                "-o {}: unknown extension (use .parquet, .arrow, .csv or .jsonl)",
                p.display()
            ))
        }
    })
}

/// Batches kept in memory (see [`super::collect`]).
pub struct Memory(pub std::sync::Arc<std::sync::Mutex<Vec<RecordBatch>>>);

impl Sink for Memory {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.lock().unwrap().push(batch.clone());
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), String> {
        Ok(())
    }
}

struct TableSink {
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
    out: Box<dyn Write + Send>,
}

impl Sink for TableSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.batches.push(batch.clone());
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        let rows: usize = self.batches.iter().map(RecordBatch::num_rows).sum();
        if self.batches.is_empty() {
            self.batches
                .push(RecordBatch::new_empty(self.schema.clone()));
        }
        let opts = FormatOptions::default().with_null("NULL");
        let t = pretty_format_batches_with_options(&self.batches, &opts).map_err(err)?;
        let s = if rows == 1 { "" } else { "s" };
        writeln!(self.out, "{t}\n{rows} row{s}").map_err(err)?;
        self.out.flush().map_err(err)
    }
}

struct CsvSink<W: Write>(datafusion::arrow::csv::Writer<W>);

impl<W: Write> Sink for CsvSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.write(batch).map_err(err)
    }

    fn finish(self: Box<Self>) -> Result<(), String> {
        self.0.into_inner().flush().map_err(err)
    }
}

struct JsonSink<W: Write>(datafusion::arrow::json::LineDelimitedWriter<W>);

impl<W: Write> Sink for JsonSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.write(batch).map_err(err)
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.0.finish().map_err(err)?;
        self.0.into_inner().flush().map_err(err)
    }
}

struct ParquetSink(datafusion::parquet::arrow::ArrowWriter<File>);

impl Sink for ParquetSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.write(batch).map_err(err)
    }

    fn finish(self: Box<Self>) -> Result<(), String> {
        self.0.close().map(|_| ()).map_err(err)
    }
}

struct IpcSink(datafusion::arrow::ipc::writer::FileWriter<File>);

impl Sink for IpcSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.0.write(batch).map_err(err)
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.0.finish().map_err(|e: ArrowError| e.to_string())
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
