//! `wf pangram --state FILE` (incremental runs) against fresh runs: text
//! appended in pieces cut at random bytes (mid-line, mid-window), rotated by
//! rename, by copytruncate and by gzip in between; after every incremental
//! run its output equals one fresh `wf pangram` over what the files hold.
//! Also: a file gone keeps its windows, other settings, damaged and foreign
//! state files are refused.

mod common;
use common::logrotate::{self, append};
use common::*;

use std::fs;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `wf pangram [ARGS] DIR`: stdout and stderr, and whether it succeeded.
fn pangram(args: &[&str], dir: &Path) -> (String, String, bool) {
    let mut c = wf();
    c.arg("pangram").args(args).arg(dir);
    let o = run(c, None);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.success(),
    )
}

/// Text to grow: a book of the shared data (its first 400 KB) when it is
/// there, else a generated log (letters enough for windows of every length).
fn source(tmp: &Path) -> Vec<u8> {
    if let Some(g) = shared_data("gutenberg") {
        let mut t = fs::read(g.join("austen-emma.txt")).unwrap();
        t.truncate(400_000);
        return t;
    }
    fs::read(generated_log(tmp, "400K", "0.02", 7)).unwrap()
}

/// The files a window line names (`path:offset`), for checking that the
/// comparison covers windows of several files.
fn files_named(out: &str) -> std::collections::BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|w| w.rsplit_once(':').map(|(p, _)| p.to_string()))
        .collect()
}

#[test]
fn pieces_and_rotations_equal_a_fresh_run() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let dir = tmp.path().join("books");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("access.log");
    let modes: [&[&str]; 2] = [&["--top", "8"], &["--all", "--max-letters", "70"]];
    let states: Vec<PathBuf> = (0..2)
        .map(|m| tmp.path().join(format!("{m}.state")))
        .collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(39);
    let (mut at, mut named) = (0, std::collections::BTreeSet::new());
    for step in 0..13 {
        let rotated = logrotate::at_step(logrotate::EVERY_KIND, step, &dir, &log);
        let n = rng.random_range(1..src.len() / 8).min(src.len() - at);
        append(&log, &src[at..at + n]);
        at += n;
        let j = rng.random_range(1..4).to_string();
        let chunk = ["4K", "16K", "8M"][rng.random_range(0..3)];
        for (mode, state) in modes.iter().zip(&states) {
            let mut args = vec!["--state", state.to_str().unwrap(), "-j", &j];
            args.extend(["--chunk-size", chunk]);
            args.extend(mode.iter());
            let (got, err, ok) = pangram(&args, &dir);
            assert!(ok, "step {step} {mode:?}: {err}");
            let (want, _, _) = pangram(mode, &dir);
            assert_eq!(
                got, want,
                "step {step} ({rotated:?}) {mode:?} -j {j} {chunk}"
            );
            if rotated == Some("copytruncate") {
                assert!(err.contains("read from its start"), "{err}");
            } else {
                assert!(err.is_empty(), "step {step} ({rotated:?}): {err}");
            }
            named.extend(files_named(&got));
        }
    }
    // The comparisons were of windows, in the files the rotations made.
    assert!(named.len() >= 3, "windows only in {named:?}");
    let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.len() <= 4, "a temporary file left behind: {left:?}");
}

/// Two books, one read, then another added and the first grown: the second
/// run reads only the new bytes (--stats) and reports windows that run
/// across the first run's end.
#[test]
fn a_window_across_the_saved_offset_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    let s = tmp.path().join("s");
    let s = s.to_str().unwrap();
    let a = dir.join("a.txt");
    // Only the last line completes the pangram; its first letters are read
    // by the first run, the rest (and a partial last line) by the second.
    append(&a, b"nothing here\nthe quick brown fox\njumps over");
    let (out, _, ok) = pangram(&["--state", s], &dir);
    assert!(ok && out.is_empty(), "{out}");
    append(&a, b" the lazy dog\nand more\npartial line, zzz");
    let (out, err, ok) = pangram(&["--state", s, "--stats"], &dir);
    assert!(ok, "{err}");
    assert!(
        out.contains("a.txt:17  quick brown fox jumps over the lazy dog"),
        "{out}"
    );
    assert!(err.contains("inputs continued (--state): 1"), "{err}");
    assert_eq!(out, pangram(&[], &dir).0);
}

#[test]
fn a_gone_file_keeps_its_windows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    let s = tmp.path().join("s");
    let s = s.to_str().unwrap();
    fs::write(dir.join("a.txt"), b"sphinx of black quartz, judge my vow\n").unwrap();
    fs::write(
        dir.join("b.txt"),
        b"pack my box with five dozen liquor jugs\n",
    )
    .unwrap();
    let (first, _, ok) = pangram(&["--state", s, "--all"], &dir);
    assert!(ok && files_named(&first).len() == 2, "{first}");
    fs::remove_file(dir.join("b.txt")).unwrap();
    let (out, err, ok) = pangram(&["--state", s, "--all"], &dir);
    assert!(ok, "{err}");
    assert_eq!(out, first);
    assert!(err.contains("b.txt: gone since the last run"), "{err}");
    // Said once: the next run is quiet, and the window still there.
    let (out, err, _) = pangram(&["--state", s, "--all"], &dir);
    assert_eq!((out.as_str(), err.as_str()), (first.as_str(), ""));
}

/// A run that must fail: exit status 2, nothing on stdout, the state file
/// named on stderr with `what`, and the state file unchanged.
fn refused(args: &[&str], dir: &Path, state: &Path, what: &str) {
    let before = fs::read(state).ok();
    let mut c = wf();
    c.arg("pangram")
        .arg("--state")
        .arg(state)
        .args(args)
        .arg(dir);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert!(err.contains(&state.display().to_string()), "{err}");
    assert!(err.contains(what), "wanted {what:?}: {err}");
    assert_eq!(fs::read(state).ok(), before, "the state file changed");
}

#[test]
fn other_settings_and_damaged_states_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("a.txt"), b"the five boxing wizards jump quickly\n").unwrap();
    let state = tmp.path().join("p.state");
    let (_, err, ok) = pangram(&["--state", state.to_str().unwrap()], &dir);
    assert!(ok, "{err}");
    refused(&["--top", "5"], &dir, &state, "--top 10, is --top 5");
    refused(&["--all"], &dir, &state, "was --top 10, is --all");
    refused(&["--decompress", "never"], &dir, &state, "--decompress");
    let good = fs::read(&state).unwrap();
    let bad = tmp.path().join("bad.state");
    for at in [0, good.len() / 2, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x20;
        fs::write(&bad, &b).unwrap();
        refused(&[], &dir, &bad, "not a usable state file");
    }
    fs::write(&bad, &good[..good.len() - 3]).unwrap();
    refused(&[], &dir, &bad, "not a usable state file");
    // A count state is not a pangram state, nor the other way round.
    let count = tmp.path().join("count.state");
    let o = run(
        {
            let mut c = wf();
            c.args(["count", "--state"]).arg(&count).arg(&dir);
            c
        },
        None,
    );
    assert!(o.status.success());
    refused(&[], &dir, &count, "another job");
    let mut c = wf();
    c.args(["count", "--state"]).arg(&state).arg(&dir);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    // Still usable with its own settings, and unchanged output.
    let (out, err, ok) = pangram(&["--state", state.to_str().unwrap()], &dir);
    assert!(ok && out.contains("a.txt:0  the five boxing"), "{out}{err}");
}

/// Ties of letters are broken by input order, which may change between runs
/// (inputs named in another order, or renamed): the state keeps the best
/// windows of every input, not only the best of all.
#[test]
fn ties_follow_the_order_of_this_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.txt"), tmp.path().join("b.txt"));
    fs::write(&a, b"abcdefghijklmnopqrstuvwxyz\n").unwrap();
    fs::write(&b, b"zyxwvutsrqponmlkjihgfedcba\n").unwrap();
    let s = tmp.path().join("s");
    let run_on = |first: &Path, second: &Path, state: bool| {
        let mut c = wf();
        c.args(["pangram", "--top", "1"]);
        if state {
            c.arg("--state").arg(&s);
        }
        c.arg(first).arg(second);
        ok(c)
    };
    let one = run_on(&a, &b, true);
    assert!(one.contains("a.txt:0"), "{one}");
    let two = run_on(&b, &a, true);
    assert!(two.contains("b.txt:0"), "{two}");
    assert_eq!(two, run_on(&b, &a, false));
}
