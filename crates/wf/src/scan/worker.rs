//! A worker thread: takes work from the planner and passes whole records to its
//! own job state, one chunk (or region, or stream block) at a time.

use std::fs::File;

use crossbeam_channel as chan;

use super::ahead::{AheadLink, ReadAhead};
use super::engine::{ScanOptions, Shared, Work};
use super::range::{process_mapped, process_range};
use super::regions::Regions;
use super::split::{self, Part};
use crate::jobs::{Chunk, Job};

pub(super) struct Worker<'a, J: Job> {
    job: &'a J,
    opts: &'a ScanOptions,
    shared: &'a Shared<'a>,
    /// Where stream blocks' buffers go back to the planner.
    pool: chan::Sender<Vec<u8>>,
    state: J::State,
    /// The reusable read buffer of [`process_range`].
    buf: Vec<u8>,
    /// Parts of compressed files decoded here, for the engine to join.
    parts: Vec<Part<J::State>>,
}

impl<'a, J: Job> Worker<'a, J> {
    pub(super) fn new(
        job: &'a J,
        opts: &'a ScanOptions,
        shared: &'a Shared<'a>,
        pool: chan::Sender<Vec<u8>>,
    ) -> Self {
        Worker {
            job,
            opts,
            shared,
            pool,
            state: job.new_state(),
            buf: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// Process work until the planner is done; returns the job state and the
    /// parts of compressed files decoded (their bytes are counted when joined).
    pub(super) fn run(mut self, rx: chan::Receiver<Work>) -> (J::State, Vec<Part<J::State>>) {
        for w in rx.iter() {
            // A stopped job reads no more files; a stream's buffer goes back to
            // the planner, and the parts of a compressed file are still decoded
            // (their join expects every part).
            if self.job.stopped() && !matches!(w, Work::Part { .. }) {
                if let Work::Block { buf, .. } = w {
                    let _ = self.pool.send(buf);
                }
                continue;
            }
            let n = match w {
                Work::Regions(r) => {
                    self.regions(&r);
                    continue;
                }
                Work::Range {
                    input,
                    file,
                    start,
                    end,
                    size,
                } => self.range(input, &file, (start, end, size), &|_| {}),
                Work::Mapped {
                    input,
                    map,
                    start,
                    end,
                } => {
                    let sep = self.opts.sep;
                    process_mapped(self.job, &mut self.state, input, &map, start, end, sep)
                }
                Work::Block {
                    input,
                    offset,
                    buf,
                    len,
                } => self.block(input, offset, buf, len),
                Work::Part { parts, k } => {
                    let range = (parts.starts[k], parts.end(k));
                    let meter = Some(&self.shared.meter);
                    let part = split::decode(self.job, &parts, range, self.opts.sep, meter);
                    self.parts.push(part);
                    0
                }
            };
            self.shared.account(n);
        }
        (self.state, self.parts)
    }

    /// Read the records a range owns; a failure is the file's error, and its
    /// range counts as done. Returns the bytes done.
    fn range(
        &mut self,
        input: usize,
        file: &File,
        range: (u64, u64, u64),
        reach: &dyn Fn(u64),
    ) -> u64 {
        let (start, end, _) = range;
        let opts = self.opts;
        process_range(
            self.job,
            &mut self.state,
            &mut self.buf,
            input,
            file,
            range,
            opts.read_size,
            opts.sep,
            reach,
        )
        .unwrap_or_else(|e| {
            self.shared.error(input, e);
            end - start
        })
    }

    /// This worker's share of a file split into regions: chunks taken one at a
    /// time (its own region front to back, then what it can steal), read through
    /// its own file description, behind its read-ahead helper.
    fn regions(&mut self, r: &Regions) {
        let own = r.own_file();
        let mut region = None;
        let link = AheadLink::new();
        std::thread::scope(|hs| {
            let ahead = ReadAhead::start(hs, r, &link, self.opts.ahead);
            let reach = |end: u64| {
                if let Some(a) = &ahead {
                    a.reach(end);
                }
            };
            let mut next = None;
            while let Some((start, end)) = r.take(&mut region).filter(|_| !self.job.stopped()) {
                if let Some(a) = &ahead {
                    if next != Some(start) {
                        a.jump(start);
                    }
                }
                next = Some(end);
                let n = self.range(r.input, &own, (start, end, r.size), &reach);
                self.shared.account(n);
            }
            // The helper stops when dropped; the scope waits for it.
            drop(ahead);
        });
    }

    /// A block of a stream: whole records; the buffer goes back to the planner.
    fn block(&mut self, input: usize, offset: u64, buf: Vec<u8>, len: usize) -> u64 {
        if len > 0 {
            let chunk = Chunk {
                input,
                offset,
                data: &buf[..len],
            };
            self.job.process(&mut self.state, &chunk);
        }
        let _ = self.pool.send(buf);
        len as u64
    }
}
