//! `wf pangram` against a brute-force search kept here: on every file of
//! `../shared/data/gutenberg` and on generated text, at one and two threads and
//! chunk sizes from a few bytes up; the top 10 of the Gutenberg directory against
//! a golden file.
//!
//! To rewrite the golden file from the brute-force search:
//! `WF_BLESS=1 cargo test --release --test pangram gutenberg_top10`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/pangram-gutenberg-top10.txt"
);

use common::{files_in, wf};
use wf_core::jobs::pangram::{Mode, Pangram};
use wf_core::report;

/// `../shared/data` beside the project, or `None` (with a message).
fn shared_data() -> Option<PathBuf> {
    common::shared_data("gutenberg").map(|g| g.parent().unwrap().to_path_buf())
}

/// Run, require success, return stdout.
fn ok(cmd: Command, stdin: Option<&[u8]>) -> String {
    common::ok_with(cmd, stdin)
}

// ---------------------------------------------------------------------------
// The brute-force search and its output.

/// Every start at a letter, extended until all 26 letters appear; kept if
/// dropping the first letter breaks it, i.e. the first letter does not occur
/// again in the window. Returns (offset, bytes, letters) by offset.
fn brute(t: &[u8]) -> Vec<(u64, u64, u64)> {
    let letter = |b: u8| {
        b.is_ascii_alphabetic()
            .then(|| b.to_ascii_lowercase() - b'a')
    };
    let mut out = Vec::new();
    for s in 0..t.len() {
        let Some(c0) = letter(t[s]) else { continue };
        let mut seen = 1u32 << c0;
        let mut letters = 1;
        for (e, &b) in t.iter().enumerate().skip(s + 1) {
            let Some(c) = letter(b) else { continue };
            if c == c0 {
                break;
            }
            letters += 1;
            seen |= 1 << c;
            if seen == (1 << 26) - 1 {
                out.push((s as u64, (e - s + 1) as u64, letters));
                break;
            }
        }
    }
    out
}

struct Found<'a> {
    path: &'a str,
    text: &'a [u8],
    offset: u64,
    bytes: u64,
    letters: u64,
}

fn json_line(f: &Found) -> String {
    format!(
        "{{\"path\": {}, \"offset\": {}, \"bytes\": {}, \"letters\": {}, \"text\": {}}}\n",
        serde_json::to_string(f.path).unwrap(),
        f.offset,
        f.bytes,
        f.letters,
        serde_json::to_string(&String::from_utf8_lossy(f.text)).unwrap()
    )
}

/// The text as `wf pangram` prints it: whitespace runs as one space, control
/// characters and bytes of invalid UTF-8 as `\xNN` (decoded here a character at
/// a time, apart from the library's `utf8_chunks`).
fn shown(t: &[u8]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < t.len() {
        let b = t[i];
        let n = match b {
            0..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        let c = t
            .get(i..i + n)
            .and_then(|x| std::str::from_utf8(x).ok())
            .and_then(|x| x.chars().next());
        match c {
            Some(c) if c.is_ascii_whitespace() || c == '\x0b' => {
                if !s.ends_with(' ') {
                    s.push(' ');
                }
            }
            Some(c) if !c.is_control() => s.push(c),
            Some(_) => (0..n).for_each(|k| s += &format!("\\x{:02x}", t[i + k])),
            None => {
                s += &format!("\\x{b:02x}");
                i += 1;
                continue;
            }
        }
        i += n;
    }
    s
}

fn text_line(f: &Found) -> String {
    format!(
        "{:>5}  {}:{}  {}\n",
        f.letters,
        f.path,
        f.offset,
        shown(f.text)
    )
}

/// All windows of the inputs (in order), as `wf pangram --all --json` prints them.
fn oracle_all_json(inputs: &[(String, Vec<u8>)], max_letters: Option<u64>) -> String {
    let mut s = String::new();
    for (path, data) in inputs {
        for (offset, bytes, letters) in brute(data) {
            if letters <= max_letters.unwrap_or(u64::MAX) {
                s += &json_line(&Found {
                    path,
                    text: &data[offset as usize..(offset + bytes) as usize],
                    offset,
                    bytes,
                    letters,
                });
            }
        }
    }
    s
}

/// The `k` shortest windows (ties by input order, then offset), as text lines.
fn oracle_top_text(inputs: &[(String, Vec<u8>)], k: usize) -> String {
    let mut all = Vec::new();
    for (i, (path, data)) in inputs.iter().enumerate() {
        for (offset, bytes, letters) in brute(data) {
            all.push((letters, i, offset, bytes, path, data));
        }
    }
    all.sort_by_key(|w| (w.0, w.1, w.2));
    all.iter()
        .take(k)
        .map(|&(letters, _, offset, bytes, path, data)| {
            text_line(&Found {
                path,
                text: &data[offset as usize..(offset + bytes) as usize],
                offset,
                bytes,
                letters,
            })
        })
        .collect()
}

fn read_input(p: &Path) -> (String, Vec<u8>) {
    (p.display().to_string(), std::fs::read(p).unwrap())
}

/// The smallest chunk the CLI cuts (`--chunk-size` below it is raised to it);
/// smaller chunks are tested through the library.
const CLI_MIN_CHUNK: u64 = 4096;

/// The windows of `paths` found through the library API ([`wf_core::scan::run`],
/// which keeps any chunk size) at `threads` and `chunk`, printed as `wf pangram`
/// prints them (JSON or text).
fn lib_lines(paths: &[PathBuf], mode: Mode, threads: usize, chunk: u64, json: bool) -> String {
    let collected = wf_core::scan::InputSpec {
        paths: paths.to_vec(),
        ..Default::default()
    }
    .collect();
    assert!(collected.errors.is_empty(), "{:?}", collected.errors);
    let job = Pangram { mode };
    let opts = wf_core::scan::ScanOptions {
        threads,
        chunk_size: chunk,
        ..Default::default()
    };
    let out = wf_core::scan::run(&job, collected.inputs, &opts, None);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let (state, rest) = out.into_parts();
    let windows = job
        .finish(state, &mut |i, off, len| rest.read_range(i, off, len))
        .unwrap();
    let mut s = String::new();
    for w in &windows {
        let path = rest.inputs()[w.input].name.as_bytes();
        s += &if json {
            report::pangram::json_line(w, path)
        } else {
            report::pangram::text_line(w, path)
        };
        s.push('\n');
    }
    s
}

/// `wf pangram --all --json -j J --chunk-size C` over `paths` at every J and C
/// equals `want` (chunks below [`CLI_MIN_CHUNK`] through the library).
fn check_all_json(paths: &[PathBuf], extra: &[&str], chunks: &[&str], want: &str) {
    let max_letters = extra
        .iter()
        .position(|&a| a == "--max-letters")
        .map(|i| extra[i + 1].parse().unwrap());
    for j in ["1", "2"] {
        for c in chunks {
            let size = wf_core::scan::parse_size(c).unwrap();
            if size < CLI_MIN_CHUNK {
                let mode = Mode::All { max_letters };
                let got = lib_lines(paths, mode, j.parse().unwrap(), size, true);
                assert!(
                    got == want,
                    "{paths:?} -j {j} chunk {c} {extra:?} (library)"
                );
                continue;
            }
            let mut cmd = wf();
            cmd.args([
                "pangram",
                "--all",
                "--json",
                "--no-progress",
                "-j",
                j,
                "--chunk-size",
                c,
            ])
            .args(extra)
            .args(paths);
            let got = ok(cmd, None);
            if got != want {
                let (g, w): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
                let first = g.iter().zip(&w).position(|(a, b)| a != b);
                panic!(
                    "{paths:?} -j {j} --chunk-size {c} {extra:?}: {} lines, want {}; first \
                     difference at line {first:?}:\n got {:?}\nwant {:?}",
                    g.len(),
                    w.len(),
                    first.map(|i| g[i]),
                    first.map(|i| w[i]),
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Gutenberg.

#[test]
fn gutenberg_each_file_all_json() {
    let Some(data) = shared_data() else { return };
    let mut windows = 0;
    for f in files_in(&data.join("gutenberg")) {
        let input = read_input(&f);
        let want = oracle_all_json(std::slice::from_ref(&input), None);
        windows += want.lines().count();
        // (Chunks of a few bytes: see the whole-directory test.)
        let chunks: &[&str] = if input.1.len() < 200_000 {
            &["100", "1000", "64M"]
        } else {
            &["1000", "64M"]
        };
        check_all_json(&[f], &[], chunks, &want);
    }
    assert!(
        windows > 2000,
        "only {windows} windows in the whole corpus?"
    );
}

#[test]
fn gutenberg_whole_dir_all_json_and_max_letters() {
    let Some(data) = shared_data() else { return };
    let files = files_in(&data.join("gutenberg"));
    let inputs: Vec<_> = files.iter().map(|f| read_input(f)).collect();
    let want = oracle_all_json(&inputs, None);
    // 7 bytes: one line per chunk, windows spanning hundreds of chunks.
    check_all_json(&files, &[], &["7", "4096"], &want);
    let want = oracle_all_json(&inputs, Some(200));
    assert!(want.lines().count() > 20);
    check_all_json(&files, &["--max-letters", "200"], &["333", "64M"], &want);
}

#[test]
fn gutenberg_top10_golden() {
    let Some(data) = shared_data() else { return };
    // Paths as `wf pangram gutenberg` prints them, run from `../shared/data`.
    let files = files_in(&data.join("gutenberg"));
    let inputs: Vec<_> = files
        .iter()
        .map(|f| {
            let name = format!("gutenberg/{}", f.file_name().unwrap().to_str().unwrap());
            (name, std::fs::read(f).unwrap())
        })
        .collect();
    let oracle = oracle_top_text(&inputs, 10);
    if std::env::var_os("WF_BLESS").is_some() {
        std::fs::create_dir_all(Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, &oracle).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN).expect("golden file");
    assert_eq!(oracle, golden, "brute force disagrees with the golden file");
    assert!(golden.starts_with("   76  gutenberg/milton-paradise.txt:"));
    for args in [
        &[][..],
        &["-j", "1"][..],
        &["-j", "2", "--chunk-size", "1000"][..],
        &["-j", "2", "--chunk-size", "64M"][..],
    ] {
        let mut cmd = wf();
        cmd.current_dir(&data)
            .args(["pangram", "--no-progress"])
            .args(args)
            .arg("gutenberg");
        assert_eq!(ok(cmd, None), golden, "wf pangram {args:?} gutenberg");
    }
    // --top K is a prefix of the same order.
    let mut cmd = wf();
    cmd.current_dir(&data)
        .args(["pangram", "--no-progress", "--top", "3", "gutenberg"]);
    let top3: String = golden.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(ok(cmd, None), top3);
}

// ---------------------------------------------------------------------------
// Generated text.

/// Random text over `alpha` mixed with spaces, newlines, punctuation, UTF-8,
/// stray bytes and long stretches without letters.
fn gen(rng: &mut impl Rng, len: usize, alpha: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(len);
    while t.len() < len {
        match rng.random_range(0..100) {
            0..=77 => t.push(alpha[rng.random_range(0..alpha.len())]),
            78..=88 => t.push(b' '),
            89..=92 => t.push(b'\n'),
            93 => t.extend_from_slice("—é ü\r\n".as_bytes()),
            94 => t.push(rng.random()),
            95 => {
                let n = rng.random_range(0..3000);
                t.extend((0..n).map(|_| b"0123456789 .,;\n\t"[rng.random_range(0..16)]));
            }
            _ => t.extend_from_slice(b".\n"),
        }
    }
    t
}

fn generated(dir: &Path) -> Vec<PathBuf> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20240605);
    let full: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
    let no_j: Vec<u8> = full
        .iter()
        .copied()
        .filter(|&b| b != b'j' && b != b'J')
        .collect();
    let mut skewed = b"etaoinshr".repeat(30);
    skewed.extend(b'a'..=b'z');
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("full.txt", gen(&mut rng, 200_000, &full)),
        ("skewed.txt", gen(&mut rng, 300_000, &skewed)),
        ("no-j.txt", gen(&mut rng, 50_000, &no_j)),
        ("empty.txt", Vec::new()),
        (
            "fox.txt",
            b"The quick brown fox jumps over the lazy dog".to_vec(),
        ),
    ];
    // One long line (no newline for 100 KB): chunks must stretch to hold it.
    let mut long = gen(&mut rng, 100_000, &skewed);
    long.retain(|&b| b != b'\n');
    long.extend_from_slice(b"\nend\n");
    files.push(("long-line.txt", long));
    // Letters far apart: windows spanning many small chunks.
    let mut sparse = Vec::new();
    for _ in 0..8 {
        for c in b'a'..=b'z' {
            sparse.push(if rng.random_bool(0.5) {
                c
            } else {
                c.to_ascii_uppercase()
            });
            let gap = rng.random_range(0..400);
            sparse.extend((0..gap).map(|i| if i % 13 == 12 { b'\n' } else { b'-' }));
        }
    }
    files.push(("sparse.txt", sparse));
    files
        .into_iter()
        .map(|(name, data)| {
            let p = dir.join(name);
            std::fs::write(&p, data).unwrap();
            p
        })
        .collect()
}

#[test]
fn generated_all_json() {
    let t = tempfile::tempdir().unwrap();
    let files = generated(t.path());
    let inputs: Vec<_> = files.iter().map(|f| read_input(f)).collect();
    for (f, input) in files.iter().zip(&inputs) {
        let want = oracle_all_json(std::slice::from_ref(input), None);
        check_all_json(
            std::slice::from_ref(f),
            &[],
            &["1", "7", "100", "4096", "64M"],
            &want,
        );
    }
    let want = oracle_all_json(&inputs, None);
    check_all_json(&files, &[], &["50", "1000"], &want);
    let want = oracle_all_json(&inputs, Some(60));
    check_all_json(&files, &["--max-letters", "60"], &["7", "64M"], &want);
}

#[test]
fn generated_top() {
    let t = tempfile::tempdir().unwrap();
    let files = generated(t.path());
    let inputs: Vec<_> = files.iter().map(|f| read_input(f)).collect();
    for (k, chunk) in [("1", "64M"), ("10", "7"), ("25", "1000"), ("100000", "333")] {
        let want = oracle_top_text(&inputs, k.parse().unwrap());
        for j in ["1", "2"] {
            let size = wf_core::scan::parse_size(chunk).unwrap();
            if size < CLI_MIN_CHUNK {
                let mode = Mode::Top(k.parse().unwrap());
                let got = lib_lines(&files, mode, j.parse().unwrap(), size, false);
                assert_eq!(got, want, "--top {k} -j {j} chunk {chunk} (library)");
                continue;
            }
            let mut cmd = wf();
            cmd.args([
                "pangram",
                "--no-progress",
                "--top",
                k,
                "-j",
                j,
                "--chunk-size",
                chunk,
            ])
            .args(&files);
            assert_eq!(ok(cmd, None), want, "--top {k} -j {j} --chunk-size {chunk}");
        }
    }
    let mut cmd = wf();
    cmd.args(["pangram", "--no-progress", "--top", "0"])
        .args(&files);
    assert_eq!(ok(cmd, None), "");
}

#[test]
fn stdin_all_json() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let full: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
    let data = gen(&mut rng, 300_000, &full);
    let want: Vec<serde_json::Value> = oracle_all_json(&[("-".into(), data.clone())], None)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(want.len() > 100);
    for c in ["7", "64M"] {
        let mut cmd = wf();
        cmd.args([
            "pangram",
            "--all",
            "--json",
            "--no-progress",
            "-j",
            "2",
            "--chunk-size",
            c,
        ]);
        let got: Vec<serde_json::Value> = ok(cmd, Some(&data))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got.len(), want.len(), "--chunk-size {c}");
        for (g, w) in got.iter().zip(&want) {
            for key in ["offset", "bytes", "letters", "text"] {
                assert_eq!(g[key], w[key], "--chunk-size {c}: {g} vs {w}");
            }
        }
    }
}

#[test]
fn a_missing_input_is_named_exit_2_and_the_rest_searched() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("fox.txt");
    std::fs::write(&f, "The quick brown fox jumps over the lazy dog.\n").unwrap();
    let missing = t.path().join("missing.txt");
    let mut c = wf();
    c.args(["pangram", "--json"]).arg(&missing).arg(&f);
    let o = common::run(c, None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(missing.to_str().unwrap()), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["path"], f.to_str().unwrap());
    // "The" drops out: the minimal window starts at "quick".
    assert_eq!(v["offset"], 4);
    assert_eq!(v["letters"], 32);
}

#[test]
fn the_cli_raises_tiny_chunks_to_4k_and_stays_exact() {
    let t = tempfile::tempdir().unwrap();
    let files = generated(t.path());
    let full = &files[0];
    let want = oracle_all_json(&[read_input(full)], None);
    let mut c = wf();
    c.args([
        "pangram",
        "--all",
        "--json",
        "--stats",
        "-j",
        "2",
        "--chunk-size",
        "1",
    ])
    .arg(full);
    let o = common::run(c, None);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout) == want);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("chunk size: 4096\n"), "{err}");
}

#[test]
fn control_bytes_and_non_utf8_names_are_escaped_in_text_and_exact_in_json() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"\x1b]0;owned\x07\xff.txt");
    let f = t.path().join(name);
    std::fs::write(
        &f,
        b"The quick brown \x1b[2J\r fox jumps over\n the lazy dog \xfe\n",
    )
    .unwrap();
    let mut c = wf();
    c.args(["pangram", "--no-progress"]).arg(&f);
    let out = common::ok_bytes(c, None);
    assert!(
        !out.iter().any(|&b| b == 0x1b || b == 0x07 || b == b'\r'),
        "{out:?}"
    );
    let text = String::from_utf8(out).expect("text output is UTF-8");
    assert!(
        text.ends_with(
            "\\x1b]0;owned\\x07\\xff.txt:4  quick brown \\x1b[2J fox jumps over the lazy dog\n"
        ),
        "{text}"
    );
    let mut c = wf();
    c.args(["pangram", "--no-progress", "--json"]).arg(&f);
    let v: serde_json::Value = serde_json::from_slice(&common::ok_bytes(c, None)).unwrap();
    let bytes: Vec<u8> = v["path_bytes"]
        .as_array()
        .expect("path_bytes")
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    assert_eq!(bytes, f.as_os_str().as_bytes());
    assert_eq!(v["path"], f.to_string_lossy().as_ref());
}
