//! Streams: bytes that can be read only front to back (stdin, FIFOs, `<(...)`),
//! and the one place where they become record-aligned blocks. The scan planner
//! hands the blocks out like chunks; `wf feed`'s planner hands them to worker
//! processes. Both read through [`read_blocks`].
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
//! - A consumer that must notice a stop while the stream is quiet reads through
//!   [`Polled`], which wakes every 100 ms to ask; a consumer that is gone stops
//!   the reading by refusing a block.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::io::{AsFd, AsRawFd};

use crossbeam_channel as chan;

use super::decompress::Meter;
use super::inputs::Source;
use std::sync::Arc;

/// The bytes of an input, decoded if compressed (the decoding's work added to
/// `meter`).
pub(crate) fn open_stream(src: &Source, meter: Option<&Arc<Meter>>) -> io::Result<Box<dyn Read>> {
    match src {
        Source::Compressed { path, codec, .. } => super::decompress::metered(path, *codec, meter),
        Source::Stream { path, decompress } => {
            let mut raw: Box<dyn Read> = match path {
                None => Box::new(io::stdin().lock()),
                Some(p) => Box::new(File::open(p)?),
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

/// Copy a stream to an unlinked temporary file.
pub(super) fn spool(src: &Source, meter: Option<&Arc<Meter>>) -> io::Result<File> {
    let mut r = open_stream(src, meter)?;
    let mut f = tempfile::tempfile()?;
    io::copy(&mut r, &mut f)?;
    Ok(f)
}

/// Whole records of a stream: `buf[..len]`, from `offset` in the stream. The
/// rest of `buf` is room for the next use (give the buffer back to the pool).
pub(crate) struct Block {
    pub offset: u64,
    pub buf: Vec<u8>,
    pub len: usize,
    /// The block ends the stream with a record that has no separator.
    pub unterminated: bool,
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
/// pass each to `block` in stream order.
pub(crate) fn read_blocks(
    src: &mut dyn Read,
    size: usize,
    sep: u8,
    pool: &chan::Receiver<Vec<u8>>,
    mut block: impl FnMut(Block) -> Result<(), Refused>,
) -> End {
    let want = size.max(1);
    let mut c = Cutter {
        src,
        want,
        // Read no more than the block needs (at least 4 KiB, at most 64 KiB
        // past it), so small blocks stay small and the carried rest stays short.
        step: want.clamp(4 << 10, 64 << 10),
        sep,
        carry: Vec::new(),
        eof: false,
        error: None,
    };
    let mut offset = 0u64;
    loop {
        let mut buf = pool.try_recv().unwrap_or_default();
        let Ok(cut) = c.next_cut(&mut buf) else {
            return End::Stopped(offset);
        };
        if cut == 0 {
            break;
        }
        let last = c.eof && c.carry.is_empty();
        let unterminated = last && buf[cut - 1] != sep;
        let b = Block {
            offset,
            buf,
            len: cut,
            unterminated,
        };
        if block(b).is_err() {
            return End::Stopped(offset);
        }
        offset += cut as u64;
        if last {
            break;
        }
    }
    match c.error {
        Some(e) => End::Failed(e),
        None => End::Done,
    }
}

/// The state of [`read_blocks`] between blocks.
struct Cutter<'a> {
    src: &'a mut dyn Read,
    want: usize,
    step: usize,
    sep: u8,
    /// Bytes read past the last cut: the start of the next block.
    carry: Vec<u8>,
    eof: bool,
    /// The read error that ended the stream, reported once its bytes are out.
    error: Option<io::Error>,
}

/// The stream was stopped while being read.
struct Stopped;

impl Cutter<'_> {
    /// Fill `buf` with the carried bytes and as much more as the next cut
    /// needs, and return the cut (0: the stream is done); what follows the cut
    /// is carried over.
    fn next_cut(&mut self, buf: &mut Vec<u8>) -> Result<usize, Stopped> {
        // `buf[..filled]` is data; the rest of `buf` is initialised room.
        if buf.len() < self.carry.len() {
            buf.resize(self.carry.len(), 0);
        }
        buf[..self.carry.len()].copy_from_slice(&self.carry);
        let mut filled = self.carry.len();
        self.carry.clear();
        // Like a file's chunks: cut after the first separator at or after
        // byte `want - 1`. Invariant: buf[want - 1..searched] holds none.
        let mut searched = self.want - 1;
        let cut = loop {
            if filled >= self.want || self.eof {
                if searched < filled {
                    if let Some(p) = memchr::memchr(self.sep, &buf[searched..filled]) {
                        break searched + p + 1;
                    }
                    searched = filled;
                }
                if self.eof {
                    break filled;
                }
            }
            filled += self.read_more(buf, filled)?;
        };
        self.carry.extend_from_slice(&buf[cut..filled]);
        Ok(cut)
    }

    /// One read after `buf[..filled]`, growing the buffer if it has no room.
    /// Returns the bytes read; at the end of the stream, or on an error (kept
    /// for later, so that what was read is handed out first), 0 and `eof`.
    fn read_more(&mut self, buf: &mut Vec<u8>, filled: usize) -> Result<usize, Stopped> {
        let room = self.want.saturating_sub(filled).max(self.step);
        if buf.len() < filled + room {
            let grow = (filled + room).max((self.want + self.step).min(buf.len() * 2));
            buf.resize(grow, 0);
        }
        loop {
            match self.src.read(&mut buf[filled..filled + room]) {
                Ok(0) => break,
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_stop(&e) => return Err(Stopped),
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
/// it says stop, reads fail with an error [`read_blocks`] takes for
/// [`End::Stopped`]. So a reader blocked on a quiet pipe notices a stop within
/// 100 ms.
pub(crate) struct Polled<'a, F: AsFd> {
    f: F,
    stop: &'a dyn Fn() -> bool,
}

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
        Polled { f, stop }
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
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut p, 1, 100) } == 0 {
                continue;
            }
            // Readable, hung up, or poll failed (not pollable): let read decide.
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
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
}
