//! Where workers' output goes: wf's standard output or the combine process's
//! standard input, in whole lines.
//!
//! Each worker's stdout is a pipe read by a thread in wf, which passes on only
//! complete units (ending with the output separator: `\n`, or `--ors`, which
//! defaults to `--rs`) under one lock, so output from different workers never
//! mixes inside a unit. What a worker prints after its last separator is passed
//! on when it exits; if anything else follows it, a separator is put in between,
//! so two workers' units are never glued together either. With `--keep-order`
//! each block's whole output is written as it is, nothing added (so `gzip -c`
//! blocks concatenate into one valid stream).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::Ctl;

pub(crate) struct Sink {
    inner: Mutex<Inner>,
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
}

impl Sink {
    pub(crate) fn new(w: File, sep: u8, raw: bool, combine: bool, ctl: Arc<Ctl>) -> Sink {
        Sink {
            inner: Mutex::new(Inner {
                w: Some(w),
                open: false,
                broken: false,
            }),
            sep,
            raw,
            combine,
            ctl,
        }
    }

    /// Write whole lines (or a process's final fragment) as one batch.
    pub(crate) fn write(&self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let mut g = self.inner.lock().unwrap();
        if g.broken {
            return;
        }
        let open = g.open;
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
        }
    }

    /// Close the output (the combine process then sees end of input).
    pub(crate) fn close(&self) {
        self.inner.lock().unwrap().w = None;
    }
}

/// Pass a worker's output on in whole lines until it closes its stdout.
pub(crate) fn forward(mut r: impl Read, sink: &Sink) {
    let mut buf = vec![0u8; 64 << 10];
    let mut len = 0;
    loop {
        if len == buf.len() {
            let n = buf.len() * 2;
            buf.resize(n, 0);
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
            sink.write(&buf[..cut]);
            buf.copy_within(cut..len, 0);
            len -= cut;
        }
    }
    sink.write(&buf[..len]);
}

/// `--keep-order`: each block's whole output, released in block order.
pub(crate) struct Reorder {
    st: Mutex<(u64, BTreeMap<u64, Vec<u8>>)>,
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
    pub(crate) fn put(&self, seq: u64, out: Vec<u8>, sink: &Sink) {
        let mut g = self.st.lock().unwrap();
        g.1.insert(seq, out);
        loop {
            let next = g.0;
            match g.1.remove(&next) {
                Some(v) => {
                    sink.write(&v);
                    g.0 += 1;
                }
                None => break,
            }
        }
        self.cv.notify_all();
    }
}
