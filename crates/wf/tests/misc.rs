//! Smaller things of the command line: sizes as dd reads them, options that
//! would allocate whatever they are told, `wf gen` naming the file it could not
//! write, "1 record" in the singular, and stderr that cannot be written.

mod common;
use common::*;

use std::process::Stdio;

/// Exit status and stderr of `wf ARGS`.
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let o = run(
        {
            let mut c = wf();
            c.args(args);
            c
        },
        None,
    );
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn sizes_take_si_and_iec_suffixes_as_dd_does() {
    for (size, bytes) in [
        ("1MB", 1_000_000),
        ("1M", 1 << 20),
        ("1MiB", 1 << 20),
        ("200KB", 200_000),
    ] {
        let mut c = wf();
        c.args(["gen", "wf2", "--size", size]);
        let out = ok_bytes(c, None);
        // `wf gen wf2` writes whole lines: the size asked, and the rest of a line.
        assert!(out.len().abs_diff(bytes) < 2000, "{size}: {}", out.len());
    }
    // The largest size is u64::MAX bytes, just under 16 EiB: the message says so.
    let (code, err) = fails(&["gen", "wf2", "--size", "16E"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("18446744073709551615"), "{err}");
    let mut c = wf();
    c.args(["count", "--help"]);
    let help = ok(c);
    assert!(help.contains("KB, MB"), "{help}");
}

#[test]
fn options_that_allocate_are_bounded_with_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("tiny.csv");
    std::fs::write(&f, "a,b\n1,2\n").unwrap();
    let f = f.to_str().unwrap();
    for (args, bound) in [
        (vec!["count", "--io", "100000000", f], "4096"),
        (vec!["count", "--io", "1000000000", f], "4096"),
        (vec!["wf2", "--chunk-size", "2T", f], "1T"),
        (vec!["pangram", "--ahead", "4P", f], "1T"),
        (
            vec!["gen", "1brc", "--rows", "3", "--stations", "4294967296"],
            "1000000",
        ),
        (
            vec!["gen", "1brc", "--rows", "3", "--stations", "0"],
            "1000000",
        ),
    ] {
        let (code, err) = fails(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(bound), "{args:?}: {err}");
    }
    let mut c = wf();
    c.args(["count", "--io", "4096", "--chunk-size", "1T", f]);
    assert_eq!(ok(c), "2 records, 8 bytes, 1 file\n");
}

#[test]
fn gen_names_the_output_it_cannot_write() {
    for path in ["/proc/nope", "/nonexistent-dir/x.log", "/dev/full"] {
        let (code, err) = fails(&["gen", "1brc", "--rows", "100000", "-o", path]);
        assert_eq!(code, Some(2), "{path}: {err}");
        assert!(err.contains(path), "{path}: {err}");
    }
}

#[test]
fn one_record_is_singular() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("one");
    std::fs::write(&f, "x").unwrap();
    let mut c = wf();
    c.arg("count").arg(&f);
    assert_eq!(ok(c), "1 record, 1 byte, 1 file\n");
}

/// `wf CMD ARGS 2>/dev/full` on a missing input: exit 2, not a panic (101).
fn with_stderr_full(args: &[&str]) -> Option<i32> {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut c = wf();
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(full));
    c.status().unwrap().code()
}

/// Fails until every `eprintln!` of the scan jobs and `wf sql` is `wf_core::warn!`.
#[test]
fn a_failed_write_to_stderr_is_no_panic() {
    assert_eq!(
        with_stderr_full(&["count", "/nonexistent/wf-nosuch"]),
        Some(2)
    );
    let sql = ["sql", "SELECT count(*) FROM logs", "/nonexistent/wf-nosuch"];
    assert_eq!(with_stderr_full(&sql), Some(2));
}

#[test]
fn gen_and_bench_survive_a_full_stderr() {
    let gen = ["gen", "1brc", "--rows", "1", "-o", "/nonexistent/x"];
    assert_eq!(with_stderr_full(&gen), Some(2));
    let bench = ["bench", "--", "count", "/nonexistent/wf-nosuch"];
    assert_eq!(with_stderr_full(&bench), Some(2));
}

/// A list of inputs on stdin is read once however often a command collects
/// its inputs: `wf report` looks at the first input for its format, then
/// scans, and the second read of stdin was empty (0 requests, exit 0), as it
/// was for `--since` and `--state` runs. Every command's answer from `ls |
/// wf CMD --files-from -` is its answer over the same paths named.
#[test]
fn a_files_from_list_on_stdin_gives_the_named_files_answer() {
    let t = tempfile::tempdir().unwrap();
    let a = generated_log(t.path(), "40K", "0", 1);
    let b = t.path().join("b.log");
    std::fs::copy(&a, &b).unwrap();
    let list = format!("{}\n{}\n", a.display(), b.display());
    let state = t.path().join("s.state");
    let runs: &[&[&str]] = &[
        &["report", "--json"],
        &["report", "--json", "--since", "2000-01-01"],
        &["count", "--json", "--since", "2000-01-01"],
        &["wf2", "--json"],
        &["count", "--json"],
        &[
            "sql",
            "--no-progress",
            "--json",
            "SELECT count(*) AS n FROM logs",
        ],
    ];
    for args in runs {
        let mut named = wf();
        named.args(*args).arg(&a).arg(&b);
        let want = ok(named);
        let mut listed = wf();
        listed.args(*args).args(["--files-from", "-"]);
        assert_eq!(ok_with(listed, Some(list.as_bytes())), want, "{args:?}");
    }
    // A --state run (its first: everything new) likewise.
    let mut named = wf();
    named.args(["report", "--json"]).arg(&a).arg(&b);
    let want = ok(named);
    let mut listed = wf();
    let s = state.to_str().unwrap();
    listed.args(["report", "--json", "--state", s, "--files-from", "-"]);
    assert_eq!(ok_with(listed, Some(list.as_bytes())), want);
}
