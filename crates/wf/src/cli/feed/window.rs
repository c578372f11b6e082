//! `wf feed --since/--until`: the workers get only the records of the window.
//!
//! Why this shape: the feed planner moves file bytes to the workers without
//! looking at records, so the window cannot be a filter inside it. Instead the
//! inputs are narrowed as `wf count --since` narrows them (`scan::seek`: each
//! regular file to the byte span that can hold the window), and one thread
//! reads those spans (streams and compressed files whole) in input order,
//! keeps the records whose time is in `[since, until)` and writes them into a
//! pipe, which the feed reads as its one input (a stream: cut into blocks as
//! it comes). The copy costs one pass over the window's bytes, which is what
//! the window is for: a small part of a big log.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::thread::JoinHandle;

use wf_core::jobs::time::TimeFormat;
use wf_core::scan::seek::{self, Whole};
use wf_core::scan::{decompress, Decompress, Input, InputError, Source};

/// The records of the window, being written into a pipe: the feed's input.
pub(crate) struct Narrowed {
    pub(crate) input: Input,
    /// The pipe's read end, kept open while the feed may open `/dev/fd/N`.
    read: io::PipeReader,
    writer: JoinHandle<Vec<InputError>>,
}

impl Narrowed {
    /// Once the feed is done: close the pipe (a writer the feed stopped
    /// reading then ends) and give the inputs' read errors.
    pub(crate) fn finish(self) -> Vec<InputError> {
        drop(self.read);
        self.writer.join().unwrap_or_else(|_| {
            vec![InputError::new(
                "wf feed",
                "the time window's reader panicked",
            )]
        })
    }
}

/// Narrow `inputs` to the window `w` (records' times by `format`, records
/// ending in `sep`); files out of order are read whole (said on stderr).
pub(crate) fn narrow(
    mut inputs: Vec<Input>,
    w: seek::Window,
    format: TimeFormat,
    sep: u8,
    max_record: u64,
) -> io::Result<Narrowed> {
    let time = move |r: &[u8]| format.time(r);
    let seeked = seek::seek(&mut inputs, &w, sep, &time);
    for (i, why) in &seeked.whole {
        let name = &inputs[*i].name;
        match why {
            Whole::NotSeekable => {}
            Whole::OutOfOrder { at, .. } => wf_core::warn!(
                "wf: {name}: not in time order (at byte {at}, more than --disorder): read whole \
                 and filtered"
            ),
            Whole::Io(e) => wf_core::warn!("wf: {name}: cannot search by time ({e}): read whole"),
        }
    }
    let (read, write) = io::pipe()?;
    let input = Input {
        name: "(the records of --since/--until)".into(),
        source: Source::Stream {
            path: Some(PathBuf::from(format!("/dev/fd/{}", read.as_raw_fd()))),
            decompress: Decompress::Never,
        },
        span: None,
    };
    let keep = Keep {
        max_record,
        since: w.since,
        until: w.until,
        format,
        sep,
    };
    let writer = std::thread::Builder::new()
        .name("wf-feed-window".into())
        .spawn(move || write_window(inputs, keep, write))?;
    Ok(Narrowed {
        input,
        read,
        writer,
    })
}

#[derive(Clone, Copy)]
struct Keep {
    max_record: u64,
    since: i64,
    until: i64,
    format: TimeFormat,
    sep: u8,
}

/// Write the window's records of every input, in order, into `out`.
fn write_window(inputs: Vec<Input>, keep: Keep, out: io::PipeWriter) -> Vec<InputError> {
    let mut out = io::BufWriter::with_capacity(1 << 20, out);
    let mut errors = Vec::new();
    for inp in &inputs {
        let copied = open(inp).and_then(|r| copy(r, keep, &mut out));
        match copied {
            Ok(()) => {}
            // The feed stopped reading (its workers failed): nothing more to do.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return errors,
            Err(e) => errors.push(InputError::io(inp.name.clone(), &e)),
        }
    }
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            errors.push(InputError::io("(--since/--until pipe)", &e));
        }
    }
    errors
}

/// The decoded bytes of an input's span (a whole stream or compressed file).
fn open(inp: &Input) -> io::Result<Box<dyn Read>> {
    match &inp.source {
        Source::File { path, size } => {
            let (a, b) = inp.span.unwrap_or((0, *size));
            let mut f = File::open(path)?;
            io::Seek::seek(&mut f, io::SeekFrom::Start(a))?;
            Ok(Box::new(f.take(b - a)))
        }
        Source::Compressed { path, codec, .. } => decompress::open(path, *codec),
        Source::Stream { path, decompress } => {
            let mut src: Box<dyn Read> = match path {
                Some(p) => Box::new(File::open(p)?),
                None => Box::new(io::stdin()),
            };
            let head = decompress::read_head(&mut src)?;
            decompress::sniffed(head, src, *decompress)
        }
    }
}

/// Copy the records of `src` whose time is in the window to `out` (a last
/// record without a separator gets one).
fn copy(mut src: Box<dyn Read>, k: Keep, out: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut have = 0;
    loop {
        if have == buf.len() && have as u64 > k.max_record {
            // Longer than --max-record: no worker may get it, and holding it
            // would not bound memory. Named with where it was seen.
            return Err(io::Error::other(format!(
                "a record longer than --max-record ({} bytes): the rest of this input is not fed",
                k.max_record
            )));
        }
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match src.read(&mut buf[have..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        have += n;
        let mut from = 0;
        while let Some(p) = buf[from..have].iter().position(|&c| c == k.sep) {
            keep_record(&buf[from..from + p + 1], k, out)?;
            from += p + 1;
        }
        if n == 0 {
            if from < have {
                keep_record(&buf[from..have], k, out)?;
                if k.format
                    .time(&buf[from..have])
                    .is_some_and(|t| in_window(t, k))
                {
                    out.write_all(&[k.sep])?;
                }
            }
            return Ok(());
        }
        buf.copy_within(from..have, 0);
        have -= from;
    }
}

fn in_window(t: i64, k: Keep) -> bool {
    t >= k.since && t < k.until
}

fn keep_record(rec: &[u8], k: Keep, out: &mut impl Write) -> io::Result<()> {
    match k.format.time(rec) {
        Some(t) if in_window(t, k) => out.write_all(rec),
        _ => Ok(()),
    }
}
