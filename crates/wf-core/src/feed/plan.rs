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
//! - Streams (stdin, FIFOs, `<(...)`) are read front to back by the scan's
//!   stream reader (`scan/stream.rs`) into blocks cut like a file's, after the
//!   first separator at or after `block` bytes; a record longer than the block
//!   goes whole. Standard input that is a regular file (`< FILE`) is planned
//!   like a file.
//! - Every blocking point (channel send, stream read) wakes at least every
//!   100 ms to notice that feeding stopped, so the planner never outlives the
//!   workers by more than that.

use std::fs::File;
use std::io;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel as chan;

use super::limit::Limit;
use super::Ctl;
use crate::scan::stream::{self, End, Polled, Refused};
use crate::scan::{io_message, read_full_at, split, Input, Source};

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

/// Bytes of an input that no worker was given: `[from, to)`, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lost {
    pub input: usize,
    pub from: u64,
    pub to: u64,
    pub why: LostWhy,
}

/// Why bytes of an input were not given to any worker.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LostWhy {
    /// The file ended before the size it had when it was planned.
    Shrank,
    /// A read failed (the message).
    Read(String),
    /// One record longer than `--max-record` (this many bytes).
    TooLong(u64),
}

/// What the planner reports when it is done.
#[derive(Default)]
pub(crate) struct PlanOut {
    /// Inputs that could not be read (completely or in part).
    pub errors: Vec<(usize, String)>,
    /// Planning stopped early (feeding stopped): input and offset of the first
    /// byte not planned; later inputs were not planned either.
    pub stopped_at: Option<(usize, u64)>,
    /// Ranges of files that could not be planned (the file shrank or a read
    /// failed while looking for a cut): never given to any worker.
    pub lost: Vec<Lost>,
}

enum Fail {
    /// An error with this input; go on with the next one.
    Input(String),
    /// `[from, to)` of this input could not be planned; go on with the next one.
    Lost { from: u64, to: u64, why: LostWhy },
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
    max_record: u64,
    /// Stream records too long, dropped.
    lost: Vec<Lost>,
    tx: chan::Sender<Block>,
    pool: chan::Receiver<Vec<u8>>,
    ctl: &'a Ctl,
    seq: u64,
}

/// Plan every input and send its blocks; returns when done or when feeding stopped.
pub(crate) fn plan(
    inputs: &[Input],
    (block, sep, max_record): (u64, u8, u64),
    tx: chan::Sender<Block>,
    pool: chan::Receiver<Vec<u8>>,
    ctl: &Ctl,
) -> PlanOut {
    let mut p = Planner {
        block: block.max(1),
        sep,
        max_record,
        lost: Vec::new(),
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
            // Only its span (`--since/--until`: what the time search found).
            Source::File { path, .. } => match File::open(path) {
                Ok(f) => p.file(i, Arc::new(f), inp.span).map(|_| ()),
                Err(e) => Err(e.into()),
            },
            // A compressed file the time search left out (newer than the window).
            Source::Compressed { .. } if inp.span.is_some_and(|(a, b)| a >= b) => Ok(()),
            // Its blocks or frames that can hold the window, from the decoded
            // offset of the first (`scan::seek`, `Blocks::Offsets`).
            Source::Compressed {
                path, codec, size, ..
            } if inp.span.is_some_and(|(_, b)| b != u64::MAX) => {
                let span = inp.span.unwrap_or_default();
                match split::open_range(path, *codec, *size, span, sep, None) {
                    Ok(Some((r, base))) => p.decoded(i, r, base),
                    Ok(None) => match crate::scan::decompress::open(path, *codec) {
                        Ok(r) => p.decoded(i, r, 0),
                        Err(e) => Err(e.into()),
                    },
                    Err(e) => Err(e.into()),
                }
            }
            Source::Stream { path: None, .. } => p.stdin(i),
            Source::Stream {
                path: Some(path), ..
            } => match File::open(path) {
                Ok(f) => p.stream(i, f),
                Err(e) => Err(e.into()),
            },
            Source::Compressed { path, codec, .. } => {
                match crate::scan::decompress::open(path, *codec) {
                    Ok(r) => p.decoded(i, r, 0),
                    Err(e) => Err(e.into()),
                }
            }
        };
        match r {
            Ok(()) => {}
            Err(Fail::Input(m)) => out.errors.push((i, m)),
            Err(Fail::Lost { from, to, why }) => out.lost.push(Lost {
                input: i,
                from,
                to,
                why,
            }),
            Err(Fail::Stop(at)) => {
                out.stopped_at = Some((i, at));
                break;
            }
        }
    }
    out.lost.append(&mut p.lost);
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

    /// Plan a regular file's `span` (record starts; `None`: all of it) or,
    /// from standard input, from its offset to its end; returns the end.
    fn file(
        &mut self,
        input: usize,
        file: Arc<File>,
        span: Option<(u64, u64)>,
    ) -> Result<u64, Fail> {
        let (start, size) = match span {
            Some((a, b)) => (a, b.min(file.metadata()?.len())),
            None => (0, file.metadata()?.len()),
        };
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL);
        }
        let mut win = Window::new();
        let mut a = start;
        while a < size {
            // A file that shrank (or cannot be read) past `a`: name the rest.
            let (b, unterminated) = self.cut(&mut win, &file, a, size).map_err(|e| Fail::Lost {
                from: a,
                to: size,
                why: match e.kind() {
                    io::ErrorKind::UnexpectedEof => LostWhy::Shrank,
                    _ => LostWhy::Read(io_message(&e)),
                },
            })?;
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

    /// The end of the block that starts at `a` (a record start) of a file of
    /// `size` bytes, and whether it ends the file with an unterminated record.
    /// A file that ended early is an `UnexpectedEof` error.
    fn cut(&self, win: &mut Window, file: &File, a: u64, size: u64) -> io::Result<(u64, bool)> {
        let nominal = a.saturating_add(self.block);
        let b = if nominal < size {
            win.next_start(file, nominal, size, self.sep)?
        } else {
            size
        };
        Ok((
            b,
            b == size && win.byte_at(file, size - 1, size)? != self.sep,
        ))
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
            let end = self.file(input, Arc::new(f), Some((pos.max(0) as u64, md.len())))?;
            // Leave the offset where `cat` would, for a script that reads on.
            unsafe { libc::lseek(0, end as libc::off_t, libc::SEEK_SET) };
            Ok(())
        } else {
            self.stream(input, f)
        }
    }

    /// Read a stream into blocks of about `block` bytes cut after a separator,
    /// with the scan's stream reader ([`stream::read_cut`]), waking every
    /// 100 ms to see whether feeding stopped.
    fn stream(&mut self, input: usize, f: File) -> Result<(), Fail> {
        let ctl = self.ctl;
        let stop = || ctl.planner_stop();
        // A live pipeline (`--follow`) hands on what came once it is quiet.
        let mut src = match ctl.follow {
            Some(_) => Polled::eager(&f, &stop, 10),
            None => Polled::new(&f, &stop),
        };
        self.blocks(input, &mut src, 0)
    }

    /// A compressed file's decoded bytes from decoded offset `base`, read
    /// like a stream; its reads never wait on a writer, so a stop is noticed
    /// between blocks.
    fn decoded(&mut self, input: usize, mut src: impl io::Read, base: u64) -> Result<(), Fail> {
        self.blocks(input, &mut src, base)
    }

    /// A stream's blocks (its first byte at input offset `base`), records
    /// longer than `--max-record` dropped ([`Limit`]) and named.
    fn blocks(&mut self, input: usize, src: &mut dyn io::Read, base: u64) -> Result<(), Fail> {
        let size = self.block.min(1 << 30) as usize;
        let pool = self.pool.clone();
        let ctl = self.ctl;
        let (mut src, dropped) = Limit::new(src, self.sep, self.max_record);
        let at = |f: u64| base + dropped.lock().unwrap().input_offset(f);
        // A read or decode error withholds the record it cut short: no worker
        // is given a record that is not in the input as it was.
        let cut = stream::Cut {
            size,
            sep: self.sep,
            long: None,
            whole_only: true,

            ends: None,
        };
        let (end, given) = stream::read_cut(&mut src, cut, &pool, |b| {
            if ctl.planner_stop() {
                return Err(Refused);
            }
            let block = Block {
                seq: self.seq,
                input,
                offset: at(b.offset),
                len: b.len as u64,
                data: Data::Bytes(b.buf),
                unterminated: b.unterminated,
            };
            self.send(block).map_err(|_| Refused)
        });
        let why = LostWhy::TooLong(self.max_record);
        for &(from, to) in &dropped.lock().unwrap().ranges {
            let why = why.clone();
            self.lost.push(Lost {
                input,
                from: base + from,
                to: base + to,
                why,
            });
        }
        match end {
            End::Done => Ok(()),
            End::Failed(e) => Err(Fail::Input(format!(
                "{}; bytes {}.. not given to any worker",
                io_message(&e),
                at(given)
            ))),
            End::Stopped(f) => Err(Fail::Stop(at(f))),
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
        let got = read_full_at(f, &mut self.buf[..want], at)?;
        if got < want {
            // The file shrank: [`Planner::file`] names what was not planned.
            return Err(io::ErrorKind::UnexpectedEof.into());
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
