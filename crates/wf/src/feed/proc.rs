//! One worker process: its stdin pipe, the thread that forwards its stdout, and
//! the thread that waits for it to exit.
//!
//! The worker runs in its own process group (so terminating it also reaches
//! whatever it started). wf keeps a second descriptor for the read end of the
//! worker's stdin pipe: when the worker exits, the waiting thread drains that
//! pipe, counting what the worker left unread, until the feeding thread closes
//! its end. So a feeding thread never blocks on a dead worker, and a worker that
//! exits with status 0 without reading all its input (`true`, `head`) is caught
//! exactly, with no race between its exit and the last write.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::output::{forward, Sink};
use super::plan::{Block, Data};
use super::{signals, Ctl};

/// Where a worker's stdout goes.
pub(crate) enum Out {
    /// Forwarded in whole lines as it comes.
    Sink(Arc<Sink>),
    /// Kept in memory and returned by [`Proc::finish`] (`--keep-order`).
    Capture,
}

pub(crate) enum SendErr {
    /// The worker exited (or closed its input) before taking the whole block.
    Closed,
    /// Feeding stopped (signal, output gone).
    Stopped,
    /// The input could not be read (file shrank, I/O error).
    Input(String),
}

#[derive(Default)]
struct State {
    exited: AtomicBool,
    /// Exit status (None if it could not be had) and bytes left unread.
    done: Mutex<Option<(Option<ExitStatus>, u64)>>,
    cv: Condvar,
}

pub(crate) struct Proc {
    pub pid: i32,
    stdin: Option<File>,
    /// Pacing (see [`Proc::wait_room`]): stdin is non-blocking, and this is the
    /// current nap in nanoseconds, with the pipe's capacity.
    pace: Option<(std::cell::Cell<u64>, usize)>,
    st: Arc<State>,
    /// Bytes written into the pipe so far, and how many of them were separators
    /// wf added (not input): with the unread count, they tell which input bytes
    /// the worker really read.
    sent: std::cell::Cell<u64>,
    extra: std::cell::Cell<u64>,
    out: Option<JoinHandle<Vec<u8>>>,
    waiter: Option<JoinHandle<()>>,
    ctl: Arc<Ctl>,
}

/// What a finished worker left behind.
pub(crate) struct Finished {
    pub status: Option<ExitStatus>,
    pub unread: u64,
    pub output: Vec<u8>,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut p = [0i32; 2];
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) })
}

/// Start `argv` with its stdin a pipe from wf and `env` added.
pub(crate) fn spawn(
    argv: &[OsString],
    env: &[(&str, String)],
    out: Out,
    ctl: &Arc<Ctl>,
    pipe_size: usize,
) -> io::Result<Proc> {
    let (r, w) = pipe()?;
    if pipe_size > 0 {
        // Larger pipes mean fewer wake-ups; failure (user limits) is harmless.
        unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, pipe_size as libc::c_int) };
    }
    let pace = if pacing_wanted() { paced(&w) } else { None };
    let rkeep = r.try_clone()?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::from(r))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    ctl.register(pid);
    let stdout = child.stdout.take().expect("stdout is piped");
    let out = take_output(stdout, out);
    let st = Arc::new(State::default());
    let waiter = wait_and_drain(child, File::from(rkeep), st.clone());
    Ok(Proc {
        pid,
        stdin: Some(File::from(w)),
        pace,
        st,
        sent: Default::default(),
        extra: Default::default(),
        out: Some(out),
        waiter: Some(waiter),
        ctl: ctl.clone(),
    })
}

/// Make the pipe's write end non-blocking for pacing (see [`Proc::wait_room`]):
/// the first nap and the pipe's capacity, or `None` if that cannot be done.
fn paced(w: &OwnedFd) -> Option<(std::cell::Cell<u64>, usize)> {
    let cap = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETPIPE_SZ) };
    let fl = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETFL) };
    if cap > 0
        && fl >= 0
        && unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK) } == 0
    {
        Some((std::cell::Cell::new(200_000), cap as usize))
    } else {
        None
    }
}

/// The thread that takes the worker's stdout: forwarded as it comes, or kept.
fn take_output(stdout: ChildStdout, out: Out) -> JoinHandle<Vec<u8>> {
    match out {
        Out::Sink(sink) => std::thread::spawn(move || {
            forward(stdout, &sink);
            Vec::new()
        }),
        Out::Capture => std::thread::spawn(move || {
            let mut v = Vec::new();
            let mut r = stdout;
            let _ = r.read_to_end(&mut v);
            v
        }),
    }
}

/// The thread that waits for the worker to exit, then drains and counts what
/// it left unread in its stdin pipe (`rkeep`: wf's copy of the read end).
fn wait_and_drain(mut child: Child, mut rkeep: File, st: Arc<State>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let status = child.wait().ok();
        st.exited.store(true, Ordering::SeqCst);
        signals::wake();
        // What is still in the pipe, plus whatever the feeding thread writes
        // until it notices and closes its end, was never read by the worker.
        let mut buf = vec![0u8; 64 << 10];
        let mut unread = 0u64;
        loop {
            match rkeep.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => unread += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        *st.done.lock().unwrap() = Some((status, unread));
        st.cv.notify_all();
    })
}

/// How a feeding thread moves file data into pipes: with `splice(2)` until it
/// fails for a file or pipe (or `WF_FEED_COPY=1`, for measurements), else with
/// `pread` + `write` through `copybuf`.
pub(crate) struct Mover {
    splice: bool,
    copybuf: Vec<u8>,
}

impl Mover {
    pub(crate) fn new() -> Self {
        Mover {
            splice: std::env::var_os("WF_FEED_COPY").is_none_or(|v| v.is_empty() || v == "0"),
            copybuf: Vec::new(),
        }
    }
}

fn shrank(at: u64, end: u64) -> SendErr {
    SendErr::Input(format!(
        "file shrank while being read (read ended at byte {at}, expected {end})"
    ))
}

/// Whether to pace writes (`WF_FEED_PACE=0` turns it off, for measurements).
fn pacing_wanted() -> bool {
    std::env::var_os("WF_FEED_PACE").is_none_or(|v| v != "0")
}

impl Proc {
    /// The pipe is full: nap instead of sleeping in the pipe's wait queue.
    ///
    /// A writer blocked on a full pipe is woken by every read the worker makes
    /// (4 KiB for awk), and each wake-up costs the worker a few microseconds
    /// in the kernel: about 10% of an awk run. Napping until the pipe is about
    /// half drained (the nap adapts to the worker's pace) leaves the pipe never
    /// quite full, so the worker's reads wake nobody.
    fn wait_room(&self) -> Result<(), SendErr> {
        let Some((nap, cap)) = &self.pace else {
            return Ok(());
        };
        let t = nap.get();
        std::thread::sleep(std::time::Duration::from_nanos(t));
        self.check()?;
        let w = self.stdin.as_ref().expect("stdin open").as_raw_fd();
        let mut queued: libc::c_int = 0;
        if unsafe { libc::ioctl(w, libc::FIONREAD, &mut queued) } == 0 {
            let drained = cap.saturating_sub(queued.max(0) as usize);
            let next = if drained < cap / 4 {
                t + t / 2
            } else if drained > cap * 3 / 4 {
                t / 2
            } else {
                t
            };
            nap.set(next.clamp(20_000, 20_000_000));
        }
        Ok(())
    }

    pub(crate) fn exited(&self) -> bool {
        self.st.exited.load(Ordering::SeqCst)
    }

    fn check(&self) -> Result<(), SendErr> {
        if self.ctl.stopped() {
            Err(SendErr::Stopped)
        } else if self.exited() {
            Err(SendErr::Closed)
        } else {
            Ok(())
        }
    }

    fn write_all(&self, mut data: &[u8]) -> Result<(), SendErr> {
        let mut w = self.stdin.as_ref().expect("stdin open");
        while !data.is_empty() {
            self.check()?;
            let n = data.len().min(1 << 20);
            match w.write(&data[..n]) {
                Ok(0) => return Err(SendErr::Closed),
                Ok(k) => {
                    self.sent.set(self.sent.get() + k as u64);
                    data = &data[k..];
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_room()?,
                Err(_) => return Err(SendErr::Closed),
            }
        }
        Ok(())
    }

    /// Send a block; with `terminate`, a final record without a separator gets
    /// one (so records of different inputs never join in a long-lived worker).
    pub(crate) fn send(
        &self,
        b: &Block,
        terminate: bool,
        sep: u8,
        mv: &mut Mover,
    ) -> Result<(), SendErr> {
        match &b.data {
            Data::Bytes(v) => self.write_all(&v[..b.len as usize])?,
            Data::Range { file, start, end } => {
                if let Err(e) = self.send_range(file, *start, *end, mv) {
                    if let SendErr::Input(_) = e {
                        // Do not let the cut record join the next block's first.
                        let _ = self.write_sep(sep);
                    }
                    return Err(e);
                }
            }
        }
        if terminate && b.unterminated {
            self.write_sep(sep)?;
        }
        Ok(())
    }

    /// A separator wf adds after a record (not input).
    fn write_sep(&self, sep: u8) -> Result<(), SendErr> {
        self.write_all(&[sep])?;
        self.extra.set(self.extra.get() + 1);
        Ok(())
    }

    /// Input bytes of the current stream position: bytes written into the pipe
    /// so far minus the separators wf added.
    pub(crate) fn input_sent(&self) -> u64 {
        self.sent.get() - self.extra.get()
    }

    /// Bytes written into the pipe so far (input and added separators).
    pub(crate) fn pipe_sent(&self) -> u64 {
        self.sent.get()
    }

    /// Move `[start, end)` of a file into the pipe: with `splice` while it
    /// works for this file and pipe, else with `pread` + `write`.
    fn send_range(&self, file: &File, start: u64, end: u64, mv: &mut Mover) -> Result<(), SendErr> {
        let mut off = start as libc::loff_t;
        while (off as u64) < end {
            self.check()?;
            if mv.splice {
                // Not supported for this file or pipe: copy instead.
                mv.splice = self.splice_some(file, &mut off, end)?;
                continue;
            }
            off += self.copy_some(file, off as u64, end, &mut mv.copybuf)? as libc::loff_t;
        }
        Ok(())
    }

    /// One `splice` from `file` at `*off` (moved on) into the pipe. False if
    /// splice cannot move this file's data into this pipe.
    fn splice_some(&self, file: &File, off: &mut libc::loff_t, end: u64) -> Result<bool, SendErr> {
        let w = self.stdin.as_ref().expect("stdin open").as_raw_fd();
        let flags = if self.pace.is_some() {
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK
        } else {
            libc::SPLICE_F_MOVE
        };
        let len = (end - *off as u64).min(1 << 30) as usize;
        let n = unsafe { libc::splice(file.as_raw_fd(), off, w, std::ptr::null_mut(), len, flags) };
        if n > 0 {
            self.sent.set(self.sent.get() + n as u64);
            return Ok(true);
        }
        if n == 0 {
            return Err(shrank(*off as u64, end));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error().unwrap_or(0) {
            libc::EINTR => Ok(true),
            libc::EAGAIN => self.wait_room().map(|_| true),
            libc::EPIPE => Err(SendErr::Closed),
            libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::EXDEV => Ok(false),
            _ => Err(SendErr::Input(crate::scan::io_message(&e))),
        }
    }

    /// Copy the next piece of `[off, end)` of a file into the pipe with `pread`
    /// + `write`; returns the bytes copied.
    fn copy_some(
        &self,
        file: &File,
        off: u64,
        end: u64,
        buf: &mut Vec<u8>,
    ) -> Result<usize, SendErr> {
        if buf.is_empty() {
            buf.resize(128 << 10, 0);
        }
        let want = (end - off).min(buf.len() as u64) as usize;
        let got = loop {
            match file.read_at(&mut buf[..want], off) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(SendErr::Input(crate::scan::io_message(&e))),
            }
        };
        if got == 0 {
            return Err(shrank(off, end));
        }
        self.write_all(&buf[..got])?;
        Ok(got)
    }

    /// Close the worker's stdin, wait for it to exit and for its output to end.
    pub(crate) fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let (status, unread) = {
            let mut g = self.st.done.lock().unwrap();
            while g.is_none() {
                g = self.st.cv.wait(g).unwrap();
            }
            g.take().unwrap()
        };
        let output = self
            .out
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if let Some(h) = self.waiter.take() {
            let _ = h.join();
        }
        self.ctl.unregister(self.pid);
        Finished {
            status,
            unread,
            output,
        }
    }
}

/// "exited with status 3", "was killed by signal 9 (SIGKILL)".
pub(crate) fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "ended (exit status unknown)".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(sig)) => format!("was killed by signal {sig} ({})", signal_name(sig)),
            _ => format!("ended ({s})"),
        },
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => "signal",
    }
}

/// A process whose stdin wf writes with ordinary blocking writes and whose
/// stdout is wf's (the `--combine` command).
pub(crate) struct Plain {
    pub pid: i32,
    st: Arc<(Mutex<Option<Option<ExitStatus>>>, Condvar)>,
    waiter: Option<JoinHandle<()>>,
}

impl Plain {
    pub(crate) fn spawn_sh(script: &str, ctl: &Arc<Ctl>) -> io::Result<(Plain, File)> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()?;
        let pid = child.id() as i32;
        ctl.register(pid);
        let stdin = File::from(OwnedFd::from(child.stdin.take().expect("stdin is piped")));
        let st: Arc<(Mutex<Option<Option<ExitStatus>>>, Condvar)> = Arc::default();
        let st2 = st.clone();
        let waiter = std::thread::spawn(move || {
            let s = child.wait().ok();
            *st2.0.lock().unwrap() = Some(s);
            st2.1.notify_all();
            signals::wake();
        });
        Ok((
            Plain {
                pid,
                st,
                waiter: Some(waiter),
            },
            stdin,
        ))
    }

    pub(crate) fn done(&self) -> bool {
        self.st.0.lock().unwrap().is_some()
    }

    pub(crate) fn wait(mut self, ctl: &Ctl) -> Option<ExitStatus> {
        let s = {
            let mut g = self.st.0.lock().unwrap();
            while g.is_none() {
                g = self.st.1.wait(g).unwrap();
            }
            g.take().unwrap()
        };
        if let Some(h) = self.waiter.take() {
            let _ = h.join();
        }
        ctl.unregister(self.pid);
        s
    }
}
