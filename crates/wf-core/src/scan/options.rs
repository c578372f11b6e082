//! What a caller gives a scan: its options (with their defaults and bounds)
//! and the counters it updates for a progress display.
//!
//! Why a file of its own: the planner (`plan.rs`) and the workers
//! (`worker.rs`) read the options, and the engine (`engine.rs`) starts both;
//! kept in the engine, the options made engine and planner import each other.

use std::sync::atomic::AtomicU64;

/// How to run a scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Worker threads.
    pub threads: usize,
    /// Nominal chunk size in bytes (records longer than this still work).
    pub chunk_size: u64,
    /// Bytes per `pread` within a chunk. Small reads keep the kernel's copy
    /// destination in L1: on this machine 32 KiB reads copy at about 8 GB/s, 64 KiB
    /// and larger at about 2 GB/s (see the README).
    pub read_size: usize,
    /// Record separator.
    pub sep: u8,
    /// Chunks queued (and read ahead) beyond the ones being processed.
    pub inflight: usize,
    /// Ask the kernel to read queued chunks ahead (`POSIX_FADV_WILLNEED`); off by
    /// default, since it measured slower here (see `scan/plan.rs`).
    pub readahead: bool,
    /// Map regular files (`mmap`) instead of reading them with `pread`. Saves the
    /// copy, but a file truncated while mapped would kill the process (SIGBUS),
    /// so it is opt-in (`--mmap`).
    pub mmap: bool,
    /// Bytes a helper thread per worker reads ahead of the worker in a file split
    /// into regions (see [`ReadAhead`](super::ahead::ReadAhead)); 0 turns the helpers off.
    pub ahead: u64,
    /// Copy streams to an unlinked temporary file first, so the job can read
    /// ranges back afterwards (see [`Outcome::read_range`](super::engine::Outcome::read_range)).
    pub spool_streams: bool,
    /// The longest record (bytes before its separator) held whole for a job
    /// that needs whole records; a longer one is an error of its input, and
    /// skipped (see [`Job::long_records`](crate::jobs::Job::long_records)). Jobs that take long records in
    /// pieces set their own, smaller bound.
    pub max_record: u64,
    /// Hand a stream's records to the workers as soon as the stream goes quiet
    /// for a moment, not only in full blocks (`wf sql`: a LIMIT over a FIFO
    /// that stays open needs the lines written so far; see `stream.rs`).
    pub eager_streams: bool,
    /// Cut streams at these record ends, not at every separator (`wf sql` on
    /// CSV, whose quoted fields may hold line breaks; see `stream.rs`).
    pub record_ends: Option<std::sync::Arc<dyn super::stream::RecordEnds>>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        ScanOptions {
            threads,
            chunk_size: DEFAULT_CHUNK,
            read_size: DEFAULT_READ,
            sep: b'\n',
            inflight: 0,
            readahead: false,
            mmap: false,
            ahead: DEFAULT_AHEAD,
            spool_streams: false,
            max_record: DEFAULT_MAX_RECORD,
            eager_streams: false,
            record_ends: None,
        }
    }
}

/// Default chunk size: 8 MiB (see the README's chunk-size sweep).
pub const DEFAULT_CHUNK: u64 = 8 << 20;

/// Default [`ScanOptions::max_record`]: 1 GiB.
pub const DEFAULT_MAX_RECORD: u64 = 1 << 30;

/// The most worker threads a scan starts, whatever it is asked for: past the
/// cores, more threads only add memory and switching (each holds a job state
/// and read buffers), and thousands exhaust the system's thread limits.
pub const MAX_THREADS: usize = 1024;

/// Default read size within a chunk: 32 KiB.
pub const DEFAULT_READ: usize = 32 << 10;

/// Default distance a [`ReadAhead`](super::ahead::ReadAhead) helper keeps ahead of its worker: 64 MiB.
pub const DEFAULT_AHEAD: u64 = 64 << 20;

/// Live counters a progress display can read.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of regular files planned (known up front).
    pub total: AtomicU64,
    /// Bytes processed so far.
    pub done: AtomicU64,
}
