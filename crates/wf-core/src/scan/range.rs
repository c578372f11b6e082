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
use crate::jobs::{Chunk, Job, Piece};

/// How a scan treats records longer than a bound (see [`Job::long_records`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Long {
    /// The longest record (bytes before its separator) passed whole.
    pub limit: usize,
    /// Longer ones go to [`Job::piece`]; else they are refused.
    pub pieces: bool,
}

impl Long {
    /// The job's bound, or `max_record` for a job that needs records whole.
    pub fn of<J: Job>(job: &J, max_record: u64) -> Long {
        match job.long_records() {
            Some(n) => Long {
                limit: n.max(1),
                pieces: true,
            },
            None => Long {
                limit: usize::try_from(max_record).unwrap_or(usize::MAX).max(1),
                pieces: false,
            },
        }
    }
}

/// Where a reader's records go: one job state, and the refusals.
pub(super) struct Feed<'a, J: Job> {
    pub job: &'a J,
    pub state: &'a mut J::State,
    pub input: usize,
    pub sep: u8,
    pub long: Long,
    /// A record too long for a job that needs it whole: its offset.
    pub refuse: &'a dyn Fn(u64),
}

impl<J: Job> Feed<'_, J> {
    /// Whole records from `offset`; a long one among them goes as one piece.
    /// One `memrchr` per `limit + 1` bytes finds them (none at all when `data`
    /// is no longer than the bound).
    pub fn records(&mut self, offset: u64, data: &[u8]) {
        let limit = self.long.limit;
        let (mut start, mut p) = (0, 0);
        while data.len() - p > limit {
            match last_sep(self.sep, &data[p..p + limit + 1]) {
                Some(q) => p += q + 1,
                None => {
                    let from = p + limit + 1;
                    let e = first_sep(self.sep, &data[from..]).map_or(data.len(), |q| from + q + 1);
                    self.whole(offset + start as u64, &data[start..p]);
                    self.piece(offset + p as u64, &data[p..e], true, true);
                    (start, p) = (e, e);
                }
            }
        }
        self.whole(offset + start as u64, &data[start..]);
    }

    fn whole(&mut self, offset: u64, data: &[u8]) {
        if !data.is_empty() {
            let input = self.input;
            let chunk = Chunk {
                input,
                offset,
                data,
            };
            self.job.process(self.state, &chunk);
        }
    }

    /// A piece of a long record: to the job, or (its first) refused.
    pub fn piece(&mut self, offset: u64, data: &[u8], first: bool, last: bool) {
        if self.long.pieces {
            let input = self.input;
            let piece = Piece {
                input,
                offset,
                data,
                first,
                last,
            };
            self.job.piece(self.state, &piece);
        } else if first {
            (self.refuse)(offset);
        }
    }
}

/// The bytes of a range that were not read, and why (a read failed, or the
/// file shrank): what was read before them went to the job in whole records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unread {
    pub from: u64,
    pub to: u64,
    pub why: String,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bytes {}..{} not read: {}", self.from, self.to, self.why)
    }
}

impl Unread {
    /// One input's unread ranges as one message: the first range's (lowest
    /// offset) when there is one, else the span from the first to the last,
    /// how many ranges and bytes, and the first's reason. A file truncated
    /// while being read was named by the one range a worker reported first
    /// (6 MB "not read" of a log that lost 900 MB).
    pub(super) fn summary(mut ranges: Vec<Unread>) -> Option<String> {
        ranges.sort_by_key(|u| (u.from, u.to));
        let first = ranges.first()?;
        if ranges.len() == 1 {
            return Some(first.to_string());
        }
        let (mut bytes, mut reach) = (0, first.from);
        for u in &ranges {
            bytes += u.to.saturating_sub(u.from.max(reach));
            reach = reach.max(u.to);
        }
        Some(format!(
            "bytes {}..{reach} not read ({bytes} bytes in {} ranges): {}",
            first.from,
            ranges.len(),
            first.why
        ))
    }
}

/// Why a read stopped, and the file offset it reached.
struct ReadFailed {
    at: u64,
    why: String,
}

/// Read the records owned by `[start, end)` of a file of `size` bytes and pass
/// them to the job, piece by piece. Returns the bytes owned.
///
/// The chunk is read in `piece`-byte `pread`s into one small reusable buffer, and
/// the job is called once per piece with the whole records in it; a record cut by
/// a piece boundary is moved to the front of the buffer and completed by the next
/// read (the buffer grows only for records longer than a piece, and no further
/// than the job's bound: a longer record goes out in pieces, see [`Long`]).
/// Every byte is searched for separators at most twice, however long its record.
/// A failed or short read ends the range: the record it cut is not passed, and
/// the error names the bytes not read.
pub(super) fn process_range<J: Job>(
    feed: &mut Feed<'_, J>,
    buf: &mut Vec<u8>,
    file: &File,
    (start, end, size): (u64, u64, u64),
    piece: usize,
    reach: &dyn Fn(u64),
) -> Result<u64, Unread> {
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
        sep: feed.sep,
        reach,
        pos: 0,
        base: start,
        len: 0,
        seen: 0,
        within: false,
    };
    let unread = |from: u64, e: ReadFailed| Unread {
        from,
        to: end.max(e.at).max(from),
        why: e.why,
    };
    if start > 0 {
        match r.find_first(start, end) {
            Ok(true) => {}
            Ok(false) => return Ok(0), // no record starts in this chunk
            Err(e) => return Err(unread(start, e)),
        }
    }
    let first = r.base;
    match r.pass_records(end, feed) {
        Ok(last) => Ok(last - first),
        Err(e) => Err(unread(r.base, e)),
    }
}

/// A file read piece by piece into one buffer: `buf[..len]` holds the bytes
/// from file offset `base`, and `pos` is the file offset of the next byte to
/// read. `buf[..seen]` holds no separator (searched already).
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
    seen: usize,
    /// `base` is inside a long record whose first piece went out.
    within: bool,
}

impl Pieces<'_> {
    /// Phase 1: find the first record that starts in `[start, end)` (start > 0):
    /// the first separator among bytes start-1 ..= end-2, plus one; keep what
    /// follows it. False if no record starts there.
    fn find_first(&mut self, start: u64, end: u64) -> Result<bool, ReadFailed> {
        self.pos = start - 1;
        loop {
            let want = (self.piece as u64).min(end - 1 - self.pos) as usize;
            if want == 0 {
                return Ok(false);
            }
            self.read(0, want)?;
            if let Some(p) = first_sep(self.sep, &self.buf[..want]) {
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

    /// Phase 2: pass whole records (and pieces of long ones) to `feed` until the
    /// record holding byte end-1 is complete: the owned range ends just after
    /// the first separator at or after end-1, or at the end of the file, or the
    /// job says stop. Returns the file offset where it ended.
    fn pass_records<J: Job>(
        &mut self,
        end: u64,
        feed: &mut Feed<'_, J>,
    ) -> Result<u64, ReadFailed> {
        loop {
            if self.within {
                if let Some(done) = self.long_piece(end, feed) {
                    return Ok(done);
                }
                if !self.within {
                    continue; // the long record ended; records may follow
                }
            } else {
                if let Some(stop) = self.owned_end(end) {
                    feed.records(self.base, &self.buf[..stop]);
                    return Ok(self.base + stop as u64);
                }
                // Hand over the whole records we have, keep the partial one.
                if let Some(p) = last_sep(self.sep, &self.buf[self.seen..self.len]) {
                    let stop = self.seen + p + 1;
                    feed.records(self.base, &self.buf[..stop]);
                    self.consume(stop);
                    if feed.job.stopped() {
                        return Ok(self.base);
                    }
                }
                self.seen = self.len;
                if self.pos >= self.size {
                    feed.records(self.base, &self.buf[..self.len]);
                    return Ok(self.base + self.len as u64);
                }
                if self.len > feed.long.limit {
                    // A record too long to hold: out in pieces from here on.
                    feed.piece(self.base, &self.buf[..self.len], true, false);
                    self.consume(self.len);
                    self.within = true;
                }
            }
            self.read_next()?;
        }
    }

    /// Inside a long record: pass the buffer on as its next piece, its last if
    /// the buffer holds its separator (then `within` ends). Returns where the
    /// range ended if it did (the record held byte end-1, or the file ended, or
    /// the job says stop).
    fn long_piece<J: Job>(&mut self, end: u64, feed: &mut Feed<'_, J>) -> Option<u64> {
        match first_sep(self.sep, &self.buf[self.seen..self.len]) {
            Some(q) => {
                let stop = self.seen + q + 1;
                feed.piece(self.base, &self.buf[..stop], false, true);
                self.consume(stop);
                self.within = false;
                (self.base >= end || feed.job.stopped()).then_some(self.base)
            }
            None if self.pos >= self.size => {
                feed.piece(self.base, &self.buf[..self.len], false, true);
                Some(self.base + self.len as u64)
            }
            None => {
                if self.len > 0 {
                    feed.piece(self.base, &self.buf[..self.len], false, false);
                    self.consume(self.len);
                }
                feed.job.stopped().then_some(self.base)
            }
        }
    }

    /// The first `n` bytes of the buffer went to the job.
    fn consume(&mut self, n: usize) {
        self.buf.copy_within(n..self.len, 0);
        self.base += n as u64;
        self.len -= n;
        self.seen = self.seen.saturating_sub(n);
    }

    /// Where in the buffer the owned range ends, if the buffer holds its end
    /// (the first separator at or after byte end-1); `buf[..seen]` is not
    /// searched again.
    fn owned_end(&self, end: u64) -> Option<usize> {
        if self.base + (self.len as u64) < end {
            return None;
        }
        let from = ((end - 1).saturating_sub(self.base) as usize).max(self.seen);
        let p = first_sep(self.sep, &self.buf[from..self.len])?;
        Some(from + p + 1)
    }

    /// Read the next piece after what the buffer holds.
    fn read_next(&mut self) -> Result<(), ReadFailed> {
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
    fn read(&mut self, at: usize, want: usize) -> Result<(), ReadFailed> {
        (self.reach)(self.pos + want as u64);
        let got = read_full_at(self.file, &mut self.buf[at..at + want], self.pos).map_err(|e| {
            ReadFailed {
                at: self.pos,
                why: io_message(&e),
            }
        })?;
        if got < want {
            let (size, at) = (self.size, self.pos + got as u64);
            let why =
                format!("file shrank while being read (expected {size} bytes, read ended at {at})");
            return Err(ReadFailed { at, why });
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes searched for separators on this thread (see the tests).
    static SEARCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The first separator in `hay` (every search of record data goes through
/// this and [`last_sep`], so that the tests can count the bytes searched).
fn first_sep(sep: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(test)]
    SEARCHED.with(|c| c.set(c.get() + hay.len() as u64));
    memchr::memchr(sep, hay)
}

/// The last separator in `hay`.
fn last_sep(sep: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(test)]
    SEARCHED.with(|c| c.set(c.get() + hay.len() as u64));
    memchr::memrchr(sep, hay)
}

/// The records owned by `[start, end)` of a mapped file, passed to the job in one
/// call (no copy).
pub(super) fn process_mapped<J: Job>(
    feed: &mut Feed<'_, J>,
    map: &[u8],
    start: u64,
    end: u64,
) -> u64 {
    let (start, end, sep) = (start as usize, end as usize, feed.sep);
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
    feed.records(first as u64, &map[first..last]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::io::Write;

    /// Collects what it is given: whole records' chunks and long records' pieces.
    struct Collect {
        long: Option<usize>,
    }

    #[derive(Default)]
    struct Got {
        chunks: Vec<(u64, Vec<u8>)>,
        pieces: Vec<(u64, Vec<u8>, bool, bool)>,
    }

    impl Job for Collect {
        type State = Got;
        fn new_state(&self) -> Got {
            Got::default()
        }
        fn process(&self, st: &mut Got, c: &Chunk<'_>) {
            st.chunks.push((c.offset, c.data.to_vec()));
        }
        fn merge(&self, _: &mut Got, _: Got) {}
        fn long_records(&self) -> Option<usize> {
            self.long
        }
        fn piece(&self, st: &mut Got, p: &Piece<'_>) {
            st.pieces.push((p.offset, p.data.to_vec(), p.first, p.last));
        }
    }

    fn file_of(data: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut t = tempfile::NamedTempFile::new().unwrap();
        t.write_all(data).unwrap();
        let f = File::open(t.path()).unwrap();
        (t, f)
    }

    /// What `[start, end)` of `data` gives `job` (read `piece` bytes at a
    /// time, `reach` called before each read), the offsets refused, the bytes
    /// searched for separators and the buffer's final size.
    struct Ran {
        got: Got,
        done: Result<u64, Unread>,
        refused: Vec<u64>,
        searched: u64,
        buf: usize,
    }

    fn ran(
        job: &Collect,
        f: &File,
        (start, end): (u64, u64),
        piece: usize,
        reach: &dyn Fn(u64),
    ) -> Ran {
        let size = f.metadata().unwrap().len();
        let refused = RefCell::new(Vec::new());
        let refuse = |at| refused.borrow_mut().push(at);
        let mut state = job.new_state();
        let mut feed = Feed {
            job,
            state: &mut state,
            input: 0,
            sep: b'\n',
            long: Long::of(job, 1 << 40),
            refuse: &refuse,
        };
        let mut buf = Vec::new();
        SEARCHED.with(|c| c.set(0));
        let done = process_range(&mut feed, &mut buf, f, (start, end, size), piece, reach);
        Ran {
            got: state,
            done,
            refused: refused.into_inner(),
            searched: SEARCHED.with(|c| c.get()),
            buf: buf.len(),
        }
    }

    /// The bytes passed, in order: chunks and pieces by offset.
    fn passed(g: &Got) -> Vec<u8> {
        let mut all: Vec<(u64, &[u8])> = g.chunks.iter().map(|(o, d)| (*o, &d[..])).collect();
        all.extend(g.pieces.iter().map(|(o, d, _, _)| (*o, &d[..])));
        all.sort_by_key(|x| x.0);
        all.into_iter().flat_map(|x| x.1.iter().copied()).collect()
    }

    /// One record of 2 MiB read 4 KiB at a time: every byte is searched a
    /// bounded number of times (the search over the whole partial record after
    /// every read searched about 512 MB here), whether the range ends inside
    /// the long record or after it.
    #[test]
    fn a_long_record_is_searched_in_linear_time() {
        let long = vec![b'x'; 2 << 20];
        let data = [&b"ab\n"[..], &long, b"\nc\nd\n"].concat();
        let (_t, f) = file_of(&data);
        let job = Collect { long: None };
        for range in [
            (0, data.len() as u64),
            (0, 10),
            (1, 10),
            (5, data.len() as u64 - 3),
        ] {
            let r = ran(&job, &f, range, 4096, &|_| {});
            assert!(r.done.is_ok(), "{range:?}");
            assert!(
                r.searched <= 3 * data.len() as u64,
                "{range:?}: {} bytes searched",
                r.searched
            );
        }
        let r = ran(&job, &f, (0, data.len() as u64), 4096, &|_| {});
        assert_eq!(passed(&r.got), data);
    }

    /// A job that takes long records in pieces never has one held whole: the
    /// buffer stays near the bound, the pieces partition the record (the first
    /// holding more than the bound), and short records still come whole.
    #[test]
    fn long_records_go_out_in_pieces() {
        let data = [
            &b"ab\n"[..],
            &[b'x'; 5000],
            b"\nc\n",
            &[b'y'; 101],
            b"\n",
            &[b'z'; 3000],
        ]
        .concat();
        let (_t, f) = file_of(&data);
        let job = Collect { long: Some(100) };
        for piece in [64, 100, 1000, 8192] {
            for range in [
                (0, data.len() as u64),
                (0, 10),
                (2, 5005),
                (5005, data.len() as u64),
            ] {
                let r = ran(&job, &f, range, piece, &|_| {});
                let what = format!("piece {piece}, {range:?}");
                assert!(
                    r.buf <= 100 + 2 * piece.max(64) + 64,
                    "{what}: buffer {}",
                    r.buf
                );
                let n = r.done.unwrap() as usize;
                let mut all = passed(&r.got);
                all.truncate(n);
                assert!(data.windows(n.max(1)).any(|w| w == &all[..]), "{what}");
                for (_, d) in &r.got.chunks {
                    for rec in d.split_inclusive(|&b| b == b'\n') {
                        assert!(rec.len() <= 101, "{what}: a long record passed whole");
                    }
                }
                for (off, d, first, _) in &r.got.pieces {
                    let start = *off == 0 || data[*off as usize - 1] == b'\n';
                    assert_eq!(*first, start, "{what}: piece at {off}");
                    if *first {
                        assert!(d.len() > 100, "{what}: a first piece of {}", d.len());
                    }
                }
                let lasts = r.got.pieces.iter().filter(|p| p.3).count();
                let firsts = r.got.pieces.iter().filter(|p| p.2).count();
                assert_eq!(firsts, lasts, "{what}");
            }
        }
        // The whole file: every byte once, in order; three long records.
        let r = ran(&job, &f, (0, data.len() as u64), 64, &|_| {});
        assert_eq!(passed(&r.got), data);
        assert_eq!(r.got.pieces.iter().filter(|p| p.2).count(), 3);
    }

    /// A job that needs records whole: a long one is refused (its offset
    /// given), the others passed.
    #[test]
    fn a_record_longer_than_max_record_is_refused() {
        let data = [&b"ab\n"[..], &[b'x'; 5000], b"\nc\nd"].concat();
        let (_t, f) = file_of(&data);
        let job = Collect { long: None };
        let size = data.len() as u64;
        let refused = RefCell::new(Vec::new());
        let refuse = |at| refused.borrow_mut().push(at);
        let mut state = job.new_state();
        let mut feed = Feed {
            job: &job,
            state: &mut state,
            input: 0,
            sep: b'\n',
            long: Long::of(&job, 1024),
            refuse: &refuse,
        };
        let mut buf = Vec::new();
        let n = process_range(&mut feed, &mut buf, &f, (0, size, size), 256, &|_| {});
        assert_eq!(n, Ok(size));
        assert_eq!(refused.into_inner(), vec![3]);
        assert_eq!(passed(&state), b"ab\nc\nd");
        assert!(buf.len() < 2048, "buffer {}", buf.len());
    }

    /// The file shrinks between two reads (cut inside a record): the records
    /// read before are passed whole, the cut record is not, and the error
    /// names the bytes not read from its start.
    #[test]
    fn a_file_that_shrinks_between_reads_passes_no_cut_record() {
        let data: Vec<u8> = (0..2000)
            .flat_map(|i| format!("record {i}\n").into_bytes())
            .collect();
        for long in [None, Some(4)] {
            let (t, f) = file_of(&data);
            let cut = 10_005u64; // inside a record
            let writer = std::fs::OpenOptions::new()
                .write(true)
                .open(t.path())
                .unwrap();
            let reach = |at: u64| {
                if at > 12_000 {
                    writer.set_len(cut).unwrap();
                }
            };
            let job = Collect { long };
            let r = ran(&job, &f, (0, data.len() as u64), 4096, &reach);
            let e = r.done.unwrap_err();
            let got = passed(&r.got);
            assert!(data.starts_with(&got), "{long:?}");
            // Whole records only (a job taking pieces may have had the
            // first pieces of the cut record, never its last).
            assert!(long.is_some() || got.ends_with(b"\n"));
            assert!(r.got.pieces.iter().all(|p| !p.3 || p.1.ends_with(b"\n")));
            assert_eq!(e.from, got.len() as u64, "{long:?}");
            assert_eq!(e.to, data.len() as u64);
            assert!(
                e.to_string()
                    .starts_with(&format!("bytes {}..{} not read: file shrank", e.from, e.to)),
                "{e}"
            );
            assert!(r.refused.is_empty());
        }
    }

    /// An input's unread ranges say where the loss starts and how much it
    /// is, not only the range reported first.
    #[test]
    fn unread_ranges_are_summed_into_one_message() {
        let u = |from, to, why: &str| Unread {
            from,
            to,
            why: why.into(),
        };
        assert_eq!(Unread::summary(vec![]), None);
        let one = Unread::summary(vec![u(5, 9, "x")]).unwrap();
        assert_eq!(one, "bytes 5..9 not read: x");
        let many = vec![
            u(300, 400, "late"),
            u(100, 200, "first"),
            u(150, 250, "overlap"),
        ];
        assert_eq!(
            Unread::summary(many).unwrap(),
            "bytes 100..400 not read (250 bytes in 3 ranges): first"
        );
    }
}
