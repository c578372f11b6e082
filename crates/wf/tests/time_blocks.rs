//! `--since`/`--until` over BGZF and multi-frame zstd files for the jobs
//! that need record offsets (`wf report`: its failed lines named by offset;
//! `wf sql`: `_offset`): the compressed file is searched by block, the range
//! found decoded from its start at its true decoded offset, and the answer
//! (offsets included) equals the same question over the uncompressed file,
//! while `--stats` shows the compressed bytes skipped. A zstd file without
//! frame content sizes and a single gzip member are read whole, and say so.

mod common;
use common::timelog::*;
use common::*;

use std::io::Write;
use std::path::{Path, PathBuf};

/// A combined log of `n` lines two seconds apart from 2026-11-28, every
/// 97th line broken after its time (a report counts it failed).
fn log(n: usize) -> Vec<u8> {
    assert!(n < 43_200, "one day");
    let mut out = Vec::new();
    for i in 0..n {
        let s = i * 2;
        let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
        let t = format!("[28/Nov/2026:{h:02}:{m:02}:{sec:02} +0000]");
        if i % 97 == 5 {
            writeln!(out, "broken {t} not a request").unwrap();
            continue;
        }
        writeln!(
            out,
            "10.0.{}.{} - - {t} \"GET /p{} HTTP/1.1\" {} {} \"-\" \"agent{}\"",
            i % 251,
            i % 7,
            i % 53,
            [200, 404, 304][i % 3],
            i * 7 % 5000,
            i % 11
        )
        .unwrap();
    }
    out
}

/// `data` as zstd frames of `lines` lines each, with or without their
/// content sizes (the zstd crate; `zstd --no-content-size` writes the same).
fn zstd_frames(data: &[u8], lines: usize, sizes: bool) -> Vec<u8> {
    let all: Vec<&[u8]> = data.split_inclusive(|&c| c == b'\n').collect();
    let mut out = Vec::new();
    for piece in all.chunks(lines) {
        let mut c = zstd::bulk::Compressor::new(3).unwrap();
        c.include_contentsize(sizes).unwrap();
        out.extend(c.compress(&piece.concat()).unwrap());
    }
    out
}

/// `tool args... < input`: its stdout.
fn pipe(tool: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = std::process::Command::new(tool);
    c.args(args);
    let o = run(c, Some(input));
    assert!(o.status.success(), "{tool}");
    o.stdout
}

/// The test's files: the plain log and its BGZF, zstd (with and without
/// content sizes) and single-member gzip forms; `None` without `bgzip`.
struct Files {
    _dir: tempfile::TempDir,
    data: Vec<u8>,
    plain: PathBuf,
    bgz: PathBuf,
    zst: PathBuf,
    zst_nosize: PathBuf,
    gz: PathBuf,
}

fn files() -> Option<Files> {
    let have = std::process::Command::new("bgzip")
        .arg("--version")
        .output();
    if have.is_err() {
        eprintln!("skipping: bgzip absent");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = log(6000);
    let at = |n: &str| dir.path().join(n);
    let f = Files {
        plain: at("a.log"),
        bgz: at("a.log.gz"),
        zst: at("a.log.zst"),
        zst_nosize: at("n.log.zst"),
        gz: at("one.log.gz"),
        data,
        _dir: dir,
    };
    std::fs::write(&f.plain, &f.data).unwrap();
    std::fs::write(&f.bgz, pipe("bgzip", &["-c"], &f.data)).unwrap();
    std::fs::write(&f.zst, zstd_frames(&f.data, 400, true)).unwrap();
    std::fs::write(&f.zst_nosize, zstd_frames(&f.data, 400, false)).unwrap();
    std::fs::write(&f.gz, pipe("gzip", &["-c"], &f.data)).unwrap();
    Some(f)
}

/// A window of about 5% of the lines in the middle: its bounds as ISO 8601.
fn window(data: &[u8]) -> (i64, i64, String, String) {
    windows(data)[0].clone()
}

/// Windows in the middle, at the start and at the end of the log.
fn windows(data: &[u8]) -> Vec<(i64, i64, String, String)> {
    let t = times(data);
    let n = t.len();
    let w = [
        (t[n / 2], t[n / 2] + 600),
        (t[0] - 60, t[n / 10]),
        (t[n * 9 / 10], t[n - 1] + 60),
    ];
    w.iter().map(|&(a, b)| (a, b, iso(a), iso(b))).collect()
}

/// `wf report --json --stats` with `args`: the JSON without the log's size
/// and path, the failed lines' offsets, and stderr.
fn report(args: &[&str], path: &Path) -> (serde_json::Value, Vec<u64>, String) {
    let mut c = wf();
    c.args(["report", "--json", "--stats", "--no-progress"])
        .args(args)
        .arg(path);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = v["general"].as_object_mut().unwrap();
    g.remove("log_size");
    g.remove("log_path");
    let failed = err
        .lines()
        .filter(|l| l.starts_with("failed line at byte offset of"))
        .map(|l| l.rsplit(':').next().unwrap().trim().parse().unwrap())
        .collect();
    (v, failed, err)
}

#[test]
fn count_over_bgzf_and_zstd_frames_skips_compressed_bytes() {
    let Some(f) = files() else { return };
    let (a, b, s, u) = window(&f.data);
    let want = reference(&f.data, a, b);
    let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
    for path in [&f.bgz, &f.zst] {
        let size = std::fs::metadata(path).unwrap().len();
        let (v, err) = count(&["--since", &s, "--until", &u], path, None);
        assert_eq!(v["records"], recs, "{path:?}\n{err}");
        let skipped = stat(&err, "compressed bytes skipped by the time search");
        assert!(skipped > size / 2, "{path:?}\n{err}");
    }
}

/// A tenth of the log's times joined after it (`cat big.log small.log`):
/// the window's records of the short run are counted over BGZF and zstd
/// frames as over the plain file (the search's probes of the blocks it
/// skips find the file out of order; before, `--until` left them out).
#[test]
fn a_joined_log_over_blocks_counts_the_short_runs_records() {
    let Some(f) = files() else { return };
    let (long, short) = (log(40_000), log(4_000));
    let data = [&long[..], &short[..]].concat();
    let t = times(&long);
    let (a, b) = (t[0] - 60, t[t.len() / 2]);
    let want = reference(&data, a, b)
        .iter()
        .filter(|&&c| c == b'\n')
        .count() as u64;
    let dir = f._dir.path();
    let (plain, bgz, zst) = (
        dir.join("j.log"),
        dir.join("j.log.gz"),
        dir.join("j.log.zst"),
    );
    std::fs::write(&plain, &data).unwrap();
    std::fs::write(&bgz, pipe("bgzip", &["-c"], &data)).unwrap();
    std::fs::write(&zst, zstd_frames(&data, 400, true)).unwrap();
    for path in [&plain, &bgz, &zst] {
        let (v, err) = count(&["--since", &iso(a), "--until", &iso(b)], path, None);
        assert_eq!(v["records"], want, "{path:?}\n{err}");
    }
}

/// A log whose clock steps back 10 minutes (a second pass starting before
/// the first ends): a window across the step has the records of both
/// passes in `wf report` and `wf sql` over BGZF and zstd frames, as over the
/// plain file. The step lay a block after the span the search found, between
/// its spread probes: 600 of 800 records, exit 0 (`count`, which decodes in
/// parts, was right); probes at doubling block distances from the span's
/// edges now see it.
#[test]
fn a_step_back_just_after_the_span_is_seen_over_blocks() {
    let Some(f) = files() else { return };
    let first = log(20_000);
    let end = times(&first)[times(&first).len() - 1];
    let later = log(40_000);
    let second: Vec<u8> = later
        .split_inclusive(|&c| c == b'\n')
        .filter(|l| times(l).first().is_some_and(|&t| t >= end - 600))
        .flatten()
        .copied()
        .collect();
    let data = [&first[..], &second[..]].concat();
    let (a, b) = (end - 1000, end - 400);
    let want = reference(&data, a, b);
    let dir = f._dir.path();
    let (plain, bgz, zst) = (
        dir.join("s.log"),
        dir.join("s.log.gz"),
        dir.join("s.log.zst"),
    );
    std::fs::write(&plain, &data).unwrap();
    std::fs::write(&bgz, pipe("bgzip", &["-c"], &data)).unwrap();
    std::fs::write(&zst, zstd_frames(&data, 400, true)).unwrap();
    let q = format!(
        "SELECT count(*) AS n FROM logs WHERE time >= TIMESTAMP '{}' AND time < TIMESTAMP '{}'",
        iso(a),
        iso(b)
    );
    let lines = want.iter().filter(|&&c| c == b'\n').count();
    let rows = |p: &Path| sql(&q, p).0;
    let total = |p: &Path| {
        report(&["--since", &iso(a), "--until", &iso(b)], p).0["general"]["total_requests"].clone()
    };
    let (rows_plain, total_plain) = (rows(&plain), total(&plain));
    assert_eq!(total_plain, lines, "the plain file's report");
    for path in [&bgz, &zst] {
        assert_eq!(rows(path), rows_plain, "{path:?}");
        assert_eq!(total(path), total_plain, "{path:?}");
    }
}

/// One line out of place at the end or the start of a log (a long download
/// logged hours late) skips no record of a window over the plain file, BGZF
/// or zstd frames: the edges' records are all looked at, and the file is
/// found out of order (before, the plain file was skipped after its last
/// line alone: 0 records, exit 0; a BGZF file of one block after its first).
#[test]
fn one_line_out_of_place_at_an_edge_skips_no_record() {
    let Some(f) = files() else { return };
    let body = log(20_000);
    let all: Vec<&[u8]> = body.split_inclusive(|&c| c == b'\n').collect();
    let t = times(&body);
    let (first, last) = (t[0], t[t.len() - 1]);
    // 30 minutes out of place: within the eighths' order (the probes at
    // 1/8 and 7/8 of the file are hours away), far outside the slack.
    let late_tail = [&body[..], all[all.len() - 900]].concat();
    let late_head = [all[900], &body[..]].concat();
    let dir = f._dir.path();
    for (name, data, a, b) in [
        ("tail", &late_tail, last - 600, last + 60),
        ("head", &late_head, first - 60, first + 600),
    ] {
        let want = reference(data, a, b)
            .iter()
            .filter(|&&c| c == b'\n')
            .count() as u64;
        assert!(want > 200, "{name}: {want}");
        let (plain, bgz, zst) = (
            dir.join(format!("{name}.log")),
            dir.join(format!("{name}.log.gz")),
            dir.join(format!("{name}.log.zst")),
        );
        std::fs::write(&plain, data).unwrap();
        std::fs::write(&bgz, pipe("bgzip", &["-c"], data)).unwrap();
        std::fs::write(&zst, zstd_frames(data, 400, true)).unwrap();
        for path in [&plain, &bgz, &zst] {
            let (v, err) = count(&["--since", &iso(a), "--until", &iso(b)], path, None);
            assert_eq!(v["records"], want, "{path:?}\n{err}");
        }
    }
}

/// The report of a window over BGZF and multi-frame zstd equals the one
/// over the plain file, failed lines' offsets included, at -j 1 and 3, and
/// most compressed bytes are not read.
#[test]
fn report_window_over_bgzf_and_zstd_searches_blocks_with_true_offsets() {
    let Some(f) = files() else { return };
    for (_, _, s, u) in windows(&f.data) {
        report_window(&f, &s, &u);
    }
}

fn report_window(f: &Files, s: &str, u: &str) {
    let win = ["--since", s, "--until", u];
    let (want, want_failed, _) = report(&win, &f.plain);
    assert!(want["general"]["total_requests"].as_u64().unwrap() > 100);
    assert!(!want_failed.is_empty(), "no failed lines in the window");
    for path in [&f.bgz, &f.zst] {
        let size = std::fs::metadata(path).unwrap().len();
        for j in ["1", "3"] {
            let args = [&win[..], &["-j", j, "--chunk-size", "16K"]].concat();
            let (got, failed, err) = report(&args, path);
            let what = format!("{path:?} -j {j}\n{err}");
            assert!(got == want, "{what}: the reports differ");
            assert_eq!(failed, want_failed, "{what}");
            let skipped = stat(&err, "compressed bytes skipped by the time search");
            assert!(skipped > size / 2, "{what}");
            let whole = stat(&err, "inputs read whole and filtered (streams, compressed)");
            assert_eq!(whole, 0, "{what}");
        }
    }
}

/// Without frame content sizes (`zstd --no-content-size`) a zstd file's
/// decoded offsets past a skipped frame are unknown, and a single gzip
/// member has no blocks: both are read whole and filtered, said in
/// `--stats`, with the same answer.
#[test]
fn report_reads_zstd_without_sizes_and_one_gzip_member_whole() {
    let Some(f) = files() else { return };
    let (_, _, s, u) = window(&f.data);
    let win = ["--since", s.as_str(), "--until", u.as_str()];
    let (want, want_failed, _) = report(&win, &f.plain);
    for path in [&f.zst_nosize, &f.gz] {
        let (got, failed, err) = report(&win, path);
        assert!(got == want, "{path:?}: the reports differ\n{err}");
        assert_eq!(failed, want_failed, "{path:?}");
        let whole = stat(&err, "inputs read whole and filtered (streams, compressed)");
        assert_eq!(whole, 1, "{path:?}\n{err}");
        let skipped = stat(&err, "compressed bytes skipped by the time search");
        assert_eq!(skipped, 0, "{path:?}\n{err}");
    }
}

/// `wf sql --json --stats QUERY PATH`: stdout and stderr.
fn sql(query: &str, path: &Path) -> (String, String) {
    let mut c = wf();
    c.args(["sql", "--json", "--stats", "--no-progress", query])
        .arg(path);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{query}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// The bytes of files in the push-down's spans and their size (`--stats`).
fn spans(err: &str) -> (u64, u64) {
    let l = err.lines().find(|l| l.contains("time push-down")).unwrap();
    let (_, rest) = l.split_once("): ").unwrap();
    let w: Vec<&str> = rest.split_whitespace().collect();
    (w[0].parse().unwrap(), w[2].parse().unwrap())
}

/// `SELECT _offset, ...` and counts with a time window over BGZF and
/// multi-frame zstd equal the plain file's; the spans read are a small part
/// of the compressed bytes. Without content sizes: read whole, said so.
#[test]
fn sql_window_over_bgzf_and_zstd_gives_plain_offsets() {
    let Some(f) = files() else { return };
    let (a, b, s, u) = window(&f.data);
    let filter = format!("time >= TIMESTAMP '{s}' AND time < TIMESTAMP '{u}'");
    let rows =
        format!("SELECT _offset, time, status, path FROM logs WHERE {filter} ORDER BY _offset");
    let n = format!("SELECT count(*) AS n, sum(_offset) AS o FROM logs WHERE {filter}");
    let want_n = reference(&f.data, a, b)
        .split(|&c| c == b'\n')
        .filter(|l| !l.starts_with(b"broken") && !l.is_empty())
        .count();
    let (want_rows, _) = sql(&rows, &f.plain);
    let (want_count, _) = sql(&n, &f.plain);
    let v: serde_json::Value = serde_json::from_str(want_count.trim()).unwrap();
    assert_eq!(v["n"], want_n, "{want_count}");
    for path in [&f.bgz, &f.zst, &f.zst_nosize] {
        let (got, err) = sql(&rows, path);
        assert!(got == want_rows, "{path:?}: the rows differ\n{err}");
        let (got, err) = sql(&n, path);
        assert_eq!(got, want_count, "{path:?}\n{err}");
        let (span, size) = spans(&err);
        if path == &f.zst_nosize {
            assert_eq!(span, size, "{err}");
            assert!(err.contains("zstd frames without content sizes"), "{err}");
        } else {
            assert!(span < size / 2, "{path:?}\n{err}");
            // The scan read only the range's decoded bytes.
            let read = stat(&err, "bytes");
            assert!(read < f.data.len() as u64 / 2, "{path:?}\n{err}");
        }
    }
}
