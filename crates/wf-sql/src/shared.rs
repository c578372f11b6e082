//! The scan that several readers of a table share (`crate::share` decides
//! which): it waits for its readers, then scans the union of their columns
//! once and gives each reader its own columns of every batch.
//!
//! A reader that joins late (its stream is asked for only after the scan
//! started, say behind a join's build side) is not waited for: the scan starts
//! once every reader has joined or [`WAIT`] has passed, and a reader that comes
//! later runs a scan of its own. So a late reader costs a second scan, never a
//! lost batch.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;

use crate::inner::{spawn_scan, TableInner};
use wf_formats::read::job::Reader;
use wf_formats::read::{self, BatchResult};

/// How long a started shared scan waits for its other readers to join.
pub const WAIT: Duration = Duration::from_millis(100);

/// At most this many readers join a shared scan, the rest read on their own:
/// `WF_SHARED_READERS` (unset: all of them), for the tests, which take the
/// late readers' path this way, and for measuring what sharing saves.
fn max_readers() -> usize {
    std::env::var("WF_SHARED_READERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX)
}

/// A scan that several [`ScanExec`]s of one table read.
pub struct Shared {
    table: Arc<TableInner>,
    batch_rows: usize,
    /// Each reader's columns (table columns) and schema.
    members: Vec<(Vec<usize>, SchemaRef)>,
    joined: Mutex<Joined>,
    all_in: Condvar,
}

struct Joined {
    /// The channel of each reader that joined.
    txs: Vec<Option<async_channel::Sender<BatchResult>>>,
    started: bool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared({} readers)", self.members.len())
    }
}

impl Shared {
    /// A scan of `table` for readers of the given columns (table columns)
    /// and schemas.
    pub(crate) fn new(
        table: Arc<TableInner>,
        batch_rows: usize,
        members: Vec<(Vec<usize>, SchemaRef)>,
    ) -> Arc<Self> {
        let n = members.len();
        Arc::new(Shared {
            table,
            batch_rows,
            members,
            joined: Mutex::new(Joined {
                txs: vec![None; n],
                started: false,
            }),
            all_in: Condvar::new(),
        })
    }

    pub fn readers(&self) -> usize {
        self.members.len()
    }

    /// Reader `i` asks for its batches: the receiver of its channel, or `None`
    /// if the scan started without it. The first reader starts the scan's
    /// thread, which waits for the others.
    pub fn join(self: &Arc<Self>, i: usize) -> Option<async_channel::Receiver<BatchResult>> {
        let mut j = self.joined.lock().unwrap();
        let joined = j.txs.iter().flatten().count();
        if j.started || joined >= max_readers() {
            return None;
        }
        let (tx, rx) = async_channel::bounded(read::channel_bound(&self.table.read));
        j.txs[i] = Some(tx);
        if joined == 0 {
            let me = self.clone();
            spawn_scan(&self.table, move || me.run());
        }
        if joined + 1 == self.members.len().min(max_readers()) {
            self.all_in.notify_all();
        }
        Some(rx)
    }

    /// Wait for the readers (at most [`WAIT`]), then scan the union of the
    /// columns of those that joined.
    fn run(&self) {
        let j = self.joined.lock().unwrap();
        let (mut j, _) = self
            .all_in
            .wait_timeout_while(j, WAIT, |j| {
                j.txs.iter().flatten().count() < self.members.len().min(max_readers())
            })
            .unwrap();
        j.started = true;
        let joined: Vec<(usize, async_channel::Sender<BatchResult>)> = j
            .txs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, tx)| tx.take().map(|tx| (i, tx)))
            .collect();
        drop(j);
        let mut cols: Vec<usize> = joined
            .iter()
            .flat_map(|(i, _)| self.members[*i].0.iter().copied())
            .collect();
        cols.sort_unstable();
        cols.dedup();
        let readers = joined
            .into_iter()
            .map(|(i, tx)| {
                let (mine, schema) = &self.members[i];
                let at = mine
                    .iter()
                    .map(|c| cols.binary_search(c).unwrap())
                    .collect();
                Reader {
                    tx,
                    cols: Some(at),
                    schema: schema.clone(),
                }
            })
            .collect();
        // Several scans: the table's streams are read from copies.
        read::scan(&self.table.read, &cols, self.batch_rows, readers, false);
    }
}
