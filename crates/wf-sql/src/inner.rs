//! What every scan of one table shares: the table to read and the threads
//! reading it. A file of its own because both the plan's leaf
//! (`crate::table`) and the scan several leaves share (`crate::shared`) start
//! scans of a table: kept in `table.rs`, the two files imported each other.

use std::sync::{Arc, Mutex};

use wf_formats::read;

/// Scan threads of a table (see [`LogTable::scans`](crate::table::LogTable::scans)).
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

/// What the time push-down did in each scan of a table (`crate::time`).
pub(crate) type TimeNotes = Arc<Mutex<Vec<Arc<crate::time::SeekNote>>>>;

/// A table as its scans share it: what to read, and the threads reading it.
#[derive(Debug)]
pub(crate) struct TableInner {
    pub(crate) read: read::Table,
    /// The scan threads started so far; `LogTable::scans` waits for them.
    threads: Scans,
    pub(crate) time_notes: TimeNotes,
}

impl TableInner {
    pub(crate) fn new(read: read::Table) -> Self {
        TableInner {
            read,
            threads: Scans::default(),
            time_notes: TimeNotes::default(),
        }
    }

    pub(crate) fn threads(&self) -> Scans {
        self.threads.clone()
    }
}

/// Run `scan` on a thread of its own, which `LogTable::scans` waits for.
pub(crate) fn spawn_scan(table: &TableInner, scan: impl FnOnce() + Send + 'static) {
    let h = std::thread::Builder::new()
        .name("wf-sql-scan".into())
        .spawn(scan)
        .expect("starting a scan thread");
    table.threads.0.lock().unwrap().push(h);
}
