//! `wf feed`: record-aligned blocks to N worker processes of any command.
//!
//! ```text
//! wf feed [OPTIONS] [INPUTS...] -- COMMAND [ARGS...]
//! ```
//!
//! Shape, and why:
//! - N workers are started once each (`WF_WORKER` = 0..N-1, `WF_WORKERS` = N in
//!   their environment), stdin a pipe from wf, stdout a pipe to wf, stderr wf's.
//! - One planner thread ([`plan`]) cuts the inputs, in the order given, into
//!   blocks of whole records of about `--block` bytes and offers them on a
//!   bounded channel. One feeding thread per worker takes the next block when its
//!   worker has swallowed the previous one, so whichever worker is ready gets the
//!   next block and a slow worker never stalls the rest.
//! - File data moves with `splice(2)` from the page cache into the worker's pipe
//!   (no copy through wf; `pread` + `write` where splice is not supported, or
//!   with `WF_FEED_COPY=1`); stream data (stdin, FIFOs) is read once by the
//!   planner and written from its buffers.
//! - Each worker's output is forwarded in whole units ([`output`]: lines, or
//!   units ending with `--ors`, which defaults to the `--rs` byte) to wf's
//!   stdout, or to one `--combine` process (`sh -c CMD`) whose stdout is wf's.
//!   One byte only: cutting at either of two (as a first version did) let a
//!   `;`-separated unit and a line from two workers mix inside each other.
//!   `--keep-order` output is each block's output concatenated, byte for byte.
//! - In a long-lived worker, an input's last record without a separator gets
//!   one, so records of different inputs never join; a per-block worker gets
//!   the block's bytes exactly (so `--keep-order -- cat` reproduces the input).
//! - `--per-block`: a fresh process per block (at most N at a time); with
//!   `--keep-order` each block's output is held and printed in input order.
//! - Failures: a worker that exits non-zero, dies on a signal, or does not read
//!   all it was given is reported on stderr with the input ranges it was given;
//!   wf stops feeding it, the others go on, and the report lists the failure.
//!   Records are never sent twice; a record is never dropped silently.
//! - SIGINT/SIGTERM/SIGHUP: every worker's process group is terminated (killed
//!   after 2 s) and wf exits with 128 + the signal number.
//!
//! Measurement knobs (environment): `WF_FEED_COPY=1` moves file data with
//! `pread` + `write` instead of `splice`; `WF_FEED_PIPE=SIZE` sets the workers'
//! stdin pipe size (default 1M, the best of 64K..4M measured here);
//! `WF_FEED_PACE=0` makes feeding threads block on full pipes instead of
//! napping (pacing saves a slow worker ~10% of kernel time: see `proc.rs`).
//!
//! Wiring (what `main.rs` does): parse the options into [`FeedOptions`], collect
//! inputs with [`crate::scan::InputSpec`], print the collection errors, call
//! [`run`]; print `report.input_errors` (run does not print them; it prints the
//! failures itself); exit 2 if either list is non-empty, or on `Err` (a setup
//! error such as a command that does not exist, before any input is read).

mod output;
mod plan;
mod proc;
mod signals;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel as chan;

use crate::scan::{Input, InputError};
use output::{Reorder, Sink};
use plan::Block;
use proc::{describe, Out, Proc, SendErr};

/// How to feed.
#[derive(Debug, Clone)]
pub struct FeedOptions {
    /// Worker processes (or, with `per_block`, processes at a time).
    pub workers: usize,
    /// Nominal block size in bytes; blocks end after a record (records longer
    /// than this go whole).
    pub block: u64,
    /// Record separator.
    pub sep: u8,
    /// Output separator: worker output is passed on in units ending with this
    /// byte (`None`: the record separator).
    pub out_sep: Option<u8>,
    /// The worker command and its arguments (run directly, no shell).
    pub command: Vec<OsString>,
    /// A command line run with `sh -c` that receives all workers' output.
    pub combine: Option<String>,
    /// One fresh process per block.
    pub per_block: bool,
    /// Print each block's output in input order (implies `per_block`).
    pub keep_order: bool,
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions {
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            block: DEFAULT_BLOCK,
            sep: b'\n',
            out_sep: None,
            command: Vec::new(),
            combine: None,
            per_block: false,
            keep_order: false,
        }
    }
}

/// Default block size: 1 MiB.
pub const DEFAULT_BLOCK: u64 = 1 << 20;

/// What a feed run did.
#[derive(Debug, Default)]
pub struct FeedReport {
    /// Bytes handed to workers completely.
    pub bytes: u64,
    /// Blocks handed to workers completely.
    pub blocks: u64,
    /// Worker, combine and output failures, as human messages (already printed
    /// to stderr by [`run`]).
    pub failures: Vec<String>,
    /// Inputs that could not be read, completely or in part (not printed by
    /// [`run`]).
    pub input_errors: Vec<InputError>,
}

/// Parse `--rs`: one byte, as a character (`,`) or an escape (`\0`, `\n`, `\t`,
/// `\r`, `\\`, `\xHH`, `\NNN` octal; also `\a \b \e \f \v`).
pub fn parse_rs(s: &str) -> Result<u8, String> {
    let err = || {
        format!(
            "invalid record separator '{s}': give one byte, as a character or an escape \
             such as '\\0', '\\n', '\\t' or '\\x1e'"
        )
    };
    let b = s.as_bytes();
    if b.len() == 1 {
        return Ok(b[0]);
    }
    if b.len() < 2 || b[0] != b'\\' {
        return Err(err());
    }
    let rest = &s[1..];
    let v = match rest {
        "n" => b'\n',
        "t" => b'\t',
        "r" => b'\r',
        "a" => 0x07,
        "b" => 0x08,
        "e" => 0x1b,
        "f" => 0x0c,
        "v" => 0x0b,
        "\\" => b'\\',
        _ if (rest.starts_with('x') || rest.starts_with('X')) && (2..=3).contains(&rest.len()) => {
            u8::from_str_radix(&rest[1..], 16).map_err(|_| err())?
        }
        _ if (1..=3).contains(&rest.len()) && rest.bytes().all(|c| (b'0'..=b'7').contains(&c)) => {
            let v = u32::from_str_radix(rest, 8).map_err(|_| err())?;
            u8::try_from(v).map_err(|_| err())?
        }
        _ => return Err(err()),
    };
    Ok(v)
}

// Why feeding stopped early.
const RUNNING: u8 = 0;
/// wf's stdout was closed by its reader: stop quietly.
pub(crate) const STOP_QUIET: u8 = 1;
/// A signal: terminate everything, exit 128 + signal.
const STOP_SIGNAL: u8 = 2;
/// The output failed (combine gone, disk full): reported.
const STOP_FAILED: u8 = 3;

/// State shared by all threads of a run.
#[derive(Default)]
pub(crate) struct Ctl {
    stop: AtomicU8,
    /// All feeding threads are gone: the planner stops.
    feeders_gone: AtomicBool,
    /// Process groups to terminate on a stop.
    pids: Mutex<Vec<i32>>,
    /// Output failure message.
    failure: Mutex<Option<String>>,
}

impl Ctl {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) != RUNNING
    }

    fn reason(&self) -> u8 {
        self.stop.load(Ordering::SeqCst)
    }

    pub(crate) fn planner_stop(&self) -> bool {
        self.stopped() || self.feeders_gone.load(Ordering::SeqCst)
    }

    /// Stop feeding and terminate every process.
    pub(crate) fn abort(&self, why: u8) {
        if self
            .stop
            .compare_exchange(RUNNING, why, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.kill_all(libc::SIGTERM);
            signals::wake();
        }
    }

    pub(crate) fn fail(&self, msg: String) {
        self.failure.lock().unwrap().get_or_insert(msg);
        self.abort(STOP_FAILED);
    }

    fn kill_all(&self, sig: i32) {
        for &pid in self.pids.lock().unwrap().iter() {
            unsafe {
                libc::kill(-pid, sig);
            }
        }
    }

    pub(crate) fn register(&self, pid: i32) {
        let mut g = self.pids.lock().unwrap();
        g.push(pid);
        if self.stopped() {
            unsafe {
                libc::kill(-pid, libc::SIGTERM);
            }
        }
    }

    pub(crate) fn unregister(&self, pid: i32) {
        self.pids.lock().unwrap().retain(|&p| p != pid);
    }
}

/// Is `cmd` something `exec` can run? (Checked before anything starts, so a
/// typo is a clear error before any input is read.)
fn check_command(cmd: &OsStr) -> io::Result<()> {
    let name = cmd.to_string_lossy();
    let runnable = |p: &Path| -> io::Result<()> {
        let md = std::fs::metadata(p)?;
        if md.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        let c = std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::other("invalid name"))?;
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    if cmd.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no command given (wf feed [OPTIONS] [INPUTS...] -- COMMAND [ARGS...])",
        ));
    }
    if cmd.as_bytes().contains(&b'/') {
        return runnable(Path::new(cmd)).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot run '{name}': {}", crate::scan::io_message(&e)),
            )
        });
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".").to_path_buf()
        } else {
            dir
        };
        if runnable(&dir.join(cmd)).is_ok() {
            return Ok(());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("cannot run '{name}': command not found"),
    ))
}

/// Pipe size for workers' stdin (`WF_FEED_PIPE` overrides, for measurements).
fn pipe_size() -> usize {
    std::env::var("WF_FEED_PIPE")
        .ok()
        .and_then(|s| crate::scan::parse_size(&s).ok())
        .map(|v| v as usize)
        .unwrap_or(1 << 20)
}

/// What one feeding thread did.
#[derive(Default)]
struct FeederOut {
    bytes: u64,
    blocks: u64,
    failures: Vec<String>,
    input_errors: Vec<(usize, String)>,
}

/// Everything a feeding thread needs.
struct Feeder {
    slot: usize,
    workers: usize,
    argv: Arc<Vec<OsString>>,
    names: Arc<Vec<String>>,
    rx: chan::Receiver<Block>,
    pool: chan::Sender<Vec<u8>>,
    ctl: Arc<Ctl>,
    sink: Arc<Sink>,
    reorder: Option<Arc<Reorder>>,
    sep: u8,
    pipe_size: usize,
}

fn recycle(pool: &chan::Sender<Vec<u8>>, b: Block) {
    if let plan::Data::Bytes(v) = b.data {
        let _ = pool.send(v);
    }
}

/// "a.log bytes 0..1048576, 2097152..3145728; b.log bytes 0..100", merging
/// adjacent ranges; at most the last 10 are listed (data at risk is the data
/// given last), after a count of the earlier ones.
fn ranges_text(names: &[String], given: &[(usize, u64, u64)]) -> String {
    let mut merged: Vec<(usize, u64, u64)> = Vec::new();
    let mut sorted = given.to_vec();
    sorted.sort();
    for (i, a, b) in sorted {
        match merged.last_mut() {
            Some(last) if last.0 == i && last.2 == a => last.2 = b,
            _ => merged.push((i, a, b)),
        }
    }
    let total: u64 = merged.iter().map(|r| r.2 - r.1).sum();
    let mut s = String::new();
    let skip = merged.len().saturating_sub(10);
    if skip > 0 {
        s.push_str(&format!(
            "{} ranges, {total} bytes in all; {skip} earlier ranges, then ",
            merged.len()
        ));
    }
    let mut prev: Option<usize> = None;
    for &(i, a, b) in merged.iter().skip(skip) {
        if prev == Some(i) {
            s.push_str(&format!(", {a}..{b}"));
        } else {
            if prev.is_some() {
                s.push_str("; ");
            }
            s.push_str(&format!("{} bytes {a}..{b}", names[i]));
        }
        prev = Some(i);
    }
    s
}

/// Where a given block went in a worker's pipe: the pipe position where it
/// started and how many of its input bytes were written (fewer than its length
/// when the worker stopped taking input during the block).
#[derive(Clone, Copy)]
struct Placed {
    at: u64,
    written: u64,
}

/// The input ranges a worker never read: of the `total` bytes written into its
/// pipe it left `unread` (wf drains and counts them after it exits), so it read
/// the first `total - unread`; everything of `given` past that, including the
/// parts of blocks never written at all, is returned, in the order given.
fn never_read(
    given: &[(usize, u64, u64)],
    placed: &[Placed],
    total: u64,
    unread: u64,
) -> Vec<(usize, u64, u64)> {
    let read = total.saturating_sub(unread);
    let mut out = Vec::new();
    for (&(i, a, b), p) in given.iter().zip(placed) {
        let consumed = p.written.min(read.saturating_sub(p.at));
        if a + consumed < b {
            out.push((i, a + consumed, b));
        }
    }
    out
}

/// The end of a failure report: why the worker failed, what it was given and
/// what of that it never read.
fn failure_detail(
    names: &[String],
    given: &[(usize, u64, u64)],
    missed: &[(usize, u64, u64)],
    closed: bool,
    early: bool,
) -> String {
    let missed_bytes: u64 = missed.iter().map(|r| r.2 - r.1).sum();
    let mut msg = String::new();
    if given.is_empty() {
        msg.push_str(" before it was given any input");
        return msg;
    }
    if missed_bytes > 0 {
        msg.push_str(&format!(
            " without reading all of its input ({missed_bytes} bytes never read)"
        ));
    } else if closed || early {
        msg.push_str(" before the end of its input");
    }
    msg.push_str(&format!(
        "; input it was given, which may be incomplete: {}",
        ranges_text(names, given)
    ));
    if missed_bytes > 0 {
        msg.push_str(&format!("; never read: {}", ranges_text(names, missed)));
    }
    msg
}

fn report_failure(out: &mut FeederOut, msg: String) {
    eprintln!("{msg}");
    out.failures.push(msg);
}

/// What a feeding thread waits for next.
enum Next {
    Block(Block),
    /// The plan is done, or feeding stopped.
    End,
    /// The long-lived worker exited while waiting.
    WorkerExited,
}

impl Feeder {
    /// Wait for the next block, but notice a stop or the worker's death meanwhile
    /// (a slow stream can keep the planner busy).
    fn next_block(&self, worker: Option<&Proc>) -> Next {
        loop {
            if self.ctl.stopped() {
                return Next::End;
            }
            if worker.is_some_and(|p| p.exited()) {
                return Next::WorkerExited;
            }
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(b) => return Next::Block(b),
                Err(chan::RecvTimeoutError::Timeout) => {}
                Err(chan::RecvTimeoutError::Disconnected) => return Next::End,
            }
        }
    }

    fn env(&self) -> [(&'static str, String); 2] {
        [
            ("WF_WORKER", self.slot.to_string()),
            ("WF_WORKERS", self.workers.to_string()),
        ]
    }

    /// Long-lived worker: feed blocks until the plan ends or the worker fails.
    fn run_long(self, p: Proc) -> FeederOut {
        let mut out = FeederOut::default();
        let mut given: Vec<(usize, u64, u64)> = Vec::new();
        let mut placed: Vec<Placed> = Vec::new();
        let mut closed = false;
        // The worker exited while wf still held its stdin open: it stopped before
        // the end of its input, whatever its status.
        let mut early = false;
        let mut splice = proc::splice_wanted();
        let mut copybuf = Vec::new();
        loop {
            let b = match self.next_block(Some(&p)) {
                Next::Block(b) => b,
                Next::End => break,
                Next::WorkerExited => {
                    early = true;
                    break;
                }
            };
            given.push((b.input, b.offset, b.offset + b.len));
            let (at, in0) = (p.pipe_sent(), p.input_sent());
            let sent = p.send(&b, true, self.sep, &mut splice, &mut copybuf);
            placed.push(Placed {
                at,
                written: p.input_sent() - in0,
            });
            match sent {
                Ok(()) => {
                    out.bytes += b.len;
                    out.blocks += 1;
                }
                Err(SendErr::Closed) => {
                    closed = true;
                    recycle(&self.pool, b);
                    break;
                }
                Err(SendErr::Stopped) => {
                    recycle(&self.pool, b);
                    break;
                }
                Err(SendErr::Input(m)) => out.input_errors.push((b.input, m)),
            }
            recycle(&self.pool, b);
        }
        drop(self.rx);
        let pid = p.pid;
        let total = p.pipe_sent();
        let fin = p.finish();
        if self.ctl.stopped() {
            return out;
        }
        let ok = fin.status.is_some_and(|s| s.success());
        if ok && !closed && !early && fin.unread == 0 {
            return out;
        }
        let missed = never_read(&given, &placed, total, fin.unread);
        let msg = format!(
            "wf: worker {} (pid {pid}) {}{}",
            self.slot,
            describe(fin.status),
            failure_detail(&self.names, &given, &missed, closed, early)
        );
        report_failure(&mut out, msg);
        out
    }

    /// `--per-block`: a fresh process for each block this slot takes.
    fn run_per_block(self) -> FeederOut {
        let mut out = FeederOut::default();
        let mut splice = proc::splice_wanted();
        let mut copybuf = Vec::new();
        loop {
            let Next::Block(b) = self.next_block(None) else {
                break;
            };
            if let Some(r) = &self.reorder {
                if !r.wait_turn(b.seq, &self.ctl) {
                    break;
                }
            }
            let given = [(b.input, b.offset, b.offset + b.len)];
            let mode = match &self.reorder {
                Some(_) => Out::Capture,
                None => Out::Sink(self.sink.clone()),
            };
            let p = match proc::spawn(&self.argv, &self.env(), mode, &self.ctl, self.pipe_size) {
                Ok(p) => p,
                Err(e) => {
                    let msg = format!(
                        "wf: cannot start '{}' for block {} ({}): {}",
                        self.argv[0].to_string_lossy(),
                        b.seq,
                        ranges_text(&self.names, &given),
                        crate::scan::io_message(&e)
                    );
                    report_failure(&mut out, msg);
                    if let Some(r) = &self.reorder {
                        r.put(b.seq, Vec::new(), &self.sink);
                    }
                    recycle(&self.pool, b);
                    continue;
                }
            };
            let pid = p.pid;
            let mut closed = false;
            let sent = p.send(&b, false, self.sep, &mut splice, &mut copybuf);
            let placed = Placed {
                at: 0,
                written: p.input_sent(),
            };
            let total = p.pipe_sent();
            match sent {
                Ok(()) => {
                    out.bytes += b.len;
                    out.blocks += 1;
                }
                Err(SendErr::Closed) => closed = true,
                Err(SendErr::Stopped) => {}
                Err(SendErr::Input(m)) => out.input_errors.push((b.input, m)),
            }
            let fin = p.finish();
            if self.ctl.stopped() {
                recycle(&self.pool, b);
                break;
            }
            let ok = fin.status.is_some_and(|s| s.success());
            if !ok || closed || fin.unread > 0 {
                let missed = never_read(&given, &[placed], total, fin.unread);
                let msg = format!(
                    "wf: worker for block {} (slot {}, pid {pid}) {}{}",
                    b.seq,
                    self.slot,
                    describe(fin.status),
                    failure_detail(&self.names, &given, &missed, closed, false)
                );
                report_failure(&mut out, msg);
            }
            if let Some(r) = &self.reorder {
                r.put(b.seq, fin.output, &self.sink);
            }
            recycle(&self.pool, b);
        }
        out
    }
}

/// Feed `inputs` to workers running `opts.command`. Returns `Err` only for setup
/// errors (no command, a command that cannot be run), before any input is read.
///
/// On SIGINT, SIGTERM or SIGHUP during the run, every worker (and the combine
/// process) is terminated and the process exits with status 128 + the signal.
pub fn run(inputs: Vec<Input>, opts: &FeedOptions) -> io::Result<FeedReport> {
    let argv0 = opts
        .command
        .first()
        .map(|s| s.as_os_str())
        .unwrap_or_default();
    check_command(argv0)?;
    let n = opts.workers.max(1);
    let per_block = opts.per_block || opts.keep_order;
    let pipe_size = pipe_size();
    let ctl = Arc::new(Ctl::default());
    let guard = signals::install()?;

    // Where output goes.
    let mut combine = None;
    let w = match &opts.combine {
        Some(script) => {
            let (c, w) = proc::Plain::spawn_sh(script, &ctl).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot start the combine command: {}",
                        crate::scan::io_message(&e)
                    ),
                )
            })?;
            combine = Some(c);
            w
        }
        None => {
            let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            File::from(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let sink = Arc::new(Sink::new(
        w,
        opts.out_sep.unwrap_or(opts.sep),
        opts.keep_order,
        combine.is_some(),
        ctl.clone(),
    ));

    // Long-lived workers start now, so a command that cannot start is an error
    // before any input is read.
    let mut procs = Vec::new();
    if !per_block {
        for slot in 0..n {
            let env = [
                ("WF_WORKER", slot.to_string()),
                ("WF_WORKERS", n.to_string()),
            ];
            match proc::spawn(
                &opts.command,
                &env,
                Out::Sink(sink.clone()),
                &ctl,
                pipe_size,
            ) {
                Ok(p) => procs.push(p),
                Err(e) => {
                    ctl.abort(STOP_QUIET);
                    for p in procs {
                        p.finish();
                    }
                    sink.close();
                    if let Some(c) = combine {
                        c.wait(&ctl);
                    }
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "cannot run '{}': {}",
                            argv0.to_string_lossy(),
                            crate::scan::io_message(&e)
                        ),
                    ));
                }
            }
        }
    }

    let names: Arc<Vec<String>> = Arc::new(inputs.iter().map(|i| i.name.clone()).collect());
    let (tx, rx) = chan::bounded::<Block>(n);
    let (pool_tx, pool_rx) = chan::unbounded::<Vec<u8>>();
    let (plan_tx, plan_rx) = chan::bounded::<plan::PlanOut>(1);
    {
        let ctl = ctl.clone();
        let (block, sep) = (opts.block, opts.sep);
        // Not joined: after a signal it may be blocked opening a FIFO.
        std::thread::spawn(move || {
            let out = plan::plan(&inputs, block, sep, tx, pool_rx, &ctl);
            let _ = plan_tx.send(out);
            signals::wake();
        });
    }

    let running = Arc::new(AtomicUsize::new(n));
    let reorder = (per_block && opts.keep_order).then(|| Arc::new(Reorder::new(4 * n as u64)));
    let argv = Arc::new(opts.command.clone());
    let mut procs = procs.into_iter();
    let mut handles = Vec::with_capacity(n);
    for slot in 0..n {
        let f = Feeder {
            slot,
            workers: n,
            argv: argv.clone(),
            names: names.clone(),
            rx: rx.clone(),
            pool: pool_tx.clone(),
            ctl: ctl.clone(),
            sink: sink.clone(),
            reorder: reorder.clone(),
            sep: opts.sep,
            pipe_size,
        };
        let p = procs.next();
        let running = running.clone();
        handles.push(std::thread::spawn(move || {
            let out = match p {
                Some(p) => f.run_long(p),
                None => f.run_per_block(),
            };
            running.fetch_sub(1, Ordering::SeqCst);
            signals::wake();
            out
        }));
    }

    // Watch for signals while the feeders work.
    let mut watch = Watch::default();
    while running.load(Ordering::SeqCst) > 0 {
        if let Some(sig) = watch.step(&guard, &ctl) {
            die(sig, &ctl, &sink, combine, &guard);
        }
    }
    if let Some(sig) = guard.pending() {
        die(sig, &ctl, &sink, combine, &guard);
    }
    let mut report = FeedReport::default();
    let mut input_errors: Vec<(usize, String)> = Vec::new();
    for h in handles {
        let out = h.join().expect("feeding thread panicked");
        report.bytes += out.bytes;
        report.blocks += out.blocks;
        report.failures.extend(out.failures);
        input_errors.extend(out.input_errors);
    }

    // The planner stops at once if the feeders stopped early.
    ctl.feeders_gone.store(true, Ordering::SeqCst);
    let planned = loop {
        match plan_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(p) => break p,
            Err(chan::RecvTimeoutError::Disconnected) => break plan::PlanOut::default(),
            Err(chan::RecvTimeoutError::Timeout) => {
                watch.step(&guard, &ctl);
                if let Some(sig) = guard.pending() {
                    die(sig, &ctl, &sink, combine, &guard);
                }
            }
        }
    };
    input_errors.extend(planned.errors);
    // Blocks planned but never taken: every worker failed.
    let first_left = rx.try_iter().map(|b| (b.input, b.offset)).next();
    drop(rx);
    if !ctl.stopped() {
        if let Some((i, at)) = first_left.or(planned.stopped_at) {
            let later = names.len() - i - 1;
            let mut msg = format!(
                "wf: every worker stopped; input from {} byte {at} on was not fed to any worker",
                names[i]
            );
            if later > 0 {
                msg.push_str(&format!(", nor {later} later input(s)"));
            }
            eprintln!("{msg}");
            report.failures.push(msg);
        }
    }

    // Close the combine process's input and wait for it.
    sink.close();
    let mut failure = ctl.failure.lock().unwrap().take();
    if let Some(c) = combine {
        while !c.done() {
            watch.step(&guard, &ctl);
            if let Some(sig) = guard.pending() {
                die(sig, &ctl, &sink, Some(c), &guard);
            }
        }
        let status = c.wait(&ctl);
        let ok = status.is_some_and(|s| s.success());
        let sigpipe = status.is_some_and(|s| {
            s.signal() == Some(libc::SIGPIPE) || s.code() == Some(128 + libc::SIGPIPE)
        });
        if sigpipe {
            // Whoever read wf's output went away (`| head`): quiet, like any filter.
            failure = None;
        } else if !ok && ctl.reason() != STOP_QUIET {
            let msg = format!("wf: the combine command {}", describe(status));
            eprintln!("{msg}");
            report.failures.push(msg);
            failure = None;
        }
    }
    if let Some(m) = failure {
        let msg = format!("wf: {m}");
        eprintln!("{msg}");
        report.failures.push(msg);
    }
    drop(guard);

    input_errors.sort_by_key(|e| e.0);
    input_errors.dedup_by_key(|e| e.0);
    report.input_errors = input_errors
        .into_iter()
        .map(|(i, message)| InputError {
            name: names[i].clone(),
            message,
        })
        .collect();
    Ok(report)
}

/// Signal watch and escalation: SIGTERM to every process group on a stop,
/// SIGKILL 2 s later.
#[derive(Default)]
struct Watch {
    stopped_at: Option<Instant>,
    killed: bool,
}

impl Watch {
    /// Wait a little and handle a signal: stop everything (SIGTERM to every
    /// process group, SIGKILL 2 s later). Returns the signal once wf should exit
    /// without waiting any longer (4 s after it arrived).
    fn step(&mut self, guard: &signals::Guard, ctl: &Ctl) -> Option<i32> {
        guard.wait(100);
        let sig = guard.pending();
        if sig.is_some() {
            ctl.abort(STOP_SIGNAL);
        }
        if ctl.stopped() {
            let t = *self.stopped_at.get_or_insert_with(Instant::now);
            if t.elapsed() > Duration::from_secs(2) && !self.killed {
                ctl.kill_all(libc::SIGKILL);
                self.killed = true;
            }
            if t.elapsed() > Duration::from_secs(4) {
                return sig;
            }
        }
        None
    }
}

/// Exit after a signal, once every process has been terminated.
fn die(
    sig: i32,
    ctl: &Ctl,
    sink: &Sink,
    combine: Option<proc::Plain>,
    guard: &signals::Guard,
) -> ! {
    ctl.abort(STOP_SIGNAL);
    sink.close();
    if let Some(c) = combine {
        // Reap it if it is gone already (it was sent SIGTERM with the rest).
        let t = Instant::now();
        while !c.done() && t.elapsed() < Duration::from_secs(2) {
            guard.wait(50);
        }
        if !c.done() {
            unsafe { libc::kill(-c.pid, libc::SIGKILL) };
        }
    }
    std::process::exit(128 + sig)
}

#[cfg(test)]
mod tests {
    use super::ranges_text;

    #[test]
    fn ranges_merge_and_only_the_last_ten_are_listed() {
        let names = vec!["a.log".to_string(), "b.log".to_string()];
        // Adjacent ranges of one file merge, in any order given.
        let text = ranges_text(&names, &[(0, 10, 20), (0, 0, 10), (1, 0, 5)]);
        assert_eq!(text, "a.log bytes 0..20; b.log bytes 0..5");
        // 25 separate ranges: a count, then the last 10.
        let given: Vec<_> = (0..25u64).map(|k| (0, 100 * k, 100 * k + 10)).collect();
        let text = ranges_text(&names, &given);
        assert!(
            text.starts_with(
                "25 ranges, 250 bytes in all; 15 earlier ranges, then a.log bytes 1500..1510, "
            ),
            "{text}"
        );
        assert!(text.ends_with(", 2400..2410"), "{text}");
        assert_eq!(text.matches("..").count(), 10, "{text}");
        // 10 ranges: all listed, no count.
        let text = ranges_text(&names, &given[..10]);
        assert!(text.starts_with("a.log bytes 0..10, 100..110"), "{text}");
        assert_eq!(text.matches("..").count(), 10, "{text}");
    }
}
