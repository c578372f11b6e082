//! The scan job behind a SQL table: each worker thread parses the records of its
//! chunks into Arrow batches of the projected columns and sends them to
//! DataFusion through one bounded channel.
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

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::error::DataFusionError;

use crate::formats::{csv, Columns, Format, Kind, Parser};
use crate::jobs::{Chunk, Job};

/// What a batch channel carries.
pub type BatchResult = Result<RecordBatch, DataFusionError>;

/// A column of the table that is not in the records: where a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Virtual {
    /// The input's name as given.
    File,
    /// Byte offset of the record's first byte in its input.
    Offset,
}

impl Virtual {
    pub const ALL: [(&'static str, Virtual, Kind); 2] = [
        ("_file", Virtual::File, Kind::Str),
        ("_offset", Virtual::Offset, Kind::Int),
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
    /// Input names, for `_file`.
    pub names: Arc<Vec<String>>,
    /// Cut records quote-aware (CSV files with quoted line breaks, read whole).
    pub quoted: bool,
    pub batch_rows: usize,
    pub tx: async_channel::Sender<BatchResult>,
    /// The format cuts text values at ASCII bytes ([`Format::ascii_boundaries`]).
    pub ascii_boundaries: bool,
    /// Set once the query stopped listening (e.g. LIMIT reached): parse no more.
    pub closed: AtomicBool,
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
    /// The first malformed records: (input index, byte offset).
    pub first_bad: Vec<(usize, u64)>,
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
        self.first_bad.extend(o.first_bad);
        self.first_bad.sort_unstable();
        self.first_bad.truncate(SHOW_BAD);
    }
}

pub struct BatchState {
    parser: Box<dyn Parser>,
    cols: Columns,
    virt: Columns,
    pub stats: ParseStats,
}

impl Job for BatchJob {
    type State = BatchState;

    fn new_state(&self) -> BatchState {
        let fields = self.format.fields();
        let kinds: Vec<Kind> = self.format_cols.iter().map(|&c| fields[c].kind).collect();
        let vkinds: Vec<Kind> = self.virtuals.iter().map(|v| virtual_kind(*v)).collect();
        BatchState {
            parser: self.format.parser(&self.format_cols),
            cols: Columns::new(&kinds),
            virt: Columns::new(&vkinds),
            stats: ParseStats::default(),
        }
    }

    fn process(&self, st: &mut BatchState, chunk: &Chunk<'_>) {
        if self.closed.load(Ordering::Relaxed) || chunk.data.is_empty() {
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
        st.cols.utf8_checked = self.ascii_boundaries && std::str::from_utf8(data).is_ok();
        if self.quoted {
            return self.quoted_records(st, chunk, skip);
        }
        // One memchr iterator over the piece: a memchr call per record paid its
        // set-up once per 200-byte line.
        let sep = self.format.separator();
        let last = (data.last() != Some(&sep)).then_some(data.len());
        let mut pos = 0;
        for (k, end) in memchr::memchr_iter(sep, data).chain(last).enumerate() {
            if k >= skip {
                self.record(st, chunk, pos, &data[pos..end]);
            }
            pos = end + 1;
        }
    }

    /// States merge when the workers are done: what a state still holds goes out
    /// as a last batch (the caller flushes the final state, see [`BatchJob::flush`]).
    fn merge(&self, into: &mut BatchState, mut other: BatchState) {
        self.flush(&mut other);
        into.stats.merge(other.stats);
    }
}

fn virtual_kind(v: Virtual) -> Kind {
    match v {
        Virtual::File => Kind::Str,
        Virtual::Offset => Kind::Int,
    }
}

impl BatchJob {
    /// Records cut quote-aware (a CSV file with quoted line breaks, read whole).
    fn quoted_records(&self, st: &mut BatchState, chunk: &Chunk<'_>, mut skip: usize) {
        let data = chunk.data;
        let mut pos = 0;
        while pos < data.len() {
            let end = csv::record_end(data, pos).unwrap_or(data.len());
            if skip > 0 {
                skip -= 1;
            } else {
                self.record(st, chunk, pos, &data[pos..end]);
            }
            pos = end + 1;
        }
    }

    /// Parse one record into the state's columns; flush a full batch.
    fn record(&self, st: &mut BatchState, chunk: &Chunk<'_>, pos: usize, rec: &[u8]) {
        let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
        let rec = if chunk.offset == 0 && pos == 0 {
            super::strip_bom(rec)
        } else {
            rec
        };
        if rec.is_empty() {
            st.stats.blank += 1;
            return;
        }
        if !st.parser.parse(rec, &mut st.cols) {
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
            }
        }
        st.virt.end_row();
        if st.cols.rows() >= self.batch_rows {
            self.flush(st);
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
            .map_err(DataFusionError::from);
        if self.tx.send_blocking(batch).is_err() {
            self.closed.store(true, Ordering::Relaxed);
        }
    }
}
