//! The scan engine: a planner thread turns inputs into record-aligned work, worker
//! threads pull it and feed whole records to a job's per-thread state.
//!
//! Shape (each part's file says why it is shaped so, and cites the measurements):
//! - `plan.rs`: one planner thread sends chunk descriptors (largest files first)
//!   into a bounded channel (depth `inflight`, default 2 x threads); readahead
//!   hints for small files only, or for every chunk with `--readahead`.
//! - `regions.rs`: a file of more than one chunk is shared out as one region per
//!   worker, read front to back through a file description of the worker's own,
//!   with stealing of half a region at the end.
//! - `ahead.rs`: each worker in a region has a helper thread that reads the region
//!   into the page cache ahead of it, and the worker reads only what the helper
//!   has read.
//! - `range.rs`: workers read a chunk in small `pread`s into one reusable buffer
//!   each and pass the job the records that *start* inside it.
//! - `stream.rs`: streams (stdin, FIFOs, `<(...)`) are read front to back into
//!   record-aligned blocks, handed out like chunks; so are compressed files,
//!   decoded (`decompress.rs`), unless they can be cut at frame or member
//!   starts: then each part is decoded and parsed by a worker and the parts
//!   are joined after the workers are done (`split.rs`).
//! - A file that shrinks, vanishes or fails mid-run is an error for that file only,
//!   naming the bytes not read; a record cut short by it is never passed on.
//! - Threads: no more than the work can use (one per chunk of the regular files,
//!   at most [`MAX_THREADS`]); a thread the system refuses to start leaves the
//!   scan on the ones that did start, and an error says so.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel as chan;

use super::decompress::Decoded;
use super::inputs::{Input, InputError, Source};
use super::plan::plan;
use super::range::{Long, Unread};
use super::read_full_at;
use super::shared::{Shared, Work};
use super::split::{self, Part};
use super::worker::Worker;
use crate::jobs::Job;

pub use super::options::{
    Progress, ScanOptions, DEFAULT_AHEAD, DEFAULT_CHUNK, DEFAULT_MAX_RECORD, DEFAULT_READ,
    MAX_THREADS,
};

/// What a finished scan returns.
pub struct Outcome<S> {
    /// The merged job state.
    pub state: S,
    /// Inputs that could not be read (completely or in part).
    pub errors: Vec<InputError>,
    /// Bytes handed to the job.
    pub bytes: u64,
    /// Inputs read without error.
    pub files: u64,
    /// The decoding of compressed inputs.
    pub decoded: Decoded,
    inputs: Vec<Input>,
    spooled: Vec<Option<Arc<File>>>,
    ends: Vec<(usize, u64)>,
}

impl<S> Outcome<S> {
    /// The decoded bytes of stream or compressed input `input`, counted from
    /// its start (a span's skipped bytes too), if it was read to its end
    /// without error (`scan::state` keeps them).
    pub fn decoded_end(&self, input: usize) -> Option<u64> {
        let e = self.ends.iter().find(|e| e.0 == input)?;
        (!self
            .errors
            .iter()
            .any(|x| x.name == self.inputs[input].name))
        .then_some(e.1)
    }

    /// Read `len` bytes at `offset` of input `input` again (for jobs that report
    /// text, such as pangram windows). Streams can be read back only when the scan
    /// spooled them.
    pub fn read_range(&self, input: usize, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        match (&self.spooled[input], &self.inputs[input].source) {
            (Some(f), _) => read_at_most(f, offset, len),
            (None, Source::File { .. }) => read_back(&self.inputs[input], offset, len),
            (None, Source::Stream { .. } | Source::Compressed { .. }) => Err(io::Error::other(
                "a stream or compressed input that was not spooled cannot be read back",
            )),
        }
    }

    /// Split off the job state, keeping the rest (inputs, read-back).
    pub fn into_parts(self) -> (S, Outcome<()>) {
        (
            self.state,
            Outcome {
                state: (),
                errors: self.errors,
                bytes: self.bytes,
                files: self.files,
                decoded: self.decoded,
                inputs: self.inputs,
                spooled: self.spooled,
                ends: self.ends,
            },
        )
    }

    /// The inputs, in the order given (index = `Chunk::input`).
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }
}

/// Read `len` bytes at `offset` of an input again, from its file: directly
/// for a regular file, by decoding up to there for a compressed one (slow for
/// offsets deep into a big file; the CLI spools instead). An input that no
/// longer holds them is an error: a pangram state finished with the wrong
/// file (or one cut since) gave a window of empty or unrelated text.
pub fn read_back(input: &Input, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let buf = match &input.source {
        Source::File { path, .. } => read_at_most(&File::open(path)?, offset, len)?,
        Source::Compressed { .. } => {
            use std::io::Read;
            let mut src = super::stream::open_stream(&input.source, None)?;
            io::copy(&mut (&mut src).take(offset), &mut io::sink())?;
            let mut buf = Vec::with_capacity(len);
            src.take(len as u64).read_to_end(&mut buf)?;
            buf
        }
        Source::Stream { .. } => return Err(io::Error::other("a stream cannot be read back")),
    };
    if buf.len() < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{}: {len} bytes at byte {offset} asked, {} there: not the input read (or cut since)",
                input.name,
                buf.len()
            ),
        ));
    }
    Ok(buf)
}

/// Up to `len` bytes of `f` at `offset` (fewer at its end).
fn read_at_most(f: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let n = read_full_at(f, &mut buf, offset)?;
    buf.truncate(n);
    Ok(buf)
}

/// Run `job` over `inputs` on `opts.threads` threads (no more than the work
/// can use, see [`useful_threads`]).
pub fn run<J: Job>(
    job: &J,
    inputs: Vec<Input>,
    opts: &ScanOptions,
    progress: Option<&Progress>,
) -> Outcome<J::State> {
    let chunk = opts.chunk_size.max(1);
    let mut opts = opts.clone();
    opts.threads = useful_threads(&inputs, opts.threads, chunk);
    let depth = if opts.inflight == 0 {
        opts.threads * 2
    } else {
        opts.inflight
    };
    let (tx, rx) = chan::bounded::<Work>(depth);
    let (pool_tx, pool_rx) = chan::unbounded::<Vec<u8>>();
    let shared = Shared {
        errors: Mutex::new(Vec::new()),
        unread: Mutex::new(Vec::new()),
        too_long: Mutex::new(Vec::new()),
        bytes: AtomicU64::new(0),
        progress,
        meter: Arc::default(),
        split: !job.offsets() && !opts.spool_streams,
        long: Long::of(job, opts.max_record),
        ends: Mutex::default(),
    };
    let spooled: Vec<Mutex<Option<Arc<File>>>> = inputs.iter().map(|_| Mutex::new(None)).collect();
    if let Some(p) = progress {
        p.total.store(file_bytes(&inputs), Ordering::Relaxed);
    }
    let mut refused = None;
    let opts = &opts;
    let merged = std::thread::scope(|s| {
        let (inputs, shared, spooled) = (&inputs, &shared, &spooled);
        // The workers first: the plan is made for those that started.
        let handles = start_workers(s, job, opts, shared, &pool_tx, &rx, &mut refused);
        drop(rx);
        let workers = handles.len();
        let pool_rx = &pool_rx;
        let planning = move |tx: chan::Sender<Work>| {
            plan(inputs, opts, workers, chunk, &tx, pool_rx, shared, spooled)
        };
        if workers > 0 {
            let mine = tx.clone();
            let planner = std::thread::Builder::new()
                .name("wf-plan".into())
                .spawn_scoped(s, move || planning(mine));
            if let Err(e) = planner {
                // Plan on this thread, then: the workers wait for it.
                refused.get_or_insert(e);
                planning(tx.clone());
            }
        }
        // The workers end when the plan's sender is gone too.
        drop(tx);
        merge_workers(job, handles, opts.sep, shared)
    });
    let mut out = outcome(merged, shared, inputs, spooled);
    if let Some(e) = refused {
        out.errors.push(threads_refused(opts, &e));
    }
    out
}

/// The worker threads: as many of `opts.threads` as the system lets start
/// (the first refusal is kept in `refused`).
fn start_workers<'s, 'e, J: Job>(
    s: &'s std::thread::Scope<'s, 'e>,
    job: &'e J,
    opts: &'e ScanOptions,
    shared: &'e Shared<'e>,
    pool: &chan::Sender<Vec<u8>>,
    rx: &chan::Receiver<Work>,
    refused: &mut Option<io::Error>,
) -> Vec<WorkerHandle<'s, J::State>> {
    let mut handles = Vec::with_capacity(opts.threads);
    for _ in 0..opts.threads {
        let worker = Worker::new(job, opts, shared, pool.clone());
        let rx = rx.clone();
        // Named, so that perf tells scan work from the threads that
        // started it (a thread otherwise inherits its parent's name).
        let started = std::thread::Builder::new()
            .name("wf-scan".into())
            .spawn_scoped(s, move || worker.run(rx));
        match started {
            Ok(h) => handles.push(h),
            Err(e) => {
                *refused = Some(e);
                break;
            }
        }
    }
    handles
}

type WorkerHandle<'s, S> = std::thread::ScopedJoinHandle<'s, (S, Vec<Part<S>>)>;

/// Join the workers and merge their states (and the parts of compressed files).
fn merge_workers<J: Job>(
    job: &J,
    handles: Vec<WorkerHandle<'_, J::State>>,
    sep: u8,
    shared: &Shared,
) -> J::State {
    let mut merged: Option<J::State> = None;
    let mut parts = Vec::new();
    for h in handles {
        let (st, p) = h.join().expect("worker thread panicked");
        parts.extend(p);
        match merged.as_mut() {
            None => merged = Some(st),
            Some(m) => job.merge(m, st),
        }
    }
    let mut merged = merged.unwrap_or_else(|| job.new_state());
    join_parts(job, &mut merged, parts, sep, shared);
    merged
}

/// The error of a scan that could not start all its threads.
fn threads_refused(opts: &ScanOptions, e: &io::Error) -> InputError {
    let why = super::io_message(e);
    let message =
        format!("could not start a scan thread ({why}); ran on the threads that started, if any");
    InputError::new(format!("-j {}", opts.threads), message).of_kind(e.kind())
}

/// Worker threads worth starting for `inputs`: `asked` (at least 1), no more
/// than [`MAX_THREADS`], and no more than the chunks of the regular files when
/// every input is one (a stream or compressed file can keep any number busy).
pub fn useful_threads(inputs: &[Input], asked: usize, chunk: u64) -> usize {
    let mut chunks = 0u64;
    for i in inputs {
        match i.source {
            Source::File { size, .. } => {
                let (s, e) = i.span.unwrap_or((0, size));
                let len = e.min(size).saturating_sub(s);
                chunks = chunks.saturating_add(len.div_ceil(chunk).max(1));
            }
            Source::Stream { .. } | Source::Compressed { .. } => chunks = u64::MAX,
        }
    }
    let most = usize::try_from(chunks)
        .unwrap_or(usize::MAX)
        .clamp(1, MAX_THREADS);
    asked.clamp(1, most)
}

/// Join the parts of each compressed file decoded in parts (`split.rs`).
fn join_parts<J: Job>(
    job: &J,
    state: &mut J::State,
    mut parts: Vec<Part<J::State>>,
    sep: u8,
    shared: &Shared,
) {
    parts.sort_by_key(|p| (p.parts.input, p.start));
    while !parts.is_empty() {
        let input = parts[0].parts.input;
        let n = parts.partition_point(|p| p.parts.input == input);
        let file: Vec<_> = parts.drain(..n).collect();
        let meter = Some(&shared.meter);
        let bytes = split::resolve(job, state, file, sep, meter, |e| shared.error(input, e));
        shared.account(bytes);
    }
}

/// Bytes of the regular files among `inputs` (known up front).
fn file_bytes(inputs: &[Input]) -> u64 {
    inputs
        .iter()
        .map(|i| match i.source {
            Source::File { size, .. } => size,
            _ => 0,
        })
        .sum()
}

/// Each input's unread ranges as one error of it ([`Unread::summary`]).
fn unread_errors(unread: Vec<(usize, Unread)>, inputs: usize) -> Vec<(usize, InputError)> {
    let mut by_input: Vec<Vec<Unread>> = vec![Vec::new(); inputs];
    for (i, u) in unread {
        by_input[i].push(u);
    }
    let summaries = by_input.into_iter().map(Unread::summary).enumerate();
    summaries
        .filter_map(|(i, s)| Some((i, InputError::new(String::new(), s?))))
        .collect()
}

/// Each input's records refused as longer than `--max-record` ([`Long`]) as
/// one error of it: all of them counted, the first few named by offset, the
/// same whatever the threads (the first one a worker happened to report was
/// named, and the others not counted).
pub fn too_long_errors(mut refused: Vec<(usize, u64)>, limit: usize) -> Vec<(usize, InputError)> {
    refused.sort_unstable();
    refused
        .chunk_by(|a, b| a.0 == b.0)
        .map(|recs| {
            let at: Vec<String> = recs.iter().take(3).map(|r| r.1.to_string()).collect();
            let msg = match recs.len() {
                1 => format!(
                    "record at byte {} is longer than --max-record ({limit} bytes): skipped",
                    at[0]
                ),
                n => format!(
                    "{n} records longer than --max-record ({limit} bytes) skipped, at bytes {}{}",
                    at.join(", "),
                    if n > 3 { ", ..." } else { "" }
                ),
            };
            (recs[0].0, InputError::new(String::new(), msg))
        })
        .collect()
}

/// The finished scan: the merged state, one error per input that had any (its
/// unread bytes first, else the first reported, a stream's decoding error
/// among them, else its records too long: a gzip stream cut short with a
/// long record was said to have that record skipped only), and the files
/// read without error.
fn outcome<S>(
    state: S,
    shared: Shared,
    inputs: Vec<Input>,
    spooled: Vec<Mutex<Option<Arc<File>>>>,
) -> Outcome<S> {
    let mut bad = vec![false; inputs.len()];
    let mut errs = unread_errors(shared.unread.into_inner().unwrap(), inputs.len());
    errs.extend(shared.errors.into_inner().unwrap());
    let limit = shared.long.limit;
    errs.extend(too_long_errors(
        shared.too_long.into_inner().unwrap(),
        limit,
    ));
    // A stable sort: the first of an input's errors is kept.
    errs.sort_by_key(|e| e.0);
    errs.dedup_by(|a, b| a.0 == b.0);
    let errors = errs
        .into_iter()
        .map(|(i, err)| {
            bad[i] = true;
            InputError {
                name: inputs[i].name.clone(),
                ..err
            }
        })
        .collect();
    Outcome {
        state,
        ends: shared.ends.into_inner().unwrap(),
        errors,
        decoded: shared.meter.totals(),
        bytes: shared.bytes.into_inner(),
        files: bad.iter().filter(|b| !**b).count() as u64,
        spooled: spooled
            .into_iter()
            .map(|m| m.into_inner().unwrap())
            .collect(),
        inputs,
    }
}
