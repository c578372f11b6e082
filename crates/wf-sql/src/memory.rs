//! The memory pool behind `--memory`: DataFusion's fair spill pool, except that
//! the buffers of `RepartitionExec` and `SortPreservingMergeExec` are counted
//! but never refused.
//!
//! Why fair, not greedy: with the greedy pool one sort or aggregation
//! partition could take the whole limit, and at `-j 2` the other partition,
//! holding nothing it could spill, failed ("Resources exhausted", issue 36:
//! `ORDER BY path, client` over a 30 MB log failed at `--memory` 100M and 50M,
//! and over 60 MB at 200M, while `-j 1` spilled and finished). The fair pool
//! gives each spilling consumer its share, so each spills within it.
//!
//! Why the exemptions: when `RepartitionExec` cannot reserve memory for a
//! batch it writes the batch to a spill pool, and in DataFusion 55.2 that path
//! can park every thread for good (apache/datafusion#24883, fixed upstream
//! after 55.2, the newest release the registry here has), and the
//! repartition's reservations took the pool's room from the aggregations,
//! which then failed to allocate. Measured before: `GROUP BY client` over 20 M
//! distinct clients with `--memory 256M` hung once (every thread parked, the
//! scan blocked on a full channel) and exited 2 in 2 of 6 further runs; over
//! 1 M clients, `--memory 12M` hung in 1 of 8 runs and `16M` failed in 2 of 8.
//! After: no hang in 24 runs at 8M, 12M and 16M (16M: 8 of 8 exact; below that
//! the two final aggregations do not fit, as DataFusion says), and 256M 6 of 6
//! exact with a peak RSS of 676-797 MB. The final merge of the sorted
//! partitions (`SortPreservingMergeExec`) cannot spill and holds a batch or
//! two per partition; refused, it failed the sort above after the partitions
//! had spilled within their shares.
//! These buffers are usually small (a repartition's sender waits while every
//! output holds a batch; one slow output can still collect more,
//! apache/datafusion#22090), so exempting them keeps most of the limit's
//! purpose: aggregations and sorts, whose state grows with the data, still
//! spill to `--temp-dir` at the limit.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation, TrackConsumersPool,
};

/// A pool of `limit` bytes for every consumer but the exempt ones.
#[derive(Debug)]
pub struct Pool {
    inner: Arc<dyn MemoryPool>,
    /// Bytes held by exempt consumers (counted in [`MemoryPool::reserved`]).
    exempt: AtomicUsize,
}

impl Pool {
    pub fn new(limit: usize) -> Self {
        let top = NonZeroUsize::new(5).expect("nonzero");
        Pool {
            inner: Arc::new(TrackConsumersPool::new(FairSpillPool::new(limit), top)),
            exempt: AtomicUsize::new(0),
        }
    }
}

fn exempt(r: &MemoryReservation) -> bool {
    let name = r.consumer().name();
    name.starts_with("RepartitionExec") || name.starts_with("SortPreservingMergeExec")
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = self.exempt.load(Ordering::Relaxed);
        write!(
            f,
            "{} (+{held} B of repartition and merge buffers)",
            self.inner
        )
    }
}

impl MemoryPool for Pool {
    fn name(&self) -> &str {
        "wf"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer)
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer)
    }

    fn grow(&self, r: &MemoryReservation, additional: usize) {
        if exempt(r) {
            self.exempt.fetch_add(additional, Ordering::Relaxed);
        } else {
            self.inner.grow(r, additional)
        }
    }

    fn shrink(&self, r: &MemoryReservation, shrink: usize) {
        if exempt(r) {
            self.exempt.fetch_sub(shrink, Ordering::Relaxed);
        } else {
            self.inner.shrink(r, shrink)
        }
    }

    fn try_grow(&self, r: &MemoryReservation, additional: usize) -> Result<()> {
        if exempt(r) {
            self.grow(r, additional);
            return Ok(());
        }
        self.inner.try_grow(r, additional)
    }

    fn reserved(&self) -> usize {
        self.inner.reserved() + self.exempt.load(Ordering::Relaxed)
    }

    fn memory_limit(&self) -> MemoryLimit {
        self.inner.memory_limit()
    }
}

/// Have the C allocator keep freed memory for reuse, for the rest of the
/// process: a CLI query without `--memory` calls this before it starts. It
/// does nothing off Linux with glibc, and it overrides the same two settings
/// made with `GLIBC_TUNABLES`.
///
/// Why: a batch's column buffers (a few MB) are freed once the operators above
/// the scan are done with them, and glibc gave such memory back to the kernel
/// (a trimmed heap, a shrunk thread arena), so the next batch's buffers were
/// new pages, each faulted in and cleared. With blocks up to 32 MiB taken from
/// the heap and the heap trimmed only past 256 MiB free, the Wide Finder 2
/// report as SQL took 3-4% less time (system CPU 0.248 to 0.200 s), 1BRC and the
/// status count 3% less (`GLIBC_TUNABLES` with these values, and with 64 MiB
/// blocks, against none; medians of 7 to 11, 1 GiB inputs). 32 MiB is the most
/// glibc before 2.35 or so accepts, and a trim threshold set alone fixes the
/// block threshold at 128 KiB (the report 33% slower), so the second setting is
/// made only if the first took. Not under `--memory`: the freed memory a heap
/// keeps counts in the peak RSS, and the 20 M clients of `bench/sql.sh` then
/// peaked at 897 MB instead of 676-722 MB. (mimalloc was 10% faster in one pass
/// and 11% slower in the next: it returns pages to the kernel after 10 ms, and
/// system time went from 0.14 to 0.55 s; with that delay set to 0, its peak RSS
/// was right and the report 35% slower.)
pub fn reuse_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` has no preconditions; it only sets allocator settings.
    unsafe {
        if libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) == 1 {
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        }
    }
}
