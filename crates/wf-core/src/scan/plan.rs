//! The chunk plan: one planner thread turns the inputs into work for the workers.
//!
//! - The planner sends chunk descriptors (largest files first) into a bounded
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
//! - A file of more than one chunk goes out as regions (`regions.rs`), one
//!   message per worker; streams are read here into record-aligned blocks
//!   (`stream.rs`).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::iter::Peekable;
use std::sync::{Arc, Mutex};

use crossbeam_channel as chan;

use super::inputs::{Input, InputError, Source};
use super::options::ScanOptions;
use super::regions::Regions;
use super::shared::{Shared, Work};
use super::split::{self, Parts};
use super::stream::{open_stream, read_cut, spool, Cut, End, Polled, Refused};
use super::{fadvise, io_message};

/// Plan every input for `threads` workers: regular files largest first, then
/// spooled streams, then streams in the order given. Returns early if the
/// workers are gone.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan(
    inputs: &[Input],
    opts: &ScanOptions,
    threads: usize,
    chunk: u64,
    tx: &chan::Sender<Work>,
    pool: &chan::Receiver<Vec<u8>>,
    shared: &Shared,
    spooled: &[Mutex<Option<Arc<File>>>],
) {
    let p = Planner {
        inputs,
        opts,
        chunk,
        threads: threads.max(1),
        tx,
        shared,
    };
    let (files, mut streams) = by_kind(inputs);
    streams.retain(|&i| {
        // A compressed file's span `(n, u64::MAX)` skips `n` decoded bytes
        // (`--state`); one at block or frame starts (`--since`, `seek.rs`)
        // is a compressed range, read in parts or else as one stream from
        // its start (a job with offsets, `split::open_range`). Any other
        // span of it, or of a stream, is a byte range, which it has not.
        let whole = match (&inputs[i].source, inputs[i].span) {
            (_, None) | (Source::Compressed { .. }, Some((_, u64::MAX))) => true,
            // Decoded in parts, or else from its start (whole if its
            // decoded offset is unknown: the window job filters every
            // record); an empty one is left out.
            (Source::Compressed { path, codec, size }, Some(r))
                if split::is_range(path, *codec, *size, r) =>
            {
                return r.0 < r.1;
            }
            _ => false,
        };
        if !whole {
            let msg = "a stream or compressed file is read whole: it cannot be cut at byte offsets";
            shared.error(i, msg.into());
        }
        whole
    });
    let mut spooled_files = Vec::new();
    if opts.spool_streams {
        spooled_files = p.spool(&streams, spooled);
        streams.clear();
    }
    if !p.files(&files) {
        return;
    }
    for (i, f) in spooled_files {
        if !p.file(i, f) {
            return;
        }
    }
    let (compressed, streams): (Vec<usize>, Vec<usize>) = streams
        .into_iter()
        .partition(|&i| matches!(inputs[i].source, Source::Compressed { .. }));
    p.decode(&compressed, pool);
    for i in streams {
        p.stream(i, pool);
    }
}

/// Regular files (index, size), largest first; streams (index) in the order given.
fn by_kind(inputs: &[Input]) -> (Vec<(usize, u64)>, Vec<usize>) {
    let mut files: Vec<(usize, u64)> = Vec::new();
    let mut streams: Vec<usize> = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        match inp.source {
            Source::File { size, .. } => files.push((i, span_of(inp, size).1)),
            Source::Stream { .. } | Source::Compressed { .. } => streams.push(i),
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (files, streams)
}

/// The `[start, end)` of a file of `size` bytes to read (its span, clipped),
/// and its length.
fn span_of(inp: &Input, size: u64) -> ((u64, u64), u64) {
    let (s, e) = inp.span.unwrap_or((0, size));
    let (s, e) = (s.min(size), e.min(size));
    ((s, e.max(s)), e.saturating_sub(s))
}

struct Planner<'a> {
    inputs: &'a [Input],
    opts: &'a ScanOptions,
    chunk: u64,
    threads: usize,
    tx: &'a chan::Sender<Work>,
    shared: &'a Shared<'a>,
}

/// Files opened before their turn (see [`Planner::open_ahead`]).
#[derive(Default)]
struct Opened {
    queue: VecDeque<(usize, u64, io::Result<File>)>,
    /// Bytes of the small files in `queue`.
    small_bytes: u64,
}

impl Planner<'_> {
    /// Copy streams to unlinked temporary files (noted in `spooled`, for
    /// reading back); returns them, to be planned like files.
    fn spool(
        &self,
        streams: &[usize],
        spooled: &[Mutex<Option<Arc<File>>>],
    ) -> Vec<(usize, Arc<File>)> {
        let mut files = Vec::new();
        for &i in streams {
            match spool(
                &self.inputs[i].source,
                Some(&self.shared.meter),
                self.opts.sep,
            ) {
                Ok((f, cut)) => {
                    let f = Arc::new(f);
                    *spooled[i].lock().unwrap() = Some(f.clone());
                    files.push((i, f));
                    if let Some((at, e)) = cut {
                        let msg = format!("bytes {at}.. not read: {}", io_message(&e));
                        self.shared.io_error(i, msg, &e);
                    }
                }
                Err(e) => self.shared.io_error(i, e.to_string(), &e),
            }
        }
        files
    }

    /// Send the regular files' work, in order, opening (and hinting) small files
    /// ahead of their turn. False if the workers are gone.
    fn files(&self, files: &[(usize, u64)]) -> bool {
        let mut opened = Opened::default();
        let mut next = files.iter().copied().peekable();
        loop {
            self.open_ahead(&mut opened, &mut next);
            let Some((i, size, f)) = opened.queue.pop_front() else {
                return true;
            };
            if self.small(size) {
                opened.small_bytes -= size;
            }
            match f {
                Ok(f) => {
                    if !self.file(i, Arc::new(f)) {
                        return false;
                    }
                }
                Err(e) => self.shared.io_error(i, io_message(&e), &e),
            }
        }
    }

    /// Is a file of `size` bytes hinted ahead of its turn?
    fn small(&self, size: u64) -> bool {
        !self.opts.readahead && !self.opts.mmap && size > 0 && size <= self.chunk
    }

    /// Open the next files before their turn: small files (one chunk each) are
    /// opened and hinted (`POSIX_FADV_WILLNEED`) up to SMALL_AHEAD_BYTES /
    /// SMALL_AHEAD_FILES ahead, so that a cold device has many requests queued;
    /// the kernel's own readahead has no time to ramp up within a file of a few
    /// hundred KB. A big file is opened only when nothing is queued, and its
    /// chunks are not hinted (see the module comment). `--readahead` hints every
    /// chunk instead.
    fn open_ahead(
        &self,
        opened: &mut Opened,
        next: &mut Peekable<impl Iterator<Item = (usize, u64)>>,
    ) {
        while opened.queue.len() < SMALL_AHEAD_FILES && opened.small_bytes < SMALL_AHEAD_BYTES {
            let Some(&(i, size)) = next.peek() else { break };
            let small = self.small(size);
            if !small && !opened.queue.is_empty() {
                break;
            }
            next.next();
            let f = match &self.inputs[i].source {
                Source::File { path, .. } => File::open(path),
                Source::Stream { .. } | Source::Compressed { .. } => unreachable!(),
            };
            if small {
                if let Ok(f) = &f {
                    fadvise(f, 0, 0, libc::POSIX_FADV_WILLNEED);
                }
                opened.small_bytes += size;
            }
            opened.queue.push_back((i, size, f));
            if !small {
                break;
            }
        }
    }

    /// Send the work for one open file: regions for a big file, else its chunks
    /// (mapped with `--mmap`). False if the workers are gone; an error with the
    /// file is recorded and planning goes on.
    fn file(&self, i: usize, file: Arc<File>) -> bool {
        let size = match file.metadata() {
            Ok(md) => md.len(),
            Err(e) => {
                self.shared.io_error(i, e.to_string(), &e);
                return true;
            }
        };
        if self.opts.readahead {
            fadvise(&file, 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
        if size == 0 {
            return self.range(i, &file, 0, 0, size);
        }
        if self.inputs[i].span.is_some() {
            // A partition of a distributed run: its chunks, on the same grid
            // from the span's start (no regions: it is one task's share).
            let ((start, end), _) = span_of(&self.inputs[i], size);
            return self.chunks(i, &file, (start, end), size);
        }
        if self.opts.mmap {
            // Safety: the map is read-only; a concurrent truncation is the documented
            // risk of --mmap.
            return match unsafe { memmap2::Mmap::map(&*file) } {
                Ok(m) => self.mapped_chunks(i, &Arc::new(m), size),
                Err(e) => {
                    self.shared.io_error(i, io_message(&e), &e);
                    true
                }
            };
        }
        // One worker too gets a region, for its read-ahead helper: cold, the
        // disk then never waits for the parser, and a big file's pages leave
        // the cache behind it (`--page-cache`). 10 GiB, `wf wf2 -j 1`, 2 runs:
        // 6.51 s against 11.71 s as chunks; 1 GiB, 5 runs: `wf count -j 1`
        // 0.448 s against 0.543 s, `wf wf2 -j 1` 0.647 s against 0.637 s;
        // warm, 7 runs, the same (0.540 s against 0.548 s).
        if !self.opts.readahead && size > self.chunk {
            let r = Arc::new(Regions::new(i, file, size, self.chunk, self.threads));
            return (0..self.threads).all(|_| self.tx.send(Work::Regions(r.clone())).is_ok());
        }
        self.chunks(i, &file, (0, size), size)
    }

    /// The chunks of `[from, to)` of a file of `size` bytes, in order (each
    /// hinted with `--readahead`).
    fn chunks(&self, i: usize, file: &Arc<File>, (from, to): (u64, u64), size: u64) -> bool {
        let mut start = from;
        while start < to {
            let end = (start + self.chunk).min(to);
            if self.opts.readahead {
                fadvise(file, start, end - start, libc::POSIX_FADV_WILLNEED);
            }
            if !self.range(i, file, start, end, size) {
                return false;
            }
            start = end;
        }
        true
    }

    /// Send one chunk `[start, end)` of a file of `size` bytes.
    fn range(&self, input: usize, file: &Arc<File>, start: u64, end: u64, size: u64) -> bool {
        let file = file.clone();
        let w = Work::Range {
            input,
            file,
            start,
            end,
            size,
        };
        self.tx.send(w).is_ok()
    }

    /// The chunks of a mapped file.
    fn mapped_chunks(&self, input: usize, map: &Arc<memmap2::Mmap>, size: u64) -> bool {
        let mut start = 0;
        while start < size {
            let end = (start + self.chunk).min(size);
            if self.opts.readahead {
                let len = (end - start) as usize;
                let _ = map.advise_range(memmap2::Advice::WillNeed, start as usize, len);
            }
            let map = map.clone();
            if self
                .tx
                .send(Work::Mapped {
                    input,
                    map,
                    start,
                    end,
                })
                .is_err()
            {
                return false;
            }
            start = end;
        }
        true
    }

    /// Compressed files, largest first. Those that can be cut at frame or
    /// member starts go to the workers in parts (`split.rs`); the others are
    /// decoded by up to one thread per worker at once (each file front to back
    /// by one of them, its blocks parsed by the workers): one decoder at a time
    /// left the other cores idle on a directory of rotated `.gz` logs.
    fn decode(&self, files: &[usize], pool: &chan::Receiver<Vec<u8>>) {
        let mut sorted = files.to_vec();
        sorted.sort_by_key(|&i| match self.inputs[i].source {
            Source::Compressed { size, .. } => std::cmp::Reverse(size),
            _ => std::cmp::Reverse(0),
        });
        let mut order = Vec::new();
        for i in sorted {
            match self.parts(i) {
                Some(p) => {
                    let k = p.starts.len();
                    let mut sent = (0..k).map(|k| Work::Part {
                        parts: p.clone(),
                        k,
                    });
                    if !sent.all(|w| self.tx.send(w).is_ok()) {
                        return;
                    }
                }
                None => order.push(i),
            }
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let decoders = self.threads.min(order.len());
        let decode = || loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(k) else { break };
            self.stream(i, pool);
        };
        std::thread::scope(|s| {
            // Fewer decoders if threads cannot be started; none: this one.
            let started = (0..decoders)
                .map_while(|_| std::thread::Builder::new().spawn_scoped(s, decode).ok())
                .count();
            if started == 0 {
                decode();
            }
        });
    }

    /// The parts of compressed file `i`, if the job allows it and the file can
    /// be cut (a file that cannot be looked at is left to the stream path,
    /// which names the error).
    fn parts(&self, i: usize) -> Option<Arc<Parts>> {
        let Source::Compressed { path, size, codec } = &self.inputs[i].source else {
            return None;
        };
        let range = match self.inputs[i].span {
            Some((_, u64::MAX)) => return None,
            Some((a, b)) => Some((a.min(*size), b.min(*size))),
            None => None,
        };
        if !self.shared.split {
            return None;
        }
        let mut parts = split::locate(i, path, *codec, *size, self.chunk).ok()?;
        if let Some((a, b)) = range {
            // The starts in the range, from its first (a block start).
            parts.starts.retain(|&s| s > a && s < b);
            parts.starts.insert(0, a);
            parts.range = (a, b.max(a));
            return Some(Arc::new(parts));
        }
        (parts.starts.len() > 1).then(|| Arc::new(parts))
    }

    /// Read a stream into blocks for the workers (up to 64 MiB each; a long
    /// record in pieces of about the job's bound; see `stream.rs`). A read or
    /// decoding error ends it: the record it cut short is not passed on, and
    /// the error says from which byte nothing was.
    fn stream(&self, i: usize, pool: &chan::Receiver<Vec<u8>>) {
        // A compressed range (`--since` for a job with offsets) is decoded
        // from its start, its records at their decoded offsets (`skip`).
        let (mut src, mut skip) = match self.open_range(i) {
            Ok(Some(opened)) => opened,
            Ok(None) => match self.open(i) {
                Ok(src) => (src, 0),
                Err(e) => return self.shared.io_error(i, io_message(&e), &e),
            },
            Err(e) => return self.shared.io_error(i, io_message(&e), &e),
        };
        // Decoded bytes to skip (`--state`).
        if let Some((n, u64::MAX)) = self.inputs[i].span {
            if let Err(e) = skip_decoded(&mut *src, n) {
                return self.shared.fail(i, e);
            }
            skip = n;
        }
        let cut = Cut {
            size: self.chunk.min(64 << 20) as usize,
            sep: self.opts.sep,
            long: Some(self.shared.long.limit),
            whole_only: true,
            ends: self.opts.record_ends.clone(),
        };
        let (end, at) = read_cut(&mut src, cut, pool, |b| {
            let (offset, buf, len, piece) = (b.offset, b.buf, b.len, b.piece);
            let w = Work::Block {
                input: i,
                offset: offset + skip,
                buf,
                len,
                piece,
            };
            self.tx.send(w).map_err(|_| Refused)
        });
        match end {
            End::Done => self.shared.ends.lock().unwrap().push((i, skip + at)),
            End::Failed(e) => {
                let at = skip + at;
                let msg = format!("bytes {at}.. not read: {}", io_message(&e));
                self.shared.io_error(i, msg, &e)
            }
            End::Stopped(_) => self.shared.error(i, "workers stopped".into()),
        }
    }

    /// The compressed range of input `i` (at block starts, see `seek.rs`)
    /// as one stream and the decoded offset of its first byte; `None` if it
    /// has none or that offset is unknown (then it is read whole, filtered).
    fn open_range(&self, i: usize) -> io::Result<Option<(Box<dyn io::Read + '_>, u64)>> {
        let inp = &self.inputs[i];
        match (&inp.source, inp.span) {
            (Source::Compressed { path, codec, size }, Some((a, b))) if b != u64::MAX => {
                let meter = Some(&self.shared.meter);
                split::open_range(path, *codec, *size, (a, b), self.opts.sep, meter)
            }
            _ => Ok(None),
        }
    }

    /// A stream's bytes: with `eager_streams`, a pipe read through
    /// [`Polled::eager`] (its records go out once it is quiet for 20 ms).
    fn open(&self, i: usize) -> io::Result<Box<dyn io::Read + '_>> {
        match &self.inputs[i].source {
            Source::Stream {
                path: Some(p),
                decompress: super::Decompress::Never,
            } if self.opts.eager_streams => {
                fn never() -> bool {
                    false
                }
                Ok(Box::new(Polled::eager(File::open(p)?, &never, 20)))
            }
            src => open_stream(src, Some(&self.shared.meter)),
        }
    }
}

/// Read and drop the first `n` decoded bytes of `src` (those a `--state`
/// run counted before); an error (its input's name filled in later) if it
/// has fewer.
fn skip_decoded(src: &mut dyn io::Read, n: u64) -> Result<(), InputError> {
    match io::copy(&mut io::Read::take(src, n), &mut io::sink()) {
        Ok(got) if got == n => Ok(()),
        Ok(got) => Err(InputError::new(
            "",
            format!(
                "decodes to {got} bytes, fewer than the {n} counted before (--state): not read"
            ),
        )),
        Err(e) => Err(
            InputError::new("", format!("bytes ..{n} not decoded: {}", io_message(&e)))
                .of_kind(e.kind()),
        ),
    }
}

/// How far ahead of the workers small files are hinted: bytes and files (each
/// an open descriptor). Measured cold on 1,218 files of about 430 KB: reads
/// queued 4 files ahead took 1.25x the time of `xargs -P 8 cat`, 8 files
/// 1.00x, 32 files 0.89x.
const SMALL_AHEAD_BYTES: u64 = 32 << 20;
const SMALL_AHEAD_FILES: usize = 64;
