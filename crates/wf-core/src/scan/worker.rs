//! A worker thread: takes work from the planner and passes whole records to its
//! own job state, one chunk (or region, or stream block) at a time.

use std::fs::File;

use crossbeam_channel as chan;

use super::ahead::{AheadLink, ReadAhead};
use super::options::ScanOptions;
use super::range::{process_mapped, process_range, Feed, Long};
use super::regions::Regions;
use super::shared::{Shared, Work};
use super::split::{self, Part};
use crate::jobs::Job;

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
    /// What becomes of long records.
    long: Long,
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
            long: Long::of(job, opts.max_record),
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
                    let refuse = self.refuse(input);
                    let mut feed = self.feed(input, &refuse);
                    process_mapped(&mut feed, &map, start, end)
                }
                Work::Block {
                    input,
                    offset,
                    buf,
                    len,
                    piece,
                } => self.block(input, (offset, piece), buf, len),
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
        self.job.worker_done(&mut self.state);
        (self.state, self.parts)
    }

    /// Where records of `input` go: this worker's state; a long record that
    /// the job needs whole goes to `refuse`.
    fn feed<'s>(&'s mut self, input: usize, refuse: &'s dyn Fn(u64)) -> Feed<'s, J> {
        Feed {
            job: self.job,
            state: &mut self.state,
            input,
            sep: self.opts.sep,
            long: self.long,
            refuse,
        }
    }

    /// Where a record of `input` too long for the job goes: the input's
    /// list of them, one error of it when the scan ends.
    fn refuse(&self, input: usize) -> impl Fn(u64) + 'a {
        let shared = self.shared;
        move |at| shared.too_long(input, at)
    }

    /// Read the records a range owns; a failure is the file's error (naming
    /// the bytes not read), and its range counts as done. Returns the bytes done.
    fn range(
        &mut self,
        input: usize,
        file: &File,
        range: (u64, u64, u64),
        reach: &dyn Fn(u64),
    ) -> u64 {
        let (start, end, _) = range;
        let (shared, read_size) = (self.shared, self.opts.read_size);
        let refuse = self.refuse(input);
        let mut buf = std::mem::take(&mut self.buf);
        let mut feed = self.feed(input, &refuse);
        let done = process_range(&mut feed, &mut buf, file, range, read_size, reach);
        self.buf = buf;
        done.unwrap_or_else(|e| {
            shared.unread(input, e);
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
            let drop_read = self.opts.page_cache.drops(r.size);
            let ahead = ReadAhead::start(hs, r, &link, self.opts.ahead, drop_read);
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

    /// A block of a stream: whole records, or a piece of a long record
    /// (`piece`: first, last); the buffer goes back to the planner.
    fn block(
        &mut self,
        input: usize,
        (offset, piece): (u64, Option<(bool, bool)>),
        buf: Vec<u8>,
        len: usize,
    ) -> u64 {
        let refuse = self.refuse(input);
        let mut feed = self.feed(input, &refuse);
        match piece {
            Some((first, last)) => feed.piece(offset, &buf[..len], first, last),
            None => feed.records(offset, &buf[..len]),
        }
        let _ = self.pool.send(buf);
        len as u64
    }
}
