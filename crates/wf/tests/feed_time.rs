//! `wf feed --since/--until` against the plain filter of `common/timelog.rs`:
//! the workers get exactly the window's records (each once, in file order
//! per worker) at several `-j` and block sizes; a regular file is searched,
//! so `--stats` shows a small part of it read; records out of order within
//! the slack near the edges are kept or left out one by one; a file out of
//! order beyond it and a stream are read whole; and a worker that stops
//! mid-window is reported with the input bytes it never read, exactly.

mod common;
use common::timelog::*;
use common::*;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// `wf feed ARGS --stats PATH -- sh -c SCRIPT` (`stdin`: instead of PATH):
/// its stdout, stderr and exit status.
fn feed(
    args: &[&str],
    path: Option<&Path>,
    stdin: Option<&[u8]>,
    script: &str,
) -> (Vec<u8>, String, i32) {
    let mut c = wf();
    c.args(["feed", "--stats"]).args(args);
    if let Some(p) = path {
        c.arg(p);
    }
    c.args(["--", "sh", "-c", script]);
    let o = run(c, stdin);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (o.stdout, err, o.status.code().unwrap_or(-1))
}

/// Each worker's lines, tagged `N ` by the worker, in the order it printed
/// them: each must be the reference's lines in order, with gaps; together
/// every reference line exactly once.
fn check_workers(out: &[u8], want: &[u8], what: &str) {
    let want: Vec<&[u8]> = want
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut per: BTreeMap<&[u8], Vec<&[u8]>> = BTreeMap::new();
    for l in out.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
        let sp = l.iter().position(|&c| c == b' ').unwrap_or(l.len());
        per.entry(&l[..sp])
            .or_default()
            .push(&l[(sp + 1).min(l.len())..]);
    }
    let mut pos: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (i, l) in want.iter().enumerate().rev() {
        pos.entry(*l).or_default().push(i);
    }
    let mut all = Vec::new();
    for lines in per.values() {
        let mut last = None;
        for l in lines {
            let i = pos.get_mut(l).and_then(|v| v.pop());
            let i = i.unwrap_or_else(|| {
                panic!(
                    "{what}: not in the window, or twice: {}",
                    String::from_utf8_lossy(l)
                )
            });
            assert!(last < Some(i), "{what}: a worker's records out of order");
            last = Some(i);
            all.push(i);
        }
    }
    all.sort();
    assert_eq!(
        all,
        (0..want.len()).collect::<Vec<_>>(),
        "{what}: records missing"
    );
}

/// What a failed worker's message says was never read ("PATH bytes A..B"),
/// and A: the input offset of the first record not consumed.
fn never_read_from(err: &str) -> (&str, usize) {
    let missed = err
        .split("never read: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{err}"));
    let range = missed.split(" bytes ").nth(1).unwrap();
    (missed, range.split("..").next().unwrap().parse().unwrap())
}

/// Offsets in `data` of the records in `[lo, hi)` (by the plain parser).
fn window_starts(data: &[u8], lo: i64, hi: i64) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    for l in data.split_inclusive(|&c| c == b'\n') {
        if naive_clf(l).is_some_and(|x| x >= lo && x < hi) {
            starts.push(at);
        }
        at += l.len();
    }
    starts
}

/// Tag each line with the worker's number.
const TAG: &str = r#"sed "s/^/$WF_WORKER /""#;

/// A narrow window of a plain log: exactly its records at -j 1 and 3 and
/// two block sizes, and `--stats` shows the search read a small part.
#[test]
fn window_of_a_plain_log_is_exact_and_reads_little() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "a.log", "2M", "0.01");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    let (lo, hi) = (t[t.len() / 2], t[t.len() / 2] + 240);
    let want = reference(&data, lo, hi);
    assert!(want.len() > 10_000, "a window of some records");
    let (s, u) = (iso(lo), iso(hi));
    for (j, block) in [("1", "64K"), ("3", "64K"), ("1", "3K"), ("3", "3K")] {
        let args = ["-j", j, "--block", block, "--since", &s, "--until", &u];
        let (out, err, code) = feed(&args, Some(&p), None, TAG);
        let what = format!("-j {j} --block {block}");
        assert_eq!(code, 0, "{what}: {err}");
        check_workers(&out, &want, &what);
        let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
        assert_eq!(stat(&err, "records"), recs, "{what}: {err}");
        // The search read the window and its slack, not the file.
        let read = stat(&err, "bytes");
        assert!(read < data.len() as u64 / 5, "{what}: read {read}: {err}");
        assert!(stat(&err, "bytes skipped by the time search") > data.len() as u64 / 2);
        assert_eq!(stat(&err, "inputs searched by time"), 1, "{err}");
        assert!(err.contains("a.log: searched, bytes "), "{err}");
        assert!(stat(&err, "records outside the time range") > 0, "{err}");
    }
    // -j 1, whole blocks: byte for byte the reference.
    let args = ["-j", "1", "--since", &s, "--until", &u];
    let (out, err, _) = feed(&args, Some(&p), None, "cat");
    assert!(out == want, "{err}");
}

/// Lines swapped with one 20 lines later (tens of seconds apart, within the
/// default slack) around both edges of the window: each judged by its own
/// time. A stream of the same bytes is read whole: the same records.
#[test]
fn disorder_within_the_slack_near_the_edges() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(gen(dir.path(), "src.log", "1M", "0")).unwrap();
    let mut lines: Vec<&[u8]> = src.split_inclusive(|&c| c == b'\n').collect();
    let t: Vec<i64> = lines.iter().map(|l| naive_clf(l).unwrap()).collect();
    let (lo, hi) = (t[t.len() / 3], t[t.len() * 2 / 3]);
    let near = |x: i64| (x - lo).abs() < 120 || (x - hi).abs() < 120;
    let mut swapped = 0;
    let mut i = 0;
    while i + 20 < lines.len() {
        if near(t[i]) && i % 3 == 0 {
            lines.swap(i, i + 20);
            swapped += 1;
            i += 21;
        } else {
            i += 1;
        }
    }
    assert!(swapped > 10, "{swapped}");
    let data = lines.concat();
    assert_ne!(times(&data), {
        let mut s = times(&data);
        s.sort();
        s
    });
    let p = dir.path().join("d.log");
    std::fs::write(&p, &data).unwrap();
    let want = reference(&data, lo, hi);
    let (s, u) = (iso(lo), iso(hi));
    for (j, block) in [("2", "2K"), ("1", "64K")] {
        let args = ["-j", j, "--block", block, "--since", &s, "--until", &u];
        let (out, err, code) = feed(&args, Some(&p), None, TAG);
        assert_eq!(code, 0, "{err}");
        check_workers(&out, &want, &format!("file -j {j} --block {block}"));
        assert!(err.contains("d.log: searched"), "{err}");
    }
    let args = ["-j", "2", "--block", "2K", "--since", &s, "--until", &u];
    let (out, err, code) = feed(&args, None, Some(&data), TAG);
    assert_eq!(code, 0, "{err}");
    check_workers(&out, &want, "stdin");
    assert!(err.contains("read whole and filtered (a stream)"), "{err}");
    assert_eq!(stat(&err, "bytes"), data.len() as u64, "{err}");
    // gzip: read whole (decoded) and filtered the same way.
    let gz = dir.path().join("d.log.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &data).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let (out, err, code) = feed(&args, Some(&gz), None, TAG);
    assert_eq!(code, 0, "{err}");
    check_workers(&out, &want, "gzip");
    assert!(
        err.contains("d.log.gz: read whole and filtered (compressed)"),
        "{err}"
    );
}

/// Rotated logs: the older one ends before the window (skipped after its
/// tail, no block of it planned), the newer one holds it; `--keep-order`
/// (a process per block) gives the window's records byte for byte.
#[test]
fn rotated_logs_and_keep_order() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(gen(dir.path(), "src.log", "1M", "0.01")).unwrap();
    let cut = src.len() / 2;
    let cut = cut + src[cut..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let (old, new) = (
        dir.path().join("access.log.1"),
        dir.path().join("access.log"),
    );
    std::fs::write(&old, &src[..cut]).unwrap();
    std::fs::write(&new, &src[cut..]).unwrap();
    let t = times(&src[cut..]);
    let (lo, hi) = (t[t.len() / 2], t[t.len() / 2] + 300);
    let want = reference(&src, lo, hi);
    let (s, u) = (iso(lo), iso(hi));
    let mut c = wf();
    c.args([
        "feed",
        "--stats",
        "--keep-order",
        "-j",
        "3",
        "--block",
        "2K",
    ])
    .args(["--since", &s, "--until", &u])
    .args([&old, &new])
    .args(["--", "cat"]);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(o.stdout == want, "{err}");
    assert_eq!(stat(&err, "files skipped by the time search"), 1, "{err}");
    assert!(stat(&err, "bytes") < src.len() as u64 / 3, "{err}");
    assert!(
        err.contains("access.log.1: searched, outside the window"),
        "{err}"
    );
}

/// The log's second half moved before its first: time goes back by an
/// hour, more than the slack. The file is read whole (said on stderr and
/// in `--stats`) and the answer is still the window's records.
#[test]
fn disorder_beyond_the_slack_reads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(gen(dir.path(), "src.log", "1M", "0")).unwrap();
    let lines: Vec<&[u8]> = src.split_inclusive(|&c| c == b'\n').collect();
    let half = lines.len() / 2;
    let data = [&lines[half..], &lines[..half]].concat().concat();
    let p = dir.path().join("r.log");
    std::fs::write(&p, &data).unwrap();
    let t = times(&src);
    let (lo, hi) = (t[t.len() / 4], t[t.len() * 3 / 4]);
    let want = reference(&data, lo, hi);
    let args = [
        "-j",
        "2",
        "--block",
        "8K",
        "--since",
        &iso(lo),
        "--until",
        &iso(hi),
    ];
    let (out, err, code) = feed(&args, Some(&p), None, TAG);
    assert_eq!(code, 0, "{err}");
    check_workers(&out, &want, "out of order");
    assert!(err.contains("not in time order"), "{err}");
    assert!(
        err.contains("r.log: read whole and filtered (out of order)"),
        "{err}"
    );
    assert_eq!(stat(&err, "bytes"), data.len() as u64, "{err}");
}

/// A worker that reads `n` lines of the window and exits 3: the report
/// names the input bytes it never read, from exactly the first record of
/// the window it did not get (not the records left out before it), and
/// nothing outside the span searched.
#[test]
fn failed_worker_mid_window_is_reported_in_input_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "a.log", "1M", "0");
    let data = std::fs::read(&p).unwrap();
    let t = times(&data);
    let (lo, hi) = (t[t.len() / 2], t[t.len() / 2] + 600);
    let (s, u) = (iso(lo), iso(hi));
    // Offsets of the window's records in the file.
    let starts = window_starts(&data, lo, hi);
    assert!(starts.len() > 200);
    for (n, block) in [(3, "4K"), (150, "4K"), (150, "1M")] {
        // `read` takes one line at a time from a pipe, never more.
        let script = format!("i=0; while [ $i -lt {n} ]; do read -r l; printf '%s\\n' \"$l\"; i=$((i+1)); done; exit 3");
        let args = ["-j", "1", "--block", block, "--since", &s, "--until", &u];
        let (out, err, code) = feed(&args, Some(&p), None, &script);
        let what = format!("{n} lines, --block {block}");
        assert_eq!(code, 2, "{what}: {err}");
        let want = reference(&data, lo, hi);
        let first_n: Vec<&[u8]> = want.split_inclusive(|&c| c == b'\n').take(n).collect();
        assert!(out == first_n.concat(), "{what}: not the first {n} records");
        assert!(err.contains("worker 0 (pid"), "{what}: {err}");
        assert!(err.contains("exited with status 3"), "{what}: {err}");
        let (missed, from) = never_read_from(&err);
        assert_eq!(from, starts[n], "{what}: {err}");
        assert!(missed.starts_with(&*p.to_string_lossy()), "{what}: {err}");
        // What it was given lies inside the span the search found.
        let span = err.split("a.log: searched, bytes ").nth(1).unwrap();
        let a: usize = span.split("..").next().unwrap().parse().unwrap();
        let given = err.split("which may be incomplete: ").nth(1).unwrap();
        let g0: usize = given
            .split(" bytes ")
            .nth(1)
            .unwrap()
            .split("..")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(a > 0 && g0 >= a && g0 <= starts[0], "{what}: {err}");
    }
}

/// `--per-block` under a window, from a stream (read whole): no worker is
/// started for a block none of whose records is in the window, and the
/// window's records all arrive, each once.
#[test]
fn per_block_starts_no_worker_for_a_block_without_a_record_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(gen(dir.path(), "s.log", "512K", "0")).unwrap();
    let t = times(&data);
    let (lo, hi) = (t[t.len() / 2], t[t.len() / 2] + 60);
    let want = reference(&data, lo, hi);
    let (s, u) = (iso(lo), iso(hi));
    let args = [
        "--per-block",
        "-j",
        "2",
        "--block",
        "4K",
        "--since",
        &s,
        "--until",
        &u,
    ];
    // Each worker prints its lines, then a line of how many it got.
    let script = r#"n=0; while IFS= read -r l; do echo "$l"; n=$((n+1)); done; echo "got $n""#;
    // A stream (blocks in memory), and a file out of order (read whole, its
    // blocks read from the file): the halves swapped.
    let cut = data.len() / 2;
    let cut = cut + data[cut..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let swapped = dir.path().join("swapped.log");
    std::fs::write(&swapped, [&data[cut..], &data[..cut]].concat()).unwrap();
    for (path, stdin) in [(None, Some(&data[..])), (Some(swapped.as_path()), None)] {
        let (out, err, code) = feed(&args, path, stdin, script);
        check_per_block(&out, &err, code, &want);
        assert_eq!(stat(&err, "bytes"), data.len() as u64, "{err}");
    }
}

/// Every worker got a record, and all together the window's, each once.
fn check_per_block(out: &[u8], err: &str, code: i32, want: &[u8]) {
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8_lossy(out);
    let got: Vec<&str> = text.lines().filter(|l| l.starts_with("got ")).collect();
    assert!(!got.is_empty(), "{err}");
    assert!(
        !got.contains(&"got 0"),
        "a worker was given nothing: {got:?}"
    );
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("got ")).collect();
    let want_text = String::from_utf8_lossy(want);
    let mut want_lines: Vec<&str> = want_text.lines().collect();
    lines.sort_unstable();
    want_lines.sort_unstable();
    assert!(
        lines == want_lines,
        "the window's records, each once: {err}"
    );
    let recs = want.iter().filter(|&&c| c == b'\n').count() as u64;
    assert_eq!(stat(err, "records"), recs, "{err}");
    assert!(stat(err, "records outside the time range") > 0, "{err}");
}

/// A BGZF log (`bgzip`) is searched by block as a plain one is by offset:
/// the workers get exactly the window's records, most compressed bytes are
/// never read, and `--stats` names the block range read.
#[test]
fn bgzf_log_is_searched_by_block() {
    if !have("bgzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gen(dir.path(), "b.log", "2M", "0.01");
    let data = std::fs::read(&p).unwrap();
    let gz = dir.path().join("b.log.gz");
    let mut c = std::process::Command::new("bgzip");
    c.args(["-c"]).arg(&p);
    let o = c.output().unwrap();
    assert!(o.status.success());
    std::fs::write(&gz, &o.stdout).unwrap();
    let t = times(&data);
    let (lo, hi) = (t[t.len() / 2], t[t.len() / 2] + 240);
    let want = reference(&data, lo, hi);
    let (s, u) = (iso(lo), iso(hi));
    for j in ["1", "3"] {
        let args = ["-j", j, "--block", "8K", "--since", &s, "--until", &u];
        let (out, err, code) = feed(&args, Some(&gz), None, TAG);
        assert_eq!(code, 0, "{err}");
        check_workers(&out, &want, &format!("bgzf -j {j}"));
        let skipped = stat(&err, "compressed bytes skipped by the time search");
        assert!(skipped > o.stdout.len() as u64 / 2, "{err}");
        assert!(err.contains("b.log.gz: searched by block"), "{err}");
    }
    // A worker that stops after 5 records is reported from the decoded
    // offset of the 6th: the block range's records carry their true offsets.
    let starts = window_starts(&data, lo, hi);
    let script = "i=0; while [ $i -lt 5 ]; do read -r l; i=$((i+1)); done; exit 3";
    let args = ["-j", "1", "--block", "1M", "--since", &s, "--until", &u];
    let (_, err, code) = feed(&args, Some(&gz), None, script);
    assert_eq!(code, 2, "{err}");
    assert_eq!(never_read_from(&err).1, starts[5], "{err}");
}
