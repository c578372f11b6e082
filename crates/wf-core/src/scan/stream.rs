//! Streams: bytes that can be read only front to back (stdin, FIFOs, `<(...)`),
//! and the one place where they become record-aligned blocks. The scan planner
//! hands the blocks out like chunks; `wf feed`'s planner hands them to worker
//! processes. Both read through [`read_cut`].
//!
//! - A block is cut like a file's chunk: after the first separator at or after
//!   its nominal size (so a stream's blocks are the blocks the same bytes would
//!   have as a file, `[a, record_start_at(a + size))`). A record longer than the
//!   block goes whole; a last record without a separator ends the last block
//!   (which says so: [`Block::unterminated`]).
//! - Reads are no larger than the block needs (at least 4 KiB, at most 64 KiB
//!   past it), so small blocks stay small and the rest carried over to the next
//!   block stays short.
//! - Buffers come from a pool the consumers give them back to, and keep their
//!   initialised length: a recycled buffer is not zeroed again. (The scan's
//!   first stream reader grew its buffer with zeros before every read.)
//! - Records of any length in bounded memory, where the consumer takes long
//!   records in pieces (the scan, [`Cut::long`]): a record longer than the bound
//!   goes out as [`Block::piece`]s of about the bound, read at most 64 KiB at a
//!   time once it is longer than a read, so `wf count /dev/zero` holds a few
//!   buffers, not the stream. Every
//!   byte is searched for a separator a bounded number of times.
//! - A read error ends the stream; with [`Cut::whole_only`] the record it cut
//!   short is withheld (never handed out as if whole), and the reader says
//!   where the bytes not handed out begin.
//! - Stdin that is a regular file (`< log`) ending before the size it had
//!   when its read began shrank: an error, as a named file's is ([`Stdin`]).
//! - A consumer that must notice a stop while the stream is quiet reads through
//!   [`Polled`], which wakes every 100 ms to ask; a consumer that is gone stops
//!   the reading by refusing a block.
//! - A consumer that needs records as soon as they come (`wf sql`, whose LIMIT
//!   over a FIFO that stays open must see the lines written so far) reads
//!   through [`Polled::eager`]: when the stream has been quiet for a moment, the
//!   whole records read so far go out as a block, however short.
//! - Stdin, or a FIFO by name (`<(zcat ...)`), can be looked at once before the
//!   scan ([`stream_head`], for `wf report --format auto`): the bytes read then
//!   are kept here, with the FIFO's open file, and given back, first, to the
//!   scan's reader of that stream, so a pipe is detected as a file is without
//!   being spooled (a common log piped in was read as combined and failed every
//!   line).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::io::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use crossbeam_channel as chan;

use super::decompress::Meter;
use super::inputs::Source;
use std::sync::Arc;

/// A stream looked at before the scan ([`stream_head`]): stdin (no path) or
/// a FIFO, the raw bytes read from it, and the FIFO's open file (a pipe's
/// bytes, once read, are gone: the scan reads on from the same file).
struct Head {
    path: Option<PathBuf>,
    raw: Vec<u8>,
    file: Option<File>,
}

/// Heads read before the scan, each given back to the first reader of its
/// stream ([`open_stream`]).
static HEADS: std::sync::Mutex<Vec<Head>> = std::sync::Mutex::new(Vec::new());

/// The first `n` bytes of stdin (`path` `None`) or of the FIFO `path` (fewer
/// at its end), decoded if compressed as `decompress` says, for a caller that
/// must look before it reads (`wf report --format auto`: a stream was read as
/// combined, unlooked at, and an nginx-main stream's agents ran on to the
/// lines' ends). The raw bytes read are kept and read again first by the
/// scan; an error gives no head here, and is met and named by the scan. Call
/// once per stream, before the scan.
pub fn stream_head(path: Option<&Path>, n: usize, decompress: super::Decompress) -> Vec<u8> {
    let mut raw = Vec::new();
    let file = match path {
        None => {
            let _ = io::stdin().lock().take(n as u64).read_to_end(&mut raw);
            None
        }
        Some(p) => match File::open(p) {
            Ok(mut f) => {
                let _ = (&mut f).take(n as u64).read_to_end(&mut raw);
                Some(f)
            }
            Err(_) => return Vec::new(),
        },
    };
    HEADS.lock().unwrap().push(Head {
        path: path.map(Path::to_path_buf),
        raw: raw.clone(),
        file,
    });
    let decoded = (|| {
        let mut r: &[u8] = &raw;
        let head = super::decompress::read_head(&mut r)?;
        let rest: Box<dyn Read> = Box::new(io::Cursor::new(r.to_vec()));
        let mut text = Vec::new();
        let dec = super::decompress::sniffed_metered(head, rest, decompress, None)?;
        // A compressed head ends mid-stream: what decoded before that counts.
        let _ = dec.take(n as u64).read_to_end(&mut text);
        Ok::<_, io::Error>(text)
    })();
    decoded.unwrap_or_default()
}

/// The bytes of an input, decoded if compressed (the decoding's work added to
/// `meter`).
pub fn open_stream(src: &Source, meter: Option<&Arc<Meter>>) -> io::Result<Box<dyn Read>> {
    match src {
        Source::Compressed { path, codec, .. } => super::decompress::metered(path, *codec, meter),
        Source::Stream { path, decompress } => {
            let mut raw: Box<dyn Read> = match (path, taken_head(path.as_deref())) {
                (None, head) => {
                    let head = head.map(|h| h.raw).unwrap_or_default();
                    Box::new(io::Cursor::new(head).chain(Stdin::open()))
                }
                (
                    Some(_),
                    Some(Head {
                        raw, file: Some(f), ..
                    }),
                ) => Box::new(io::Cursor::new(raw).chain(f)),
                (Some(p), _) => Box::new(File::open(p)?),
            };
            if *decompress == super::Decompress::Never {
                return Ok(raw);
            }
            let head = super::decompress::read_head(&mut raw)?;
            super::decompress::sniffed_metered(head, raw, *decompress, meter)
        }
        Source::File { path, .. } => Ok(Box::new(File::open(path)?)),
    }
}

/// Standard input, read front to back; when it is a regular file (`<
/// FILE`), an end before the bytes it held from its offset when opened is
/// an error, not the end: a log truncated while `wf count < log` read it
/// gave a short answer, exit 0 (named files say so: `range.rs`).
struct Stdin {
    lock: io::StdinLock<'static>,
    /// Bytes from the offset to the file's end when opened (`None`: no
    /// regular file), and bytes read since.
    expected: Option<u64>,
    read: u64,
}

impl Stdin {
    fn open() -> Self {
        let lock = io::stdin().lock();
        let fd = lock.as_fd();
        let expected = regular_rest(fd.as_raw_fd());
        Stdin {
            lock,
            expected,
            read: 0,
        }
    }
}

/// The bytes from `fd`'s offset to its end, if it is a regular file.
fn regular_rest(fd: i32) -> Option<u64> {
    // SAFETY: `fstat` and `lseek` on a descriptor this process holds open
    // (stdin, locked by the caller); neither keeps the pointer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let pos = libc::lseek(fd, 0, libc::SEEK_CUR);
        (pos >= 0).then(|| (st.st_size as u64).saturating_sub(pos as u64))
    }
}

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.lock.read(buf)?;
        self.read += n as u64;
        match self.expected {
            Some(want) if n == 0 && !buf.is_empty() && self.read < want => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "file shrank while being read (it ended {} bytes short of its \
                     size when the read began)",
                    want - self.read
                ),
            )),
            _ => Ok(n),
        }
    }
}

/// The head read of the stream at `path` (stdin for `None`), if any: taken,
/// so that it is read once.
fn taken_head(path: Option<&Path>) -> Option<Head> {
    let mut heads = HEADS.lock().unwrap();
    let i = heads.iter().position(|h| h.path.as_deref() == path)?;
    Some(heads.remove(i))
}

/// Copy a stream to an unlinked temporary file. A read that fails after
/// some bytes (a truncated gzip) keeps them to the last `sep`, as a stream
/// read by blocks keeps its whole records, and gives that offset and the
/// error: `wf pangram` of a truncated `.gz` found nothing in the 542,911
/// bytes it could decode, where `count` read them.
pub(super) fn spool(
    src: &Source,
    meter: Option<&Arc<Meter>>,
    sep: u8,
) -> io::Result<(File, Option<(u64, io::Error)>)> {
    let mut r = open_stream(src, meter)?;
    let mut f = tempfile::tempfile()?;
    let mut buf = vec![0u8; 1 << 16];
    let (mut written, mut whole) = (0u64, 0u64);
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok((f, None)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                f.set_len(whole)?;
                return Ok((f, Some((whole, e))));
            }
        };
        f.write_all(&buf[..n])?;
        if let Some(last) = memchr::memrchr(sep, &buf[..n]) {
            whole = written + last as u64 + 1;
        }
        written += n as u64;
    }
}

/// Whole records of a stream: `buf[..len]`, from `offset` in the stream. The
/// rest of `buf` is room for the next use (give the buffer back to the pool).
pub(crate) struct Block {
    pub offset: u64,
    pub buf: Vec<u8>,
    pub len: usize,
    /// The block ends the stream with a record that has no separator.
    pub unterminated: bool,
    /// The block is a piece of a long record, not whole records: (first,
    /// last) piece of it. Only with [`Cut::long`].
    pub piece: Option<(bool, bool)>,
}

/// Where records end in a format whose records may hold the separator (a CSV
/// field in quotes may hold a line break). A stream is read front to back, so
/// its blocks can be cut at record ends found by following the quotes from
/// the stream's start: this is how `wf sql` reads a CSV stream as it comes
/// (a file is cut by a pass of its own, see `wf_sql`'s table).
pub trait RecordEnds: Send + Sync + std::fmt::Debug {
    /// The separator that ends the record starting at `data[start]`, or `None`
    /// when bytes after `data` could still change where it ends (it runs past
    /// the data, or a quote in it is still open).
    fn record_end(&self, data: &[u8], start: usize) -> Option<usize>;
}

/// How [`read_cut`] cuts a stream.
#[derive(Debug, Clone)]
pub(crate) struct Cut {
    /// Nominal block size.
    pub size: usize,
    pub sep: u8,
    /// Hand out a record longer than this many bytes in pieces, reading at
    /// most 64 KiB at a time; `None`: hold every record whole.
    pub long: Option<usize>,
    /// On a read error, withhold the record it cut short (else it goes out as
    /// the last block, as if the stream had ended there).
    pub whole_only: bool,
    /// Cut at these record ends, not at every separator (see [`RecordEnds`]);
    /// a record longer than `long` then ends the stream with an error.
    pub ends: Option<Arc<dyn RecordEnds>>,
}

/// A consumer's refusal of a block: stop reading.
pub(crate) struct Refused;

/// How reading a stream ended.
pub(crate) enum End {
    /// Every byte was handed out.
    Done,
    /// Reading failed; every byte read before the failure was handed out.
    Failed(io::Error),
    /// A block was refused, or [`Polled`]'s stop check said stop: nothing from
    /// this offset on was handed out.
    Stopped(u64),
}

/// Read `src` to its end in blocks of whole records of about `size` bytes cut
/// at `sep` (see the module comment), in buffers taken from `pool` (or new), and
/// pass each to `block` in stream order: [`read_cut`] with records held whole,
/// as the tests use it.
#[cfg(test)]
fn read_blocks(
    src: &mut dyn Read,
    size: usize,
    sep: u8,
    pool: &chan::Receiver<Vec<u8>>,
    block: impl FnMut(Block) -> Result<(), Refused>,
) -> End {
    let cut = Cut {
        size,
        sep,
        long: None,
        whole_only: false,
        ends: None,
    };
    read_cut(src, cut, pool, block).0
}

/// Read `src` to its end in blocks of whole records cut as `cut` says (see
/// the module comment), in buffers taken from `pool` (or new), and pass each
/// to `block` in stream order; also returns the stream offset up to which
/// bytes were handed out.
pub(crate) fn read_cut(
    src: &mut dyn Read,
    cut: Cut,
    pool: &chan::Receiver<Vec<u8>>,
    mut block: impl FnMut(Block) -> Result<(), Refused>,
) -> (End, u64) {
    let want = cut.size.max(1);
    let mut c = Cutter {
        src,
        want,
        // Read no more than the block needs (at least 4 KiB, at most 64 KiB
        // past it), so small blocks stay small and the carried rest stays short.
        step: want.clamp(4 << 10, 64 << 10),
        sep: cut.sep,
        long: cut.long,
        whole_only: cut.whole_only,
        ends: cut.ends,
        carry: Vec::new(),
        eof: false,
        error: None,
        within: false,
        starts_long: false,
        quiet: false,
    };
    let mut offset = 0u64;
    loop {
        let mut buf = pool.try_recv().unwrap_or_default();
        let Ok((cut, piece)) = c.next_cut(&mut buf) else {
            return (End::Stopped(offset), offset);
        };
        if cut == 0 && piece.is_none() {
            break;
        }
        let last = c.eof && c.carry.is_empty() && !c.starts_long;
        let unterminated = last && cut > 0 && buf[cut - 1] != c.sep;
        let b = Block {
            offset,
            buf,
            len: cut,
            unterminated,
            piece,
        };
        if block(b).is_err() {
            return (End::Stopped(offset), offset);
        }
        offset += cut as u64;
        if last {
            break;
        }
    }
    match c.error {
        Some(e) => (End::Failed(e), offset),
        None => (End::Done, offset),
    }
}

/// The state of [`read_cut`] between blocks.
struct Cutter<'a> {
    src: &'a mut dyn Read,
    want: usize,
    step: usize,
    sep: u8,
    long: Option<usize>,
    whole_only: bool,
    ends: Option<Arc<dyn RecordEnds>>,
    /// Bytes read past the last cut: the start of the next block.
    carry: Vec<u8>,
    eof: bool,
    /// The read error that ended the stream, reported once its bytes are out.
    error: Option<io::Error>,
    /// Inside a long record whose first piece went out.
    within: bool,
    /// The carry starts a long record (all of it, more than the bound).
    starts_long: bool,
    /// The last read found the stream quiet (see [`Polled::eager`]).
    quiet: bool,
}

/// The stream was stopped while being read.
struct Stopped;

/// A cut: the bytes of the block, and whether it is a piece of a long record.
type Cutting = (usize, Option<(bool, bool)>);

/// A cut, its piece flags, and the bytes filled (what follows the cut is
/// carried over).
type Filled = (usize, Option<(bool, bool)>, usize);

impl Cutter<'_> {
    /// Fill `buf` with the carried bytes and as much more as the next cut
    /// needs, and return the cut (0 and no piece: the stream is done); what
    /// follows the cut is carried over.
    fn next_cut(&mut self, buf: &mut Vec<u8>) -> Result<Cutting, Stopped> {
        // `buf[..filled]` is data; the rest of `buf` is initialised room.
        if buf.len() < self.carry.len() {
            buf.resize(self.carry.len(), 0);
        }
        buf[..self.carry.len()].copy_from_slice(&self.carry);
        let filled = self.carry.len();
        self.carry.clear();
        let (cut, piece, filled) = if self.starts_long {
            // The carry is the first piece of a long record.
            (self.starts_long, self.within) = (false, true);
            (filled, Some((true, false)), filled)
        } else if self.within {
            self.piece_cut(buf, filled)?
        } else if let Some(ends) = self.ends.clone() {
            self.ends_cut(buf, filled, &*ends)?
        } else {
            self.records_cut(buf, filled)?
        };
        self.carry.extend_from_slice(&buf[cut..filled]);
        Ok((cut, piece))
    }

    /// The next block of whole records: cut like a file's chunk, after the
    /// first separator at or after byte `want - 1`. With a bound on records,
    /// also cut before a record found to be longer (carried, to go out in
    /// pieces) or, if the block starts with it, hand it out as its first piece.
    /// Returns the cut, the piece flags and the bytes filled.
    fn records_cut(&mut self, buf: &mut Vec<u8>, mut filled: usize) -> Result<Filled, Stopped> {
        // Where the last record in `buf[..filled]` starts (tracked only where
        // needed: with a bound, or to withhold a record cut short).
        let track = self.long.is_some() || self.whole_only;
        let mut rec = if track {
            memchr::memrchr(self.sep, &buf[..filled]).map_or(0, |p| p + 1)
        } else {
            0
        };
        // Invariant: buf[want - 1..searched] holds no separator.
        let mut searched = self.want - 1;
        loop {
            if filled >= self.want || self.eof {
                if searched < filled {
                    if let Some(p) = memchr::memchr(self.sep, &buf[searched..filled]) {
                        return Ok((searched + p + 1, None, filled));
                    }
                    searched = filled;
                }
                if self.eof {
                    if self.error.is_some() && self.whole_only {
                        return Ok((rec, None, rec)); // the cut record is dropped
                    }
                    return Ok((filled, None, filled));
                }
            }
            if let Some(limit) = self.long {
                if filled - rec > limit {
                    if rec > 0 {
                        self.starts_long = true;
                        return Ok((rec, None, filled));
                    }
                    self.within = true;
                    return Ok((filled, Some((true, false)), filled));
                }
            }
            let old = filled;
            // Small reads once the last record is longer than a read: it may
            // be a long one, to go out in pieces.
            let small = self.long.is_some() && filled - rec > self.step;
            filled += self.read_more(buf, filled, small)?;
            if track {
                if let Some(p) = memchr::memrchr(self.sep, &buf[old..filled]) {
                    rec = old + p + 1;
                }
            }
            // A quiet stream: the whole records read so far go out now.
            if std::mem::take(&mut self.quiet) && rec > 0 {
                return Ok((rec, None, filled));
            }
        }
    }

    /// [`Cutter::records_cut`] at the record ends `ends` finds: after the
    /// first record that ends at or after byte `want - 1`, or after the whole
    /// records read so far when the stream goes quiet. The bytes after the last
    /// record end at the end of the stream go out as they are (the consumer
    /// cuts them by the same rule, which then knows they are all there). A
    /// record longer than the bound ends the stream: its end cannot be found
    /// in pieces, and what follows it cannot be cut without it.
    fn ends_cut(
        &mut self,
        buf: &mut Vec<u8>,
        mut filled: usize,
        ends: &dyn RecordEnds,
    ) -> Result<Filled, Stopped> {
        // `rec`: the start of the first record not known to be whole.
        let mut rec = 0;
        loop {
            while let Some(e) = ends.record_end(&buf[..filled], rec) {
                rec = e + 1;
                if rec >= self.want {
                    return Ok((rec, None, filled));
                }
            }
            if self.eof {
                if self.error.is_some() && self.whole_only {
                    return Ok((rec, None, rec)); // the cut record is dropped
                }
                return Ok((filled, None, filled));
            }
            if std::mem::take(&mut self.quiet) && rec > 0 {
                return Ok((rec, None, filled));
            }
            if let Some(limit) = self.long.filter(|&l| filled - rec > l) {
                let msg = format!("a record longer than {limit} bytes (--max-record)");
                self.error = Some(io::Error::new(io::ErrorKind::InvalidData, msg));
                self.eof = true;
                return Ok((rec, None, rec));
            }
            // Read at least as much as the unfinished record holds, so that
            // following its quotes again from its start stays linear.
            let old = filled;
            while filled - old < (old - rec).max(1) && !self.eof && !self.quiet {
                filled += self.read_more(buf, filled, false)?;
            }
        }
    }

    /// The next piece of a long record: up to and including its separator
    /// (its last piece), or about the bound's worth of it.
    fn piece_cut(&mut self, buf: &mut Vec<u8>, mut filled: usize) -> Result<Filled, Stopped> {
        // Pieces of about a block (or the bound, if smaller): pieces of the
        // bound's size, a GiB for `wf sql`'s --max-record, each held in
        // flight took 2.5x the bound of memory on an endless stdin record.
        let size = self.long.unwrap_or(self.want).min(self.want).max(self.step);
        let mut searched = 0;
        loop {
            if let Some(q) = memchr::memchr(self.sep, &buf[searched..filled]) {
                self.within = false;
                return Ok((searched + q + 1, Some((false, true)), filled));
            }
            searched = filled;
            if self.eof {
                self.within = false;
                if self.error.is_some() && self.whole_only {
                    return Ok((0, None, 0)); // the cut record's rest is dropped
                }
                return Ok((filled, Some((false, true)), filled));
            }
            if filled >= size {
                return Ok((filled, Some((false, false)), filled));
            }
            filled += self.read_more(buf, filled, true)?;
        }
    }

    /// One read after `buf[..filled]`, growing the buffer if it has no room.
    /// Returns the bytes read; at the end of the stream, or on an error (kept
    /// for later, so that what was read is handed out first), 0 and `eof`.
    /// `small`: at most `step` bytes, so that a long record's pieces stay
    /// small (else as much as the block still needs: a decoder's reads of a
    /// damaged block are then refused whole, as they always were).
    fn read_more(
        &mut self,
        buf: &mut Vec<u8>,
        filled: usize,
        small: bool,
    ) -> Result<usize, Stopped> {
        let room = if small {
            self.step
        } else {
            self.want.saturating_sub(filled).max(self.step)
        };
        if buf.len() < filled + room {
            let grow = (filled + room).max((self.want + self.step).min(buf.len() * 2));
            // At most as much again as a held record's bound and a block
            // (`resize` alone doubles the capacity: 2x the bound on stdin).
            if buf.capacity() < grow {
                let most = self
                    .long
                    .map_or(usize::MAX, |l| l.saturating_add(self.want + self.step));
                let doubled = buf.capacity().saturating_mul(2).min(most).max(grow);
                buf.reserve_exact(doubled - buf.len());
            }
            buf.resize(grow, 0);
        }
        self.quiet = false;
        loop {
            match self.src.read(&mut buf[filled..filled + room]) {
                Ok(0) => break,
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_stop(&e) => return Err(Stopped),
                Err(e) if e.get_ref().is_some_and(|x| x.is::<QuietMark>()) => {
                    self.quiet = true;
                    return Ok(0);
                }
                Err(e) => {
                    self.error = Some(e);
                    break;
                }
            }
        }
        self.eof = true;
        Ok(0)
    }
}

/// A stream read with `poll(2)` first, waking every 100 ms to ask `stop`: once
/// it says stop, reads fail with an error [`read_cut`] takes for
/// [`End::Stopped`]. So a reader blocked on a quiet pipe notices a stop within
/// 100 ms.
pub(crate) struct Polled<'a, F: AsFd> {
    f: F,
    stop: &'a dyn Fn() -> bool,
    /// With [`Polled::eager`]: how long the stream may be quiet before a read
    /// says so, and whether it has said so since the last bytes came.
    quiet: Option<i32>,
    told: bool,
}

/// The error of an eager [`Polled`] read on a quiet stream: [`read_cut`] then
/// hands out the whole records it holds, and reads on.
#[derive(Debug)]
struct QuietMark;

impl std::fmt::Display for QuietMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("quiet")
    }
}

impl std::error::Error for QuietMark {}

/// The error of a [`Polled`] read once its stop check said stop.
#[derive(Debug)]
struct StopMark;

impl std::fmt::Display for StopMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for StopMark {}

impl<'a, F: AsFd> Polled<'a, F> {
    pub(crate) fn new(f: F, stop: &'a dyn Fn() -> bool) -> Self {
        Polled {
            f,
            stop,
            quiet: None,
            told: false,
        }
    }

    /// A reader that also says when nothing came for `quiet_ms` (once per
    /// quiet spell), so that [`read_cut`] hands out the records it holds.
    pub(crate) fn eager(f: F, stop: &'a dyn Fn() -> bool, quiet_ms: i32) -> Self {
        Polled {
            quiet: Some(quiet_ms),
            ..Polled::new(f, stop)
        }
    }
}

/// Is `e` the error of a [`Polled`] read that was told to stop?
fn is_stop(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|x| x.is::<StopMark>())
}

impl<F: AsFd> Read for Polled<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.f.as_fd().as_raw_fd();
        loop {
            if (self.stop)() {
                return Err(io::Error::other(StopMark));
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let wait = match self.quiet {
                Some(ms) if !self.told => ms,
                _ => 100,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut p, 1, wait) } == 0 {
                if self.quiet.is_some() && !self.told {
                    self.told = true;
                    return Err(io::Error::other(QuietMark));
                }
                continue;
            }
            // Readable, hung up, or poll failed (not pollable): let read decide.
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                self.told = false;
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
                _ => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads at most `most` bytes at a time, then fails after `fail_at` bytes
    /// (if given), like a pipe that delivers little at a time.
    struct Trickle<'a> {
        data: &'a [u8],
        most: usize,
        fail_at: Option<usize>,
        at: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let end = self.fail_at.unwrap_or(self.data.len());
            if self.at == end && self.fail_at.is_some() {
                return Err(io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.most).min(end - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// Read `data` in blocks of `size`, recycling every buffer (so later blocks
    /// land in buffers holding stale bytes); returns the blocks' bytes, offsets
    /// and unterminated flags, and how reading ended.
    fn blocks(src: &mut dyn Read, size: usize) -> (Vec<(u64, Vec<u8>, bool)>, End) {
        let (pool_tx, pool) = chan::unbounded();
        let mut out = Vec::new();
        let end = read_blocks(src, size, b'\n', &pool, |b| {
            out.push((b.offset, b.buf[..b.len].to_vec(), b.unterminated));
            pool_tx.send(b.buf).unwrap();
            Ok(())
        });
        (out, end)
    }

    /// Where a file's chunk that starts at `a` ends: just after the first
    /// separator at or after `a + size - 1`, else at the end.
    fn file_cut(data: &[u8], a: usize, size: usize) -> usize {
        let from = (a + size - 1).min(data.len());
        memchr::memchr(b'\n', &data[from..]).map_or(data.len(), |p| from + p + 1)
    }

    #[test]
    fn blocks_are_whole_records_cut_like_a_files_chunks() {
        let long = format!("{}\n", "x".repeat(70_000));
        let inputs: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n".to_vec(),
            b"a".to_vec(),
            b"a\nbb\nccc\n".to_vec(),
            b"a\nbb\nccc\ndddd".to_vec(),
            b"\n\n\nab\n\ncd".to_vec(),
            format!("a\n{long}b\n{long}tail").into_bytes(),
            (0..5000)
                .map(|i| format!("{i}\n"))
                .collect::<String>()
                .into_bytes(),
        ];
        for data in &inputs {
            for size in [1, 2, 3, 7, 64, 1000, 4097, 1 << 20] {
                for most in [1, 5, 4096, usize::MAX] {
                    let what = format!("{} bytes, size {size}, reads of {most}", data.len());
                    let mut src = Trickle {
                        data,
                        most,
                        fail_at: None,
                        at: 0,
                    };
                    let (got, end) = blocks(&mut src, size);
                    assert!(matches!(end, End::Done), "{what}");
                    let mut at = 0;
                    for (i, (offset, bytes, unterminated)) in got.iter().enumerate() {
                        assert_eq!(*offset, at as u64, "{what}");
                        assert_eq!(at + bytes.len(), file_cut(data, at, size), "{what}");
                        let last = i + 1 == got.len();
                        assert_eq!(*unterminated, last && !data.ends_with(b"\n"), "{what}");
                        at += bytes.len();
                    }
                    assert_eq!(concat(&got), *data, "{what}");
                }
            }
        }
    }

    fn concat(blocks: &[(u64, Vec<u8>, bool)]) -> Vec<u8> {
        blocks.iter().flat_map(|b| b.1.iter().copied()).collect()
    }

    #[test]
    fn a_read_error_ends_the_stream_after_what_was_read() {
        let data = b"one\ntwo\nthree\nfour\n";
        for fail_at in [0, 3, 4, 10, data.len()] {
            let mut src = Trickle {
                data,
                most: 3,
                fail_at: Some(fail_at),
                at: 0,
            };
            let (got, end) = blocks(&mut src, 5);
            assert!(matches!(end, End::Failed(_)), "fail at {fail_at}");
            assert_eq!(concat(&got), data[..fail_at], "fail at {fail_at}");
        }
    }

    #[test]
    fn a_refused_block_or_a_stop_check_stops_reading() {
        let data = b"one\ntwo\nthree\nfour\n";
        let (_pool_tx, pool) = chan::unbounded();
        let mut seen = 0;
        let end = read_blocks(&mut &data[..], 4, b'\n', &pool, |_| {
            seen += 1;
            if seen == 2 {
                Err(Refused)
            } else {
                Ok(())
            }
        });
        assert!(matches!(end, End::Stopped(4)));
        // A quiet pipe (its writer open, nothing written): the stop check ends
        // the wait.
        let (rd, _wr) = std::io::pipe().unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let end = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(150));
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let check = || stop.load(std::sync::atomic::Ordering::SeqCst);
            let mut src = Polled::new(rd, &check);
            read_blocks(&mut src, 4, b'\n', &pool, |_| Ok(()))
        });
        assert!(matches!(end, End::Stopped(0)));
    }

    /// Blocks as [`read_cut`] gives them with a bound of `long` and
    /// `whole_only`: (offset, bytes, piece), the largest buffer, how it ended
    /// and where the bytes handed out end.
    #[allow(clippy::type_complexity)]
    fn cut_blocks(
        src: &mut dyn Read,
        size: usize,
        long: usize,
    ) -> (Vec<(u64, Vec<u8>, Option<(bool, bool)>)>, usize, End, u64) {
        let (pool_tx, pool) = chan::unbounded();
        let mut out = Vec::new();
        let mut most = 0;
        let cut = Cut {
            size,
            sep: b'\n',
            long: Some(long),
            whole_only: true,

            ends: None,
        };
        let (end, at) = read_cut(src, cut, &pool, |b| {
            most = most.max(b.buf.len());
            out.push((b.offset, b.buf[..b.len].to_vec(), b.piece));
            pool_tx.send(b.buf).unwrap();
            Ok(())
        });
        (out, most, end, at)
    }

    #[test]
    fn long_records_come_in_pieces_in_bounded_buffers() {
        let data = [
            &b"a\n"[..],
            &[b'x'; 100_000],
            b"\nb\n",
            &[b'y'; 2000],
            b"\n",
            &[b'z'; 50_000],
        ]
        .concat();
        for size in [1, 100, 4096, 1 << 20] {
            for most in [7, 4096, usize::MAX] {
                let what = format!("size {size}, reads of {most}");
                let mut src = Trickle {
                    data: &data,
                    most,
                    fail_at: None,
                    at: 0,
                };
                let (got, buf, end, at) = cut_blocks(&mut src, size, 1000);
                assert!(matches!(end, End::Done), "{what}");
                assert_eq!(at, data.len() as u64, "{what}");
                let bytes: Vec<u8> = got.iter().flat_map(|b| b.1.iter().copied()).collect();
                assert_eq!(bytes, data, "{what}");
                assert!(
                    buf <= size.max(1000) + 4 * (64 << 10),
                    "{what}: buffer {buf}"
                );
                let mut firsts = 0;
                for (off, d, piece) in &got {
                    let start = *off == 0 || data[*off as usize - 1] == b'\n';
                    match piece {
                        Some((first, last)) => {
                            assert_eq!(*first, start, "{what}: piece at {off}");
                            if *first {
                                firsts += 1;
                                assert!(d.len() > 1000, "{what}");
                            }
                            // Only the last piece holds the separator; it ends
                            // the record (or the input: it may be empty then).
                            let end = *off as usize + d.len();
                            let sep = d.contains(&b'\n');
                            assert!(*last || !sep, "{what}: piece at {off}");
                            if *last {
                                assert!(end == data.len() || data[end - 1] == b'\n', "{what}");
                            }
                        }
                        None => assert!(start, "{what}: block at {off}"),
                    }
                }
                // The last record at least (an earlier one may come whole in a
                // block: the consumer then passes it as one piece).
                assert!(firsts >= 1, "{what}: {firsts} long records in pieces");
            }
        }
        // An endless record: pieces, in buffers no larger than a block.
        let mut zero = io::repeat(0).take(64 << 20);
        let (got, buf, _, at) = cut_blocks(&mut zero, 8 << 20, 64 << 10);
        assert_eq!(at, 64 << 20);
        assert!(buf <= (8 << 20) + (256 << 10), "buffer {buf}");
        assert_eq!(got.first().unwrap().2, Some((true, false)));
        assert!(got.last().unwrap().2.unwrap().1);
    }

    #[test]
    fn a_read_error_withholds_the_record_it_cut() {
        let data = b"one\ntwo\nthree\nfour\n";
        for fail_at in [0, 3, 4, 10, 14, data.len()] {
            for long in [2, 1000] {
                let mut src = Trickle {
                    data,
                    most: 3,
                    fail_at: Some(fail_at),
                    at: 0,
                };
                let (got, _, end, at) = cut_blocks(&mut src, 5, long);
                assert!(matches!(end, End::Failed(_)), "fail at {fail_at}");
                let whole = data[..fail_at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                let bytes: Vec<u8> = got.iter().flat_map(|b| b.1.iter().copied()).collect();
                if long == 1000 {
                    assert_eq!(bytes, data[..whole], "fail at {fail_at}");
                }
                // Pieces of the cut record may have gone out, never its last.
                assert!(data.starts_with(&bytes));
                assert!(got
                    .iter()
                    .all(|b| !b.2.is_some_and(|p| p.1) || b.1.ends_with(b"\n")));
                assert_eq!(at, bytes.len() as u64, "fail at {fail_at}");
            }
        }
    }

    /// Records that end at a newline outside double quotes (CSV's rule,
    /// without its details), as the test's [`RecordEnds`].
    #[derive(Debug)]
    struct Quotes;

    impl RecordEnds for Quotes {
        fn record_end(&self, data: &[u8], start: usize) -> Option<usize> {
            let mut open = false;
            for (i, &b) in data.iter().enumerate().skip(start) {
                match b {
                    b'"' => open = !open,
                    b'\n' if !open => return Some(i),
                    _ => {}
                }
            }
            None
        }
    }

    fn quoted_blocks(data: &[u8], size: usize, most: usize, long: usize) -> (Vec<Vec<u8>>, End) {
        let (pool_tx, pool) = chan::unbounded();
        let mut src = Trickle {
            data,
            most,
            fail_at: None,
            at: 0,
        };
        let cut = Cut {
            size,
            sep: b'\n',
            long: Some(long),
            whole_only: true,
            ends: Some(Arc::new(Quotes)),
        };
        let mut out = Vec::new();
        let (end, _) = read_cut(&mut src, cut, &pool, |b| {
            out.push(b.buf[..b.len].to_vec());
            pool_tx.send(b.buf).unwrap();
            Ok(())
        });
        (out, end)
    }

    /// With record ends, a stream's blocks are cut only where a record ends
    /// (never at a line break inside quotes), and hold every byte once.
    #[test]
    fn blocks_cut_at_record_ends_keep_quoted_line_breaks() {
        let data = b"a,\"x\ny\"\nb\n\"\n\n\n\",c\nd,\"e\"\n\"open\nend";
        let ends: Vec<usize> = {
            let (mut v, mut at) = (vec![0], 0);
            while let Some(e) = Quotes.record_end(data, at) {
                at = e + 1;
                v.push(at);
            }
            v
        };
        for size in [1, 2, 5, 100] {
            for most in [1, 3, usize::MAX] {
                let (blocks, end) = quoted_blocks(data, size, most, 1 << 20);
                assert!(matches!(end, End::Done));
                assert_eq!(blocks.concat(), data, "size {size}, most {most}");
                let mut at = 0;
                for b in &blocks[..blocks.len() - 1] {
                    at += b.len();
                    assert!(ends.contains(&at), "cut at {at}: size {size}, most {most}");
                }
            }
        }
    }

    /// A record past the bound ends the stream (its end cannot be found in
    /// pieces): the whole records before it go out, and the error says why.
    #[test]
    fn a_quoted_record_past_the_bound_ends_the_stream() {
        let data = format!("a\nb\n\"{}\"\nc\n", "x\n".repeat(1000));
        let (blocks, end) = quoted_blocks(data.as_bytes(), 1, 64, 100);
        assert_eq!(blocks.concat(), b"a\nb\n");
        let End::Failed(e) = end else {
            panic!("not failed")
        };
        assert!(e.to_string().contains("longer than 100 bytes"), "{e}");
    }
}
