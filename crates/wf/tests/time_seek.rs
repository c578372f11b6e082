//! `--since`/`--until` that read only what they must, against a plain
//! filter: formats whose `%t` is not the first `[...]`, BGZF and multi-frame
//! zstd files searched by block or frame, rotated logs skipped after their
//! head and tail. Each answer equals the one over the lines a naive parser of
//! this file keeps, and `--stats` shows what was left unread.

mod common;
use common::timelog::*;
use common::*;

use std::path::Path;

/// `wf report --json` of `paths` with `args`, without the log's size and
/// paths (they differ between a cut file and a searched one).
fn report(args: &[&str], paths: &[&Path]) -> serde_json::Value {
    let mut c = wf();
    c.args(["report", "--json", "--no-progress"])
        .args(args)
        .args(paths);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?}: {err}");
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = v["general"].as_object_mut().unwrap();
    g.remove("log_size");
    g.remove("log_path");
    v
}

/// An Apache `LogFormat` with another `[...]` before `%t` (a header holding
/// a fixed old time): the window is of `%t`, in the search's probes and in
/// the filter, and `wf report --since --until` equals the report of the
/// lines a plain filter keeps.
#[test]
fn report_window_reads_the_time_of_the_formats_own_t() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "plain.log", "1M", "0");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    let (lo, hi) = (t[t.len() / 3], t[t.len() * 2 / 3]);
    // `1.2.3.4 - - [t] ...` becomes `1.2.3.4 [01/Jan/2000:...] - - [t] ...`.
    let moved = |lines: &[u8]| -> Vec<u8> {
        let mut out = Vec::new();
        for l in lines.split_inclusive(|&c| c == b'\n') {
            let sp = l.iter().position(|&c| c == b' ').unwrap();
            out.extend_from_slice(&l[..sp]);
            out.extend_from_slice(b" [01/Jan/2000:00:00:00 +0000]");
            out.extend_from_slice(&l[sp..]);
        }
        out
    };
    let log = dir.path().join("tagged.log");
    std::fs::write(&log, moved(&data)).unwrap();
    let cut = dir.path().join("cut.log");
    std::fs::write(&cut, moved(&reference(&data, lo, hi))).unwrap();
    let f =
        r#"--format=apache:%h [%{X-Start}i] %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i""#;
    let want = report(&[f], &[&cut]);
    assert!(
        want["general"]["total_requests"].as_u64().unwrap() > 100,
        "{want}"
    );
    let (s, u) = (iso(lo), iso(hi));
    for j in ["1", "3"] {
        let args = [
            f,
            "-j",
            j,
            "--chunk-size",
            "64K",
            "--since",
            &s,
            "--until",
            &u,
        ];
        let got = report(&args, &[&log]);
        assert_eq!(got["general"], want["general"], "-j {j}");
        assert!(got == want, "-j {j}: the panels differ");
    }
}

/// `tool args... < input > output`.
fn pipe(tool: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = std::process::Command::new(tool);
    c.args(args);
    let o = run(c, Some(input));
    assert!(
        o.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// `data` as zstd frames of about `n` lines each, concatenated.
fn zstd_frames(data: &[u8], n: usize) -> Vec<u8> {
    let lines: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
    let mut out = Vec::new();
    for piece in lines.chunks(n) {
        out.extend(pipe("zstd", &["-q", "-c"], &piece.concat()));
    }
    out
}

/// BGZF and multi-frame zstd: the window's answer equals the plain filter's
/// at -j 1 and 3, and only a part of the compressed bytes is decoded; a
/// single gzip member is read whole and said so.
#[test]
fn bgzf_and_zstd_frames_are_searched_by_block() {
    let have = |t: &str| {
        std::process::Command::new(t)
            .arg("--version")
            .output()
            .is_ok()
    };
    if !have("bgzip") || !have("zstd") {
        eprintln!("skipping: bgzip or zstd absent");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "z.log", "2M", "0.01");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    let bgz = dir.path().join("z.log.gz");
    std::fs::write(&bgz, pipe("bgzip", &["-c"], &data)).unwrap();
    let zst = dir.path().join("z.log.zst");
    std::fs::write(&zst, zstd_frames(&data, 500)).unwrap();
    let gz = dir.path().join("one.log.gz");
    std::fs::write(&gz, pipe("gzip", &["-c"], &data)).unwrap();
    let windows = [
        (t[t.len() / 2], t[t.len() / 2] + 120),
        (t[0] - 60, t[t.len() / 5]),
        (t[t.len() * 4 / 5], t[t.len() - 1] + 60),
    ];
    for (since, until) in windows {
        let want = reference(&data, since, until);
        let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
        let (s, u) = (iso(since), iso(until));
        for path in [&bgz, &zst, &gz] {
            let size = std::fs::metadata(path).unwrap().len();
            for j in ["1", "3"] {
                let args = ["-j", j, "--chunk-size", "64K", "--since", &s, "--until", &u];
                let (v, err) = count(&args, path, None);
                let what = format!("{path:?} {args:?}\n{err}");
                assert_eq!(v["records"], recs, "{what}");
                assert_eq!(v["bytes"], want.len() as u64, "{what}");
                let whole = stat(&err, "inputs read whole and filtered (streams, compressed)");
                let decoded = stat(&err, "compressed");
                if path == &gz {
                    assert_eq!(whole, 1, "{what}");
                    continue;
                }
                assert_eq!(whole, 0, "{what}");
                let skipped = stat(&err, "compressed bytes skipped by the time search");
                assert!(skipped > size / 2, "{what}");
                assert!(decoded < size / 2, "{what}");
            }
        }
    }
}

/// A directory of rotated logs, plain and gzip, with the window inside one:
/// the answer equals the plain filter's; the plain files before and after
/// it are skipped after their tail or head, the gzip file after it after
/// its head, and the older gzip file (whose last time is unknown) is read.
#[test]
fn rotated_logs_outside_the_window_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "all.log", "2M", "0.01");
    let data = std::fs::read(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    let lines: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    // Oldest first: access.log.4.gz, .3, .2 (the window), .1.gz, access.log.
    let names = [
        "access.log.4.gz",
        "access.log.3",
        "access.log.2",
        "access.log.1.gz",
        "access.log",
    ];
    let n = lines.len().div_ceil(names.len());
    for (name, piece) in names.iter().zip(lines.chunks(n)) {
        let piece = piece.concat();
        let body = match name.ends_with(".gz") {
            true => pipe("gzip", &["-c"], &piece),
            false => piece,
        };
        std::fs::write(logs.join(name), body).unwrap();
    }
    let third = times(&lines[2 * n..3 * n].concat());
    let (since, until) = (third[third.len() / 2], third[third.len() / 2] + 120);
    let want = reference(&data, since, until);
    let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
    assert!(recs > 0);
    let (s, u) = (iso(since), iso(until));
    for j in ["1", "3"] {
        let args = ["-j", j, "--since", &s, "--until", &u];
        let (v, err) = count(&args, &logs, None);
        assert_eq!(v["records"], recs, "{err}");
        assert_eq!(v["bytes"], want.len() as u64, "{err}");
        assert_eq!(stat(&err, "files skipped by the time search"), 3, "{err}");
        let whole = stat(&err, "inputs read whole and filtered (streams, compressed)");
        assert_eq!(whole, 1, "{err}");
    }
}

/// A log whose every 400th line is a request of an hour logged when it ended
/// (with the time it began, as Apache and nginx write it): the records of a
/// window near `--until` are also an hour on, past the span the search
/// reads with the 5 minutes of `--disorder`. The records read go back an
/// hour, so the file is searched again with that slack: the answer is the
/// plain filter's, at every `-j`, and stderr says so; beside stdin, which
/// cannot be read again, an error says so (before: 866 of 868
/// records, exit 0, nothing said).
#[test]
fn a_log_seen_out_of_order_beyond_the_slack_is_searched_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "g.log", "4M", "0");
    let data = std::fs::read(&p).unwrap();
    let (out, t) = late_log(&data);
    let log = dir.path().join("late.log");
    std::fs::write(&log, &out).unwrap();
    let since = t[t.len() / 3];
    let until = since + 600;
    let want = reference(&out, since, until);
    let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
    for args in [&["-j", "1"][..], &["-j", "3", "--chunk-size", "64K"][..]] {
        let mut args = args.to_vec();
        let (s, u) = (iso(since), iso(until));
        args.extend(["--since", &s, "--until", &u]);
        let (v, err) = count(&args, &log, None);
        assert_eq!(v["records"], recs, "{args:?}: {err}");
        assert_eq!(v["bytes"], want.len() as u64, "{err}");
        assert!(err.contains("searched again with --disorder"), "{err}");
        assert!(stat(&err, "bytes skipped by the time search") > 0, "{err}");
    }
    // Beside stdin, which cannot be read again, it is an error: exit 2.
    let mut c = wf();
    c.args(["count", "--since", &iso(since), "--until", &iso(until)])
        .arg(&log)
        .arg("-");
    let o = run(c, Some(b""));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("may be missing"), "{err}");
}

/// A record of the window dated year 2300: `wf count` reads the file whole
/// on its second search, and stops there (before, it searched again and
/// again, never ending).
#[test]
fn a_record_centuries_ahead_ends_in_a_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let (log, out, since, until) = far_future(dir.path());
    let want = reference(&out, since, until);
    let (s, u) = (iso(since), iso(until));
    let (v, err) = count(&["-j", "2", "--since", &s, "--until", &u], &log, None);
    assert_eq!(v["bytes"], want.len() as u64, "{err}");
    assert!(err.contains("read whole and filtered"), "{err}");
    let slack = "inputs read whole and filtered (--disorder 10000w or more)";
    assert_eq!(stat(&err, slack), 1, "{err}");
    // Asked for: stdin stays a stream (it was counted as a file out of
    // order), the file is read whole, not searched.
    let args = ["--disorder", "10000w", "--since", &s, "--until", &u, "-"];
    let mut c = wf();
    c.args(["count", "--json", "--stats", "--no-progress"])
        .args(args)
        .arg(&log);
    let o = run(c, Some(&out[..1000]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(stat(&err, slack), 1, "{err}");
    let streams = "inputs read whole and filtered (streams, compressed)";
    assert_eq!(stat(&err, streams), 1, "{err}");
    assert_eq!(
        stat(&err, "inputs read whole and filtered (out of order)"),
        0
    );
    assert_eq!(stat(&err, "bytes read by the time search"), 0, "{err}");
}

/// A BGZF copy of the log of hour-long requests (`late_log`): `wf report`
/// decodes a compressed range from its start at its true offset, so the
/// order of the records it reads tells as a plain file's does, and the file
/// is searched again; the report equals that of the plain filter's lines
/// (before: 2 of the window's 868 requests missing, exit 0).
#[test]
fn report_of_a_bgzf_log_out_of_order_is_searched_again() {
    if !have("bgzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(gen(dir.path(), "g.log", "4M", "0")).unwrap();
    let (out, t) = late_log(&data);
    let (since, until) = (t[t.len() / 3], t[t.len() / 3] + 600);
    for j in ["1", "3"] {
        let args = ["-j", j, "--chunk-size", "64K"];
        bgzf_report_is_the_filters(dir.path(), &out, (since, until), &args);
    }
}

/// `wf report --since --until` of `log` bgzipped equals the report of the
/// plain filter's lines of it.
fn bgzf_report_is_the_filters(dir: &Path, log: &[u8], (since, until): (i64, i64), args: &[&str]) {
    let bgz = dir.join("log.gz");
    std::fs::write(&bgz, pipe("bgzip", &["-c"], log)).unwrap();
    let cut = dir.join("cut.log");
    std::fs::write(&cut, reference(log, since, until)).unwrap();
    let want = report(&[], &[&cut]);
    let (s, u) = (iso(since), iso(until));
    let args = [args, &["--since", &s, "--until", &u]].concat();
    let got = report(&args, &[&bgz]);
    assert_eq!(got["general"], want["general"], "{args:?}");
    assert!(got == want, "{args:?}: the panels differ");
}

/// A compressed log whose first record is later than the rest (a line of
/// 10:00 before 09:00..09:59): it cannot be left out by its first record
/// alone. Before, `--until` inside the rest skipped the `.gz` and `.zst`
/// whole (0 records, exit 0); the plain file was read whole, said so.
#[test]
fn a_compressed_log_is_not_skipped_by_a_first_record_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(gen(dir.path(), "g.log", "2M", "0")).unwrap();
    let lines: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
    let t = times(&data);
    let (n, until) = (t.len(), t[t.len() / 2]);
    assert!(t[n - 1] - until > 600, "the generated log spans too little");
    let mut out = lines[n - 1].to_vec();
    out.extend(lines[..n - 1].concat());
    let want = reference(&out, t[0] - 1, until);
    let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
    let gz = dir.path().join("d.log.gz");
    std::fs::write(&gz, pipe("gzip", &["-c"], &out)).unwrap();
    let mut paths = vec![gz];
    if std::process::Command::new("zstd")
        .arg("--version")
        .output()
        .is_ok()
    {
        let zst = dir.path().join("d.log.zst");
        std::fs::write(&zst, pipe("zstd", &["-q", "-c"], &out)).unwrap();
        paths.push(zst);
    }
    for p in &paths {
        let (v, err) = count(&["--until", &iso(until)], p, None);
        assert_eq!(v["records"], recs, "{p:?}: {err}");
        assert_eq!(stat(&err, "files skipped by the time search"), 0, "{err}");
    }
}

/// A BGZF log with a record dated 2300 in the window and another at the
/// start of its last block: `wf report` (which checks the order of the
/// compressed spans it reads) searched it by block in its last round too,
/// found the jump back again, and searched again for ever. The last round
/// reads every file whole, compressed ones too.
#[test]
fn report_of_a_bgzf_log_with_records_centuries_ahead_ends() {
    if !have("bgzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, mut out, since, until) = far_future(dir.path());
    // The first whole line of bgzip's last block (65280 input bytes each).
    let block = (out.len() - 1) / 65280 * 65280;
    let nl = block + out[block..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let at = nl + out[nl..].iter().position(|&c| c == b'[').unwrap() + 8;
    out[at..at + 4].copy_from_slice(b"2300");
    bgzf_report_is_the_filters(dir.path(), &out, (since, until), &[]);
}

/// A log in local time without an offset repeats an hour at the autumn DST
/// change: a window inside that hour holds lines of both passes, and one
/// just after the span's end shows the file out of order (a window inside
/// the hour found the first pass only: 30 of 60 lines, exit 0). Every
/// window's count equals a plain filter's.
#[test]
fn an_hour_repeated_at_a_dst_change_is_found_twice() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dst.log");
    // Ten days, a line every 20 s, 01:00..02:00 of day 5 written twice.
    let mut lines: Vec<(i64, String)> = Vec::new();
    let day = 86_400;
    let base = 1_793_491_200; // 2026-11-01T00:00:00 as if UTC
    for i in 0..(10 * day / 20) {
        let t = base - 5 * day + i * 20;
        lines.push((t, iso(t)));
        if t >= base + 7_200 - 20 && t < base + 7_200 && lines.len() > 1 {
            // The clock goes back from 01:59:40 to 01:00:00.
            for j in 0..180 {
                let r = base + 3_600 + j * 20;
                lines.push((r, iso(r)));
            }
        }
    }
    let text: String = lines
        .iter()
        .map(|(_, s)| format!("{} INFO request\n", s.trim_end_matches('Z')))
        .collect();
    std::fs::write(&p, &text).unwrap();
    for (a, b) in [
        (base + 3_600 + 600, base + 3_600 + 1_200),
        (base + 3_600 + 3_000, base + 3_600 + 3_300),
        (i64::MIN, base + 3_600 + 300),
        (base + 3_600 + 3_420, i64::MAX),
    ] {
        let want = lines.iter().filter(|(t, _)| *t >= a && *t < b).count() as u64;
        let mut args = vec!["--format".to_string(), "iso".into()];
        if a != i64::MIN {
            args.extend(["--since".into(), iso(a)]);
        }
        if b != i64::MAX {
            args.extend(["--until".into(), iso(b)]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (v, err) = count(&args, &p, None);
        assert_eq!(v["records"], want, "{args:?}\n{err}");
    }
}
