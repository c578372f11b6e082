//! Streams as table inputs: standard input, FIFOs, process substitutions, and
//! compressed files (decoded, so that `_offset` and the sample are of the
//! decoded text).
//!
//! A thread per stream reads it from its start ([`Stream::open`]). The table's
//! format is detected and its types inferred from the first bytes, read as a
//! file's sample is, or fewer if the stream goes quiet for [`QUIET`] first (a
//! FIFO whose writer wrote a few lines and waits); those bytes are kept. Then:
//!
//! - A query that scans the table once (`sql::share` marks such a scan) reads
//!   the stream as it comes, with nothing copied to disk: the kept bytes and
//!   the rest go through a pipe into the scan engine's stream path, which hands
//!   records to the workers as soon as the stream is quiet for a moment
//!   ([`ScanOptions::eager_streams`](wf_core::scan::ScanOptions::eager_streams)).
//!   Once the query needs no more rows (a LIMIT is met, DataFusion dropped the
//!   scan's channel), the pipe is closed and the scan ends whatever the stream
//!   does: `LIMIT 3` over a FIFO whose writer never closes returns.
//! - A query that scans the table more than once (a self-join, shared scans,
//!   `_line`) needs the bytes
//!   again, so the stream is copied to an unlinked temporary file, once, by the
//!   first scan that starts (the others wait for it), and every scan reads it.
//!   Before this module every stream was read that way, to its end, before the
//!   query started: a LIMIT over an endless stream never returned.
//!
//! A read or decoding error ends a stream: the record it cut short is withheld
//! (bytes after the last separator are held back, up to [`HOLD`]), and the
//! error names the byte from which nothing was read.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel as chan;

use wf_core::scan::decompress::Meter;
use wf_core::scan::{io_message, Decompress, Input, InputError, Source};
use wf_formats::csv::Quoting;

/// How long a stream may send nothing before its sample is what came so far.
pub const QUIET: Duration = Duration::from_millis(250);

/// The longest [`Stream::widen`] reads on for (a slow pipe's lines).
const WIDEN_FOR: Duration = Duration::from_secs(1);

/// Bytes per read of a stream, and reads buffered ahead of the scan (the
/// back-pressure that bounds what a reading thread holds: 16 MiB).
const READ: usize = 256 << 10;
const AHEAD: usize = 64;

/// Bytes after the last separator held back (see the module comment); a longer
/// record passes on in pieces, and one cut by an error then ends the input.
const HOLD: usize = 1 << 20;

/// What a stream's reading thread sends.
enum Msg {
    Data(Vec<u8>),
    Failed(io::Error),
}

/// A stream input after its sample, before a scan takes it.
pub struct Stream {
    name: String,
    /// The bytes read so far, handed on first.
    head: Vec<u8>,
    rx: chan::Receiver<Msg>,
    /// Reading failed after `head`.
    failed: Option<io::Error>,
    /// The stream ended while its sample was taken: `head` is all of it.
    ended: bool,
}

impl Stream {
    /// Start reading `inp` on a thread of its own and take its sample. An
    /// input that cannot be opened is an error.
    pub fn open(inp: &Input, meter: &Arc<Meter>) -> Result<Stream, InputError> {
        let fail = |message: String| InputError::new(&inp.name, message);
        let (tx, rx) = chan::bounded(AHEAD);
        let (opened_tx, opened) = chan::bounded(1);
        let (src, meter) = (inp.source.clone(), meter.clone());
        std::thread::Builder::new()
            .name("wf-sql-stream".into())
            .spawn(move || read(&src, &meter, &opened_tx, &tx))
            .map_err(|e| fail(format!("starting its reader: {}", io_message(&e))))?;
        match opened.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(fail(io_message(&e))),
            Err(_) => return Err(fail("its reader ended".into())),
        }
        let mut s = Stream {
            name: inp.name.clone(),
            head: Vec::new(),
            rx,
            failed: None,
            ended: false,
        };
        s.take_sample();
        Ok(s)
    }

    /// Read what a file's sample holds (at least SAMPLE bytes, then to the
    /// end of a record, at most MAX_SAMPLE), or less: up to the end of the
    /// stream, an error, or a quiet spell once something came.
    fn take_sample(&mut self) {
        self.read_on(0, None);
    }

    /// Read the sample on to WIDE_LINES lines (at most MAX_SAMPLE bytes, for
    /// at most WIDEN_FOR): asked only of a table's first input, when its
    /// sample left a CSV or JSON column without a value (a gzipped file's
    /// late values were text: max 98 of 70..133). Every stream read that
    /// far took 60 MB and 0.25 s of 3 KB lines per .gz file, and a pipe
    /// writing a line every 30 ms made `LIMIT 3` wait for 20,480 of them.
    pub fn widen(&mut self) {
        if self.failed.is_none() {
            self.read_on(
                wf_formats::read::sample::WIDE_LINES,
                Some(Instant::now() + WIDEN_FOR),
            );
        }
    }

    /// Read on, through quiet spells, until the CSV quoted field the
    /// sample ends in (`delim`) closes (or MAX_SAMPLE bytes, the stream's
    /// end or an error): its record, and the types of those after it, only
    /// later bytes give (a pipe that paused inside one had its lines read
    /// as records). The field is looked for again only when a read brings a
    /// quote, from the open record's start (from the sample's start each
    /// time, 91 MB of lines with a stray quote took 2.25 s of CPU). Whether
    /// the stream may have more.
    pub fn read_through(&mut self, delim: u8) -> bool {
        use wf_formats::csv::open_record;
        use wf_formats::read::sample::MAX_SAMPLE;
        let Some(mut open) = open_record(&self.head, delim, 0) else {
            return true;
        };
        while self.failed.is_none() && self.head.len() < MAX_SAMPLE {
            match self.rx.recv() {
                Ok(Msg::Data(v)) => {
                    self.head.extend_from_slice(&v);
                    if memchr::memchr(b'"', &v).is_none() {
                        continue;
                    }
                    match open_record(&self.head, delim, open) {
                        Some(at) => open = at,
                        None => return true,
                    }
                }
                Ok(Msg::Failed(e)) => self.failed = Some(e),
                Err(_) => {
                    self.ended = true;
                    return false;
                }
            }
        }
        self.failed.is_none()
    }

    /// Read until SAMPLE bytes and a record end, and `lines` line ends, are
    /// held (or MAX_SAMPLE bytes, the stream's end, an error, a quiet spell
    /// or `until`).
    fn read_on(&mut self, lines: usize, until: Option<Instant>) {
        let mut end = super::SampleEnd::new(lines);
        loop {
            let late = until.is_some_and(|t| Instant::now() >= t);
            if end.reached(&self.head) || late {
                return;
            }
            let got = if self.head.is_empty() {
                self.rx
                    .recv()
                    .map_err(|_| chan::RecvTimeoutError::Disconnected)
            } else {
                self.rx.recv_timeout(QUIET)
            };
            match got {
                Ok(Msg::Data(v)) => self.head.extend_from_slice(&v),
                Ok(Msg::Failed(e)) => {
                    self.failed = Some(e);
                    return;
                }
                Err(e) => {
                    self.ended = e == chan::RecvTimeoutError::Disconnected;
                    return;
                }
            }
        }
    }

    /// The stream ended while its sample was taken: the sample is all of
    /// it (a CSV's last record without a line break then counts in its
    /// sniffing, as a small file's does).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The sample: the first bytes, without a byte order mark.
    pub fn sample(&self) -> &[u8] {
        super::strip_bom(&self.head)
    }

    /// Write the stream to `out` until it ends, fails or `stop` says stop.
    fn drain<W: Write>(self, out: W, cut: Cuts, stop: &dyn Fn() -> bool) -> Drained {
        let mut h = Hold {
            w: out,
            sep: cut.sep,
            quoting: cut.quoting,
            tail: Vec::new(),
            written: 0,
        };
        let (error, write_failed) = match self.copy(&mut h, stop) {
            Ok(error) => (error, h.w.flush().is_err()),
            Err(_) => (None, true),
        };
        Drained {
            written: h.written,
            error,
            write_failed,
        }
    }

    /// [`Stream::drain`]'s loop: the error that ended the stream, if any; a
    /// failed write is an error of this function's own.
    fn copy<W: Write>(
        self,
        h: &mut Hold<W>,
        stop: &dyn Fn() -> bool,
    ) -> io::Result<Option<io::Error>> {
        h.put(&self.head)?;
        if let Some(e) = self.failed {
            return Ok(Some(e));
        }
        loop {
            if stop() {
                return Ok(None);
            }
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Msg::Data(v)) => h.put(&v)?,
                Ok(Msg::Failed(e)) => return Ok(Some(e)),
                Err(chan::RecvTimeoutError::Timeout) => {}
                Err(chan::RecvTimeoutError::Disconnected) => {
                    h.flush_tail()?;
                    return Ok(None);
                }
            }
        }
    }

    /// Hand the stream to one scan through a pipe: the scan reads `input`
    /// (a stream of this name); [`Piped::run`] feeds it.
    fn pipe(self, cut: Cuts) -> io::Result<(Piped, Input, File)> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are new and owned here only.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // Fewer wake-ups with a larger pipe; the default works too.
        // SAFETY: a valid descriptor.
        unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        let input = Input {
            name: self.name.clone(),
            source: Source::Stream {
                path: Some(PathBuf::from(format!("/proc/self/fd/{}", r.as_raw_fd()))),
                decompress: Decompress::Never,
            },
            span: None,
        };
        let piped = Piped {
            stream: self,
            w: File::from(w),
            cut,
        };
        Ok((piped, input, File::from(r)))
    }

    /// Copy the stream to an unlinked temporary file, to its end; the error
    /// that ended it early goes to `errors`.
    fn spool(self, cut: Cuts, errors: &Mutex<Vec<InputError>>) -> io::Result<(File, u64)> {
        let name = self.name.clone();
        let mut f = tempfile::tempfile()?;
        let d = self.drain(io::BufWriter::with_capacity(1 << 20, &mut f), cut, &|| {
            false
        });
        if d.write_failed {
            return Err(io::Error::other("writing the temporary copy failed"));
        }
        d.report(&name, errors);
        let size = f.metadata()?.len();
        Ok((f, size))
    }
}

/// The reading thread of a stream: open it, say so, then send what it reads
/// until it ends, fails, or the receiver is gone.
fn read(
    src: &Source,
    meter: &Arc<Meter>,
    opened: &chan::Sender<io::Result<()>>,
    tx: &chan::Sender<Msg>,
) {
    let mut r = match wf_core::scan::open_stream(src, Some(meter)) {
        Ok(r) => r,
        Err(e) => {
            let _ = opened.send(Err(e));
            return;
        }
    };
    let _ = opened.send(Ok(()));
    let mut buf = vec![0u8; READ];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx.send(Msg::Data(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        }
    }
}

/// How writing a stream on ended.
struct Drained {
    /// Bytes passed on.
    written: u64,
    /// The read or decoding error that ended the stream.
    error: Option<io::Error>,
    /// The pipe or file could not be written (the scan is gone).
    write_failed: bool,
}

impl Drained {
    fn report(&self, name: &str, errors: &Mutex<Vec<InputError>>) {
        if let Some(e) = &self.error {
            let message = format!("bytes {}.. not read: {}", self.written, io_message(e));
            let error = InputError::new(name, message).of_kind(e.kind());
            errors.lock().unwrap().push(error);
        }
    }
}

/// How a stream's records end: at a separator, or (CSV) where the quotes say.
#[derive(Debug, Clone, Copy)]
struct Cuts {
    sep: u8,
    quoting: Option<Quoting>,
}

/// A writer of whole records: the bytes after the last record's end are held
/// until the next one comes (or the stream ends), up to [`HOLD`] bytes.
struct Hold<W: Write> {
    w: W,
    sep: u8,
    /// Records end where these quotes say (a CSV record may hold line
    /// breaks); `None` once a partial record longer than [`HOLD`] went on
    /// (the quote state of what follows is then not known here).
    quoting: Option<Quoting>,
    tail: Vec<u8>,
    written: u64,
}

impl<W: Write> Hold<W> {
    fn put(&mut self, data: &[u8]) -> io::Result<()> {
        if let Some(q) = self.quoting {
            return self.put_quoted(q, data);
        }
        match memchr::memrchr(self.sep, data) {
            Some(p) => {
                self.flush_tail()?;
                self.w.write_all(&data[..=p])?;
                self.written += p as u64 + 1;
                self.tail.extend_from_slice(&data[p + 1..]);
            }
            None => {
                self.tail.extend_from_slice(data);
                if self.tail.len() > HOLD {
                    self.flush_tail()?;
                }
            }
        }
        Ok(())
    }

    /// [`Hold::put`] for records cut quote-aware: the held bytes are searched
    /// from the start of their first record (at most [`HOLD`] of them, so the
    /// repeated search stays bounded).
    fn put_quoted(&mut self, q: Quoting, data: &[u8]) -> io::Result<()> {
        self.tail.extend_from_slice(data);
        let mut end = 0;
        while let Some(e) = q.stream_end(&self.tail, end) {
            end = e + 1;
        }
        self.w.write_all(&self.tail[..end])?;
        self.written += end as u64;
        self.tail.drain(..end);
        if self.tail.len() > HOLD {
            self.quoting = None;
            self.flush_tail()?;
        }
        Ok(())
    }

    fn flush_tail(&mut self) -> io::Result<()> {
        self.w.write_all(&self.tail)?;
        self.written += self.tail.len() as u64;
        self.tail.clear();
        Ok(())
    }
}

/// A stream being handed to one scan through a pipe.
pub struct Piped {
    stream: Stream,
    w: File,
    cut: Cuts,
}

impl Piped {
    pub fn name(&self) -> &str {
        &self.stream.name
    }
}

/// What became of a stream input of a table.
enum Slot {
    /// Sampled, waiting for a scan.
    Waiting(Stream),
    /// Handed to a scan through a pipe.
    Taken,
    /// Copied to a temporary file, which every scan reads.
    Spooled(File, u64),
}

/// A compressed file narrowed to a compressed range at block starts (by the
/// time push-down): the scan engine reads it, not its stream.
fn searched(inp: &Input) -> bool {
    matches!(
        (&inp.source, inp.span),
        (Source::Compressed { .. }, Some((_, b))) if b != u64::MAX
    )
}

/// The stream inputs of a table (by input index), and the errors met while
/// reading them.
#[derive(Default)]
pub struct Streams {
    slots: Mutex<Vec<(usize, Slot)>>,
    /// The table's CSV quoting, if any (see [`Hold`]).
    quoting: Option<Quoting>,
    errors: Mutex<Vec<InputError>>,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} streams", self.slots.lock().unwrap().len())
    }
}

/// The inputs of one scan, with the pipes to feed while it runs and the read
/// ends to close once it is done (so a feeder blocked on a full pipe ends).
#[derive(Default)]
pub struct Resolved {
    pub inputs: Vec<Input>,
    pub pipes: Vec<Piped>,
    pub keep: Vec<File>,
}

impl Streams {
    pub fn new(streams: Vec<(usize, Stream)>, quoting: Option<Quoting>) -> Self {
        let slots = streams
            .into_iter()
            .map(|(i, s)| (i, Slot::Waiting(s)))
            .collect();
        Streams {
            slots: Mutex::new(slots),
            quoting,
            errors: Mutex::default(),
        }
    }

    /// Feed a pipe until its stream ends or fails (the error is kept) or
    /// `stop` says stop; then close it, which ends the scan's reading of it.
    pub fn feed(&self, p: Piped, stop: &dyn Fn() -> bool) {
        let name = p.stream.name.clone();
        p.stream.drain(p.w, p.cut, stop).report(&name, &self.errors);
    }

    /// No thread could be started to feed the pipe of stream `name`.
    pub fn failed_to_feed(&self, name: String, e: &io::Error) {
        let message = format!("could not start its reader: {}", io_message(e));
        let error = InputError::new(name, message).of_kind(e.kind());
        self.errors.lock().unwrap().push(error);
    }

    /// The errors met reading the streams (taken once the query is done).
    pub fn take_errors(&self) -> Vec<InputError> {
        std::mem::take(&mut self.errors.lock().unwrap())
    }

    /// The inputs of one scan of the table: each stream handed to it through
    /// a pipe (`direct`), or read from the temporary file it was copied to
    /// (copied now by the first scan that asks; the others wait for it).
    pub fn resolve(&self, inputs: &[Input], direct: bool, sep: u8) -> Resolved {
        let mut out = Resolved {
            inputs: inputs.to_vec(),
            ..Resolved::default()
        };
        let mut slots = self.slots.lock().unwrap();
        for (i, slot) in slots.iter_mut() {
            if searched(&inputs[*i]) {
                // The scan decodes the range itself (a time push-down found
                // it, `time.rs`); a sole scan drops the stream, whose
                // bytes no other scan needs.
                if direct && matches!(slot, Slot::Waiting(_)) {
                    *slot = Slot::Taken;
                }
                continue;
            }
            let name = inputs[*i].name.clone();
            let cut = Cuts {
                sep,
                quoting: self.quoting,
            };
            match self.take(slot, direct, cut) {
                Ok(Taken::File(path, size)) => out.inputs[*i].source = Source::File { path, size },
                Ok(Taken::Pipe(p, input, r)) => {
                    out.inputs[*i] = input;
                    out.pipes.push(p);
                    out.keep.push(r);
                }
                Err(e) => {
                    // Nothing to read here: the input is empty in this scan.
                    let (path, size) = (PathBuf::from("/dev/null"), 0);
                    out.inputs[*i].source = Source::File { path, size };
                    let error = InputError::new(name, e.to_string());
                    self.errors.lock().unwrap().push(error);
                }
            }
        }
        out
    }

    fn take(&self, slot: &mut Slot, direct: bool, cut: Cuts) -> Result<Taken, TakeError> {
        let fd_path = |f: &File| PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
        match std::mem::replace(slot, Slot::Taken) {
            Slot::Waiting(s) if direct => {
                let (p, input, r) = s.pipe(cut).map_err(TakeError::Pipe)?;
                Ok(Taken::Pipe(p, input, r))
            }
            Slot::Waiting(s) => {
                let (f, size) = s.spool(cut, &self.errors).map_err(TakeError::Spool)?;
                let path = fd_path(&f);
                *slot = Slot::Spooled(f, size);
                Ok(Taken::File(path, size))
            }
            Slot::Spooled(f, size) => {
                let path = fd_path(&f);
                *slot = Slot::Spooled(f, size);
                Ok(Taken::File(path, size))
            }
            Slot::Taken => Err(TakeError::ReadTwice),
        }
    }
}

/// Why a scan could not have a stream.
#[derive(Debug, thiserror::Error)]
enum TakeError {
    #[error("{}", io_message(.0))]
    Pipe(io::Error),
    #[error("copying it to a temporary file: {}", io_message(.0))]
    Spool(io::Error),
    #[error(
        "a stream can be read once, and another scan of the query read it \
         (a query that reads a table twice copies its streams first: please report this)"
    )]
    ReadTwice,
}

/// A stream as one scan gets it.
enum Taken {
    File(PathBuf, u64),
    Pipe(Piped, Input, File),
}
