//! `wf count` against a naive counter, at many thread counts and chunk sizes,
//! and its handling of odd inputs, directories, lists, streams and errors.

mod common;
use common::*;

use std::path::{Path, PathBuf};

/// The deliberately naive answer: newlines, plus one for a final unterminated line.
fn naive_records(data: &[u8]) -> u64 {
    let mut n = 0;
    for &b in data {
        if b == b'\n' {
            n += 1;
        }
    }
    if !data.is_empty() && *data.last().unwrap() != b'\n' {
        n += 1;
    }
    n
}

fn count_json(args: &[&str], paths: &[PathBuf]) -> serde_json::Value {
    let mut c = wf();
    c.arg("count").arg("--json").args(args).args(paths);
    serde_json::from_str(&ok(c)).unwrap()
}

fn check_files(paths: &[PathBuf], chunk_sizes: &[&str]) {
    let mut records = 0;
    let mut bytes = 0;
    for p in paths {
        let d = std::fs::read(p).unwrap();
        records += naive_records(&d);
        bytes += d.len() as u64;
    }
    for j in ["1", "2", "8"] {
        for c in chunk_sizes {
            let v = count_json(&["-j", j, "--chunk-size", c], paths);
            assert_eq!(v["records"], records, "{paths:?} -j {j} --chunk-size {c}");
            assert_eq!(v["bytes"], bytes, "{paths:?} -j {j} --chunk-size {c}");
            assert_eq!(v["files"], paths.len() as u64);
        }
    }
}

const CHUNKS: &[&str] = &["7", "100", "4096", "64M"];

/// A temporary directory holding one file, `f`, with `data` (the directory goes
/// when the first value is dropped).
fn one_file(data: impl AsRef<[u8]>) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("f");
    std::fs::write(&f, data).unwrap();
    (t, f)
}

#[test]
fn shared_data_each_file() {
    for sub in ["logs", "gutenberg"] {
        let Some(dir) = shared_data(sub) else { return };
        for f in files_in(&dir) {
            check_files(&[f], CHUNKS);
        }
    }
}

#[test]
fn generated_odd_lines() {
    let t = tempfile::tempdir().unwrap();
    let p = generated_log(t.path(), "3M", "0.3", 7);
    check_files(
        std::slice::from_ref(&p),
        &["7", "333", "65536", "1M", "64M"],
    );
    // The same without its final newline.
    let mut d = std::fs::read(&p).unwrap();
    d.pop();
    let q = t.path().join("unterminated.log");
    std::fs::write(&q, &d).unwrap();
    check_files(&[q], &["7", "4096", "64M"]);
}

fn odd_files(dir: &Path) -> Vec<PathBuf> {
    let mut long = vec![b'x'; 300_000];
    long.push(b'\n');
    long.extend_from_slice(b"short\nlast without newline");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("one-newline", b"\n".to_vec()),
        ("no-newline", b"abc".to_vec()),
        ("crlf", b"a\r\nb\r\n\r\nc".to_vec()),
        ("nul", b"a\0b\n\0\0\n\0".to_vec()),
        ("invalid-utf8", b"\xff\xfe\n\xc3\x28\n\x80".to_vec()),
        ("blank-lines", b"\n\n\n\n".to_vec()),
        ("long-record", long),
    ];
    cases
        .into_iter()
        .map(|(name, data)| {
            let p = dir.join(name);
            std::fs::write(&p, data).unwrap();
            p
        })
        .collect()
}

#[test]
fn odd_inputs_each_and_together() {
    let t = tempfile::tempdir().unwrap();
    let files = odd_files(t.path());
    for f in &files {
        check_files(std::slice::from_ref(f), &["1", "2", "7", "4096", "64M"]);
    }
    check_files(&files, &["1", "3", "64M"]);
}

#[test]
fn directory_files_from_and_stdin_agree_with_named_files() {
    let t = tempfile::tempdir().unwrap();
    let sub = t.path().join("d/e");
    std::fs::create_dir_all(&sub).unwrap();
    let files = odd_files(&sub);
    std::fs::write(t.path().join("d/.hidden"), b"h1\nh2\n").unwrap();
    let mut all = files.clone();
    all.push(t.path().join("d/.hidden"));
    let named = count_json(&[], &all);

    let dir = count_json(&["--chunk-size", "5"], &[t.path().join("d")]);
    assert_eq!(dir, named);

    let list = t.path().join("list");
    let text: String = all.iter().map(|p| format!("{}\n", p.display())).collect();
    std::fs::write(&list, &text).unwrap();
    let from_file = count_json(&["--files-from", list.to_str().unwrap()], &[]);
    assert_eq!(from_file, named);

    let mut c = wf();
    c.args(["count", "--json", "--files-from", "-"]);
    let o = run(c, Some(text.as_bytes()));
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v, named);

    // NUL-ended names (`find -print0`), one with a line break in it: the
    // list was split at the NULs' line breaks, "a NUL byte" in a name.
    let odd = t.path().join("d/line\nbreak.log");
    std::fs::write(&odd, b"x\ny\n").unwrap();
    let mut with_odd = all.clone();
    with_odd.push(odd);
    let want = count_json(&[], &with_odd);
    let mut nul = Vec::new();
    for p in &with_odd {
        nul.extend_from_slice(p.as_os_str().as_encoded_bytes());
        nul.push(0);
    }
    let mut c = wf();
    c.args(["count", "--json", "--files-from", "-"]);
    let o = run(c, Some(&nul));
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v, want);
    std::fs::remove_file(t.path().join("d/line\nbreak.log")).unwrap();

    // Standard input, with no path and with `-`.
    let mut cat = Vec::new();
    for f in &all {
        cat.extend(std::fs::read(f).unwrap());
        if !cat.is_empty() && *cat.last().unwrap() != b'\n' {
            cat.push(b'\n'); // keep records apart as separate files would
        }
    }
    for args in [
        &["count", "--json", "--chunk-size", "3"][..],
        &["count", "--json", "-"][..],
    ] {
        let mut c = wf();
        c.args(args);
        let o = run(c, Some(&cat));
        assert!(o.status.success());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["records"], named["records"]);
        assert_eq!(v["bytes"], cat.len() as u64);
        assert_eq!(v["files"], 1);
    }
}

#[test]
fn missing_file_and_dangling_symlink_exit_2_and_count_the_rest() {
    let t = tempfile::tempdir().unwrap();
    let good = t.path().join("good");
    std::fs::write(&good, b"1\n2\n3\n").unwrap();
    let dangling = t.path().join("dangling");
    std::os::unix::fs::symlink(t.path().join("nowhere"), &dangling).unwrap();
    let missing = t.path().join("missing");
    let mut c = wf();
    c.args(["count", "--json"])
        .arg(&good)
        .arg(&missing)
        .arg(&dangling);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(missing.to_str().unwrap()), "{err}");
    assert!(err.contains(dangling.to_str().unwrap()), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], 3);
    assert_eq!(v["files"], 1);
}

#[test]
fn json_output_is_exactly_one_line_in_the_documented_form() {
    let (_t, f) = one_file(b"1\n2\nthree");
    let mut c = wf();
    c.args(["count", "--json"]).arg(&f);
    assert_eq!(ok(c), "{\"records\": 3, \"bytes\": 9, \"files\": 1}\n");
}

#[test]
fn permission_denied_file_is_named_and_the_rest_counted() {
    use std::os::unix::fs::PermissionsExt;
    // Root reads any file, so as root wf runs as `nobody` (setpriv).
    let root = unsafe { libc::geteuid() } == 0;
    let Some(t) = common::open_tempdir() else {
        return;
    };
    let good = t.path().join("good");
    std::fs::write(&good, b"1\n2\n").unwrap();
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o644)).unwrap();
    let secret = t.path().join("secret");
    std::fs::write(&secret, b"x\ny\nz\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = if root {
        let Some(c) = common::wf_as_nobody(t.path()) else {
            return;
        };
        c
    } else {
        wf()
    };
    c.args(["count", "--json"]).arg(&secret).arg(&good);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    if err.starts_with("setpriv:") {
        eprintln!("skipping: {err}");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(secret.to_str().unwrap()), "{err}");
    assert!(err.to_lowercase().contains("permission denied"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], 2);
    assert_eq!(v["files"], 1);
}

#[test]
fn missing_files_from_list_is_named_and_the_rest_counted() {
    let t = tempfile::tempdir().unwrap();
    let good = t.path().join("good");
    std::fs::write(&good, b"1\n2\n").unwrap();
    // A directory named as a file list entry that cannot be opened as a list.
    let mut c = wf();
    c.args(["count", "--json", "--files-from"])
        .arg(t.path().join("no-list"))
        .arg(&good);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-list"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], 2);
}

#[test]
fn fifo_and_process_substitution_are_streams_special_files_in_walks_skipped() {
    let (t, f) = one_file(b"a\nb\nc");
    let fifo = t.path().join("fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, b"x\ny\n").unwrap())
    };
    let v = count_json(&[], &[f.clone(), fifo.clone()]);
    writer.join().unwrap();
    assert_eq!(v["records"], 5);
    assert_eq!(v["files"], 2);

    // Process substitution, through bash.
    let mut c = std::process::Command::new("bash");
    c.arg("-c").arg(format!(
        "{} count --json <(cat {} {})",
        env!("CARGO_BIN_EXE_wf"),
        f.display(),
        f.display()
    ));
    let v: serde_json::Value = serde_json::from_str(&ok(c)).unwrap();
    // "a\nb\nc" twice is "a\nb\nca\nb\nc": 5 records.
    assert_eq!(v["records"], 5);

    // A directory holding the (now writer-less) FIFO: skipped, not waited on.
    let v = count_json(&[], &[t.path().to_path_buf()]);
    assert_eq!(v["records"], 3);
    assert_eq!(v["files"], 1);
}

#[test]
fn symlinks_followed_only_with_dash_l() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(t.path().join("target"), b"1\n2\n").unwrap();
    std::fs::write(d.join("own"), b"1\n").unwrap();
    std::os::unix::fs::symlink(t.path().join("target"), d.join("link")).unwrap();
    assert_eq!(count_json(&[], std::slice::from_ref(&d))["records"], 1);
    assert_eq!(count_json(&["-L"], &[d])["records"], 3);
}

#[test]
fn empty_input_and_human_output() {
    let mut c = wf();
    c.arg("count");
    let o = run(c, Some(b""));
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0 records, 0 bytes, 1 file\n"
    );
}

#[test]
fn bad_usage_exits_2() {
    let mut c = wf();
    c.args(["count", "--chunk-size", "12Q"]);
    assert_eq!(run(c, None).status.code(), Some(2));
    let mut c = wf();
    c.arg("no-such-subcommand");
    assert_eq!(run(c, None).status.code(), Some(2));
}

#[test]
fn stats_report_wall_time_bytes_and_io() {
    let (_t, f) = one_file(b"1\n2\n");
    let mut c = wf();
    c.args(["count", "--stats"]).arg(&f);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    for key in [
        "wall time:",
        "bytes:",
        "records:",
        "throughput:",
        "cpu:",
        "read from storage:",
        "major faults:",
    ] {
        assert!(err.contains(key), "missing {key} in {err}");
    }
}

#[test]
fn progress_forced_on_when_stderr_is_not_a_terminal() {
    let (_t, f) = one_file("x\n".repeat(2_000_000));
    // Tiny chunks and one thread keep the run long enough for a few redraws.
    let mut c = wf();
    c.args(["count", "--progress", "-j", "1", "--chunk-size", "512"])
        .arg(&f);
    let o = run(c, None);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // Any draw of the bar shows a rate; whether the total is drawn yet depends
    // on how soon the first redraw comes (it failed under load when this
    // looked for "MB").
    assert!(err.contains("B/s"), "no progress bar on stderr: {err:?}");
    // Without --progress, a non-terminal stderr gets no bar.
    let mut c = wf();
    c.args(["count", "-j", "1", "--chunk-size", "512"]).arg(&f);
    assert!(run(c, None).stderr.is_empty());
}

#[test]
fn proc_files_are_read_as_streams() {
    // /proc files say they are empty; their content must still be counted.
    let p = PathBuf::from("/proc/self/mounts");
    if !p.exists() {
        eprintln!("skipping: no /proc");
        return;
    }
    let v = count_json(&[], &[p]);
    assert!(v["records"].as_u64().unwrap() > 0, "{v}");
    assert!(v["bytes"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn standard_input_named_twice_is_an_error() {
    let (_t, f) = one_file(b"a\nb\n");
    let mut c = wf();
    c.args(["count", "--json", "--files-from", "-", "-"]);
    let list = format!("{}\n", f.display());
    let o = run(c, Some(list.as_bytes()));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("standard input"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], 2);
    assert_eq!(v["files"], 1);
}

/// `--page-cache keep|drop`: the same answer; a file read cold through the read-ahead
/// helpers stays in the page cache with `keep` and leaves it with
/// `drop`. Skips, saying so, where the cache cannot be emptied (tmpfs).
#[test]
fn cache_drop_gives_the_same_answer_and_leaves_the_page_cache() {
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let f = dir.path().join("f");
    let line = b"a line of a log that is read from the disk\n";
    let data: Vec<u8> = line.iter().copied().cycle().take(64 << 20).collect();
    std::fs::write(&f, &data).unwrap();
    let files = [f];
    let runs = [("1", "keep", true), ("1", "drop", false)];
    for (j, cache, kept) in runs
        .into_iter()
        .chain([("2", "keep", true), ("2", "drop", false)])
    {
        if wf_core::bench::evict(&files, false).unwrap() > 0.5 {
            eprintln!("skipped: the page cache cannot be emptied here");
            return;
        }
        let args = [
            "-j",
            j,
            "--chunk-size",
            "1M",
            "--ahead",
            "2M",
            "--page-cache",
            cache,
        ];
        let v = count_json(&args, &files);
        assert_eq!(
            v["records"],
            naive_records(&data),
            "-j {j} --page-cache {cache}"
        );
        assert_eq!(v["bytes"], data.len() as u64, "-j {j} --page-cache {cache}");
        let left = wf_core::bench::resident_fraction(&files).unwrap();
        assert_eq!(
            left > 0.5,
            kept,
            "-j {j} --page-cache {cache}: {left} of the file cached"
        );
    }
}
