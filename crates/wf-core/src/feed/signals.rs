//! SIGINT, SIGTERM and SIGHUP while feeding: the handler only records the signal
//! and writes a byte to a self-pipe; the thread running [`super::run`] wakes on
//! that pipe, terminates the workers and exits with 128 + the signal number.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

static PENDING: AtomicI32 = AtomicI32::new(0);
/// The self-pipe `[read, write]`, created once and never closed (so a handler
/// running late never writes to a reused descriptor).
static PIPE: OnceLock<[i32; 2]> = OnceLock::new();
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    unsafe {
        let saved = *libc::__errno_location();
        PENDING.store(sig, Ordering::SeqCst);
        wake();
        *libc::__errno_location() = saved;
    }
}

/// Wake the thread waiting in [`Guard::wait`] (async-signal-safe).
pub(crate) fn wake() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        unsafe {
            libc::write(fd, b"!".as_ptr().cast(), 1);
        }
    }
}

/// Handlers installed; the previous ones come back on drop.
pub(crate) struct Guard {
    old: Vec<(libc::c_int, libc::sigaction)>,
    rd: i32,
}

pub(crate) fn install() -> io::Result<Guard> {
    let fds = match PIPE.get() {
        Some(p) => *p,
        None => {
            let mut p = [0i32; 2];
            if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
                return Err(io::Error::last_os_error());
            }
            *PIPE.get_or_init(|| p)
        }
    };
    PENDING.store(0, Ordering::SeqCst);
    WAKE_FD.store(fds[1], Ordering::SeqCst);
    let mut g = Guard {
        old: Vec::new(),
        rd: fds[0],
    };
    g.drain();
    for &sig in &SIGNALS {
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            // A signal ignored when wf started (e.g. SIGINT for `wf ... &` in a
            // script) stays ignored, as shells expect.
            if old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0 {
                g.old.push((sig, old));
            }
        }
    }
    Ok(g)
}

impl Guard {
    /// Wait up to `ms` milliseconds for a wake-up.
    pub(crate) fn wait(&self, ms: i32) {
        let mut p = libc::pollfd {
            fd: self.rd,
            events: libc::POLLIN,
            revents: 0,
        };
        unsafe {
            libc::poll(&mut p, 1, ms);
        }
        self.drain();
    }

    fn drain(&self) {
        let mut b = [0u8; 64];
        while unsafe { libc::read(self.rd, b.as_mut_ptr().cast(), b.len()) } > 0 {}
    }

    /// Forget the signal received (it has been handled).
    pub(crate) fn clear(&self) {
        PENDING.store(0, Ordering::SeqCst);
    }

    /// The signal received, if any.
    pub(crate) fn pending(&self) -> Option<i32> {
        match PENDING.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        for (sig, old) in &self.old {
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
        WAKE_FD.store(-1, Ordering::SeqCst);
    }
}
