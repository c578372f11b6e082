//! The input and scan arguments, defined once: every command that reads inputs
//! flattens [`InputArgs`], every scan job [`ScanArgs`].

use std::path::PathBuf;

use clap::Args;

use wf_core::scan::{self, ScanOptions, ScanSettings};

/// Which inputs to read: the same for every command.
#[derive(Args, Clone)]
pub(crate) struct InputArgs {
    /// Files and directories (walked recursively); `-` or nothing for stdin.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Read more paths from FILE, one per line (`-` for stdin), or NUL-ended
    /// if FILE has a NUL byte: `find logs -name '*.log' -print0 | wf count
    /// --files-from -`.
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Follow symbolic links while walking directories (`--follow` is
    /// something else: reading files as they grow).
    #[arg(short = 'L', long = "follow-links", id = "follow_links")]
    pub(crate) follow: bool,
    /// Decode gzip, zstd, bzip2, xz and lzma files, known by their first bytes
    /// (auto); read every file as it is (never); or fail on a file that is not
    /// compressed (always).
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = parse_decompress)]
    pub(crate) decompress: scan::Decompress,
    /// Accept zstd frames whose window is up to 2^N bytes (10 to 31; zstd's
    /// default limit is 27, 128 MiB), as `zstd -d --long=N` or `--memory` does:
    /// data made with `zstd --long=31` needs `--zstd-window-log-max 31`, and up
    /// to 2 GiB of memory per file being decoded. E.g. `wf count
    /// --zstd-window-log-max 31 big.log.zst`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(10..=31))]
    pub(crate) zstd_window_log_max: Option<u32>,
}

fn parse_decompress(s: &str) -> Result<scan::Decompress, String> {
    match s {
        "auto" => Ok(scan::Decompress::Auto),
        "never" => Ok(scan::Decompress::Never),
        "always" => Ok(scan::Decompress::Always),
        _ => Err(format!("'{s}': expected auto, never or always")),
    }
}

impl InputArgs {
    /// `name` is one of the PATH arguments as given (not a file named in
    /// `--files-from`'s list, nor that list).
    pub(crate) fn names_path(&self, name: &str) -> bool {
        self.paths.iter().any(|p| p.display().to_string() == name)
    }

    pub(crate) fn collect(&self) -> scan::Collected {
        scan::decompress::set_zstd_window_log_max(self.zstd_window_log_max.unwrap_or(0));
        scan::InputSpec {
            paths: self.paths.clone(),
            files_from: self.files_from.clone(),
            follow_links: self.follow,
            decompress: self.decompress,
        }
        .collect()
    }
}

/// Input and run options shared by every scan job.
#[derive(Args, Clone)]
pub(crate) struct ScanArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Worker threads, at most 1024 [default, or 0: number of cores]. No more
    /// are started than the input has chunks, e.g. `-j 64` on one 100 MB file
    /// with `--chunk-size 8M` runs 13.
    #[arg(short = 'j', long = "threads", value_name = "N", value_parser = parse_threads)]
    threads: Option<usize>,
    /// Chunk size for splitting files, e.g. 64K, 8M, 1G (K, M, G: x1024; KB, MB,
    /// GB: x1000; at most 1T).
    #[arg(long, value_name = "SIZE", default_value = "8M", value_parser = super::limits::span)]
    chunk_size: u64,
    /// Chunks read ahead and queued for the workers, at most 4096 [default: 2 x threads].
    #[arg(long, value_name = "N", value_parser = super::limits::io)]
    io: Option<usize>,
    /// Map files with mmap instead of reading them with pread (no copy; but a file
    /// truncated during the run then kills wf).
    #[arg(long)]
    mmap: bool,
    /// Ask the kernel to read queued chunks ahead (posix_fadvise WILLNEED); off by
    /// default because it measured slower on a cold cache here (see README).
    #[arg(long)]
    readahead: bool,
    /// How far a helper thread per worker reads a big file ahead of the worker, into
    /// the page cache and without copying (sendfile to /dev/null); the worker reads
    /// what the helper has read, so a cold disk sees one stream of large requests per
    /// worker and never waits for a busy one. 0 turns the helpers off (the kernel's
    /// own readahead behind each worker). At most 1T.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = super::limits::span_or_zero)]
    ahead: u64,
    /// Whether a big file's pages read from the disk stay in the page cache:
    /// auto (dropped behind the workers for a file of more than a quarter of
    /// the memory, or of a container's memory limit, which could not stay
    /// cached for long; kept otherwise), keep
    /// or drop. A file found in the cache stays there (from the first page read from
    /// the disk on, the rest of a worker's region is dropped). The read-ahead helpers
    /// drop them, so not with --ahead 0, --mmap or --readahead. Dropping leaves the
    /// rest of the cache alone and, on a VM that hands idle memory back to its
    /// host, is faster cold (a 10 GiB `wf report`: 19.5 s against 24.1 s); the
    /// next run of the same file reads the disk again.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = parse_cache)]
    page_cache: scan::PageCache,
    /// The longest record (line) held whole where the whole record is needed
    /// (`wf sql`): a longer one is an error naming its input and byte offset,
    /// and is skipped; the rest is still read (exit status 2). `count`, `wf2`
    /// and `pangram` read longer records in pieces and never hold them, except
    /// under `--since`/`--until`, where a record is held whole to read its
    /// time. E.g. `--max-record 16M`. [default: 1GiB, or a quarter of
    /// --memory if that is less, but at least 8M]
    #[arg(long, value_name = "SIZE", value_parser = scan::parse_size)]
    max_record: Option<u64>,
    /// Show a progress bar on stderr even when it is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    pub(crate) progress: bool,
    /// Never show a progress bar.
    #[arg(long)]
    pub(crate) no_progress: bool,
    /// Print wall time, throughput, CPU and I/O figures to stderr after the run.
    #[arg(long)]
    pub(crate) stats: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `--page-cache`: auto, keep or drop.
fn parse_cache(s: &str) -> Result<scan::PageCache, String> {
    s.parse().map_err(|e: scan::SettingError| e.to_string())
}

/// A thread count: 0 (the cores) to [`scan::MAX_THREADS`].
fn parse_threads(s: &str) -> Result<usize, String> {
    scan::parse_threads(s).map_err(|e| e.to_string())
}

impl ScanArgs {
    /// The scan options, through the settings' one front door (the
    /// Python package's too); the bounds were checked as the flags were parsed.
    pub(crate) fn options(&self) -> ScanOptions {
        self.options_within(None)
    }

    /// [`ScanArgs::options`] of a command given `--memory`, which bounds
    /// the records held whole unless `--max-record` is given.
    pub(crate) fn options_within(&self, memory: Option<u64>) -> ScanOptions {
        let settings = ScanSettings {
            threads: self.threads,
            chunk_size: Some(self.chunk_size),
            io: self.io,
            mmap: self.mmap,
            readahead: self.readahead,
            ahead: Some(self.ahead),
            max_record: self.max_record,
            page_cache: self.page_cache,
            memory,
        };
        settings
            .options()
            .expect("bounds checked by the flags' parsers")
    }
}
