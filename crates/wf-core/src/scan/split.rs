//! One compressed file on every core: a multi-frame zstd file or a multi-member
//! gzip file is cut into parts at frame or member starts; each part is decoded
//! and parsed by one worker into a job state of its own, and the records that
//! straddle two parts are stitched together at the end ([`resolve`]).
//!
//! Where parts start ([`locate`]):
//! - zstd: the frames' sizes, walked from their headers (exact).
//! - gzip in BGZF (`bgzip`): every member says its size in a `BC` extra field
//!   (exact).
//! - other gzip files (concatenated members, `pigz` of several files): a search
//!   for member headers near each nominal cut, each checked by decoding its first
//!   64 KiB. Such a start is a guess: bytes inside compressed data can look like
//!   a member (a stored block may even hold a whole gzip file). So a part counts
//!   only if the chain of parts from byte 0 reaches it: the part before it ended
//!   its last member (CRC checked) exactly there. A part the chain skips is
//!   dropped with its state, and the bytes the chain has not covered are decoded
//!   again, front to back.
//!
//! A gzip file of one chunk is still cut at its second member, if it has one.
//! A single-member gzip file has no such cut and is read as a stream (one decoder
//! thread, parsing on the workers). Every part keeps its own state until the end,
//! so that the answer is the same at every thread count and part size. Jobs
//! that need exact offsets ([`Job::offsets`]) are given whole streams instead;
//! a compressed range of theirs (`--since`, `seek.rs`) one stream from the
//! range's start at its decoded offset ([`open_range`], [`decoded_at`]).
//!
//! Damage: a gzip member that fails (bad data, CRC, a header that does not
//! check out) is skipped up to the next member start that checks out, as
//! BGZF readers do, and the damaged compressed range is named; the records it
//! cuts are dropped (the one it ends early, and the first of the next member,
//! whose start may have been lost with it). A whole stream (stdin, the jobs
//! that need offsets) cannot resynchronise: the stream reader ends an input at
//! its first error. Any other error ends the file where a front-to-back decode
//! would. Zero bytes after the last member are padding, as for `gzip -d`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel as chan;
use flate2::bufread::GzDecoder;

use super::decompress::{
    zero_padding_to_end, Codec, Consumed, DecodeError, GzMembers, Located, Meter,
};
use super::range::{Feed, Long};
use super::stream::{read_cut, Block, Cut, End};
use crate::jobs::{Chunk, Job, Piece};

/// A compressed file cut into parts.
#[derive(Debug)]
pub(super) struct Parts {
    pub input: usize,
    pub path: PathBuf,
    pub codec: Codec,
    pub size: u64,
    /// Compressed offsets where parts start: increasing, from 0.
    pub starts: Vec<u64>,
    /// Every member is BGZF, walked to the file's end: members are decoded
    /// whole by libdeflate ([`Bgzf`]).
    pub bgzf: bool,
    /// The compressed range to read, `[from, to)` at block or frame starts:
    /// the whole file, or what `--since`/`--until` found (`seek.rs`). A
    /// range that starts inside the file drops the end of the record begun
    /// before it; one that ends inside decodes on only to finish the record
    /// begun in it ([`resolve`]).
    pub range: (u64, u64),
}

impl Parts {
    /// Where part `k` nominally ends.
    pub fn end(&self, k: usize) -> u64 {
        self.starts.get(k + 1).copied().unwrap_or(self.range.1)
    }

    /// The first part start after `pos`, or the file's end.
    fn next_start(&self, pos: u64) -> u64 {
        if pos >= self.range.1 {
            return self.one_block(pos);
        }
        let k = self.starts.partition_point(|&s| s <= pos);
        self.starts.get(k).copied().unwrap_or(self.range.1)
    }

    /// Past the range: the end of the one member or frame at `pos` (a gzip
    /// part ends at the first member end at or after its end; a zstd part
    /// is read to its end exactly, so its frame is walked).
    fn one_block(&self, pos: u64) -> u64 {
        if self.codec != Codec::Zstd {
            return pos + 1;
        }
        let size = map_file(&self.path).ok().and_then(|m| {
            let data = m.get(pos as usize..(self.size as usize).min(m.len()))?;
            zstd::zstd_safe::find_frame_compressed_size(data).ok()
        });
        size.map_or(self.size, |n| pos + n.max(1) as u64)
    }
}

/// Parts of about `target` compressed bytes, but no more than this many per
/// file (each part's state is kept until the file is done).
const MAX_PARTS: u64 = 64;

/// The decoded bytes a part is cut into for parsing.
const PART_BLOCK: usize = 1 << 20;

/// Where to cut the compressed file `path` (`size` bytes) into parts of about
/// `target` compressed bytes (at least `size / 64`): frame or member starts.
/// Just `[0]` when there is no cut (a single gzip member, bzip2, xz).
pub(super) fn locate(
    input: usize,
    path: &Path,
    codec: Codec,
    size: u64,
    target: u64,
) -> io::Result<Parts> {
    let target = target.max(size / MAX_PARTS).max(1);
    let mut parts = Parts {
        input,
        path: path.to_path_buf(),
        codec,
        size,
        starts: vec![0],
        bgzf: false,
        range: (0, size),
    };
    let small = size <= target;
    if small && codec != Codec::Gzip || !matches!(codec, Codec::Gzip | Codec::Zstd) {
        return Ok(parts);
    }
    let map = map_file(path)?;
    let data = &map[..(size as usize).min(map.len())];
    (parts.starts, parts.bgzf) = match codec {
        Codec::Zstd => (zstd_frames(data, target), false),
        _ if small => second_member(data),
        _ => bgzf_blocks(data, target).unwrap_or_else(|| (gzip_members(data, target), false)),
    };
    Ok(parts)
}

/// Whether `(a, b)` is a range at block starts of a BGZF file or frame
/// starts of a zstd file (the file's end counts as one): what `--since`
/// sets as a compressed file's span (`seek.rs`). Any other span of a
/// compressed file is not a range it can be cut at.
pub(super) fn is_range(path: &Path, codec: Codec, size: u64, (a, b): (u64, u64)) -> bool {
    let Ok(map) = map_file(path) else {
        return false;
    };
    let data = &map[..(size as usize).min(map.len())];
    let start = |x: u64| {
        let Some(h) = data.get(x as usize..) else {
            return false;
        };
        match codec {
            _ if x == size => true,
            Codec::Zstd => {
                h.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
                    && zstd::zstd_safe::find_frame_compressed_size(h).is_ok()
            }
            Codec::Gzip => bgzf_size(h).is_some(),
            _ => false,
        }
    };
    a <= b && b <= size && start(a) && start(b)
}

/// The decoded offset of compressed offset `a`, a block or frame start: the
/// sum of the decoded sizes of the blocks before it, walked from their
/// headers. A BGZF member's trailer says its size (ISIZE, exact: at most
/// 64 KiB); a zstd frame's header may (Frame_Content_Size). `None` if one
/// does not (or the walk does not reach `a`).
pub(crate) fn decoded_at(path: &Path, codec: Codec, size: u64, a: u64) -> Option<u64> {
    let map = map_file(path).ok()?;
    let data = &map[..(size as usize).min(map.len())];
    let (mut pos, mut dec) = (0usize, 0u64);
    while (pos as u64) < a {
        let h = &data[pos..];
        let n = match codec {
            Codec::Zstd => {
                let n = zstd::zstd_safe::find_frame_compressed_size(h).ok()?;
                dec += zstd::zstd_safe::get_frame_content_size(h).ok()??;
                n
            }
            Codec::Gzip => {
                let n = bgzf_size(h)?;
                let t = h.get(n - 4..n)?;
                dec += u64::from(u32::from_le_bytes(t.try_into().ok()?));
                n
            }
            _ => return None,
        };
        pos += n.max(1);
    }
    (pos as u64 == a).then_some(dec)
}

/// A compressed range `[a, b)` at block or frame starts as one stream, for
/// a job that needs offsets: the record begun before `a` is dropped (as the
/// parts path does), the one begun before `b` finished. Returns the reader
/// and the decoded offset of its first byte; `None` if that is unknown
/// ([`decoded_at`]: the caller reads the file whole).
pub(crate) fn open_range(
    path: &Path,
    codec: Codec,
    size: u64,
    (a, b): (u64, u64),
    sep: u8,
    meter: Option<&Arc<Meter>>,
) -> io::Result<Option<(Box<dyn Read>, u64)>> {
    let Some(base) = decoded_at(path, codec, size, a) else {
        return Ok(None);
    };
    let parts = Parts {
        input: 0,
        path: path.to_path_buf(),
        codec,
        size,
        starts: vec![a],
        bgzf: codec == Codec::Gzip,
        range: (a, b),
    };
    let (body, _, _) = open_part(&parts, a, b, meter)?;
    let r = Ranged {
        body,
        rest: None,
        parts,
        meter: meter.cloned(),
        sep,
        last: Some(sep),
        done: false,
    };
    let mut r = io::BufReader::with_capacity(64 << 10, r);
    // The end of a record begun before the range.
    let dropped = if a > 0 { skip_past(&mut r, sep)? } else { 0 };
    Ok(Some((Box::new(r), base + dropped)))
}

/// Consumes `r` up to and including its first `sep` (all of it if it has
/// none); returns the bytes consumed. A buffer at a time: the byte-at-a-time
/// reads this replaced each went through the decoder, so dropping a long
/// record begun before a range cost a call per byte.
fn skip_past(r: &mut impl io::BufRead, sep: u8) -> io::Result<u64> {
    let mut n = 0u64;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(n);
        }
        let (used, found) = match memchr::memchr(sep, buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        r.consume(used);
        n += used as u64;
        if found {
            return Ok(n);
        }
    }
}

/// The decoded bytes of a compressed range, then those of the blocks after
/// it up to the end of the record begun in it.
struct Ranged {
    body: Box<dyn Read>,
    /// The decoder past the range, once the range is done.
    rest: Option<Box<dyn Read>>,
    parts: Parts,
    meter: Option<Arc<Meter>>,
    sep: u8,
    /// The last byte given (`sep` before the first).
    last: Option<u8>,
    done: bool,
}

impl Read for Ranged {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.rest.is_none() {
            let n = self.body.read(buf)?;
            if n > 0 {
                self.last = Some(buf[n - 1]);
                return Ok(n);
            }
            let (b, size) = (self.parts.range.1, self.parts.size);
            if self.last == Some(self.sep) || b >= size {
                self.done = true;
                return Ok(0);
            }
            let (rest, _, _) = open_part(&self.parts, b, size, self.meter.as_ref())?;
            self.rest = Some(rest);
        }
        let n = self.rest.as_mut().map_or(Ok(0), |r| r.read(buf))?;
        match memchr::memchr(self.sep, &buf[..n]) {
            Some(p) => {
                self.done = true;
                Ok(p + 1)
            }
            None => {
                self.done = n == 0;
                Ok(n)
            }
        }
    }
}

/// The file at `path`, mapped read-only.
pub(super) fn map_file(path: &Path) -> io::Result<memmap2::Mmap> {
    let f = File::open(path)?;
    // Safety: read-only; a file truncated meanwhile is the risk `--mmap` takes
    // too, and only the header bytes looked at here are touched.
    unsafe { memmap2::Mmap::map(&f) }
}

/// A gzip file of one chunk is still cut once, at its second member if it has
/// one: only the parts path resynchronises after a damaged member
/// ([`resolve`]), and a BGZF file or a concatenation of any size can be damaged.
fn second_member(data: &[u8]) -> (Vec<u64>, bool) {
    if let Some((_, bgzf)) = bgzf_blocks(data, u64::MAX) {
        let first = bgzf_size(data).unwrap_or(0);
        return if first < data.len() {
            (vec![0, first as u64], bgzf)
        } else {
            (vec![0], false)
        };
    }
    match next_member(data, 1) {
        Some(c) => (vec![0, c as u64], false),
        None => (vec![0], false),
    }
}

/// The first member start at or after `from` whose header and first 64 KiB
/// check out ([`gzip_member_at`]).
fn next_member(data: &[u8], from: usize) -> Option<usize> {
    let from = from.min(data.len());
    memchr::memmem::find_iter(&data[from..], &[0x1f, 0x8b, 8])
        .map(|p| from + p)
        .find(|&c| gzip_member_at(&data[c..]))
}

/// Push `pos` as a start if the part before it has reached `target` bytes.
fn cut_at(starts: &mut Vec<u64>, pos: usize, len: usize, target: u64) {
    let last = *starts.last().unwrap();
    if pos < len && pos as u64 - last >= target {
        starts.push(pos as u64);
    }
}

/// Frame starts of a zstd file (skippable frames included), walked by their
/// sizes; a frame that cannot be walked ends the walk (its part's decoder names
/// the error).
pub(super) fn zstd_frames(data: &[u8], target: u64) -> Vec<u64> {
    let mut starts = vec![0];
    let mut pos = 0;
    while pos < data.len() {
        match zstd::zstd_safe::find_frame_compressed_size(&data[pos..]) {
            Ok(n) if n > 0 => pos += n,
            _ => break,
        }
        cut_at(&mut starts, pos, data.len(), target);
    }
    starts
}

/// Member starts of a BGZF file, walked by the sizes the members give, and
/// whether the walk ended exactly at the file's end; `None` if the file does
/// not start as BGZF. A member that is not BGZF ends the walk.
pub(super) fn bgzf_blocks(data: &[u8], target: u64) -> Option<(Vec<u64>, bool)> {
    bgzf_size(data)?;
    let mut starts = vec![0];
    let mut pos = 0;
    while let Some(n) = bgzf_size(&data[pos..]) {
        pos += n;
        cut_at(&mut starts, pos, data.len(), target);
        if pos >= data.len() {
            break;
        }
    }
    let padded = data
        .get(pos..)
        .is_some_and(|rest| rest.iter().all(|&b| b == 0));
    Some((starts, pos == data.len() || padded))
}

/// The size of the BGZF member at the start of `h` (its `BC` subfield + 1).
fn bgzf_size(h: &[u8]) -> Option<usize> {
    if h.len() < 18 || h[..4] != [0x1f, 0x8b, 8, 4] {
        return None;
    }
    let xlen = u16::from_le_bytes([h[10], h[11]]) as usize;
    let extra = h.get(12..12 + xlen)?;
    let mut i = 0;
    while i + 4 <= extra.len() {
        let slen = u16::from_le_bytes([extra[i + 2], extra[i + 3]]) as usize;
        if extra[i..i + 2] == *b"BC" && slen == 2 && i + 6 <= extra.len() {
            return Some(u16::from_le_bytes([extra[i + 4], extra[i + 5]]) as usize + 1);
        }
        i += 4 + slen;
    }
    None
}

/// Likely member starts of a gzip file: per window of `target` bytes, the first
/// header that decodes (see the module comment: these are guesses).
fn gzip_members(data: &[u8], target: u64) -> Vec<u64> {
    let finder = memchr::memmem::Finder::new(&[0x1f, 0x8b, 8]);
    let mut starts = vec![0];
    let step = target as usize;
    let mut t = step;
    while t < data.len() {
        let window = t..(t + step).min(data.len());
        let found = finder
            .find_iter(&data[window.clone()])
            .map(|p| window.start + p)
            .find(|&c| gzip_member_at(&data[c..]));
        match found {
            Some(c) => {
                starts.push(c as u64);
                t = c + step;
            }
            None => t = window.end,
        }
    }
    starts
}

/// Does `h` start with a gzip header whose first 64 KiB decode?
fn gzip_member_at(h: &[u8]) -> bool {
    let plausible = h.len() >= 18
        && h[3] & 0xe0 == 0
        && matches!(h[8], 0 | 2 | 4)
        && (h[9] <= 13 || h[9] == 255);
    if !plausible {
        return false;
    }
    let cut = h.len().min(1 << 20);
    let mut d = GzDecoder::new(&h[..cut]);
    let mut buf = vec![0u8; 64 << 10];
    let mut got = 0;
    loop {
        match d.read(&mut buf[got..]) {
            Ok(0) => return true,
            Ok(n) => {
                got += n;
                if got == buf.len() {
                    return true;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return e.kind() == io::ErrorKind::UnexpectedEof && cut < h.len(),
        }
    }
}

/// What decoding one part gave.
pub(super) struct Part<S> {
    pub parts: Arc<Parts>,
    pub start: u64,
    /// Where decoding stopped: the end of the last member or frame decoded.
    pub end: u64,
    /// Where the member being decoded at an error starts (gzip).
    member_at: u64,
    /// Decoded bytes up to and including the first separator (the end of a
    /// record begun in an earlier part); every byte while `whole`. For a job
    /// that takes long records in pieces, at most `keep` bytes of it.
    head: Vec<u8>,
    /// The head is longer than `keep`: `head` holds its first bytes (enough
    /// for the record's first piece, made when the parts are joined) and the
    /// rest went to the job as pieces, the last one if the head ended here.
    head_long: bool,
    /// No separator seen (yet) in a part that does not start the file.
    whole: bool,
    /// Decoded bytes after the last separator (a record that goes on).
    tail: Vec<u8>,
    /// The record that goes on is longer than the job's bound: it went to the
    /// job as pieces from its first, and `tail` is empty.
    tail_long: bool,
    /// Bytes of a record held before it goes on in pieces: the job's bound
    /// plus one (`None`: the job needs records whole, held whole).
    keep: Option<usize>,
    /// The state of the records between head and tail.
    state: S,
    decoded: u64,
    /// Decoded bytes passed to the job.
    processed: u64,
    error: Option<io::Error>,
}

impl<S> Part<S> {
    /// The record bytes of one block: the head's, the job's, the tail's.
    fn take<J: Job<State = S>>(&mut self, job: &J, b: &Block, sep: u8) {
        let mut data = &b.buf[..b.len];
        let offset = self.start + self.decoded;
        self.decoded += data.len() as u64;
        if let Some((first, last)) = b.piece {
            return self.take_piece(job, (data, offset), first, last, sep);
        }
        if self.whole {
            let Some(p) = memchr::memchr(sep, data) else {
                self.head_add(job, data, offset, false);
                return;
            };
            self.head_add(job, &data[..=p], offset, true);
            data = &data[p + 1..];
            self.whole = false;
        }
        if b.unterminated {
            let p = memchr::memrchr(sep, data).map_or(0, |p| p + 1);
            self.tail.extend_from_slice(&data[p..]);
            data = &data[..p];
        }
        if !data.is_empty() {
            let offset = offset + (b.len - data.len()) as u64;
            // A block's records, a long one among them as one piece.
            let mut feed = Feed {
                job,
                state: &mut self.state,
                input: self.parts.input,
                sep,
                long: Long::of(job, u64::MAX),
                refuse: &|_| {},
            };
            feed.records(offset, data);
            self.processed += data.len() as u64;
        }
    }

    /// A piece of a record longer than the job's bound, as the part's stream
    /// cut it: the head's (while `whole`, the stream's first record is the
    /// head), or a record of the part's own, which goes on past the part if
    /// its last piece ends without a separator.
    fn take_piece<J: Job<State = S>>(
        &mut self,
        job: &J,
        (data, offset): (&[u8], u64),
        first: bool,
        last: bool,
        sep: u8,
    ) {
        let ends = last && data.last() == Some(&sep);
        if self.whole {
            self.head_add(job, data, offset, ends);
            self.whole = !ends;
            return;
        }
        self.tail_long |= last && !ends;
        self.piece(job, (data, offset), first, ends);
    }

    /// Add `data` to the head; past `keep` bytes, on as pieces (`ends`: it
    /// ends the head's record).
    fn head_add<J: Job<State = S>>(&mut self, job: &J, mut data: &[u8], mut at: u64, ends: bool) {
        if !self.head_long {
            let room = self
                .keep
                .unwrap_or(usize::MAX)
                .saturating_sub(self.head.len());
            if data.len() <= room {
                self.head.extend_from_slice(data);
                return;
            }
            self.head.extend_from_slice(&data[..room]);
            (data, at, self.head_long) = (&data[room..], at + room as u64, true);
        }
        self.piece(job, (data, at), false, ends);
    }

    fn piece<J: Job<State = S>>(
        &mut self,
        job: &J,
        (data, offset): (&[u8], u64),
        first: bool,
        last: bool,
    ) {
        let input = self.parts.input;
        let p = Piece {
            input,
            offset,
            data,
            first,
            last,
        };
        job.piece(&mut self.state, &p);
        self.processed += data.len() as u64;
    }
}

/// Decode and parse the part of `parts` from compressed byte `start` (a frame or
/// member start) up to the first frame or member end at or after `end`.
pub(super) fn decode<J: Job>(
    job: &J,
    parts: &Arc<Parts>,
    (start, end): (u64, u64),
    sep: u8,
    meter: Option<&Arc<Meter>>,
) -> Part<J::State> {
    let mut part = Part {
        parts: parts.clone(),
        start,
        end: start,
        member_at: start,
        head: Vec::new(),
        head_long: false,
        whole: start > 0,
        tail: Vec::new(),
        tail_long: false,
        keep: job.long_records().map(|n| n.max(1) + 1),
        state: job.new_state(),
        decoded: 0,
        processed: 0,
        error: None,
    };
    let (mut src, consumed, member) = match open_part(parts, start, end, meter) {
        Ok(x) => x,
        Err(e) => {
            part.error = Some(e);
            return part;
        }
    };
    let (pool_tx, pool_rx) = chan::unbounded();
    // Records longer than the job's bound come in pieces: a part holds a few
    // blocks, not a record (one 1 GiB line in BGZF took 2.1 GB of RSS).
    let cut = Cut {
        size: PART_BLOCK,
        sep,
        long: job.long_records().map(|n| n.max(1)),
        whole_only: false,
        ends: None,
    };
    let (ended, _) = read_cut(&mut *src, cut, &pool_rx, |b| {
        part.take(job, &b, sep);
        let _ = pool_tx.send(b.buf);
        Ok(())
    });
    drop(src);
    part.end = start + consumed.load(Ordering::Relaxed);
    part.member_at = member.load(Ordering::Relaxed);
    if let End::Failed(e) = ended {
        part.error = Some(e);
    }
    part
}

/// What [`open_part`] gives: the decoder, its count of compressed bytes used,
/// and where the member it is decoding starts.
pub(super) type Opened = (Box<dyn Read>, Arc<AtomicU64>, Arc<AtomicU64>);

/// A decoder of the part `[start, end)` (see [`Opened`]).
pub(super) fn open_part(
    parts: &Parts,
    start: u64,
    end: u64,
    meter: Option<&Arc<Meter>>,
) -> io::Result<Opened> {
    let mut f = File::open(&parts.path)?;
    f.seek(SeekFrom::Start(start))?;
    let inner: Box<dyn Read> = match parts.codec {
        Codec::Zstd => Box::new(f.take(end - start)),
        _ => Box::new(f),
    };
    let input = Consumed::new(inner);
    let consumed = input.consumed.clone();
    let mut member = Arc::new(AtomicU64::new(start));
    let dec: Box<dyn Read> = match parts.codec {
        Codec::Zstd => Box::new(super::decompress::zstd_decoder(input)?),
        _ if parts.bgzf => {
            let b = Bgzf::new(input, start, end);
            member = b.member_at.clone();
            Box::new(b)
        }
        _ => {
            let g = GzMembers::new(input, start, end);
            member = g.member.clone();
            Box::new(g)
        }
    };
    let read = consumed.clone();
    let located = Located::new(dec, parts.codec, start, read, meter.cloned());
    Ok((Box::new(located), consumed, member))
}

/// BGZF members from a member start up to `end`, each decoded whole by
/// libdeflate (a member holds at most 64 KiB). On a 1 GiB BGZF log, flate2
/// (zlib-rs) took 1.08 s of cpu to decode it, where `bgzip -dc` (libdeflate)
/// took 0.63 s.
struct Bgzf {
    src: Consumed,
    base: u64,
    end: u64,
    /// Where the member being decoded starts.
    member_at: Arc<AtomicU64>,
    dec: libdeflater::Decompressor,
    packed: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
}

impl Bgzf {
    fn new(src: Consumed, base: u64, end: u64) -> Self {
        Bgzf {
            src,
            base,
            end,
            member_at: Arc::new(AtomicU64::new(base)),
            dec: libdeflater::Decompressor::new(),
            packed: Vec::new(),
            out: Vec::new(),
            pos: 0,
        }
    }

    /// Decode the next member into `out`.
    fn member(&mut self) -> io::Result<()> {
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
        let at = self.base + self.src.consumed.load(Ordering::Relaxed);
        self.member_at.store(at, Ordering::Relaxed);
        self.packed.resize(18, 0);
        self.src.read_exact(&mut self.packed)?;
        let size = bgzf_size(&self.packed).ok_or_else(|| bad("not a BGZF member".into()))?;
        if size < 26 {
            return Err(bad(format!("a BGZF member of {size} bytes")));
        }
        self.packed.resize(size, 0);
        self.src.read_exact(&mut self.packed[18..])?;
        let isize = u32::from_le_bytes(self.packed[size - 4..].try_into().unwrap()) as usize;
        if isize > 1 << 16 {
            return Err(bad(format!("a BGZF member of {isize} decoded bytes")));
        }
        self.out.resize(isize, 0);
        let n = self
            .dec
            .gzip_decompress(&self.packed, &mut self.out)
            .map_err(|e| {
                bad(match e {
                    libdeflater::DecompressionError::BadData => {
                        "invalid deflate data or CRC in a BGZF member".into()
                    }
                    _ => "a BGZF member decodes to more bytes than it says".into(),
                })
            })?;
        self.out.truncate(n);
        self.pos = 0;
        Ok(())
    }
}

impl Read for Bgzf {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() {
            let at = self.base + self.src.consumed.load(Ordering::Relaxed);
            self.member_at.store(at, Ordering::Relaxed);
            if at >= self.end || zero_padding_to_end(&mut self.src)? {
                return Ok(0);
            }
            self.member()?;
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Where the stitching of one file's parts has got to.
struct Stitch {
    /// Decoded bytes of the parts joined so far.
    done: u64,
    /// A record begun in an earlier part, and its decoded offset.
    pending: Vec<u8>,
    pending_at: u64,
    processed: u64,
    /// After damage: the next part's head (the end of a record begun in the
    /// damaged bytes) is dropped, not joined.
    drop_head: bool,
    /// The pending record is longer than the job's bound and its first piece
    /// went to the job: what follows of it goes on in pieces.
    long: bool,
    /// The job's bound plus one, if it takes long records in pieces.
    keep: Option<usize>,
    sep: u8,
}

impl Stitch {
    /// A record is begun and not finished.
    fn open(&self) -> bool {
        !self.pending.is_empty() || self.long
    }

    /// Pass the pending record, now whole, to the job: as it is, or as the
    /// last piece of a long record (or the only one, if longer than the bound).
    fn flush<J: Job>(&mut self, job: &J, state: &mut J::State, input: usize) {
        let body = self.pending.len() - usize::from(self.pending.last() == Some(&self.sep));
        if self.long || self.keep.is_some_and(|k| body >= k) {
            self.piece(job, state, input, true);
        } else if !self.pending.is_empty() {
            let (offset, data) = (self.pending_at, &self.pending[..]);
            job.process(
                state,
                &Chunk {
                    input,
                    offset,
                    data,
                },
            );
            self.processed += data.len() as u64;
            self.pending.clear();
        }
    }

    /// Pass the pending bytes to the job as a piece of a long record.
    fn piece<J: Job>(&mut self, job: &J, state: &mut J::State, input: usize, last: bool) {
        let (offset, data) = (self.pending_at, &self.pending[..]);
        let first = !self.long;
        job.piece(
            state,
            &Piece {
                input,
                offset,
                data,
                first,
                last,
            },
        );
        self.processed += data.len() as u64;
        self.pending_at += data.len() as u64;
        self.pending.clear();
        self.long = !last;
    }

    /// Join part `p` (the next in the chain) to what came before it.
    fn join<J: Job>(&mut self, job: &J, state: &mut J::State, p: Part<J::State>) {
        let input = p.parts.input;
        if self.pending.is_empty() && !self.long {
            self.pending_at = self.done;
        }
        if !self.drop_head {
            self.pending.extend_from_slice(&p.head);
        }
        if p.head_long {
            // The rest of the head went to the job in `p`, with its last
            // piece if the head ended there. (After damage, the pieces of a
            // record begun in the damaged bytes are in `p`'s state: a job
            // that counts records counts that one.)
            if !self.drop_head {
                self.piece(job, state, input, false);
            }
            self.long = p.whole;
        } else if p.whole && self.keep.is_some_and(|k| self.pending.len() >= k) {
            self.piece(job, state, input, false);
        }
        if !p.whole {
            self.drop_head = false;
            if !p.head_long {
                self.flush(job, state, input);
            }
        }
        self.done += p.decoded;
        if p.tail_long {
            self.long = true; // its pieces, from the first, went out in `p`
        } else if !p.whole {
            self.pending_at = self.done - p.tail.len() as u64;
        }
        self.pending.extend_from_slice(&p.tail);
        self.processed += p.processed;
        job.merge(state, p.state);
    }
}

/// Join the parts of one file into `state` (see the module comment): from byte
/// 0, each next part is the one that starts where the last ended, or, where no
/// part does, that stretch decoded again here. A damaged gzip member is skipped
/// up to the next member that checks out ([`next_member`]), with the records it
/// cuts (the one it ends early and the one the next member ends); any other
/// error ends the file (what follows it is dropped, as in a front-to-back
/// decode, and so is the record it cut short). The damage and the error are
/// passed to `error` in one message.
/// Returns the decoded bytes passed to the job.
pub(super) fn resolve<J: Job>(
    job: &J,
    state: &mut J::State,
    mut parts: Vec<Part<J::State>>,
    sep: u8,
    meter: Option<&Arc<Meter>>,
    error: impl FnOnce(String),
) -> u64 {
    parts.sort_by_key(|p| p.start);
    let spec = parts[0].parts.clone();
    let mut parts = VecDeque::from(parts);
    let mut st = Stitch {
        done: 0,
        pending: Vec::new(),
        pending_at: 0,
        processed: 0,
        drop_head: false,
        long: false,
        keep: job.long_records().map(|n| n.max(1) + 1),
        sep,
    };
    let mut damage = Damage::default();
    let (mut pos, to) = spec.range;
    // A range from inside the file: its first record is the end of one
    // begun before it, not wanted.
    st.drop_head = pos > 0;
    while pos < to || pos < spec.size && st.open() {
        while parts.front().is_some_and(|p| p.start < pos) {
            parts.pop_front(); // skipped by the chain: a false member start
        }
        let mut p = match parts.front() {
            Some(p) if p.start == pos => parts.pop_front().unwrap(),
            _ => decode(job, &spec, (pos, spec.next_start(pos)), sep, meter),
        };
        let past = p.start >= to && !p.whole;
        let (done, end, member, err) = (st.done, p.end, p.member_at, p.error.take());
        st.join(job, state, p);
        if past && err.is_none() {
            // Decoded past the range only to finish its last record: the
            // record begun here is not in it.
            st.pending.clear();
            st.long = false;
            break;
        }
        if let Some(e) = err {
            let e = DecodeError::after_more(e, done);
            match resync(&spec, member) {
                Some(next) => {
                    damage.skip(member, next, &e);
                    st.pending.clear();
                    st.long = false;
                    st.drop_head = true;
                    pos = next;
                    continue;
                }
                None => {
                    damage.failed = Some(e);
                    break;
                }
            }
        }
        if end <= pos {
            damage.failed = Some(io::Error::other(format!(
                "{} data: decoding stopped at compressed byte {pos}",
                spec.codec
            )));
            break;
        }
        pos = end;
    }
    // A record the error cut short is not one of the file's records.
    if damage.failed.is_none() && !st.drop_head {
        st.flush(job, state, spec.input);
    }
    if let Some(m) = damage.message(spec.codec) {
        error(m);
    }
    st.processed
}

/// Where a damaged gzip member at compressed byte `member` ends: the next
/// member start after it that checks out; `None` for other formats, or when
/// no member follows (the error then ends the file).
fn resync(spec: &Parts, member: u64) -> Option<u64> {
    if spec.codec != Codec::Gzip {
        return None;
    }
    let map = map_file(&spec.path).ok()?;
    let data = &map[..(spec.size as usize).min(map.len())];
    next_member(data, member as usize + 1).map(|c| c as u64)
}

/// The damaged stretches of one file, and the error that ended it, if any.
#[derive(Default)]
struct Damage {
    /// Compressed byte ranges skipped, with the first one's error.
    skipped: Vec<(u64, u64)>,
    first: Option<String>,
    failed: Option<io::Error>,
}

impl Damage {
    fn skip(&mut self, from: u64, to: u64, e: &io::Error) {
        self.skipped.push((from, to));
        self.first.get_or_insert_with(|| super::io_message(e));
    }

    /// One message for all of it: the ranges skipped, then the error that ended
    /// the file.
    fn message(self, codec: Codec) -> Option<String> {
        let ended = self.failed.map(|e| super::io_message(&e));
        if self.skipped.is_empty() {
            return ended;
        }
        let ranges: Vec<String> = self
            .skipped
            .iter()
            .map(|(a, b)| format!("{a}..{b}"))
            .collect();
        let mut m = format!(
            "{codec} data damaged: compressed bytes {} skipped, with the records cut there \
             (read on from the next member that checks out); first: {}",
            ranges.join(", "),
            self.first.unwrap_or_default()
        );
        if let Some(e) = ended {
            m.push_str(&format!("; then {e}"));
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::scan::{run, Input, ScanOptions, Source};

    /// The bytes up to the first separator are dropped whatever the read
    /// size, and the rest is read as it was; none: all of it dropped.
    #[test]
    fn skip_past_drops_one_record() {
        let data: Vec<u8> = [vec![b'x'; 200_000], b"\nab\ncd".to_vec()].concat();
        for cap in [1, 7, 64 << 10] {
            let mut r = io::BufReader::with_capacity(cap, &data[..]);
            assert_eq!(skip_past(&mut r, b'\n').unwrap(), 200_001);
            let mut rest = Vec::new();
            r.read_to_end(&mut rest).unwrap();
            assert_eq!(rest, b"ab\ncd");
        }
        let mut r = io::BufReader::new(&b"no separator"[..]);
        assert_eq!(skip_past(&mut r, b'\n').unwrap(), 12);
        assert_eq!(skip_past(&mut r, b'\n').unwrap(), 0);
    }

    /// Every record it is given, split at newlines; `split` says whether
    /// compressed files may be decoded in parts.
    struct Records {
        split: bool,
    }

    impl Job for Records {
        type State = Vec<Vec<u8>>;
        fn new_state(&self) -> Self::State {
            Vec::new()
        }
        fn process(&self, st: &mut Self::State, chunk: &Chunk<'_>) {
            st.extend(
                chunk
                    .data
                    .split_inclusive(|&b| b == b'\n')
                    .map(<[u8]>::to_vec),
            );
        }
        fn merge(&self, into: &mut Self::State, other: Self::State) {
            into.extend(other);
        }
        fn offsets(&self) -> bool {
            !self.split
        }
    }

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn lines(tag: &str, n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("{tag} {i}\n").into_bytes())
            .collect()
    }

    /// The sorted records of `file` read with `split` at `threads` and a
    /// part size of `target`, and the error, if any.
    fn records(
        file: &Path,
        codec: Codec,
        split: bool,
        threads: usize,
        target: u64,
    ) -> (Vec<Vec<u8>>, Vec<String>) {
        let size = std::fs::metadata(file).unwrap().len();
        let input = Input {
            name: "x".into(),
            span: None,
            source: Source::Compressed {
                path: file.into(),
                size,
                codec,
            },
        };
        let opts = ScanOptions {
            threads,
            chunk_size: target,
            ..Default::default()
        };
        let out = run(&Records { split }, vec![input], &opts, None);
        let mut got = out.state;
        got.sort();
        (got, out.errors.iter().map(|e| e.message.clone()).collect())
    }

    /// A gzip file of three members whose second, stored (level 0), holds a
    /// whole gzip file among its text: a member header that is not one.
    /// Returns the file, its text, and where the fake header is.
    fn with_fake_member(dir: &Path) -> (PathBuf, Vec<u8>, u64) {
        let m1 = gzip(&lines("first", 20_000), 6);
        let inner = gzip(&lines("inner", 5_000), 6);
        let mut text2 = lines("stored", 3_000);
        let fake_at = text2.len();
        text2.extend_from_slice(&inner);
        text2.extend_from_slice(b"\n");
        text2.extend(lines("after", 3_000));
        let m2 = gzip(&text2, 0);
        let text3 = lines("third", 10_000);
        let m3 = gzip(&text3, 9);
        let mut file = m1.clone();
        file.extend_from_slice(&m2);
        // In a stored member the text is at its place after a 10-byte header
        // and a 5-byte block header.
        let fake = (m1.len() + 15 + fake_at) as u64;
        file.extend_from_slice(&m3);
        let mut text = lines("first", 20_000);
        text.extend(text2);
        text.extend(text3);
        let path = dir.join("fake.gz");
        std::fs::write(&path, &file).unwrap();
        (path, text, fake)
    }

    fn sorted_records(text: &[u8]) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = text
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_false_member_start_is_dropped_and_its_bytes_decoded_again() {
        let dir = tempfile::tempdir().unwrap();
        let (path, text, fake) = with_fake_member(dir.path());
        assert_eq!(
            &std::fs::read(&path).unwrap()[fake as usize..][..3],
            &[0x1f, 0x8b, 8]
        );
        let want = sorted_records(&text);
        let size = std::fs::metadata(&path).unwrap().len();
        let mut guessed_wrong = 0;
        for target in [500, 2_000, 8_000, 30_000, 100_000, size] {
            let parts = locate(0, &path, Codec::Gzip, size, target).unwrap();
            guessed_wrong += parts.starts.contains(&fake) as usize;
            for threads in [1, 2, 3] {
                let (got, errors) = records(&path, Codec::Gzip, true, threads, target);
                assert!(errors.is_empty(), "{errors:?}");
                assert!(got == want, "target {target}, {threads} threads");
            }
        }
        assert!(guessed_wrong > 0, "no part started at the false member");
    }

    /// Eight gzip members of 4,000 lines each, and where each starts.
    fn eight_members() -> (Vec<u8>, Vec<usize>) {
        let members: Vec<Vec<u8>> = (0..8)
            .map(|k| gzip(&lines(&format!("m{k}"), 4_000), 6))
            .collect();
        let starts = members
            .iter()
            .scan(0, |at, m| {
                *at += m.len();
                Some(*at - m.len())
            })
            .collect();
        (members.concat(), starts)
    }

    /// A file cut short: at every part size and thread count, the whole lines
    /// before the cut and none after it; the line the cut ends early is not a
    /// record.
    #[test]
    fn a_truncated_file_ends_at_its_last_whole_record() {
        let dir = tempfile::tempdir().unwrap();
        let (whole, starts) = eight_members();
        let path = dir.path().join("truncated.gz");
        std::fs::write(&path, &whole[..(starts[7] + whole.len()) / 2]).unwrap();
        let mut text = Vec::new();
        for k in 0..8 {
            text.extend(lines(&format!("m{k}"), 4_000));
        }
        let all = sorted_records(&text);
        let mut first: Option<Vec<Vec<u8>>> = None;
        for target in [1_000, 10_000, 1 << 20] {
            for threads in [1, 2, 3] {
                let (got, err) = records(&path, Codec::Gzip, true, threads, target);
                assert_eq!(err.len(), 1);
                assert!(err[0].contains("compressed byte"), "{}", err[0]);
                let want = first.get_or_insert_with(|| got.clone());
                assert!(got == *want, "target {target}, {threads} threads");
            }
        }
        let got = first.unwrap();
        assert!(
            got.iter().all(|r| all.binary_search(r).is_ok()),
            "a cut record"
        );
        assert!(
            got.len() >= 7 * 4_000 && got.len() < 8 * 4_000,
            "{}",
            got.len()
        );
    }

    /// A damaged member is skipped up to the next one, at every part size and
    /// thread count alike: the records of the other members are all there but
    /// the one the damage cuts (the first of the next member: where the
    /// damaged member's last record ended cannot be known).
    #[test]
    fn a_corrupt_member_is_skipped_to_the_next_member() {
        let dir = tempfile::tempdir().unwrap();
        let (mut bytes, starts) = eight_members();
        bytes[starts[5] + 200] ^= 0x55;
        let path = dir.path().join("corrupt.gz");
        std::fs::write(&path, &bytes).unwrap();
        let mut first: Option<Vec<Vec<u8>>> = None;
        for target in [1_000, 10_000, 1 << 20] {
            for threads in [1, 2, 3] {
                let (got, err) = records(&path, Codec::Gzip, true, threads, target);
                assert_eq!(err.len(), 1);
                let range = format!("compressed bytes {}..{} skipped", starts[5], starts[6]);
                assert!(err[0].contains(&range), "{}", err[0]);
                let want = first.get_or_insert_with(|| got.clone());
                assert!(got == *want, "target {target}, {threads} threads");
            }
        }
        let got = first.unwrap();
        let mut text = Vec::new();
        for k in (0..5).chain(6..8) {
            text.extend(lines(&format!("m{k}"), 4_000));
        }
        let mut whole = sorted_records(&text);
        whole.retain(|r| r != b"m6 0\n");
        let missing: Vec<_> = whole
            .iter()
            .filter(|r| got.binary_search(r).is_err())
            .collect();
        assert!(missing.is_empty(), "{} records missing", missing.len());
        assert!(
            got.iter().all(|r| r.ends_with(b"\n")),
            "a cut record was counted"
        );
    }

    #[test]
    fn zero_padding_after_the_last_member_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (mut bytes, _) = eight_members();
        bytes.extend(std::iter::repeat_n(0u8, 10_000));
        let path = dir.path().join("padded.gz");
        std::fs::write(&path, &bytes).unwrap();
        let mut text = Vec::new();
        for k in 0..8 {
            text.extend(lines(&format!("m{k}"), 4_000));
        }
        let want = sorted_records(&text);
        for split in [false, true] {
            for target in [1_000, 1 << 20] {
                let (got, err) = records(&path, Codec::Gzip, split, 2, target);
                assert!(err.is_empty(), "{err:?}");
                assert!(got == want, "split {split}, target {target}");
            }
        }
    }

    #[test]
    fn zstd_frames_are_exact_starts() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = Vec::new();
        let mut text = Vec::new();
        for k in 0..6 {
            // A record that goes on from one frame into the next.
            let mut t = lines(&format!("f{k}"), 3_000);
            t.extend_from_slice(format!("cut in frame {k}, ").as_bytes());
            file.extend(zstd::encode_all(&t[..], 3).unwrap());
            if k == 2 {
                file.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4]);
            }
            text.extend(t);
        }
        let path = dir.path().join("x.zst");
        std::fs::write(&path, &file).unwrap();
        let size = file.len() as u64;
        let parts = locate(0, &path, Codec::Zstd, size, 1).unwrap();
        // Six frames; the small skippable frame goes with the frame after it.
        assert_eq!(parts.starts.len(), 6, "{:?}", parts.starts);
        let want = sorted_records(&text);
        for target in [1, 5_000, size] {
            for threads in [1, 2, 3] {
                let (got, errors) = records(&path, Codec::Zstd, true, threads, target);
                assert!(errors.is_empty(), "{errors:?}");
                assert!(got == want, "target {target}, {threads} threads");
            }
        }
    }

    /// The decoded offset of a frame start is the sum of the content sizes
    /// of the frames before it; unknown if one before it lacks its size.
    #[test]
    fn decoded_at_sums_frame_content_sizes() {
        let frame = |text: &[u8], sizes: bool| {
            let mut c = zstd::bulk::Compressor::new(1).unwrap();
            c.include_contentsize(sizes).unwrap();
            c.compress(text).unwrap()
        };
        let (a, b, c) = (
            frame(b"one\n", true),
            frame(b"two two\n", true),
            frame(b"3\n", false),
        );
        let data = [&a[..], &b[..], &c[..], &a[..]].concat();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&data).unwrap();
        let (p, n) = (f.path(), data.len() as u64);
        let at = |x: usize| decoded_at(p, Codec::Zstd, n, x as u64);
        assert_eq!(at(0), Some(0));
        assert_eq!(at(a.len()), Some(4));
        assert_eq!(at(a.len() + b.len()), Some(12));
        assert_eq!(at(a.len() + b.len() + c.len()), None, "no content size");
        assert_eq!(at(1), None, "not a frame start");
    }

    #[test]
    fn bgzf_sizes() {
        let mut m = vec![
            0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, b'B', b'C', 2, 0, 0x1b, 0,
        ];
        m.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bgzf_size(&m), Some(28));
        m[12] = b'X';
        assert_eq!(bgzf_size(&m), None);
        assert_eq!(bgzf_size(&[0x1f, 0x8b]), None);
    }

    /// A job that takes records longer than `BOUND` in pieces, and keeps what
    /// shows that it got each record once, as the contract says, in bounded
    /// pieces.
    struct Pieces;

    const BOUND: usize = 1000;

    #[derive(Default, Debug, PartialEq)]
    struct Seen {
        /// Records given whole, and the first `BOUND + 1` bytes of long ones.
        whole: Vec<Vec<u8>>,
        firsts: Vec<Vec<u8>>,
        lasts: u64,
        bytes: u64,
        /// The longest chunk or piece given.
        most: usize,
    }

    impl Job for Pieces {
        type State = Seen;
        fn new_state(&self) -> Seen {
            Seen::default()
        }
        fn process(&self, st: &mut Seen, chunk: &Chunk<'_>) {
            st.most = st.most.max(chunk.data.len());
            st.bytes += chunk.data.len() as u64;
            for r in chunk.data.split_inclusive(|&b| b == b'\n') {
                assert!(r.len() <= BOUND + 1, "a long record given whole");
                st.whole.push(r.to_vec());
            }
        }
        fn piece(&self, st: &mut Seen, p: &Piece<'_>) {
            st.most = st.most.max(p.data.len());
            st.bytes += p.data.len() as u64;
            st.lasts += p.last as u64;
            if p.first {
                let head = &p.data[..BOUND + 1];
                assert!(!head.contains(&b'\n'), "a first piece too short");
                st.firsts.push(head.to_vec());
            }
        }
        fn merge(&self, into: &mut Seen, other: Seen) {
            into.whole.extend(other.whole);
            into.firsts.extend(other.firsts);
            into.lasts += other.lasts;
            into.bytes += other.bytes;
            into.most = into.most.max(other.most);
        }
        fn offsets(&self) -> bool {
            false
        }
        fn long_records(&self) -> Option<usize> {
            Some(BOUND)
        }
    }

    /// Records of 8 MiB, some across members, in a gzip file of many members
    /// decoded in parts: each record reaches the job once (whole, or as
    /// pieces from its first), at every part size and thread count, and no
    /// chunk or piece holds a long record whole (one 1 GiB line in BGZF took
    /// 2.1 GB of RSS before).
    #[test]
    fn long_records_across_parts_come_in_pieces() {
        let big = |c: u8, n: usize| {
            let mut v = vec![c; n];
            v.push(b'\n');
            v
        };
        let text = [
            lines("a", 50),
            big(b'x', 8 << 20),
            lines("b", 3),
            big(b'y', 5000),
            big(b'z', 8 << 20),
            b"tail without a newline ".repeat(100),
        ]
        .concat();
        // Members of 1 MiB of text each: long records span several.
        let file: Vec<u8> = text.chunks(1 << 20).flat_map(|m| gzip(m, 1)).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long.gz");
        std::fs::write(&path, &file).unwrap();
        let recs: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        let body = |r: &[u8]| r.len() - usize::from(r.ends_with(b"\n"));
        let mut want = Seen {
            lasts: recs.iter().filter(|r| body(r) > BOUND).count() as u64,
            bytes: text.len() as u64,
            ..Seen::default()
        };
        for r in &recs {
            match body(r) > BOUND {
                true => want.firsts.push(r[..BOUND + 1].to_vec()),
                false => want.whole.push(r.to_vec()),
            }
        }
        want.whole.sort();
        want.firsts.sort();
        for target in [300_000, 1 << 20, 4 << 20] {
            for threads in [1, 2, 3] {
                let size = file.len() as u64;
                let source = Source::Compressed {
                    path: path.clone(),
                    size,
                    codec: Codec::Gzip,
                };
                let input = Input {
                    name: "x".into(),
                    span: None,
                    source,
                };
                let opts = ScanOptions {
                    threads,
                    chunk_size: target,
                    ..Default::default()
                };
                let out = run(&Pieces, vec![input], &opts, None);
                assert!(out.errors.is_empty(), "{:?}", out.errors);
                let mut got = out.state;
                assert!(got.most < 2 << 20, "{} bytes at once", got.most);
                got.whole.sort();
                got.firsts.sort();
                got.most = 0;
                let brief = |s: &Seen| (s.whole.len(), s.firsts.len(), s.lasts, s.bytes);
                let what = format!("target {target}, {threads} threads");
                assert_eq!(brief(&got), brief(&want), "{what}");
                assert!(got == want, "{what}");
            }
        }
    }
}
