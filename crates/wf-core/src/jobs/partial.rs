//! Partial states: a job's merged state as bytes, so that parts of a run made
//! in other processes or on other machines (the Python package's `partial`,
//! `merge` and `finish`; Dask tasks over byte ranges) merge into the answer of
//! one run.
//!
//! Why this shape: a job already has a per-thread state and an associative
//! `merge` (the scan engine needs both), so a distributed run only needs the
//! state to travel. Each job writes its own state ([`Partial::write_state`]),
//! because only it knows its private tables; this module puts the envelope
//! around it, which is what makes a foreign or damaged state an error instead
//! of a wrong answer:
//!
//! ```text
//! "WFPS" | version: u16 LE | job: u8 | params | inputs | payload | CRC-32 of all before: u32 LE
//! ```
//!
//! `params` are the job's settings (the record separator of `count`, the
//! mode of `pangram`), so that a state says which job made it and only states
//! of equal settings merge; `inputs` is the sorted set of input indices the
//! state has seen; `count` reports it as its `files`. Both are a count, then
//! the numbers. Integers are LEB128 varints, byte strings a varint length and
//! the bytes. [`VERSION`] changes whenever any job's payload changes.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

use super::Job;

/// The envelope's first bytes.
pub const MAGIC: &[u8; 4] = b"WFPS";
/// The layout version of the envelope and every payload.
pub const VERSION: u16 = 1;

/// A job whose state can travel as bytes.
pub trait Partial: Job {
    /// The job's tag in the envelope, and its name in messages.
    const TAG: u8;
    const NAME: &'static str;
    /// The job's settings as numbers, and the job they describe.
    fn params(&self) -> Vec<u64>;
    fn from_params(p: &[u64]) -> Result<Self, Damage>
    where
        Self: Sized;
    /// Write `st` (after the run: no work pending).
    fn write_state(&self, st: &Self::State, w: &mut Writer);
    /// Read back what [`Partial::write_state`] wrote; an error says what is wrong.
    fn read_state(&self, r: &mut Reader) -> Result<Self::State, Damage>;
    /// Make every input index in `st` (a state of a run over one input) `to`.
    fn relabel(&self, _st: &mut Self::State, _to: usize) {}
}

/// Why bytes are not a state this widefinder can use, or states do not merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartialError {
    /// Not a state of job `job`: `what` is wrong at byte `offset` of the bytes.
    #[error("not a widefinder {job} partial state: {what}")]
    Damaged {
        job: &'static str,
        what: Damage,
        offset: usize,
    },
    #[error(
        "a {job} partial state of format version {found}; this widefinder reads version {VERSION}"
    )]
    Version { job: &'static str, found: u16 },
    #[error("a partial state of another job (tag {tag}), not of {job}")]
    OtherJob { job: &'static str, tag: u8 },
    #[error("no {job} partial states to merge")]
    Nothing { job: &'static str },
    #[error("{job} partial states of different settings")]
    Settings { job: &'static str },
}

/// What is wrong with the bytes of a damaged state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Damage {
    #[error("it does not start with the WFPS header")]
    Header,
    #[error("its checksum does not match (corrupt or truncated)")]
    Checksum,
    #[error("bytes left over after the state")]
    LeftOver,
    #[error("it ends inside a number")]
    ShortNumber,
    #[error("a number longer than 64 bits")]
    LongNumber,
    #[error("a value {value} out of range (at most {max})")]
    Range { value: u64, max: u64 },
    #[error("a string runs past its end")]
    ShortString,
    /// Settings that no job of this kind has (the job's name).
    #[error("bad settings for {0}")]
    Settings(&'static str),
    /// A job's own consistency check failed (what it says).
    #[error("{0}")]
    Invalid(&'static str),
}

/// A state and the inputs it has seen.
pub struct Travelling<S> {
    pub inputs: BTreeSet<u64>,
    pub state: S,
}

/// `st`, seen over `inputs`, as bytes.
pub fn encode<J: Partial>(job: &J, st: &J::State, inputs: &BTreeSet<u64>) -> Vec<u8> {
    encode_with(job, st, inputs, &[])
}

/// [`encode`] with `trailer` after the job's payload, inside the checksum: a
/// state that carries more than the job's state (the `--state` file of
/// incremental runs, `scan::state`, puts its list of inputs there). A plain
/// [`decode`] refuses such bytes (bytes left over), so neither kind is ever
/// taken for the other.
pub fn encode_with<J: Partial>(
    job: &J,
    st: &J::State,
    inputs: &BTreeSet<u64>,
    trailer: &[u8],
) -> Vec<u8> {
    // Room for the trailer and the CRC after any payload a job reserves room
    // for (`Writer::reserve`): else a 9.5 MB state grew, and was copied, for
    // its last bytes.
    let mut w = Writer {
        buf: Vec::with_capacity(1 << 12),
        room: trailer.len() + 4,
        sink: None,
    };
    write_body(&mut w, job, st, inputs, trailer);
    let crc = crc32fast::hash(&w.buf);
    w.buf.extend_from_slice(&crc.to_le_bytes());
    w.buf
}

/// [`encode_with`] written to `out` as it is made, a MiB at a time, so that
/// a big state is never whole in memory (a `--state` file: the hourly bench's
/// 9.5 MB state was 2,300 page faults of a fresh buffer, 6.5 ms on this VM).
pub fn encode_to<J: Partial>(
    job: &J,
    st: &J::State,
    inputs: &BTreeSet<u64>,
    trailer: &[u8],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut w = Writer {
        buf: Vec::with_capacity(FLUSH + (1 << 12)),
        room: 0,
        sink: Some(Sink {
            out,
            crc: crc32fast::Hasher::new(),
            error: None,
        }),
    };
    write_body(&mut w, job, st, inputs, trailer);
    w.flush();
    let sink = w.sink.take().expect("a sink was given");
    match sink.error {
        Some(e) => Err(e),
        None => sink.out.write_all(&sink.crc.finalize().to_le_bytes()),
    }
}

/// Everything an encoding holds before its CRC.
fn write_body<J: Partial>(
    w: &mut Writer,
    job: &J,
    st: &J::State,
    inputs: &BTreeSet<u64>,
    trailer: &[u8],
) {
    w.raw(MAGIC);
    w.raw(&VERSION.to_le_bytes());
    w.raw(&[J::TAG]);
    for list in [job.params(), inputs.iter().copied().collect()] {
        w.uint(list.len() as u64);
        for i in list {
            w.uint(i);
        }
    }
    job.write_state(st, w);
    w.raw(trailer);
}

/// Read a state written by [`encode`] by a job of type `J` and this version:
/// the job (with the state's settings) and the state.
pub fn decode<J: Partial>(bytes: &[u8]) -> Result<(J, Travelling<J::State>), PartialError> {
    let (j, t, rest) = decode_with::<J>(bytes)?;
    if !rest.is_empty() {
        let offset = bytes.len() - 4 - rest.len();
        let (job, what) = (J::NAME, Damage::LeftOver);
        return Err(PartialError::Damaged { job, what, offset });
    }
    Ok((j, t))
}

/// A decoded state and the trailer after it (see [`decode_with`]).
pub type WithTrailer<'a, J> = (J, Travelling<<J as Job>::State>, &'a [u8]);

/// Read bytes written by [`encode_with`]: the job, the state, and the trailer
/// (checked by the CRC, read by whoever wrote it).
pub fn decode_with<J: Partial>(bytes: &[u8]) -> Result<WithTrailer<'_, J>, PartialError> {
    let head = open::<J>(bytes)?;
    let (state, trailer) = head.payload(bytes)?;
    Ok((
        head.job,
        Travelling {
            inputs: head.inputs,
            state,
        },
        trailer,
    ))
}

/// What precedes the job's payload in an encoded state, checked: the bytes
/// are whole (CRC), of this version and of job `J`. The payload is read
/// apart ([`Head::payload`]), so that a `--state` run can read its ledger
/// from the end of the bytes and decode the payload while its scan runs
/// (`scan::state`).
pub struct Head<J> {
    pub job: J,
    pub inputs: BTreeSet<u64>,
    /// Where the payload starts.
    at: usize,
}

/// Check `bytes` and read what precedes the payload (see [`Head`]).
pub fn open<J: Partial>(bytes: &[u8]) -> Result<Head<J>, PartialError> {
    let job = J::NAME;
    let bad = |what, offset| PartialError::Damaged { job, what, offset };
    if bytes.len() < 4 + 2 + 1 + 4 || &bytes[..4] != MAGIC {
        return Err(bad(Damage::Header, 0));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let version = u16::from_le_bytes([body[4], body[5]]);
    if version != VERSION {
        return Err(PartialError::Version {
            job,
            found: version,
        });
    }
    if crc32fast::hash(body).to_le_bytes() != crc {
        return Err(bad(Damage::Checksum, body.len()));
    }
    if body[6] != J::TAG {
        let tag = body[6];
        return Err(PartialError::OtherJob { job, tag });
    }
    let mut r = Reader::new(body);
    r.pos = 7;
    let read = |r: &mut Reader| -> Result<_, Damage> {
        let mut lists = [Vec::new(), Vec::new()];
        for list in &mut lists {
            for _ in 0..r.uint()? {
                list.push(r.uint()?);
            }
        }
        Ok((
            J::from_params(&lists[0])?,
            lists[1].iter().copied().collect(),
        ))
    };
    let (j, inputs) = read(&mut r).map_err(|what| bad(what, r.pos))?;
    Ok(Head {
        job: j,
        inputs,
        at: r.pos,
    })
}

impl<J: Partial> Head<J> {
    /// The payload of `bytes` (those [`open`] checked) and the trailer after it.
    pub fn payload<'a>(&self, bytes: &'a [u8]) -> Result<(J::State, &'a [u8]), PartialError> {
        self.read(Reader::new(&bytes[..bytes.len() - 4]))
    }

    /// [`Head::payload`] of bytes a state may keep parts of without a copy
    /// ([`Reader::shared_since`]: wf2's saved tables).
    pub fn payload_shared<'a>(
        &self,
        bytes: &'a Shared,
    ) -> Result<(J::State, &'a [u8]), PartialError> {
        let all = (**bytes).as_ref();
        let mut r = Reader::new(&all[..all.len() - 4]);
        r.owner = Some(bytes);
        self.read(r)
    }

    fn read<'a>(&self, mut r: Reader<'a>) -> Result<(J::State, &'a [u8]), PartialError> {
        r.pos = self.at;
        let body = r.data;
        let bad = |what, offset| PartialError::Damaged {
            job: J::NAME,
            what,
            offset,
        };
        let state = self.job.read_state(&mut r).map_err(|w| bad(w, r.pos))?;
        Ok((state, &body[r.pos..]))
    }
}

/// Merge encoded states of one job with equal settings into one encoded state
/// (at least one state).
pub fn merge<J: Partial>(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
    let job_name = J::NAME;
    let Some((first, rest)) = states.split_first() else {
        return Err(PartialError::Nothing { job: job_name });
    };
    let (job, t) = decode::<J>(first)?;
    let (mut inputs, mut acc) = (t.inputs, t.state);
    for s in rest {
        let (other, t) = decode::<J>(s)?;
        if other.params() != job.params() {
            return Err(PartialError::Settings { job: job_name });
        }
        inputs.extend(t.inputs);
        job.merge(&mut acc, t.state);
    }
    Ok(encode(&job, &acc, &inputs))
}

/// Where a payload is written: into memory, or through to a file
/// ([`encode_to`]) a MiB at a time.
#[derive(Default)]
pub struct Writer<'a> {
    buf: Vec<u8>,
    /// Bytes to keep room for after a payload ([`Writer::reserve`]).
    room: usize,
    sink: Option<Sink<'a>>,
}

/// Where a [`Writer`] passes its bytes on, and their CRC so far.
struct Sink<'a> {
    out: &'a mut dyn std::io::Write,
    crc: crc32fast::Hasher,
    /// The first write that failed (the rest are not tried).
    error: Option<std::io::Error>,
}

/// Bytes a [`Writer`] with a sink holds before it passes them on.
const FLUSH: usize = 1 << 20;

impl Writer<'_> {
    /// An empty writer (for trailers, see [`encode_with`]).
    pub fn new() -> Self {
        Writer::default()
    }

    /// A writer into memory that appends to `buf`: a caller that writes
    /// many payloads one after another keeps one buffer's pages
    /// ([`Writer::into_bytes`], cleared), where a new writer's buffer
    /// grew, by copies, into pages the process had not touched (the
    /// report's spills).
    pub fn appending(buf: Vec<u8>) -> Self {
        Writer {
            buf,
            ..Writer::default()
        }
    }

    /// Room for `n` more bytes, so that a big state is not copied as its
    /// buffer doubles (pages reserved but not written cost nothing). A writer
    /// to a file keeps at most a MiB.
    pub fn reserve(&mut self, n: usize) {
        if self.sink.is_none() {
            self.buf.reserve(n + self.room);
        }
    }

    /// The bytes written (of a writer into memory).
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// An unsigned integer as a LEB128 varint.
    pub fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
        self.pass_on();
    }

    /// A byte string: its length, then its bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.uint(b.len() as u64);
        self.raw(b);
    }

    /// Bytes already encoded (by another writer, or a saved state's), as
    /// they are; past a MiB, straight to the sink, if there is one (not
    /// through the buffer: a 9.5 MB copy is 2,300 page faults here).
    pub fn raw(&mut self, b: &[u8]) {
        if b.len() < FLUSH || self.sink.is_none() {
            self.buf.extend_from_slice(b);
            return self.pass_on();
        }
        self.flush();
        if let Some(s) = &mut self.sink {
            s.crc.update(b);
            if s.error.is_none() {
                s.error = s.out.write_all(b).err();
            }
        }
    }

    /// Past a MiB, the bytes go on to the sink, if there is one.
    #[inline]
    fn pass_on(&mut self) {
        if self.buf.len() >= FLUSH && self.sink.is_some() {
            self.flush();
        }
    }

    /// The bytes held go on to the sink (and into its CRC).
    fn flush(&mut self) {
        if let Some(s) = &mut self.sink {
            s.crc.update(&self.buf);
            if s.error.is_none() {
                s.error = s.out.write_all(&self.buf).err();
            }
            self.buf.clear();
        }
    }
}

/// Bytes of a state that a decoded state may keep parts of without a copy
/// (wf2's saved tables): a buffer, or a state file mapped by the scan.
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Where a payload is read from; every read is bounds-checked.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// What `data` is the start of, when a state may keep parts of it.
    owner: Option<&'a Shared>,
}

impl<'a> Reader<'a> {
    /// A reader of `data` from its start (for trailers, see [`decode_with`]).
    pub fn new(data: &'a [u8]) -> Self {
        Reader {
            data,
            pos: 0,
            owner: None,
        }
    }

    /// The bytes read since `pos`, as the bytes they are part of and their
    /// range there, when they can be kept without a copy.
    pub fn shared_since(&self, pos: usize) -> Option<(Shared, Range<usize>)> {
        self.owner.map(|o| (o.clone(), pos..self.pos))
    }

    /// Where the next read starts (for [`Reader::since`]).
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes read since `pos` (an earlier [`Reader::pos`]), as they are.
    pub fn since(&self, pos: usize) -> &'a [u8] {
        &self.data[pos..self.pos]
    }

    /// Moves to `pos` (at most the end), as if what lies before it was read.
    pub fn skip_to(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// An integer of up to eight bytes, with eight bytes left to read, is
    /// read from one load, without a loop: its end found by its first
    /// byte under 0x80, its 7-bit groups joined in three steps. Byte by
    /// byte, the call was 12-18% of the reading back of the 10 GiB bench
    /// log's report spills (perf), whose integers are mostly of several
    /// bytes (a pair's delta is five when its row changes). The same value
    /// as [`Reader::uint_bytewise`]'s (test `uint_reads_as_bytewise`).
    #[inline]
    pub fn uint(&mut self) -> Result<u64, Damage> {
        let Some(eight) = self.data.get(self.pos..self.pos + 8) else {
            return self.uint_bytewise();
        };
        let x = u64::from_le_bytes(eight.try_into().unwrap());
        let ends = !x & 0x8080_8080_8080_8080;
        if ends == 0 {
            return self.uint_bytewise();
        }
        let n = (ends.trailing_zeros() + 1) / 8;
        self.pos += n as usize;
        let x = x & (u64::MAX >> (64 - 8 * n)) & 0x7f7f_7f7f_7f7f_7f7f;
        let x = (x & 0x007f_007f_007f_007f) | (x & 0x7f00_7f00_7f00_7f00) >> 1;
        let x = (x & 0x0000_3fff_0000_3fff) | (x & 0x3fff_0000_3fff_0000) >> 2;
        Ok((x & 0x0fff_ffff) | (x & 0x0fff_ffff_0000_0000) >> 4)
    }

    /// [`Reader::uint`] a byte at a time (the last bytes, and integers of
    /// more than eight).
    #[inline(never)]
    fn uint_bytewise(&mut self) -> Result<u64, Damage> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos).ok_or(Damage::ShortNumber)?;
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Damage::LongNumber)
    }

    /// An integer that must fit `usize` and be at most `max`.
    #[inline]
    pub fn index(&mut self, max: u64) -> Result<usize, Damage> {
        let value = self.uint()?;
        if value > max {
            return Err(Damage::Range { value, max });
        }
        Ok(value as usize)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], Damage> {
        let n = self.uint()?;
        let left = (self.data.len() - self.pos) as u64;
        if n > left {
            return Err(Damage::ShortString);
        }
        let b = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::count::{Count, CountState};

    /// Every integer read at every place of bytes of every length of
    /// continuation: the same value, place and damage as byte by byte.
    #[test]
    fn uint_reads_as_bytewise() {
        let mut x: u64 = 1;
        let mut bytes = Vec::new();
        for i in 0..40_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Runs of bytes with the high bit, of every length to 12.
            let run = (x >> 60) as usize % 13;
            for k in 0..=run {
                let b = (x >> (8 * (k % 7))) as u8 & 0x7f;
                bytes.push(if k < run { b | 0x80 } else { b });
            }
            if i % 97 == 0 {
                bytes.push(0xff);
            }
        }
        for from in 0..bytes.len() {
            let (mut fast, mut slow) = (Reader::new(&bytes), Reader::new(&bytes));
            fast.skip_to(from);
            slow.skip_to(from);
            let (a, b) = (fast.uint(), slow.uint_bytewise());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "at {from}");
            assert_eq!(fast.pos, slow.pos, "at {from}");
        }
        let mut w = Writer::new();
        let values: Vec<u64> = (0..64)
            .flat_map(|s| [1u64 << s, (1 << s) - 1, u64::MAX >> s])
            .collect();
        for &v in &values {
            w.uint(v);
        }
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        for &v in &values {
            assert_eq!(r.uint().unwrap(), v);
        }
    }
    use crate::jobs::Chunk;

    fn count_state(data: &[u8]) -> (Count, CountState) {
        let job = Count { sep: b'\n' };
        let mut st = job.new_state();
        let chunk = Chunk {
            input: 0,
            offset: 0,
            data,
        };
        job.process(&mut st, &chunk);
        (job, st)
    }

    #[test]
    fn round_trip_and_merge() {
        let (job, a) = count_state(b"a\nb\nc");
        let (_, b) = count_state(b"x\n");
        let ea = encode(&job, &a, &BTreeSet::from([0]));
        let eb = encode(&job, &b, &BTreeSet::from([3]));
        let m = merge::<Count>(&[&ea, &eb]).unwrap();
        let (_, t) = decode::<Count>(&m).unwrap();
        assert_eq!(t.state.records, 4);
        assert_eq!(t.state.bytes, 7);
        assert_eq!(t.inputs, BTreeSet::from([0, 3]));
    }

    #[test]
    fn every_damage_is_an_error() {
        let (job, a) = count_state(b"a\nb\nc");
        let good = encode(&job, &a, &BTreeSet::from([0]));
        assert!(decode::<Count>(&good).is_ok());
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut bad = good.clone();
                bad[i] ^= 1 << bit;
                assert!(decode::<Count>(&bad).is_err(), "byte {i} bit {bit}");
            }
        }
        for n in 0..good.len() {
            assert!(decode::<Count>(&good[..n]).is_err(), "truncated to {n}");
        }
        let mut other = good.clone();
        other[4..6].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let e = decode::<Count>(&other).err().unwrap();
        assert!(matches!(e, PartialError::Version { found: 2, .. }), "{e}");
        assert!(e.to_string().contains("version"), "{e}");
    }
}
