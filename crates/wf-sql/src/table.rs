//! A DataFusion table over `wf_formats::read`: [`LogTable`] is the
//! `TableProvider`, [`ScanExec`] the leaf of the physical plan.
//!
//! DataFusion asks the table for the columns a query uses (projection push-down)
//! and [`ScanExec`] passes exactly those to the format's parser, so
//! `SELECT status, count(*) ... GROUP BY status` never builds the user agent.
//! Its output partitions (one per worker thread) all read from one channel fed
//! by one run of the scan engine (see `wf_formats::read::job`), started on a
//! thread of its own when the first partition is executed. When the scan ends
//! it leaves its input errors and parse counts in the table's [`ScanReport`]
//! *before* it closes the channel, so once a query's streams are done the
//! report is complete.
//!
//! A query may scan a table more than once (a self-join, a scalar subquery);
//! the lines and errors are reported once, from the first scan that read every
//! record. A scan that a LIMIT stopped early reports only while no complete scan
//! has (the two-scan test in `tests/sql.rs` runs both orders).

use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
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

pub use crate::inner::Scans;
use crate::inner::{spawn_scan, TableInner};
use crate::shared::Shared;
use crate::time::{self, Bounds, TimeCol, TimeScan};
use wf_formats::read::job::Reader;
use wf_formats::read::{self, BatchResult, ReadError};
use wf_formats::Format;

pub use wf_formats::read::ScanReport;

/// A table: inputs, their format, and how to scan them.
#[derive(Debug)]
pub struct LogTable {
    inner: Arc<TableInner>,
    /// The column that is the records' log time, for the time push-down
    /// (`crate::time`).
    time: Option<TimeCol>,
}

impl LogTable {
    /// A table over `table`, whose time push-down reads `disorder`
    /// microseconds more on each side of a window (see `crate::time`).
    pub fn new(table: read::Table, disorder: i64) -> Self {
        let time = time::time_column(table.format().as_ref()).map(|(index, text)| TimeCol {
            index,
            name: table.schema().field(index).name().clone(),
            text,
            disorder,
        });
        LogTable {
            inner: Arc::new(TableInner::new(table)),
            time,
        }
    }

    /// What the time push-down did in each scan of this table (`--stats`).
    pub(crate) fn time_notes(&self) -> crate::inner::TimeNotes {
        self.inner.time_notes.clone()
    }

    /// The window the time filters among `filters` set, if any.
    fn time_bounds(&self, filters: &[Expr]) -> Option<Bounds> {
        let tc = self.time.as_ref()?;
        let all = Bounds {
            since: i64::MIN,
            until: i64::MAX,
        };
        let b = filters
            .iter()
            .filter_map(|f| time::bounds(f, tc))
            .fold(all, |a, b| Bounds {
                since: a.since.max(b.since),
                until: a.until.min(b.until),
            });
        (b != all).then_some(b)
    }

    /// What the scans of this table found (complete once its queries are done
    /// and [`LogTable::scans`] waited for them).
    pub fn report(&self) -> Arc<Mutex<ScanReport>> {
        self.inner.read.report()
    }

    /// The table's scan threads, to wait for once the query is done: a scan a
    /// LIMIT stopped ends on its own soon after (it reads no further once its
    /// channel is closed), and only then is its report in.
    pub fn scans(&self) -> Scans {
        self.inner.threads()
    }

    pub fn format(&self) -> &Arc<dyn Format> {
        self.inner.read.format()
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
        self.inner.read.schema().clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    /// Bounds on the log's time column are used to narrow the files
    /// (`crate::time`), inexactly: DataFusion still applies them.
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(
                |f| match self.time.as_ref().and_then(|tc| time::bounds(f, tc)) {
                    Some(_) => TableProviderFilterPushDown::Inexact,
                    None => TableProviderFilterPushDown::Unsupported,
                },
            )
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let all: Vec<usize> = (0..self.inner.read.schema().fields().len()).collect();
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
        // `_line` counts lines from the start of a file: only whole files.
        let line = self.inner.read.format().fields().len() + 2;
        let time = match (self.time_bounds(filters), &self.time) {
            (Some(b), Some(tc)) if !projection.contains(&line) => {
                let t = time::time_scan(&self.inner.read, tc, b);
                self.inner.time_notes.lock().unwrap().push(t.note.clone());
                Some(Arc::new(t))
            }
            _ => None,
        };
        let mut scan = ScanExec::new(self.inner.clone(), projection, batch_rows);
        scan.time = time;
        Ok(Arc::new(scan))
    }
}

/// The physical scan: `threads` partitions fed by one scan of the table, its
/// own or one it shares with other scans of the table (see `crate::share`).
pub struct ScanExec {
    pub(crate) table: Arc<TableInner>,
    pub(crate) projection: Vec<usize>,
    pub(crate) schema: SchemaRef,
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
    /// The only scan of its table in the plan (`crate::share` says so): it may
    /// read the table's streams as they come (see `crate::stream`).
    sole: bool,
    /// A time window pushed down: the table with its files narrowed to spans
    /// (never shared with other scans, see `crate::share`).
    pub(crate) time: Option<Arc<TimeScan>>,
}

impl fmt::Debug for ScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScanExec({:?})", self.table)
    }
}

impl ScanExec {
    fn new(table: Arc<TableInner>, projection: Vec<usize>, batch_rows: usize) -> Self {
        let schema = Arc::new(
            table
                .read
                .schema()
                .project(&projection)
                .expect("valid projection"),
        );
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(table.read.options().threads.max(1)),
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
            time: None,
        }
    }

    pub(crate) fn batch_rows(&self) -> usize {
        self.batch_rows
    }

    /// This scan as reader `i` of a shared scan.
    pub(crate) fn shared(&self, share: Arc<Shared>, i: usize) -> Self {
        let mut s = ScanExec::new(self.table.clone(), self.projection.clone(), self.batch_rows);
        s.share = Some((share, i));
        s.time = self.time.clone();
        s
    }

    /// This scan as the only one of its table in the plan.
    pub(crate) fn sole(&self) -> Self {
        let mut s = ScanExec::new(self.table.clone(), self.projection.clone(), self.batch_rows);
        s.sole = true;
        s.time = self.time.clone();
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
        let (tx, r) = async_channel::bounded(read::channel_bound(&self.table.read));
        let schema = self.schema.clone();
        let readers = vec![Reader {
            tx,
            cols: None,
            schema,
        }];
        let (table, projection, rows, sole) = (
            self.table.clone(),
            self.projection.clone(),
            self.batch_rows,
            self.sole,
        );
        let spanned = self.time.as_ref().map(|t| t.table.clone());
        spawn_scan(&self.table, move || {
            let read = spanned.as_deref().unwrap_or(&table.read);
            read::scan(read, &projection, rows, readers, sole)
        });
        r
    }
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
            self.table.read.format().name(),
            self.table.read.inputs().len(),
            cols.join(", ")
        )?;
        if let Some(t) = &self.time {
            write!(f, ", {}", t.note)?;
        }
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
        let stream = futures::stream::unfold(rx, |rx| async move {
            let b = rx.recv().await.ok()?;
            Some((b.map_err(query_error), rx))
        });
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

/// A read's error as DataFusion's: a record that stops the query stays a
/// [`RecordError`](wf_formats::read::problem::RecordError) inside it (the
/// query's message is its text, see `crate::problem`).
fn query_error(e: ReadError) -> DataFusionError {
    match e {
        ReadError::Record(r) => DataFusionError::External(Box::new(r)),
        ReadError::Batch(m) => DataFusionError::Execution(m),
    }
}
