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
    /// Whether the pages a helper reads from the disk stay in the page cache.
    pub page_cache: PageCache,
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
            page_cache: PageCache::Auto,
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

/// What becomes of a big file's pages that a scan's read-ahead helpers bring in
/// from the disk, once the worker has read them (`--page-cache`). Only a file split
/// into regions has helpers (one of more than a chunk, `ahead` not 0, not
/// `--readahead` or `--mmap`); a scan
/// without them keeps what it reads.
///
/// Why: a log read once from the disk leaves its pages in the page cache, where
/// they push out whatever was there, and on this machine (a VM that hands memory
/// the guest has not used lately back to its host) a page the cache has just
/// filled is slow to touch: cold, 10 GiB, primed (`bench/compare.py --cold`,
/// 2026-11-29), `dd bs=4M` spent 10.4 s in the kernel and 13.2 s in all;
/// with `iflag=nocache` (the pages dropped behind it, so the cache reuses the
/// same few) 1.0 s and 5.5 s. `wf report` on that log, 3 runs each: 19.5 s
/// dropping (4.6 s of system time) against 24.1 s keeping (13.2 s). The price:
/// the next run reads the file from the disk again, so only files too big to
/// stay cached for long (a quarter of the memory) drop by default, as
/// PostgreSQL reads a table of more than a quarter of its buffers through a
/// small ring of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageCache {
    /// Drop for a file of more than a quarter of the memory (the machine's, or
    /// its cgroup's limit if lower).
    #[default]
    Auto,
    /// Leave every page in the cache (the kernel's default).
    Keep,
    /// Drop behind the worker whatever the file's size.
    Drop,
}

impl PageCache {
    /// Whether a file of `size` bytes is read without keeping what the disk
    /// gave (a region found in the cache is always kept).
    pub fn drops(self, size: u64) -> bool {
        match self {
            PageCache::Keep => false,
            PageCache::Drop => true,
            PageCache::Auto => size > memory_bytes() / 4,
        }
    }
}

impl std::str::FromStr for PageCache {
    type Err = SettingError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(PageCache::Auto),
            "keep" => Ok(PageCache::Keep),
            "drop" => Ok(PageCache::Drop),
            _ => Err(SettingError::PageCache(s.into())),
        }
    }
}

/// The memory this process may fill: the machine's, or less under a cgroup's
/// limit (a container's; its page cache counts against the limit), in bytes;
/// `u64::MAX` where it cannot be told, so that `auto` drops nothing. Asked once
/// a process (a scan of many big files asks for each).
fn memory_bytes() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(memory_now)
}

fn memory_now() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let machine = match pages > 0 && size > 0 {
        true => (pages as u64).saturating_mul(size as u64),
        false => u64::MAX,
    };
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let limits = cgroup_limit_files(&cgroups).into_iter();
    let limit = limits.filter_map(|f| std::fs::read_to_string(f).ok());
    limit
        .filter_map(|s| s.trim().parse::<u64>().ok())
        .fold(machine, u64::min)
}

/// The files holding the memory limits of the cgroups named in the text of
/// `/proc/self/cgroup` and of their parents: cgroup v2's `memory.max` (`max`
/// when unlimited), v1's `memory.limit_in_bytes`.
fn cgroup_limit_files(cgroups: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (root, file) = match controllers {
            "" => ("/sys/fs/cgroup", "memory.max"),
            c if c.split(',').any(|c| c == "memory") => {
                ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
            }
            _ => continue,
        };
        let mut dir = path.trim_end_matches('/');
        loop {
            files.push(format!("{root}{dir}/{file}"));
            match dir.rfind('/') {
                Some(i) => dir = &dir[..i],
                None => break,
            }
        }
    }
    files
}

/// Live counters a progress display can read.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of regular files planned (known up front).
    pub total: AtomicU64,
    /// Bytes processed so far.
    pub done: AtomicU64,
}

/// `--io`: chunks queued for the workers (each a slot of the planner's queue).
pub const MAX_IO: usize = 4096;

/// `--chunk-size` and `--ahead`: 1 TiB.
pub const MAX_SPAN: u64 = 1 << 40;

/// Scan settings as a user gives them (the CLI's flags, the Python package's
/// keywords), before their defaults: the one place both make [`ScanOptions`],
/// with the bounds of what the scan allocates or starts checked (ripgrep's
/// `LowArgs` -> `HiArgs`). A bound is far beyond what helps: `--io 100000000`
/// once took 5.5 GB for the queue's slots; chunks beyond a TiB only risk
/// offsets past the end of any disk.
#[derive(Debug, Clone, Default)]
pub struct ScanSettings {
    /// Worker threads, at most [`MAX_THREADS`]; `None` or 0: the cores.
    pub threads: Option<usize>,
    /// Chunk size, at most [`MAX_SPAN`]; `None`: [`DEFAULT_CHUNK`].
    pub chunk_size: Option<u64>,
    /// Chunks queued, at most [`MAX_IO`]; `None` or 0: 2 x threads.
    pub io: Option<usize>,
    pub mmap: bool,
    pub readahead: bool,
    /// Read-ahead distance, at most [`MAX_SPAN`]; 0: off; `None`: [`DEFAULT_AHEAD`].
    pub ahead: Option<u64>,
    /// `None`: [`DEFAULT_MAX_RECORD`], or a quarter of `memory` if less.
    pub max_record: Option<u64>,
    pub page_cache: PageCache,
    /// The command's `--memory`, if given: a record held whole is then at
    /// most a quarter of it (at least [`DEFAULT_CHUNK`]) unless `max_record`
    /// says otherwise (a 3 GB
    /// record of `wf sql --memory 256M` was held to the 1 GiB default,
    /// 1.1 GB of RSS).
    pub memory: Option<u64>,
}

impl ScanSettings {
    /// The options, or the first setting past its bound.
    pub fn options(&self) -> Result<ScanOptions, SettingError> {
        let mut o = ScanOptions::default();
        if let Some(j) = self.threads.filter(|&j| j > 0) {
            o.threads = check_threads(j, &j.to_string())?;
        }
        if let Some(c) = self.chunk_size {
            if c == 0 {
                return Err(SettingError::ChunkSize(c.to_string()));
            }
            o.chunk_size = check_span(c, &c.to_string())?;
        }
        if let Some(n) = self.io {
            o.inflight = check_count(n as u128, &n.to_string(), MAX_IO, true)?;
        }
        if let Some(a) = self.ahead {
            o.ahead = check_span(a, &a.to_string())?;
        }
        o.readahead = self.readahead;
        o.mmap = self.mmap;
        o.page_cache = self.page_cache;
        // Not under a chunk: the scan holds chunks of that size whatever
        // --memory says (`--memory 64K`, a test of the report's spills,
        // refused its 16K lines).
        let within = self
            .memory
            .map_or(o.max_record, |m| (m / 4).max(DEFAULT_CHUNK));
        o.max_record = self.max_record.unwrap_or(o.max_record.min(within));
        Ok(o)
    }
}

/// A setting past its bound, or not a number; each says the value as given
/// (the CLI's usage errors, the Python package's `ValueError`s).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("'{0}': expected a number of threads")]
    ThreadsNumber(String),
    #[error("'{0}': at most {MAX_THREADS} threads")]
    Threads(String),
    #[error("'{0}': expected a whole number")]
    Number(String),
    #[error("'{input}': must be from {min} to {max}")]
    Count {
        input: String,
        min: usize,
        max: usize,
    },
    #[error(transparent)]
    Size(#[from] super::inputs::SizeError),
    #[error("'{0}': must be at most 1T ({MAX_SPAN} bytes)")]
    Span(String),
    #[error("chunk size '{0}': must be at least 1 byte")]
    ChunkSize(String),
    #[error("'{0}': expected auto, keep or drop")]
    PageCache(String),
}

/// `-j N`: 0 (the cores) to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<usize, SettingError> {
    let n: usize = (s.trim().parse()).map_err(|_| SettingError::ThreadsNumber(s.into()))?;
    check_threads(n, s)
}

/// A count from 1 (0 too if `zero`) to `max`.
pub fn parse_count(s: &str, max: usize, zero: bool) -> Result<usize, SettingError> {
    let n: u128 = (s.trim().parse()).map_err(|_| SettingError::Number(s.into()))?;
    check_count(n, s, max, zero)
}

/// A size ([`parse_size`](super::inputs::parse_size)) of at most [`MAX_SPAN`].
pub fn parse_span(s: &str) -> Result<u64, SettingError> {
    check_span(super::inputs::parse_size(s)?, s)
}

/// A size of at most [`MAX_SPAN`], or 0 (off).
pub fn parse_span_or_zero(s: &str) -> Result<u64, SettingError> {
    if s.trim() == "0" {
        Ok(0)
    } else {
        parse_span(s)
    }
}

fn check_threads(n: usize, s: &str) -> Result<usize, SettingError> {
    if n > MAX_THREADS {
        return Err(SettingError::Threads(s.into()));
    }
    Ok(n)
}

fn check_count(n: u128, s: &str, max: usize, zero: bool) -> Result<usize, SettingError> {
    let min = usize::from(!zero);
    if n < min as u128 || n > max as u128 {
        let input = s.into();
        return Err(SettingError::Count { input, min, max });
    }
    Ok(n as usize)
}

fn check_span(v: u64, s: &str) -> Result<u64, SettingError> {
    if v > MAX_SPAN {
        return Err(SettingError::Span(s.into()));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_options_with_the_defaults() {
        let o = ScanSettings::default().options().unwrap();
        let d = ScanOptions::default();
        assert_eq!(
            (o.threads, o.chunk_size, o.inflight),
            (d.threads, d.chunk_size, 0)
        );
        assert_eq!((o.ahead, o.max_record), (DEFAULT_AHEAD, DEFAULT_MAX_RECORD));
        let s = ScanSettings {
            threads: Some(3),
            chunk_size: Some(4096),
            io: Some(7),
            ahead: Some(0),
            mmap: true,
            ..ScanSettings::default()
        };
        let o = s.options().unwrap();
        assert_eq!(
            (o.threads, o.chunk_size, o.inflight, o.ahead),
            (3, 4096, 7, 0)
        );
        assert!(o.mmap && !o.readahead);
        assert_eq!(o.page_cache, PageCache::Auto);
        // --memory bounds the records held whole, unless --max-record is given.
        let bounded = |memory, max_record| ScanSettings {
            memory,
            max_record,
            ..ScanSettings::default()
        };
        let max_record = |s: ScanSettings| s.options().unwrap().max_record;
        assert_eq!(max_record(bounded(Some(256 << 20), None)), 64 << 20);
        assert_eq!(
            max_record(bounded(Some(64 << 30), None)),
            DEFAULT_MAX_RECORD
        );
        assert_eq!(max_record(bounded(Some(256 << 20), Some(1 << 30))), 1 << 30);
        assert_eq!(max_record(bounded(Some(64 << 10), None)), DEFAULT_CHUNK);
        // Auto drops only what could not stay cached for long.
        assert!(!PageCache::Auto.drops(1 << 30) || memory_bytes() < 4 << 30);
        assert!(PageCache::Auto.drops(memory_bytes() / 4 + 1));
        assert!(PageCache::Drop.drops(1) && !PageCache::Keep.drops(u64::MAX));
        // A cgroup's limit, and its parents', count (v2, then v1 as here).
        assert_eq!(
            cgroup_limit_files("0::/user.slice/a\n"),
            [
                "/sys/fs/cgroup/user.slice/a/memory.max",
                "/sys/fs/cgroup/user.slice/memory.max",
                "/sys/fs/cgroup/memory.max"
            ]
        );
        let v1 = "5:devices:/\n4:memory:/process_api/x\n0::/\n";
        assert_eq!(
            cgroup_limit_files(v1),
            [
                "/sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory.max"
            ]
        );
        // 0 threads: the cores.
        let zero = ScanSettings {
            threads: Some(0),
            ..ScanSettings::default()
        };
        assert_eq!(zero.options().unwrap().threads, d.threads);
    }

    #[test]
    fn settings_past_their_bounds_say_so_as_the_cli_does() {
        let err = |s: ScanSettings| s.options().unwrap_err().to_string();
        let threads = ScanSettings {
            threads: Some(1025),
            ..ScanSettings::default()
        };
        assert_eq!(err(threads), "'1025': at most 1024 threads");
        let chunk = ScanSettings {
            chunk_size: Some(MAX_SPAN + 1),
            ..ScanSettings::default()
        };
        let none = ScanSettings {
            chunk_size: Some(0),
            ..ScanSettings::default()
        };
        assert_eq!(err(none), "chunk size '0': must be at least 1 byte");
        assert_eq!(
            err(chunk),
            "'1099511627777': must be at most 1T (1099511627776 bytes)"
        );
        let io = ScanSettings {
            io: Some(4097),
            ..ScanSettings::default()
        };
        assert_eq!(err(io), "'4097': must be from 0 to 4096");
        assert_eq!(
            parse_threads("x").unwrap_err().to_string(),
            "'x': expected a number of threads"
        );
        assert_eq!(parse_threads(" 1024 "), Ok(1024));
        assert_eq!(
            "kept".parse::<PageCache>().unwrap_err().to_string(),
            "'kept': expected auto, keep or drop"
        );
        assert_eq!(" drop".parse::<PageCache>(), Ok(PageCache::Drop));
        assert_eq!(
            parse_span("2T").unwrap_err().to_string(),
            "'2T': must be at most 1T (1099511627776 bytes)"
        );
        assert_eq!(parse_span("1T"), Ok(MAX_SPAN));
        assert_eq!(parse_span_or_zero(" 0"), Ok(0));
        assert!(parse_span("0")
            .unwrap_err()
            .to_string()
            .contains("invalid size '0'"));
        assert_eq!(
            parse_count("0", 5, false).unwrap_err().to_string(),
            "'0': must be from 1 to 5"
        );
        assert_eq!(
            parse_count("-1", 5, true).unwrap_err().to_string(),
            "'-1': expected a whole number"
        );
    }
}
