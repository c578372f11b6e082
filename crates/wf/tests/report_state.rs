//! `wf report --state FILE` (incremental runs), against fresh runs: a
//! generated log (with malformed lines) appended to in pieces cut at random
//! bytes (mid-line), rotated by rename, by gzip and by copytruncate in
//! between; after every incremental run its `--json` equals one fresh run
//! over what the files hold, `log_size` too (it was the bytes the last run
//! read: GoAccess's `--restore` says all of them).
//! Also: a state of other settings or of another job is refused.

mod common;
use common::logrotate::{self, append, Rotation};
use common::*;

use std::fs;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;

/// `wf report --json --format combined [ARGS] DIR`: the JSON, stderr, and
/// whether it succeeded.
fn report(args: &[&str], dir: &Path) -> (Option<Value>, String, bool) {
    let mut c = wf();
    c.args(["report", "--json", "--format", "combined"])
        .args(args)
        .arg(dir);
    let o = run(c, None);
    let json = serde_json::from_slice::<Value>(&o.stdout).ok();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (json, err, o.status.success())
}

/// The rotations of the test, by step.
const REPORT_ROTATIONS: &[(usize, Rotation)] = &[
    (2, Rotation::Rename),
    (4, Rotation::Gzip),
    (6, Rotation::CopyTruncate),
];

#[test]
fn pieces_and_rotations_equal_a_fresh_report() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fs::read(generated_log(tmp.path(), "300K", "0.03", 38)).unwrap();
    let dir = tmp.path().join("logs");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("access.log");
    let state = tmp.path().join("report.state");
    let s = state.to_str().unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(38);
    let mut at = 0;
    for step in 0..9 {
        let rotated = logrotate::at_step(REPORT_ROTATIONS, step, &dir, &log);
        // A piece of random length, cut anywhere (mid-line most often).
        let n = rng.random_range(1..src.len() / 6).min(src.len() - at);
        append(&log, &src[at..at + n]);
        at += n;
        let j = rng.random_range(1..4).to_string();
        let chunk = ["4K", "64K", "8M"][rng.random_range(0..3)];
        let args = ["--state", s, "-j", &j, "--chunk-size", chunk];
        let (got, err, ok) = report(&args, &dir);
        assert!(ok, "step {step}: {err}");
        let (want, _, _) = report(&[], &dir);
        assert!(want.is_some());
        assert_eq!(got, want, "step {step} ({rotated:?}) -j {j} {chunk}");
        if rotated == Some("copytruncate") {
            assert!(err.contains("read from its start"), "{err}");
        } else {
            assert!(err.is_empty(), "step {step} ({rotated:?}): {err}");
        }
    }
    assert!(at > src.len() / 3, "the pieces covered {at} bytes");
    let (j, _, _) = report(&[], &dir);
    assert!(j.unwrap()["general"]["failed_requests"].as_u64().unwrap() > 0);
}

#[test]
fn other_settings_and_other_jobs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs");
    fs::create_dir(&dir).unwrap();
    fs::copy(
        generated_log(tmp.path(), "20K", "0", 3),
        dir.join("access.log"),
    )
    .unwrap();
    let state = tmp.path().join("report.state");
    let s = state.to_str().unwrap();
    let (_, err, ok) = report(&["--state", s], &dir);
    assert!(ok, "{err}");
    let made = fs::read(&state).unwrap();
    let refused = |args: &[&str], what: &str| {
        let (out, err, ok) = report(args, &dir);
        assert!(!ok && out.is_none(), "{args:?}");
        assert!(err.contains(what), "{args:?}: wanted {what:?} in {err}");
        assert_eq!(fs::read(&state).unwrap(), made, "the state changed");
    };
    refused(&["--state", s, "--bots", "only"], "settings");
    refused(&["--state", s, "--since", "2007-06-17"], "--since");
    // --max-rows only shapes the output: allowed.
    let (_, err, ok) = report(&["--state", s, "--max-rows", "3"], &dir);
    assert!(ok, "{err}");
    // A state of `wf count` is not a report's.
    let count_state = tmp.path().join("count.state");
    let mut c = wf();
    c.arg("count").arg("--state").arg(&count_state).arg(&dir);
    ok_bytes(c, None);
    let cs = count_state.to_str().unwrap();
    let (out, err, ok) = report(&["--state", cs], &dir);
    assert!(!ok && out.is_none());
    assert!(err.contains("another job"), "{err}");
}

/// An input none of whose lines read is an error of a `--state` run as of
/// a plain one (it was exit 0, unsaid: the counts per input were dropped);
/// a file continued whose new lines all fail is not (its earlier ones
/// read), and `--stats` names failed lines by their file.
#[test]
fn an_unread_input_is_said_under_state() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs");
    fs::create_dir(&dir).unwrap();
    let good = "1.2.3.4 - - [10/Oct/2020:13:55:36 +0000] \"GET / HTTP/1.0\" 200 5 \"-\" \"x\"\n";
    append(&dir.join("a.log"), good.repeat(3).as_bytes());
    append(&dir.join("b.log"), b"not a log line\n");
    let state = tmp.path().join("s");
    let args = ["--state", state.to_str().unwrap(), "--stats"];
    let (_, err, ok) = report(&args, &dir);
    assert!(
        !ok && err.contains("b.log: none of 1 lines read as combined"),
        "{err}"
    );
    assert!(err.contains("failed line at byte offset of"), "{err}");
    append(&dir.join("a.log"), b"bad line\n");
    let (json, err, ok) = report(&args, &dir);
    assert!(ok, "{err}");
    let at = format!("a.log: {}", 3 * good.len());
    assert!(err.contains(&at), "{err}");
    assert_eq!(json.unwrap()["general"]["failed_requests"], 2);
}
