//! Generated web logs and a plain reference for time windows: the
//! independent check of `--since`/`--until` (its own civil-date arithmetic
//! and `%t` parser, not wf's), shared by `time.rs` and `time_seek.rs`.

use std::path::{Path, PathBuf};

use super::{ok, run, wf};

/// Days from 1970-01-01, counted naively year by year and month by month.
pub fn naive_days(y: i64, m: i64, d: i64) -> i64 {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut days = 0;
    for yy in 1970..y {
        days += if leap(yy) { 366 } else { 365 };
    }
    let len = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    for mm in 1..m {
        days += len[mm as usize - 1] + i64::from(mm == 2 && leap(y));
    }
    days + d - 1
}

/// The time (seconds) in the first `[dd/Mon/yyyy:HH:MM:SS +zzzz]` of a line.
pub fn naive_clf(line: &[u8]) -> Option<i64> {
    let open = line.iter().position(|&c| c == b'[')?;
    if line.get(open + 27) != Some(&b']') {
        return None;
    }
    let s = std::str::from_utf8(line.get(open + 1..open + 27)?).ok()?;
    let (date, zone) = s.split_once(' ')?;
    let p: Vec<&str> = date.split(['/', ':']).collect();
    let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let digits = |x: &str, n: usize| x.len() == n && x.bytes().all(|c| c.is_ascii_digit());
    if p.len() != 6 || !digits(p[0], 2) || !digits(p[2], 4) || !p[3..].iter().all(|x| digits(x, 2))
    {
        return None;
    }
    let m = months.iter().position(|m| p[1].eq_ignore_ascii_case(m))? as i64 + 1;
    let n: Vec<i64> = p.iter().map(|x| x.parse().unwrap_or(0)).collect();
    let (d, y, h, mi, sec) = (n[0], n[2], n[3], n[4], n[5]);
    let zs = zone.as_bytes();
    if zs.len() != 5 || !matches!(zs[0], b'+' | b'-') || !digits(&zone[1..], 4) {
        return None;
    }
    let (zh, zm): (i64, i64) = (zone[1..3].parse().ok()?, zone[3..5].parse().ok()?);
    if !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 || zh > 23 || zm > 59 {
        return None;
    }
    let off = (zh * 60 + zm) * 60 * if zs[0] == b'-' { -1 } else { 1 };
    Some(naive_days(y, m, d) * 86400 + h * 3600 + mi * 60 + sec - off)
}

/// The lines of `data` whose time (seconds) is in `[since, until)`.
pub fn reference(data: &[u8], since: i64, until: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for line in data.split_inclusive(|&c| c == b'\n') {
        if naive_clf(line).is_some_and(|t| t >= since && t < until) {
            out.extend_from_slice(line);
        }
    }
    out
}

/// An ISO 8601 UTC time for the command line.
pub fn iso(t: i64) -> String {
    let (days, s) = (t.div_euclid(86400), t.rem_euclid(86400));
    let mut y = 1970;
    let mut d = days;
    while d >= naive_days(y + 1, 1, 1) - naive_days(y, 1, 1) {
        d -= naive_days(y + 1, 1, 1) - naive_days(y, 1, 1);
        y += 1;
    }
    let mut m = 1;
    while m < 12 && d >= naive_days(y, m + 1, 1) - naive_days(y, m, 1) {
        d -= naive_days(y, m + 1, 1) - naive_days(y, m, 1);
        m += 1;
    }
    format!(
        "{y:04}-{m:02}-{:02}T{:02}:{:02}:{:02}Z",
        d + 1,
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

pub fn gen(dir: &Path, name: &str, size: &str, odd: &str) -> PathBuf {
    let p = dir.join(name);
    let mut c = wf();
    c.args(["gen", "wf2", "--size", size, "--odd-lines", odd, "-o"])
        .arg(&p);
    ok(c);
    p
}

/// Times of the lines that have one, in file order.
pub fn times(data: &[u8]) -> Vec<i64> {
    data.split(|&c| c == b'\n').filter_map(naive_clf).collect()
}

pub fn count(args: &[&str], path: &Path, stdin: Option<&[u8]>) -> (serde_json::Value, String) {
    let mut c = wf();
    c.args(["count", "--json", "--stats", "--no-progress"])
        .args(args);
    if stdin.is_none() {
        c.arg(path);
    }
    let o = run(c, stdin);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

/// A `--stats` figure: the first number after `name:`.
pub fn stat(err: &str, name: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.starts_with(name) && l[name.len()..].trim_start().starts_with(':'))
        .unwrap_or_else(|| panic!("{name}: {err}"));
    let v = line[name.len()..].trim_start_matches([' ', ':']);
    v.split_whitespace().next().unwrap().parse().unwrap()
}

/// A generated log with every 400th line (after its first hour) replaced by
/// the first line of an hour before, again: a request of an hour logged
/// with the time it began, as Apache and nginx write it. Returns the log and
/// the times of the original lines.
pub fn late_log(data: &[u8]) -> (Vec<u8>, Vec<i64>) {
    let lines: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
    let t: Vec<i64> = lines.iter().map(|l| naive_clf(l).unwrap()).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let back = t.partition_point(|&x| x < t[i] - 3600);
        let late = i % 400 == 0 && t[i] - t[0] > 3600;
        out.extend_from_slice(if late { lines[back] } else { l });
    }
    (out, t)
}

/// A generated log (4M, `future.log` in `dir`) with one line in the middle
/// of the 10-minute window at a third of it dated year 2300 (a clock gone
/// wrong): the record after it is some 274 years earlier, further back than
/// any slack of a search done again. Returns its path, its bytes and the
/// window (seconds).
pub fn far_future(dir: &Path) -> (PathBuf, Vec<u8>, i64, i64) {
    let data = std::fs::read(gen(dir, "g.log", "4M", "0")).unwrap();
    let t = times(&data);
    let since = t[t.len() / 3];
    let until = since + 600;
    let mid = t.partition_point(|&x| x < since + 300);
    let mut out = Vec::new();
    for (i, l) in data.split_inclusive(|&c| c == b'\n').enumerate() {
        let at = out.len() + l.iter().position(|&c| c == b'[').unwrap() + 8;
        out.extend_from_slice(l);
        if i == mid {
            out[at..at + 4].copy_from_slice(b"2300");
        }
    }
    let log = dir.join("future.log");
    std::fs::write(&log, &out).unwrap();
    (log, out, since, until)
}
