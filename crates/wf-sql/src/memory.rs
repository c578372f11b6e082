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
//!
//! Why an eighth is kept from the consumers that can spill: the fair pool lets
//! them take the whole limit, and an operator that cannot spill and asks for
//! memory after them (the TopK of `ORDER BY n DESC LIMIT 5` above a GROUP BY,
//! given the groups only once the aggregation is done) found nothing left and
//! failed the query, depending on timing: over a 300 MB log,
//! `GROUP BY client ... LIMIT 5` failed at `-j 1 --memory 20M` and passed at
//! 12M; `GROUP BY path, client ... LIMIT 5` failed at `-j 1` 100M and passed at
//! 50M (bench/results/sqlc-memory-2026-11-27.txt). So the consumers that can
//! spill share the limit less [`UNSPILLABLE`] of it, each its fair part of
//! that, and the others may take all that is left. (One cap on the spilling
//! consumers together, a quarter kept, moved the failures to the aggregations:
//! one partition refused while the other held most of the cap.)

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation, TrackConsumersPool,
};

/// The share of the limit kept from the consumers that can spill.
pub const UNSPILLABLE: (usize, usize) = (1, 8);

/// A pool of `limit` bytes for every consumer but the exempt ones: those that
/// can spill share `limit` less [`UNSPILLABLE`] fairly (DataFusion's fair
/// pool), the others take what is left of `limit`.
#[derive(Debug)]
pub struct Pool {
    /// The consumers that can spill.
    inner: Arc<dyn MemoryPool>,
    /// Bytes held by exempt consumers (counted in [`MemoryPool::reserved`]).
    exempt: AtomicUsize,
    /// Bytes held by consumers that cannot spill.
    unspillable: AtomicUsize,
    limit: usize,
}

impl Pool {
    pub fn new(limit: usize) -> Self {
        let top = NonZeroUsize::new(5).expect("nonzero");
        let kept = limit / UNSPILLABLE.1 * UNSPILLABLE.0;
        let fair = FairSpillPool::new(limit - kept);
        Pool {
            inner: Arc::new(TrackConsumersPool::new(fair, top)),
            exempt: AtomicUsize::new(0),
            unspillable: AtomicUsize::new(0),
            limit,
        }
    }

    /// Count `additional` bytes for `r` if the limit has room for them.
    fn try_grow_within(&self, r: &MemoryReservation, additional: usize) -> Result<()> {
        let spill = r.consumer().can_spill();
        if spill {
            self.inner.try_grow(r, additional)?;
        } else {
            self.unspillable.fetch_add(additional, Ordering::Relaxed);
        }
        let held = self.inner.reserved() + self.unspillable.load(Ordering::Relaxed);
        if held <= self.limit {
            return Ok(());
        }
        if spill {
            self.inner.shrink(r, additional);
        } else {
            self.unspillable.fetch_sub(additional, Ordering::Relaxed);
        }
        Err(DataFusionError::ResourcesExhausted(format!(
            "Failed to allocate additional {additional} B for {}: {} B of the memory \
             limit of {} B are held",
            r.consumer().name(),
            held - additional,
            self.limit
        )))
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
        } else if r.consumer().can_spill() {
            self.inner.grow(r, additional)
        } else {
            self.unspillable.fetch_add(additional, Ordering::Relaxed);
        }
    }

    fn shrink(&self, r: &MemoryReservation, shrink: usize) {
        if exempt(r) {
            self.exempt.fetch_sub(shrink, Ordering::Relaxed);
        } else if r.consumer().can_spill() {
            self.inner.shrink(r, shrink)
        } else {
            self.unspillable.fetch_sub(shrink, Ordering::Relaxed);
        }
    }

    fn try_grow(&self, r: &MemoryReservation, additional: usize) -> Result<()> {
        if exempt(r) {
            self.grow(r, additional);
            return Ok(());
        }
        self.try_grow_within(r, additional)
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
            + self.unspillable.load(Ordering::Relaxed)
            + self.exempt.load(Ordering::Relaxed)
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.limit)
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

/// What to tell a user whose query failed for want of memory under `--memory
/// limit` at `threads` threads. The least a query runs in (over a 300 MB log,
/// bench/results/sqlc-memory-2026-11-27.txt): a sort reserves 10 MB per
/// thread for its merge, which cannot spill, and its batches come on top; a
/// GROUP BY of 700,000 groups under `ORDER BY n DESC LIMIT 5` needed 50M
/// (once 100M) at `-j 1` and `-j 2` (its spills are merged in memory, and the
/// top rows hold slices of its output).
pub fn too_little(limit: u64, threads: usize) -> String {
    format!(
        "--memory {}M at -j {threads} is less than this query needs: a sort needs about \
         {}M at -j {threads} (16M a thread), a GROUP BY more as its groups grow (50M-100M \
         for 700,000 groups); give it more memory or fewer threads",
        limit >> 20,
        16 * threads
    )
}
