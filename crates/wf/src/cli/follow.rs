//! `--follow` of `count`, `wf2`, `report` and `feed`: read the files as they grow.
//!
//! Why here: wf-core's `scan::follow` knows the files (offsets, rotation,
//! partial last lines) and turns every poll into inputs with spans; this
//! file runs the job over them with the same scan as a plain run
//! (`TimeArgs::scan_inputs`, so `--since`/`--until` filter as usual), merges
//! each increment into the running state as `--state` does, and prints the
//! report of everything after every interval that brought new bytes: the
//! running state, a copy of it (through its partial-state bytes) merged with
//! the partial last lines, so each report is the report a fresh run over the
//! files would print. `feed --follow` pumps the records into a pipe that
//! `wf feed` reads as a live stream.
//!
//! Choices: standard input and pipes are refused (exit 2: they are read as
//! they come without --follow, and cannot be reopened by name); `--state` is
//! refused (a follow keeps its state in memory); `--since`/`--until` filter
//! every record read.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use wf_core::jobs::partial::{self, Partial};
use wf_core::jobs::time::TimeFormat;
use wf_core::scan::follow::{Event, Follower, Poll};
use wf_core::scan::{Input, InputError, ScanOptions, Source};

use super::args::{InputArgs, ScanArgs};
use super::time::TimeArgs;

/// `--follow`, `--interval`, `--flush-after`.
#[derive(Args, Clone)]
pub(crate) struct FollowArgs {
    /// Keep reading the files as they grow, like `tail -F`: every --interval,
    /// what was appended (whole lines) is read and the report of everything
    /// printed again (refreshed in place on a terminal; one report after
    /// another otherwise, with --json one JSON report per line; `wf report -o
    /// page.html` rewrites the page whole, and the page reloads itself; `wf feed`
    /// hands the new lines to its workers as they come). logrotate's
    /// rotations are followed: a renamed file is read to its end, then the new
    /// one from its start (and a file the name held in between, if it was
    /// rotated twice between two looks, whole); a file truncated in place
    /// (copytruncate) is read again from its start (said on stderr); a named
    /// file that does not exist yet is waited for and followed from its start
    /// once made (one never made is an error at the end). A last line without
    /// its newline waits for it (see --flush-after). SIGINT or SIGTERM stops it: the last
    /// report is printed, exit status 0. Files only (not stdin or pipes, which
    /// are read as they come without --follow); not with --state; compressed
    /// files and files in named directories are read, but only the files
    /// found at the start are followed, and compressed ones are read once;
    /// every job keeps only the records of --since/--until. E.g. `wf wf2
    /// --follow /var/log/nginx/access.log`, `wf feed --follow app.log -- grep
    /// ERROR`.
    #[arg(long)]
    pub(crate) follow: bool,
    /// How often --follow looks at the files: ms, s, m or h, e.g. `500ms`,
    /// `2s`, `1m`. E.g. `wf count --follow --interval 500ms app.log`.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_interval)]
    interval: Duration,
    /// With --follow: a last line still without its newline after DURATION is
    /// handed on as a line (its rest, when it comes, is another line) [default:
    /// it waits for its newline; count and wf2 reports include it meanwhile].
    /// E.g. `wf feed --follow --flush-after 5s app.log -- grep ERROR`.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    flush_after: Option<Duration>,
}

/// A duration: numbers with units, `500ms`, `2s`, `1m30s`, `1h`.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let bad = || format!("'{s}': expected a duration such as 500ms, 2s, 1m or 1h");
    let (mut total, mut rest) = (Duration::ZERO, s.trim());
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        let v: u64 = rest[..n].parse().map_err(|_| bad())?;
        let unit = rest[n..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .count();
        let ms = match &rest[n..n + unit] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        total += Duration::from_millis(v.checked_mul(ms).ok_or_else(bad)?);
        rest = &rest[n + unit..];
    }
    if total.is_zero() {
        return Err(format!("'{s}': must be more than 0"));
    }
    Ok(total)
}

impl FollowArgs {
    pub(crate) fn on(&self) -> bool {
        self.follow
    }

    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }
}

/// Why `--follow` does not start.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("{0} is a stream: --follow needs files, reopened by name (without --follow a pipe is read as it comes)")]
    Stream(String),
    #[error("--follow keeps its state in memory: it cannot be used with --state")]
    State,
    #[error("cannot catch SIGINT/SIGTERM: {0}")]
    Signals(std::io::Error),
}

/// What a follow starts with: the inputs, the names that name no file yet
/// (waited for, as `tail -F` waits), and whether another input failed.
struct Start {
    inputs: Vec<Input>,
    waiting: Vec<(String, PathBuf)>,
    failed: bool,
}

/// The inputs to follow, or why not (after printing the collection errors).
fn inputs(args: &ScanArgs, state: bool) -> Result<Start, Refused> {
    if state {
        return Err(Refused::State);
    }
    let c = args.input.collect();
    if let Some(r) = stream_in(&c.inputs) {
        return Err(r);
    }
    let (waiting, failed) = waited(c.errors, &args.input);
    Ok(Start {
        inputs: c.inputs,
        waiting,
        failed,
    })
}

/// The collection errors said on stderr: a PATH argument that names no file
/// is waited for (returned; a missing `--files-from` list is no log to wait
/// for); true if another error was said.
fn waited(errors: Vec<InputError>, given: &InputArgs) -> (Vec<(String, PathBuf)>, bool) {
    let mut waiting = Vec::new();
    let mut failed = false;
    for e in errors {
        if e.kind == Some(std::io::ErrorKind::NotFound) && given.names_path(&e.name) {
            wf_core::warn!("wf: {e}: waiting for it (--follow)");
            waiting.push((e.name.clone(), PathBuf::from(&e.name)));
        } else {
            wf_core::warn!("wf: {e}");
            failed = true;
        }
    }
    (waiting, failed)
}

/// Follow `waiting` too; at the end, a name still waited for is an error.
fn wait_for(fl: &mut Follower, waiting: Vec<(String, PathBuf)>) {
    for (name, path) in waiting {
        fl.wait_for(name, path);
    }
}

/// Says the names `fl` still waits for; true if there is one.
fn never_came(fl: &Follower) -> bool {
    let mut any = false;
    for name in fl.waiting() {
        wf_core::warn!("wf: {name}: no such file came while it was followed");
        any = true;
    }
    any
}

/// What a job's follow needs besides the job.
pub(crate) struct JobFollow<'a> {
    pub(crate) follow: &'a FollowArgs,
    pub(crate) args: &'a ScanArgs,
    pub(crate) time: &'a TimeArgs,
    pub(crate) format: TimeFormat,
    /// `--state` was given.
    pub(crate) state: bool,
}

impl<'a> JobFollow<'a> {
    pub(crate) fn new(
        args: &'a ScanArgs,
        time: &'a TimeArgs,
        state: bool,
        follow: &'a FollowArgs,
        format: TimeFormat,
    ) -> Self {
        JobFollow {
            follow,
            args,
            time,
            format,
            state,
        }
    }
}

/// What a follow has read so far, for the report of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    /// Files followed (a rotation adds one).
    pub(crate) files: u64,
    /// Bytes read, the partial last lines included (what a fresh run over
    /// the files would read).
    pub(crate) bytes: u64,
}

/// Follow with `job`, printing `render(state, files)` after every interval
/// that brought new bytes, and once more at the end.
pub(crate) fn run<J: Partial>(
    job: J,
    cx: JobFollow<'_>,
    render: &dyn Fn(J::State, u64) -> Vec<u8>,
) -> ExitCode {
    let params = job.params();
    let make = || J::from_params(&params).expect("the job's own settings");
    run_with(job, &make, cx, &|st, seen: Seen| render(st, seen.files))
}

/// [`run`] for a job its settings cannot make again (`wf report`'s format
/// is no number): `make` gives a job like `job` for each increment's scan;
/// `render` gets what was read so far. An empty rendering prints nothing
/// (`wf report -o FILE` writes its file itself).
pub(crate) fn run_with<J: Partial>(
    job: J,
    make: &dyn Fn() -> J,
    cx: JobFollow<'_>,
    render: &dyn Fn(J::State, Seen) -> Vec<u8>,
) -> ExitCode {
    let started = inputs(cx.args, cx.state).and_then(|i| Ok((i, Stop::on_signals()?)));
    let (start, stop) = match started {
        Ok(x) => x,
        Err(e) => {
            wf_core::warn!("wf: {e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = start.failed;
    let opts = cx.args.options();
    let (mut fl, errors) = Follower::new(start.inputs, opts.sep, cx.follow.flush_after);
    fl.decompress = cx.args.input.decompress;
    wait_for(&mut fl, start.waiting);
    failed |= say_errors(&errors);
    let mut total = job.new_state();
    let terminal = std::io::stdout().is_terminal();
    let (mut last, mut handed) = (false, 0u64);
    loop {
        let p = if last { fl.finish() } else { fl.poll() };
        failed |= say(&p.events);
        // An idle poll starts no scan (its threads cost more than the poll).
        if !p.records.is_empty() {
            let inc =
                cx.time
                    .scan_inputs(make(), cx.format, p.records.clone(), vec![], &opts, None);
            failed |= say_errors(&inc.errors);
            job.merge(&mut total, inc.state);
        }
        handed += p.records.iter().map(span_len).sum::<u64>();
        if p.changed || last {
            let held: u64 = p.tails.iter().map(span_len).sum();
            let now = with_tails(&job, make, &total, &p, &cx, &opts);
            let seen = Seen {
                files: fl.generations,
                bytes: handed + held,
            };
            if !print(&render(now, seen), terminal) {
                return ExitCode::from(2);
            }
            if cx.args.stats {
                let n = fl.generations;
                wf_core::warn!(
                    "wf: follow: {n} files, {} bytes read, {held} of them in partial last lines",
                    handed + held
                );
            }
        }
        if last {
            break;
        }
        last = stop.wait(cx.follow.interval);
    }
    failed |= never_came(&fl);
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn span_len(i: &Input) -> u64 {
    match (&i.source, i.span) {
        (_, Some((a, b))) => b - a,
        (Source::File { size, .. }, None) => *size,
        _ => 0,
    }
}

/// The running state with the partial last lines of `p` merged in (a copy:
/// the running state waits for their newlines).
fn with_tails<J: Partial>(
    job: &J,
    make: &dyn Fn() -> J,
    total: &J::State,
    p: &Poll,
    cx: &JobFollow<'_>,
    opts: &ScanOptions,
) -> J::State {
    let bytes = partial::encode_with(job, total, &BTreeSet::new(), &[]);
    let (_, t, _) = partial::decode_with::<J>(&bytes).expect("a state it has just written");
    let mut now = t.state;
    if !p.tails.is_empty() {
        let tails = cx
            .time
            .scan_inputs(make(), cx.format, p.tails.clone(), vec![], opts, None);
        job.merge(&mut now, tails.state);
    }
    now
}

/// Print a report: on a terminal in place of the last one; nothing if it is
/// empty. False if stdout is gone.
fn print(report: &[u8], terminal: bool) -> bool {
    if report.is_empty() {
        return true;
    }
    let mut out = std::io::stdout().lock();
    let clear: &[u8] = if terminal { b"\x1b[H\x1b[2J" } else { b"" };
    out.write_all(clear)
        .and_then(|_| out.write_all(report))
        .and_then(|_| out.flush())
        .is_ok()
}

/// Say the events on stderr; true if one was a failure.
fn say(events: &[Event]) -> bool {
    let mut failed = false;
    for e in events {
        match e {
            Event::Rotated { name } => {
                wf_core::warn!("wf: {name}: rotated: the old file is read to its end, the new one from its start")
            }
            Event::Truncated { name, was, now } => wf_core::warn!(
                "wf: {name}: truncated ({now} bytes, it had {was}): read again from its start"
            ),
            Event::Missed { name, file } => wf_core::warn!(
                "wf: {name}: rotated more than once since the last look: {file}, which it named in between, is read whole"
            ),
            Event::Appeared { name } => {
                wf_core::warn!("wf: {name}: has appeared: followed from its start")
            }
            Event::Failed(e) => {
                wf_core::warn!("wf: {e}");
                failed = true;
            }
        }
    }
    failed
}

fn say_errors(errors: &[InputError]) -> bool {
    for e in errors {
        wf_core::warn!("wf: {e}");
    }
    !errors.is_empty()
}

/// SIGINT and SIGTERM, caught: a byte on a socket wakes the wait (so an idle
/// follow sleeps in the kernel, not in slices); a second signal exits at once.
struct Stop {
    flag: Arc<AtomicBool>,
    rx: UnixStream,
}

impl Stop {
    fn on_signals() -> Result<Stop, Refused> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let flag = Arc::new(AtomicBool::new(false));
        let (rx, tx) = UnixStream::pair().map_err(Refused::Signals)?;
        for sig in [SIGINT, SIGTERM] {
            let tx = tx.try_clone().map_err(Refused::Signals)?;
            signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone())
                .and_then(|_| signal_hook::flag::register(sig, flag.clone()))
                .and_then(|_| signal_hook::low_level::pipe::register(sig, tx))
                .map_err(Refused::Signals)?;
        }
        Ok(Stop { flag, rx })
    }

    /// Wait up to `d` (0: just look); true once a signal came.
    fn wait(&self, d: Duration) -> bool {
        if !d.is_zero() && !self.flag.load(Ordering::SeqCst) {
            let _ = self.rx.set_read_timeout(Some(d));
            let _ = (&self.rx).read(&mut [0u8; 16]);
        }
        self.flag.load(Ordering::SeqCst)
    }
}

/// Why `--follow` cannot take `inputs`: one is a stream, which it cannot
/// reopen by name.
fn stream_in(inputs: &[Input]) -> Option<Refused> {
    let s = inputs
        .iter()
        .find(|i| matches!(i.source, Source::Stream { .. }))?;
    Some(Refused::Stream(s.name.clone()))
}

/// Says so on stderr if an input is a stream ([`stream_in`]), before
/// anything reads it.
pub(crate) fn refuse_streams(inputs: &[Input]) -> bool {
    let why = stream_in(inputs);
    if let Some(r) = &why {
        wf_core::warn!("wf: {r}");
    }
    why.is_some()
}

/// `wf feed --follow`: the records of the followed files go through a pipe,
/// which `wf feed` reads as one live stream; its first SIGINT/SIGTERM ends
/// the pump (a last poll, partial last lines handed on), the workers' input
/// ends, and feeding ends as at the end of any input.
pub(crate) fn feed(
    f: &FollowArgs,
    input: &super::args::InputArgs,
    mut opts: wf_core::feed::FeedOptions,
) -> ExitCode {
    let c = input.collect();
    if refuse_streams(&c.inputs) {
        return ExitCode::from(2);
    }
    let (waiting, mut failed) = waited(c.errors, input);
    let (mut fl, errors) = Follower::new(c.inputs, opts.sep, f.flush_after);
    fl.decompress = input.decompress;
    wait_for(&mut fl, waiting);
    failed |= say_errors(&errors);
    let (rd, mut wr) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => {
            wf_core::warn!("wf feed: cannot make a pipe: {e}");
            return ExitCode::from(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    opts.follow = Some(stop.clone());
    let stopped = stop.clone();
    let interval = f.interval;
    let pump = std::thread::spawn(move || {
        let wait = |d: Duration| wait_flag(&stop, d);
        let mut failed = false;
        let mut event = |e: &Event| failed |= say(std::slice::from_ref(e));
        let r = fl.pump(&mut wr, interval, &wait, &mut event);
        (r, failed | never_came(&fl))
    });
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}", rd.as_raw_fd());
    let stream = Input {
        name: "the followed files".into(),
        source: Source::Stream {
            path: Some(path.into()),
            decompress: wf_core::scan::Decompress::Never,
        },
        span: None,
    };
    let code = fed(wf_core::feed::run(vec![stream], &opts), failed);
    // Feeding ended (a signal, or every worker gone): the pump ends too.
    stopped.store(true, Ordering::SeqCst);
    drop(rd);
    match pump.join() {
        Ok((Ok(()), false)) => code,
        Ok((Ok(()), true)) => ExitCode::from(2),
        Ok((Err(e), _)) => {
            // The workers are gone (a broken pipe) or a file failed.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                wf_core::warn!("wf feed: --follow stopped: {e}");
            }
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

/// The exit status of a feed run, as `wf feed`'s (`failed`: an input could
/// not be followed).
fn fed(r: std::io::Result<wf_core::feed::FeedReport>, failed: bool) -> ExitCode {
    match r {
        Ok(r) => {
            say_errors(&r.input_errors);
            if failed || !r.input_errors.is_empty() || !r.failures.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            wf_core::warn!("wf feed: {e}");
            ExitCode::from(2)
        }
    }
}

/// Wait up to `d` for `flag` (set by `wf feed`'s signal watch), looking every
/// 100 ms; true once it is set.
fn wait_flag(flag: &AtomicBool, d: Duration) -> bool {
    let t = std::time::Instant::now();
    while !flag.load(Ordering::SeqCst) && t.elapsed() < d {
        std::thread::sleep((d - t.elapsed()).min(Duration::from_millis(100)));
    }
    flag.load(Ordering::SeqCst)
}
