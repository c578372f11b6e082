//! `--since`, `--until`, `--disorder` (and `count --format`): the values, and a
//! scan job run over a time window.
//!
//! Why here: the CLI turns what the user wrote (ISO 8601, `-1h`, `yesterday`)
//! into microseconds once; wf-core's `scan::seek` narrows each regular file to
//! the bytes that can hold the window and `jobs::window` filters every record
//! read. Record times come from wf-core's own small parser (`jobs::time`), not
//! wf-formats, so the commands work the same in a build without `wf sql`.

use std::io::{self, BufRead, Read};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;

use wf_core::jobs::time::{iso_prefix, TimeFormat};
use wf_core::jobs::time_keys;
use wf_core::jobs::window::{self, Window};
use wf_core::jobs::{Job, Same};
use wf_core::scan::seek::{self, Whole};
use wf_core::scan::{self, Decoded, InputError, Progress, ScanOptions};

use super::args::{InputArgs, ScanArgs};

const SEC: i64 = 1_000_000;
const DAY: i64 = 86_400 * SEC;

/// The time window of a scan job.
#[derive(Args, Clone)]
pub(crate) struct TimeArgs {
    /// Only records at or after TIME (UTC unless it has an offset): ISO 8601
    /// (`2026-11-27`, `2026-11-27T10:00`, `2026-11-27T10:00:00+01:00`), before
    /// now (`-1h`, `-30m`, `-7d`, `-90s`, `-2w`), `today` or `yesterday`
    /// (midnight UTC). A regular file is searched for the first byte to read,
    /// so a narrow window of a big log reads little of it (a BGZF or
    /// multi-frame zstd file by block, `wf report --since -1h access.log.gz`
    /// too, with the failed lines' offsets of a whole read; a zstd file
    /// without frame content sizes, `zstd --no-content-size`, and a single
    /// gzip member are read whole, as --stats says; a rotated log
    /// outside the window is skipped after its head or tail, a gzip one
    /// newer than the window after its head); records without a
    /// time are left out (`--stats` counts them), and lines are held whole (up
    /// to --max-record) to read their time. E.g. `wf count --since -1h
    /// access.log`.
    #[arg(long, value_name = "TIME", value_parser = parse_when, allow_hyphen_values = true)]
    since: Option<When>,
    /// Only records before TIME (as --since); reading stops at the first record
    /// past TIME + --disorder. E.g. `wf wf2 --since yesterday --until today
    /// access.log`, `wf count --since 2026-11-27T10:00 --until
    /// 2026-11-27T11:00Z access.log`.
    #[arg(long, value_name = "TIME", value_parser = parse_when, allow_hyphen_values = true)]
    until: Option<When>,
    /// How much earlier than a record before it a record may be (logs are
    /// written when requests end): the search for --since/--until reads this
    /// much more on each side. A file found more out of order than this is
    /// read whole and filtered (said on stderr): the search looks at up to
    /// 128 places on each side of what it reads, so a log joined from others
    /// of the same days (`cat web1.log web2.log`) is found unless a part is
    /// under about 1% of it; a record read that is further back than the
    /// slack (a long download logged when it ended) has the files searched
    /// again with twice the farthest jump back, then read whole (said on
    /// stderr); `--disorder 10000w` reads every file whole. Every record of a
    /// file's first and last 4 KiB (block, compressed) is looked at; a lone
    /// record out of place elsewhere just outside what is read, or in a BGZF
    /// or zstd file searched by block (but for `wf report`), is not seen.
    /// E.g. `--disorder 1h`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    disorder: i64,
}

/// `wf count --format`: where a record's time is.
#[derive(Args, Clone)]
pub(crate) struct FormatArg {
    /// Where a line's time is, for --since/--until: combined, common,
    /// vcombined, vcommon, nginx-main or combinedio, in any case (the first
    /// `[10/Oct/2000:13:55:36 -0700]`), json (the ISO 8601
    /// `time`, `timestamp`, `@timestamp` or `ts` of a JSON line, the first of
    /// them at its top level that has one, or a number since the epoch
    /// there: seconds (from 1973) as zap's and Caddy's, milliseconds as
    /// pino's, micro- or nanoseconds, told apart by size), logfmt (the
    /// `time=`, `ts=`, `timestamp=`, `@timestamp=` or `t=` of a line), csv or
    /// tsv (the column named by --time-column), iso (an ISO 8601 time
    /// starting the line), or auto: each line by its shape (`{` json, else
    /// iso, else the first `[...]`, else logfmt). E.g. `wf count --format json
    /// --since -1d app.jsonl`.
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = parse_format)]
    format: Shape,
    /// With --format csv or tsv: the column holding the ISO 8601 time, by its
    /// number (from 1) or its name in the first line of the first input. A
    /// record is a line here. E.g. `wf count --format csv --time-column ts
    /// --since 2026-11-27 events.csv`.
    #[arg(long, value_name = "COLUMN")]
    time_column: Option<String>,
}

/// What `--format` names: a time format, or CSV/TSV (a column to find).
#[derive(Debug, Clone, Copy)]
enum Shape {
    Fixed(TimeFormat),
    Columns(u8),
}

fn parse_format(s: &str) -> Result<Shape, String> {
    let lower = s.to_ascii_lowercase();
    let named = wf_report::NAMED_FORMATS;
    Ok(Shape::Fixed(match lower.as_str() {
        n if n == "clf" || named.contains(&n) => TimeFormat::Clf,
        "json" | "jsonl" => TimeFormat::Json,
        "logfmt" => TimeFormat::Logfmt,
        "iso" => TimeFormat::Iso,
        "auto" => TimeFormat::Auto,
        "csv" => return Ok(Shape::Columns(b',')),
        "tsv" => return Ok(Shape::Columns(b'\t')),
        _ => {
            return Err(format!(
                "'{s}': expected {}, json, logfmt, csv, tsv, iso or auto",
                named.join(", ")
            ))
        }
    }))
}

impl FormatArg {
    /// The time format of the records of `input` (a column's name is looked
    /// up in the first line of its first input).
    pub(crate) fn time_format(&self, input: &InputArgs) -> Result<TimeFormat, InputError> {
        let usage = |m: &str| InputError::new("--time-column", m);
        let (sep, col) = match (self.format, &self.time_column) {
            (Shape::Fixed(f), None) => return Ok(f),
            (Shape::Fixed(_), Some(_)) => return Err(usage("needs --format csv or --format tsv")),
            (Shape::Columns(_), None) => {
                return Err(usage("--format csv and tsv need --time-column COLUMN"))
            }
            (Shape::Columns(sep), Some(c)) => (sep, c),
        };
        let index = match col.parse::<usize>() {
            Ok(0) => return Err(usage("columns are numbered from 1")),
            Ok(n) => n - 1,
            Err(_) => column_named(col, sep, input)?,
        };
        let index = u16::try_from(index).map_err(|_| usage("at most 65535 columns"))?;
        Ok(TimeFormat::Field { index, sep })
    }
}

/// The index of the column `name` in the header (the first line) of the
/// first of `input`'s inputs.
fn column_named(name: &str, sep: u8, input: &InputArgs) -> Result<usize, InputError> {
    let collected = input.collect();
    let Some(first) = collected.inputs.first() else {
        return Err(InputError::new(
            "--time-column",
            "no input to read a header from",
        ));
    };
    let fail = |m: String| InputError::new(&first.name, m);
    if matches!(first.source, scan::Source::Stream { .. }) {
        let m = format!("cannot look up column '{name}' in a stream: give its number");
        return Err(fail(m));
    }
    let mut line = Vec::new();
    let r = scan::open_stream(&first.source, None)
        .and_then(|r| io::BufReader::new(r.take(1 << 20)).read_until(b'\n', &mut line));
    r.map_err(|e| fail(format!("reading its header: {}", scan::io_message(&e))))?;
    let (at, names) = time_keys::column_named(&line, name.as_bytes(), sep);
    at.ok_or_else(|| {
        let m = format!(
            "no column '{name}' in its first line (columns: {})",
            names.join(", ")
        );
        fail(m)
    })
}

fn now_us() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    d.as_micros() as i64
}

/// A `--since`/`--until` as given: its time, and the text of one relative
/// to now (`-1h`, `today`), which a `--state` cannot be made with.
#[derive(Debug, Clone)]
pub(crate) struct When {
    us: i64,
    relative: Option<String>,
}

fn parse_when(s: &str) -> Result<When, String> {
    let us = when(s, now_us())?;
    let t = s.trim();
    let absolute = iso_prefix(t.as_bytes()).is_some_and(|(_, n)| n == t.len());
    let relative = (!absolute).then(|| t.to_string());
    Ok(When { us, relative })
}

/// A point in time (see [`TimeArgs::since`]), relative ones against `now`.
pub(crate) fn when(s: &str, now: i64) -> Result<i64, String> {
    let midnight = now.div_euclid(DAY) * DAY;
    match s.trim() {
        "now" => Ok(now),
        "today" => Ok(midnight),
        "yesterday" => Ok(midnight - DAY),
        t if t.starts_with('-') => Ok(now - duration(&t[1..])?),
        t => match iso_prefix(t.as_bytes()) {
            Some((v, n)) if n == t.len() => Ok(v),
            _ => Err(format!(
                "'{s}': expected a time such as 2026-11-27T10:00, 2026-11-27T10:00:00+01:00, \
                 -1h, -7d, today or yesterday"
            )),
        },
    }
}

fn parse_duration(s: &str) -> Result<i64, String> {
    duration(s)
}

/// A duration: `0`, or numbers with units, `90s`, `5m`, `1h30m`, `7d`, `2w`.
pub(crate) fn duration(s: &str) -> Result<i64, String> {
    let bad = || format!("'{s}': expected a duration such as 30s, 5m, 1h30m, 7d or 2w");
    let t = s.trim();
    if t == "0" {
        return Ok(0);
    }
    let (mut total, mut rest) = (0i64, t);
    while !rest.is_empty() {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        let v: i64 = rest[..n].parse().map_err(|_| bad())?;
        let unit = match rest.as_bytes().get(n) {
            Some(b's') => SEC,
            Some(b'm') => 60 * SEC,
            Some(b'h') => 3600 * SEC,
            Some(b'd') => DAY,
            Some(b'w') => 7 * DAY,
            _ => return Err(bad()),
        };
        let add = v.checked_mul(unit).ok_or_else(bad)?;
        total = total.checked_add(add).ok_or_else(bad)?;
        rest = &rest[n + 1..];
    }
    if t.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// What a scan produced, with or without a window.
pub(crate) struct Scanned<S> {
    pub(crate) state: S,
    pub(crate) bytes: u64,
    pub(crate) files: u64,
    pub(crate) decoded: Decoded,
    pub(crate) errors: Vec<InputError>,
    /// `--stats` counters of the window.
    pub(crate) extra: Vec<(String, u64)>,
    /// Per input: the decoded bytes of a compressed file read to its end.
    pub(crate) ends: Vec<Option<u64>>,
    /// `--state`: the new state's last steps, still running.
    pub(crate) pending: Option<super::pending::Pending>,
    /// `--state`: the inputs read, in the order of the job's counts per
    /// input, by name and whether from their start (empty: the run's
    /// collected inputs, each from its start).
    pub(crate) read: Vec<(String, bool)>,
    /// `--state`: the bytes the counts cover, this run's and the runs'
    /// before (`None`: this run's, `bytes`).
    pub(crate) counted: Option<u64>,
}

impl TimeArgs {
    /// The window's settings, for `--state` (a state is only continued by
    /// runs of the same window).
    pub(crate) fn settings(&self) -> Vec<(String, String)> {
        let show = |t: Option<i64>| t.map_or("none".into(), |t| format!("{t} us"));
        vec![
            ("--since".into(), show(self.since())),
            ("--until".into(), show(self.until())),
            ("--disorder".into(), format!("{} us", self.disorder)),
        ]
    }

    fn since(&self) -> Option<i64> {
        self.since.as_ref().map(|w| w.us)
    }

    fn until(&self) -> Option<i64> {
        self.until.as_ref().map(|w| w.us)
    }

    /// A `--since` or `--until` relative to now, as written (`-1h`,
    /// `today`): a window that moves from run to run, which a `--state`,
    /// one count of every run, cannot be kept over.
    pub(crate) fn relative(&self) -> Option<&str> {
        [&self.since, &self.until]
            .into_iter()
            .find_map(|w| w.as_ref()?.relative.as_deref())
    }

    pub(crate) fn window(&self) -> Option<seek::Window> {
        if self.since.is_none() && self.until.is_none() {
            return None;
        }
        Some(seek::Window {
            since: self.since().unwrap_or(i64::MIN),
            until: self.until().unwrap_or(i64::MAX),
            disorder: self.disorder,
        })
    }

    /// Scan with `job`: over the records of the window if one is asked for.
    pub(crate) fn scan<J: Job>(
        &self,
        job: J,
        format: TimeFormat,
        args: &ScanArgs,
        opts: &ScanOptions,
        progress: Option<&Progress>,
    ) -> Scanned<J::State> {
        let collected = args.input.collect();
        self.scan_inputs(
            job,
            format,
            collected.inputs,
            collected.errors,
            opts,
            progress,
        )
    }

    /// [`TimeArgs::scan`] over inputs already collected (`errors`: those of
    /// collecting them).
    pub(crate) fn scan_inputs<J: Job>(
        &self,
        job: J,
        format: TimeFormat,
        mut inputs: Vec<scan::Input>,
        mut errors: Vec<InputError>,
        opts: &ScanOptions,
        progress: Option<&Progress>,
    ) -> Scanned<J::State> {
        let Some(w) = self.window() else {
            let out = scan::run(&job, inputs, opts, progress);
            errors.extend(out.errors.iter().cloned());
            return Scanned {
                ends: (0..out.inputs().len())
                    .map(|i| out.decoded_end(i))
                    .collect(),
                state: out.state,
                bytes: out.bytes,
                files: out.files,
                decoded: out.decoded,
                errors,
                extra: vec![],
                pending: None,
                read: vec![],
                counted: None,
            };
        };
        let time = move |r: &[u8]| format.time(r);
        // BGZF and multi-frame zstd files are searched by block (not when
        // streams are spooled); for a job with offsets (`report`), where
        // the decoded offset of the range found is known.
        let blocks = match (opts.spool_streams, job.offsets()) {
            (true, _) => seek::Blocks::No,
            (false, true) => seek::Blocks::Offsets,
            (false, false) => seek::Blocks::Parts,
        };
        let (mut w, mut first) = (w, true);
        let given = std::mem::take(&mut inputs);
        let again = !given
            .iter()
            .any(|i| matches!(i.source, scan::Source::Stream { .. }));
        let (out, seeked, extra) = loop {
            let mut inputs = given.clone();
            let seeked = seek::seek_all(&mut inputs, &w, opts.sep, &time, blocks);
            let extra = whole_read(&seeked, &inputs);
            let searched = searched(&given, &inputs, blocks);
            let window = Window {
                inner: Same(&job),
                since: w.since,
                until: w.until,
                sep: opts.sep,
                time,
            };
            let mut out = scan::run(&window, inputs, opts, progress);
            let far = far_back(&mut out.state.order, &searched, w.disorder);
            if far.is_empty() {
                break (out, seeked, extra);
            }
            if !again {
                // A stream cannot be read a second time: said, exit 2.
                errors.extend(unsearched(&far, &given, w.disorder));
                break (out, seeked, extra);
            }
            (w.disorder, first) = (wider(&far, &given, w.disorder, first), false);
        };
        errors.extend(out.errors.iter().cloned());
        let ends = (0..out.inputs().len())
            .map(|i| out.decoded_end(i))
            .collect();
        let st = out.state;
        // A run that continues inputs (`--state`, `--follow`'s later looks)
        // read their timed records before: new lines without a time are no
        // sign of a wrong format (they made such a run exit 2, unsaved).
        let continued = given.iter().any(|i| i.span.is_some_and(|(s, _)| s > 0));
        if !continued {
            errors.extend(none_timed(st.inside + st.outside, st.untimed, format));
        }
        let mut extra_all = vec![
            ("records outside the time range".into(), st.outside),
            ("records without a time".into(), st.untimed),
        ];
        extra_all.extend(seeked.stats());
        extra_all.extend(extra);
        Scanned {
            ends,
            state: st.inner,
            bytes: out.bytes,
            files: out.files,
            decoded: out.decoded,
            errors,
            extra: extra_all,
            pending: None,
            read: vec![],
            counted: None,
        }
    }
}

/// Which of `given` the search narrowed to a span leaving bytes out (where
/// the order of the bytes read says whether the search could be trusted).
/// A compressed file's span counts when it is decoded from its start at its
/// true offset (`blocks`: `Offsets`); decoded in parts, its runs' offsets
/// only order them within a part, so its order cannot be told (a known gap).
fn searched(given: &[scan::Input], seeked: &[scan::Input], blocks: seek::Blocks) -> Vec<bool> {
    let compressed = blocks == seek::Blocks::Offsets;
    (given.iter().zip(seeked))
        .map(|(g, s)| seek::narrowed(g, s, compressed))
        .collect()
}

/// The files searched whose records read went back further than
/// `disorder`: `(input, how far, the record's byte)`.
fn far_back(
    order: &mut [window::Order],
    searched: &[bool],
    disorder: i64,
) -> Vec<(usize, i64, u64)> {
    let far = window::far_back(order).into_iter();
    far.filter(|&(i, back, _)| searched[i] && back > disorder)
        .collect()
}

/// "NAME: the record at byte N is X s earlier than one before it, more than
/// --disorder (D s)".
fn went_back((i, back, at): (usize, i64, u64), given: &[scan::Input], disorder: i64) -> String {
    format!(
        "{}: the record at byte {at} is {:.3} s earlier than one before it, more than \
         --disorder ({} s)",
        given[i].name,
        back as f64 / 1e6,
        disorder / SEC
    )
}

/// The slack to search again with when files went back further than
/// `disorder` (`far`, said on stderr): the `first` time twice the farthest,
/// then every file whole (a search with the slack it saw can find a record
/// further back still).
pub(crate) fn wider(
    far: &[(usize, i64, u64)],
    given: &[scan::Input],
    disorder: i64,
    first: bool,
) -> i64 {
    let most = far.iter().map(|f| f.1).max().unwrap_or(0);
    let again = seek::wider(most, first);
    let how = match again {
        seek::WHOLE => "read whole and filtered".to_string(),
        d => format!("searched again with --disorder {}s", (d + SEC - 1) / SEC),
    };
    for &f in far {
        wf_core::warn!("wf: {}: {how}", went_back(f, given, disorder));
    }
    again
}

/// The errors of files that went back further than `disorder` when they
/// cannot be searched again (a stream among the inputs).
fn unsearched(far: &[(usize, i64, u64)], given: &[scan::Input], disorder: i64) -> Vec<InputError> {
    let most = far.iter().map(|f| f.1).max().unwrap_or(0);
    let hint = (most.saturating_mul(2) + SEC - 1) / SEC;
    far.iter()
        .map(|&f| {
            let why = format!(
                "{}: records of the window outside the bytes read may be missing (a stream is \
                 among the inputs, so the files are not read again): use --disorder {hint}s",
                went_back(f, given, disorder)
            );
            InputError::new("--since/--until", why)
        })
        .collect()
}

/// The error of a window none of whose records read had a time `format`
/// reads (`timed` of them had one, `untimed` not): all were left out, and
/// the answer is of nothing (it was 0 records, exit 0, for a log whose
/// times were written in another way). The one rule of every job's window,
/// `feed`'s too.
pub(crate) fn none_timed(timed: u64, untimed: u64, format: TimeFormat) -> Option<InputError> {
    if timed > 0 || untimed == 0 {
        return None;
    }
    let how = match format {
        TimeFormat::Clf => "as [dd/Mon/yyyy:HH:MM:SS +zzzz]".to_string(),
        TimeFormat::Reader(r) => format!("as {} writes it", r.name),
        TimeFormat::Field { index, .. } => format!("in column {}", index as u32 + 1),
        f => format!("in --format {f:?}").to_lowercase(),
    };
    let why = format!(
        "none of the {untimed} records read has a time {how}: all are left out (--format \
         names where the time is: json, logfmt, iso, csv --time-column, ...)"
    );
    Some(InputError::new("--since/--until", why))
}

/// Say on stderr which files are read whole because they are not in order (or
/// could not be searched); count the inputs read whole for `--stats`.
pub(crate) fn whole_read(s: &seek::Seeked, inputs: &[scan::Input]) -> Vec<(String, u64)> {
    let (mut streams, mut other, mut slack) = (0, 0, 0);
    for (i, why) in &s.whole {
        let name = &inputs[*i].name;
        match why {
            Whole::NotSeekable | Whole::NoSizes => streams += 1,
            Whole::Slack => slack += 1,
            Whole::OutOfOrder { at, back_us } => {
                other += 1;
                wf_core::warn!(
                    "wf: {name}: not in time order (the record at byte {at} is {:.3} s earlier \
                     than one before it, more than --disorder): read whole and filtered",
                    *back_us as f64 / 1e6
                );
            }
            Whole::Io(e) => {
                other += 1;
                wf_core::warn!("wf: {name}: cannot search by time ({e}): read whole and filtered");
            }
        }
    }
    vec![
        (
            "inputs read whole and filtered (streams, compressed)".into(),
            streams,
        ),
        (
            "inputs read whole and filtered (out of order)".into(),
            other,
        ),
        (
            "inputs read whole and filtered (--disorder 10000w or more)".into(),
            slack,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use wf_core::jobs::time::days_from_civil;

    // 2026-11-27T10:30:00Z
    const NOW: i64 = 1_795_775_400 * SEC;

    #[test]
    fn times() {
        assert_eq!(when("2026-11-27T10:30:00Z", NOW), Ok(NOW));
        assert_eq!(when("2026-11-27T10:30", NOW), Ok(NOW));
        assert_eq!(when("2026-11-27T11:30+01:00", NOW), Ok(NOW));
        assert_eq!(when("2026-11-27 05:30:00-0500", NOW), Ok(NOW));
        assert_eq!(
            when("2026-11-27", NOW),
            Ok(NOW - 10 * 3600 * SEC - 30 * 60 * SEC)
        );
        assert_eq!(when("today", NOW), when("2026-11-27", NOW));
        assert_eq!(when("yesterday", NOW), when("2026-11-26", NOW));
        assert_eq!(when("now", NOW), Ok(NOW));
        assert_eq!(when("-1h", NOW), Ok(NOW - 3600 * SEC));
        assert_eq!(when("-30m", NOW), Ok(NOW - 1800 * SEC));
        assert_eq!(when("-7d", NOW), when("2026-11-20T10:30Z", NOW));
        assert!(when("2026-11-27T10:30:00Zx", NOW).is_err());
        assert!(when("10:30", NOW).is_err());
        assert!(when("-1y", NOW).is_err());
        assert!(when("-", NOW).is_err());
        assert_eq!(
            days_from_civil(2026, 11, 27) * DAY,
            when("today", NOW).unwrap()
        );
    }

    #[test]
    fn durations() {
        assert_eq!(duration("0"), Ok(0));
        assert_eq!(duration("5m"), Ok(300 * SEC));
        assert_eq!(duration("1h30m"), Ok(5400 * SEC));
        assert_eq!(duration("2w"), Ok(14 * DAY));
        for bad in ["", "5", "m", "5x", "-5m", "99999999999999999d"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
