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
//! Never a wrong answer: the probes' times are checked for order afterwards; a
//! file where one goes back by more than the slack is read whole (and the
//! caller says so). Streams and compressed files cannot be cut at offsets and
//! are read whole; the window job filters them all the same.

use std::fs::File;
use std::io;

use super::inputs::{Input, Source};
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
    /// A probe at byte `at` found time `back_us` microseconds earlier than one
    /// before it: more than the slack.
    OutOfOrder { at: u64, back_us: i64 },
    /// The file could not be probed.
    Io(io::Error),
}

/// What the search did to the inputs.
#[derive(Debug, Default)]
pub struct Seeked {
    /// Bytes of regular files left out of the spans.
    pub skipped: u64,
    /// Bytes the probes read.
    pub probed: u64,
    /// Inputs read whole, by index, and why.
    pub whole: Vec<(usize, Whole)>,
}

/// How far a probe reads for a record with a time before it gives up (and
/// counts as "no time after here", which only makes the span larger).
const PROBE_LIMIT: usize = 256 << 10;
/// A probe's first read: a few records of most logs.
const PROBE_READ: usize = 4 << 10;
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
    let mut out = Seeked::default();
    for (i, inp) in inputs.iter_mut().enumerate() {
        let (path, size) = match &inp.source {
            Source::File { path, size } => (path, *size),
            _ => {
                out.whole.push((i, Whole::NotSeekable));
                continue;
            }
        };
        let (s, e) = inp.span.unwrap_or((0, size));
        let mut p = Prober {
            sep,
            time,
            probes: Vec::new(),
            read: 0,
        };
        let found = File::open(path).and_then(|f| p.span(&f, size, w));
        out.probed += p.read;
        match found
            .map_err(Whole::Io)
            .and_then(|span| p.check(w.disorder).map(|_| span))
        {
            Ok((a, b)) => {
                let (a, b) = (a.max(s), b.min(e));
                inp.span = Some((a, b.max(a)));
                out.skipped += (e - s).saturating_sub(b.saturating_sub(a));
            }
            Err(why) => out.whole.push((i, why)),
        }
    }
    out
}

/// The probes of one file.
struct Prober<'a> {
    sep: u8,
    time: &'a (dyn Fn(&[u8]) -> Option<i64> + Sync),
    /// (record start, time) of every probe that found a time.
    probes: Vec<(u64, i64)>,
    read: u64,
}

impl Prober<'_> {
    /// The span `[start, end)` of a file of `size` bytes that holds every
    /// record of `w` if the file is in order up to the slack.
    fn span(&mut self, f: &File, size: u64, w: &Window) -> io::Result<(u64, u64)> {
        // Eighths of the file, for the order check: the search's own probes
        // close in on one place and would not see two runs joined out of order.
        for k in 0..8 {
            self.probe(f, size / 8 * k, size)?;
        }
        let lo = w.since.saturating_sub(w.disorder);
        let hi = w.until.saturating_add(w.disorder);
        let start = match w.since {
            i64::MIN => 0,
            _ => self.last_before(f, size, lo)?,
        };
        let end = match w.until {
            i64::MAX => size,
            _ => self.first_after(f, size, hi)?,
        };
        Ok((start, end.max(start)))
    }

    /// The start of the last probed record with a time before `t` (0 if none):
    /// every record before it is earlier than `t + slack`.
    fn last_before(&mut self, f: &File, size: u64, t: i64) -> io::Result<u64> {
        let (mut lo, mut hi, mut best) = (0, size, 0);
        while lo + CLOSE_ENOUGH < hi {
            let mid = lo + (hi - lo) / 2;
            match self.probe(f, mid, size)? {
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
    fn first_after(&mut self, f: &File, size: u64, t: i64) -> io::Result<u64> {
        let (mut lo, mut hi, mut best) = (0, size, size);
        while lo + CLOSE_ENOUGH < hi {
            let mid = lo + (hi - lo) / 2;
            match self.probe(f, mid, size)? {
                Some((r, rt)) if rt > t => {
                    best = r;
                    hi = mid;
                }
                _ => lo = mid + 1,
            }
        }
        Ok(best)
    }

    /// The first record at or after `pos` that has a time: its start and time;
    /// `None` if there is none within [`PROBE_LIMIT`] bytes.
    fn probe(&mut self, f: &File, pos: u64, size: u64) -> io::Result<Option<(u64, i64)>> {
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
}
