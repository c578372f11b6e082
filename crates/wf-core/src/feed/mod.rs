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
//! - File data moves with `pread` + `write`, a record only once its separator
//!   has been read ([`proc`] says why not `splice(2)`): a file that shrinks
//!   while being fed (`logrotate`'s copytruncate) gives workers whole records
//!   of the file as it was, never a cut one, and every range no worker got is
//!   reported as an input error with its offsets. A record longer than
//!   `max_record` is given to no worker and reported the same way, so wf's
//!   memory stays bounded. Stream data (stdin, FIFOs) is read once by the
//!   planner and written from its buffers.
//! - Each worker's output is forwarded in whole units ([`output`]: lines, or
//!   units ending with `--ors`, which defaults to the `--rs` byte; a unit past
//!   1 MiB in pieces, the others' output waiting meanwhile) to wf's
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
//! - `--since/--until` ([`FeedOptions::window`], `keep.rs`): a regular file
//!   is planned over the span the time search set ([`Input::span`], found
//!   by `scan::seek` as for `wf count`), so only it is read; every record
//!   handed on is checked against the window in the feeding thread's copy,
//!   and the failure reports map what a worker read back to input bytes
//!   (records left out are not "never read"). A BGZF or multi-frame zstd
//!   file is searched by block (`Blocks::Offsets`): its block range is
//!   decoded as one stream from its true decoded offset (`scan::split`), so
//!   failure reports keep naming input offsets. Streams and other
//!   compressed files are read whole and filtered the same way. With `--per-block`, a block
//!   none of whose records is in the window starts no worker (on a stream
//!   of 512 KiB in 4 KiB blocks with a one-minute window: 5 workers, not 125).
//! - SIGINT/SIGTERM/SIGHUP: every worker's process group is terminated (killed
//!   after 2 s) and wf exits with 128 + the signal number. If wf itself is
//!   killed (SIGKILL), the kernel kills every worker (`PR_SET_PDEATHSIG`);
//!   what a worker started itself ends when its input or output pipe closes.
//!
//! Measurement knobs (environment): `WF_FEED_SPLICE=1` moves file data with
//! `splice` (faster, but a file that shrinks meanwhile can give workers NUL
//! bytes: never for real use); `WF_FEED_PIPE=SIZE` sets the workers'
//! stdin pipe size (default 1M, the best of 64K..4M measured here);
//! `WF_FEED_PACE=0` makes feeding threads block on full pipes instead of
//! napping (pacing saves a slow worker ~10% of kernel time: see `proc.rs`).
//!
//! Wiring (what the CLI's `wf feed` does, `crates/wf/src/cli/feed.rs`): parse
//! the options into [`FeedOptions`], collect inputs with
//! [`crate::scan::InputSpec`], print the collection errors, call [`run`]; print
//! `report.input_errors` (run does not print them; it prints the failures
//! itself); exit 2 if either list is non-empty, or on `Err` (a setup
//! error such as a command that does not exist, before any input is read).

mod feeder;
mod keep;
mod limit;
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
use feeder::{report_failure, Feeder, FeederOut};
pub use keep::{TimeFilter, WindowCounts};
use output::{Reorder, Sink};
use plan::{Block, Lost, LostWhy};
use proc::{describe, Out, Plain, Proc};

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
    /// Longest record given to a worker, in bytes (without its separator); a
    /// longer one is not given to any worker and is reported as an input error.
    pub max_record: u64,
    /// A live pipeline (`--follow`): streams are handed on as soon as they go
    /// quiet, and the first SIGINT/SIGTERM/SIGHUP sets this flag instead of
    /// stopping (the stream's writer then ends it, and feeding ends as at any
    /// end of input); a second signal stops as usual.
    pub follow: Option<Arc<AtomicBool>>,
    /// `--since/--until`: only the records of this window are given to
    /// workers (`keep.rs`). A regular file is read only in its
    /// [`Input::span`] (set it with `scan::seek`); the rest whole.
    pub window: Option<TimeFilter>,
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
            max_record: DEFAULT_MAX_RECORD,
            follow: None,
            window: None,
        }
    }
}

/// Default block size: 1 MiB.
pub const DEFAULT_BLOCK: u64 = 1 << 20;

/// Default `--max-record`: 1 GiB.
pub const DEFAULT_MAX_RECORD: u64 = 1 << 30;

/// Most worker processes (`-j`): more only exhausts process and descriptor
/// limits (each worker has two pipes and two threads in wf).
pub const MAX_WORKERS: usize = 1024;

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
    /// With [`FeedOptions::window`]: the records it kept and left out.
    pub window: Option<WindowCounts>,
}

/// A `--rs`/`--ors` argument that is not one byte (the argument as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid record separator '{0}': give one byte, as a character or an escape \
     such as '\\0', '\\n', '\\t' or '\\x1e'"
)]
pub struct SeparatorError(pub String);

/// Parse `--rs`: one byte, as a character (`,`) or an escape (`\0`, `\n`, `\t`,
/// `\r`, `\\`, `\xHH`, `\NNN` octal; also `\a \b \e \f \v`).
pub fn parse_rs(s: &str) -> Result<u8, SeparatorError> {
    let err = || SeparatorError(s.to_string());
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
    /// [`FeedOptions::follow`].
    pub(crate) follow: Option<Arc<AtomicBool>>,
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
    if opts.workers > MAX_WORKERS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} workers asked for; at most {MAX_WORKERS} (-j)",
                opts.workers
            ),
        ));
    }
    let n = opts.workers.max(1);
    let per_block = opts.per_block || opts.keep_order;
    let pipe_size = pipe_size();
    let mut s = Session::open(opts)?;
    // Long-lived workers start now, so a command that cannot start is an error
    // before any input is read.
    let procs = if per_block {
        Vec::new()
    } else {
        s.start_workers(opts, n, pipe_size)?
    };

    let names: Arc<Vec<String>> = Arc::new(inputs.iter().map(|i| i.name.clone()).collect());
    let (tx, rx) = chan::bounded::<Block>(n);
    let (pool_tx, pool_rx) = chan::unbounded::<Vec<u8>>();
    let plan_rx = start_planner(inputs, opts, tx, pool_rx, &s.ctl);
    let reorder = (per_block && opts.keep_order).then(|| Arc::new(Reorder::new(4 * n as u64)));
    let feeder = Feeder {
        slot: 0,
        workers: n,
        argv: Arc::new(opts.command.clone()),
        names: names.clone(),
        rx: rx.clone(),
        pool: pool_tx,
        ctl: s.ctl.clone(),
        sink: s.sink.clone(),
        reorder,
        sep: opts.sep,
        max_record: opts.max_record,
        pipe_size,
        window: opts.window,
    };
    let running = Arc::new(AtomicUsize::new(n));
    let handles = start_feeders(feeder, procs, &running);

    s.watch_feeders(&running);
    let (mut report, mut lost, idle) = join_feeders(handles);

    // The planner stops at once if the feeders stopped early.
    s.ctl.feeders_gone.store(true, Ordering::SeqCst);
    let planned = s.wait_planner(&plan_rx);
    lost.extend(planned.lost);
    // Blocks planned but never taken: every worker failed.
    let first_left = rx.try_iter().map(|b| (b.input, b.offset)).next();
    drop(rx);
    if let Some((i, at)) = first_left.or(planned.stopped_at) {
        if !s.ctl.stopped() {
            // Why: the workers that stopped before they were given anything.
            for msg in idle {
                report_failure(&mut report.failures, msg);
            }
            report_failure(&mut report.failures, unfed(&names, i, at));
        }
    }
    s.finish_output(&mut report.failures);
    report.input_errors = by_name(planned.errors, &names);
    report.input_errors.extend(lost_errors(lost, &names));
    Ok(report)
}

/// Where workers' output goes: wf's stdout, or a `--combine` process (returned
/// too) whose stdout is wf's.
fn open_output(opts: &FeedOptions, ctl: &Arc<Ctl>) -> io::Result<(Arc<Sink>, Option<Plain>)> {
    let mut combine = None;
    let w = match &opts.combine {
        Some(script) => {
            let (c, w) = Plain::spawn_sh(script, ctl).map_err(|e| {
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
    Ok((sink, combine))
}

/// The planner thread; its report comes on the returned channel. Not joined:
/// after a signal it may be blocked opening a FIFO.
fn start_planner(
    inputs: Vec<Input>,
    opts: &FeedOptions,
    tx: chan::Sender<Block>,
    pool: chan::Receiver<Vec<u8>>,
    ctl: &Arc<Ctl>,
) -> chan::Receiver<plan::PlanOut> {
    let (plan_tx, plan_rx) = chan::bounded::<plan::PlanOut>(1);
    let ctl = ctl.clone();
    let cut = (opts.block, opts.sep, opts.max_record);
    std::thread::spawn(move || {
        let out = plan::plan(&inputs, cut, tx, pool, &ctl);
        let _ = plan_tx.send(out);
        signals::wake();
    });
    plan_rx
}

/// One feeding thread per slot (`feeder`, with its slot set): with a long-lived
/// worker from `procs`, or (`--per-block`, no `procs`) a process per block.
/// `running` counts down as they end.
fn start_feeders(
    feeder: Feeder,
    procs: Vec<Proc>,
    running: &Arc<AtomicUsize>,
) -> Vec<std::thread::JoinHandle<FeederOut>> {
    let mut procs = procs.into_iter();
    (0..feeder.workers)
        .map(|slot| {
            let f = Feeder {
                slot,
                ..feeder.clone()
            };
            let p = procs.next();
            let running = running.clone();
            std::thread::spawn(move || {
                let out = match p {
                    Some(p) => f.run_long(p),
                    None => f.run_per_block(),
                };
                running.fetch_sub(1, Ordering::SeqCst);
                signals::wake();
                out
            })
        })
        .collect()
}

/// The feeders' counts and failures, the input ranges they did not give, and
/// what idle workers that failed would say ([`FeederOut::idle`]).
fn join_feeders(
    handles: Vec<std::thread::JoinHandle<FeederOut>>,
) -> (FeedReport, Vec<Lost>, Vec<String>) {
    let mut report = FeedReport::default();
    let (mut lost, mut idle) = (Vec::new(), Vec::new());
    for h in handles {
        let out = h.join().expect("feeding thread panicked");
        report.bytes += out.bytes;
        report.blocks += out.blocks;
        report.failures.extend(out.failures);
        idle.extend(out.idle);
        lost.extend(out.lost);
        if let Some(w) = out.window {
            report
                .window
                .get_or_insert_with(WindowCounts::default)
                .add(w);
        }
    }
    (report, lost, idle)
}

/// The input errors for ranges no worker was given, in input order: for each
/// input and cause, every range (adjacent ones merged); a record too long is
/// named on its own.
fn lost_errors(mut lost: Vec<Lost>, names: &[String]) -> Vec<InputError> {
    lost.sort_by(|a, b| (a.input, &a.why, a.from).cmp(&(b.input, &b.why, b.from)));
    let mut out = Vec::new();
    for group in lost.chunk_by(|a, b| a.input == b.input && a.why == b.why) {
        let name = &names[group[0].input];
        let cause = match &group[0].why {
            LostWhy::Shrank => "file shrank while being fed".to_string(),
            LostWhy::Read(m) => m.clone(),
            LostWhy::TooLong(max) => {
                for l in group {
                    let message = format!(
                        "record at byte {} is longer than --max-record ({max} bytes); \
                         not given to any worker: {name} bytes {}..{}",
                        l.from, l.from, l.to
                    );
                    out.push(InputError::new(name, message));
                }
                continue;
            }
        };
        let message = format!(
            "{cause}; not given to any worker: {name} bytes {}",
            merged_ranges(group)
        );
        out.push(InputError::new(name, message));
    }
    out
}

/// "a..b, c..d": every range of one input's sorted group, adjacent ones merged.
fn merged_ranges(group: &[Lost]) -> String {
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for l in group {
        match merged.last_mut() {
            Some(last) if last.1 >= l.from => last.1 = last.1.max(l.to),
            _ => merged.push((l.from, l.to)),
        }
    }
    let list: Vec<String> = merged.iter().map(|(a, b)| format!("{a}..{b}")).collect();
    list.join(", ")
}

/// The failure when every worker stopped before the plan was done.
fn unfed(names: &[String], i: usize, at: u64) -> String {
    let later = names.len() - i - 1;
    let mut msg = format!(
        "wf: every worker stopped; input from {} byte {at} on was not fed to any worker",
        names[i]
    );
    if later > 0 {
        msg.push_str(&format!(", nor {later} later input(s)"));
    }
    msg
}

/// One error per input (the first reported), in input order.
fn by_name(mut errors: Vec<(usize, String)>, names: &[String]) -> Vec<InputError> {
    errors.sort_by_key(|e| e.0);
    errors.dedup_by_key(|e| e.0);
    errors
        .into_iter()
        .map(|(i, message)| InputError::new(&names[i], message))
        .collect()
}

/// What the thread running [`run`] holds while the others work: it watches
/// for signals, and owns the output and the combine process.
struct Session {
    ctl: Arc<Ctl>,
    sink: Arc<Sink>,
    combine: Option<Plain>,
    guard: signals::Guard,
    watch: Watch,
}

impl Session {
    /// Install the signal handlers and open the output.
    fn open(opts: &FeedOptions) -> io::Result<Session> {
        let ctl = Arc::new(Ctl {
            follow: opts.follow.clone(),
            ..Ctl::default()
        });
        let guard = signals::install()?;
        let (sink, combine) = open_output(opts, &ctl)?;
        Ok(Session {
            ctl,
            sink,
            combine,
            guard,
            watch: Watch::default(),
        })
    }

    /// Start the long-lived workers; if one cannot start, stop those started
    /// (and the combine process) and return the error.
    fn start_workers(
        &mut self,
        opts: &FeedOptions,
        n: usize,
        pipe_size: usize,
    ) -> io::Result<Vec<Proc>> {
        let mut procs = Vec::new();
        for slot in 0..n {
            let env = [
                ("WF_WORKER", slot.to_string()),
                ("WF_WORKERS", n.to_string()),
            ];
            let out = Out::Sink(self.sink.clone());
            match proc::spawn(&opts.command, &env, out, &self.ctl, pipe_size) {
                Ok(p) => procs.push(p),
                Err(e) => {
                    self.ctl.abort(STOP_QUIET);
                    for p in procs {
                        p.finish();
                    }
                    self.sink.close();
                    if let Some(c) = self.combine.take() {
                        c.wait(&self.ctl);
                    }
                    let argv0 = opts.command[0].to_string_lossy();
                    let msg = format!("cannot run '{argv0}': {}", crate::scan::io_message(&e));
                    return Err(io::Error::new(e.kind(), msg));
                }
            }
        }
        Ok(procs)
    }

    /// Watch for signals while the feeders work.
    fn watch_feeders(&mut self, running: &AtomicUsize) {
        while running.load(Ordering::SeqCst) > 0 {
            if let Some(sig) = self.watch.step(&self.guard, &self.ctl) {
                self.die(sig);
            }
        }
        self.exit_if_signalled();
    }

    /// Wait a little, watching for signals; exit if one arrived.
    fn step(&mut self) {
        self.watch.step(&self.guard, &self.ctl);
        self.exit_if_signalled();
    }

    fn exit_if_signalled(&mut self) {
        if let Some(sig) = self.guard.pending() {
            self.die(sig);
        }
    }

    fn die(&mut self, sig: i32) -> ! {
        die(sig, &self.ctl, &self.sink, self.combine.take(), &self.guard)
    }

    /// The planner's report, once it has ended.
    fn wait_planner(&mut self, plan_rx: &chan::Receiver<plan::PlanOut>) -> plan::PlanOut {
        loop {
            match plan_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(p) => return p,
                Err(chan::RecvTimeoutError::Disconnected) => return plan::PlanOut::default(),
                Err(chan::RecvTimeoutError::Timeout) => self.step(),
            }
        }
    }

    /// Close the output (the combine process's input), wait for the combine
    /// process, and report how it or the output failed.
    fn finish_output(mut self, failures: &mut Vec<String>) {
        self.sink.close();
        let mut failure = self.ctl.failure.lock().unwrap().take();
        if self.combine.is_some() {
            while !self.combine.as_ref().is_some_and(|c| c.done()) {
                self.step();
            }
        }
        if let Some(c) = self.combine.take() {
            let status = c.wait(&self.ctl);
            let ok = status.is_some_and(|s| s.success());
            let sigpipe = status.is_some_and(|s| {
                s.signal() == Some(libc::SIGPIPE) || s.code() == Some(128 + libc::SIGPIPE)
            });
            if sigpipe {
                // Whoever read wf's output went away (`| head`): quiet, like any filter.
                failure = None;
            } else if !ok && self.ctl.reason() != STOP_QUIET {
                report_failure(
                    failures,
                    format!("wf: the combine command {}", describe(status)),
                );
                failure = None;
            }
        }
        if let Some(m) = failure {
            report_failure(failures, format!("wf: {m}"));
        }
    }
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
        if let (Some(_), Some(flag)) = (sig, &ctl.follow) {
            // A follow's first signal: its reader ends the stream.
            if !flag.swap(true, Ordering::SeqCst) {
                guard.clear();
                return None;
            }
        }
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
fn die(sig: i32, ctl: &Ctl, sink: &Sink, combine: Option<Plain>, guard: &signals::Guard) -> ! {
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
