//! `wf feed --since/--until`: each regular file narrowed to the span the
//! time search finds, and what `--stats` says about it.
//!
//! Why this shape: the search is the one `wf count --since` uses
//! (`scan::seek`: a binary search over offsets with `--disorder` slack), so
//! the feed's planner cuts blocks of the span only and the last hour of a
//! month-long log reads about an hour's bytes; a BGZF or multi-frame zstd
//! file is searched by block the same way. The records inside the slack,
//! and every record of an input read whole (streams, compressed files, files
//! out of order), are filtered one by one where a block is handed to a
//! worker (`wf_core::feed`, `keep.rs`), so every block stays a byte range of
//! its input and a failed worker's report still names input ranges. Before
//! any worker is fed, the first and last 32 MiB of each span are checked
//! for records further back than `--disorder` (a log of hour-long requests
//! logged when they ended lost records near `--until`); then the files
//! are searched again with twice the farthest jump back seen, then read
//! whole, as `wf count` does. The spans of BGZF and zstd files found by
//! block are not checked (a known gap: their edges are not at block starts).

use wf_core::feed::FeedOptions;
use wf_core::jobs::count::Count;
use wf_core::jobs::time::TimeFormat;
use wf_core::jobs::window::{self, Window};
use wf_core::scan::seek::{self, Whole};
use wf_core::scan::{self, Input, ScanOptions, Source};

/// What the search did, for `--stats`.
pub(crate) struct Searched {
    /// Counters, as count's `--stats` shows them.
    pub(crate) extra: Vec<(String, u64)>,
    /// One line per input: searched (and the bytes read) or read whole.
    pub(crate) lines: Vec<String>,
}

/// Inputs named one by one in `--stats`; more are counted.
const NAMED: usize = 20;

/// Narrow every regular file of `inputs` to the span that can hold `w`
/// (records' times by `format`, ending in `opts.sep`); files out of order or
/// that cannot be searched are read whole (said on stderr).
pub(crate) fn narrow(
    inputs: &mut [Input],
    w: &seek::Window,
    format: TimeFormat,
    opts: &FeedOptions,
) -> Searched {
    let time = move |r: &[u8]| format.time(r);
    let sep = opts.sep;
    // The check reads on as many threads as there are workers, with their
    // bound on a record.
    let check = ScanOptions {
        sep,
        threads: opts.workers.max(1),
        max_record: opts.max_record,
        ..ScanOptions::default()
    };
    let given = inputs.to_vec();
    let (mut w, mut first) = (*w, true);
    let seeked = loop {
        inputs.clone_from_slice(&given);
        let seeked = seek::seek_all(inputs, &w, sep, &time, seek::Blocks::Offsets);
        let far = edges_far_back(&given, inputs, &check, &time, w.disorder);
        if far.is_empty() {
            break seeked;
        }
        let wider = super::super::time::wider(&far, &given, w.disorder, first);
        (w.disorder, first) = (wider, false);
    };
    let mut extra = seeked.stats();
    extra.push((
        "inputs searched by time".into(),
        (inputs.len() - seeked.whole.len()) as u64,
    ));
    extra.extend(super::super::time::whole_read(&seeked, inputs));
    let mut lines: Vec<String> = inputs
        .iter()
        .enumerate()
        .take(NAMED)
        .map(|(i, inp)| describe(inp, seeked.whole.iter().find(|(k, _)| *k == i)))
        .collect();
    if inputs.len() > NAMED {
        lines.push(format!("time search: {} more inputs", inputs.len() - NAMED));
    }
    Searched { extra, lines }
}

/// The files searched whose spans' first and last 32 MiB (as `wf sql`'s
/// push-down checks them) hold records further back than `disorder`: the
/// search's slack does not hold there, and records of the window may lie
/// outside the span. Checked before any worker is fed (the workers cannot
/// be fed again).
fn edges_far_back(
    given: &[Input],
    seeked: &[Input],
    opts: &ScanOptions,
    time: &(dyn Fn(&[u8]) -> Option<i64> + Sync),
    disorder: i64,
) -> Vec<(usize, i64, u64)> {
    let (of, edges) = seek::span_edges(given, seeked, seek::EDGE);
    if edges.is_empty() {
        return Vec::new();
    }
    let sep = opts.sep;
    let check = Window {
        inner: Count { sep },
        since: i64::MIN,
        until: i64::MAX,
        sep,
        time,
    };
    // An input error met here is left to the feed, which reads the same
    // bytes and names it.
    let mut out = scan::run(&check, edges, opts, None);
    let mut far = window::far_back_of(&mut out.state.order, &of);
    far.retain(|f| f.1 > disorder);
    far
}

/// "time search: a.log: searched, bytes 100..200 of 1000 read", or why
/// the input is read whole.
fn describe(inp: &Input, whole: Option<&(usize, Whole)>) -> String {
    let how = match (whole.map(|w| &w.1), &inp.source, inp.span) {
        (Some(Whole::OutOfOrder { .. }), ..) => "read whole and filtered (out of order)".into(),
        (Some(Whole::Io(_)), ..) => "read whole and filtered (cannot be searched)".into(),
        (Some(Whole::Slack), ..) => "read whole and filtered (--disorder 10000w or more)".into(),
        (_, Source::File { size, .. }, Some((a, b))) if b <= a => {
            format!("searched, outside the window (bytes read: the probes only, of {size})")
        }
        (_, Source::File { size, .. }, Some((a, b))) => {
            format!("searched, bytes {a}..{b} of {size} read ({} bytes)", b - a)
        }
        (Some(Whole::NoSizes), ..) => {
            "read whole and filtered (compressed, frames without their sizes)".into()
        }
        (_, Source::Compressed { .. }, Some((a, b))) if b <= a => {
            "skipped (its head is after the window)".into()
        }
        (_, Source::Compressed { size, .. }, Some((a, b))) if b != u64::MAX => {
            format!("searched by block, compressed bytes {a}..{b} of {size} read")
        }
        (_, Source::Compressed { .. }, Some(_)) => "read whole and filtered (compressed)".into(),
        (_, Source::Compressed { .. }, None) => "read whole and filtered (compressed)".into(),
        _ => "read whole and filtered (a stream)".into(),
    };
    format!("time search: {}: {how}", inp.name)
}
