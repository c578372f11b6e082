//! Reading the records a chunk owns.
//!
//! Workers read a chunk in small `pread`s (`read_size`, 32 KiB) into one reusable
//! buffer each: one channel receive (or one claim under a lock, for regions) per
//! chunk of megabytes, never a lock per record. A chunk owns the records that
//! *start* inside it; the worker reads the byte before the chunk to find its first
//! record and reads past the end to finish its last one, so no planning pass over
//! the data is needed.

use std::fs::File;
use std::io;

use super::{io_message, read_full_at};
use crate::jobs::{Chunk, Job};

/// Read the records owned by `[start, end)` of a file of `size` bytes and pass
/// them to the job, piece by piece. Returns the bytes owned.
///
/// The chunk is read in `piece`-byte `pread`s into one small reusable buffer, and
/// the job is called once per piece with the whole records in it; a record cut by
/// a piece boundary is moved to the front of the buffer and completed by the next
/// read (the buffer grows only for records longer than a piece).
#[allow(clippy::too_many_arguments)]
pub(super) fn process_range<J: Job>(
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
    let mut r = Pieces {
        file,
        buf,
        size,
        piece,
        sep,
        reach,
        pos: 0,
        base: 0,
        len: 0,
    };
    if start > 0 && !r.find_first(start, end)? {
        return Ok(0); // no record starts in this chunk
    }
    let first = r.base;
    let last = r.pass_records(end, |offset, data| {
        job.process(
            state,
            &Chunk {
                input,
                offset,
                data,
            },
        );
        !job.stopped()
    })?;
    Ok(last - first)
}

/// A file read piece by piece into one buffer: `buf[..len]` holds the bytes
/// from file offset `base`, and `pos` is the file offset of the next byte to
/// read.
struct Pieces<'a> {
    file: &'a File,
    buf: &'a mut Vec<u8>,
    size: u64,
    piece: usize,
    sep: u8,
    reach: &'a dyn Fn(u64),
    pos: u64,
    base: u64,
    len: usize,
}

impl Pieces<'_> {
    /// Phase 1: find the first record that starts in `[start, end)` (start > 0):
    /// the first separator among bytes start-1 ..= end-2, plus one; keep what
    /// follows it. False if no record starts there.
    fn find_first(&mut self, start: u64, end: u64) -> Result<bool, String> {
        self.pos = start - 1;
        loop {
            let want = (self.piece as u64).min(end - 1 - self.pos) as usize;
            if want == 0 {
                return Ok(false);
            }
            self.read(0, want)?;
            if let Some(p) = memchr::memchr(self.sep, &self.buf[..want]) {
                // Keep what follows the separator.
                self.buf.copy_within(p + 1..want, 0);
                self.base = self.pos + p as u64 + 1;
                self.len = want - p - 1;
                self.pos += want as u64;
                return Ok(true);
            }
            self.pos += want as u64;
        }
    }

    /// Phase 2: pass whole records (file offset, bytes) to `emit` until the
    /// record holding byte end-1 is complete: the owned range ends just after
    /// the first separator at or after end-1, or at the end of the file, or
    /// `emit` says stop (false). Returns the file offset where it ended.
    fn pass_records(
        &mut self,
        end: u64,
        mut emit: impl FnMut(u64, &[u8]) -> bool,
    ) -> Result<u64, String> {
        loop {
            if let Some(stop) = self.owned_end(end) {
                emit(self.base, &self.buf[..stop]);
                return Ok(self.base + stop as u64);
            }
            if self.pos >= self.size {
                if self.len > 0 {
                    emit(self.base, &self.buf[..self.len]);
                }
                return Ok(self.base + self.len as u64);
            }
            // Hand over the whole records we have, keep the partial one.
            if let Some(p) = memchr::memrchr(self.sep, &self.buf[..self.len]) {
                let stop = p + 1;
                let go_on = emit(self.base, &self.buf[..stop]);
                self.buf.copy_within(stop..self.len, 0);
                self.base += stop as u64;
                self.len -= stop;
                if !go_on {
                    return Ok(self.base);
                }
            }
            self.read_next()?;
        }
    }

    /// Where in the buffer the owned range ends, if the buffer holds its end
    /// (the first separator at or after byte end-1).
    fn owned_end(&self, end: u64) -> Option<usize> {
        if self.base + (self.len as u64) < end {
            return None;
        }
        let from = (end - 1).saturating_sub(self.base) as usize;
        let p = memchr::memchr(self.sep, &self.buf[from..self.len])?;
        Some(from + p + 1)
    }

    /// Read the next piece after what the buffer holds.
    fn read_next(&mut self) -> Result<(), String> {
        let len = self.len;
        if self.buf.len() < len + self.piece {
            self.buf.resize(len + self.piece, 0);
        }
        let want = (self.piece as u64).min(self.size - self.pos) as usize;
        self.read(len, want)?;
        self.pos += want as u64;
        self.len += want;
        Ok(())
    }

    /// Read `want` bytes at `pos` into `buf[at..]`, once the read-ahead gate lets
    /// them through; a short read means the file shrank.
    fn read(&mut self, at: usize, want: usize) -> Result<(), String> {
        (self.reach)(self.pos + want as u64);
        let got = read_full_at(self.file, &mut self.buf[at..at + want], self.pos)
            .map_err(|e| io_message(&e))?;
        if got < want {
            let (size, at) = (self.size, self.pos + got as u64);
            return Err(format!(
                "file shrank while being read (expected {size} bytes, read ended at {at})"
            ));
        }
        Ok(())
    }
}

/// The records owned by `[start, end)` of a mapped file, passed to the job in one
/// call (no copy).
pub(super) fn process_mapped<J: Job>(
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
