//! Where workers' output goes: wf's standard output or the combine process's
//! standard input, in whole lines.
//!
//! Each worker's stdout is a pipe read by a thread in wf, which passes on only
//! complete units (ending with the output separator: `\n`, or `--ors`, which
//! defaults to `--rs`) under one lock, so output from different workers never
//! mixes inside a unit. What a worker prints after its last separator is passed
//! on when it exits; if anything else follows it, a separator is put in between,
//! so two workers' units are never glued together either.
//!
//! Memory stays bounded: a unit longer than [`UNIT_BOUND`] is passed on in
//! pieces as it comes, and while it is open the other workers' output waits
//! (their pipes fill and they pause), so units are still never mixed. Waiting
//! cannot deadlock: the worker that holds the output needs nothing from the
//! others to go on, and the output is released when it ends the unit or exits.
//! With `--keep-order`
//! each block's whole output is written as it is, nothing added (so `gzip -c`
//! blocks concatenate into one valid stream); a block's output waits for its
//! turn in memory up to [`KEPT_IN_MEMORY`], the rest in an unnamed
//! temporary file ([`Kept`]), as GNU parallel's `--keep-order` keeps its
//! in `$TMPDIR`: all in memory, a worker writing without end (`yes`) took
//! 2.6 GB in 8 s, and the window of 4 blocks a thread bounded only how
//! many outputs were held, not their size.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::Ctl;

/// A worker's output unit longer than this is passed on in pieces (with the
/// output held for it until it ends) rather than kept whole in memory.
pub const UNIT_BOUND: usize = 1 << 20;

pub(crate) struct Sink {
    inner: Mutex<Inner>,
    /// Signalled when a writer releases the output.
    cv: Condvar,
    /// The next writer id ([`Sink::writer`]); 0 is a writer of whole outputs.
    ids: AtomicU64,
    /// The output separator.
    sep: u8,
    /// Write outputs as they are, never adding a separator (`--keep-order`).
    raw: bool,
    combine: bool,
    ctl: Arc<Ctl>,
}

struct Inner {
    w: Option<File>,
    /// The last bytes written did not end a line.
    open: bool,
    broken: bool,
    /// A writer in the middle of a unit longer than [`UNIT_BOUND`]: others wait.
    owner: Option<u64>,
}

impl Sink {
    pub(crate) fn new(w: File, sep: u8, raw: bool, combine: bool, ctl: Arc<Ctl>) -> Sink {
        Sink {
            inner: Mutex::new(Inner {
                w: Some(w),
                open: false,
                broken: false,
                owner: None,
            }),
            cv: Condvar::new(),
            ids: AtomicU64::new(1),
            sep,
            raw,
            combine,
            ctl,
        }
    }

    /// A new writer id for [`Sink::write`].
    pub(crate) fn writer(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Write whole units (or a process's final fragment) as one batch for
    /// writer `who`; `more`: the data ends inside a unit that `who` goes on
    /// with, and no other writer may write until it ends (an empty final
    /// write releases the output).
    pub(crate) fn write(&self, who: u64, data: &[u8], more: bool) {
        let mut g = self.inner.lock().unwrap();
        if data.is_empty() && g.owner != Some(who) {
            return;
        }
        while g.owner.is_some_and(|o| o != who) && g.w.is_some() && !g.broken {
            if self.ctl.stopped() {
                return;
            }
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(100))
                .unwrap()
                .0;
        }
        let mine = g.owner == Some(who);
        g.owner = more.then_some(who);
        if mine && !more {
            self.cv.notify_all();
        }
        if data.is_empty() || g.broken {
            return;
        }
        let open = g.open && !mine;
        let Some(w) = g.w.as_mut() else { return };
        let res = (|| {
            if open && !self.raw {
                w.write_all(&[self.sep])?;
            }
            w.write_all(data)
        })();
        match res {
            Ok(()) => g.open = data[data.len() - 1] != self.sep,
            Err(e) => {
                g.broken = true;
                drop(g);
                self.cv.notify_all();
                self.failed(e);
            }
        }
    }

    fn failed(&self, e: io::Error) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            if self.combine {
                self.ctl
                    .fail("the combine command stopped reading its input".into());
            } else {
                // Whoever reads our output has gone (`| head`): stop quietly.
                self.ctl.abort(super::STOP_QUIET);
            }
        } else {
            self.ctl
                .fail(format!("writing output: {}", crate::scan::io_message(&e)));
        }
    }

    /// Close the output (the combine process then sees end of input).
    pub(crate) fn close(&self) {
        self.inner.lock().unwrap().w = None;
        self.cv.notify_all();
    }
}

/// Pass a worker's output on in whole lines until it closes its stdout; a
/// unit past [`UNIT_BOUND`] goes in pieces.
pub(crate) fn forward(mut r: impl Read, sink: &Sink) {
    let who = sink.writer();
    let mut buf = vec![0u8; 64 << 10];
    let mut len = 0;
    loop {
        if len == buf.len() {
            if len >= UNIT_BOUND {
                // `buf` holds no separator: part of one long unit.
                sink.write(who, &buf[..len], true);
                len = 0;
            } else {
                let n = buf.len() * 2;
                buf.resize(n, 0);
            }
        }
        let n = match r.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let last = memchr::memrchr(sink.sep, &buf[len..len + n]);
        len += n;
        if let Some(p) = last {
            let cut = len - n + p + 1;
            sink.write(who, &buf[..cut], false);
            buf.copy_within(cut..len, 0);
            len -= cut;
        }
    }
    sink.write(who, &buf[..len], false);
}

/// A block's output under `--keep-order` is kept in memory up to this, the
/// rest in a temporary file.
pub const KEPT_IN_MEMORY: usize = 8 << 20;

/// A block's whole output, kept until its turn: its first bytes in memory,
/// the rest in an unnamed temporary file; if the file cannot be made or
/// written, what follows the bytes it holds whole is kept in memory (said
/// on stderr). Read back into memory, a file that failed on a full disk
/// brought back the gigabytes it was there to keep out.
#[derive(Default)]
pub(crate) struct Kept {
    head: Vec<u8>,
    /// The temporary file and the bytes written to it whole.
    file: Option<(File, u64)>,
    /// What came after the file failed.
    tail: Vec<u8>,
    failed: bool,
}

impl Kept {
    /// All of `r` (a worker's stdout) until its end or an error.
    pub(crate) fn read_all(mut r: impl Read) -> Kept {
        let mut k = Kept::default();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => return k,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return k,
            };
            k.keep(&buf[..n]);
        }
    }

    /// `data`, after everything kept so far: once spilled, every byte goes
    /// to the file (a short read kept in memory came out before its bytes).
    fn keep(&mut self, data: &[u8]) {
        if self.failed {
            self.tail.extend_from_slice(data);
        } else if self.file.is_none() && self.head.len() + data.len() <= KEPT_IN_MEMORY {
            self.head.extend_from_slice(data);
        } else if let Err(e) = self.spill(data) {
            crate::warn!(
                "wf: --keep-order: a block's output past {} bytes is kept in memory, its temporary file failed: {}",
                self.head.len() as u64 + self.file.as_ref().map_or(0, |f| f.1),
                crate::scan::io_message(&e)
            );
            self.failed = true;
            self.tail.extend_from_slice(data);
        }
    }

    fn spill(&mut self, data: &[u8]) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some((tempfile::tempfile()?, 0));
        }
        let (f, len) = self.file.as_mut().unwrap();
        // A failed write may leave part of `data` in the file: only `len`
        // bytes are read back.
        f.seek(io::SeekFrom::Start(*len))?;
        f.write_all(data)?;
        *len += data.len() as u64;
        Ok(())
    }

    /// Write it all to `sink`: the head, the file's bytes in pieces as they
    /// are read back, the tail. A file that cannot be read back fails the
    /// feed (its bytes would be missing from the output).
    fn write_to(mut self, sink: &Sink) {
        if !self.head.is_empty() {
            sink.write(0, &self.head, false);
        }
        if let Some((f, len)) = self.file.take() {
            let mut buf = std::mem::take(&mut self.head);
            buf.resize(1 << 20, 0);
            if let Err(e) = copy_back(f, len, &mut buf, sink) {
                let why = crate::scan::io_message(&e);
                sink.ctl.fail(format!(
                    "--keep-order: reading a block's output back: {why}"
                ));
                return;
            }
        }
        if !self.tail.is_empty() {
            sink.write(0, &self.tail, false);
        }
    }
}

/// The first `len` bytes of `f` to `sink`, a `buf` at a time.
fn copy_back(mut f: File, len: u64, buf: &mut [u8], sink: &Sink) -> io::Result<()> {
    f.rewind()?;
    let mut r = f.take(len);
    let mut left = len;
    while left > 0 {
        let n = r.read(buf)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file is shorter",
            ));
        }
        sink.write(0, &buf[..n], false);
        left -= n as u64;
    }
    Ok(())
}

/// `--keep-order`: each block's whole output, released in block order.
pub(crate) struct Reorder {
    st: Mutex<(u64, BTreeMap<u64, Kept>)>,
    cv: Condvar,
    /// Blocks started beyond the oldest unfinished one (bounds the memory held).
    window: u64,
}

impl Reorder {
    pub(crate) fn new(window: u64) -> Reorder {
        Reorder {
            st: Mutex::new((0, BTreeMap::new())),
            cv: Condvar::new(),
            window: window.max(1),
        }
    }

    /// Wait until block `seq` may start; false if feeding stopped.
    pub(crate) fn wait_turn(&self, seq: u64, ctl: &Ctl) -> bool {
        let mut g = self.st.lock().unwrap();
        while seq >= g.0 + self.window {
            if ctl.stopped() {
                return false;
            }
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(100))
                .unwrap()
                .0;
        }
        true
    }

    /// Block `seq` finished with this output: write every block now due.
    pub(crate) fn put(&self, seq: u64, out: Kept, sink: &Sink) {
        let mut g = self.st.lock().unwrap();
        g.1.insert(seq, out);
        loop {
            let next = g.0;
            match g.1.remove(&next) {
                Some(v) => {
                    v.write_to(sink);
                    g.0 += 1;
                }
                None => break,
            }
        }
        self.cv.notify_all();
    }
}
