//! The planner: one thread turns the inputs, in the order given, into a sequence
//! of record-aligned blocks and offers them on a bounded channel; whichever
//! feeding thread is ready takes the next one.
//!
//! - Regular files are never read here except for small reads around the
//!   nominal cut points: a block `[a, b)` runs from a record start to the first
//!   record start at or after `a + block` (the rule of
//!   [`crate::scan::record_start_at`], with a cached 16 KiB window so tiny
//!   blocks do not re-read the same bytes). The data itself moves later, with
//!   `splice(2)`, from the file to a worker's pipe.
//! - Streams (stdin, FIFOs, `<(...)`) are read front to back into buffers cut
//!   after the last separator; a record longer than the block goes whole.
//!   Standard input that is a regular file (`< FILE`) is planned like a file.
//! - Every blocking point (channel send, stream read) wakes at least every
//!   100 ms to notice that feeding stopped, so the planner never outlives the
//!   workers by more than that.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel as chan;

use super::Ctl;
use crate::scan::{io_message, Input, Source};

/// Where a block's bytes are.
pub(crate) enum Data {
    /// `[start, end)` of a regular file.
    Range {
        file: Arc<File>,
        start: u64,
        end: u64,
    },
    /// The first `Block::len` bytes of a buffer read from a stream.
    Bytes(Vec<u8>),
}

/// Whole records of one input.
pub(crate) struct Block {
    /// Position in the plan (0, 1, 2, ... in input order).
    pub seq: u64,
    /// Index of the input.
    pub input: usize,
    /// Offset of the block's first byte in the input.
    pub offset: u64,
    pub len: u64,
    pub data: Data,
    /// The block ends its input with a record that has no separator.
    pub unterminated: bool,
}

/// What the planner reports when it is done.
#[derive(Default)]
pub(crate) struct PlanOut {
    /// Inputs that could not be read (completely or in part).
    pub errors: Vec<(usize, String)>,
    /// Planning stopped early (feeding stopped): input and offset of the first
    /// byte not planned; later inputs were not planned either.
    pub stopped_at: Option<(usize, u64)>,
}

enum Fail {
    /// An error with this input; go on with the next one.
    Input(String),
    /// Feeding stopped: nothing from this offset on was handed out.
    Stop(u64),
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Input(io_message(&e))
    }
}

struct Planner<'a> {
    block: u64,
    sep: u8,
    tx: chan::Sender<Block>,
    pool: chan::Receiver<Vec<u8>>,
    ctl: &'a Ctl,
    seq: u64,
}

/// Plan every input and send its blocks; returns when done or when feeding stopped.
pub(crate) fn plan(
    inputs: &[Input],
    block: u64,
    sep: u8,
    tx: chan::Sender<Block>,
    pool: chan::Receiver<Vec<u8>>,
    ctl: &Ctl,
) -> PlanOut {
    let mut p = Planner {
        block: block.max(1),
        sep,
        tx,
        pool,
        ctl,
        seq: 0,
    };
    let mut out = PlanOut::default();
    for (i, inp) in inputs.iter().enumerate() {
        if ctl.planner_stop() {
            out.stopped_at = Some((i, 0));
            break;
        }
        let r = match &inp.source {
            Source::File { path, .. } => match File::open(path) {
                Ok(f) => p.file(i, Arc::new(f), 0).map(|_| ()),
                Err(e) => Err(e.into()),
            },
            Source::Stream { path: None } => p.stdin(i),
            Source::Stream { path: Some(path) } => match File::open(path) {
                Ok(f) => p.stream(i, f),
                Err(e) => Err(e.into()),
            },
        };
        match r {
            Ok(()) => {}
            Err(Fail::Input(m)) => out.errors.push((i, m)),
            Err(Fail::Stop(at)) => {
                out.stopped_at = Some((i, at));
                break;
            }
        }
    }
    out
}

impl Planner<'_> {
    fn send(&mut self, mut b: Block) -> Result<(), Fail> {
        let at = b.offset;
        loop {
            if self.ctl.planner_stop() {
                return Err(Fail::Stop(at));
            }
            match self.tx.send_timeout(b, Duration::from_millis(100)) {
                Ok(()) => {
                    self.seq += 1;
                    return Ok(());
                }
                Err(chan::SendTimeoutError::Timeout(x)) => b = x,
                Err(chan::SendTimeoutError::Disconnected(_)) => return Err(Fail::Stop(at)),
            }
        }
    }

    /// Plan a regular file from `start` (a record start) to its end; returns
    /// the end offset.
    fn file(&mut self, input: usize, file: Arc<File>, start: u64) -> Result<u64, Fail> {
        let size = file.metadata()?.len();
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
        let mut win = Window::new();
        let mut a = start;
        while a < size {
            let nominal = a.saturating_add(self.block);
            let b = if nominal >= size {
                size
            } else {
                win.next_start(&file, nominal, size, self.sep)?
            };
            let unterminated = b == size && win.byte_at(&file, size - 1, size)? != self.sep;
            self.send(Block {
                seq: self.seq,
                input,
                offset: a,
                len: b - a,
                data: Data::Range {
                    file: file.clone(),
                    start: a,
                    end: b,
                },
                unterminated,
            })?;
            a = b;
        }
        Ok(size)
    }

    /// Standard input: a regular file (`< FILE`) is planned like a file from its
    /// current offset; anything else is read as a stream.
    fn stdin(&mut self, input: usize) -> Result<(), Fail> {
        let fd = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
        if fd < 0 {
            return Err(io::Error::last_os_error().into());
        }
        let f = unsafe { File::from_raw_fd(fd) };
        let md = f.metadata()?;
        if md.file_type().is_file() {
            let pos = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
            let end = self.file(input, Arc::new(f), pos.max(0) as u64)?;
            // Leave the offset where `cat` would, for a script that reads on.
            unsafe { libc::lseek(0, end as libc::off_t, libc::SEEK_SET) };
            Ok(())
        } else {
            self.stream(input, f)
        }
    }

    /// Read a stream into blocks of about `block` bytes cut after a separator.
    fn stream(&mut self, input: usize, f: File) -> Result<(), Fail> {
        let fd = f.as_raw_fd();
        let sep = self.sep;
        let want = (self.block.min(1 << 30) as usize).max(1);
        // Read no more than the block needs (at least 4 KiB, at most 64 KiB past
        // it), so small blocks stay small and the carried rest stays short.
        let step = want.clamp(4 << 10, 64 << 10);
        let mut carry: Vec<u8> = Vec::new();
        let mut offset = 0u64;
        let mut eof = false;
        let mut error: Option<String> = None;
        loop {
            // `buf[..filled]` is data; the rest of `buf` is initialised room.
            let mut buf = self.pool.try_recv().unwrap_or_default();
            if buf.len() < carry.len() {
                buf.resize(carry.len(), 0);
            }
            buf[..carry.len()].copy_from_slice(&carry);
            let mut filled = carry.len();
            carry.clear();
            // Like a file's blocks: cut after the first separator at or after
            // byte `want - 1`. Invariant: buf[want - 1..searched] holds none.
            let mut searched = want - 1;
            let cut = loop {
                if filled >= want || eof {
                    if searched < filled {
                        if let Some(p) = memchr::memchr(sep, &buf[searched..filled]) {
                            break searched + p + 1;
                        }
                        searched = filled;
                    }
                    if eof {
                        break filled;
                    }
                }
                let room = want.saturating_sub(filled).max(step);
                if buf.len() < filled + room {
                    let grow = (filled + room).max((want + step).min(buf.len() * 2));
                    buf.resize(grow, 0);
                }
                match read_stream(fd, &mut buf[filled..filled + room], self.ctl) {
                    Ok(0) => eof = true,
                    Ok(n) => filled += n,
                    Err(None) => return Err(Fail::Stop(offset)),
                    Err(Some(e)) => {
                        // Hand out what was read, then report the error.
                        error = Some(io_message(&e));
                        eof = true;
                    }
                }
            };
            carry.extend_from_slice(&buf[cut..filled]);
            if cut == 0 {
                break;
            }
            let unterminated = eof && carry.is_empty() && buf[cut - 1] != sep;
            self.send(Block {
                seq: self.seq,
                input,
                offset,
                len: cut as u64,
                data: Data::Bytes(buf),
                unterminated,
            })?;
            offset += cut as u64;
            if eof && carry.is_empty() {
                break;
            }
        }
        match error {
            Some(m) => Err(Fail::Input(m)),
            None => Ok(()),
        }
    }
}

/// Read from a stream, waking every 100 ms to see whether feeding stopped
/// (`Err(None)`).
fn read_stream(fd: RawFd, buf: &mut [u8], ctl: &Ctl) -> Result<usize, Option<io::Error>> {
    loop {
        if ctl.planner_stop() {
            return Err(None);
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let r = unsafe { libc::poll(&mut p, 1, 100) };
        if r == 0 {
            continue;
        }
        // Readable, hung up, or poll failed (not pollable): let read decide.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => continue,
            _ => return Err(Some(e)),
        }
    }
}

/// A cached window of a file for finding record starts with few, small reads.
struct Window {
    buf: Vec<u8>,
    base: u64,
    len: usize,
}

impl Window {
    fn new() -> Self {
        Window {
            buf: vec![0; 16 << 10],
            base: 0,
            len: 0,
        }
    }

    fn holds(&self, at: u64) -> bool {
        at >= self.base && at < self.base + self.len as u64
    }

    fn fill(&mut self, f: &File, at: u64, size: u64) -> io::Result<()> {
        // Small reads: a boundary is usually a few bytes after the cut point.
        let want = (self.buf.len() as u64).min(size - at) as usize;
        let mut got = 0;
        while got < want {
            match f.read_at(&mut self.buf[got..want], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if got < want {
            return Err(io::Error::other(format!(
                "file shrank while being read (expected {size} bytes, read ended at {})",
                at + got as u64
            )));
        }
        self.base = at;
        self.len = got;
        Ok(())
    }

    /// The first record start at or after `pos` (0 < pos < size): just after
    /// the first separator at or after `pos - 1`, else `size`.
    fn next_start(&mut self, f: &File, pos: u64, size: u64, sep: u8) -> io::Result<u64> {
        let mut at = pos - 1;
        while at < size {
            if !self.holds(at) {
                self.fill(f, at, size)?;
            }
            let from = (at - self.base) as usize;
            if let Some(p) = memchr::memchr(sep, &self.buf[from..self.len]) {
                return Ok(self.base + (from + p) as u64 + 1);
            }
            at = self.base + self.len as u64;
        }
        Ok(size)
    }

    fn byte_at(&mut self, f: &File, at: u64, size: u64) -> io::Result<u8> {
        if !self.holds(at) {
            self.fill(f, at, size)?;
        }
        Ok(self.buf[(at - self.base) as usize])
    }
}
