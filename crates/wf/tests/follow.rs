//! `--follow` of `wf count`, `wf wf2` and `wf feed`, as real processes: a
//! writer appends a generated log in pieces cut at random bytes (mid-line)
//! and rotates it (rename, copytruncate) while wf follows it at a short
//! `--interval`; after SIGINT, the last report equals a fresh run over every
//! file the log became, and `feed` has handed every record on once, whole.
//! The only waits are for something to happen (a report, a line), with
//! deadlines far beyond need; nothing is timed.

mod common;
use common::logrotate::append;
use common::*;

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How long a wait for wf may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(60);

/// A running `wf ... --follow`, its stdout (lines) and stderr collected.
struct Following {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<String>>,
}

impl Following {
    fn start(args: &[&str]) -> Following {
        use std::os::unix::process::CommandExt;
        let mut c = wf();
        // SIGINT as from a terminal, even when the tests run in the
        // background of a shell (which ignores it for its children).
        unsafe {
            c.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        c.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let mut so = child.stdout.take().unwrap();
        let o = out.clone();
        std::thread::spawn(move || {
            let mut b = [0u8; 4096];
            while let Ok(n) = so.read(&mut b) {
                if n == 0 {
                    break;
                }
                o.lock().unwrap().extend_from_slice(&b[..n]);
            }
        });
        let se = child.stderr.take().unwrap();
        let e = err.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(se).lines().map_while(Result::ok) {
                let mut e = e.lock().unwrap();
                e.push_str(&l);
                e.push('\n');
            }
        });
        Following { child, out, err }
    }

    fn out(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    fn err(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Wait until `ok` holds of stdout and stderr.
    fn wait_for(&self, what: &str, ok: impl Fn(&str, &str) -> bool) {
        let t = Instant::now();
        while !ok(&self.out(), &self.err()) {
            assert!(
                t.elapsed() < DEADLINE,
                "waited for {what}; stdout:\n{}\nstderr:\n{}",
                self.out(),
                self.err()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until wf's `--stats` line says it has read `bytes` bytes.
    fn caught_up(&self, bytes: usize) {
        let want = format!(" {bytes} bytes read,");
        self.wait_for(&format!("{bytes} bytes read"), |_, e| {
            e.lines().last().is_some_and(|l| l.contains(&want))
        });
    }

    /// SIGINT, then its exit status and whole stdout (bytes) and stderr.
    fn interrupt_bytes(mut self) -> (bool, Vec<u8>, String) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(t.elapsed() < DEADLINE, "wf did not stop on SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        };
        // The readers end with the pipes.
        std::thread::sleep(Duration::from_millis(100));
        let out = self.out.lock().unwrap().clone();
        (status.success(), out, self.err())
    }

    /// SIGINT, then its exit status and whole stdout and stderr.
    fn interrupt(self) -> (bool, String, String) {
        let (ok, out, err) = self.interrupt_bytes();
        (ok, String::from_utf8_lossy(&out).into_owned(), err)
    }
}

impl Drop for Following {
    /// A test that failed leaves no follower running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The log in pieces: `(step, piece)`, random lengths, cut anywhere.
fn pieces(src: &[u8], seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut at = 0;
    let mut v = Vec::new();
    for _ in 0..n {
        let k = rng.random_range(1..src.len() / n * 2).min(src.len() - at);
        v.push(src[at..at + k].to_vec());
        at += k;
    }
    v
}

/// Write `pieces` to `dir/access.log`, rotating it by rename at some steps
/// and by copytruncate at others, waiting for every follower in `wfs` to
/// have read all before a copytruncate (what is written between a
/// follower's last look and the truncation is only in the copy) and once in
/// a while otherwise (a name rotated twice within one interval is the
/// test of its own below). Returns the rotations done.
fn write_rotating(
    dir: &Path,
    pieces: &[Vec<u8>],
    wfs: &[&Following],
    truncate: bool,
) -> Vec<&'static str> {
    let log = dir.join("access.log");
    let mut written = fs::metadata(&log).unwrap().len() as usize;
    let mut done = Vec::new();
    for (step, p) in pieces.iter().enumerate() {
        let kept = dir.join(format!("access.log.{step}"));
        match step % 6 {
            2 => {
                fs::rename(&log, &kept).unwrap();
                done.push("rename");
            }
            5 if truncate => {
                wfs.iter().for_each(|w| w.caught_up(written));
                fs::copy(&log, &kept).unwrap();
                let f = OpenOptions::new().write(true).open(&log).unwrap();
                f.set_len(0).unwrap();
                done.push("copytruncate");
            }
            4 => wfs.iter().for_each(|w| w.caught_up(written)),
            _ => {}
        }
        append(&log, p);
        written += p.len();
        std::thread::sleep(Duration::from_millis(15));
    }
    done
}

/// A generated log (`size`, `seed`) in `n` pieces, and `tmp/logs/access.log`
/// made of the first: (pieces, the logs' directory, the log).
fn started_log(tmp: &Path, size: &str, seed: u64, n: usize) -> (Vec<Vec<u8>>, PathBuf, PathBuf) {
    let src = fs::read(generated_log(tmp, size, "0.02", seed)).unwrap();
    let dir = tmp.join("logs");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("access.log");
    let parts = pieces(&src, seed, n);
    append(&log, &parts[0]);
    (parts, dir, log)
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn count_and_wf2_follow_appends_and_rotations_to_a_fresh_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (parts, dir, log) = started_log(tmp.path(), "120K", 7, 14);
    let l = log.to_str().unwrap();
    let common = ["--follow", "--interval", "100ms", "--json", "--stats"];
    let count = Following::start(&[&["count"], &common[..], &["-j", "2", l]].concat());
    let wf2 = Following::start(&[&["wf2"], &common[..], &["--chunk-size", "1K", l]].concat());
    // Both have opened the log before it is rotated.
    count.wait_for("a first report", |o, _| !o.is_empty());
    wf2.wait_for("a first report", |o, _| !o.is_empty());
    let done = write_rotating(&dir, &parts[1..], &[&count, &wf2], true);
    assert!(done.contains(&"rename") && done.contains(&"copytruncate"));
    for (job, w) in [("count", count), ("wf2", wf2)] {
        let (ok, out, err) = w.interrupt();
        assert!(ok, "{job}: {err}");
        let mut c = wf();
        c.args([job, "--json"]).arg(&dir);
        let fresh = ok_with(c, None);
        assert_eq!(last_line(&out), fresh.trim_end(), "{job}; stderr:\n{err}");
        assert!(err.contains("rotated"), "{job}: {err}");
        assert!(err.contains("truncated"), "{job}: {err}");
        assert!(
            out.lines().count() > 3,
            "{job}: a report per interval:\n{out}"
        );
    }
}

/// Lines of `text`, sorted (workers' output interleaves by line).
fn sorted_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    v.sort();
    v
}

#[test]
fn feed_follow_hands_every_record_on_once_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let (parts, dir, log) = started_log(tmp.path(), "60K", 8, 12);
    let l = log.to_str().unwrap();
    let feed = Following::start(&[
        "feed",
        "--follow",
        "--interval",
        "100ms",
        "-j",
        "2",
        "--block",
        "1K",
        l,
        "--",
        "cat",
    ]);
    // A follower that says how far it has read (`wf feed` has no report),
    // for the waits between two renames.
    let count = Following::start(&["count", "--follow", "--interval", "100ms", "--stats", l]);
    count.wait_for("a first report", |o, _| !o.is_empty());
    feed.wait_for("the first lines", |o, _| !o.is_empty());
    let done = write_rotating(&dir, &parts[1..], &[&count], false);
    assert!(done.contains(&"rename"));
    // Let feed read all before its SIGINT, as the counter has.
    let total: usize = parts.iter().map(Vec::len).sum();
    count.caught_up(total);
    let (ok, got, err) = feed.interrupt_bytes();
    assert!(ok, "{err}");
    count.interrupt();
    // Everything the files hold, each file's last line given its newline.
    let mut want = Vec::new();
    for f in files_in(&dir) {
        let b = fs::read(f).unwrap();
        want.extend_from_slice(&b);
        if b.last().is_some_and(|&c| c != b'\n') {
            want.push(b'\n');
        }
    }
    let got = &got[..];
    assert_eq!(got.len(), want.len(), "stderr:\n{err}");
    assert!(sorted_lines(got) == sorted_lines(&want), "stderr:\n{err}");
}

#[test]
fn a_partial_line_waits_for_its_newline_or_flush_after() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("app.log");
    append(&log, b"one\ntw");
    let l = log.to_str().unwrap();
    let args = |more: &[&'static str]| -> Vec<String> {
        let mut v: Vec<String> = ["feed", "--follow", "--interval", "50ms"]
            .iter()
            .chain(more)
            .map(|s| s.to_string())
            .collect();
        v.extend([l.to_string(), "--".into(), "cat".into()]);
        v
    };
    let waits = args(&[]);
    let waits = Following::start(&waits.iter().map(String::as_str).collect::<Vec<_>>());
    let flushes = args(&["--flush-after", "200ms"]);
    let flushes = Following::start(&flushes.iter().map(String::as_str).collect::<Vec<_>>());
    waits.wait_for("the first line", |o, _| o == "one\n");
    flushes.wait_for("the partial line, flushed", |o, _| o == "one\ntw\n");
    // Many intervals later, still only the whole line.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(waits.out(), "one\n");
    append(&log, b"o\nthree");
    waits.wait_for("the line completed", |o, _| o == "one\ntwo\n");
    flushes.wait_for("the rest as a line", |o, _| o.starts_with("one\ntw\no\n"));
    let (ok, out, err) = waits.interrupt();
    assert!(ok, "{err}");
    assert_eq!(out, "one\ntwo\nthree\n", "the last line at the end");
    let (ok, out, _) = flushes.interrupt();
    assert!(ok);
    assert_eq!(out, "one\ntw\no\nthree\n");
}

/// The rest of a line flushed by `--flush-after` is a line of its own in
/// `count`, `wf2` and `report`, as in `feed`: read as a span that starts
/// inside a line, it was left out (its bytes and records lost, exit 0).
#[test]
fn the_rest_of_a_flushed_line_is_a_line_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("app.log");
    append(&log, b"one\ntw");
    let l = log.to_str().unwrap();
    let flush = [
        "--follow",
        "--flush-after",
        "100ms",
        "--interval",
        "50ms",
        "--json",
    ];
    let count = Following::start(&[&["count", "--stats"][..], &flush, &[l]].concat());
    let wf2 = Following::start(&[&["wf2", "--stats"][..], &flush, &[l]].concat());
    let report = ["report", "--stats", "--format", "combined"];
    let report = Following::start(&[&report[..], &flush, &[l]].concat());
    // Flushed: none of the bytes read is in a partial line any more.
    let flushed = |_: &str, e: &str| e.contains(" 6 bytes read, 0 of them in partial");
    count.wait_for("the partial line, flushed", flushed);
    wf2.wait_for("the partial line, flushed", flushed);
    report.wait_for("the partial line, flushed", flushed);
    append(&log, b"o\nthree\n");
    count.wait_for("the rest and a line", |o, _| o.contains("\"records\": 4"));
    wf2.wait_for("the rest and a line", |o, _| o.contains("\"lines\": 4"));
    // None of the four is a log line: each is a failed line of the report.
    report.wait_for("the rest and a line", |o, _| {
        o.contains("\"total_requests\":4")
    });
    let (_, out, err) = report.interrupt();
    assert!(
        last_line(&out).contains("\"failed_requests\":4"),
        "{out}{err}"
    );
    let (ok, out, err) = count.interrupt();
    assert!(ok, "{err}");
    let end = last_line(&out);
    assert!(
        end.contains("\"records\": 4") && end.contains("\"bytes\": 14"),
        "{out}"
    );
    let (ok, out, err) = wf2.interrupt();
    assert!(ok && last_line(&out).contains("\"lines\": 4"), "{out}{err}");
}

/// A named file that does not exist yet is waited for, as `tail -F` waits:
/// once made it is followed from its start (it was never read: 0 records
/// for ever); one that never comes is an error at the end (exit 2).
#[test]
fn a_file_made_after_the_start_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, never) = (tmp.path().join("later.log"), tmp.path().join("never.log"));
    let l = log.to_str().unwrap();
    let f = Following::start(&["count", "--follow", "--json", "--interval", "50ms", l]);
    f.wait_for("the wait said", |_, e| e.contains("waiting for it"));
    append(&log, b"a\nb\n");
    f.wait_for("its lines", |o, _| o.contains("\"records\": 2"));
    append(&log, b"c\n");
    f.wait_for("the line appended", |o, _| o.contains("\"records\": 3"));
    let (ok, out, err) = f.interrupt();
    assert!(ok, "{err}");
    assert!(last_line(&out).contains("\"records\": 3"), "{out}");
    assert!(err.contains("has appeared"), "{err}");
    let n = never.to_str().unwrap();
    let f = Following::start(&["count", "--follow", "--interval", "50ms", n]);
    f.wait_for("the wait said", |_, e| e.contains("waiting for it"));
    let (ok, _, err) = f.interrupt();
    assert!(!ok, "{err}");
    assert!(err.contains("no such file came"), "{err}");
    // A missing --files-from list is an error, not a log to wait for.
    let f = Following::start(&["count", "--follow", "--interval", "50ms", "--files-from", n]);
    f.wait_for("the error", |_, e| e.contains("No such file"));
    let (ok, _, err) = f.interrupt();
    assert!(!ok && !err.contains("waiting for it"), "{err}");
}

/// Lines gzipped, as bytes.
fn gz(lines: &str) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(lines.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// A followed file found compressed (made after the start, empty at the
/// start, a name rotated to a compressed file) is read once, whole and
/// decoded, once it has stopped growing; growth after that is said, exit 2.
/// Read as it grew, its compressed bytes were counted as lines, exit 0.
#[test]
fn a_compressed_file_met_while_following_is_read_once_decoded() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    append(&p("a.log"), b"1\n2\n3\n");
    append(&p("e.log.gz"), b"");
    let names = ["a.log", "e.log.gz", "later.gz"].map(|n| p(n).to_str().unwrap().to_owned());
    let mut args = vec!["count", "--follow", "--json", "--interval", "50ms"];
    args.extend(names.iter().map(String::as_str));
    let f = Following::start(&args);
    f.wait_for("the wait said", |_, e| e.contains("waiting for it"));
    fs::write(p("later.gz"), gz("a\nb\nc\nd\ne\n")).unwrap();
    append(&p("e.log.gz"), &gz("x\ny\nz\nw\n"));
    f.wait_for("both read", |o, _| o.contains("\"records\": 12"));
    fs::rename(p("a.log"), p("a.log.1")).unwrap();
    fs::write(p("a.log"), gz("r\ns\n")).unwrap();
    f.wait_for("the rotation read", |o, _| o.contains("\"records\": 14"));
    let (ok, out, err) = f.interrupt();
    assert!(ok, "{err}");
    assert!(last_line(&out).contains("\"records\": 14"), "{out}");
    assert!(!err.contains("grew"), "{err}");
    // A compressed file that grows after it was read is said, exit 2.
    fs::remove_file(p("later.gz")).unwrap();
    let f = Following::start(&args);
    f.wait_for("the wait said", |_, e| e.contains("waiting for it"));
    fs::write(p("later.gz"), gz("a\nb\nc\nd\ne\n")).unwrap();
    f.wait_for("all read", |o, _| o.contains("\"records\": 11"));
    append(&p("later.gz"), &gz("f\n"));
    f.wait_for("the growth said", |_, e| {
        e.contains("grew after --follow read it")
    });
    let (ok, out, err) = f.interrupt();
    assert!(!ok, "{err}");
    assert!(last_line(&out).contains("\"records\": 11"), "{out}");
}

/// A damaged compressed file found while following is named and `feed`
/// goes on with the other files (it ended the follow); under `--decompress
/// always` a text file found while following is refused, as at the start
/// (it was read as text, exit 0). Exit 2 for both.
#[test]
fn damaged_or_text_files_found_while_following_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let n = |f: &str| p(f).to_str().unwrap().to_owned();
    append(&p("z.log"), b"");
    append(&p("t.log"), b"ok1\n");
    let (z, t) = (n("z.log"), n("t.log"));
    let f = Following::start(&[
        "feed",
        "--follow",
        "--interval",
        "50ms",
        &z,
        &t,
        "--",
        "cat",
    ]);
    f.wait_for("the first line", |o, _| o == "ok1\n");
    let lines: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    let damaged = gz(&lines);
    append(&p("z.log"), &damaged[..damaged.len() / 2]);
    f.wait_for("the damage said", |_, e| {
        e.contains("the rest of it is not read")
    });
    append(&p("t.log"), b"ok2\n");
    f.wait_for("the next line", |o, _| o.ends_with("ok2\n"));
    let (ok, out, err) = f.interrupt();
    assert!(!ok && err.contains("z.log"), "{err}");
    // Whole lines only: the record the damage cut is left out.
    let read: Vec<&str> = out.lines().filter(|l| l.starts_with("line")).collect();
    assert!(read.len() > 100, "{out}");
    for (i, l) in read.iter().enumerate() {
        assert_eq!(*l, format!("line {i}"));
    }
    fs::write(p("x.gz"), gz("x\n")).unwrap();
    let (x, later) = (n("x.gz"), n("later.log"));
    let args = [
        "count",
        "--follow",
        "--decompress",
        "always",
        "--interval",
        "50ms",
    ];
    let f = Following::start(&[&args[..], &[&x, &later]].concat());
    f.wait_for("the wait said", |_, e| e.contains("waiting for it"));
    append(&p("later.log"), b"text\n");
    f.wait_for("the refusal", |_, e| {
        e.contains("--decompress always (found while")
    });
    let (ok, out, err) = f.interrupt();
    assert!(
        !ok && last_line(&out).starts_with("1 record,"),
        "{out}{err}"
    );
}

#[test]
fn follow_refuses_stdin_and_state() {
    let mut c = wf();
    c.args(["count", "--follow"]);
    let o = run(c, Some(b"a\n"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--follow needs files"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("a.log");
    fs::write(&log, "a\n").unwrap();
    let mut c = wf();
    c.args(["wf2", "--follow", "--state"])
        .arg(tmp.path().join("s"))
        .arg(&log);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--state"));
    let mut c = wf();
    c.args(["count", "--follow", "--interval", "2x"]).arg(&log);
    assert_eq!(run(c, None).status.code(), Some(2));
}

/// A report's JSON without `general.log_path` (a follow names the files it
/// was given, a fresh run over the directory every file the log became).
fn report_value(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    let paths = v["general"].as_object_mut().unwrap().remove("log_path");
    assert!(paths.is_some(), "{json}");
    v
}

/// The data of a `wf report` page, without its title (which names the files).
fn page_data(page: &str) -> serde_json::Value {
    let start = r#"<script type="application/json" id="wf-data">"#;
    let at = page.find(start).expect("the page's data") + start.len();
    let len = page[at..].find("</script>").unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&page[at..at + len]).unwrap();
    v.as_object_mut().unwrap().remove("title");
    // The time a report took is in a page written once, not in a live one.
    let overview = &mut v["panels"][0];
    assert_eq!(overview["id"], "general");
    let rows = overview["rows"].as_array_mut().unwrap();
    let took = rows.iter().position(|r| r[0] == "Report took");
    took.map(|i| rows.remove(i));
    v
}

/// Read `page` until `stop`, checking every read is a whole page that
/// reloads itself; returns how many reads found one.
fn read_pages(page: std::path::PathBuf, stop: Arc<std::sync::atomic::AtomicBool>) -> usize {
    let mut whole = 0;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let Ok(p) = fs::read_to_string(&page) else {
            continue; // not written yet
        };
        assert!(
            p.starts_with("<!DOCTYPE html>") && p.ends_with("</html>\n"),
            "a page read between two intervals is whole ({} bytes)",
            p.len()
        );
        assert!(p.contains(r#"<meta http-equiv="refresh" content="1">"#));
        whole += 1;
    }
    whole
}

#[test]
fn report_follows_appends_and_rotations_as_json_lines_and_a_whole_page() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let (parts, dir, log) = started_log(tmp.path(), "120K", 9, 14);
    let (l, page) = (log.to_str().unwrap(), tmp.path().join("live.html"));
    let common = ["report", "--follow", "--interval", "100ms", "--stats"];
    let json = Following::start(&[&common[..], &["--json", "-j", "2", l]].concat());
    let p = page.to_str().unwrap();
    let html = Following::start(&[&common[..], &["--chunk-size", "1K", "-o", p, l]].concat());
    json.wait_for("a first report", |o, _| !o.is_empty());
    html.wait_for("a first page", |_, e| e.contains("bytes read"));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (page, stop) = (page.clone(), stop.clone());
        std::thread::spawn(move || read_pages(page, stop))
    };
    let done = write_rotating(&dir, &parts[1..], &[&json, &html], true);
    assert!(done.contains(&"rename") && done.contains(&"copytruncate"));
    let total: usize = parts.iter().map(Vec::len).sum();
    html.caught_up(total);
    stop.store(true, Ordering::SeqCst);
    assert!(reader.join().expect("every page read whole") > 0);
    let (ok, out, err) = json.interrupt();
    assert!(ok, "{err}");
    assert!(
        err.contains("rotated") && err.contains("truncated"),
        "{err}"
    );
    assert!(out.lines().count() > 3, "a report a line:\n{out}");
    let mut c = wf();
    c.args(["report", "--json"]).arg(&dir);
    let fresh = report_value(&ok_with(c, None));
    assert_eq!(report_value(last_line(&out)), fresh, "stderr:\n{err}");
    let (ok, _, err) = html.interrupt();
    assert!(ok, "{err}");
    let fresh_page = tmp.path().join("fresh.html");
    let mut c = wf();
    c.args(["report", "-o"]).arg(&fresh_page).arg(&dir);
    ok_with(c, None);
    let live = fs::read_to_string(&page).unwrap();
    assert!(live.contains(r#"<meta http-equiv="refresh" content="1">"#));
    let fresh = fs::read_to_string(&fresh_page).unwrap();
    assert!(
        !fresh.contains(r#"<meta http-equiv="refresh""#),
        "only a follow reloads"
    );
    assert_eq!(page_data(&live), page_data(&fresh));
    let leftovers: Vec<_> = files_in(tmp.path())
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn report_follow_refuses_stdin_state_and_memory() {
    let mut c = wf();
    c.args(["report", "--follow"]);
    let o = run(c, Some(b"a\n"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--follow needs files"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let log = generated_log(tmp.path(), "2K", "0", 3);
    let mut c = wf();
    c.args(["report", "--follow", "--state"])
        .arg(tmp.path().join("s"))
        .arg(&log);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--state"));
    // A spill is read back once, and a follow reports again and again.
    let mut c = wf();
    c.args(["report", "--follow", "--memory", "1M"]).arg(&log);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--memory cannot be used with --follow"));
}

/// `access.log` renamed to `.1`, a new one written and renamed in its turn,
/// a third created, all within one poll: the file in the middle is found
/// beside the name and read whole (`tail -F` loses it); a `copytruncate`
/// copy and a file that was there at the start are not read again.
#[test]
fn a_name_rotated_twice_within_one_poll_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (parts, dir, log) = started_log(tmp.path(), "40K", 9, 6);
    let at = |s: &str| dir.join(format!("access.log{s}"));
    append(&at(".9"), &parts[5]);
    let l = log.to_str().unwrap();
    let args = [
        "count",
        "--follow",
        "--interval",
        "2s",
        "--json",
        "--stats",
        l,
    ];
    let count = Following::start(&args);
    let mut written = parts[0].len();
    count.caught_up(written);
    append(&log, &parts[1]);
    written += parts[1].len();
    count.caught_up(written);
    fs::copy(&log, at(".ct")).unwrap();
    OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&log, &parts[2]);
    written += parts[2].len();
    count.caught_up(written);
    // Right after a poll: the next is 2 s away.
    fs::rename(&log, at(".1")).unwrap();
    append(&log, &parts[3]);
    fs::rename(at(".1"), at(".2")).unwrap();
    fs::rename(&log, at(".1")).unwrap();
    append(&log, &parts[4]);
    written += parts[3].len() + parts[4].len();
    count.caught_up(written);
    let (ok, out, err) = count.interrupt();
    assert!(ok, "{err}");
    assert!(err.contains("rotated more than once"), "{err}");
    let mut c = wf();
    c.args(["count", "--json"]);
    for s in [".ct", ".2", ".1", ""] {
        c.arg(at(s));
    }
    let fresh = ok_with(c, None);
    assert_eq!(last_line(&out), fresh.trim_end(), "stderr:\n{err}");
}

/// `wf feed --follow --since/--until`: the workers get exactly the window's
/// records of what the file held at the start and of what was appended (in
/// pieces cut mid-line), each once; the plain filter of `timelog` decides.
#[test]
fn feed_follow_hands_on_only_the_window() {
    use common::timelog::{iso, reference, times};
    let tmp = tempfile::tempdir().unwrap();
    let src = fs::read(generated_log(tmp.path(), "200K", "0.02", 10)).unwrap();
    let t = times(&src);
    let (lo, hi) = (t[t.len() / 4], t[t.len() * 3 / 4]);
    let want = reference(&src, lo, hi);
    let log = tmp.path().join("access.log");
    let parts = pieces(&src, 10, 8);
    append(&log, &parts[0]);
    let (s, u) = (iso(lo), iso(hi));
    let l = log.to_str().unwrap();
    let args = [
        "feed",
        "--follow",
        "--interval",
        "100ms",
        "-j",
        "2",
        "--since",
        &s,
    ];
    let feed = Following::start(&[&args[..], &["--until", &u, l, "--", "cat"]].concat());
    let count = Following::start(&["count", "--follow", "--interval", "100ms", "--stats", l]);
    let mut written = parts[0].len();
    for p in &parts[1..] {
        count.caught_up(written);
        append(&log, p);
        written += p.len();
    }
    count.caught_up(written);
    count.interrupt();
    let n = want.iter().filter(|&&c| c == b'\n').count();
    feed.wait_for("the window's records", |o, _| o.lines().count() >= n);
    let (ok, got, err) = feed.interrupt_bytes();
    assert!(ok, "{err}");
    assert!(sorted_lines(&got) == sorted_lines(&want), "stderr:\n{err}");
}
