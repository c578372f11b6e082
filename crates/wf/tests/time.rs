//! `--since`/`--until` of `wf count` and `wf wf2` against a plain reference:
//! every line read, its time parsed by a naive parser of this file, kept if in
//! `[since, until)`. Logs from `wf gen wf2` (about 2 hours in 2 MB, in time
//! order, with odd lines), also disordered within and beyond the slack, with
//! lines without a time, read as files, streams and gzip, at several `-j` and
//! chunk sizes; and `--stats` shows that a narrow window reads a small part.

mod common;
use common::timelog::*;
use common::*;

use std::path::{Path, PathBuf};

/// `wf count --since --until` equals the reference at several windows, -j and
/// chunk sizes (down to 100 bytes).
fn check_count(path: &Path, windows: &[(i64, i64)], extra: &[&str]) {
    let data = std::fs::read(path).unwrap();
    let runs = [("1", "8M"), ("2", "4K"), ("3", "64K"), ("2", "100")];
    for (k, &(since, until)) in windows.iter().enumerate() {
        let want = reference(&data, since, until);
        let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
        // Two of the settings per window, each setting on every other window.
        for &(j, chunk) in [runs[k % 4], runs[(k + 1) % 4]].iter() {
            let (s, u) = (iso(since), iso(until));
            let mut args = vec!["-j", j, "--chunk-size", chunk, "--since", &s, "--until", &u];
            args.extend_from_slice(extra);
            let (v, err) = count(&args, path, None);
            let what = format!("{path:?} {args:?}");
            assert_eq!(v["records"], recs, "{what}\n{err}");
            assert_eq!(v["bytes"], want.len() as u64, "{what}");
        }
    }
}

/// Windows at the edges and inside of a log whose times are `t`.
fn windows(t: &[i64]) -> Vec<(i64, i64)> {
    let (first, last) = (*t.iter().min().unwrap(), *t.iter().max().unwrap());
    let mid = t[t.len() / 2];
    vec![
        (first - 3600, first + 60),            // since before the first record
        (last - 600, last + 3600),             // until after the last
        (first - 7200, first - 3600),          // empty: before everything
        (last + 1, last + 3600),               // empty: after everything
        (mid, mid),                            // empty: since == until
        (mid + 10, mid),                       // empty: since > until
        (mid, mid + 120),                      // since == a record's exact time
        (t[t.len() / 3] - 30, t[t.len() / 3]), // until == a record's time
    ]
}

#[test]
fn count_equals_reference_in_order_and_odd() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "a.log", "1M", "0.02");
    let t = times(&std::fs::read(&p).unwrap());
    check_count(&p, &windows(&t), &[]);
    check_count(&p, &windows(&t)[6..7], &["--format", "combined"]);
}

/// Every 7th line moved 4 minutes back (within the default slack of 5), and
/// lines without a time in between.
#[test]
fn count_equals_reference_disordered_within_the_slack() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(gen(dir.path(), "src.log", "1M", "0")).unwrap();
    let mut out = Vec::new();
    for (i, line) in src.split_inclusive(|&c| c == b'\n').enumerate() {
        let s = String::from_utf8_lossy(line).into_owned();
        if i % 7 == 3 {
            let t = naive_clf(line).unwrap() - 240;
            let open = s.find('[').unwrap();
            let close = s.find(']').unwrap();
            out.extend_from_slice(&s.as_bytes()[..open]);
            out.extend_from_slice(clf(t).as_bytes());
            out.extend_from_slice(&s.as_bytes()[close + 1..]);
        } else {
            out.extend_from_slice(line);
        }
        if i % 50 == 0 {
            out.extend_from_slice(b"no time on this line\n[not a time either]\n");
        }
    }
    let p = dir.path().join("b.log");
    std::fs::write(&p, &out).unwrap();
    let t = times(&out);
    check_count(&p, &windows(&t), &[]);
    // With no slack the answer may differ; with it, untimed lines are counted.
    let w = windows(&t)[6];
    let (_, err) = count(&["--since", &iso(w.0), "--until", &iso(w.1)], &p, None);
    assert!(stat(&err, "records without a time") > 0, "{err}");
}

/// `[dd/Mon/yyyy:HH:MM:SS -0700]` of a time in seconds.
fn clf(t: i64) -> String {
    let u = iso(t - 7 * 3600); // "yyyy-mm-ddTHH:MM:SSZ", local to -0700
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m: usize = u[5..7].parse().unwrap();
    format!(
        "[{}/{}/{}:{} -0700]",
        &u[8..10],
        months[m - 1],
        &u[..4],
        &u[11..19]
    )
}

/// Two runs joined out of order (a later hour before an earlier one): the
/// probes see time go back by more than the slack, the file is read whole,
/// stderr says so, and the answer is still the reference's.
#[test]
fn out_of_order_file_is_read_whole_and_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(gen(dir.path(), "src.log", "1M", "0")).unwrap();
    let half = src.len() / 2;
    let cut = half + src[half..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let joined = [&src[cut..], &src[..cut]].concat();
    let p = dir.path().join("c.log");
    std::fs::write(&p, &joined).unwrap();
    let t = times(&src);
    // A window in the first run, which the search in the second would miss.
    let w = (t[t.len() / 4], t[t.len() / 4] + 300);
    check_count(&p, &[w], &[]);
    let (_, err) = count(&["--since", &iso(w.0), "--until", &iso(w.1)], &p, None);
    assert!(err.contains("not in time order"), "{err}");
    assert_eq!(
        stat(&err, "inputs read whole and filtered (out of order)"),
        1
    );
    assert_eq!(stat(&err, "bytes"), joined.len() as u64);
}

/// A narrow window reads a small part of the file (`--stats` bytes), and at
/// least the bytes of its records; a stream and a gzip file are read whole
/// and give the same answer.
#[test]
fn narrow_window_reads_little_and_streams_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "d.log", "2M", "0.01");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    let w = (t[t.len() / 2], t[t.len() / 2] + 60);
    let want = reference(&data, w.0, w.1);
    let (s, u) = (iso(w.0), iso(w.1));
    let args = ["--since", s.as_str(), "--until", u.as_str()];
    let (v, err) = count(&args, &p, None);
    assert_eq!(v["bytes"], want.len() as u64);
    let read = stat(&err, "bytes");
    // One minute and 5 minutes of slack on each side of a 2-hour log: about
    // a tenth; the whole file without the search.
    assert!(read >= want.len() as u64, "{err}");
    assert!(
        read < data.len() as u64 / 6,
        "read {read} of {}: {err}",
        data.len()
    );
    assert!(stat(&err, "bytes skipped by the time search") > data.len() as u64 / 2);
    let (v2, err2) = count(&args, &p, Some(&data));
    assert_eq!(v2["bytes"], v["bytes"]);
    assert_eq!(v2["records"], v["records"]);
    assert_eq!(stat(&err2, "bytes"), data.len() as u64);
    assert_eq!(
        stat(
            &err2,
            "inputs read whole and filtered (streams, compressed)"
        ),
        1
    );
    let gz = dir.path().join("d.log.gz");
    let mut c = wf();
    c.args(["gen", "wf2", "--size", "2M", "--odd-lines", "0.01", "-o"])
        .arg(&gz);
    ok(c);
    let (v3, err3) = count(&args, &gz, None);
    assert_eq!(v3["records"], v["records"], "{err3}");
    assert_eq!(
        stat(
            &err3,
            "inputs read whole and filtered (streams, compressed)"
        ),
        1
    );
}

/// `wf wf2 --since --until` equals `wf wf2` over the reference's lines.
#[test]
fn wf2_equals_wf2_over_the_reference_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "e.log", "1M", "0.02");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    for w in [
        windows(&t)[0],
        windows(&t)[6],
        (t[t.len() / 3], t[2 * t.len() / 3]),
    ] {
        let want_file = dir.path().join("want.log");
        std::fs::write(&want_file, reference(&data, w.0, w.1)).unwrap();
        let mut c = wf();
        c.args(["wf2", "--json"]).arg(&want_file);
        let want = ok(c);
        for (j, chunk) in [("1", "8M"), ("2", "4K"), ("3", "300")] {
            let mut c = wf();
            c.args(["wf2", "--json", "-j", j, "--chunk-size", chunk])
                .args(["--since", &iso(w.0), "--until", &iso(w.1)])
                .arg(&p);
            assert_eq!(ok(c), want, "{w:?} -j {j} --chunk-size {chunk}");
        }
    }
}

/// JSON lines and lines starting with an ISO 8601 time, by `--format` and by
/// shape (auto).
#[test]
fn json_and_iso_lines() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = naive_days(2026, 11, 27) * 86400;
    let mut json = String::new();
    let mut plain = String::new();
    for i in 0..5000 {
        let t = iso(t0 + i * 9);
        json.push_str(&format!(
            "{{\"level\":\"info\",\"time\":\"{t}\",\"n\":{i}}}\n"
        ));
        plain.push_str(&format!("{} GET /x/{i}\n", &t[..19]));
        if i % 100 == 0 {
            json.push_str("{\"msg\":\"no time\"}\n");
        }
    }
    let (pj, pi) = (dir.path().join("a.jsonl"), dir.path().join("b.log"));
    std::fs::write(&pj, &json).unwrap();
    std::fs::write(&pi, &plain).unwrap();
    // [10:00, 10:30) holds i with t0 + 36000 <= t0 + 9i < t0 + 37800.
    let want = (36000..37800).filter(|s| s % 9 == 0).count() as u64;
    let args = [
        "--since",
        "2026-11-27T10:00",
        "--until",
        "2026-11-27T11:30+01:00",
    ];
    for (p, fmt) in [(&pj, "json"), (&pj, "auto"), (&pi, "iso"), (&pi, "auto")] {
        let mut a = args.to_vec();
        a.extend(["--format", fmt, "--chunk-size", "4K", "-j", "2"]);
        let (v, err) = count(&a, p, None);
        assert_eq!(v["records"], want, "{p:?} {fmt}: {err}");
    }
    // The search skips most of the 50 lines without a time.
    let (_, err) = count(&args, &pj, None);
    let untimed = stat(&err, "records without a time");
    assert!(untimed > 0 && untimed < 10, "{err}");

    // Numbers since the epoch: zap's (Caddy's) seconds with a fraction and
    // pino's milliseconds, in JSON, and seconds in logfmt (they were no
    // time: 0 records, exit 0).
    let lines = |line: &dyn Fn(i64) -> String| -> String {
        (0..5000).map(|i| line(t0 + i * 9) + "\n").collect()
    };
    let zap = lines(&|t| format!("{{\"level\":\"info\",\"ts\":{t}.25,\"msg\":\"x\"}}"));
    let pino = lines(&|t| format!("{{\"level\":30,\"time\":{}123,\"msg\":\"x\"}}", t));
    let logfmt = lines(&|t| format!("ts={t}.5 level=info msg=x"));
    for (name, text, fmt) in [
        ("zap", zap, "json"),
        ("pino", pino, "auto"),
        ("logfmt", logfmt, "logfmt"),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let mut a = args.to_vec();
        a.extend(["--format", fmt, "--chunk-size", "4K", "-j", "2"]);
        let (v, err) = count(&a, &p, None);
        assert_eq!(v["records"], want, "{name}: {err}");
    }

    // No record with a time wf reads (the key is `date`): an error naming
    // --format, exit 2, for count and feed alike (it was 0 records, exit 0).
    let p = dir.path().join("dated.jsonl");
    std::fs::write(&p, "{\"date\":\"2026-11-27T10:00:00Z\"}\n".repeat(20)).unwrap();
    for job in [&["count"][..], &["feed", "--", "cat"]] {
        let mut c = wf();
        c.arg(job[0]).args(args).arg(&p).args(&job[1..]);
        let o = run(c, None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{job:?}: {err}");
        assert!(
            err.contains("none of the 20 records read has a time"),
            "{job:?}: {err}"
        );
    }
}

/// logfmt lines, and CSV/TSV lines with their time in a column named by
/// --time-column (by name from the header, or by number): `count` and `feed`
/// keep the window's records, at -j 1 and 2.
#[test]
fn logfmt_csv_and_tsv_lines() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = naive_days(2026, 11, 27) * 86400;
    let (mut logfmt, mut csv, mut tsv) = (String::new(), String::new(), String::new());
    csv.push_str("id,\"msg, quoted\",ts,n\n");
    tsv.push_str("n\tts\n");
    let mut window = String::new();
    for i in 0..5000 {
        let t = iso(t0 + i * 9);
        // A quoted `time=` before the real key is data, not the time.
        logfmt.push_str(&format!(
            "level=info msg=\"a time=1999-01-01\" ts={t} n={i}\n"
        ));
        let row = format!("{i},\"x, \"\"{i}\"\"\",\"{t}\",{i}\n");
        csv.push_str(&row);
        tsv.push_str(&format!("{i}\t{t}\n"));
        if (36000..37800).contains(&(i * 9)) {
            window.push_str(&row);
        }
    }
    let p = |n: &str, d: &str| {
        let p = dir.path().join(n);
        std::fs::write(&p, d).unwrap();
        p
    };
    let (pl, pc, pt) = (p("a.log", &logfmt), p("b.csv", &csv), p("c.tsv", &tsv));
    let want = (36000..37800).filter(|s| s % 9 == 0).count() as u64;
    let window_args = [
        "--since",
        "2026-11-27T10:00",
        "--until",
        "2026-11-27T10:30Z",
    ];
    let cases: [(&PathBuf, &[&str]); 6] = [
        (&pl, &["--format", "logfmt"]),
        (&pl, &["--format", "auto"]),
        (&pc, &["--format", "csv", "--time-column", "ts"]),
        (&pc, &["--format", "csv", "--time-column", "3"]),
        (&pt, &["--format", "tsv", "--time-column", "ts"]),
        (&pt, &["--format", "tsv", "--time-column", "2"]),
    ];
    for (path, fmt) in cases {
        for j in ["1", "2"] {
            let mut a = window_args.to_vec();
            a.extend(fmt);
            a.extend(["--chunk-size", "4K", "-j", j]);
            let (v, err) = count(&a, path, None);
            assert_eq!(v["records"], want, "{path:?} {fmt:?} -j {j}: {err}");
        }
    }
    let mut c = wf();
    c.args(["feed", "--format", "csv", "--time-column", "ts"])
        .args(window_args)
        .arg(&pc)
        .args(["--", "cat"]);
    let sorted = |s: &str| {
        let mut v: Vec<String> = s.lines().map(String::from).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&ok(c)), sorted(&window));
}

/// A time column that is not there, or given where it means nothing, is
/// refused with a message, exit 2.
#[test]
fn bad_time_columns_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.csv");
    std::fs::write(&f, "a,b\n1,2\n").unwrap();
    for (args, says) in [
        (
            &["--format", "csv", "--time-column", "c"][..],
            "no column 'c'",
        ),
        (&["--format", "csv", "--time-column", "0"], "from 1"),
        (&["--format", "csv"], "need --time-column"),
        (
            &["--format", "json", "--time-column", "a"],
            "needs --format csv",
        ),
    ] {
        let mut c = wf();
        c.arg("count").args(args).arg(&f);
        let o = run(c, None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Bad values are refused with a message, exit 2.
#[test]
fn bad_times_are_refused() {
    for args in [
        ["--since", "10:00"],
        ["--until", "-1y"],
        ["--disorder", "5"],
        ["--format", "xml"],
    ] {
        let mut c = wf();
        c.arg("count").args(args).arg("/dev/null");
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(args[1]),
            "{args:?}"
        );
    }
}
