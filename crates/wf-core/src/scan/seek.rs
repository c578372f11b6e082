//! `--since`/`--until` that seek: the byte span of a time-ordered file that can
//! hold records of a time window, found by binary search over offsets, so the
//! last hour of a month-long log reads about an hour's bytes.
//!
//! Why this shape: a log file is in time order up to request durations, so a
//! probe (an offset, aligned to the next record start, the time of the first
//! record there that has one) says on which side of a time the records around
//! it lie. With `disorder` slack d (a record is never more than d earlier than
//! one before it), a record at r with time t_r < since - d proves that every
//! record before r is earlier than since; one with t_r > until + d proves every
//! record after r is at or past until. Each search is about log2(size) probes
//! of 4 KiB (about 22 for 10 GiB), and the result is set as [`Input::span`], so the
//! scan cuts and reads the span like any file (chunks, regions, threads)
//! without one option more. The span is a superset of the window: the job
//! ([`crate::jobs::window`]) still checks every record's time.
//!
//! The order is checked, not trusted: the probes' times (the searches', the
//! file's eighths, every record of its first and last 4 KiB or blocks, and
//! up to 128 spread over each side the span leaves out,
//! [`Prober::probe_skipped`]) are checked for order afterwards; a file where
//! one goes back by more than the slack is read whole (and the caller says
//! so). A run joined out of order shorter than 1/128 of a side can still
//! hide between the probes: only a whole read can rule that out, which is
//! what `--disorder` beyond the log's span does. Streams cannot be cut at
//! offsets and are read whole; the window job filters them all the same.
//!
//! Compressed files ([`seek_all`]): a BGZF file or a zstd file of several
//! frames is searched the same way over its blocks (members, frames), a probe
//! decoding from a block start to the first record with a time after the
//! first separator; the span is a compressed range at block starts (the
//! record begun before the range is dropped, the one begun in its last block
//! finished). The block starts are found by walking the headers (exact; it
//! touches each header's page, not the data decoded). A job without offsets
//! decodes the range in parts on every core (`split.rs`). A job with offsets
//! ([`Blocks::Offsets`]: `wf report`'s failed lines, `wf sql`'s `_offset`)
//! decodes it front to back from its start, whose decoded offset is the sum
//! of the decoded sizes of the blocks before it: a BGZF member's trailer
//! says its size (ISIZE, 4 bytes just before the next header, so on the page
//! the walk touches anyway), a zstd frame's header may (Frame_Content_Size;
//! `zstd --no-content-size` leaves it out: such a file is read whole,
//! [`Whole::NoSizes`]). So its records get exactly the offsets a whole read
//! gives. A single gzip member (or gzip that is not BGZF), a zstd file of
//! one frame, bzip2 and xz are read whole and filtered.

use std::fs::File;
use std::io::{self, Read};

use super::decompress::Codec;
use super::inputs::{Input, Source};
use super::split::{self, Parts};
use super::{read_full_at, record_start_at};

/// The window asked for, in microseconds since the epoch.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Records before this are not wanted (`i64::MIN`: no bound).
    pub since: i64,
    /// Records at or after this are not wanted (`i64::MAX`: no bound).
    pub until: i64,
    /// How much earlier than one before it a record may be.
    pub disorder: i64,
}

/// Why a file was read whole.
#[derive(Debug)]
pub enum Whole {
    /// A stream or a compressed file: no byte offsets to search.
    NotSeekable,
    /// A zstd file searched for a job with offsets whose frames before the
    /// range found do not all say their decoded size (`zstd
    /// --no-content-size`): the range's decoded offset is unknown.
    NoSizes,
    /// A probe at byte `at` found time `back_us` microseconds earlier than one
    /// before it: more than the slack.
    OutOfOrder { at: u64, back_us: i64 },
    /// The file could not be probed.
    Io(io::Error),
    /// A file (regular or compressed), with a slack of [`WHOLE`] or more
    /// (`--disorder 10000w`, or a search done again after records went back
    /// further than a wider slack still): not searched, read whole.
    Slack,
}

/// A slack past any log's span (`--disorder 10000w`, 192 years): with it
/// [`seek_all`] searches no file ([`Whole::Slack`]: read whole).
/// The last round of a search done again; a round after it could find a
/// record further back still (a line dated 2300 among today's) and never
/// end.
pub const WHOLE: i64 = 10_000 * 7 * 86_400 * 1_000_000;

/// The slack of a search done again after records read went back `most`
/// further than one before them: the `first` time twice that, then
/// [`WHOLE`] (a search with the slack it saw can find a record further back
/// still). `wf count`, `wf feed` and `wf sql` all widen so.
pub fn wider(most: i64, first: bool) -> i64 {
    match first {
        true => most.saturating_mul(2).min(WHOLE),
        false => WHOLE,
    }
}

/// What the search did to the inputs.
#[derive(Debug, Default)]
pub struct Seeked {
    /// Bytes of regular files left out of the spans.
    pub skipped: u64,
    /// Compressed bytes of BGZF and multi-frame zstd files left out.
    pub skipped_compressed: u64,
    /// Files left out whole: their last record is before the window, or
    /// (compressed, not searched by block) their first is after it.
    pub files_skipped: u64,
    /// Bytes the probes read.
    pub probed: u64,
    /// Inputs read whole, by index, and why.
    pub whole: Vec<(usize, Whole)>,
}

impl Seeked {
    /// The search's figures as `--stats` lines (label, value), in the order
    /// every command shows them.
    pub fn stats(&self) -> Vec<(String, u64)> {
        vec![
            ("bytes skipped by the time search".into(), self.skipped),
            ("bytes read by the time search".into(), self.probed),
            (
                "compressed bytes skipped by the time search".into(),
                self.skipped_compressed,
            ),
            (
                "files skipped by the time search".into(),
                self.files_skipped,
            ),
        ]
    }
}

/// How far a probe reads for a record with a time before it gives up (and
/// counts as "no time after here", which only makes the span larger).
const PROBE_LIMIT: usize = 256 << 10;
/// A probe's first read: a few records of most logs.
const PROBE_READ: usize = 4 << 10;
/// Probes at most on each side of a span, over what it leaves out
/// ([`Prober::probe_skipped`]).
const SKIPPED_PROBES: u64 = 128;
/// Skipped probes are at least this many probe reads apart.
const SKIPPED_STEP: u64 = 32;
/// Probes at doubling distances from each edge of a span ([`Prober::probe_near`]).
const NEAR_PROBES: u32 = 12;
/// Or, in a compressed file, this many blocks (a probe decodes about one:
/// a BGZF member is 64 KiB decoded).
const SKIPPED_BLOCKS: u64 = 4;
/// The searches stop when the boundary is known to within this many bytes
/// (each probe in it would read the same records again).
const CLOSE_ENOUGH: u64 = PROBE_READ as u64;

/// Set the span of every regular file of `inputs` to the records that can lie
/// in `w`; `time` gives a record's time. Returns what it did.
pub fn seek(
    inputs: &mut [Input],
    w: &Window,
    sep: u8,
    time: &(dyn Fn(&[u8]) -> Option<i64> + Sync),
) -> Seeked {
    seek_all(inputs, w, sep, time, Blocks::No)
}

/// Whether [`seek_all`] searches BGZF and multi-frame zstd files by block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocks {
    /// No: they are read whole (a scan that cannot take a compressed range).
    No,
    /// Yes, for a job without offsets (decoded in parts).
    Parts,
    /// Yes, for a job with offsets too: a range is kept only where the
    /// decoded offset of its start is known (BGZF members' ISIZE, zstd
    /// frames' content sizes), so records get the offsets a whole read gives.
    Offsets,
}

/// Of the regular files whose span a search narrowed (`given` before it,
/// `seeked` after), the first and last `edge` bytes of each span (the whole
/// span when under twice that), as inputs of their own, each with the index
/// of its file: where records of a window lie beside bytes left out, for a
/// check of their order (`jobs::window::Order`) before the window is read.
pub fn span_edges(given: &[Input], seeked: &[Input], edge: u64) -> (Vec<usize>, Vec<Input>) {
    let (mut of, mut edges) = (Vec::new(), Vec::new());
    for (i, (g, s)) in given.iter().zip(seeked).enumerate() {
        let Some((a, b)) = s.span.filter(|(a, b)| a < b && narrowed(g, s, false)) else {
            continue;
        };
        let spans = match b - a > 2 * edge {
            true => vec![(a, a + edge), (b - edge, b)],
            false => vec![(a, b)],
        };
        for span in spans {
            of.push(i);
            edges.push(Input {
                span: Some(span),
                ..s.clone()
            });
        }
    }
    (of, edges)
}

/// Bytes checked at each end of a span by `wf sql`'s push-down and `wf feed
/// --since` ([`span_edges`]): a 1-hour window of the 1 GiB bench log is
/// checked whole, a wide one in ~60 ms (checking the whole span of `time >=`
/// most of the log took `count(*)` from 0.26 to 0.85 s).
pub const EDGE: u64 = 32 << 20;

/// Whether the search narrowed regular file `given` (or, with
/// `compressed`, a BGZF or zstd file searched by block) to a span that
/// leaves bytes out (`seeked`): only then can records of the window lie
/// outside what is read, and the order of the records read tell.
pub fn narrowed(given: &Input, seeked: &Input, compressed: bool) -> bool {
    let size = match seeked.source {
        Source::File { size, .. } => size,
        Source::Compressed { size, .. } if compressed => size,
        _ => return false,
    };
    seeked.span.is_some() && seeked.span != given.span && seeked.span != Some((0, size))
}

/// [`seek`], and with `blocks` the BGZF and multi-frame zstd files too.
pub fn seek_all(
    inputs: &mut [Input],
    w: &Window,
    sep: u8,
    time: &(dyn Fn(&[u8]) -> Option<i64> + Sync),
    blocks: Blocks,
) -> Seeked {
    let mut out = Seeked::default();
    for (i, inp) in inputs.iter_mut().enumerate() {
        let (path, size) = match &inp.source {
            // Compressed files too: searched by block in this round, a span
            // still holding a jump back past WHOLE had `wf report` search
            // again for ever.
            Source::File { .. } | Source::Compressed { .. } if w.disorder >= WHOLE => {
                out.whole.push((i, Whole::Slack));
                continue;
            }
            Source::File { path, size } => (path, *size),
            Source::Compressed { path, size, codec } if inp.span.is_none() => {
                let file = (path.clone(), *size, *codec);
                inp.span = match blocks {
                    Blocks::No => None,
                    _ => seek_blocks(&mut out, i, file.clone(), w, (sep, time)),
                };
                if blocks == Blocks::Offsets && !offsets_known(&mut out, i, &mut inp.span, &file) {
                    continue;
                }
                // Only a file read whole for want of blocks (not one out of
                // order) may be left out by its head.
                let why = out.whole.last().filter(|(k, _)| *k == i);
                if inp.span.is_some() || why.is_some_and(|(_, y)| !matches!(y, Whole::NotSeekable))
                {
                    continue;
                }
                if starts_after(&mut out, &file_of(inp), w, (sep, time)) {
                    out.whole.retain(|(k, _)| *k != i);
                    out.files_skipped += 1;
                    inp.span = Some((*size, *size));
                } else if blocks == Blocks::No {
                    out.whole.push((i, Whole::NotSeekable));
                }
                continue;
            }
            _ => {
                out.whole.push((i, Whole::NotSeekable));
                continue;
            }
        };
        let (s, e) = inp.span.unwrap_or((0, size));
        let found = File::open(path).map_err(Whole::Io).and_then(|f| {
            let mut p = Prober::new(Target::Plain(&f), sep, time);
            let found = p.span(size, w);
            out.probed += p.read;
            let span = found.map_err(Whole::Io)?;
            p.check(w.disorder).map(|_| span)
        });
        match found {
            Ok((a, b)) => {
                let (a, b) = (a.max(s), b.min(e));
                inp.span = Some((a, b.max(a)));
                out.skipped += (e - s).saturating_sub(b.saturating_sub(a));
                out.files_skipped += u64::from(b <= a && e > s);
            }
            Err(why) => out.whole.push((i, why)),
        }
    }
    out
}

/// For a job with offsets: whether the decoded offset of the start of the
/// compressed range found for input `i` is known; if not, the range is
/// dropped (the file is read whole) and the reason kept.
fn offsets_known(
    out: &mut Seeked,
    i: usize,
    span: &mut Option<(u64, u64)>,
    (path, size, codec): &(std::path::PathBuf, u64, Codec),
) -> bool {
    let Some((a, b)) = *span else {
        return true;
    };
    if b <= a || split::decoded_at(path, *codec, *size, a).is_some() {
        return true;
    }
    *span = None;
    out.skipped_compressed -= size - (b - a);
    out.whole.push((i, Whole::NoSizes));
    false
}

/// How records end and a record's time.
type Records<'a> = (u8, &'a (dyn Fn(&[u8]) -> Option<i64> + Sync));

/// A compressed input's path, size and codec.
fn file_of(inp: &Input) -> (std::path::PathBuf, u64, Codec) {
    match &inp.source {
        Source::Compressed { path, size, codec } => (path.clone(), *size, *codec),
        _ => unreachable!("only compressed inputs"),
    }
}

/// Whether a compressed file read whole can be left out: every record of
/// its decoded head (256 KiB) with a time is at or after `until`, and the
/// latest after `until + disorder` (a rotated log newer than the window;
/// the bytes after the head trusted to go back no further than that), or
/// the head is the whole file. Its last time cannot be known without
/// decoding it all, so an older one is read. Only the first record was
/// looked at before: a file starting at 10:00 whose next records were 09:00
/// to 09:59 gave none of them to `--until 09:30`, exit 0.
fn starts_after(
    out: &mut Seeked,
    (path, _, codec): &(std::path::PathBuf, u64, Codec),
    w: &Window,
    (sep, time): Records<'_>,
) -> bool {
    if w.until == i64::MAX {
        return false;
    }
    let mut head = Vec::new();
    let read = super::decompress::open(path, *codec)
        .and_then(|r| r.take(PROBE_LIMIT as u64).read_to_end(&mut head));
    out.probed += head.len() as u64;
    if read.is_err() {
        return false; // the scan names the error
    }
    let eof = head.len() < PROBE_LIMIT;
    let mut latest = None;
    let mut recs = head.split_inclusive(|&c| c == sep).peekable();
    while let Some(rec) = recs.next() {
        if rec.last() != Some(&sep) && !(eof && recs.peek().is_none()) {
            break;
        }
        match time(rec) {
            Some(t) if t < w.until => return false,
            Some(t) => latest = latest.max(Some(t)),
            None => {}
        }
    }
    latest.is_some_and(|t| eof || t > w.until.saturating_add(w.disorder))
}

/// Search compressed file `i` by its blocks (see the module comment): its
/// span becomes the compressed range of block starts that holds the window.
fn seek_blocks(
    out: &mut Seeked,
    i: usize,
    (path, size, codec): (std::path::PathBuf, u64, Codec),
    w: &Window,
    (sep, time): Records<'_>,
) -> Option<(u64, u64)> {
    let why = match blocks_of(i, &path, size, codec) {
        Ok(Some(p)) => return search_blocks(out, i, &p, w, (sep, time)),
        Ok(None) => Whole::NotSeekable,
        Err(e) => Whole::Io(e),
    };
    out.whole.push((i, why));
    None
}

/// [`seek_blocks`] once the blocks are known.
fn search_blocks(
    out: &mut Seeked,
    i: usize,
    parts: &Parts,
    w: &Window,
    (sep, time): Records<'_>,
) -> Option<(u64, u64)> {
    let size = parts.size;
    let n = parts.starts.len() as u64;
    let mut p = Prober::new(Target::Blocks(parts), sep, time);
    let found = p.span(n, w);
    out.probed += p.read;
    let found = found
        .map_err(Whole::Io)
        .and_then(|span| p.check(w.disorder).map(|_| span));
    match found {
        Ok((a, b)) => {
            out.skipped_compressed += size - (b - a);
            Some((a, b))
        }
        Err(why) => {
            out.whole.push((i, why));
            None
        }
    }
}

/// Every block start of a BGZF file or a zstd file of several frames;
/// `None` for other compressed files (read whole).
fn blocks_of(
    i: usize,
    path: &std::path::Path,
    size: u64,
    codec: Codec,
) -> io::Result<Option<Parts>> {
    if !matches!(codec, Codec::Gzip | Codec::Zstd) {
        return Ok(None);
    }
    let map = split::map_file(path)?;
    let data = &map[..(size as usize).min(map.len())];
    let (starts, bgzf) = match codec {
        Codec::Zstd => (split::zstd_frames(data, 1), false),
        _ => match split::bgzf_blocks(data, 1) {
            Some((starts, true)) => (starts, true),
            _ => return Ok(None),
        },
    };
    if starts.len() < 2 {
        return Ok(None);
    }
    Ok(Some(Parts {
        input: i,
        path: path.to_path_buf(),
        codec,
        size,
        starts,
        bgzf,
        range: (0, size),
    }))
}

/// A file's first or last bytes.
#[derive(Clone, Copy)]
enum Edge {
    Head,
    Tail,
}

/// Where probes read: a regular file at byte offsets, or a compressed file
/// at its blocks (a probe's position is a block's index).
enum Target<'f> {
    Plain(&'f File),
    Blocks(&'f Parts),
}

/// The probes of one file.
struct Prober<'a> {
    target: Target<'a>,
    sep: u8,
    time: &'a (dyn Fn(&[u8]) -> Option<i64> + Sync),
    /// (record start, time) of every probe that found a time (for blocks,
    /// the start of the block probed).
    probes: Vec<(u64, i64)>,
    /// Bytes read (compressed bytes, for blocks).
    read: u64,
    /// The largest step back between records decoded in a run from a
    /// block ([`Prober::edge_block`]), and the block's start.
    block_back: Option<(u64, i64)>,
}

impl<'a> Prober<'a> {
    fn new(target: Target<'a>, sep: u8, time: &'a (dyn Fn(&[u8]) -> Option<i64> + Sync)) -> Self {
        Prober {
            target,
            sep,
            time,
            probes: Vec::new(),
            read: 0,
            block_back: None,
        }
    }

    /// The searches stop when the boundary is known to within this much of
    /// the positions probed (bytes, or blocks: exact).
    fn close(&self) -> u64 {
        match self.target {
            Target::Plain(_) => CLOSE_ENOUGH,
            Target::Blocks(_) => 0,
        }
    }

    /// Where "no record after here" is: the file's end.
    fn end(&self, size: u64) -> u64 {
        match self.target {
            Target::Plain(_) => size,
            Target::Blocks(p) => p.size,
        }
    }

    /// The span `[start, end)` of a file of `size` bytes (or blocks) that
    /// holds every record of `w` if the file is in order up to the slack
    /// (for blocks, compressed offsets of block starts).
    fn span(&mut self, size: u64, w: &Window) -> io::Result<(u64, u64)> {
        // Eighths of the file, for the order check: the search's own probes
        // close in on one place and would not see two runs joined out of order.
        for k in 0..8 {
            self.probe(size / 8 * k, size)?;
        }
        let lo = w.since.saturating_sub(w.disorder);
        let hi = w.until.saturating_add(w.disorder);
        if let Target::Blocks(p) = self.target {
            // The first and last blocks' records, for the order check, as a
            // plain file's head and tail are read below.
            self.edge_block(p, 0)?;
            // A BGZF file ends with an empty block.
            let n = p.starts.len();
            if n > 1 && !self.edge_block(p, n - 1)? && n > 2 {
                self.edge_block(p, n - 2)?;
            }
        }
        if let Target::Plain(f) = self.target {
            // A rotated log older or newer than the window: skipped after
            // every record of its tail or its head. On its last record
            // alone, a long download logged 2 h late at the end of a day's
            // log had the day skipped (0 records, exit 0); each of them is
            // a probe, so the order check sees such a record.
            if self
                .edge_times(f, size, Edge::Tail)?
                .is_some_and(|(_, max)| max < lo)
            {
                return Ok((size, size));
            }
            if self
                .edge_times(f, size, Edge::Head)?
                .is_some_and(|(min, _)| min > hi)
            {
                return Ok((0, 0));
            }
        }
        let start = match w.since {
            i64::MIN => 0,
            _ => self.last_before(size, lo)?,
        };
        let end = match w.until {
            i64::MAX => self.end(size),
            _ => self.first_after(size, hi)?,
        };
        let end = end.max(start);
        self.probe_skipped(start, end, size)?;
        Ok((start, end))
    }

    /// Probes spread over what the span `[start, end)` leaves out, for the
    /// order check ([`Prober::check`]). The searches close in on the
    /// window's edges and the eighths see a run joined out of order only if
    /// it is about an eighth of the file: `cat big.log small.log` of the
    /// same days, small.log a tenth of it, had `--until` miss every record
    /// of small.log in the window (exit 0, nothing said). Up to
    /// [`SKIPPED_PROBES`] on each side, so a run of 1/128 of a side or more
    /// is seen; no closer than [`SKIPPED_STEP`] probe reads apart, so that
    /// they read at most ~3% of what they spare (blocks: one probe in
    /// [`SKIPPED_BLOCKS`]).
    fn probe_skipped(&mut self, start: u64, end: u64, size: u64) -> io::Result<()> {
        let (start, end) = match self.target {
            Target::Plain(_) => (start, end),
            Target::Blocks(p) => {
                let index = |at: u64| p.starts.partition_point(|&s| s < at) as u64;
                (index(start), index(end))
            }
        };
        let min_step = match self.target {
            Target::Plain(_) => SKIPPED_STEP * PROBE_READ as u64,
            Target::Blocks(_) => SKIPPED_BLOCKS,
        };
        for (from, to) in [(0, start), (end, size)] {
            let step = ((to.saturating_sub(from)) / SKIPPED_PROBES).max(min_step);
            let mut at = from + step / 2;
            while at < to {
                self.probe(at, size)?;
                at += step;
            }
        }
        match self.target {
            Target::Plain(_) => self.probe_near(start, end, size),
            Target::Blocks(_) => self.probe_near_blocks(start, end, size),
        }
    }

    /// As [`Prober::probe_near`], for blocks: every record of the two blocks
    /// on each side of the span (their order among themselves checked, as
    /// the file's first and last blocks' are), then probes 1, 2, 4 ...
    /// blocks further out, inside the first spread step. A BGZF log whose
    /// clock stepped back 10 minutes a block after the span had `wf report
    /// --until` miss the records after the step (600 of 800, exit 0): a
    /// block's first record is ~10 minutes of such a log after the last
    /// one's, so no probe at block starts saw the step.
    fn probe_near_blocks(&mut self, start: u64, end: u64, n: u64) -> io::Result<()> {
        if let Target::Blocks(p) = self.target {
            // Two blocks from each: the span's end, and two (or one) before
            // its start.
            let near = [Some(end), start.checked_sub(2).or(start.checked_sub(1))];
            for k in near.into_iter().flatten().filter(|&k| k < n) {
                self.block_times(p, k as usize, 2)?;
            }
        }
        let near = (n / SKIPPED_PROBES).max(SKIPPED_BLOCKS);
        let mut d = 0;
        while d <= near {
            if end + d < n {
                self.probe(end + d, n)?;
            }
            if start > d {
                self.probe(start - d - 1, n)?;
            }
            d = (d * 2).max(1);
        }
        Ok(())
    }

    /// Probes at 4 KiB, 8 KiB, 16 KiB ... (up to [`NEAR_PROBES`]) out from
    /// each edge of the span, inside the first spread step: a run out of
    /// order just outside the span falls between the spread probes. A log
    /// in local time without an offset repeats an hour at the autumn DST
    /// change; a window inside it found the first pass only (30 of 60
    /// lines, exit 0), its second pass a few KiB after the span's end.
    fn probe_near(&mut self, start: u64, end: u64, size: u64) -> io::Result<()> {
        let near = SKIPPED_STEP * PROBE_READ as u64;
        for k in 0..NEAR_PROBES {
            let d = (PROBE_READ as u64) << k;
            if d > near.max((size / SKIPPED_PROBES).min(size)) {
                break;
            }
            if end + d < size {
                self.probe(end + d, size)?;
            }
            if start > d {
                self.probe(start - d, size)?;
            }
        }
        Ok(())
    }

    /// The start of the last probed record with a time before `t` (0 if none):
    /// every record before it is earlier than `t + slack`.
    fn last_before(&mut self, size: u64, t: i64) -> io::Result<u64> {
        let (mut lo, mut hi, mut best) = (0, size, 0);
        while lo + self.close() < hi {
            let mid = lo + (hi - lo) / 2;
            match self.probe(mid, size)? {
                Some((r, rt)) if rt < t => {
                    best = r;
                    lo = mid + 1;
                }
                _ => hi = mid,
            }
        }
        Ok(best)
    }

    /// The start of the first probed record with a time after `t` (`size` if
    /// none): every record from it on is later than `t - slack`.
    fn first_after(&mut self, size: u64, t: i64) -> io::Result<u64> {
        let (mut lo, mut hi, mut best) = (0, size, self.end(size));
        while lo + self.close() < hi {
            let mid = lo + (hi - lo) / 2;
            match self.probe(mid, size)? {
                Some((r, rt)) if rt > t => {
                    best = r;
                    hi = mid;
                }
                _ => lo = mid + 1,
            }
        }
        Ok(best)
    }

    fn probe(&mut self, pos: u64, size: u64) -> io::Result<Option<(u64, i64)>> {
        match self.target {
            Target::Plain(f) => self.probe_at(f, pos, size),
            Target::Blocks(p) => self.probe_block(p, pos as usize),
        }
    }

    /// The first record with a time decoded from block `k` on, after the
    /// block's first separator (before it: the end of a record begun in an
    /// earlier block), within [`PROBE_LIMIT`] decoded bytes: the block's
    /// start and that time.
    fn probe_block(&mut self, parts: &Parts, k: usize) -> io::Result<Option<(u64, i64)>> {
        let Some(&start) = parts.starts.get(k) else {
            return Ok(None);
        };
        let (dec, consumed, _) = split::open_part(parts, start, parts.size, None)?;
        let mut dec = dec.take(PROBE_LIMIT as u64);
        let (mut buf, mut from) = (Vec::new(), 0);
        // Decoded a piece at a time, up to the first record with a time: a
        // probe of a BGZF member decodes about that member, not PROBE_LIMIT.
        let found = loop {
            let got = (&mut dec).take(PROBE_READ as u64).read_to_end(&mut buf)?;
            // The decoded stream's end (not PROBE_LIMIT's cut): a last
            // record without its separator is whole.
            let (done, eof) = (got == 0, got == 0 && buf.len() < PROBE_LIMIT);
            let sep = self.sep;
            let mut at = from;
            let found = loop {
                let end = match memchr::memchr(sep, &buf[at..]) {
                    Some(i) => at + i + 1,
                    None if eof && at < buf.len() => buf.len(),
                    None => break None,
                };
                // The bytes before the first separator end a record begun
                // in an earlier block.
                let first = at == 0 && start > 0;
                let rec = &buf[at..end];
                at = end;
                if let Some(t) = (!first).then(|| self.found(rec, start)).flatten() {
                    break Some((start, t.1));
                }
            };
            from = at;
            if found.is_some() || done {
                break found;
            }
        };
        self.read += consumed.load(std::sync::atomic::Ordering::Relaxed);
        Ok(found)
    }

    /// The records decoded from block `k` on (up to [`PROBE_LIMIT`], on
    /// into later blocks): the largest step back between them
    /// ([`Prober::block_back`]; they are in file order), and a probe at the
    /// block's start of the first one's time (the first block) or the last
    /// one's (the last); whether it found one. Of the first and last blocks,
    /// where one record out of place had a window's records searched away.
    fn edge_block(&mut self, parts: &Parts, k: usize) -> io::Result<bool> {
        let Some((start, times)) = self.block_times(parts, k, usize::MAX)? else {
            return Ok(false);
        };
        let edge = if k == 0 { times.first() } else { times.last() };
        if let Some(&t) = edge {
            self.probes.push((start, t));
        }
        Ok(edge.is_some())
    }

    /// The times of the records decoded from block `k` on, over at most
    /// `blocks` blocks (see [`Prober::edge_block`]), their largest step back
    /// kept in [`Prober::block_back`]; with the block's start.
    fn block_times(
        &mut self,
        parts: &Parts,
        k: usize,
        blocks: usize,
    ) -> io::Result<Option<(u64, Vec<i64>)>> {
        let Some(&start) = parts.starts.get(k) else {
            return Ok(None);
        };
        let stop = k.checked_add(blocks).and_then(|e| parts.starts.get(e));
        let (dec, consumed, _) =
            split::open_part(parts, start, stop.copied().unwrap_or(parts.size), None)?;
        let mut buf = Vec::new();
        dec.take(PROBE_LIMIT as u64).read_to_end(&mut buf)?;
        self.read += consumed.load(std::sync::atomic::Ordering::Relaxed);
        let sep = self.sep;
        let mut recs: Vec<&[u8]> = buf.split_inclusive(|&c| c == sep).collect();
        if start > 0 && !recs.is_empty() {
            recs.remove(0);
        }
        // A record cut by PROBE_LIMIT (a zstd frame longer than it) is not one.
        if buf.len() == PROBE_LIMIT && recs.last().is_some_and(|r| r.last() != Some(&sep)) {
            recs.pop();
        }
        let times: Vec<i64> = recs.iter().filter_map(|r| (self.time)(r)).collect();
        // Probes would share the block's position: the records' order is
        // checked here, among themselves.
        let mut latest = i64::MIN;
        for &t in &times {
            let back = latest.saturating_sub(t);
            if back > self.block_back.map_or(0, |(_, b)| b) {
                self.block_back = Some((start, back));
            }
            latest = latest.max(t);
        }
        Ok(Some((start, times)))
    }

    /// The earliest and latest times of the records with one in the file's
    /// first or last [`PROBE_READ`] bytes (whole records: the tail's after
    /// its first separator), each a probe.
    fn edge_times(&mut self, f: &File, size: u64, edge: Edge) -> io::Result<Option<(i64, i64)>> {
        let from = match edge {
            Edge::Head => 0,
            Edge::Tail => size.saturating_sub(PROBE_READ as u64),
        };
        let mut buf = vec![0u8; (size - from).min(PROBE_READ as u64) as usize];
        let got = read_full_at(f, &mut buf, from)?;
        self.read += got as u64;
        buf.truncate(got);
        let sep = self.sep;
        let mut recs: Vec<(u64, &[u8])> = Vec::new();
        let mut at = from;
        for r in buf.split_inclusive(|&c| c == sep) {
            recs.push((at, r));
            at += r.len() as u64;
        }
        let cut_before = usize::from(from > 0).min(recs.len());
        // The head's last record may run on past what was read.
        let cut_after = match edge {
            Edge::Head if from + (got as u64) < size => recs.len().saturating_sub(1),
            _ => recs.len(),
        };
        let mut span: Option<(i64, i64)> = None;
        for &(start, rec) in &recs[cut_before..cut_after.max(cut_before)] {
            if let Some((_, t)) = self.found(rec, start) {
                span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            }
        }
        Ok(span)
    }

    /// The first record at or after `pos` that has a time: its start and time;
    /// `None` if there is none within [`PROBE_LIMIT`] bytes.
    fn probe_at(&mut self, f: &File, pos: u64, size: u64) -> io::Result<Option<(u64, i64)>> {
        let mut at = record_start_at(f, pos, size, self.sep)?;
        let mut buf = vec![0u8; PROBE_READ];
        let (mut have, mut looked) = (0usize, 0usize);
        while at < size && looked < PROBE_LIMIT {
            if have == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            let got = read_full_at(f, &mut buf[have..], at + have as u64)?;
            self.read += got as u64;
            looked += got;
            have += got;
            let eof = got == 0 || at + have as u64 >= size;
            let mut from = 0;
            while let Some(p) = memchr::memchr(self.sep, &buf[from..have]) {
                if let Some(t) = self.found(&buf[from..from + p + 1], at + from as u64) {
                    return Ok(Some(t));
                }
                from += p + 1;
            }
            if eof {
                return Ok(self.found(&buf[from..have], at + from as u64));
            }
            buf.copy_within(from..have, 0);
            have -= from;
            at += from as u64;
        }
        Ok(None)
    }

    fn found(&mut self, rec: &[u8], start: u64) -> Option<(u64, i64)> {
        let t = (self.time)(rec)?;
        self.probes.push((start, t));
        Some((start, t))
    }

    /// Fails if, in file order, a probe's time is earlier than one before it
    /// by more than `disorder`.
    fn check(&mut self, disorder: i64) -> Result<(), Whole> {
        if let Some((at, back_us)) = self.block_back.filter(|&(_, b)| b > disorder) {
            return Err(Whole::OutOfOrder { at, back_us });
        }
        self.probes.sort_unstable();
        let mut latest = i64::MIN;
        for &(at, t) in &self.probes {
            if t < latest.saturating_sub(disorder) {
                return Err(Whole::OutOfOrder {
                    at,
                    back_us: latest - t,
                });
            }
            latest = latest.max(t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;

    /// "<time> text" records: the leading number is the time.
    fn time(r: &[u8]) -> Option<i64> {
        let n = r.iter().take_while(|c| c.is_ascii_digit()).count();
        std::str::from_utf8(&r[..n]).ok()?.parse().ok()
    }

    fn file(text: &str) -> (tempfile::NamedTempFile, Input) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let inp = Input {
            name: "t".into(),
            source: Source::File {
                path: PathBuf::from(f.path()),
                size: text.len() as u64,
            },
            span: None,
        };
        (f, inp)
    }

    /// The records a span holds (those starting in it).
    fn held(text: &str, span: (u64, u64)) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if (span.0..span.1).contains(&at) {
                out.extend(time(line.as_bytes()));
            }
            at += line.len() as u64;
        }
        out
    }

    #[test]
    fn span_holds_every_record_of_the_window_and_little_else() {
        let text: String = (0..10000).map(|t| format!("{t} some text\n")).collect();
        for (since, until) in [(5000, 5010), (0, 3), (9995, 20000), (-5, 0), (20000, 30000)] {
            let (_f, mut inp) = file(&text);
            let w = Window {
                since,
                until,
                disorder: 2,
            };
            let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
            assert!(s.whole.is_empty());
            let got = held(&text, inp.span.unwrap());
            let want: Vec<i64> = (since.max(0)..until.min(10000)).collect();
            assert!(
                want.iter().all(|t| got.contains(t)),
                "{since}..{until}: {got:?}"
            );
            // The slack, and the searches' last probe read on each side.
            let near = 4 + 2 * CLOSE_ENOUGH as usize / 14 + 2;
            assert!(
                got.len() <= want.len() + near,
                "{since}..{until}: {}",
                got.len()
            );
        }
    }

    #[test]
    fn a_file_before_or_after_the_window_is_skipped_after_its_tail_or_head() {
        let text: String = (100..10000).map(|t| format!("{t} some text\n")).collect();
        for (since, until, span) in [(20000, 30000, text.len() as u64), (0, 50, 0)] {
            let (_f, mut inp) = file(&text);
            let w = Window {
                since,
                until,
                disorder: 2,
            };
            let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
            assert_eq!(inp.span, Some((span, span)), "{since}..{until}");
            assert_eq!(s.files_skipped, 1);
            // The eighths (order check), and the tail or the head.
            assert!(s.probed <= 10 * PROBE_READ as u64, "{s:?}");
        }
    }

    /// One record out of place at a file's end or start (a long download
    /// logged late) does not have the file skipped: 0 records, exit 0, of a
    /// window the rest of the file holds. Every record of the tail and head
    /// is a probe, so the file is found out of order and read whole.
    #[test]
    fn one_record_out_of_place_at_an_edge_skips_no_file() {
        let body: String = (100..10000).map(|t| format!("{t} some text\n")).collect();
        let late_tail = format!("{body}5000 a long download\n");
        let late_head = format!("9000 a long download\n{body}");
        for (text, since, until) in [(&late_tail, 9900, 20000), (&late_head, 0, 200)] {
            let (_f, mut inp) = file(text);
            let w = Window {
                since,
                until,
                disorder: 2,
            };
            let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
            assert_eq!(s.files_skipped, 0, "{since}..{until}: {s:?}");
            assert!(
                matches!(s.whole[..], [(0, Whole::OutOfOrder { .. })]),
                "{since}..{until}: {s:?}"
            );
        }
    }

    #[test]
    fn a_slack_of_whole_searches_nothing_and_a_whole_span_is_not_narrowed() {
        let text: String = (0..1000).map(|t| format!("{t} x\n")).collect();
        let (_f, given) = file(&text);
        let w = |disorder| Window {
            since: 10,
            until: 20,
            disorder,
        };
        let mut inp = given.clone();
        let s = seek(std::slice::from_mut(&mut inp), &w(WHOLE), b'\n', &time);
        assert!(matches!(s.whole[..], [(0, Whole::Slack)]), "{s:?}");
        assert_eq!((inp.span, s.probed), (None, 0));
        assert!(!narrowed(&given, &inp, true));
        // A window the whole file lies in: nothing left out.
        let mut inp = given.clone();
        seek(std::slice::from_mut(&mut inp), &w(WHOLE - 1), b'\n', &time);
        assert_eq!(inp.span, Some((0, text.len() as u64)));
        assert!(!narrowed(&given, &inp, true));
        assert!(span_edges(std::slice::from_ref(&given), &[inp], EDGE)
            .1
            .is_empty());
        let mut inp = given.clone();
        seek(std::slice::from_mut(&mut inp), &w(2), b'\n', &time);
        assert!(narrowed(&given, &inp, false), "{:?}", inp.span);
    }

    #[test]
    fn disorder_beyond_the_slack_reads_whole() {
        // Two runs in order, joined: the first run's 900..999 lie before
        // where a search for 900 in the second run ends.
        let run: String = (0..1000).map(|t| format!("{t} x\n")).collect();
        let text = format!("{run}{run}");
        let (_f, mut inp) = file(&text);
        let w = Window {
            since: 900,
            until: i64::MAX,
            disorder: 5,
        };
        let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
        assert!(
            matches!(s.whole[..], [(0, Whole::OutOfOrder { .. })]),
            "{s:?}"
        );
        assert_eq!(inp.span, None);
        // Within the slack, the same file is searched.
        let w = Window {
            since: 900,
            until: i64::MAX,
            disorder: 1000,
        };
        let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
        assert!(s.whole.is_empty(), "{s:?}");
        assert_eq!(inp.span, Some((0, text.len() as u64)));
    }

    /// A short run of the same times joined before or after a long one
    /// (`cat big.log small.log`), a 40th of the file, where neither the
    /// eighths nor the searches probe: every record of the window is in
    /// the span, or the file is read whole (it was not: the span left the
    /// short run's records of the window out).
    #[test]
    fn a_short_run_joined_out_of_order_is_not_left_out() {
        let run = |n: i64, step: i64| -> String {
            (0..n).map(|i| format!("{:07} x\n", i * step)).collect()
        };
        let (long, short) = (run(400_000, 1), run(10_000, 40));
        for (text, since, until) in [
            (format!("{long}{short}"), 0, 200_000),
            (format!("{short}{long}"), 200_000, i64::MAX),
            (format!("{long}{short}"), 100_000, 101_000),
        ] {
            let (_f, mut inp) = file(&text);
            let w = Window {
                since,
                until,
                disorder: 5,
            };
            let s = seek(std::slice::from_mut(&mut inp), &w, b'\n', &time);
            let span = inp.span.unwrap_or((0, text.len() as u64));
            let want = text
                .lines()
                .filter(|l| (since..until).contains(&time(l.as_bytes()).unwrap()))
                .count();
            let got = held(&text, span)
                .iter()
                .filter(|t| (since..until).contains(t))
                .count();
            assert_eq!(got, want, "{since}..{until}: {s:?}");
        }
    }
}
