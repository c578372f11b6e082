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

use super::read_full_at;
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
