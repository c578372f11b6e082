//! Time windows over multi-day logs: `wf gen wf2 --days` (the span, the same
//! bytes twice) and `wf sql`'s time push-down (`WHERE time >= ... AND time <
//! ...` turned into the byte spans of `--since`/`--until`), whose answers must
//! equal the same query with the push-down turned off, on generated logs, with
//! records inside the disorder slack, an out-of-order file and lines without a
//! time; `--stats` shows that a narrow window reads a small part of the file.

mod common;
use common::timelog::{far_future, late_log};
use common::*;

use std::path::{Path, PathBuf};

/// The time (seconds, its offset applied) of a line's first
/// `[17/Jun/2007:00:00:00 -0700]`, in 2007 or 2008.
fn clf_secs(line: &[u8]) -> Option<i64> {
    let open = line.iter().position(|&c| c == b'[')?;
    if line.get(open + 27) != Some(&b']') {
        return None;
    }
    let s = std::str::from_utf8(line.get(open + 1..open + 27)?).ok()?;
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months.iter().position(|m| &s[3..6] == *m)? as i64;
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (d, y) = (num(0..2)?, num(7..11)?);
    let zone = num(22..26)? / 100 * 3600 + num(22..26)? % 100 * 60;
    let zone = if s.get(21..22)? == "-" { -zone } else { zone };
    if !(2007..=2008).contains(&y) || s.get(20..21)? != " " {
        return None;
    }
    // Days from 2007-01-01 (the generator's years are 2007 and 2008).
    let len = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut days = (y - 2007) * 365 + i64::from(y > 2008);
    for mm in 0..m {
        days += len[mm as usize] + i64::from(mm == 1 && y == 2008);
    }
    days += d - 1;
    let secs = num(12..14)? * 3600 + num(15..17)? * 60 + num(18..20)?;
    Some(Y2007 + days * 86400 + secs - zone)
}

fn gen_days(dir: &Path, name: &str, size: &str, days: u32, seed: u64) -> PathBuf {
    let p = dir.join(name);
    let mut c = wf();
    c.args(["gen", "wf2", "--size", size, "--seed", &seed.to_string()])
        .args(["--days", &days.to_string(), "-o"])
        .arg(&p);
    ok(c);
    p
}

#[test]
fn gen_days_spans_the_days_asked_for_and_repeats_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // Within 1% from a few MB on; a smaller output has too few lines for
    // their random gaps to even out.
    for (size, days, within) in [("3M", 30, 0.01), ("200K", 2, 0.05), ("1M", 1, 0.03)] {
        let a = std::fs::read(gen_days(dir.path(), "a", size, days, 5)).unwrap();
        let b = std::fs::read(gen_days(dir.path(), "b", size, days, 5)).unwrap();
        assert!(a == b, "{size} {days}: not the same bytes twice");
        let t: Vec<i64> = a.split(|&c| c == b'\n').filter_map(clf_secs).collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{size}: not in order");
        let span = (t[t.len() - 1] - t[0]) as f64;
        let want = days as f64 * 86400.0;
        assert!(
            (span - want).abs() < want * within,
            "{size} {days}: spans {span} s, not {want}"
        );
        // Evenly: the first half of the lines cover about half the days.
        let half = (t[t.len() / 2] - t[0]) as f64;
        assert!((half / span - 0.5).abs() < 0.05, "{size}: {half} of {span}");
    }
    // Without --days, the hourly pattern as before: 3M is well under a day.
    let p = dir.path().join("plain");
    let mut c = wf();
    c.args(["gen", "wf2", "--size", "3M", "-o"]).arg(&p);
    ok(c);
    let a = std::fs::read(&p).unwrap();
    let t: Vec<i64> = a.split(|&c| c == b'\n').filter_map(clf_secs).collect();
    assert!(t[t.len() - 1] - t[0] < 86400);
}

/// Seconds since the epoch of 2007-01-01T00:00:00Z.
const Y2007: i64 = 1_167_609_600;

/// A time (seconds, 2007 or 2008) as ISO 8601 UTC.
fn iso(t: i64) -> String {
    let len = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let (mut d, s) = ((t - Y2007).div_euclid(86400), (t - Y2007).rem_euclid(86400));
    let mut y = 2007;
    if d >= 365 {
        (y, d) = (2008, d - 365);
    }
    let mut m = 0;
    while d >= len[m] + i64::from(m == 1 && y == 2008) {
        d -= len[m] + i64::from(m == 1 && y == 2008);
        m += 1;
    }
    let (h, mi, sec) = (s / 3600, s / 60 % 60, s % 60);
    format!("{y}-{:02}-{:02}T{h:02}:{mi:02}:{sec:02}Z", m + 1, d + 1)
}

/// `wf sql --json --stats -j J QUERY PATH` with the time push-down on or
/// off (`WF_TIME_PUSHDOWN=0`): stdout and stderr; it must succeed.
fn sql(query: &str, path: &Path, extra: &[&str], pushdown: bool) -> (String, String) {
    let mut c = wf();
    c.args(["sql", "--json", "--stats", "--no-progress"])
        .args(extra)
        .arg(query)
        .arg(path);
    if !pushdown {
        c.env("WF_TIME_PUSHDOWN", "0");
    }
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{query}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// The bytes the push-down's spans hold and the files' size, from `--stats`.
fn spans(err: &str) -> Option<(u64, u64)> {
    let l = err.lines().find(|l| l.contains("time push-down"))?;
    let (_, rest) = l.split_once("): ")?;
    let mut w = rest.split_whitespace();
    let span = w.next()?.parse().ok()?;
    let size = w.nth(1)?.parse().ok()?;
    Some((span, size))
}

/// The query's rows with and without the push-down must be the same (and
/// the count of the first column equal `want` when given); returns the
/// push-down run's stderr.
fn same(query: &str, path: &Path, extra: &[&str], want: Option<usize>) -> String {
    let (on, err) = sql(query, path, extra, true);
    let (off, err_off) = sql(query, path, extra, false);
    assert_eq!(on, off, "{query} {extra:?}\n{err}");
    assert!(spans(&err_off).is_none(), "{err_off}");
    if let Some(n) = want {
        let v: serde_json::Value = serde_json::from_str(on.lines().next().unwrap()).unwrap();
        assert_eq!(v["n"], n, "{query}: {on}");
    }
    err
}

/// Lines of `data` whose time is in `[since, until)` (seconds).
fn naive_count(data: &[u8], since: i64, until: i64) -> usize {
    let lines = data.split(|&c| c == b'\n');
    lines
        .filter_map(clf_secs)
        .filter(|t| (since..until).contains(t))
        .count()
}

const COUNT: &str = "SELECT count(*) AS n, min(time) AS lo, max(time) AS hi, sum(bytes) AS b, \
     count(DISTINCT path) AS p FROM logs WHERE ";

#[test]
fn sql_time_filters_read_little_and_answer_as_without_pushdown() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("month.log");
    let mut c = wf();
    c.args(["gen", "wf2", "--size", "4M", "--days", "30"])
        .arg("-o")
        .arg(&p);
    ok(c);
    let data = std::fs::read(&p).unwrap();
    let t: Vec<i64> = data.split(|&c| c == b'\n').filter_map(clf_secs).collect();
    let (first, last) = (t[0], t[t.len() - 1]);
    let hour = last - 3600;
    let mid = first + 15 * 86400 + 1234;
    let cases = [
        (format!("time >= TIMESTAMP '{}'", iso(hour)), hour, i64::MAX),
        (
            format!(
                "time >= '{}'::timestamp AND time < '{}'::timestamp",
                iso(mid),
                iso(mid + 7200)
            ),
            mid,
            mid + 7200,
        ),
        (
            format!(
                "time BETWEEN TIMESTAMP '{}' AND TIMESTAMP '{}'",
                iso(mid),
                iso(mid + 600)
            ),
            mid,
            mid + 601,
        ),
        (
            format!(
                "time > TIMESTAMP '{}' AND time <= TIMESTAMP '{}'",
                iso(mid),
                iso(mid + 60)
            ),
            mid + 1,
            mid + 61,
        ),
        (
            format!("time < TIMESTAMP '{}'", iso(first + 1800)),
            0,
            first + 1800,
        ),
        // Outside the log on either side.
        (
            format!("time >= TIMESTAMP '{}'", iso(last + 86400)),
            last + 86400,
            i64::MAX,
        ),
        (
            format!("time < TIMESTAMP '{}'", iso(first - 86400)),
            0,
            first - 86400,
        ),
    ];
    for (cond, since, until) in &cases {
        let want = naive_count(&data, *since, *until);
        for j in ["1", "3"] {
            let err = same(&format!("{COUNT}{cond}"), &p, &["-j", j], Some(want));
            let (span, size) = spans(&err).unwrap_or_else(|| panic!("{cond}: {err}"));
            assert_eq!(size, data.len() as u64);
            // A narrow window reads a small part of the file.
            if *until - *since.max(&first) <= 7200 || *since > last {
                assert!(span * 20 < size, "{cond}: {span} of {size}");
            }
        }
    }
    // With other filters and columns beside, and a GROUP BY.
    let q = format!(
        "SELECT status, count(*) AS n FROM logs WHERE time >= TIMESTAMP '{}' AND status <> 200 \
         GROUP BY status ORDER BY status",
        iso(hour)
    );
    same(&q, &p, &[], None);
    // A filter on the time as text is not pushed down: the same rows.
    let q = format!(
        "SELECT count(*) AS n FROM logs WHERE CAST(time AS VARCHAR) >= '{}'",
        iso(hour).replace('T', " ")
    );
    let err = same(&q, &p, &[], None);
    assert!(spans(&err).is_none(), "{err}");
    // EXPLAIN shows the window and the spans.
    let (plan, _) = sql(&format!("EXPLAIN {COUNT}{}", cases[0].0), &p, &[], true);
    assert!(plan.contains("time=[") && plan.contains("spans"), "{plan}");
}

/// A log of `n` lines 10 s apart from `t0`, every 7th written 200 s late
/// (inside the 5 minutes of slack), every 50th without a time.
fn disordered(n: i64, t0: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let t = t0 + 10 * i - if i % 7 == 3 { 200 } else { 0 };
        if i % 50 == 49 {
            out.extend_from_slice(b"no time on this line\n");
            continue;
        }
        let s = iso(t);
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let m: usize = s[5..7].parse().unwrap();
        out.extend_from_slice(
            format!(
                "10.0.0.{} - - [{}/{}/{}:{} +0000] \"GET /p{} HTTP/1.1\" 200 {} \"-\" \"x\"\n",
                i % 200,
                &s[8..10],
                months[m - 1],
                &s[0..4],
                &s[11..19],
                i % 13,
                i
            )
            .as_bytes(),
        );
    }
    out
}

#[test]
fn disorder_within_the_slack_lines_without_time_and_out_of_order_files() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Y2007 + 40 * 86400;
    let data = disordered(20_000, t0);
    let p = dir.path().join("d.log");
    std::fs::write(&p, &data).unwrap();
    let q = |a: i64, b: i64| {
        format!(
            "{COUNT}time >= TIMESTAMP '{}' AND time < TIMESTAMP '{}'",
            iso(a),
            iso(b)
        )
    };
    // Window edges where late lines lie on both sides.
    for (a, b) in [(t0 + 100_000, t0 + 100_500), (t0 + 33_330, t0 + 33_340)] {
        let want = naive_count(&data, a, b);
        let err = same(&q(a, b), &p, &["--format", "combined"], Some(want));
        let (span, size) = spans(&err).unwrap();
        assert!(span * 10 < size, "{span} of {size}");
    }
    // Two runs joined: more out of order than the slack. Read whole, said so.
    let mut two = data.clone();
    two.extend_from_slice(&data);
    let p2 = dir.path().join("two.log");
    std::fs::write(&p2, &two).unwrap();
    let (a, b) = (t0 + 150_000, t0 + 160_000);
    let want = naive_count(&two, a, b);
    let err = same(&q(a, b), &p2, &["--format", "combined"], Some(want));
    assert!(err.contains("not in time order"), "{err}");
    assert_eq!(spans(&err), Some((two.len() as u64, two.len() as u64)));
}

/// Lines written up to 20 minutes late, past the default slack of 5
/// minutes: `--disorder 30m` still reads only the window's bytes and gives
/// the exact answer, and `--stats` shows the slack used.
#[test]
fn sql_disorder_sets_the_slack() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Y2007 + 40 * 86400;
    let mut data = Vec::new();
    for (i, line) in disordered(20_000, t0).split(|&c| c == b'\n').enumerate() {
        // Every 11th line 1,000 s later than its neighbours' time says.
        let line = String::from_utf8_lossy(line).into_owned();
        let late = i % 11 == 5 && line.contains('[');
        let line = match (late, clf_secs(line.as_bytes())) {
            // Within its day: only the time of day is rewritten (across
            // midnight the line was a day late, at the file's head).
            (true, Some(t)) if iso(t)[..10] == iso(t - 1000)[..10] => {
                let old = &iso(t)[11..19];
                line.replace(old, &iso(t - 1000)[11..19])
            }
            _ => line,
        };
        if !line.is_empty() {
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
        }
    }
    let p = dir.path().join("late.log");
    std::fs::write(&p, &data).unwrap();
    let (a, b) = (t0 + 100_000, t0 + 100_600);
    let q = format!(
        "{COUNT}time >= TIMESTAMP '{}' AND time < TIMESTAMP '{}'",
        iso(a),
        iso(b)
    );
    let want = naive_count(&data, a, b);
    let extra = ["--format", "combined", "--disorder", "30m"];
    let err = same(&q, &p, &extra, Some(want));
    assert!(err.contains("slack +/- 1800 s"), "{err}");
    assert!(!err.contains("not in time order"), "{err}");
    let (span, size) = spans(&err).unwrap();
    assert!(span * 10 < size, "{span} of {size}");
}

#[test]
fn json_lines_time_key() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Y2007 + 10 * 86400;
    let mut data = String::new();
    for i in 0..5000 {
        let t = t0 + 60 * i - if i % 5 == 0 { 100 } else { 0 };
        data.push_str(&format!("{{\"time\":\"{}\",\"n\":{i}}}\n", iso(t)));
    }
    let p = dir.path().join("a.jsonl");
    std::fs::write(&p, &data).unwrap();
    let (a, b) = (t0 + 60 * 2000, t0 + 60 * 2100);
    let q = format!(
        "SELECT count(*) AS n, sum(n) AS s FROM logs WHERE time >= TIMESTAMP '{}' AND time < \
         TIMESTAMP '{}'",
        iso(a),
        iso(b)
    );
    // The time inferred as text, compared as CAST(time AS TIMESTAMP).
    let err = same(&q, &p, &["--format", "jsonl"], Some(100));
    let (span, size) = spans(&err).unwrap();
    assert!(span * 10 < size, "{span} of {size}");
}

/// `wf feed --since --until -- cat`: the lines the workers got, sorted.
fn feed_lines(path: &Path, a: i64, b: i64, extra: &[&str]) -> (Vec<Vec<u8>>, String) {
    let mut c = wf();
    c.args([
        "feed",
        "-j",
        "2",
        "--block",
        "4K",
        "--since",
        &iso(a),
        "--until",
        &iso(b),
    ])
    .args(extra)
    .arg(path)
    .args(["--", "cat"]);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let mut lines: Vec<Vec<u8>> = o
        .stdout
        .split_inclusive(|&c| c == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    lines.sort();
    (lines, err)
}

fn naive_lines(data: &[u8], a: i64, b: i64) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = data
        .split_inclusive(|&c| c == b'\n')
        .filter(|l| clf_secs(l).is_some_and(|t| (a..b).contains(&t)))
        .map(<[u8]>::to_vec)
        .collect();
    lines.sort();
    lines
}

#[test]
fn feed_gets_only_the_records_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen_days(dir.path(), "m.log", "2M", 3, 9);
    let data = std::fs::read(&p).unwrap();
    let t: Vec<i64> = data.split(|&c| c == b'\n').filter_map(clf_secs).collect();
    let (a, b) = (t[0] + 86400, t[0] + 86400 + 3000);
    let (got, _) = feed_lines(&p, a, b, &[]);
    let want = naive_lines(&data, a, b);
    assert!(!want.is_empty());
    assert!(got == want, "{} lines, want {}", got.len(), want.len());
    // Late lines within the slack, lines without a time, and a file out of
    // order (read whole, said so), gzipped too.
    let t0 = Y2007 + 40 * 86400;
    let d = disordered(5000, t0);
    let mut two = d.clone();
    two.extend_from_slice(&d);
    let p2 = dir.path().join("two.log");
    std::fs::write(&p2, &two).unwrap();
    for (a, b) in [(t0 + 20_000, t0 + 20_600), (t0 + 33_330, t0 + 33_340)] {
        let (got, err) = feed_lines(&p2, a, b, &["--format", "combined"]);
        assert!(err.contains("not in time order"), "{err}");
        assert!(got == naive_lines(&two, a, b), "{a}..{b}");
        let p1 = dir.path().join("one.log");
        std::fs::write(&p1, &d).unwrap();
        let (got, _) = feed_lines(&p1, a, b, &[]);
        assert!(got == naive_lines(&d, a, b), "{a}..{b}");
    }
    let gz = dir.path().join("m.log.gz");
    let mut c = wf();
    c.args([
        "gen", "wf2", "--size", "2M", "--days", "3", "--seed", "9", "-o",
    ])
    .arg(&gz);
    ok(c);
    let (got, _) = feed_lines(&gz, a, b, &[]);
    assert!(
        got == want,
        "gzip: {} lines, want {}",
        got.len(),
        want.len()
    );
}

/// A log whose every 400th line is a request of an hour logged when it ended
/// (its start time, as Apache and nginx write it): the push-down's search
/// with 5 minutes of slack left out records of a window near its end. The
/// spans' edges are checked first (`time_order`): their records go back an
/// hour, so the file is searched again with that slack, said on stderr, and
/// the answer is the one without the push-down, at every `-j`; `wf feed
/// --since` the same (before: 866 of 868 records, exit 0, nothing said).
#[test]
fn a_log_out_of_order_beyond_the_slack_is_searched_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.log");
    let mut c = wf();
    c.args(["gen", "wf2", "--size", "4M", "--odd-lines", "0", "-o"])
        .arg(&p);
    ok(c);
    let data = std::fs::read(&p).unwrap();
    let (out, t) = late_log(&data);
    let log = dir.path().join("late.log");
    std::fs::write(&log, &out).unwrap();
    let since = t[t.len() / 3];
    let until = since + 600;
    let q = format!(
        "SELECT count(*) AS n FROM logs WHERE time >= '{}'::timestamp AND time < '{}'::timestamp",
        iso(since),
        iso(until)
    );
    let want = naive_count(&out, since, until);
    for j in ["1", "3"] {
        let err = same(&q, &log, &["-j", j, "--format", "combined"], Some(want));
        assert!(err.contains("searched again with --disorder"), "{err}");
    }
    // `wf feed` checks the same edges before any worker is fed.
    let (lines, err) = feed_lines(&log, since, until, &[]);
    assert_eq!(lines, naive_lines(&out, since, until), "{err}");
    assert!(err.contains("searched again with --disorder"), "{err}");
}

/// A record of the window dated year 2300 (a clock gone wrong): the one
/// after it goes back further than any slack, so the second search reads
/// the file whole, and that is the last. Before, a whole read's span
/// (0..size) still counted as searched and its check found the same record
/// again: the query never ended.
#[test]
fn a_record_centuries_ahead_ends_in_a_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let (log, out, since, until) = far_future(dir.path());
    let q = format!(
        "SELECT count(*) AS n FROM logs WHERE time >= '{}'::timestamp AND time < '{}'::timestamp",
        iso(since),
        iso(until)
    );
    let want = naive_count(&out, since, until);
    let err = same(&q, &log, &["-j", "2", "--format", "combined"], Some(want));
    assert!(err.contains("read whole and filtered"), "{err}");
    let (lines, err) = feed_lines(&log, since, until, &[]);
    assert_eq!(lines, naive_lines(&out, since, until), "{err}");
    assert!(err.contains("read whole and filtered"), "{err}");
}
