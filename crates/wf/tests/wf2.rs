//! `wf wf2` against the independent naive implementation (`tests/naive/wf2.py`), at
//! several thread counts and chunk sizes, on the shared logs, a crafted file of odd
//! lines and generated logs; and the text report against a golden file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NAIVE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/naive/wf2.py");
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/wf2-ongoing-1000.txt"
);

/// Thread counts and chunk sizes every comparison runs at.
const THREADS: [&str; 2] = ["1", "2"];
const CHUNKS: [&str; 4] = ["7", "100", "4096", "64M"];

fn run(cmd: Command, stdin: Option<&[u8]>) -> Vec<u8> {
    common::ok_bytes(cmd, stdin)
}

fn wf(args: &[&str], paths: &[&Path]) -> Vec<u8> {
    let mut c = common::wf();
    c.arg("wf2").args(args).args(paths);
    run(c, None)
}

fn naive(args: &[&str], paths: &[&Path]) -> Vec<u8> {
    let mut c = Command::new("python3");
    c.arg(NAIVE).args(args).args(paths);
    run(c, None)
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
        )
    })
}

/// `wf wf2 --json` equals the naive report at every thread count and chunk size.
fn check(paths: &[&Path], extra: &[&str]) {
    let want_bytes = naive(&[&["--json"], extra].concat(), paths);
    let want = json(&want_bytes);
    assert!(want["lines"].as_u64().is_some(), "naive output: {want}");
    for j in THREADS {
        for c in CHUNKS {
            let args = [&["--json", "-j", j, "--chunk-size", c], extra].concat();
            let got_bytes = wf(&args, paths);
            let got = json(&got_bytes);
            assert_eq!(got, want, "wf wf2 {args:?} {paths:?}");
            // Same bytes too: key order, spacing and escapes as Python's json.dumps.
            assert_eq!(
                String::from_utf8_lossy(&got_bytes),
                String::from_utf8_lossy(&want_bytes),
                "wf wf2 {args:?} {paths:?}"
            );
        }
    }
}

fn shared_logs() -> Option<Vec<PathBuf>> {
    common::shared_data("logs").map(|d| common::files_in(&d))
}

#[test]
fn shared_logs_equal_naive() {
    let Some(files) = shared_logs() else { return };
    assert!(!files.is_empty());
    for f in &files {
        check(&[f], &[]);
    }
    // Other list lengths, and all files in one run.
    let all: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    check(&all, &["--top", "3"]);
    check(&all[..1], &["--top", "1000"]);
}

/// Lines that break fast paths: every rule's edge, whitespace of every kind,
/// control bytes, invalid UTF-8, JSON escapes, fields and lines longer than any
/// internal window.
fn odd_lines() -> Vec<u8> {
    let art = "/ongoing/When/200x/2007/06/17/Art";
    let mut v: Vec<u8> = Vec::new();
    let mut line = |s: &[u8]| {
        v.extend_from_slice(s);
        v.push(b'\n');
    };
    let std_line = |client: &str, uri: &str, status: &str, bytes: &str, refr: &str| {
        format!(
            "{client} - - [17/Jun/2007:21:37:17 -0700] \"GET {uri} HTTP/1.1\" {status} {bytes} {refr} \"UA x\""
        )
        .into_bytes()
    };
    line(&std_line(
        "h1",
        art,
        "200",
        "1234",
        "\"http://example.com/\"",
    ));
    line(&std_line("h1", art, "200", "-", "\"-\""));
    line(&std_line(
        "h2",
        art,
        "200",
        "12abc",
        "\"http://www.tbray.org/ongoing/x\"",
    ));
    line(&std_line(
        "h2",
        art,
        "304",
        "-",
        "\"http://www.tbray.org/ongoingX\"",
    ));
    line(&std_line(
        "h3",
        "/ongoing/When/200x/2007/06/18/Huge",
        "200",
        "99999999999999999999999",
        "\"\"",
    ));
    line(&std_line(
        "h3",
        "/ongoing/When/200x/2007/06/18/Max",
        "200",
        "18446744073709551615",
        "\"",
    ));
    line(&std_line("h3", "/y", "200", "18446744073709551615", "x"));
    line(&std_line("h3", "/y", "200", "1", "x"));
    line(&std_line("h4", art, "404", "0", "\"-\""));
    line(&std_line("h4", "/missing", "404", "0", "\"-\""));
    line(&std_line("h4", art, "2000", "0", "\"-\""));
    line(&std_line("h4", art, "500", "0", "\"-\""));
    line(&std_line(
        "h5",
        "/ongoing/When/200x/2007/06/17/a.html",
        "200",
        "5",
        "\"r\"",
    ));
    line(&std_line(
        "h5",
        "/ongoing/When/200x/2007/06/17/",
        "200",
        "5",
        "\"r\"",
    ));
    line(&std_line(
        "h5",
        "/ongoing/When/20xx/2007/06/17/a",
        "200",
        "5",
        "\"r\"",
    ));
    line(&std_line(
        "h\"q\\b\x01",
        art,
        "200",
        "7",
        "\"r\\\"\x1f\x7f\"",
    ));
    line(&std_line(
        "caf\u{e9}",
        "/ongoing/When/200x/2007/06/17/caf\u{e9}",
        "200",
        "7",
        "\"\u{20ac}\"",
    ));
    // Invalid UTF-8, NUL, DEL, bytes >= 0x80 in every key.
    line(b"h\xff\x00 - - [d z] \"GET /ongoing/When/200x/2007/06/17/\xed\xa0\x80\xc3 P 200 9 \"\xe2\x82\"\r");
    // Whitespace of every kind, runs of it, leading whitespace (empty client).
    line(b"h6\t-\x0b-\x0c[d  \t z]\r\"GET   /ongoing/When/200x/2007/06/17/Art\tP\x0c304\x0b-\t\"tab\"\r");
    line(b"  - - [d z] \"GET /ongoing/When/200x/2007/06/17/Art P 200 3 \"lead\"");
    line(b" h7 - - [d z] \"GET /ongoing/When/200x/2007/06/17/Art P 200 3 \"shifted\"");
    line(b"h8 - - [d z] \"GET /ongoing/When/200x/2007/06/17/Art P 200 3 \"crlf\"\r");
    // Too few fields, not GET, GET with few fields.
    line(b"");
    line(b" \t \r");
    line(b"\r");
    line(b"a b c d e");
    line(b"a b c d \"GET /x P 200 1");
    line(b"a b c d e \"GET");
    line(b"a b c d e \"GET /ongoing/When/200x/2007/06/17/Art");
    line(b"a b c d e \"GET /ongoing/When/200x/2007/06/17/Art P");
    line(b"a b c d e \"GET /ongoing/When/200x/2007/06/17/Art P 200");
    line(b"a b c d e \"GET /ongoing/When/200x/2007/06/17/Art P 304 -");
    line(b"a b c d e \"GETX /x P 200 1");
    line(b"a b c d e \"get /x P 200 1");
    line(b"a b c d e \"POST /x P 200 1");
    line(b"\x00\x01\x02 \xff\xfe");
    // A 404 key whose 60-byte cut falls inside a two-byte character (é).
    let mut cut = b"c - - [d z] \"GET /".to_vec();
    cut.extend_from_slice(&[b'a'; 58]);
    cut.extend_from_slice("é H\" 404 5".as_bytes());
    line(&cut);
    // Long keys (over 60 bytes in the text report, over 64 in a bitmap word).
    let long_uri = format!("/ongoing/When/200x/2007/06/17/{}", "L".repeat(100));
    line(&std_line(
        &"c".repeat(90),
        &long_uri,
        "200",
        "123456789012",
        &format!("\"{}\"", "r".repeat(200)),
    ));
    // A line far longer than a parsing window, and long separator runs.
    line(&std_line(
        "big",
        art,
        "200",
        "1",
        &format!("\"{}\"", "R".repeat(70_000)),
    ));
    let mut spaced = b"sp".to_vec();
    spaced.extend(std::iter::repeat_n(b' ', 5000));
    spaced.extend_from_slice(
        b"- - [d z] \"GET /ongoing/When/200x/2007/06/17/Art P 200 11 \"spaced\"",
    );
    line(&spaced);
    line(&"x".repeat(100_000).into_bytes());
    // Repeats so that the tops have ties and several entries.
    for i in 0..30 {
        line(&std_line(
            &format!("r{}", i % 4),
            art,
            "200",
            &i.to_string(),
            &format!("\"ref{}\"", i % 3),
        ));
    }
    // No final newline.
    v.extend_from_slice(
        b"last - - [d z] \"GET /ongoing/When/200x/2007/06/17/Art P 304 - \"final\"",
    );
    v
}

#[test]
fn odd_lines_equal_naive() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.log");
    std::fs::write(&odd, odd_lines()).unwrap();
    if let Some(keep) = std::env::var_os("WF2_KEEP_ODD") {
        // For debugging: keep a copy of the crafted file.
        std::fs::write(keep, odd_lines()).unwrap();
    }
    check(&[&odd], &[]);
    check(&[&odd], &["--top", "50"]);
    // A file without a final newline followed by another: records do not join.
    let tail = dir.path().join("tail.log");
    std::fs::write(
        &tail,
        b"\"GET /x P 200 1\nh - - [d z] \"GET /ongoing/When/200x/2007/06/17/B P 200 1 \"t\"",
    )
    .unwrap();
    check(&[&odd, &tail], &[]);
    // Empty input.
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    check(&[&empty], &[]);
    // Standard input gives the same report as the file.
    let mut c = Command::new(env!("CARGO_BIN_EXE_wf"));
    c.args(["wf2", "--json", "--chunk-size", "100"]);
    let got = json(&run(c, Some(&odd_lines())));
    assert_eq!(got, json(&naive(&["--json"], &[&odd])));
}

#[test]
fn generated_logs_equal_naive() {
    let dir = tempfile::tempdir().unwrap();
    for (odd, seed) in [("0", "1"), ("0.2", "7")] {
        let p = dir.path().join(format!("gen-{odd}-{seed}.log"));
        let mut c = Command::new(env!("CARGO_BIN_EXE_wf"));
        c.args([
            "gen",
            "wf2",
            "--size",
            "2M",
            "--odd-lines",
            odd,
            "--seed",
            seed,
            "-o",
        ])
        .arg(&p);
        run(c, None);
        check(&[&p], &["--top", "20"]);
    }
}

#[test]
fn text_report_matches_golden() {
    let Some(files) = shared_logs() else { return };
    let Some(f) = files.iter().find(|p| p.ends_with("ongoing-1000.log")) else {
        eprintln!("skipping: ongoing-1000.log absent");
        return;
    };
    let golden = std::fs::read_to_string(GOLDEN).expect("golden file");
    // The golden file was made by the naive implementation; it must still agree.
    assert_eq!(String::from_utf8(naive(&["--text"], &[f])).unwrap(), golden);
    for j in THREADS {
        for c in CHUNKS {
            let got = wf(&["-j", j, "--chunk-size", c], &[f]);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                golden,
                "-j {j} --chunk-size {c}"
            );
        }
    }
}

#[test]
fn text_report_of_odd_lines_equals_naive() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.log");
    std::fs::write(&odd, odd_lines()).unwrap();
    let want = naive(&["--text", "--top", "12"], &[&odd]);
    let got = wf(&["--top", "12", "-j", "2", "--chunk-size", "4096"], &[&odd]);
    // Byte for byte: keys (invalid UTF-8 included) are printed raw.
    assert!(
        got == want,
        "wf:\n{}\nnaive:\n{}",
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn stats_count_lines_that_are_not_get_lines_or_too_short() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("s.log");
    let lines: &[&str] = &[
        r#"1.2.3.4 - - [d +0000] "GET /x HTTP/1.1" 200 5 "-" "ua""#,
        r#"1.2.3.4 - - [d +0000] "POST /x HTTP/1.1" 200 5 "-" "ua""#, // not GET
        "abc",                                                        // 1 field
        "",                                                           // 0 fields
        "a b c d e",                                                  // 5 fields
        r#" a b c d "GET"#, // empty field 0: field 5 is "GET
    ];
    let mut data = lines.join("\n").into_bytes();
    data.extend_from_slice(b"\nx x x x x \"GET /y"); // unterminated, a GET line
    std::fs::write(&f, &data).unwrap();
    for chunk in ["3", "8M"] {
        let mut c = common::wf();
        c.args(["wf2", "--json", "--stats", "--chunk-size", chunk])
            .arg(&f);
        let o = common::run(c, None);
        assert!(o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(json(&o.stdout)["lines"], 7);
        assert!(err.contains("lines not GET: 4\n"), "{err}");
        assert!(err.contains("lines with too few fields: 3\n"), "{err}");
    }
}

#[test]
fn a_missing_input_is_named_exit_2_and_the_rest_reported() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("s.log");
    std::fs::write(
        &f,
        "1.2.3.4 - - [d +0000] \"GET /x HTTP/1.1\" 404 5 \"-\" \"ua\"\n",
    )
    .unwrap();
    let missing = t.path().join("missing.log");
    let mut c = common::wf();
    c.args(["wf2", "--json"]).arg(&missing).arg(&f);
    let o = common::run(c, None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(missing.to_str().unwrap()), "{err}");
    let v = json(&o.stdout);
    assert_eq!(v["lines"], 1);
    assert_eq!(v["top"]["404s"], serde_json::json!([["/x", 1]]));
}
