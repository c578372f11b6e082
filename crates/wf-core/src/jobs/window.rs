//! `--since`/`--until`: a job wrapped so it sees only the records whose time
//! lies in `[since, until)`.
//!
//! Why a wrapper job: the seek (`scan::seek`) only narrows the bytes read, with
//! `--disorder` slack on both sides, so the records near the window's edges,
//! and every record of a file read whole (a stream, a compressed file, a file
//! out of order), still need their time checked one by one. Doing that in a
//! [`Job`] keeps the scan engine and the inner job unchanged and the answer
//! the same at every `-j` and chunk size: each record is judged alone. The
//! records in range are handed to the inner job as runs of whole records (one
//! `process` call per run, not per record), so a chunk well inside the window
//! costs one time parse per record and one call.
//!
//! The job also notes how the times it read run ([`Order`]): the search
//! trusts that no record is more than `--disorder` earlier than one before
//! it, and its probes check that at a few hundred places only. A record read
//! that breaks it (a download of hours logged when it ended, with its start
//! time) says the search may have left out records of the window, and the
//! caller searches again with the slack it saw ([`far_back`]).
//!
//! Records are needed whole ([`Job::long_records`] is `None`): a long record's
//! pieces may arrive on different threads, and only the first holds its time.
//! Under `--since`/`--until` a record is therefore held up to `--max-record`.

use super::{Chunk, Job};

/// `inner` over the records whose `time` lies in `[since, until)`.
pub struct Window<J, F> {
    pub inner: J,
    pub since: i64,
    pub until: i64,
    pub sep: u8,
    /// A record's time in microseconds since the epoch, if it has one.
    pub time: F,
}

/// Whether a record of time `t` lies in `window` (`[since, until)`); one
/// that does not is counted in `outside` (a time out of range) or `untimed`
/// (no time). Also `feed`'s judge of a record.
pub fn judge(t: Option<i64>, window: (i64, i64), outside: &mut u64, untimed: &mut u64) -> bool {
    match t {
        Some(t) => {
            let kept = t >= window.0 && t < window.1;
            *outside += !kept as u64;
            kept
        }
        None => {
            *untimed += 1;
            false
        }
    }
}

/// The inner job's state and the records it was not given.
#[derive(Debug, Default, Clone)]
pub struct WindowState<S> {
    pub inner: S,
    /// Records with a time in `[since, until)`, given to the inner job.
    pub inside: u64,
    /// Records with a time outside `[since, until)`.
    pub outside: u64,
    /// Records without a parsable time (in no range).
    pub untimed: u64,
    /// How the times ran in the bytes read, a run of bytes at a time.
    pub order: Vec<Order>,
}

/// The times of the timed records in bytes `[offset, end)` of an input:
/// the least and greatest, and the farthest a record went back from one
/// before it (`back` microseconds, the record at `back_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub input: usize,
    pub offset: u64,
    pub end: u64,
    pub min: i64,
    pub min_at: u64,
    pub max: i64,
    pub back: i64,
    pub back_at: u64,
}

impl Order {
    /// No time yet, from byte `offset` of input `input`.
    pub fn new(input: usize, offset: u64) -> Self {
        Order {
            input,
            offset,
            end: offset,
            min: i64::MAX,
            min_at: offset,
            max: i64::MIN,
            back: 0,
            back_at: offset,
        }
    }

    /// A record at byte `at` of time `t`.
    pub fn note(&mut self, t: i64, at: u64) {
        if self.max > t && self.max.saturating_sub(t) > self.back {
            (self.back, self.back_at) = (self.max.saturating_sub(t), at);
        }
        if t < self.min {
            (self.min, self.min_at) = (t, at);
        }
        self.max = self.max.max(t);
    }

    /// These bytes, ending at `end` (set by the caller), added to a thread's
    /// list if they hold a time: the runs a thread reads one after another
    /// are one (a few per chunk, not one per read).
    pub fn push_to(self, list: &mut Vec<Order>) {
        if self.max == i64::MIN {
            return;
        }
        match list.last_mut() {
            Some(last) if last.input == self.input && last.end == self.offset => last.then(&self),
            _ => list.push(self),
        }
    }

    /// `next` (the bytes right after these) folded in.
    fn then(&mut self, next: &Order) {
        if self.max > next.min && self.max.saturating_sub(next.min) > self.back {
            (self.back, self.back_at) = (self.max.saturating_sub(next.min), next.min_at);
        }
        if next.back > self.back {
            (self.back, self.back_at) = (next.back, next.back_at);
        }
        if next.min < self.min {
            (self.min, self.min_at) = (next.min, next.min_at);
        }
        self.max = self.max.max(next.max);
        self.end = next.end;
    }
}

/// Per input, the farthest a record read went back from one before it,
/// over every thread's runs of bytes (in any order): `(input, back, at)`
/// for each input where it went back at all. The same at every `-j` and
/// chunk size.
pub fn far_back(order: &mut [Order]) -> Vec<(usize, i64, u64)> {
    order.sort_by_key(|o| (o.input, o.offset));
    let mut out: Vec<(usize, i64, u64)> = Vec::new();
    let mut acc: Option<Order> = None;
    for o in order.iter() {
        match &mut acc {
            Some(a) if a.input == o.input => a.then(o),
            _ => {
                out.extend(
                    acc.filter(|a| a.back > 0)
                        .map(|a| (a.input, a.back, a.back_at)),
                );
                acc = Some(*o);
            }
        }
    }
    out.extend(
        acc.filter(|a| a.back > 0)
            .map(|a| (a.input, a.back, a.back_at)),
    );
    out
}

impl<J: Job, F: Fn(&[u8]) -> Option<i64> + Sync> Window<J, F> {
    fn keep(&self, st: &mut WindowState<J::State>, rec: &[u8], at: u64, order: &mut Order) -> bool {
        let window = (self.since, self.until);
        let t = (self.time)(rec);
        if let Some(t) = t {
            order.note(t, at);
        }
        let kept = judge(t, window, &mut st.outside, &mut st.untimed);
        st.inside += kept as u64;
        kept
    }

    /// Hand `data[from..to]` (whole records) to the inner job.
    fn run(&self, st: &mut WindowState<J::State>, chunk: &Chunk<'_>, from: usize, to: usize) {
        if from < to {
            let sub = Chunk {
                input: chunk.input,
                offset: chunk.offset + from as u64,
                data: &chunk.data[from..to],
            };
            self.inner.process(&mut st.inner, &sub);
        }
    }
}

impl<J: Job, F: Fn(&[u8]) -> Option<i64> + Sync> Job for Window<J, F> {
    type State = WindowState<J::State>;

    fn new_state(&self) -> Self::State {
        WindowState {
            inner: self.inner.new_state(),
            inside: 0,
            outside: 0,
            untimed: 0,
            order: Vec::new(),
        }
    }

    /// Runs of records in range go to the inner job; the rest are counted.
    fn process(&self, st: &mut Self::State, chunk: &Chunk<'_>) {
        let d = chunk.data;
        let mut order = Order::new(chunk.input, chunk.offset);
        let (mut run_start, mut at) = (0, 0);
        while at < d.len() {
            let end = memchr::memchr(self.sep, &d[at..]).map_or(d.len(), |p| at + p + 1);
            if !self.keep(st, &d[at..end], chunk.offset + at as u64, &mut order) {
                self.run(st, chunk, run_start, at);
                run_start = end;
            }
            at = end;
        }
        self.run(st, chunk, run_start, d.len());
        order.end = chunk.offset + d.len() as u64;
        order.push_to(&mut st.order);
    }

    fn merge(&self, into: &mut Self::State, other: Self::State) {
        self.inner.merge(&mut into.inner, other.inner);
        into.inside += other.inside;
        into.outside += other.outside;
        into.untimed += other.untimed;
        into.order.extend(other.order);
    }

    fn offsets(&self) -> bool {
        self.inner.offsets()
    }

    fn stopped(&self) -> bool {
        self.inner.stopped()
    }
}

/// [`far_back`] of runs read from parts of inputs (part `j` of input
/// `of[j]`, as `scan::seek::span_edges` makes them): the farthest per input.
pub fn far_back_of(order: &mut [Order], of: &[usize]) -> Vec<(usize, i64, u64)> {
    let mut far: Vec<(usize, i64, u64)> = Vec::new();
    for (j, back, at) in far_back(order) {
        match far.last_mut() {
            Some(f) if f.0 == of[j] => *f = (*f).max((of[j], back, at)),
            _ => far.push((of[j], back, at)),
        }
    }
    far
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::count::{Count, CountState};

    fn window(since: i64, until: i64) -> Window<Count, impl Fn(&[u8]) -> Option<i64> + Sync> {
        Window {
            inner: Count { sep: b'\n' },
            since,
            until,
            sep: b'\n',
            // "<number> text": the number is the time.
            time: |r: &[u8]| {
                let n = r.iter().take_while(|c| c.is_ascii_digit()).count();
                std::str::from_utf8(&r[..n]).ok()?.parse().ok()
            },
        }
    }

    #[test]
    fn keeps_only_the_range_in_runs() {
        let data = b"1 a\n2 b\nx\n3 c\n4 d\n5 e\n2 late\n6";
        let w = window(2, 5);
        let mut st = w.new_state();
        w.process(
            &mut st,
            &Chunk {
                input: 0,
                offset: 0,
                data,
            },
        );
        // In range: "2 b", "3 c", "4 d", "2 late" (records are judged alone).
        assert_eq!(
            st.inner,
            CountState {
                records: 4,
                bytes: 4 + 4 + 4 + 7
            }
        );
        assert_eq!((st.outside, st.untimed), (3, 1));
    }

    #[test]
    fn chunking_does_not_change_the_answer() {
        let data = b"1 a\n2 b\nx\n3 c\n4 d\n5 e\n2 late\n6";
        let w = window(2, 5);
        let whole = {
            let mut st = w.new_state();
            w.process(
                &mut st,
                &Chunk {
                    input: 0,
                    offset: 0,
                    data,
                },
            );
            st
        };
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', data).map(|p| p + 1))
            .collect();
        for (i, &a) in starts.iter().enumerate() {
            let mut st = w.new_state();
            let mut other = w.new_state();
            w.process(
                &mut st,
                &Chunk {
                    input: 0,
                    offset: 0,
                    data: &data[..a],
                },
            );
            w.process(
                &mut other,
                &Chunk {
                    input: 0,
                    offset: a as u64,
                    data: &data[a..],
                },
            );
            w.merge(&mut st, other);
            assert_eq!(st.inner, whole.inner, "cut at record {i}");
            assert_eq!((st.outside, st.untimed), (whole.outside, whole.untimed));
            // "2 late", at byte 22, is 3 earlier than "5 e" before it.
            assert_eq!(far_back(&mut st.order), [(0, 3, 22)], "cut at record {i}");
        }
    }
}
