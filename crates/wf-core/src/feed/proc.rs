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
//!
//! File data is copied (`pread` + `write`) in whole records: a record is
//! written only once its separator has been read. Moving it with `splice(2)`
//! (as wf did) hands the worker's pipe references to page-cache pages, not
//! copies: when the file is truncated meanwhile (`logrotate`'s copytruncate),
//! the kernel zeroes the part of a page past the new end in place, and the
//! worker reads NUL bytes that were never in the file. `WF_FEED_SPLICE=1`
//! still splices, for measurements only.
//!
//! Workers die with wf: each is started with `PR_SET_PDEATHSIG` = SIGKILL
//! (set between fork and exec), so a SIGKILL of wf leaves none running.
//! The signal comes when the *thread* that started the worker ends, so
//! workers are started by threads that outlive them (the thread running
//! [`super::run`], or a per-block feeding thread, which waits for its worker).

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

use super::keep::Keep;
use super::limit::long_inside;
use super::output::{forward, Kept, Sink};
use super::plan::{Block, Data, LostWhy};
use super::{signals, Ctl};

/// Where a worker's stdout goes.
pub(crate) enum Out {
    /// Forwarded in whole lines as it comes.
    Sink(Arc<Sink>),
    /// Kept ([`Kept`]) and returned by [`Proc::finish`] (`--keep-order`).
    Capture,
}

pub(crate) enum SendErr {
    /// The worker exited (or closed its input) before taking the whole block.
    Closed,
    /// Feeding stopped (signal, output gone).
    Stopped,
    /// The input could not be read (file shrank, I/O error) from byte `at`
    /// on: the block's records before `at` were sent whole, none after.
    Input { at: u64, why: LostWhy },
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
    /// The last byte written into the pipe.
    last: std::cell::Cell<Option<u8>>,
    out: Option<JoinHandle<Kept>>,
    waiter: Option<JoinHandle<()>>,
    ctl: Arc<Ctl>,
}

/// What a finished worker left behind.
pub(crate) struct Finished {
    pub status: Option<ExitStatus>,
    pub unread: u64,
    pub output: Kept,
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
    die_with_wf(&mut cmd);
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
        last: Default::default(),
        out: Some(out),
        waiter: Some(waiter),
        ctl: ctl.clone(),
    })
}

/// Have the kernel SIGKILL the process when wf (the thread that starts it) is
/// gone, even if wf was killed with SIGKILL itself.
fn die_with_wf(cmd: &mut Command) {
    let wf = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // wf died before the prctl: do not start orphaned.
            if libc::getppid() != wf {
                return Err(io::Error::other("wf has exited"));
            }
            Ok(())
        });
    }
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
fn take_output(stdout: ChildStdout, out: Out) -> JoinHandle<Kept> {
    match out {
        Out::Sink(sink) => std::thread::spawn(move || {
            forward(stdout, &sink);
            Kept::default()
        }),
        Out::Capture => std::thread::spawn(move || Kept::read_all(stdout)),
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

/// How a feeding thread moves file data into pipes: `pread` + `write` in whole
/// records through `copybuf`, or (`WF_FEED_SPLICE=1`, for measurements only:
/// see the module comment) with `splice(2)` while it works for a file and pipe.
pub(crate) struct Mover {
    splice: bool,
    copybuf: Vec<u8>,
    /// The record separator and `--max-record`.
    sep: u8,
    max_record: u64,
    /// Records longer than `max_record` skipped since last taken: `[from, to)`.
    pub(crate) too_long: Vec<(u64, u64)>,
    /// `--since/--until`: only the records of the window are written.
    pub(crate) keep: Option<Keep>,
}

/// Bytes read from a file at a time.
const PIECE: usize = 128 << 10;

impl Mover {
    pub(crate) fn new(sep: u8, max_record: u64) -> Self {
        Mover {
            splice: std::env::var_os("WF_FEED_SPLICE").is_some_and(|v| !v.is_empty() && v != "0"),
            copybuf: Vec::new(),
            sep,
            max_record,
            too_long: Vec::new(),
            keep: None,
        }
    }
}

fn shrank(at: u64) -> SendErr {
    SendErr::Input {
        at,
        why: LostWhy::Shrank,
    }
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
                    self.last.set(Some(data[k - 1]));
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
    pub(crate) fn send(&self, b: &Block, terminate: bool, mv: &mut Mover) -> Result<(), SendErr> {
        let base = self.input_sent();
        if let Some(k) = &mut mv.keep {
            k.runs.clear();
            k.base = base;
        }
        match &b.data {
            Data::Bytes(v) => {
                self.write_records(&v[..b.len as usize], b.offset, mv.sep, &mut mv.keep)?
            }
            Data::Range { file, start, end } => self.send_range(file, *start, *end, mv)?,
        }
        // (Not after a final record too long, which was not sent.)
        if terminate && b.unterminated && self.last.get().is_some_and(|c| c != mv.sep) {
            self.write_sep(mv.sep)?;
        }
        Ok(())
    }

    /// Write `data` (whole records, from input offset `off`): all of it, or
    /// under a time window only the records in it, noting where each run of
    /// them came from (see `keep.rs`).
    fn write_records(
        &self,
        data: &[u8],
        off: u64,
        sep: u8,
        keep: &mut Option<Keep>,
    ) -> Result<(), SendErr> {
        let Some(k) = keep else {
            return self.write_all(data);
        };
        for (s, e) in k.kept_runs(data, sep) {
            k.mark(self.input_sent() - k.base, off + s as u64);
            self.write_all(&data[s..e])?;
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

    /// Move `[start, end)` of a file (whole records) into the pipe: with
    /// `pread` + `write` in whole records ([`Proc::copy_range`]), or with
    /// `splice` when asked for and it works for this file and pipe.
    fn send_range(&self, file: &File, start: u64, end: u64, mv: &mut Mover) -> Result<(), SendErr> {
        let mut off = start as libc::loff_t;
        // (A time window looks at every record: no splicing.)
        while mv.splice && mv.keep.is_none() && (off as u64) < end {
            self.check()?;
            // Not supported for this file or pipe: copy the rest instead.
            mv.splice = self.splice_some(file, &mut off, end)?;
            // Not looked at; what ends a block is a separator unless it is
            // the unterminated end of the file.
            self.last.set(Some(!mv.sep));
        }
        if (off as u64) < end {
            self.copy_range(file, off as u64, end, mv)?;
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
            return Err(shrank(*off as u64));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error().unwrap_or(0) {
            libc::EINTR => Ok(true),
            libc::EAGAIN => self.wait_room().map(|_| true),
            libc::EPIPE => Err(SendErr::Closed),
            libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::EXDEV => Ok(false),
            _ => Err(SendErr::Input {
                at: *off as u64,
                why: LostWhy::Read(crate::scan::io_message(&e)),
            }),
        }
    }

    /// Copy `[start, end)` of a file (whole records) into the pipe with
    /// `pread` + `write`, each record only once its separator has been read,
    /// so a file that shrinks meanwhile never gives the worker a cut record
    /// (the error says where the records not sent begin). A record longer
    /// than `--max-record` is skipped and noted in `mv.too_long`; memory stays
    /// under `--max-record` plus one piece. Linear in the record length: each
    /// byte is searched once.
    fn copy_range(&self, file: &File, start: u64, end: u64, mv: &mut Mover) -> Result<(), SendErr> {
        let mut c = Copy {
            base: start,
            held: 0,
            skip: None,
        };
        while c.base + (c.held as u64) < end {
            self.check()?;
            let off = c.base + c.held as u64;
            let got = c.read(file, off, end, &mut mv.copybuf)?;
            self.pass_records(&mut c, got, mv)?;
        }
        // The final record of a file without a separator.
        match c.skip {
            Some(from) => mv.too_long.push((from, end)),
            None if c.held as u64 > mv.max_record => mv.too_long.push((c.base, end)),
            None => self.write_records(&mv.copybuf[..c.held], c.base, mv.sep, &mut mv.keep)?,
        }
        if mv.copybuf.len() > 4 * PIECE {
            mv.copybuf = Vec::new();
        }
        Ok(())
    }

    /// After `got` new bytes at the end of `c`'s held bytes: write the records
    /// they end and keep the rest, or skip a record past `--max-record`.
    fn pass_records(&self, c: &mut Copy, got: usize, mv: &mut Mover) -> Result<(), SendErr> {
        let (sep, max) = (mv.sep, mv.max_record);
        let buf = &mut mv.copybuf;
        // buf[..new] holds no separator; buf[new..c.held] is not searched yet.
        let mut new = c.held;
        c.held += got;
        loop {
            if let Some(from) = c.skip {
                // Skipping a record too long: it ends at the first separator.
                let Some(p) = memchr::memchr(sep, &buf[..c.held]) else {
                    c.base += c.held as u64;
                    c.held = 0;
                    return Ok(());
                };
                mv.too_long.push((from, c.base + p as u64 + 1));
                c.skip = None;
                c.drop_front(buf, p + 1);
                new = 0;
            }
            let Some(first) = memchr::memchr(sep, &buf[new..c.held]).map(|p| new + p) else {
                if c.held as u64 > max {
                    c.skip = Some(c.base);
                    c.base += c.held as u64;
                    c.held = 0;
                }
                return Ok(());
            };
            let last = first + memchr::memrchr(sep, &buf[first..c.held]).unwrap_or(0);
            // The first record too long, or (a --max-record under a piece) a later one.
            let bad = if first as u64 > max {
                Some((0, first))
            } else if max < PIECE as u64 {
                long_inside(&buf[first + 1..=last], sep, max)
                    .map(|(s, e)| (first + 1 + s, first + 1 + e))
            } else {
                None
            };
            let Some((s, e)) = bad else {
                self.write_records(&buf[..=last], c.base, sep, &mut mv.keep)?;
                c.drop_front(buf, last + 1);
                return Ok(());
            };
            self.write_records(&buf[..s], c.base, sep, &mut mv.keep)?;
            mv.too_long.push((c.base + s as u64, c.base + e as u64 + 1));
            c.drop_front(buf, e + 1);
            new = 0;
        }
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

/// The state of [`Proc::copy_range`]: `buf[..held]` holds bytes from file
/// offset `base` on that end no record yet; `skip`: skipping a record too long
/// that begins at this offset.
struct Copy {
    base: u64,
    held: usize,
    skip: Option<u64>,
}

impl Copy {
    /// Read the next piece (up to `end`) after the held bytes; returns its
    /// length. A file that ends early is an error at the first byte not sent.
    fn read(&self, file: &File, off: u64, end: u64, buf: &mut Vec<u8>) -> Result<usize, SendErr> {
        if buf.len() < self.held + PIECE {
            buf.resize(self.held + PIECE, 0);
        }
        let want = (end - off).min(PIECE as u64) as usize;
        let at = self.skip.unwrap_or(self.base);
        loop {
            match file.read_at(&mut buf[self.held..self.held + want], off) {
                Ok(0) => return Err(shrank(at)),
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let why = LostWhy::Read(crate::scan::io_message(&e));
                    return Err(SendErr::Input { at, why });
                }
            }
        }
    }

    /// The first `n` held bytes are done with (sent or skipped).
    fn drop_front(&mut self, buf: &mut [u8], n: usize) {
        buf.copy_within(n..self.held, 0);
        self.held -= n;
        self.base += n as u64;
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
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .process_group(0);
        die_with_wf(&mut cmd);
        let mut child = cmd.spawn()?;
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
