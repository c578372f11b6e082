//! Files a command leaves behind only while it runs: `wf sql`'s temporary
//! `-o` file (renamed onto the target on success), its `--strict` spool of
//! stdout, and the spill directories of `wf sql` and `wf report --memory`.
//! Each is registered here while it exists, so that SIGINT, SIGTERM or
//! SIGHUP removes it before wf dies (issue 36: an interrupted sort left
//! 581 MB of spill files in `/tmp`, an interrupted `-o` a 0-byte Parquet
//! file). It lives in the core crate so that both commands' crates use it.
//!
//! Why a thread: the handler may only do async-signal-safe things, and a spill
//! directory holds files (a recursive removal is not one). The handler writes
//! the signal's number to a pipe; a thread blocked on that pipe removes the
//! registered paths, restores the default action and raises the signal again,
//! so the parent sees wf killed by it, as before.
//!
//! Spill directories are named `wf-spill-<pid>-XXXXXX`: one left by a wf that
//! died without a chance to clean up (SIGKILL, a power cut) is removed by the
//! next query whose spill base is the same, once that pid is no longer alive.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

static PATHS: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);
static PIPE_WR: OnceLock<i32> = OnceLock::new();

/// A path removed on a signal while this lives (unregistered on drop; the
/// owner removes or keeps the path itself).
#[derive(Debug)]
pub struct Registered(u64);

pub fn register(p: &Path) -> Registered {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    lock().push((id, p.to_path_buf()));
    Registered(id)
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock().retain(|(id, _)| *id != self.0);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf)>> {
    PATHS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove every registered path (files and directory trees).
fn remove_registered() {
    // The query's threads run on meanwhile and may add a spill file while the
    // tree is removed: try again a few times.
    for (_, p) in lock().iter() {
        for _ in 0..5 {
            if std::fs::remove_file(p).is_ok() || std::fs::remove_dir_all(p).is_ok() {
                break;
            }
            if std::fs::symlink_metadata(p).is_err() {
                break;
            }
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    if let Some(&fd) = PIPE_WR.get() {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; errno is saved and restored.
        unsafe {
            let saved = *libc::__errno_location();
            libc::write(fd, (&b as *const u8).cast(), 1);
            *libc::__errno_location() = saved;
        }
    }
}

/// Install the handlers for SIGINT, SIGTERM and SIGHUP for the rest of the
/// process (the CLI; the Python package leaves signals to Python). A signal
/// ignored when wf started stays ignored.
pub fn on_signals() -> std::io::Result<()> {
    if PIPE_WR.get().is_some() {
        return Ok(());
    }
    let mut p = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into `p`.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let rd = p[0];
    PIPE_WR.get_or_init(|| p[1]);
    std::thread::Builder::new()
        .name("wf-signals".into())
        .spawn(move || watch(rd))?;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: plain sigaction calls with zeroed, then filled, structures.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    Ok(())
}

/// The signal thread: wait for a signal, clean up, die of that signal.
fn watch(rd: i32) {
    let mut b = 0u8;
    loop {
        // SAFETY: reads one byte into `b`.
        let n = unsafe { libc::read(rd, (&mut b as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n == 0 {
            return;
        }
    }
    remove_registered();
    let sig = b as libc::c_int;
    // SAFETY: restoring the default action and raising the signal again.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
        libc::_exit(128 + sig);
    }
}

/// The spill directory of one query: `wf-spill-<pid>-XXXXXX` in `base` (or
/// the system's temporary directory), removed when dropped or on a signal.
pub struct SpillDir {
    dir: tempfile::TempDir,
    _reg: Registered,
}

impl SpillDir {
    /// Make it, after removing the spill directories of dead wf processes.
    pub fn new(base: Option<&Path>) -> std::io::Result<Self> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        remove_stale(&base);
        let dir = tempfile::Builder::new()
            .prefix(&format!("wf-spill-{}-", std::process::id()))
            .tempdir_in(&base)?;
        let reg = register(dir.path());
        Ok(SpillDir { dir, _reg: reg })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Remove `wf-spill-<pid>-*` directories in `base` whose process is gone.
fn remove_stale(base: &Path) {
    let Ok(rd) = std::fs::read_dir(base) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = spill_pid(&name.to_string_lossy()) else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The pid in a spill directory's name `wf-spill-<pid>-XXXXXX`.
fn spill_pid(name: &str) -> Option<libc::pid_t> {
    let rest = name.strip_prefix("wf-spill-")?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok().filter(|&p: &libc::pid_t| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_names() {
        assert_eq!(spill_pid("wf-spill-123-abcdef"), Some(123));
        assert_eq!(spill_pid("wf-spill-x-abcdef"), None);
        assert_eq!(spill_pid("wf-spill-0-a"), None);
        assert_eq!(spill_pid(".tmpabc"), None);
    }

    #[test]
    fn stale_removed_live_kept() {
        let base = tempfile::tempdir().unwrap();
        // pid 2^22 + 1 is above Linux's pid_max limit: never alive.
        let dead = base.path().join(format!("wf-spill-{}-zz", (1 << 22) + 1));
        let live = base
            .path()
            .join(format!("wf-spill-{}-zz", std::process::id()));
        for d in [&dead, &live] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("f"), b"x").unwrap();
        }
        let s = SpillDir::new(Some(base.path())).unwrap();
        assert!(!dead.exists());
        assert!(live.exists());
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        drop(s);
        assert!(!p.exists());
    }
}
