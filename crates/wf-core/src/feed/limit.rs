//! `--max-record` for streams: a reader between the stream and the scan's
//! stream reader (`scan/stream.rs`, which holds a record whole however long it
//! is) that passes on only records of at most `max` bytes and drops longer
//! ones, so `wf feed` on `/dev/zero` or a stream that never sends a separator
//! holds at most `max` bytes plus one read.
//!
//! A record is passed on only once its separator has been read or it is known
//! to be short enough (a final record without a separator, at the end of the
//! stream): a prefix of a record that turns out too long is never passed on.
//! What was dropped is kept in [`Dropped`], shared with the planner, which
//! names each dropped range by its offsets in the input and maps the offsets
//! of the blocks it sees (offsets in what was passed on) back to the input.

use std::io::{self, Read};
use std::sync::{Arc, Mutex};

/// Records dropped so far.
#[derive(Default)]
pub(crate) struct Dropped {
    /// Input ranges `[from, to)` of records too long (separator included).
    pub ranges: Vec<(u64, u64)>,
    /// For each drop: where it was in the bytes passed on, and its length.
    shifts: Vec<(u64, u64)>,
}

impl Dropped {
    /// The input offset of offset `f` (a record start) of the bytes passed on.
    pub(crate) fn input_offset(&self, f: u64) -> u64 {
        let gone: u64 = self
            .shifts
            .iter()
            .take_while(|s| s.0 <= f)
            .map(|s| s.1)
            .sum();
        f + gone
    }
}

/// Bytes read from the stream at a time.
const STEP: usize = 64 << 10;

pub(crate) struct Limit<'a> {
    src: &'a mut dyn Read,
    sep: u8,
    max: u64,
    /// `buf[out..ready]`: checked records to pass on; `buf[ready..len]`: a
    /// record begun.
    buf: Vec<u8>,
    out: usize,
    ready: usize,
    len: usize,
    /// Offset of `buf[0]` in the bytes passed on, and the input bytes dropped
    /// before it (so `buf[i]` is input byte `fbase + i + gone`).
    fbase: u64,
    gone: u64,
    /// Dropping a record too long that begins at this input offset.
    skip: Option<u64>,
    eof: bool,
    dropped: Arc<Mutex<Dropped>>,
}

impl<'a> Limit<'a> {
    pub(crate) fn new(src: &'a mut dyn Read, sep: u8, max: u64) -> (Self, Arc<Mutex<Dropped>>) {
        let dropped = Arc::new(Mutex::new(Dropped::default()));
        let l = Limit {
            src,
            sep,
            max,
            buf: Vec::new(),
            out: 0,
            ready: 0,
            len: 0,
            fbase: 0,
            gone: 0,
            skip: None,
            eof: false,
            dropped: dropped.clone(),
        };
        (l, dropped)
    }

    fn input(&self, i: usize) -> u64 {
        self.fbase + i as u64 + self.gone
    }

    /// Read more after the record begun (moved to the front) and check it.
    fn fill(&mut self) -> io::Result<()> {
        self.buf.copy_within(self.ready..self.len, 0);
        self.fbase += self.ready as u64;
        self.len -= self.ready;
        (self.out, self.ready) = (0, 0);
        if self.buf.len() < self.len + STEP {
            self.buf.resize(self.len + STEP, 0);
        }
        let n = self.src.read(&mut self.buf[self.len..self.len + STEP])?;
        if n == 0 {
            self.eof = true;
            // A final record without a separator.
            match self.skip.take() {
                Some(from) => self.record_drop(from, self.input(self.len)),
                None if (self.len - self.ready) as u64 > self.max => {
                    let (from, to) = (self.input(self.ready), self.input(self.len));
                    self.record_drop(from, to);
                    self.len = self.ready;
                }
                None => self.ready = self.len,
            }
            return Ok(());
        }
        let new = self.len;
        self.len += n;
        self.check(new);
        Ok(())
    }

    /// Mark the whole records in `buf[ready..len]` ready (searching from
    /// `new`) and drop those too long, or start skipping a record begun that
    /// is already too long.
    fn check(&mut self, mut new: usize) {
        let sep = self.sep;
        loop {
            if let Some(from) = self.skip {
                let Some(p) = memchr::memchr(sep, &self.buf[self.ready..self.len]) else {
                    self.gone += (self.len - self.ready) as u64;
                    self.len = self.ready;
                    return;
                };
                self.skip = None;
                self.remove(self.ready, self.ready + p, from);
                new = self.ready;
            }
            let Some(first) = memchr::memchr(sep, &self.buf[new..self.len]).map(|p| new + p) else {
                if (self.len - self.ready) as u64 > self.max {
                    self.skip = Some(self.input(self.ready));
                    self.gone += (self.len - self.ready) as u64;
                    self.len = self.ready;
                }
                return;
            };
            if (first - self.ready) as u64 > self.max {
                self.remove(self.ready, first, self.input(self.ready));
                new = self.ready;
                continue;
            }
            let last = first + memchr::memrchr(sep, &self.buf[first..self.len]).unwrap_or(0);
            let bad = (self.max < STEP as u64)
                .then(|| long_inside(&self.buf[first + 1..=last], sep, self.max))
                .flatten();
            let Some((s, e)) = bad else {
                self.ready = last + 1;
                return;
            };
            self.ready = first + 1 + s;
            self.remove(self.ready, first + 1 + e, self.input(self.ready));
            new = self.ready;
        }
    }

    /// Drop `buf[s..=e]` (the end of a record too long that began at input
    /// offset `from`).
    fn remove(&mut self, s: usize, e: usize, from: u64) {
        let to = self.input(e) + 1;
        self.record_drop(from, to);
        self.gone += (e + 1 - s) as u64;
        self.buf.copy_within(e + 1..self.len, s);
        self.len -= e + 1 - s;
    }

    /// Note the input range `[from, to)` dropped where `buf[ready]` is.
    fn record_drop(&mut self, from: u64, to: u64) {
        let at = self.fbase + self.ready as u64;
        let mut d = self.dropped.lock().unwrap();
        d.ranges.push((from, to));
        d.shifts.push((at, to - from));
    }
}

/// The first record of `recs` (whole records, each ending with `sep`) longer
/// than `max` bytes: its start and the index of its separator.
pub(crate) fn long_inside(recs: &[u8], sep: u8, max: u64) -> Option<(usize, usize)> {
    let mut start = 0;
    for p in memchr::memchr_iter(sep, recs) {
        if (p - start) as u64 > max {
            return Some((start, p));
        }
        start = p + 1;
    }
    None
}

impl Read for Limit<'_> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        while self.out == self.ready {
            if self.eof {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = dst.len().min(self.ready - self.out);
        dst[..n].copy_from_slice(&self.buf[self.out..self.out + n]);
        self.out += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `step` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn records_too_long_are_dropped_and_named_by_input_offset() {
        let mut data = Vec::new();
        let mut want = Vec::new();
        let mut ranges = Vec::new();
        for i in 0..2000usize {
            let n = match i % 97 {
                0 => 100_001,
                1 => 11,
                _ => i % 13,
            };
            let start = data.len() as u64;
            let rec = vec![b'a' + (i % 26) as u8; n];
            data.extend_from_slice(&rec);
            data.push(b'\n');
            if n > 10 {
                ranges.push((start, data.len() as u64));
            } else {
                want.extend_from_slice(&rec);
                want.push(b'\n');
            }
        }
        let start = data.len() as u64;
        data.extend_from_slice(&[b'z'; 70_000]);
        ranges.push((start, data.len() as u64));
        for step in [1, 7, 4096, 1 << 20] {
            let mut src = Trickle(&data, step);
            let (mut l, dropped) = Limit::new(&mut src, b'\n', 10);
            let mut got = Vec::new();
            l.read_to_end(&mut got).unwrap();
            assert!(got == want, "step {step}");
            assert_eq!(dropped.lock().unwrap().ranges, ranges, "step {step}");
            // Offsets passed on map back to the input: the first record
            // passed on (after two dropped, 100,001 and 11 bytes) is at 0.
            assert_eq!(dropped.lock().unwrap().input_offset(0), 100_014);
        }
    }
}
