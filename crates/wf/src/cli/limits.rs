//! Bounds on the options that size something wf allocates or spawns: a number
//! past its bound is a usage error (exit 2) that says the bound, never an
//! allocation of what was asked (`--io 100000000` once took 5.5 GB for the
//! queue's slots, `wf gen 1brc --stations 4294967296` aborted on a 128 GB
//! vector).
//!
//! Each bound is far beyond what helps: more queued chunks than 2 x the most
//! threads, chunks beyond a TiB (a chunk is read in small pieces, but offsets
//! past the end of any disk only risk overflow), more stations than 100 times
//! the 1BRC's 10,000. The scan's own bounds and their messages are
//! `wf_core::scan::ScanSettings`'s, which the Python package checks too.

use wf_core::scan;

/// `--io`: chunks queued for the workers (each a slot of the planner's queue).
pub(crate) const MAX_IO: usize = scan::MAX_IO;
/// `wf bench --threads`: worker threads of one run.
pub(crate) const MAX_THREADS: usize = 1024;
/// `wf bench --runs`: timed runs per setting.
pub(crate) const MAX_RUNS: usize = 10_000;
/// `wf gen 1brc --stations`: distinct station names (all held in memory).
pub(crate) const MAX_STATIONS: usize = 1_000_000;

/// A count from 1 (0 too if `zero`) to `max`.
pub(crate) fn count_upto(s: &str, max: usize, zero: bool) -> Result<usize, String> {
    scan::parse_count(s, max, zero).map_err(|e| e.to_string())
}

/// `--io N`: 1 to [`MAX_IO`] (0 is the default, 2 x threads).
pub(crate) fn io(s: &str) -> Result<usize, String> {
    count_upto(s, MAX_IO, true)
}

/// `wf gen 1brc --stations K`: 1 to [`MAX_STATIONS`].
pub(crate) fn stations(s: &str) -> Result<usize, String> {
    count_upto(s, MAX_STATIONS, false)
}

/// `wf bench --runs N`: 1 to [`MAX_RUNS`].
pub(crate) fn runs(s: &str) -> Result<usize, String> {
    count_upto(s, MAX_RUNS, false)
}

/// A size ([`scan::parse_size`]) of at most [`scan::MAX_SPAN`].
pub(crate) fn span(s: &str) -> Result<u64, String> {
    scan::parse_span(s).map_err(|e| e.to_string())
}

/// A size of at most [`scan::MAX_SPAN`], or 0 (off).
pub(crate) fn span_or_zero(s: &str) -> Result<u64, String> {
    scan::parse_span_or_zero(s).map_err(|e| e.to_string())
}

/// A comma-separated list of counts from 1 to `max` (`wf bench --threads`,
/// `--io`).
pub(crate) fn counts_upto(s: &str, max: usize, what: &str) -> Result<Vec<usize>, String> {
    let v = wf_core::bench::parse_counts(s).map_err(|e| e.to_string())?;
    match v.iter().find(|&&n| n > max) {
        Some(n) => Err(format!("{what} {n}: must be at most {max}")),
        None => Ok(v),
    }
}
