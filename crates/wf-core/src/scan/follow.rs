//! `--follow`: files read as they grow, like `tail -F`, handed on in whole
//! records through the scan's own inputs.
//!
//! Why this shape: every poll turns what the followed files hold past their
//! offsets into [`Input`]s with spans ([`Poll::records`]), so the caller reads
//! them with the same scan (chunks, threads, jobs, `--since`) or copies them to
//! `wf feed`'s workers ([`Follower::pump`]): there is no second reader. Each
//! file stays open (its descriptor is held), and the spans name it as
//! `/proc/self/fd/N`, so a file renamed or removed between the poll and the
//! read is still the file read; the span's file size is the size the poll saw,
//! and the scan reads nothing past it.
//!
//! - A span ends after the last separator: a partial last record waits for
//!   its separator ([`Poll::tails`] has it, for a report of what the files
//!   hold now), or for `flush_after`, then goes out as a record; the rest of
//!   it, up to its separator, goes out later as another (a copy: the scan
//!   starts a span at its first record start, and left the rest out).
//! - Rotation by rename (the name now points to another inode): the old file
//!   is read on by its descriptor until a poll finds it quiet, then its last
//!   record goes out whole and it is closed; the new file is read from 0.
//! - copytruncate (the same inode, shorter, or its first bytes changed): read
//!   again from 0, and said ([`Event::Truncated`]); the partial last record
//!   the last poll saw (kept in memory, up to 1 MiB) goes out as a record, as
//!   the copy ends with it. What was written between
//!   the last poll and the truncation is only in the copy: lost to every
//!   follower of the name (logrotate's manual says so of copytruncate).
//! - A name that is gone: its open file is read on; a file that comes back
//!   under the name is a rotation.
//! - A name rotated twice or more between two polls: the files that held it
//!   in between are found beside it and read whole ([`missed`]), where
//!   `tail -F` loses them.
//! - Compressed inputs are read once, at the first poll, and not followed.
//!   So is a followed file found compressed (by its first bytes: a `.gz`
//!   that appears after the start, or was empty then, or a name rotated to
//!   a compressed file): read once, whole and decoded, at the first poll that
//!   finds it no longer growing; if it grows after that, that is said. Read
//!   as it grew, its compressed bytes were counted as lines, exit 0.
//! - A name that names no file at the start is looked for at every poll and
//!   followed from its start once it does ([`Follower::wait_for`]), as
//!   `tail -F` waits for it.
//!
//! An idle poll costs a `stat` of the name and an `fstat` of the open file.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::decompress::{self, Codec, Decompress};
use super::inputs::{Input, InputError, Source};
use super::range::record_start_at;
use super::read_full_at;
use super::state::{head_hash, last_record_end, HEAD};

mod missed;

/// What happened to a followed file (for the caller to say on stderr).
#[derive(Debug, Clone)]
pub enum Event {
    /// The name points to another file: the old one is read to its end by its
    /// descriptor, the new one from its start.
    Rotated { name: String },
    /// The same file is shorter than what was read (`now` < `was` bytes), or
    /// its first bytes changed: read again from its start.
    Truncated { name: String, was: u64, now: u64 },
    /// The name was rotated more than once since the last poll: `file`, the
    /// file it named in between, is read whole.
    Missed { name: String, file: String },
    /// A name that named no file at the start now does: it is followed from
    /// its start ([`Follower::wait_for`]).
    Appeared { name: String },
    /// A followed file could not be looked at or read.
    Failed(InputError),
}

/// What one poll found.
#[derive(Debug, Default)]
pub struct Poll {
    /// Whole records to hand on, in order: spans of the open files (and the
    /// compressed inputs, whole, at the first poll).
    pub records: Vec<Input>,
    /// The partial last records, not handed on: what the files hold beyond
    /// `records` now.
    pub tails: Vec<Input>,
    pub events: Vec<Event>,
    /// Some file changed size since the last poll (or this is the first).
    pub changed: bool,
    /// Files read to their end by this poll: open while the poll lives, as
    /// its spans name them by descriptor.
    closing: Vec<File>,
}

/// One open file.
struct Followed {
    /// How it is named in messages.
    name: String,
    /// The name to watch for rotation; `None` once it has been rotated away
    /// (it is read to its end, then closed).
    path: Option<PathBuf>,
    file: File,
    id: (u64, u64),
    /// Handed on up to here: the end of a whole record (or a flushed one).
    offset: u64,
    /// Its size at the last poll.
    size: u64,
    /// The hash of its first `head.0` bytes (to see a rewrite).
    head: (u64, u64),
    /// Since when a partial record has waited at `offset`.
    waiting: Option<Instant>,
    /// The partial record as the last poll saw it (up to [`HELD`] bytes): if
    /// the file is truncated, it goes out from here, as the copy holds it.
    held: Vec<u8>,
    /// Text (`Some(None)`), compressed (`Some(Some(codec))`), or not told yet
    /// (`None`: no byte handed on, too few to tell).
    codec: Option<Option<Codec>>,
    /// Text under `--decompress always`: said once, and not read.
    refused: bool,
    /// `offset` is inside a record whose start was flushed (`flush_after`):
    /// the bytes up to its separator go out as a record of their own, copied
    /// (the scan reads a span from the first record that starts in it, so
    /// the rest of a flushed record, read as a span, was lost).
    mid: bool,
}

/// The longest partial record kept in memory against a truncation.
const HELD: u64 = 1 << 20;

/// The files followed, and what has been handed on of each.
pub struct Follower {
    files: Vec<Followed>,
    /// Compressed inputs, read once at the first poll.
    once: Vec<Input>,
    sep: u8,
    flush_after: Option<Duration>,
    /// Files read so far: each followed file, and each generation of one
    /// (after a rotation or a truncation), once.
    pub generations: u64,
    first: bool,
    /// The files beside the followed names, to find those a rotation hid.
    known: missed::Known,
    /// Names that named no file at the start, looked for at every poll.
    waiting: Vec<(String, PathBuf)>,
    /// `--decompress`: whether a followed file is looked at for compression.
    pub decompress: Decompress,
    /// This poll is the last ([`Follower::finish`]).
    last: bool,
}

impl Follower {
    /// Follow the regular files of `inputs` (compressed ones are read once);
    /// a stream or a file that cannot be opened is an error.
    pub fn new(
        inputs: Vec<Input>,
        sep: u8,
        flush_after: Option<Duration>,
    ) -> (Follower, Vec<InputError>) {
        let mut f = Follower {
            files: Vec::new(),
            once: Vec::new(),
            sep,
            flush_after,
            generations: 0,
            first: true,
            known: missed::Known::default(),
            waiting: Vec::new(),
            decompress: Decompress::Auto,
            last: false,
        };
        let mut errors = Vec::new();
        for inp in inputs {
            match inp.source {
                Source::File { ref path, .. } => match open(&inp.name, path.clone()) {
                    Ok(x) => {
                        f.known.siblings_of(path);
                        f.known.file(x.id);
                        f.files.push(x);
                    }
                    Err(e) => errors.push(InputError::io(&inp.name, &e)),
                },
                Source::Compressed { .. } => f.once.push(inp),
                Source::Stream { .. } => {
                    let why = "a stream: --follow needs files, reopened by name";
                    errors.push(InputError::new(&inp.name, why));
                }
            }
        }
        f.generations = (f.files.len() + f.once.len()) as u64;
        (f, errors)
    }

    /// Follow `path` (named `name`) from its start once it names a file, as
    /// `tail -F` waits for a file it cannot open yet: `wf count --follow
    /// access.log` started before the server made its log printed 0 records
    /// for ever, the file made later never read.
    pub fn wait_for(&mut self, name: String, path: PathBuf) {
        self.waiting.push((name, path));
    }

    /// The names still waited for ([`Follower::wait_for`]).
    pub fn waiting(&self) -> impl Iterator<Item = &str> {
        self.waiting.iter().map(|(n, _)| n.as_str())
    }

    /// Opens the waited-for names that now name a regular file.
    fn appeared(&mut self, p: &mut Poll) {
        let mut k = 0;
        while k < self.waiting.len() {
            let (name, path) = &self.waiting[k];
            let is_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
            match is_file.then(|| open(name, path.clone())) {
                Some(Ok(x)) => {
                    self.known.siblings_of(path);
                    self.known.file(x.id);
                    p.events.push(Event::Appeared { name: name.clone() });
                    p.changed = true;
                    self.generations += 1;
                    self.files.push(x);
                    self.waiting.remove(k);
                }
                _ => k += 1,
            }
        }
    }

    /// Look at every file: rotations, truncations, and what they hold now.
    pub fn poll(&mut self) -> Poll {
        let mut p = Poll {
            records: std::mem::take(&mut self.once),
            changed: std::mem::take(&mut self.first),
            ..Poll::default()
        };
        self.appeared(&mut p);
        let now = Instant::now();
        let mut k = 0;
        while k < self.files.len() {
            if let Some(new) = self.rotated(k, &mut p) {
                let mut at = k + 1;
                for m in self.missed(&new, &mut p) {
                    self.files.insert(at, m);
                    at += 1;
                }
                self.generations += (at - k) as u64;
                self.files.insert(at, new);
            }
            let keep = self.read(k, now, &mut p);
            if keep {
                k += 1;
            } else {
                let f = self.files.remove(k);
                self.known.head(f.head);
                p.closing.push(f.file);
            }
        }
        p
    }

    /// The last poll: every partial record goes out as a record.
    pub fn finish(&mut self) -> Poll {
        self.last = true;
        let mut p = self.poll();
        p.records.append(&mut p.tails);
        for f in &mut self.files {
            f.offset = f.size;
        }
        p
    }

    /// If file `k`'s name now points to another file, open that one (the
    /// old one is read to its end).
    fn rotated(&mut self, k: usize, p: &mut Poll) -> Option<Followed> {
        let f = &mut self.files[k];
        let path = f.path.as_ref()?;
        let m = std::fs::metadata(path).ok()?;
        if (m.dev(), m.ino()) == f.id {
            return None;
        }
        let new = open(&f.name, path.clone()).ok()?;
        if new.id == f.id {
            return None;
        }
        p.events.push(Event::Rotated {
            name: f.name.clone(),
        });
        p.changed = true;
        f.path = None;
        self.known.file(new.id);
        Some(new)
    }

    /// The files that held `new`'s name between the last poll and `new`
    /// (see [`missed`]), to read whole, oldest first.
    fn missed(&mut self, new: &Followed, p: &mut Poll) -> Vec<Followed> {
        let Some(path) = &new.path else {
            return Vec::new();
        };
        for f in &self.files {
            self.known.head(f.head);
        }
        let mut v = Vec::new();
        for (file_path, file) in self.known.missed(path) {
            p.events.push(Event::Missed {
                name: new.name.clone(),
                file: file_path.display().to_string(),
            });
            if let Ok(f) = followed(&new.name, None, file) {
                v.push(f);
            }
        }
        v
    }

    /// Hand on what file `k` holds past its offset; false once a rotated
    /// file has been read to its end.
    fn read(&mut self, k: usize, now: Instant, p: &mut Poll) -> bool {
        let (sep, flush_after) = (self.sep, self.flush_after);
        let f = &mut self.files[k];
        let size = match f.file.metadata() {
            Ok(m) => m.len(),
            Err(e) => {
                p.events.push(Event::Failed(InputError::io(&f.name, &e)));
                return true;
            }
        };
        let quiet = size == f.size;
        if !quiet {
            p.changed = true;
            if size < f.size || !f.same_head() {
                self.known.head(f.head);
                f.restart(size, p);
                self.generations += 1;
            }
        }
        f.size = size;
        if let Some(keep) = f.compressed(quiet || self.last, self.decompress, p) {
            return keep;
        }
        let end = match last_record_end(&f.file, f.offset, size, sep) {
            Ok(e) => e,
            Err(e) => {
                p.events.push(Event::Failed(InputError::io(&f.name, &e)));
                return true;
            }
        };
        if end > f.offset && f.mid {
            match record_start_at(&f.file, f.offset, end, sep) {
                Ok(rest) => {
                    f.copy_out(f.offset, rest, p);
                    (f.offset, f.mid) = (rest, false);
                }
                Err(e) => p.events.push(Event::Failed(InputError::io(&f.name, &e))),
            }
        }
        if end > f.offset && !f.mid {
            p.records.push(f.span(f.offset, end));
            (f.offset, f.waiting) = (end, None);
            f.note_head();
        }
        let rotated_away = f.path.is_none();
        if f.offset == size {
            f.held.clear();
        } else {
            if !quiet || f.held.len() as u64 != size - f.offset {
                f.hold(size);
            }
            let part = f.partial(size, p);
            let since = *f.waiting.get_or_insert(now);
            let due = flush_after.is_some_and(|d| now.duration_since(since) >= d);
            if due || (rotated_away && quiet) {
                p.records.push(part);
                p.changed = true;
                (f.offset, f.waiting, f.mid) = (size, None, true);
                f.held.clear();
                f.note_head();
            } else {
                p.tails.push(part);
            }
        }
        !(rotated_away && quiet)
    }

    /// Hand on every poll's records to `out` until `wait` says stop (it
    /// waits up to the given time, and returns true to stop), then the last
    /// poll's, partial records too ([`Follower::finish`]). A record handed
    /// on without its separator (flushed, or a file's last) gets one, so
    /// `out` only ever receives whole records. `event` is told what happened.
    pub fn pump(
        &mut self,
        out: &mut dyn Write,
        interval: Duration,
        wait: &dyn Fn(Duration) -> bool,
        event: &mut dyn FnMut(&Event),
    ) -> io::Result<()> {
        let mut stop = false;
        loop {
            let p = if stop { self.finish() } else { self.poll() };
            p.events.iter().for_each(&mut *event);
            for r in &p.records {
                // An input that cannot be read whole (a damaged compressed
                // file) is named and the others go on; it ended the follow.
                if let Err(e) = self.copy(r, out)? {
                    event(&Event::Failed(InputError::new(
                        &r.name,
                        format!("{e}: the rest of it is not read"),
                    )));
                }
            }
            out.flush()?;
            if stop {
                return Ok(());
            }
            stop = wait(interval);
        }
    }

    /// Write the records of `r` to `out`, with a separator after the last
    /// if it has none.
    /// Errors: the outer one `out`'s (the end of the follow), the inner one
    /// the input's (it is named, and the next records go on). An input that
    /// fails inside a record leaves that record out (a fragment passed on
    /// as a record was read as a line of another size or status).
    fn copy(&self, r: &Input, out: &mut dyn Write) -> io::Result<io::Result<()>> {
        let mut w = Whole {
            out,
            sep: self.sep,
            rest: Vec::new(),
            partial: false,
            broken: false,
        };
        match self.copy_to(r, &mut w) {
            Err(e) if w.broken => Err(e),
            Err(e) => {
                let left = w.rest.len();
                if w.partial {
                    // Its first bytes went out: it ends here.
                    w.put(&[w.sep])?;
                }
                let why = format!("{e} (the {left} bytes of its last record are left out)");
                Ok(Err(io::Error::other(why)))
            }
            Ok(()) => {
                w.finish()?;
                Ok(Ok(()))
            }
        }
    }

    fn copy_to(&self, r: &Input, w: &mut Whole<'_>) -> io::Result<()> {
        match &r.source {
            Source::File { path, size } => {
                let (from, to) = r.span.unwrap_or((0, *size));
                copy_range(&File::open(path)?, from, to, w)?;
            }
            src => {
                let mut s = super::stream::open_stream(src, None)?;
                io::copy(&mut s, w)?;
            }
        }
        Ok(())
    }
}

/// A writer that passes on whole records: the bytes after the last
/// separator wait for the next write (up to [`HELD`]; past it they go out,
/// `partial`), and [`Whole::finish`] ends them with a separator. It knows
/// whether a write of `out` failed (an error of the output, not of what is
/// read).
struct Whole<'a> {
    out: &'a mut dyn Write,
    sep: u8,
    rest: Vec<u8>,
    /// The first bytes of `rest`'s record went out already.
    partial: bool,
    broken: bool,
}

impl Whole<'_> {
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        (self.out.write_all(b)).inspect_err(|_| self.broken = true)
    }

    /// The last record, ended with a separator.
    fn finish(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.rest);
        if !rest.is_empty() || self.partial {
            self.put(&rest)?;
            self.put(&[self.sep])?;
        }
        Ok(())
    }
}

impl Write for Whole<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match memchr::memrchr(self.sep, b) {
            Some(i) => {
                let rest = std::mem::take(&mut self.rest);
                self.put(&rest)?;
                self.put(&b[..=i])?;
                self.rest.extend_from_slice(&b[i + 1..]);
                self.partial = false;
            }
            None => self.rest.extend_from_slice(b),
        }
        if self.rest.len() as u64 > HELD {
            let rest = std::mem::take(&mut self.rest);
            self.put(&rest)?;
            self.partial = true;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().inspect_err(|_| self.broken = true)
    }
}

/// `bytes` as an input of its own (an unnamed temporary file, open while
/// the returned file is).
fn in_memory(name: &str, bytes: &[u8]) -> io::Result<(Input, File)> {
    let mut file = tempfile::tempfile()?;
    file.write_all(bytes)?;
    Ok(whole(name, file, bytes.len() as u64))
}

/// The temporary `file` of `len` bytes as an input named `name`, read
/// through its descriptor (open while the returned file is).
fn whole(name: &str, file: File, len: u64) -> (Input, File) {
    let path = fd_path(&file);
    let inp = Input {
        name: name.to_string(),
        source: Source::File { path, size: len },
        span: Some((0, len)),
    };
    (inp, file)
}

/// `[from, to)` of `file` as an input of its own (an unnamed temporary
/// file, copied a piece at a time, open while the returned file is).
fn copied(name: &str, file: &File, from: u64, to: u64) -> io::Result<(Input, File)> {
    let mut out = tempfile::tempfile()?;
    copy_range(file, from, to, &mut out)?;
    Ok(whole(name, out, to - from))
}

/// `[from, to)` of `file` written to `out`, a piece at a time.
fn copy_range(file: &File, from: u64, to: u64, out: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; (64 << 10).min(to.saturating_sub(from) as usize)];
    let mut at = from;
    while at < to {
        let want = buf.len().min((to - at) as usize);
        let n = read_full_at(file, &mut buf[..want], at)?;
        if n == 0 {
            return Err(io::Error::other("the file shrank while being read"));
        }
        out.write_all(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// The path that names `file` by its descriptor: a file renamed or removed
/// since it was opened is still the one read.
fn fd_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// Open `path` to follow it from its start.
fn open(name: &str, path: PathBuf) -> io::Result<Followed> {
    let file = File::open(&path)?;
    followed(name, Some(path), file)
}

/// `file` to follow from its start, watching `path` for rotation.
fn followed(name: &str, path: Option<PathBuf>, file: File) -> io::Result<Followed> {
    let m = file.metadata()?;
    Ok(Followed {
        name: name.to_string(),
        path,
        file,
        id: (m.dev(), m.ino()),
        offset: 0,
        size: 0,
        head: (0, 0),
        waiting: None,
        held: Vec::new(),
        codec: None,
        refused: false,
        mid: false,
    })
}

impl Followed {
    /// `[from, to)` of this file as an input the scan reads through its
    /// descriptor, no further than `to`.
    fn span(&self, from: u64, to: u64) -> Input {
        let path = fd_path(&self.file);
        Input {
            name: self.name.clone(),
            source: Source::File { path, size: to },
            // Always a span: without one the scan reads the whole file.
            span: Some((from, to)),
        }
    }

    /// Truncated (or rewritten) to `size` bytes: read again from the start;
    /// the partial record the last poll saw goes out as one (the copy that
    /// copytruncate made ends with it).
    fn restart(&mut self, size: u64, p: &mut Poll) {
        p.events.push(Event::Truncated {
            name: self.name.clone(),
            was: self.size,
            now: size,
        });
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            match in_memory(&self.name, &held) {
                Ok((inp, file)) => {
                    p.records.push(inp);
                    p.closing.push(file);
                }
                Err(e) => p.events.push(Event::Failed(InputError::io(&self.name, &e))),
            }
        }
        (self.offset, self.head, self.waiting, self.mid) = (0, (0, 0), None, false);
    }

    /// The partial record `[offset, size)` as an input: a copy of the bytes
    /// held (the scan finishes a record it reads past the span's end, and
    /// the file may have grown), or the span if it is too long to hold.
    fn partial(&self, size: u64, p: &mut Poll) -> Input {
        if self.held.len() as u64 == size - self.offset {
            if let Ok((inp, file)) = in_memory(&self.name, &self.held) {
                p.closing.push(file);
                return inp;
            }
        }
        if self.mid {
            if let Ok((inp, file)) = copied(&self.name, &self.file, self.offset, size) {
                p.closing.push(file);
                return inp;
            }
        }
        self.span(self.offset, size)
    }

    /// `[from, to)`, the rest of a flushed record, handed on as a record of
    /// its own (copied: see `mid`).
    fn copy_out(&self, from: u64, to: u64, p: &mut Poll) {
        if to <= from {
            return;
        }
        match copied(&self.name, &self.file, from, to) {
            Ok((inp, file)) => {
                p.records.push(inp);
                p.closing.push(file);
            }
            Err(e) => p.events.push(Event::Failed(InputError::io(&self.name, &e))),
        }
    }

    /// A file found compressed by its first bytes (unless `--decompress
    /// never`): read once, whole and decoded, when `still` (no longer
    /// growing, or the last poll); growth after that is said. `Some(keep)`
    /// when the file is compressed (or too short to tell yet), `None` when it
    /// is text, to read as it grows.
    fn compressed(&mut self, still: bool, mode: Decompress, p: &mut Poll) -> Option<bool> {
        if self.codec.is_none() && (self.size == 0 || !self.tell(still, mode)) {
            // Nothing to read yet, or too few bytes to tell.
            return (self.size > 0).then_some(true);
        }
        let done = self.path.is_none() && still;
        if mode == Decompress::Always && self.codec == Some(None) && !self.refused {
            // As a text file named at the start is refused.
            self.refused = true;
            let why = format!("{} (found while following)", decompress::NOT_COMPRESSED);
            p.events
                .push(Event::Failed(InputError::new(&self.name, why)));
        }
        if self.refused {
            return Some(!done);
        }
        let codec = self.codec??;
        if self.offset > 0 {
            if self.size != self.offset {
                let why = "a compressed file grew after --follow read it whole (a compressed \
                           file is read once, as it was then)";
                p.events
                    .push(Event::Failed(InputError::new(&self.name, why)));
                self.offset = self.size;
            }
        } else if still && self.size > 0 {
            p.records.push(Input {
                name: self.name.clone(),
                source: Source::Compressed {
                    path: fd_path(&self.file),
                    size: self.size,
                    codec,
                },
                span: None,
            });
            self.offset = self.size;
            p.changed = true;
        }
        Some(!done)
    }

    /// Tells text from a compressed format by the first bytes; false while
    /// they are too few to tell (and the file may still grow).
    fn tell(&mut self, still: bool, mode: Decompress) -> bool {
        let mut head = [0u8; decompress::MAGIC_LEN];
        let want = (self.size as usize).min(head.len());
        let n = read_full_at(&self.file, &mut head[..want], 0).unwrap_or(0);
        let head = &head[..n];
        let short = n < decompress::MAGIC_LEN && decompress::may_start(head);
        self.codec = match decompress::detect(head) {
            _ if mode == Decompress::Never || self.offset > 0 => Some(None),
            Some(c) => Some(Some(c)),
            None if short && !still => return false,
            None => Some(None),
        };
        true
    }

    /// Keep the partial record `[offset, size)` (if not too long).
    fn hold(&mut self, size: u64) {
        self.held.clear();
        let len = size - self.offset;
        if len <= HELD {
            self.held.resize(len as usize, 0);
            let n = read_full_at(&self.file, &mut self.held, self.offset).unwrap_or(0);
            self.held.truncate(n);
        }
    }

    /// Remember the hash of the first bytes handed on (up to [`HEAD`]).
    fn note_head(&mut self) {
        let len = self.offset.min(HEAD as u64);
        if len > self.head.0 {
            if let Some(h) = self.hash(len) {
                self.head = (len, h);
            }
        }
    }

    /// Are the first bytes handed on still the file's first bytes?
    fn same_head(&self) -> bool {
        self.head.0 == 0 || self.hash(self.head.0) == Some(self.head.1)
    }

    fn hash(&self, len: u64) -> Option<u64> {
        let mut b = vec![0u8; len as usize];
        let n = read_full_at(&self.file, &mut b, 0).ok()?;
        (n == b.len()).then(|| head_hash(&b))
    }
}
