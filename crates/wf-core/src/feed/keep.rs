//! `wf feed --since/--until`: the records of a time window, chosen where a
//! block's bytes are handed to a worker.
//!
//! Why here, and not by cutting the input: the planner cuts a regular file
//! to the span the time search found (`scan::seek`, with `--disorder` slack
//! on each side), so only that span is read; the records inside the slack,
//! and every record of an input read whole (a stream, a compressed file, a
//! file out of order), still need their time checked one by one. Doing it in
//! the feeding thread's copy keeps every block a plain byte range of its
//! input, which is what the failure accounting speaks of ("given bytes
//! a..b, never read c..d"): a worker's pipe then holds only some of a
//! block's bytes, so the copy notes where each run of kept records came from
//! ([`Keep::runs`]) and the accounting maps what the worker read back to
//! input offsets. Records left out are not "never read": they were not meant
//! for any worker.

use crate::jobs::time::TimeFormat;
use crate::jobs::window;

/// The window: records whose time is in `[since, until)` (microseconds).
#[derive(Debug, Clone, Copy)]
pub struct TimeFilter {
    pub since: i64,
    pub until: i64,
    /// Where a record's time is.
    pub format: TimeFormat,
}

/// Counts of what the window did, over all feeding threads.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WindowCounts {
    /// Records in the window, given to a worker.
    pub kept: u64,
    /// Records with a time outside the window.
    pub outside: u64,
    /// Records without a parsable time (in no window).
    pub untimed: u64,
}

impl WindowCounts {
    pub(crate) fn add(&mut self, o: WindowCounts) {
        self.kept += o.kept;
        self.outside += o.outside;
        self.untimed += o.untimed;
    }
}

/// One feeding thread's filter: the window, its counts, and where the runs
/// of kept records of the block being sent went.
pub(crate) struct Keep {
    pub filter: TimeFilter,
    pub counts: WindowCounts,
    /// The block being sent: `(p, o)` = from input byte `p` of the block's
    /// bytes in the pipe (counted from the block's start, without separators
    /// wf added) on, the pipe holds input bytes from offset `o` on.
    pub runs: Vec<(u64, u64)>,
    /// The pipe's input bytes before the block being sent.
    pub base: u64,
}

impl Keep {
    pub(crate) fn new(filter: TimeFilter) -> Keep {
        Keep {
            filter,
            counts: WindowCounts::default(),
            runs: Vec::new(),
            base: 0,
        }
    }

    /// Whether `rec` (one record) is in the window; counted either way.
    pub(crate) fn keep(&mut self, rec: &[u8]) -> bool {
        judge(&self.filter, rec, &mut self.counts)
    }

    /// The counts of `data`'s records (whole records ending in `sep`) if
    /// none is in the window, `None` at the first one that is: a
    /// `--per-block` worker is not started for a block it would get nothing of.
    pub(crate) fn none_kept(&self, data: &[u8], sep: u8) -> Option<WindowCounts> {
        let mut c = WindowCounts::default();
        for rec in data.split_inclusive(|&b| b == sep) {
            if judge(&self.filter, rec, &mut c) {
                return None;
            }
        }
        Some(c)
    }

    /// A run of kept records from input offset `off` starts at block pipe
    /// position `p`: noted unless it continues the previous run.
    pub(crate) fn mark(&mut self, p: u64, off: u64) {
        if let Some(&(lp, lo)) = self.runs.last() {
            if lo + (p - lp) == off {
                return;
            }
        }
        self.runs.push((p, off));
    }

    /// The runs `[from, to)` of the kept records of `data` (whole records
    /// ending in `sep`, the last perhaps without one).
    pub(crate) fn kept_runs(&mut self, data: &[u8], sep: u8) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let end = memchr::memchr(sep, &data[at..]).map_or(data.len(), |p| at + p + 1);
            if self.keep(&data[at..end]) {
                match out.last_mut() {
                    Some(r) if r.1 == at => r.1 = end,
                    _ => out.push((at, end)),
                }
            }
            at = end;
        }
        out
    }
}

/// Whether `rec` is in `f`'s window, counted in `c` as kept, outside or
/// without a time.
fn judge(f: &TimeFilter, rec: &[u8], c: &mut WindowCounts) -> bool {
    let window = (f.since, f.until);
    let kept = window::judge(f.format.time(rec), window, &mut c.outside, &mut c.untimed);
    c.kept += kept as u64;
    kept
}

/// How many input bytes of a block a worker consumed, given `rel`: how many
/// of the block's bytes in its pipe it read, `written`: how many were
/// written, `done`: the block was sent to its end, `runs`: where kept runs
/// came from (`None`: no filter, the pipe holds the block's bytes as they
/// are). Returns an offset into the block (`len`: all of it).
pub(crate) fn consumed(
    rel: u64,
    written: u64,
    done: bool,
    runs: Option<&[(u64, u64)]>,
    offset: u64,
    len: u64,
) -> u64 {
    if done && rel >= written {
        return len;
    }
    let rel = rel.min(written);
    let Some(runs) = runs else {
        return rel;
    };
    match runs.iter().rev().find(|r| r.0 <= rel) {
        Some(&(p, o)) => (o + (rel - p)).saturating_sub(offset).min(len),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumed_maps_pipe_bytes_back_to_input() {
        // Block at 100, 50 bytes; kept: 110..120 then 130..140 (20 bytes).
        let runs = [(0, 110), (10, 130)];
        let c = |rel, done| consumed(rel, 20, done, Some(&runs), 100, 50);
        assert_eq!(c(0, true), 10);
        assert_eq!(c(5, true), 15);
        // The end of the first run is the start of the second: the left-out
        // records between them are not unread.
        assert_eq!(c(10, true), 30);
        assert_eq!(c(15, true), 35);
        assert_eq!(c(20, true), 50);
        // Not sent to its end: what follows the last byte read is unread.
        assert_eq!(c(20, false), 40);
        // No filter: one to one.
        assert_eq!(consumed(7, 50, true, None, 100, 50), 7);
        assert_eq!(consumed(50, 50, true, None, 100, 50), 50);
        // All left out: nothing for the worker to read.
        assert_eq!(consumed(0, 0, true, Some(&[]), 100, 50), 50);
    }

    #[test]
    fn runs_of_kept_records() {
        let mut k = Keep::new(TimeFilter {
            since: 0,
            until: i64::MAX,
            format: TimeFormat::Iso,
        });
        let data =
            b"2026-11-27T10:00:00Z a\nno time\n2026-11-27T10:00:01Z b\n2026-11-27T10:00:02Z c";
        let runs = k.kept_runs(data, b'\n');
        assert_eq!(runs, vec![(0, 23), (31, data.len())]);
        assert_eq!(
            k.counts,
            WindowCounts {
                kept: 3,
                outside: 0,
                untimed: 1
            }
        );
    }
}
