//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

pub mod logrotate;
pub mod timelog;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `wf` binary under test.
pub fn wf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wf"))
}

/// `../shared/data` beside the project, or `None` (with a message) when absent,
/// as in a user's clone.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(sub);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipping: shared data absent ({})", p.display());
        None
    }
}

/// Files directly in a directory, sorted.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Whether `tool` runs here (`tool --version`); if not, says the test skips.
pub fn have(tool: &str) -> bool {
    let there = Command::new(tool).arg("--version").output().is_ok();
    if !there {
        eprintln!("skipping: {tool} absent");
    }
    there
}

/// How long one process of a test may run before it is killed and the test
/// fails: a command that never ends (a search done again and again) fails
/// its test instead of hanging the suite until CI's timeout. 600 s, or
/// `WF_TEST_DEADLINE` seconds.
pub fn deadline() -> std::time::Duration {
    let secs = std::env::var("WF_TEST_DEADLINE").ok();
    std::time::Duration::from_secs(secs.and_then(|s| s.parse().ok()).unwrap_or(600))
}

/// Run a command, feeding `stdin`, and return its output; killed (and the
/// test failed) past [`deadline`].
pub fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let Some(data) = stdin {
        let mut si = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = si.write_all(&data);
        });
    }
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let pid = child.id().to_string();
    let what = format!("{cmd:?}");
    let limit = deadline();
    let dog = std::thread::spawn(move || {
        use std::sync::mpsc::RecvTimeoutError::Timeout;
        let late = matches!(watch.recv_timeout(limit), Err(Timeout));
        if late {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
        late
    });
    let out = child.wait_with_output().expect("wait");
    let _ = done.send(());
    assert!(
        !dog.join().unwrap(),
        "{what}: still running after {limit:?}: killed"
    );
    out
}

/// Run, feeding `stdin`, and require success; return stdout.
pub fn ok_bytes(cmd: Command, stdin: Option<&[u8]>) -> Vec<u8> {
    let what = format!("{cmd:?}");
    let o = run(cmd, stdin);
    assert!(
        o.status.success(),
        "{what} failed: {:?}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Run and require success; return stdout as a string.
pub fn ok(cmd: Command) -> String {
    ok_with(cmd, None)
}

/// Run, feeding `stdin`, and require success; return stdout as a string.
pub fn ok_with(cmd: Command, stdin: Option<&[u8]>) -> String {
    String::from_utf8(ok_bytes(cmd, stdin)).expect("utf-8 output")
}

/// Generated Wide-Finder-like log with malformed lines, made once per test binary.
pub fn generated_log(dir: &Path, size: &str, odd: &str, seed: u64) -> PathBuf {
    let p = dir.join(format!("gen-{size}-{odd}-{seed}.log"));
    let mut c = wf();
    c.args(["gen", "wf2", "--size", size, "--odd-lines", odd, "--seed"])
        .arg(seed.to_string())
        .arg("-o")
        .arg(&p);
    ok(c);
    p
}

/// A directory of its own in the system's temporary directory that other users
/// may enter (mode 0755), with files made in it readable by them; `None` (with a
/// message) if one of its ancestors is closed to others. Nothing outside it changes.
pub fn open_tempdir() -> Option<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut p = dir.path().to_path_buf();
    while p.pop() {
        if std::fs::metadata(&p).unwrap().permissions().mode() & 0o001 == 0 {
            eprintln!("skipping: {} is closed to other users", p.display());
            return None;
        }
    }
    Some(dir)
}

/// `wf` run as the user `nobody` (root only, with setpriv), from a copy of the
/// binary in `dir` (an [`open_tempdir`]); `None` (with a message) otherwise.
pub fn wf_as_nobody(dir: &Path) -> Option<Command> {
    use std::os::unix::fs::PermissionsExt;
    let root = unsafe { libc::geteuid() } == 0;
    if !root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipping: needs root and setpriv to run wf as another user");
        return None;
    }
    let bin = dir.join("wf");
    std::fs::copy(env!("CARGO_BIN_EXE_wf"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin);
    Some(c)
}

/// The Python of the test environment (`WF_PYTHON`, set by scripts/test), or `python3`.
pub fn python() -> String {
    std::env::var("WF_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// The Python with duckdb, or `None` (with a message) when it has none.
pub fn duckdb_python() -> Option<String> {
    let py = python();
    let has = Command::new(&py)
        .args(["-c", "import duckdb"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if has {
        return Some(py);
    }
    if std::env::var("WF_REQUIRE_DUCKDB").as_deref() == Ok("1") {
        panic!("WF_REQUIRE_DUCKDB=1 but {py} cannot import duckdb (run scripts/test)");
    }
    eprintln!("skipping: duckdb not installed");
    None
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
