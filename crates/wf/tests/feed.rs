//! `wf feed` with real worker processes: conservation of records at every `-j`
//! and block size, byte-exact `--keep-order`, `--rs`, failures that must be
//! reported (and never hang), signals, and the Wide Finder 2 example pair.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{files_in, shared_data, wf};

/// What a finished run left.
struct Run {
    status: ExitStatus,
    out: Vec<u8>,
    err: String,
    secs: f64,
}

/// Run a command with a deadline (a hang fails the test instead of blocking it).
fn run_limit(mut cmd: Command, stdin: Option<Vec<u8>>, limit: Duration) -> Run {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().expect("spawn wf");
    if let Some(data) = stdin {
        let mut si = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = si.write_all(&data);
        });
    }
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let status = wait_limit(&mut child, limit);
    let secs = t.elapsed().as_secs_f64();
    Run {
        status,
        out: o.join().unwrap(),
        err: String::from_utf8_lossy(&e.join().unwrap()).into_owned(),
        secs,
    }
}

fn wait_limit(child: &mut Child, limit: Duration) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("wf did not finish within {limit:?} (hang)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn feed(args: &[&str], inputs: &[&Path], command: &[&str]) -> Command {
    let mut c = wf();
    c.arg("feed")
        .args(args)
        .args(inputs)
        .arg("--")
        .args(command);
    c
}

fn ok_run(cmd: Command, stdin: Option<Vec<u8>>) -> Vec<u8> {
    let r = run_limit(cmd, stdin, Duration::from_secs(60));
    assert!(
        r.status.success(),
        "wf feed failed: {:?}\n{}",
        r.status,
        r.err
    );
    r.out
}

/// Records split on `sep`; a final record without a separator counts.
fn records(data: &[u8], sep: u8) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == sep).collect();
    if data.last() == Some(&sep) || data.is_empty() {
        v.pop();
    }
    v
}

fn sorted_records(data: &[u8], sep: u8) -> Vec<&[u8]> {
    let mut v = records(data, sep);
    v.sort_unstable();
    v
}

/// The multiset of records of several inputs (each input's last record counts
/// even without a separator).
fn sorted_records_of(files: &[PathBuf], sep: u8) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for f in files {
        let d = std::fs::read(f).unwrap();
        v.extend(records(&d, sep).into_iter().map(|r| r.to_vec()));
    }
    v.sort_unstable();
    v
}

fn assert_same_records(expected: &[Vec<u8>], out: &[u8], sep: u8, what: &str) {
    let got = sorted_records(out, sep);
    if got.len() != expected.len() || got.iter().zip(expected).any(|(a, b)| *a != b.as_slice()) {
        panic!(
            "{what}: output records differ from input records ({} out, {} in)",
            got.len(),
            expected.len()
        );
    }
}

/// Odd data: tabs, CRLF, NUL, invalid UTF-8, a 300 KB line, empty lines, and no
/// final newline.
fn odd_data() -> Vec<u8> {
    let mut d = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..3000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match x >> 60 {
            0 => d.extend_from_slice(b"\n"),
            1 => d.extend_from_slice(format!("crlf line {i}\r\n").as_bytes()),
            2 => d.extend_from_slice(format!("nul\0inside {i}\t\ttabs\n").as_bytes()),
            3 => d.extend_from_slice(&[0xff, 0xfe, b' ', 0xc3, b'(', b'\n']),
            4 if i == 1500 => {
                d.extend(std::iter::repeat_n(b'L', 300 << 10));
                d.push(b'\n');
            }
            5 => d.extend_from_slice(b"  \t  leading blanks\n"),
            _ => {
                let n = (x >> 20) % 200;
                d.extend_from_slice(format!("line {i} ").as_bytes());
                d.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, n as usize));
                d.push(b'\n');
            }
        }
    }
    d.extend_from_slice(b"last line without newline");
    d
}

fn tmpdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn parse_rs_accepts_characters_and_escapes() {
    use wf_core::feed::parse_rs;
    assert_eq!(parse_rs("\\0"), Ok(0));
    assert_eq!(parse_rs("\\n"), Ok(b'\n'));
    assert_eq!(parse_rs("\\t"), Ok(b'\t'));
    assert_eq!(parse_rs("\\x1e"), Ok(0x1e));
    assert_eq!(parse_rs("\\x1E"), Ok(0x1e));
    assert_eq!(parse_rs("\\\\"), Ok(b'\\'));
    assert_eq!(parse_rs("\\012"), Ok(b'\n'));
    assert_eq!(parse_rs(","), Ok(b','));
    assert_eq!(parse_rs("0"), Ok(b'0'));
    assert!(parse_rs("").is_err());
    assert!(parse_rs("ab").is_err());
    assert!(parse_rs("\\q").is_err());
    assert!(parse_rs("\\x1ff").is_err());
    assert!(parse_rs("é").is_err());
}

#[test]
fn conservation_on_shared_data() {
    for sub in ["logs", "gutenberg"] {
        let Some(dir) = shared_data(sub) else { return };
        let files: Vec<PathBuf> = files_in(&dir);
        let expected = sorted_records_of(&files, b'\n');
        for j in ["1", "2", "3", "8"] {
            for block in ["100", "64K", "4M"] {
                let out = ok_run(feed(&["-j", j, "--block", block], &[&dir], &["cat"]), None);
                assert_same_records(
                    &expected,
                    &out,
                    b'\n',
                    &format!("{sub} -j {j} --block {block}"),
                );
            }
        }
    }
    // Tiny blocks on single files (every record its own block, or nearly).
    let Some(logs) = shared_data("logs") else {
        return;
    };
    let small = logs.join("ongoing-1000.log");
    let expected = sorted_records_of(std::slice::from_ref(&small), b'\n');
    for (j, block) in [("1", "1"), ("3", "1"), ("2", "7"), ("8", "7")] {
        let out = ok_run(
            feed(&["-j", j, "--block", block], &[&small], &["cat"]),
            None,
        );
        assert_same_records(
            &expected,
            &out,
            b'\n',
            &format!("ongoing -j {j} --block {block}"),
        );
    }
    if let Some(g) = shared_data("gutenberg") {
        let f = g.join("blake-songs.txt");
        let expected = sorted_records_of(std::slice::from_ref(&f), b'\n');
        let out = ok_run(feed(&["-j", "3", "--block", "1"], &[&f], &["cat"]), None);
        assert_same_records(&expected, &out, b'\n', "blake-songs -j 3 --block 1");
    }
}

#[test]
fn conservation_on_odd_generated_data() {
    let dir = tmpdir();
    let data = odd_data();
    let f = write(dir.path(), "odd.txt", &data);
    let expected = sorted_records_of(std::slice::from_ref(&f), b'\n');
    for j in ["1", "2", "3", "8"] {
        for block in ["1", "7", "100", "64K", "4M"] {
            let out = ok_run(feed(&["-j", j, "--block", block], &[&f], &["cat"]), None);
            assert_same_records(
                &expected,
                &out,
                b'\n',
                &format!("odd -j {j} --block {block}"),
            );
        }
    }
    // Two inputs without final newlines: their last records must not join.
    let g = write(dir.path(), "short.txt", b"x1\ny2\nz3 no newline");
    let both = [f.clone(), g.clone()];
    let expected2 = sorted_records_of(&both, b'\n');
    for block in ["7", "64K"] {
        let out = ok_run(
            feed(&["-j", "2", "--block", block], &[&f, &g], &["cat"]),
            None,
        );
        assert_same_records(
            &expected2,
            &out,
            b'\n',
            &format!("two inputs --block {block}"),
        );
    }
    // Standard input as a pipe (read as a stream) and as a file (`< FILE`).
    for block in ["1", "100", "64K"] {
        let out = ok_run(
            feed(&["-j", "3", "--block", block], &[], &["cat"]),
            Some(data.clone()),
        );
        assert_same_records(
            &expected,
            &out,
            b'\n',
            &format!("stdin pipe --block {block}"),
        );
    }
    let mut c = feed(&["-j", "3", "--block", "1K"], &[], &["cat"]);
    c.stdin(std::fs::File::open(&f).unwrap());
    let r = {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.output().unwrap()
    };
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_same_records(&expected, &r.stdout, b'\n', "stdin file");
}

#[test]
fn keep_order_is_byte_exact() {
    let dir = tmpdir();
    let data = odd_data();
    let f = write(dir.path(), "odd.txt", &data);
    for (j, block) in [("1", "64K"), ("3", "4K"), ("8", "16K"), ("2", "4M")] {
        let out = ok_run(
            feed(
                &["-j", j, "--block", block, "--per-block", "--keep-order"],
                &[&f],
                &["cat"],
            ),
            None,
        );
        assert!(
            out == data,
            "--keep-order -j {j} --block {block}: output differs from input"
        );
    }
    // A record per block, and a stream.
    let tiny = b"a\nbb\n\nccc\r\nd\0d\ne".to_vec();
    let t = write(dir.path(), "tiny.txt", &tiny);
    let out = ok_run(
        feed(
            &["-j", "4", "--block", "1", "--per-block", "--keep-order"],
            &[&t],
            &["cat"],
        ),
        None,
    );
    assert_eq!(out, tiny);
    let out = ok_run(
        feed(
            &["-j", "3", "--block", "8K", "--per-block", "--keep-order"],
            &[],
            &["cat"],
        ),
        Some(data.clone()),
    );
    assert!(out == data, "--keep-order on stdin differs from input");
    if let Some(logs) = shared_data("logs") {
        let f = logs.join("nasa-aug95-20k.log");
        let want = std::fs::read(&f).unwrap();
        let out = ok_run(
            feed(
                &["-j", "3", "--block", "100K", "--keep-order"],
                &[&f],
                &["cat"],
            ),
            None,
        );
        assert!(out == want, "--keep-order on nasa log differs from input");
    }
}

#[test]
fn per_block_runs_one_process_per_block() {
    let dir = tmpdir();
    let mut data = Vec::new();
    for i in 0..5000 {
        data.extend_from_slice(format!("record number {i}\n").as_bytes());
    }
    let f = write(dir.path(), "n.txt", &data);
    let out = ok_run(
        feed(
            &["-j", "3", "--block", "8K", "--per-block"],
            &[&f],
            &["wc", "-l"],
        ),
        None,
    );
    let counts: Vec<u64> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 5000);
    let blocks = data.len().div_ceil(8192);
    assert!(
        counts.len() >= blocks - 1 && counts.len() <= blocks + 1,
        "{} processes for about {blocks} blocks",
        counts.len()
    );
}

#[test]
fn record_separator_nul() {
    let dir = tmpdir();
    // NUL records that hold tabs and newlines: with --rs '\0', output units end
    // at NULs too (the default --ors), so no record mixes with another worker's.
    let mut data = Vec::new();
    for i in 0..60_000 {
        data.extend_from_slice(format!("file name {i}\twith tab\nand newline").as_bytes());
        data.push(0);
    }
    data.extend_from_slice(b"final unterminated");
    let f = write(dir.path(), "z.bin", &data);
    let expected = sorted_records_of(std::slice::from_ref(&f), 0);
    for (j, block) in [("1", "100"), ("3", "7"), ("4", "64K"), ("2", "1M")] {
        let out = ok_run(
            feed(&["-j", j, "--block", block, "--rs", "\\0"], &[&f], &["cat"]),
            None,
        );
        assert_same_records(
            &expected,
            &out,
            0,
            &format!("--rs \\0 -j {j} --block {block}"),
        );
    }
    // Blocks end at NULs: a per-block worker sees whole records only.
    let out = ok_run(
        feed(
            &[
                "-j",
                "2",
                "--block",
                "16K",
                "--rs",
                "\\0",
                "--per-block",
                "--keep-order",
            ],
            &[&f],
            &["cat"],
        ),
        None,
    );
    assert!(out == data);
}

#[test]
fn workers_get_their_number_and_count() {
    let out = ok_run(
        feed(
            &["-j", "3"],
            &[],
            &[
                "sh",
                "-c",
                "cat >/dev/null; echo \"$WF_WORKER/$WF_WORKERS\"",
            ],
        ),
        Some(b"a\nb\n".to_vec()),
    );
    let mut lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    lines.sort();
    assert_eq!(lines, ["0/3", "1/3", "2/3"]);
}

#[test]
fn output_lines_never_interleave() {
    // Four workers print long lines at once; every output line must be whole.
    let script = "cat >/dev/null; l=$(printf \"w$WF_WORKER-%0900d\" 0); \
                  i=0; while [ $i -lt 2000 ]; do echo \"$l\"; i=$((i+1)); done";
    let out = ok_run(
        feed(&["-j", "4"], &[], &["sh", "-c", script]),
        Some(b"x\n".to_vec()),
    );
    let text = String::from_utf8(out).unwrap();
    let mut n = 0;
    for line in text.lines() {
        assert_eq!(line.len(), 903, "broken line: {:.60}...", line);
        assert!(line.starts_with('w') && line[3..].bytes().all(|b| b == b'0'));
        n += 1;
    }
    assert_eq!(n, 8000);
}

#[test]
fn a_slow_worker_does_not_get_blocks_round_robin() {
    let mut data = Vec::new();
    for i in 0..400_000 {
        data.extend_from_slice(format!("line {i:08} of the input\n").as_bytes());
    }
    let dir = tmpdir();
    let f = write(dir.path(), "big.txt", &data);
    let script = "if [ \"$WF_WORKER\" = 0 ]; then sleep 1; fi; echo \"$WF_WORKER $(wc -l)\"";
    let out = ok_run(
        feed(
            &["-j", "2", "--block", "256K"],
            &[&f],
            &["sh", "-c", script],
        ),
        None,
    );
    let mut per = [0u64; 2];
    for l in std::str::from_utf8(&out).unwrap().lines() {
        let (w, n) = l.split_once(' ').unwrap();
        per[w.parse::<usize>().unwrap()] = n.trim().parse().unwrap();
    }
    assert_eq!(per[0] + per[1], 400_000);
    assert!(
        per[1] > 2 * per[0],
        "slow worker 0 got {} lines, worker 1 {}",
        per[0],
        per[1]
    );
}

fn numbered(n: usize) -> Vec<u8> {
    let mut d = Vec::new();
    for i in 0..n {
        d.extend_from_slice(
            format!("unique line {i:07} ........................................\n").as_bytes(),
        );
    }
    d
}

fn assert_failed(r: &Run, what: &str) {
    assert!(!r.status.success(), "{what}: wf succeeded\n{}", r.err);
    assert!(r.secs < 20.0, "{what}: took {:.1} s", r.secs);
}

#[test]
fn a_worker_that_exits_at_once_is_reported() {
    let dir = tmpdir();
    let f = write(dir.path(), "n.txt", &numbered(60_000));
    let r = run_limit(
        feed(
            &["-j", "2", "--block", "256K"],
            &[&f],
            &["sh", "-c", "exit 3"],
        ),
        None,
        Duration::from_secs(30),
    );
    assert_failed(&r, "exit 3");
    assert!(r.err.contains("exited with status 3"), "{}", r.err);
    assert!(
        r.err.contains("worker 0") || r.err.contains("worker 1"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("n.txt bytes 0..") || r.err.contains("not fed"),
        "{}",
        r.err
    );
    // Each worker's report says one thing: it got nothing, or what it never read.
    for line in r.err.lines().filter(|l| l.starts_with("wf: worker")) {
        let nothing = line.ends_with("exited with status 3 before it was given any input");
        let partly = line.contains("exited with status 3 without reading all of its input (")
            && line.contains("; never read: ")
            && !line.contains("before it was given");
        assert!(nothing ^ partly, "{line}");
    }
}

#[test]
fn workers_that_read_nothing_are_reported() {
    let dir = tmpdir();
    let f = write(dir.path(), "n.txt", &numbered(60_000));
    for cmd in [&["true"][..], &["sleep", "0.2"][..]] {
        let r = run_limit(
            feed(&["-j", "2", "--block", "256K"], &[&f], cmd),
            None,
            Duration::from_secs(30),
        );
        assert_failed(&r, cmd[0]);
        assert!(
            r.err.contains("reading all of its input") || r.err.contains("not fed"),
            "{}: {}",
            cmd[0],
            r.err
        );
    }
    // Small input that fits in the pipe: the unread bytes are still noticed.
    let r = run_limit(
        feed(&["-j", "1"], &[], &["true"]),
        Some(b"a\nb\n".to_vec()),
        Duration::from_secs(30),
    );
    assert_failed(&r, "true on small stdin");
    assert!(
        r.err.contains("reading all of its input") || r.err.contains("not fed"),
        "{}",
        r.err
    );
}

/// Parse "NAME bytes a..b, c..d; ..." ranges of `name` out of the report.
fn reported_ranges(err: &str, name: &str) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for line in err.lines() {
        let Some(i) = line.find(&format!("{name} bytes ")) else {
            continue;
        };
        let rest = &line[i + name.len() + 7..];
        let rest = rest.split(';').next().unwrap();
        for r in rest.split(", ") {
            let (a, b) = r.trim().split_once("..").unwrap();
            v.push((a.parse().unwrap(), b.parse().unwrap()));
        }
    }
    v
}

#[test]
fn a_worker_killed_mid_run_is_reported_and_the_others_lose_nothing() {
    let dir = tmpdir();
    let data = numbered(50_000);
    let f = write(dir.path(), "n.txt", &data);
    let script = "if [ \"$WF_WORKER\" = 0 ]; then head -c 100000 >/dev/null; kill -9 $$; \
                  else sleep 0.3; exec cat; fi";
    let r = run_limit(
        feed(
            &["-j", "3", "--block", "512K"],
            &[&f],
            &["sh", "-c", script],
        ),
        None,
        Duration::from_secs(30),
    );
    assert_failed(&r, "killed worker");
    assert!(
        r.err.contains("worker 0") && r.err.contains("killed by signal 9"),
        "{}",
        r.err
    );
    // Healthy workers' output plus the reported ranges is the input, exactly once.
    let mut seen: Vec<&[u8]> = records(&r.out, b'\n');
    let ranges = reported_ranges(&r.err, "n.txt");
    for (a, b) in &ranges {
        seen.extend(records(&data[*a..*b], b'\n'));
    }
    seen.sort_unstable();
    let want = sorted_records(&data, b'\n');
    assert!(
        seen == want,
        "healthy output + reported ranges != input ({} vs {})\n{}",
        seen.len(),
        want.len(),
        r.err
    );
}

#[test]
fn a_missing_command_fails_before_reading_input() {
    // stdin is a pipe holding data; wf must not read it.
    let (mut rd, mut wr) = std::io::pipe().unwrap();
    wr.write_all(b"untouched\n").unwrap();
    let mut c = feed(&[], &[], &["wf-no-such-command-xyz", "arg"]);
    c.stdin(rd.try_clone().unwrap());
    let r = run_limit_with_stdin_set(c, Duration::from_secs(10));
    assert_eq!(r.status.code(), Some(2), "{}", r.err);
    assert!(r.err.contains("wf-no-such-command-xyz"), "{}", r.err);
    drop(wr);
    let mut left = String::new();
    rd.read_to_string(&mut left).unwrap();
    assert_eq!(left, "untouched\n", "wf read its input");
    // Same with --per-block, and a path that is not executable.
    let r = run_limit(
        feed(
            &["--per-block"],
            &[Path::new("/dev/null")],
            &["wf-no-such-command-xyz"],
        ),
        None,
        Duration::from_secs(10),
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(r.err.contains("wf-no-such-command-xyz"), "{}", r.err);
    let r = run_limit(
        feed(&[], &[Path::new("/dev/null")], &["/etc/passwd"]),
        None,
        Duration::from_secs(10),
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(r.err.contains("/etc/passwd"), "{}", r.err);
}

fn run_limit_with_stdin_set(mut cmd: Command, limit: Duration) -> Run {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let status = wait_limit(&mut child, limit);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    Run {
        status,
        out,
        err,
        secs: t.elapsed().as_secs_f64(),
    }
}

#[test]
fn a_failing_combine_is_reported() {
    let r = run_limit(
        {
            let mut c = wf();
            c.args([
                "feed",
                "-j",
                "2",
                "--combine",
                "cat >/dev/null; exit 4",
                "--",
                "cat",
            ]);
            c
        },
        Some(b"a\nb\nc\n".to_vec()),
        Duration::from_secs(30),
    );
    assert_failed(&r, "combine exit 4");
    assert!(
        r.err.contains("combine") && r.err.contains("status 4"),
        "{}",
        r.err
    );
    // And a working one sees every worker's output.
    let out = ok_run(
        {
            let mut c = wf();
            c.args([
                "feed",
                "-j",
                "3",
                "--block",
                "1",
                "--combine",
                "sort",
                "--",
                "cat",
            ]);
            c
        },
        Some(b"c\nb\na\n".to_vec()),
    );
    assert_eq!(out, b"a\nb\nc\n");
}

fn alive(pid: u32) -> bool {
    // A zombie (dead, waiting to be reaped by init) is not running.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Pids of processes whose command line contains `marker`.
fn pids_with(marker: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&c)
                .replace('\0', " ")
                .contains(marker)
                && alive(pid)
            {
                v.push(pid);
            }
        }
    }
    v
}

fn signal_leaves_nothing_running(sig: i32, per_block: bool) {
    let marker = format!("30.{}{}", std::process::id(), sig);
    let mut args = vec!["feed", "-j", "2", "--block", "1"];
    if per_block {
        args.push("--per-block");
    }
    let mut c = wf();
    c.args(&args)
        .args(["--", "sh", "-c"])
        .arg(format!("sleep {marker}; cat"));
    c.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // A test run in the background of a script inherits SIGINT ignored, and wf
    // (like any program) keeps an ignored SIGINT ignored: start from defaults.
    unsafe {
        use std::os::unix::process::CommandExt;
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let mut si = child.stdin.take().unwrap();
    si.write_all(b"a\nb\nc\nd\n").unwrap();
    let t = Instant::now();
    while pids_with(&format!("sleep {marker}")).len() < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "workers did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let workers = pids_with(&marker);
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    let status = wait_limit(&mut child, Duration::from_secs(15));
    assert_eq!(
        status.code(),
        Some(128 + sig),
        "exit status after signal {sig}"
    );
    std::thread::sleep(Duration::from_millis(100));
    let left: Vec<u32> = workers.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        left.is_empty(),
        "still running after signal {sig}: {left:?}"
    );
    assert!(pids_with(&marker).is_empty());
}

#[test]
fn sigterm_and_sigint_terminate_every_worker() {
    signal_leaves_nothing_running(libc::SIGTERM, false);
    signal_leaves_nothing_running(libc::SIGINT, false);
    signal_leaves_nothing_running(libc::SIGTERM, true);
}

/// The reference report: `wf wf2 LOG`, or the naive script until `wf wf2` exists.
fn wf2_reference(log: &Path) -> Vec<u8> {
    let r = run_limit(
        {
            let mut c = wf();
            c.arg("wf2").arg(log);
            c
        },
        None,
        Duration::from_secs(60),
    );
    if r.status.success() {
        return r.out;
    }
    assert!(
        r.err.contains("unrecognized subcommand"),
        "wf wf2 failed: {}",
        r.err
    );
    eprintln!("note: `wf wf2` not available; comparing with tests/naive/wf2.py");
    let naive = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/naive/wf2.py");
    let o = Command::new("python3")
        .arg(naive)
        .arg("--text")
        .arg(log)
        .output()
        .unwrap();
    assert!(o.status.success());
    o.stdout
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn wf2_example_equals_wf_wf2_on_generated_odd_logs() {
    if !have("python3") {
        eprintln!("skipping: python3 not found");
        return;
    }
    let dir = tmpdir();
    let log = common::generated_log(dir.path(), "3M", "0.1", 3);
    let want = wf2_reference(&log);
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/wf2");
    let mut c = wf();
    c.args(["feed", "-j", "3", "--block", "64K", "--combine"])
        .arg(format!("python3 {}", ex.join("combine.py").display()))
        .arg(&log)
        .args(["--", "python3"])
        .arg(ex.join("reduce.py"));
    let out = ok_run(c, None);
    assert!(
        out == want,
        "python reduce/combine differs from wf wf2 on generated odd lines"
    );
}

#[test]
fn wf2_example_equals_wf_wf2() {
    if !Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).is_dir() {
        eprintln!("skipping: shared data absent");
        return;
    }
    if !have("python3") {
        eprintln!("skipping: python3 not found");
        return;
    }
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/wf2");
    let py = |f: &str| format!("python3 {}", ex.join(f).display());
    let awk = |f: &str| format!("LC_ALL=C mawk -f {}", ex.join(f).display());
    for log in files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/logs")) {
        let want = wf2_reference(&log);
        for (j, block) in [("2", "1M"), ("3", "16K")] {
            let mut c = wf();
            c.args([
                "feed",
                "-j",
                j,
                "--block",
                block,
                "--combine",
                &py("combine.py"),
            ])
            .arg(&log)
            .args(["--", "python3"])
            .arg(ex.join("reduce.py"));
            let out = ok_run(c, None);
            assert!(
                out == want,
                "{}: python reduce/combine at -j {j} --block {block} differs from wf wf2:\n{}",
                log.display(),
                String::from_utf8_lossy(&out)
            );
        }
        if have("mawk") {
            let mut c = wf();
            c.args([
                "feed",
                "-j",
                "3",
                "--block",
                "16K",
                "--combine",
                &awk("combine.awk"),
            ])
            .arg(&log)
            .args(["--", "env", "LC_ALL=C", "mawk", "-f"])
            .arg(ex.join("reduce.awk"));
            let out = ok_run(c, None);
            assert!(
                out == want,
                "{}: awk pair differs from wf wf2",
                log.display()
            );
        }
    }
}

#[test]
fn records_in_lines_out_with_ors() {
    let dir = tmpdir();
    // ';' records in, lines out (--ors '\n'): each line is whole, though every
    // worker writes it in two pieces.
    let semi: Vec<u8> = (0..400)
        .flat_map(|i| format!("{i};").into_bytes())
        .collect();
    let f = write(dir.path(), "semi.txt", &semi);
    let script = "while IFS= read -r -d ';' r; do printf 'id=%s;' \"$r\"; sleep 0.001; printf ' ok\\n'; done";
    let out = ok_run(
        feed(
            &["-j", "3", "--block", "10", "--rs", ";", "--ors", "\\n"],
            &[&f],
            &["bash", "-c", script],
        ),
        None,
    );
    let mut lines: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    let mut want: Vec<String> = (0..400).map(|i| format!("id={i}; ok")).collect();
    want.sort();
    assert_eq!(lines, want);
}

#[test]
fn keep_order_output_is_the_blocks_outputs_concatenated() {
    let dir = tmpdir();
    let f = write(dir.path(), "abcd.txt", b"a\nb\nc\nd\n");
    let out = ok_run(
        feed(
            &["--keep-order", "-j", "2", "--block", "1"],
            &[&f],
            &["tr", "-d", "\\n"],
        ),
        None,
    );
    assert_eq!(out, b"abcd");
    // gzip members concatenate into one valid stream.
    if have("gzip") {
        let data = numbered(200_000);
        let f = write(dir.path(), "n.txt", &data);
        let gz = ok_run(
            feed(
                &["--keep-order", "-j", "2", "--block", "256K"],
                &[&f],
                &["gzip", "-c"],
            ),
            None,
        );
        let mut c = Command::new("gzip");
        c.arg("-dc");
        assert!(
            ok_run(c, Some(gz)) == data,
            "gzip -dc of the output != input"
        );
    }
}

#[test]
fn stream_blocks_follow_block_size() {
    let out = ok_run(
        feed(
            &["--per-block", "--keep-order", "--block", "1"],
            &[],
            &["wc", "-l"],
        ),
        Some(b"a\nb\nc\nd\n".to_vec()),
    );
    let counts: Vec<&str> = std::str::from_utf8(&out)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(counts, ["1", "1", "1", "1"]);
    // Larger blocks of a stream: cut after the first record end past --block.
    let data = numbered(20_000);
    let out = ok_run(
        feed(
            &["--per-block", "--keep-order", "--block", "1K"],
            &[],
            &["wc", "-c"],
        ),
        Some(data.clone()),
    );
    let sizes: Vec<usize> = std::str::from_utf8(&out)
        .unwrap()
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), data.len());
    let (last, full) = sizes.split_last().unwrap();
    assert!(
        full.iter().all(|&n| (1024..1024 + 64).contains(&n)),
        "{sizes:?}"
    );
    assert!(*last <= 1024 + 64);
}

#[test]
fn a_worker_that_exits_0_before_the_end_of_its_input_is_reported() {
    // The worker reads its first block and exits 0 while wf waits for more input.
    for j in ["1", "2"] {
        let mut c = feed(&["-j", j, "--block", "1"], &[], &["head", "-n", "1"]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut si = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = si.write_all(b"one\ntwo\n");
            let _ = si.flush();
            std::thread::sleep(Duration::from_millis(1500));
            let _ = si.write_all(b"three\n");
        });
        let status = wait_limit(&mut child, Duration::from_secs(30));
        writer.join().unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!status.success(), "-j {j}: wf succeeded\n{err}");
        assert!(
            err.contains("worker 0") || err.contains("worker 1"),
            "-j {j}: {err}"
        );
    }
}

#[test]
fn failure_reports_list_the_last_ranges_and_what_was_never_read() {
    let dir = tmpdir();
    let data = numbered(100_000);
    let f = write(dir.path(), "n.txt", &data);
    // Worker 0 reads 50 KB of many small blocks, then stops reading and sleeps
    // (so its pipe stays full), then dies.
    let script = "if [ \"$WF_WORKER\" = 0 ]; then head -c 50000 >/dev/null; sleep 1; kill -9 $$; \
                  else exec cat; fi";
    let r = run_limit(
        feed(&["-j", "2", "--block", "1K"], &[&f], &["sh", "-c", script]),
        None,
        Duration::from_secs(30),
    );
    assert_failed(&r, "killed worker");
    let line = r
        .err
        .lines()
        .find(|l| l.contains("worker 0"))
        .expect("report");
    // How the blocks interleave between the two workers depends on the scheduler:
    // worker 0's ranges are cut to the last 10 (after a count of the earlier
    // ones) only when it was given more than 10 separate ranges. The cut itself
    // is unit-tested beside `ranges_text`.
    let given = line
        .split("; never read")
        .next()
        .unwrap()
        .split("which may be incomplete: ")
        .nth(1)
        .expect("given ranges");
    let listed = given.matches("..").count();
    assert!((1..=10).contains(&listed), "{line}");
    if given.contains("earlier ranges, then") {
        assert_eq!(listed, 10, "{line}");
    }
    let never = line
        .split("never read: ")
        .nth(1)
        .expect("never-read ranges");
    // The never-read ranges are the data it was given last, so they end where
    // the last listed range ends.
    let last_given = line
        .split("; never read")
        .next()
        .unwrap()
        .rsplit("..")
        .next()
        .unwrap()
        .trim()
        .to_string();
    assert!(never.trim_end().ends_with(&last_given), "{line}");
}

#[test]
fn the_never_read_report_starts_exactly_where_the_worker_stopped_reading() {
    let dir = tmpdir();
    let data = numbered(100_000);
    let f = write(dir.path(), "n.txt", &data);
    // `dd` with full blocks consumes exactly 5,000 bytes of its pipe; a worker that
    // closes its stdin at once consumes none. Both then exit while wf still feeds
    // them, so part of the block in hand never reached the pipe at all.
    for (script, first) in [
        (
            "dd bs=1000 count=5 iflag=fullblock of=/dev/null 2>/dev/null; sleep 0.5; exit 1",
            5000,
        ),
        ("exec 0<&-; sleep 0.5", 0),
    ] {
        for extra in [&[][..], &["--per-block"][..]] {
            let mut args = vec!["-j", "1", "--block", "256K"];
            args.extend_from_slice(extra);
            let r = run_limit(
                feed(&args, &[&f], &["sh", "-c", script]),
                None,
                Duration::from_secs(30),
            );
            assert_failed(&r, script);
            let line = r
                .err
                .lines()
                .find(|l| l.contains("never read: "))
                .expect(&r.err);
            let never = line.split("never read: ").nth(1).unwrap();
            let (start, end) = never
                .trim()
                .rsplit(' ')
                .next()
                .unwrap()
                .split_once("..")
                .unwrap();
            assert_eq!(
                start.parse::<u64>().unwrap(),
                first,
                "{args:?} {script}: {line}"
            );
            let end: u64 = end.parse().unwrap();
            let count = format!("({} bytes never read)", end - first);
            assert!(line.contains(&count), "{args:?} {script}: {line}");
            // What it was given ends where the never-read range ends.
            assert!(line.contains(&format!("n.txt bytes 0..{end};")), "{line}");
        }
    }
}

/// Where each record starts, and its length with the separator, by content.
type RecordAt = std::collections::HashMap<Vec<u8>, (u64, u64)>;

/// Records of varied lengths, each unique, and where each is.
fn varied_records(n: usize) -> (Vec<u8>, RecordAt) {
    let mut data = Vec::new();
    let mut at = std::collections::HashMap::new();
    for i in 0..n {
        let start = data.len() as u64;
        data.extend_from_slice(format!("record {i:07} ").as_bytes());
        data.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, (i * 7919) % 180));
        data.push(b'\n');
        let rec = data[start as usize..data.len() - 1].to_vec();
        at.insert(rec, (start, data.len() as u64 - start));
    }
    (data, at)
}

/// The ranges wf names as given to no worker ("... not given to any worker:
/// NAME bytes a..b, c..d").
fn not_given(err: &str, name: &str) -> Vec<(u64, u64)> {
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("not given to any worker"))
        .collect();
    reported_ranges(&lines.join("\n"), name)
        .into_iter()
        .map(|(a, b)| (a as u64, b as u64))
        .collect()
}

/// Every output line is a whole record of the input (`at`), none twice, and
/// the records delivered and the ranges named tile `[0, size)` exactly.
fn assert_whole_records_and_named_rest(out: &[u8], at: &RecordAt, named: &[(u64, u64)], size: u64) {
    let mut pieces: Vec<(u64, u64, &str)> = named.iter().map(|&(a, b)| (a, b, "named")).collect();
    for line in records(out, b'\n') {
        let Some(&(start, len)) = at.get(line) else {
            let nuls = line.iter().filter(|&&b| b == 0).count();
            panic!(
                "a worker got a line that is not a record of the file ({} bytes, {nuls} NULs): {:?}",
                line.len(),
                String::from_utf8_lossy(&line[..line.len().min(60)])
            );
        };
        pieces.push((start, start + len, "delivered"));
    }
    pieces.sort();
    let mut end = 0;
    for &(a, b, what) in &pieces {
        assert!(a == end, "bytes {end}..{a} neither delivered nor named (next: {what} {a}..{b}); named: {named:?}");
        end = b;
    }
    assert_eq!(end, size, "bytes {end}..{size} neither delivered nor named");
}

#[test]
fn a_file_truncated_under_feed_gives_whole_records_and_names_the_rest() {
    let dir = tmpdir();
    let (data, at) = varied_records(40_000);
    let f = write(dir.path(), "t.log", &data);
    let marker = dir.path().join("truncated");
    // Workers wait until the file is truncated: what wf wrote into their pipes
    // before that must still be whole records of the file as it was.
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.01; done; exec cat",
        marker.display()
    );
    let cmd = feed(
        &["-j", "2", "--block", "64K"],
        &[&f],
        &["sh", "-c", &script],
    );
    let marker2 = marker.clone();
    let f2 = f.clone();
    let watcher = std::thread::spawn(move || {
        let t = Instant::now();
        // wf's own command line holds the script too: wf and two workers.
        while pids_with(&marker2.display().to_string()).len() < 3 {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "workers did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Time for wf to fill the pipes (the old splice then showed NULs); the
        // outcome must not depend on it.
        std::thread::sleep(Duration::from_millis(300));
        let fh = std::fs::OpenOptions::new().write(true).open(&f2).unwrap();
        fh.set_len(300_007).unwrap();
        std::fs::write(&marker2, b"").unwrap();
    });
    let r = run_limit(cmd, None, Duration::from_secs(60));
    watcher.join().unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", r.err);
    assert!(r.err.contains("file shrank"), "{}", r.err);
    let named = not_given(&r.err, &f.display().to_string());
    assert_whole_records_and_named_rest(&r.out, &at, &named, data.len() as u64);
    assert!(!named.is_empty(), "no range named: {}", r.err);
}

#[test]
fn a_record_longer_than_max_record_is_named_and_the_rest_fed() {
    let dir = tmpdir();
    let (mut data, _) = varied_records(3000);
    // Too long (1001, 5000 and 300,000 bytes: past a read piece), exactly the
    // limit (1000: fed), and a final unterminated one too long.
    let long = [(500, 1001), (900, 1000), (1500, 5000), (2500, 300_000)];
    let mut recs: Vec<Vec<u8>> = records(&data, b'\n').iter().map(|r| r.to_vec()).collect();
    for &(i, n) in &long {
        recs.insert(i, vec![b'L'; n]);
    }
    data = recs.join(&b'\n');
    data.push(b'\n');
    data.extend(std::iter::repeat_n(b'E', 2000));
    let f = write(dir.path(), "m.log", &data);
    let mut want_named = Vec::new();
    let mut expected = Vec::new();
    let mut start = 0u64;
    for r in data.split(|&b| b == b'\n') {
        let end = (start + r.len() as u64 + 1).min(data.len() as u64);
        if r.len() > 1000 {
            want_named.push((start, end));
        } else {
            expected.push(r.to_vec());
        }
        start = end;
    }
    expected.sort();
    for args in [
        &["-j", "2", "--block", "1K"][..],
        &["-j", "3", "--block", "64K"][..],
        &["-j", "1", "--block", "1M"][..],
        &["-j", "2", "--block", "8K", "--per-block"][..],
    ] {
        let mut a = args.to_vec();
        a.extend(["--max-record", "1000"]);
        let r = run_limit(feed(&a, &[&f], &["cat"]), None, Duration::from_secs(60));
        assert_eq!(r.status.code(), Some(2), "{a:?}: {}", r.err);
        let mut got: Vec<Vec<u8>> = records(&r.out, b'\n').iter().map(|r| r.to_vec()).collect();
        got.sort();
        assert!(
            got == expected,
            "{a:?}: {} records out, {} expected",
            got.len(),
            expected.len()
        );
        let mut named = not_given(&r.err, &f.display().to_string());
        named.sort();
        assert_eq!(named, want_named, "{a:?}: {}", r.err);
        let n = r
            .err
            .matches("longer than --max-record (1000 bytes)")
            .count();
        assert_eq!(n, want_named.len(), "{}", r.err);
    }
}

#[test]
fn too_many_workers_is_a_usage_error() {
    let dir = tmpdir();
    let f = write(dir.path(), "a.txt", b"a\nb\n");
    for j in ["1025", "50000", "100000"] {
        let mut c = feed(&["-j", j], &[&f], &["cat"]);
        // The code before this check tried to start them all: keep a failure
        // of the test from filling the machine with processes.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                libc::setrlimit(libc::RLIMIT_NPROC, &lim);
                Ok(())
            });
        }
        let r = run_limit(c, None, Duration::from_secs(30));
        assert_eq!(r.status.code(), Some(2), "-j {j}: {}", r.err);
        assert!(r.err.contains("at most 1024"), "-j {j}: {}", r.err);
        assert!(r.out.is_empty());
    }
}

#[test]
fn sigkill_of_wf_kills_its_workers() {
    for (k, per_block) in [(1, false), (2, true)] {
        let marker = format!("30.{}{k}7", std::process::id());
        let mut args = vec!["feed", "-j", "2", "--block", "1"];
        if per_block {
            args.push("--per-block");
        }
        let mut c = wf();
        c.args(&args).args(["--", "sleep", &marker]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let mut si = child.stdin.take().unwrap();
        si.write_all(b"a\nb\nc\nd\n").unwrap();
        let t = Instant::now();
        // wf's own command line holds it too: wf and two workers.
        while pids_with(&format!("sleep {marker}")).len() < 3 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "workers did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let workers: Vec<u32> = pids_with(&format!("sleep {marker}"))
            .into_iter()
            .filter(|&p| p != child.id())
            .collect();
        child.kill().unwrap();
        child.wait().unwrap();
        let t = Instant::now();
        while workers.iter().any(|&p| alive(p)) && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<u32> = workers.into_iter().filter(|&p| alive(p)).collect();
        for &p in &left {
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        assert!(
            left.is_empty(),
            "per_block {per_block}: workers outlived wf: {left:?}"
        );
    }
}

/// Peak resident memory of a running process, in KiB.
fn vm_hwm_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_long_output_line_goes_out_in_pieces_and_whole() {
    let dir = tmpdir();
    let f = write(dir.path(), "in.txt", &numbered(2000));
    let marker = dir.path().join("seen");
    const LONG: usize = 64 << 20;
    // Worker 0 prints 64 MiB with no newline, then waits until the test has
    // seen all of it (so wf must pass it on before the line ends); worker 1
    // prints its input, lines that must not land inside the long one.
    let script = format!(
        "if [ \"$WF_WORKER\" = 0 ]; then cat >/dev/null; head -c {LONG} /dev/zero | tr '\\0' x; \
         while [ ! -e '{}' ]; do sleep 0.01; done; else exec cat; fi",
        marker.display()
    );
    let mut c = feed(&["-j", "2", "--block", "4K"], &[&f], &["sh", "-c", &script]);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = child.id();
    let mut so = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match so.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut out = Vec::new();
    let (mut xs, mut peak) = (0, 0);
    let t = Instant::now();
    let mut failure = None;
    while xs < LONG {
        if let Ok(piece) = rx.recv_timeout(Duration::from_millis(50)) {
            xs += piece.iter().filter(|&&b| b == b'x').count();
            out.extend_from_slice(&piece);
        }
        peak = peak.max(vm_hwm_kib(pid));
        if peak >= 32 << 10 {
            failure = Some(format!("wf holds the long line: peak RSS {peak} KiB"));
        } else if t.elapsed() > Duration::from_secs(60) {
            failure = Some(format!("only {xs} bytes of the long line came out"));
        }
        if failure.is_some() {
            break;
        }
    }
    peak = peak.max(vm_hwm_kib(pid));
    std::fs::write(&marker, b"").unwrap();
    if let Some(f) = failure {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{f}");
    }
    let status = wait_limit(&mut child, Duration::from_secs(30));
    reader.join().unwrap();
    out.extend(rx.try_iter().flatten());
    assert!(status.success());
    assert!(
        peak < 32 << 10,
        "peak RSS {peak} KiB for a {LONG}-byte line"
    );
    // The long line is one run, and every other line is whole.
    let first = out.iter().position(|&b| b == b'x').unwrap();
    assert!(out[first..first + LONG].iter().all(|&b| b == b'x'));
    let mut rest = out[..first].to_vec();
    rest.extend_from_slice(&out[first + LONG..]);
    let expected = sorted_records(&numbered(2000), b'\n')
        .iter()
        .map(|r| r.to_vec())
        .collect::<Vec<_>>();
    // Worker 0 read (and dropped) some of the input.
    let got = sorted_records(&rest, b'\n');
    assert!(got
        .iter()
        .all(|r| r.is_empty() || expected.iter().any(|e| e == r)));
}

#[test]
fn an_unterminated_last_record_gets_a_separator_only_in_long_lived_workers() {
    let dir = tmpdir();
    let a = write(dir.path(), "a.txt", b"a1\na2");
    let b = write(dir.path(), "b.txt", b"b1\nb2");
    let out = ok_run(feed(&["-j", "1"], &[&a, &b], &["cat"]), None);
    assert_eq!(out, b"a1\na2\nb1\nb2\n");
    let out = ok_run(
        feed(&["-j", "2", "--keep-order"], &[&a, &b], &["cat"]),
        None,
    );
    assert_eq!(out, b"a1\na2b1\nb2");
    let help = ok_run(wf_help(), None);
    let help = String::from_utf8_lossy(&help).replace(['\n', ' '], "");
    assert!(
        help.contains("lastrecordwithoutaseparatorgetsone"),
        "{help}"
    );
}

fn wf_help() -> Command {
    let mut c = wf();
    c.args(["feed", "--help"]);
    c
}

/// A compressed input cut short (a truncated `.gz`): the record the decoder
/// error cut is given to no worker, and where the undelivered bytes begin is
/// named, exit 2. (Before, feed's stream path would have handed a cut record
/// out as its last block; the decoders tried here happen to fail before they
/// return the cut bytes, so only the message part of this test failed then.
/// The stream reader now withholds it whatever the decoder does.)
#[test]
fn a_truncated_gzip_gives_workers_whole_records_only() {
    if !have("gzip") {
        eprintln!("skipping: gzip absent");
        return;
    }
    let dir = tmpdir();
    let (data, _) = varied_records(20_000);
    let mut gz = Command::new("gzip");
    gz.arg("-c");
    let packed = ok_run(gz, Some(data.clone()));
    let f = write(dir.path(), "t.log.gz", &packed[..packed.len() / 2]);
    let r = run_limit(
        feed(&["-j", "2", "--block", "16K"], &[&f], &["cat"]),
        None,
        Duration::from_secs(60),
    );
    assert_eq!(r.status.code(), Some(2), "{}", r.err);
    assert!(r.err.contains("not given to any worker"), "{}", r.err);
    let whole: std::collections::HashSet<&[u8]> = records(&data, b'\n').into_iter().collect();
    let got = records(&r.out, b'\n');
    assert!(got.len() > 1000, "only {} records", got.len());
    for rec in got {
        assert!(
            whole.contains(rec),
            "not a record of the input: {:?}",
            String::from_utf8_lossy(rec)
        );
    }
}

/// A worker that is given nothing and exits well loses nothing: `wf feed
/// -j 2 empty.txt -- true` exited 2, each worker "exited with status 0
/// before it was given any input". Nor does one that exits after its input
/// ended, whatever its status (GNU parallel starts no job for it): `wf feed
/// app.log -- grep ERROR` exited 2, an idle grep exiting 1; unless a signal
/// killed it. One that exits without reading what it was given is still
/// named, and input no worker was fed is said, exit 2.
#[test]
fn an_idle_worker_that_exits_well_is_no_failure() {
    let dir = tmpdir();
    let empty = write(dir.path(), "empty.txt", b"");
    let one = write(dir.path(), "one.txt", b"a\n");
    let feed = |args: &[&str], path: &Path| {
        let mut c = wf();
        c.args(["feed", "-j", "3"]).arg(path).arg("--").args(args);
        common::run(c, None)
    };
    let o = feed(&["true"], &empty);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = feed(&["grep", "a"], &one);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        (o.status.code(), &o.stdout[..]),
        (Some(0), &b"a\n"[..]),
        "{err}"
    );
    // Failing at once, on an empty input: as no job (it was 0 or 2 by a
    // race); on input still to come (a slow pipe), what no worker was fed is
    // said, exit 2.
    for _ in 0..5 {
        let o = feed(&["false"], &empty);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
    }
    let mut c = wf();
    c.args(["feed", "-j", "2", "--", "sh", "-c", "exit 3"]);
    let mut slow = std::process::Command::new("sh");
    slow.args(["-c", "sleep 1; echo a"]).stdout(Stdio::piped());
    let mut slow = slow.spawn().unwrap();
    c.stdin(slow.stdout.take().unwrap());
    let o = c.output().unwrap();
    slow.wait().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("was not fed to any worker"), "{err}");
    // Death by a signal, given nothing, is a failure.
    let o = feed(&["sh", "-c", "cat >/dev/null; kill -SEGV $$"], &empty);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let o = feed(&["true"], &one);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("one.txt"), "{err}");
    assert!(!err.contains("before it was given any input"), "{err}");
}
