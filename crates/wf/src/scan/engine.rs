//! The scan engine: a planner thread turns inputs into record-aligned work, worker
//! threads pull it and feed whole records to a job's per-thread state.
//!
//! Shape, and why:
//! - One planner thread sends chunk descriptors (largest files first) into a bounded
//!   channel (depth `inflight`, default 2 x threads). Readahead hints are opt-in
//!   (`--readahead`: `POSIX_FADV_WILLNEED` on each queued chunk): measured cold on
//!   this machine's virtio disk (1 GiB, medians of 7), `wf count` took 0.37 s with
//!   the hints and 0.26 s without (`wc -l` 0.32 s), and `wf wf2` 0.67 s vs 0.52 s;
//!   issuing the hint from each worker for its own chunk was worse still (0.75 s).
//!   The kernel's own sequential readahead on each worker's `pread`s does better.
//!   Small files are the exception: the planner hints whole files of one chunk
//!   or less up to 32 MiB / 64 files ahead. Cold, on 1,218 book files of about
//!   430 KB, `wf pangram` took 1.25x the time of the best `xargs -P N cat` with
//!   no hints and 0.92x with them; warm, no difference.
//! - A file of more than one chunk is shared out as one region per worker, read
//!   front to back through a file description of the worker's own, with stealing
//!   of half a region at the end ([`Regions`]): cold, on 1 GiB with two workers,
//!   the time they spent waiting in `pread` fell from 166-226 ms to 58-132 ms per
//!   run (8 interleaved runs each, those with the disk in its fast mode).
//! - Each worker in a region has a helper thread that reads the region into the
//!   page cache up to `--ahead` (64 MiB) beyond it, and the worker reads only what
//!   the helper has read ([`ReadAhead`]): one stream of 4 MiB requests per region
//!   that never waits for the parser. Cold, 1 GiB, 15 interleaved runs (2026-11-24):
//!   `wf wf2` 0.88x the time of `wc -l` with helpers, 1.08x without; `wf count`
//!   0.83x. Warm, no difference (0.303 s against 0.301 s).
//! - Workers read a chunk in small `pread`s (`read_size`, 32 KiB) into one reusable
//!   buffer each: one channel receive (or one claim under a lock, for regions) per
//!   chunk of megabytes, never a lock per record. A chunk owns the
//!   records that *start* inside it; the worker reads the byte before the chunk to
//!   find its first record and reads past the end to finish its last one, so no
//!   planning pass over the data is needed.
//! - Streams (stdin, FIFOs, `<(...)`) cannot be split by offset: the planner reads
//!   them front to back in chunk-sized blocks cut after the last record separator
//!   and hands the blocks out like chunks (buffers are recycled).
//! - A file that shrinks, vanishes or fails mid-run is an error for that file only.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel as chan;

use super::inputs::{Input, InputError, Source};
use crate::jobs::{Chunk, Job};

/// How to run a scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Worker threads.
    pub threads: usize,
    /// Nominal chunk size in bytes (records longer than this still work).
    pub chunk_size: u64,
    /// Bytes per `pread` within a chunk. Small reads keep the kernel's copy
    /// destination in L1: on this machine 32 KiB reads copy at about 8 GB/s, 64 KiB
    /// and larger at about 2 GB/s (see the README).
    pub read_size: usize,
    /// Record separator.
    pub sep: u8,
    /// Chunks queued (and read ahead) beyond the ones being processed.
    pub inflight: usize,
    /// Ask the kernel to read queued chunks ahead (`POSIX_FADV_WILLNEED`); off by
    /// default, since it measured slower here (see the module comment).
    pub readahead: bool,
    /// Map regular files (`mmap`) instead of reading them with `pread`. Saves the
    /// copy, but a file truncated while mapped would kill the process (SIGBUS),
    /// so it is opt-in (`--mmap`).
    pub mmap: bool,
    /// Bytes a helper thread per worker reads ahead of the worker in a file split
    /// into regions (see [`ReadAhead`]); 0 turns the helpers off.
    pub ahead: u64,
    /// Copy streams to an unlinked temporary file first, so the job can read
    /// ranges back afterwards (see [`Outcome::read_range`]).
    pub spool_streams: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        ScanOptions {
            threads,
            chunk_size: DEFAULT_CHUNK,
            read_size: DEFAULT_READ,
            sep: b'\n',
            inflight: 0,
            readahead: false,
            mmap: false,
            ahead: DEFAULT_AHEAD,
            spool_streams: false,
        }
    }
}

/// Default chunk size: 8 MiB (see the README's chunk-size sweep).
pub const DEFAULT_CHUNK: u64 = 8 << 20;

/// Default read size within a chunk: 32 KiB.
pub const DEFAULT_READ: usize = 32 << 10;

/// Default distance a [`ReadAhead`] helper keeps ahead of its worker: 64 MiB.
pub const DEFAULT_AHEAD: u64 = 64 << 20;

/// Live counters a progress display can read.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of regular files planned (known up front).
    pub total: AtomicU64,
    /// Bytes processed so far.
    pub done: AtomicU64,
}

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
    inputs: Vec<Input>,
    spooled: Vec<Option<Arc<File>>>,
}

impl<S> Outcome<S> {
    /// Read `len` bytes at `offset` of input `input` again (for jobs that report
    /// text, such as pangram windows). Streams can be read back only when the scan
    /// spooled them.
    pub fn read_range(&self, input: usize, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        let n = match (&self.spooled[input], &self.inputs[input].source) {
            (Some(f), _) => read_full_at(f, &mut buf, offset)?,
            (None, Source::File { path, .. }) => {
                read_full_at(&File::open(path)?, &mut buf, offset)?
            }
            (None, Source::Stream { .. }) => {
                return Err(io::Error::other(
                    "a stream that was not spooled cannot be read back",
                ))
            }
        };
        buf.truncate(n);
        Ok(buf)
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
                inputs: self.inputs,
                spooled: self.spooled,
            },
        )
    }

    /// The inputs, in the order given (index = `Chunk::input`).
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }
}

enum Work {
    /// One worker's share of a big file (see [`Regions`]); a file is sent once per
    /// worker.
    Regions(Arc<Regions>),
    Range {
        input: usize,
        file: Arc<File>,
        start: u64,
        end: u64,
        size: u64,
    },
    Mapped {
        input: usize,
        map: Arc<memmap2::Mmap>,
        start: u64,
        end: u64,
    },
    Block {
        input: usize,
        offset: u64,
        buf: Vec<u8>,
        len: usize,
    },
}

/// Read as much of `buf` as the file has at `offset`; returns bytes read (short
/// only at end of file).
fn read_full_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

fn fadvise(f: &File, offset: u64, len: u64, advice: libc::c_int) {
    // Advice only: failures (e.g. on file systems without readahead) are harmless.
    unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            advice,
        );
    }
}

struct Shared {
    errors: Mutex<Vec<(usize, String)>>,
}

impl Shared {
    fn error(&self, input: usize, msg: String) {
        self.errors.lock().unwrap().push((input, msg));
    }
}

/// Run `job` over `inputs` on `opts.threads` threads.
pub fn run<J: Job>(
    job: &J,
    inputs: Vec<Input>,
    opts: &ScanOptions,
    progress: Option<&Progress>,
) -> Outcome<J::State> {
    let threads = opts.threads.max(1);
    let chunk = opts.chunk_size.max(1);
    let depth = if opts.inflight == 0 {
        threads * 2
    } else {
        opts.inflight
    };
    let (tx, rx) = chan::bounded::<Work>(depth);
    let (pool_tx, pool_rx) = chan::unbounded::<Vec<u8>>();
    let shared = Shared {
        errors: Mutex::new(Vec::new()),
    };
    let spooled: Vec<Mutex<Option<Arc<File>>>> = inputs.iter().map(|_| Mutex::new(None)).collect();
    let bytes = AtomicU64::new(0);

    if let Some(p) = progress {
        let total: u64 = inputs
            .iter()
            .map(|i| match i.source {
                Source::File { size, .. } => size,
                _ => 0,
            })
            .sum();
        p.total.store(total, Ordering::Relaxed);
    }

    let mut merged: Option<J::State> = None;
    std::thread::scope(|s| {
        // Planner.
        let shared_ref = &shared;
        let spooled_ref = &spooled;
        let inputs_ref = &inputs;
        s.spawn(move || {
            plan(
                inputs_ref,
                opts,
                chunk,
                &tx,
                &pool_rx,
                shared_ref,
                spooled_ref,
            );
            drop(tx);
        });
        let mut handles = Vec::with_capacity(threads);
        for _ in 0..threads {
            let rx = rx.clone();
            let pool_tx = pool_tx.clone();
            let shared = &shared;
            let bytes = &bytes;
            handles.push(s.spawn(move || {
                let mut state = job.new_state();
                let mut buf: Vec<u8> = Vec::new();
                // Read the records a range owns; a failure is the file's error, and
                // its range counts as done.
                let read = |state: &mut J::State,
                            buf: &mut Vec<u8>,
                            input: usize,
                            file: &File,
                            start: u64,
                            end: u64,
                            size: u64,
                            reach: &dyn Fn(u64)| {
                    process_range(
                        job,
                        state,
                        buf,
                        input,
                        file,
                        (start, end, size),
                        opts.read_size,
                        opts.sep,
                        reach,
                    )
                    .unwrap_or_else(|e| {
                        shared.error(input, e);
                        end - start
                    })
                };
                let account = |n: u64| {
                    bytes.fetch_add(n, Ordering::Relaxed);
                    if let Some(p) = progress {
                        p.done.fetch_add(n, Ordering::Relaxed);
                    }
                };
                for w in rx.iter() {
                    let n = match w {
                        Work::Regions(r) => {
                            let own = r.own_file();
                            let mut region = None;
                            let link = AheadLink::new();
                            std::thread::scope(|hs| {
                                let ahead = ReadAhead::start(hs, &r, &link, opts.ahead);
                                let reach = |end: u64| {
                                    if let Some(a) = &ahead {
                                        a.reach(end);
                                    }
                                };
                                let mut next = None;
                                while let Some((start, end)) = r.take(&mut region) {
                                    if let Some(a) = &ahead {
                                        if next != Some(start) {
                                            a.jump(start);
                                        }
                                    }
                                    next = Some(end);
                                    account(read(
                                        &mut state, &mut buf, r.input, &own, start, end, r.size,
                                        &reach,
                                    ));
                                }
                                // The helper stops when dropped; the scope waits for it.
                                drop(ahead);
                            });
                            continue;
                        }
                        Work::Range {
                            input,
                            file,
                            start,
                            end,
                            size,
                        } => read(
                            &mut state,
                            &mut buf,
                            input,
                            &file,
                            start,
                            end,
                            size,
                            &|_| {},
                        ),
                        Work::Mapped {
                            input,
                            map,
                            start,
                            end,
                        } => process_mapped(job, &mut state, input, &map, start, end, opts.sep),
                        Work::Block {
                            input,
                            offset,
                            buf: b,
                            len,
                        } => {
                            if len > 0 {
                                job.process(
                                    &mut state,
                                    &Chunk {
                                        input,
                                        offset,
                                        data: &b[..len],
                                    },
                                );
                            }
                            let _ = pool_tx.send(b);
                            len as u64
                        }
                    };
                    account(n);
                }
                state
            }));
        }
        drop(rx);
        for h in handles {
            let st = h.join().expect("worker thread panicked");
            match merged.as_mut() {
                None => merged = Some(st),
                Some(m) => job.merge(m, st),
            }
        }
    });

    let mut bad = vec![false; inputs.len()];
    let mut errs = shared.errors.into_inner().unwrap();
    errs.sort_by_key(|e| e.0);
    errs.dedup_by(|a, b| a.0 == b.0);
    let errors = errs
        .into_iter()
        .map(|(i, message)| {
            bad[i] = true;
            InputError {
                name: inputs[i].name.clone(),
                message,
            }
        })
        .collect();
    Outcome {
        state: merged.unwrap_or_else(|| job.new_state()),
        errors,
        bytes: bytes.into_inner(),
        files: bad.iter().filter(|b| !**b).count() as u64,
        spooled: spooled
            .into_iter()
            .map(|m| m.into_inner().unwrap())
            .collect(),
        inputs,
    }
}

fn plan(
    inputs: &[Input],
    opts: &ScanOptions,
    chunk: u64,
    tx: &chan::Sender<Work>,
    pool: &chan::Receiver<Vec<u8>>,
    shared: &Shared,
    spooled: &[Mutex<Option<Arc<File>>>],
) {
    let threads = opts.threads.max(1);
    // Regular files, largest first; then streams in the order given.
    let mut files: Vec<(usize, u64)> = Vec::new();
    let mut streams: Vec<usize> = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        match inp.source {
            Source::File { size, .. } => files.push((i, size)),
            Source::Stream { .. } => streams.push(i),
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));

    let mut spooled_files: Vec<(usize, Arc<File>)> = Vec::new();
    if opts.spool_streams {
        for &i in &streams {
            match spool(&inputs[i].source) {
                Ok(f) => {
                    let f = Arc::new(f);
                    *spooled[i].lock().unwrap() = Some(f.clone());
                    spooled_files.push((i, f));
                }
                Err(e) => shared.error(i, e.to_string()),
            }
        }
        streams.clear();
    }

    let send_file = |i: usize, file: Arc<File>| -> bool {
        let size = match file.metadata() {
            Ok(md) => md.len(),
            Err(e) => {
                shared.error(i, e.to_string());
                return true;
            }
        };
        if opts.readahead {
            fadvise(&file, 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
        if size == 0 {
            return tx
                .send(Work::Range {
                    input: i,
                    file,
                    start: 0,
                    end: 0,
                    size,
                })
                .is_ok();
        }
        let map = if opts.mmap {
            // Safety: the map is read-only; a concurrent truncation is the documented
            // risk of --mmap.
            match unsafe { memmap2::Mmap::map(&*file) } {
                Ok(m) => Some(Arc::new(m)),
                Err(e) => {
                    shared.error(i, crate::scan::io_message(&e));
                    return true;
                }
            }
        } else {
            None
        };
        if map.is_none() && !opts.readahead && threads > 1 && size > chunk {
            let r = Arc::new(Regions::new(i, file, size, chunk, threads));
            return (0..threads).all(|_| tx.send(Work::Regions(r.clone())).is_ok());
        }
        let mut start = 0;
        while start < size {
            let end = (start + chunk).min(size);
            if let Some(m) = &map {
                if opts.readahead {
                    let _ = m.advise_range(
                        memmap2::Advice::WillNeed,
                        start as usize,
                        (end - start) as usize,
                    );
                }
                if tx
                    .send(Work::Mapped {
                        input: i,
                        map: m.clone(),
                        start,
                        end,
                    })
                    .is_err()
                {
                    return false;
                }
                start = end;
                continue;
            }
            if opts.readahead {
                fadvise(&file, start, end - start, libc::POSIX_FADV_WILLNEED);
            }
            if tx
                .send(Work::Range {
                    input: i,
                    file: file.clone(),
                    start,
                    end,
                    size,
                })
                .is_err()
            {
                return false;
            }
            start = end;
        }
        true
    };

    // Small files (one chunk each) are opened and hinted (`POSIX_FADV_WILLNEED`)
    // up to SMALL_AHEAD_BYTES / SMALL_AHEAD_FILES before their turn, so that a cold
    // device has many requests queued; the kernel's own readahead has no time to
    // ramp up within a file of a few hundred KB. Big files' chunks are not hinted
    // (see the module comment). `--readahead` hints every chunk instead.
    let small = |size: u64| !opts.readahead && !opts.mmap && size > 0 && size <= chunk;
    let open = |i: usize| match &inputs[i].source {
        Source::File { path, .. } => File::open(path),
        Source::Stream { .. } => unreachable!(),
    };
    let mut ahead: std::collections::VecDeque<(usize, u64, io::Result<File>)> =
        std::collections::VecDeque::new();
    let mut ahead_bytes = 0u64;
    let mut next = files.iter().copied().peekable();
    loop {
        while ahead.len() < SMALL_AHEAD_FILES && ahead_bytes < SMALL_AHEAD_BYTES {
            let Some(&(i, size)) = next.peek() else { break };
            if !small(size) && !ahead.is_empty() {
                break;
            }
            next.next();
            let f = open(i);
            if small(size) {
                if let Ok(f) = &f {
                    fadvise(f, 0, 0, libc::POSIX_FADV_WILLNEED);
                }
                ahead_bytes += size;
            }
            ahead.push_back((i, size, f));
            if !small(size) {
                break;
            }
        }
        let Some((i, size, f)) = ahead.pop_front() else {
            break;
        };
        if small(size) {
            ahead_bytes -= size;
        }
        match f {
            Ok(f) => {
                if !send_file(i, Arc::new(f)) {
                    return;
                }
            }
            Err(e) => shared.error(i, crate::scan::io_message(&e)),
        }
    }
    for (i, f) in spooled_files {
        if !send_file(i, f) {
            return;
        }
    }
    for i in streams {
        if let Err(e) = stream_blocks(i, &inputs[i].source, chunk, opts.sep, tx, pool) {
            shared.error(i, crate::scan::io_message(&e));
        }
    }
}

/// A file of more than one chunk, shared out as one region per worker: each
/// worker reads its region's chunks front to back through a file description of
/// its own, so that the kernel's readahead sees one sequential stream per worker;
/// a worker whose region is done takes regions nobody took, then the back half of
/// the region with the most left, and so on. Chunks lie on the same grid as without
/// regions (multiples of the chunk size), so the records each one owns are the
/// same.
///
/// Why: with chunks handed out in file order, the workers took turns through one
/// file description, and its single readahead state never saw a sequential
/// stream: cold, a worker waited in `pread` at almost every chunk start (1 GiB,
/// `wf wf2`, two workers: 166-226 ms of waiting per run; with regions 58-132 ms).
/// A description per worker with chunks still in file order was worse, and so was
/// one per chunk: each new position starts the kernel's readahead from nothing.
struct Regions {
    input: usize,
    file: Arc<File>,
    size: u64,
    chunk: u64,
    left: Mutex<RegionsLeft>,
}

struct RegionsLeft {
    /// `[front, back)` of each region not yet taken.
    ranges: Vec<(u64, u64)>,
    /// Regions not yet claimed by a worker, lowest first.
    unclaimed: std::ops::Range<usize>,
}

impl Regions {
    fn new(input: usize, file: Arc<File>, size: u64, chunk: u64, workers: usize) -> Self {
        let chunks = size.div_ceil(chunk);
        let n = (workers as u64).min(chunks);
        let edge = |r: u64| (chunks * r / n * chunk).min(size);
        let ranges: Vec<(u64, u64)> = (0..n).map(|r| (edge(r), edge(r + 1))).collect();
        Regions {
            input,
            file,
            size,
            chunk,
            left: Mutex::new(RegionsLeft {
                unclaimed: 0..ranges.len(),
                ranges,
            }),
        }
    }

    /// A file description of the caller's own for the same file (its own
    /// readahead state), or the shared one where it cannot be had.
    fn own_file(&self) -> Arc<File> {
        #[cfg(target_os = "linux")]
        if let Ok(f) = File::open(format!("/proc/self/fd/{}", self.file.as_raw_fd())) {
            return Arc::new(f);
        }
        self.file.clone()
    }

    /// The next chunk for a worker whose region is `*region` (`None` before it
    /// has one): the front chunk of its region, else of a region nobody claimed
    /// (which becomes its region), else the first chunk of the back half of the
    /// region with the most left (that half becomes its region). `None` when the
    /// whole file is taken.
    fn take(&self, region: &mut Option<usize>) -> Option<(u64, u64)> {
        let mut l = self.left.lock().unwrap();
        loop {
            if let Some(r) = *region {
                let (a, b) = l.ranges[r];
                if a < b {
                    let e = (a + self.chunk).min(b);
                    l.ranges[r].0 = e;
                    return Some((a, e));
                }
            }
            if let Some(r) = l.unclaimed.next() {
                *region = Some(r);
                continue;
            }
            // The back half of the region with the most left, in whole chunks (its
            // one chunk, when only one is left), becomes the caller's region, read
            // front to back: one more sequential stream, not one per chunk.
            let r = (0..l.ranges.len()).max_by_key(|&r| l.ranges[r].1 - l.ranges[r].0)?;
            let (a, b) = l.ranges[r];
            if a >= b {
                return None;
            }
            let n = (b - a).div_ceil(self.chunk);
            let s = if n == 1 {
                a
            } else {
                a + n.div_ceil(2) * self.chunk
            };
            l.ranges[r].1 = s;
            l.ranges.push((s, b));
            *region = Some(l.ranges.len() - 1);
        }
    }
}

/// A helper thread that reads a worker's region into the page cache ahead of the
/// worker, and the gate through which the worker waits for it: while a helper
/// runs, it is the only reader that goes to the disk for that region.
///
/// Why: cold, the kernel's own readahead behind a worker's `pread`s starts the next
/// window only when the worker reaches the current one; a worker that spends its
/// time parsing (`wf wf2`) gets there late, and the disk waits with it. Sampling
/// `/proc/diskstats` every 5 ms during cold 1 GiB runs (2026-11-24, 5 runs each):
/// `wf wf2` without helpers left the disk idle in 20% of samples (`wc -l`: 11%,
/// `wf count`: 7%). A helper that read ahead while the worker also read for itself
/// kept the disk busy (6% idle) but halved the requests (4 MiB to 1.9 MiB; 1.5 MiB
/// for `wf count`, which was then slower than without helpers, 1.12x `wc -l`
/// against 0.92x): two readahead streams met at the front of the same region.
/// Hence the gate: the worker asks for each piece through [`ReadAhead::reach`] and
/// reads it once the helper has it, so each region is one stream of large requests
/// that never waits for the parser.
///
/// The helper reads with `sendfile` to `/dev/null`: the pages pass through the
/// ordinary read path, whose readahead issues large requests (4 MiB here, like
/// `cat`), and nothing is copied to user space. Hints (`POSIX_FADV_WILLNEED`,
/// `readahead(2)`) were tried in its place and issued three times as many, smaller
/// requests, and the run was slower (0.72-0.91 s against 0.51 s). Ranges the page
/// cache already holds (`mincore`) are skipped, so a warm run pays almost nothing.
///
/// The gate never decides what is read, only when: the worker still reads every
/// byte itself, so a helper that is slow, fails or guesses wrong costs time, never
/// a wrong result. Positions carry an epoch (the top 16 bits) that the worker moves
/// on at each jump to a new region, so progress made in the old one never opens
/// the gate in the new one.
struct ReadAhead<'scope> {
    link: &'scope AheadLink,
    thread: std::thread::ScopedJoinHandle<'scope, ()>,
    /// The worker's current epoch and the last position it published.
    epoch: std::cell::Cell<u64>,
    asked: std::cell::Cell<u64>,
    /// How far the worker may move before it tells the helper again.
    every: u64,
}

/// What a worker and its helper share.
#[derive(Debug)]
struct AheadLink {
    /// Worker -> helper: epoch << 48 | where the worker's current region starts
    /// (set before `asked` at each jump).
    start: AtomicU64,
    /// Worker -> helper: epoch << 48 | the offset the worker needs read up to
    /// (exclusive); [`AHEAD_STOP`] when the worker is done.
    asked: AtomicU64,
    /// Helper -> worker: epoch << 48 | the offset up to which the region is read.
    ready: AtomicU64,
    /// The helper has ended (done, failed or stopped): the gate stays open.
    gone: std::sync::atomic::AtomicBool,
    /// The worker's thread, to wake it when `ready` moves.
    worker: std::thread::Thread,
}

/// [`AheadLink::asked`] once the worker is done.
const AHEAD_STOP: u64 = u64::MAX;

/// Bits of an [`AheadLink`] position that hold the offset (256 TiB).
const AHEAD_OFFSET_BITS: u32 = 48;
const AHEAD_OFFSET_MASK: u64 = (1 << AHEAD_OFFSET_BITS) - 1;

/// Bytes per `sendfile` of a [`ReadAhead`] helper.
const AHEAD_STEP: u64 = 1 << 20;

impl AheadLink {
    fn new() -> Self {
        AheadLink {
            start: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            ready: AtomicU64::new(0),
            gone: false.into(),
            worker: std::thread::current(),
        }
    }
}

impl<'scope> ReadAhead<'scope> {
    /// Start a helper for the worker on this thread; `None` where it is off
    /// (`ahead` 0), the file is larger than a position can hold, or it cannot
    /// run here.
    fn start<'env>(
        s: &'scope std::thread::Scope<'scope, 'env>,
        r: &Regions,
        link: &'scope AheadLink,
        ahead: u64,
    ) -> Option<Self> {
        if ahead == 0 || r.size > AHEAD_OFFSET_MASK || !cfg!(target_os = "linux") {
            return None;
        }
        // A description of its own: the helper's sequential reads get their own
        // readahead state.
        let file = r.own_file();
        let null = File::options().write(true).open("/dev/null").ok()?;
        // Mapped only to ask `mincore` what is cached: never read through, so a
        // file truncated meanwhile cannot fault here.
        // SAFETY: see above; the map is dropped before the file.
        let map = unsafe { memmap2::Mmap::map(&*file) }.ok();
        let size = r.size;
        let thread = s.spawn(move || {
            read_ahead(&file, &null, map.as_deref(), size, link, ahead);
            link.gone.store(true, Ordering::Release);
            link.worker.unpark();
        });
        Some(ReadAhead {
            link,
            thread,
            epoch: 0.into(),
            asked: 0.into(),
            every: (ahead / 4).max(1),
        })
    }

    /// The worker starts reading a new region at `offset` (the byte before it
    /// included, where the worker looks for its first record).
    fn jump(&self, offset: u64) {
        let epoch = (self.epoch.get() + 1) & (u64::MAX >> AHEAD_OFFSET_BITS);
        self.epoch.set(epoch);
        let at = epoch << AHEAD_OFFSET_BITS | offset.saturating_sub(1);
        self.link.start.store(at, Ordering::Release);
        self.publish(at);
    }

    /// Wait until the helper has read `[.., end)` (or has ended). The helper is
    /// told where the worker is only every quarter of `ahead` and when the worker
    /// has to wait: told at every 32 KiB piece, the helper was woken so often
    /// that a warm 1 GiB `wf wf2` spent 0.44 s in the kernel against 0.17 s.
    fn reach(&self, end: u64) {
        let want = self.epoch.get() << AHEAD_OFFSET_BITS | end.min(AHEAD_OFFSET_MASK);
        let open = || {
            self.link.ready.load(Ordering::Acquire) >= want
                || self.link.gone.load(Ordering::Acquire)
        };
        let asked = self.asked.get();
        if want >= asked.saturating_add(self.every) || (want > asked && !open()) {
            self.publish(want);
        }
        let mut spun = 0;
        while !open() {
            if spun < 64 {
                spun += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park_timeout(std::time::Duration::from_millis(5));
            }
        }
    }

    fn publish(&self, at: u64) {
        self.asked.set(at);
        self.link.asked.store(at, Ordering::Release);
        self.thread.thread().unpark();
    }
}

/// Dropped (the worker is done, or its job panicked): the helper stops, and the
/// scope it runs in can end.
impl Drop for ReadAhead<'_> {
    fn drop(&mut self) {
        self.link.asked.store(AHEAD_STOP, Ordering::Release);
        self.thread.thread().unpark();
    }
}

/// The helper's loop: keep the worker's epoch read from where it jumped to
/// `ahead` bytes past what it last asked for, `AHEAD_STEP` at a time, and publish
/// each step in `link.ready`. Any failure only ends the helper (the worker's own
/// reads report errors); the caller then opens the gate for good.
#[cfg(target_os = "linux")]
fn read_ahead(
    file: &File,
    null: &File,
    map: Option<&[u8]>,
    size: u64,
    link: &AheadLink,
    ahead: u64,
) {
    // Read up to `done` in the region of `epoch`; `cold`: a step of this region
    // was not in the page cache, so `mincore` is no longer asked.
    let (mut epoch, mut done, mut cold) = (u64::MAX, 0u64, false);
    loop {
        let asked = link.asked.load(Ordering::Acquire);
        if asked == AHEAD_STOP {
            return;
        }
        // Loaded after `asked`, and stored before it: an epoch at least as new.
        let start = link.start.load(Ordering::Acquire);
        if start >> AHEAD_OFFSET_BITS != epoch {
            // A new region: start at the page the worker starts in (not at what
            // it has asked for since: that skipped the region's first steps).
            epoch = start >> AHEAD_OFFSET_BITS;
            done = start & AHEAD_OFFSET_MASK & !4095;
            cold = false;
            link.ready
                .store(epoch << AHEAD_OFFSET_BITS | done, Ordering::Release);
        }
        // What the worker needs in this epoch (nothing yet, if it has not asked).
        let at = if asked >> AHEAD_OFFSET_BITS == epoch {
            asked & AHEAD_OFFSET_MASK
        } else {
            done
        };
        let target = at.saturating_add(ahead).min(size);
        if done >= target {
            std::thread::park_timeout(std::time::Duration::from_millis(10));
            continue;
        }
        let n = (target - done).min(AHEAD_STEP);
        // Pages under readahead are resident before they are read, so asking
        // `mincore` on a cold stream would skip the steps in flight, and with
        // them the pages that start the kernel's next readahead window: the
        // stream broke into 1 MiB requests (against 4 MiB), so once a step
        // misses, the rest of the region is read without asking.
        cold = cold || !map.is_some_and(|m| cached(m, done, n));
        if cold {
            let mut off = done as libc::off_t;
            // SAFETY: plain descriptors; `off` is a valid offset variable.
            let got =
                unsafe { libc::sendfile(null.as_raw_fd(), file.as_raw_fd(), &mut off, n as usize) };
            if got <= 0 {
                return;
            }
            done += got as u64;
        } else {
            done += n;
        }
        // Tagged with the helper's epoch: if the worker has jumped meanwhile, its
        // gate waits for the next epoch's progress instead.
        let pos = epoch << AHEAD_OFFSET_BITS | done.min(size);
        link.ready.store(pos, Ordering::Release);
        link.worker.unpark();
    }
}

#[cfg(not(target_os = "linux"))]
fn read_ahead(_: &File, _: &File, _: Option<&[u8]>, _: u64, _: &AheadLink, _: u64) {}

/// Is `map[off..off + n]` in the page cache? Asks `mincore` about its first,
/// middle and last pages only: readahead fills a range front to back, and asking
/// about all 256 pages of a step cost about 50 us a call (65 ms over a warm GiB).
/// A wrong guess costs a `sendfile` too many or too few, never a wrong result.
#[cfg(target_os = "linux")]
fn cached(map: &[u8], off: u64, n: u64) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let end = (off + n).min(map.len() as u64);
    if end <= off {
        return true;
    }
    [off, off + (end - off) / 2, end - 1].iter().all(|&at| {
        let at = at / page * page;
        let mut resident = 0u8;
        // SAFETY: `at` is page-aligned and inside the mapping; one page, one byte.
        let r = unsafe {
            libc::mincore(
                map.as_ptr().add(at as usize) as *mut libc::c_void,
                1,
                &mut resident,
            )
        };
        r == 0 && resident & 1 != 0
    })
}

/// How far ahead of the workers small files are hinted: bytes and files (each
/// an open descriptor). Measured cold on 1,218 files of about 430 KB: reads
/// queued 4 files ahead took 1.25x the time of `xargs -P 8 cat`, 8 files
/// 1.00x, 32 files 0.89x.
const SMALL_AHEAD_BYTES: u64 = 32 << 20;
const SMALL_AHEAD_FILES: usize = 64;

fn open_stream(src: &Source) -> io::Result<Box<dyn Read>> {
    match src {
        Source::Stream { path: None } => Ok(Box::new(io::stdin().lock())),
        Source::Stream { path: Some(p) } => Ok(Box::new(File::open(p)?)),
        Source::File { path, .. } => Ok(Box::new(File::open(path)?)),
    }
}

fn spool(src: &Source) -> io::Result<File> {
    let mut r = open_stream(src)?;
    let mut f = tempfile::tempfile()?;
    io::copy(&mut r, &mut f)?;
    Ok(f)
}

/// Read a stream into blocks of about `chunk` bytes cut after a separator.
fn stream_blocks(
    input: usize,
    src: &Source,
    chunk: u64,
    sep: u8,
    tx: &chan::Sender<Work>,
    pool: &chan::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut r = open_stream(src)?;
    let want = chunk.clamp(1, 64 << 20) as usize;
    let mut offset = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let mut buf = pool.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry);
        carry.clear();
        // Fill to at least `want` bytes and until a separator is present.
        let mut searched = 0;
        let cut = loop {
            if buf.len() >= want {
                if let Some(p) = memchr::memrchr(sep, &buf[searched..]) {
                    break searched + p + 1;
                }
                searched = buf.len();
            }
            let old = buf.len();
            let target = old + want.max(64 << 10);
            buf.resize(target, 0);
            let n = loop {
                match r.read(&mut buf[old..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        buf.truncate(old);
                        if !buf.is_empty() {
                            let len = buf.len();
                            let _ = tx.send(Work::Block {
                                input,
                                offset,
                                buf,
                                len,
                            });
                        }
                        return Err(e);
                    }
                }
            };
            buf.truncate(old + n);
            if n == 0 {
                eof = true;
                break buf.len();
            }
        };
        carry.extend_from_slice(&buf[cut..]);
        let len = cut;
        if len == 0 && eof {
            break;
        }
        tx.send(Work::Block {
            input,
            offset,
            buf,
            len,
        })
        .map_err(|_| io::Error::other("workers stopped"))?;
        offset += len as u64;
    }
    Ok(())
}

/// Read the records owned by `[start, end)` of a file of `size` bytes and pass
/// them to the job, piece by piece. Returns the bytes owned.
///
/// The chunk is read in `piece`-byte `pread`s into one small reusable buffer, and
/// the job is called once per piece with the whole records in it; a record cut by
/// a piece boundary is moved to the front of the buffer and completed by the next
/// read (the buffer grows only for records longer than a piece).
#[allow(clippy::too_many_arguments)]
fn process_range<J: Job>(
    job: &J,
    state: &mut J::State,
    buf: &mut Vec<u8>,
    input: usize,
    file: &File,
    (start, end, size): (u64, u64, u64),
    piece: usize,
    sep: u8,
    reach: &dyn Fn(u64),
) -> Result<u64, String> {
    if start >= end {
        return Ok(0);
    }
    let piece = piece.max(64);
    if buf.len() < piece {
        buf.resize(piece, 0);
    }
    let eio = |e: io::Error| crate::scan::io_message(&e);
    let shrank = |at: u64| {
        format!("file shrank while being read (expected {size} bytes, read ended at {at})")
    };
    // `pos`: file offset of the next byte to read; buf[..len] holds the bytes
    // from file offset `base`.
    let mut pos;
    let mut base;
    let mut len;
    // Phase 1: find the first record that starts in [start, end): the first
    // separator among bytes start-1 ..= end-2, plus one.
    if start == 0 {
        pos = 0;
        base = 0;
        len = 0;
    } else {
        pos = start - 1;
        loop {
            let want = (piece as u64).min(end - 1 - pos) as usize;
            if want == 0 {
                return Ok(0); // no record starts in this chunk
            }
            reach(pos + want as u64);
            let got = read_full_at(file, &mut buf[..want], pos).map_err(eio)?;
            if got < want {
                return Err(shrank(pos + got as u64));
            }
            if let Some(p) = memchr::memchr(sep, &buf[..want]) {
                // Keep what follows the separator.
                buf.copy_within(p + 1..want, 0);
                base = pos + p as u64 + 1;
                len = want - p - 1;
                pos += want as u64;
                break;
            }
            pos += want as u64;
        }
    }
    let first = base;
    // Phase 2: pass whole records to the job until the record holding byte end-1
    // is complete: the owned range ends just after the first separator at or
    // after end-1, or at the end of the file.
    loop {
        // Is the end of the owned range in the buffer?
        if base + len as u64 > end - 1 {
            let from = (end - 1).saturating_sub(base) as usize;
            if let Some(p) = memchr::memchr(sep, &buf[from..len]) {
                let stop = from + p + 1;
                job.process(
                    state,
                    &Chunk {
                        input,
                        offset: base,
                        data: &buf[..stop],
                    },
                );
                return Ok(base + stop as u64 - first);
            }
        }
        if pos >= size {
            if len > 0 {
                job.process(
                    state,
                    &Chunk {
                        input,
                        offset: base,
                        data: &buf[..len],
                    },
                );
            }
            return Ok(base + len as u64 - first);
        }
        // Hand over the whole records we have, keep the partial one.
        if let Some(p) = memchr::memrchr(sep, &buf[..len]) {
            let stop = p + 1;
            job.process(
                state,
                &Chunk {
                    input,
                    offset: base,
                    data: &buf[..stop],
                },
            );
            buf.copy_within(stop..len, 0);
            base += stop as u64;
            len -= stop;
        }
        // Read the next piece after what is left.
        if buf.len() < len + piece {
            buf.resize(len + piece, 0);
        }
        let want = (piece as u64).min(size - pos) as usize;
        reach(pos + want as u64);
        let got = read_full_at(file, &mut buf[len..len + want], pos).map_err(eio)?;
        if got < want {
            return Err(shrank(pos + got as u64));
        }
        pos += want as u64;
        len += want;
    }
}

/// The records owned by `[start, end)` of a mapped file, passed to the job in one
/// call (no copy).
fn process_mapped<J: Job>(
    job: &J,
    state: &mut J::State,
    input: usize,
    map: &[u8],
    start: u64,
    end: u64,
    sep: u8,
) -> u64 {
    let (start, end) = (start as usize, end as usize);
    let first = if start == 0 {
        0
    } else {
        match memchr::memchr(sep, &map[start - 1..end - 1]) {
            Some(p) => start + p,
            None => return 0,
        }
    };
    let last = match memchr::memchr(sep, &map[end - 1..]) {
        Some(p) => end + p,
        None => map.len(),
    };
    job.process(
        state,
        &Chunk {
            input,
            offset: first as u64,
            data: &map[first..last],
        },
    );
    (last - first) as u64
}

/// Paths for the files behind inputs (for jobs that re-open inputs).
pub fn input_path(inp: &Input) -> Option<&PathBuf> {
    match &inp.source {
        Source::File { path, .. } => Some(path),
        Source::Stream { path } => path.as_ref(),
    }
}

/// The first record start at or after `pos` in a file of `size` bytes: `pos`
/// itself when it is 0 or follows a separator, else just after the next
/// separator, else `size`. Chunks `[a, b)` own the records in
/// `[record_start_at(a), record_start_at(b))`; this is how a consumer that does not
/// read the data itself (such as `feed` with `splice`) finds exact boundaries with
/// small reads.
pub fn record_start_at(file: &File, pos: u64, size: u64, sep: u8) -> io::Result<u64> {
    if pos == 0 || pos >= size {
        return Ok(pos.min(size));
    }
    let mut buf = [0u8; 16 << 10];
    let mut at = pos - 1;
    while at < size {
        let want = (buf.len() as u64).min(size - at) as usize;
        let got = read_full_at(file, &mut buf[..want], at)?;
        if got == 0 {
            return Err(io::Error::other("file shrank while being read"));
        }
        if let Some(p) = memchr::memchr(sep, &buf[..got]) {
            return Ok(at + p as u64 + 1);
        }
        at += got as u64;
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The read-ahead gate opens only on bytes the helper has read into the page
    /// cache, in the region the worker is in now, and never holds a worker whose
    /// helper has ended. Needs a file system whose cache can be emptied
    /// (`POSIX_FADV_DONTNEED`); on others (tmpfs) it says so and skips.
    #[cfg(target_os = "linux")]
    #[test]
    fn read_ahead_gate_opens_only_on_what_the_helper_has_read() {
        let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let path = dir.path().join("f");
        // Large enough that the kernel's own readahead behind the helper's reads
        // cannot reach where the worker jumps next.
        let size = 64u64 << 20;
        std::fs::write(&path, vec![b'x'; size as usize]).unwrap();
        let file = Arc::new(File::open(&path).unwrap());
        file.sync_all().unwrap();
        fadvise(&file, 0, 0, libc::POSIX_FADV_DONTNEED);
        // SAFETY: read-only map of a file nobody truncates.
        let map = unsafe { memmap2::Mmap::map(&*file) }.unwrap();
        let in_cache = |a: u64, b: u64| (a..b).step_by(4096).all(|p| cached(&map, p, 1));
        if in_cache(0, size) {
            eprintln!("skipped: the page cache cannot be emptied here");
            return;
        }
        let regions = Regions::new(0, file.clone(), size, 8 << 20, 1);
        let link = AheadLink::new();
        std::thread::scope(|s| {
            let a = ReadAhead::start(s, &regions, &link, 3 << 20).expect("a helper");
            // Each time the gate opens, what the worker asked for is in the cache.
            a.jump(0);
            a.reach(1 << 20);
            assert!(in_cache(0, 1 << 20));
            assert!(!in_cache(24 << 20, 25 << 20), "read far past the worker");
            assert!(!in_cache(40 << 20, size), "read far past the worker");
            a.jump(40 << 20);
            a.reach(42 << 20);
            assert!(in_cache((40 << 20) - 1, 42 << 20));
            // A jump back: the progress made further on must not open the gate.
            a.jump(24 << 20);
            a.reach(25 << 20);
            assert!(in_cache((24 << 20) - 1, 25 << 20));
            assert!(!link.gone.load(Ordering::Acquire));
            drop(a);
        });
        assert!(link.gone.load(Ordering::Acquire));
        // A file shorter than planned (it shrank): the helper ends at its end,
        // and the gate opens instead of holding the worker.
        let short = Regions::new(0, file.clone(), size + (8 << 20), 8 << 20, 1);
        let link = AheadLink::new();
        std::thread::scope(|s| {
            let a = ReadAhead::start(s, &short, &link, 64 << 20).expect("a helper");
            a.jump(60 << 20);
            a.reach(size + (8 << 20));
            assert!(link.gone.load(Ordering::Acquire));
            drop(a);
        });
    }

    /// Every chunk of the grid is taken exactly once, whatever the order in which
    /// workers join and take: own regions front to back, then unclaimed regions,
    /// then the backs of the others.
    #[test]
    fn regions_take_every_chunk_once() {
        let file = Arc::new(File::open("/dev/null").unwrap());
        for (size, chunk, workers) in [
            (100, 10, 2),
            (101, 10, 2),
            (11, 10, 4),
            (95, 7, 3),
            (1000, 1, 5),
            (64, 64, 2),
            (65, 64, 8),
        ] {
            for order in 0..4u64 {
                let r = Regions::new(0, file.clone(), size, chunk, workers);
                let mut regions = vec![None; workers];
                let mut taken = Vec::new();
                let mut live: Vec<usize> = (0..workers).collect();
                let mut step = order;
                while !live.is_empty() {
                    // A deterministic interleaving that differs with `order`.
                    step = step
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let k = (step >> 33) as usize % live.len();
                    let w = live[k];
                    match r.take(&mut regions[w]) {
                        Some(c) => taken.push(c),
                        None => {
                            live.remove(k);
                        }
                    }
                }
                taken.sort();
                let want: Vec<(u64, u64)> = (0..size.div_ceil(chunk))
                    .map(|c| (c * chunk, ((c + 1) * chunk).min(size)))
                    .collect();
                assert_eq!(taken, want, "size {size} chunk {chunk} workers {workers}");
            }
        }
    }

    /// A worker reads its own region front to back, and only then takes the
    /// back half of another's, which it also reads front to back.
    #[test]
    fn regions_stream_then_steal_back_halves() {
        let file = Arc::new(File::open("/dev/null").unwrap());
        let r = Regions::new(0, file, 100, 10, 2);
        let (mut a, mut b) = (None, None);
        assert_eq!(r.take(&mut a), Some((0, 10)));
        assert_eq!(r.take(&mut b), Some((50, 60)));
        for c in 1..5 {
            assert_eq!(r.take(&mut a), Some((c * 10, c * 10 + 10)));
        }
        // Region 0 is done; b's has 60..100 left: a takes 80..100, front first.
        assert_eq!(r.take(&mut a), Some((80, 90)));
        assert_eq!(r.take(&mut b), Some((60, 70)));
        assert_eq!(r.take(&mut a), Some((90, 100)));
        // Only 70..80 is left, one chunk: a takes it whole.
        assert_eq!(r.take(&mut a), Some((70, 80)));
        assert_eq!(r.take(&mut b), None);
        assert_eq!(r.take(&mut a), None);
        // A worker that joins late, with nothing left, gets nothing.
        assert_eq!(r.take(&mut None), None);
    }
}
