//! The feeding threads: one per worker slot, each taking the next block when its
//! worker has swallowed the previous one, and the failure reports that say which
//! input ranges a failed worker was given and never read.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel as chan;

use super::keep::{self, Keep, TimeFilter, WindowCounts};
use super::output::{Kept, Reorder, Sink};
use super::plan::{self, Block, Lost, LostWhy};
use super::proc::{self, describe, Mover, Out, Proc, SendErr};
use super::Ctl;

/// What one feeding thread did.
#[derive(Default)]
pub(super) struct FeederOut {
    pub bytes: u64,
    pub blocks: u64,
    pub failures: Vec<String>,
    /// What a worker given nothing that exited with a failure would say:
    /// no failure of the run, but said if no worker was left to feed (why
    /// every worker stopped).
    pub idle: Vec<String>,
    /// Input ranges not given to the worker (file shrank, read error, record
    /// too long).
    pub lost: Vec<Lost>,
    /// `--since/--until`: what the window kept and left out.
    pub window: Option<WindowCounts>,
}

/// Everything a feeding thread needs.
#[derive(Clone)]
pub(super) struct Feeder {
    pub slot: usize,
    pub workers: usize,
    pub argv: Arc<Vec<OsString>>,
    pub names: Arc<Vec<String>>,
    pub rx: chan::Receiver<Block>,
    pub pool: chan::Sender<Vec<u8>>,
    pub ctl: Arc<Ctl>,
    pub sink: Arc<Sink>,
    pub reorder: Option<Arc<Reorder>>,
    pub sep: u8,
    pub max_record: u64,
    pub pipe_size: usize,
    /// `--since/--until`: only the window's records are written.
    pub window: Option<TimeFilter>,
}

fn recycle(pool: &chan::Sender<Vec<u8>>, b: Block) {
    if let plan::Data::Bytes(v) = b.data {
        let _ = pool.send(v);
    }
}

/// "a.log bytes 0..1048576, 2097152..3145728; b.log bytes 0..100", merging
/// adjacent ranges; at most the last 10 are listed (data at risk is the data
/// given last), after a count of the earlier ones.
pub(super) fn ranges_text(names: &[String], given: &[(usize, u64, u64)]) -> String {
    let mut merged: Vec<(usize, u64, u64)> = Vec::new();
    let mut sorted = given.to_vec();
    sorted.sort();
    for (i, a, b) in sorted {
        match merged.last_mut() {
            Some(last) if last.0 == i && last.2 == a => last.2 = b,
            _ => merged.push((i, a, b)),
        }
    }
    let total: u64 = merged.iter().map(|r| r.2 - r.1).sum();
    let mut s = String::new();
    let skip = merged.len().saturating_sub(10);
    if skip > 0 {
        s.push_str(&format!(
            "{} ranges, {total} bytes in all; {skip} earlier ranges, then ",
            merged.len()
        ));
    }
    let mut prev: Option<usize> = None;
    for &(i, a, b) in merged.iter().skip(skip) {
        if prev == Some(i) {
            s.push_str(&format!(", {a}..{b}"));
        } else {
            if prev.is_some() {
                s.push_str("; ");
            }
            s.push_str(&format!("{} bytes {a}..{b}", names[i]));
        }
        prev = Some(i);
    }
    s
}

/// Where a given block went in a worker's pipe: the pipe position where it
/// started, how many of its input bytes were written (fewer than its length
/// when the worker stopped taking input during the block, or a time window
/// left records out), whether it was sent to its end, and under a time
/// window where the runs of kept records came from (`keep.rs`).
#[derive(Clone)]
struct Placed {
    at: u64,
    written: u64,
    done: bool,
    runs: Option<Vec<(u64, u64)>>,
}

/// Under a time window, the runs of blocks that ended this many pipe bytes
/// before the last are dropped (memory stays bounded): a worker's unread
/// bytes are its pipe's content plus one write, far less. Should one ever
/// be needed, its block counts as unread from its start (more named, never
/// less).
const RUNS_KEPT: u64 = 64 << 20;

/// Drop the runs of blocks that ended more than [`RUNS_KEPT`] pipe bytes
/// before `now`, from `from` on; returns the first block not dropped.
fn forget_runs(placed: &mut [Placed], from: usize, now: u64) -> usize {
    let mut k = from;
    while k < placed.len() && placed[k].at + placed[k].written + RUNS_KEPT < now {
        if let Some(r) = &mut placed[k].runs {
            *r = Vec::new();
        }
        k += 1;
    }
    k
}

/// The input ranges a worker never read: of the `total` bytes written into its
/// pipe it left `unread` (wf drains and counts them after it exits), so it read
/// the first `total - unread`; everything of `given` past that, including the
/// parts of blocks never written at all, is returned, in the order given.
/// Records a time window left out are not unread.
fn never_read(
    given: &[(usize, u64, u64)],
    placed: &[Placed],
    total: u64,
    unread: u64,
) -> Vec<(usize, u64, u64)> {
    let read = total.saturating_sub(unread);
    let mut out = Vec::new();
    for (&(i, a, b), p) in given.iter().zip(placed) {
        let rel = read.saturating_sub(p.at);
        let c = keep::consumed(rel, p.written, p.done, p.runs.as_deref(), a, b - a);
        if a + c < b {
            out.push((i, a + c, b));
        }
    }
    out
}

/// The end of a failure report: why the worker failed, what it was given and
/// what of that it never read.
fn failure_detail(
    names: &[String],
    given: &[(usize, u64, u64)],
    missed: &[(usize, u64, u64)],
    closed: bool,
    early: bool,
) -> String {
    let missed_bytes: u64 = missed.iter().map(|r| r.2 - r.1).sum();
    let mut msg = String::new();
    if given.is_empty() {
        msg.push_str(" before it was given any input");
        return msg;
    }
    if missed_bytes > 0 {
        msg.push_str(&format!(
            " without reading all of its input ({missed_bytes} bytes never read)"
        ));
    } else if closed || early {
        msg.push_str(" before the end of its input");
    }
    msg.push_str(&format!(
        "; input it was given, which may be incomplete: {}",
        ranges_text(names, given)
    ));
    if missed_bytes > 0 {
        msg.push_str(&format!("; never read: {}", ranges_text(names, missed)));
    }
    msg
}

/// Print a failure and keep it for the report.
pub(super) fn report_failure(failures: &mut Vec<String>, msg: String) {
    crate::warn!("{msg}");
    failures.push(msg);
}

/// What a feeding thread waits for next.
enum Next {
    Block(Block),
    /// The plan is done, or feeding stopped.
    End,
    /// The long-lived worker exited while waiting.
    WorkerExited,
}

impl Feeder {
    /// Wait for the next block, but notice a stop or the worker's death meanwhile
    /// (a slow stream can keep the planner busy).
    fn next_block(&self, worker: Option<&Proc>) -> Next {
        loop {
            if self.ctl.stopped() {
                return Next::End;
            }
            if worker.is_some_and(|p| p.exited()) {
                return Next::WorkerExited;
            }
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(b) => return Next::Block(b),
                Err(chan::RecvTimeoutError::Timeout) => {}
                Err(chan::RecvTimeoutError::Disconnected) => return Next::End,
            }
        }
    }

    fn env(&self) -> [(&'static str, String); 2] {
        [
            ("WF_WORKER", self.slot.to_string()),
            ("WF_WORKERS", self.workers.to_string()),
        ]
    }

    /// Long-lived worker: feed blocks until the plan ends or the worker fails.
    pub(super) fn run_long(mut self, p: Proc) -> FeederOut {
        let mut out = FeederOut::default();
        let mut given: Vec<(usize, u64, u64)> = Vec::new();
        let mut placed: Vec<Placed> = Vec::new();
        // The worker exited while wf still held its stdin open: it stopped before
        // the end of its input, whatever its status.
        let mut early = false;
        let mut mv = self.mover();
        let mut sent = Sent::Whole;
        let mut forgot = 0;
        while let Sent::Whole = sent {
            let b = match self.next_block(Some(&p)) {
                Next::Block(b) => b,
                Next::End => break,
                Next::WorkerExited => {
                    early = true;
                    break;
                }
            };
            given.push((b.input, b.offset, b.offset + b.len));
            let at;
            (at, sent) = self.send_block(&p, &b, true, &mut mv, &mut out);
            placed.push(at);
            forgot = forget_runs(&mut placed, forgot, p.pipe_sent());
            recycle(&self.pool, b);
        }
        out.window = mv.keep.map(|k| k.counts);
        // Done with the plan (the planner stops once no feeder takes blocks).
        drop(std::mem::replace(&mut self.rx, chan::never()));
        let closed = matches!(sent, Sent::Closed);
        let pid = p.pid;
        let total = p.pipe_sent();
        let fin = p.finish();
        if self.ctl.stopped() {
            return out;
        }
        let ok = fin.status.is_some_and(|s| s.success());
        // A worker that was given nothing and exited well lost nothing: the
        // blocks went to the others (`wf feed -j 2 empty.txt -- true`
        // exited 2, each worker "exited ... before it was given any input").
        let idle = given.is_empty();
        if ok && !closed && (!early || idle) && fin.unread == 0 {
            return out;
        }
        // Nor is one given nothing that failed a failure of the run, whatever
        // its status: GNU parallel starts no job for it, and its status is
        // the command's on no input (`wf feed app.log -- grep ERROR` exited
        // 2: an idle grep exits 1). Whether it exited before or after its
        // input ended is a race (`-j 1 empty.txt -- false` was 0 or 2), so
        // neither counts; death by a signal does. What it would say is said
        // if input was left that no worker was fed (why every worker
        // stopped); a command that cannot run is refused before any input.
        let signalled = fin.status.is_some_and(|s| s.code().is_none());
        let missed = never_read(&given, &placed, total, fin.unread);
        let msg = format!(
            "wf: worker {} (pid {pid}) {}{}",
            self.slot,
            describe(fin.status),
            failure_detail(&self.names, &given, &missed, closed, early)
        );
        match idle && !signalled {
            true => out.idle.push(msg),
            false => report_failure(&mut out.failures, msg),
        }
        out
    }

    /// `--per-block`: a fresh process for each block this slot takes.
    pub(super) fn run_per_block(self) -> FeederOut {
        let mut out = FeederOut::default();
        let mut mv = self.mover();
        loop {
            let Next::Block(b) = self.next_block(None) else {
                break;
            };
            if let Some(r) = &self.reorder {
                if !r.wait_turn(b.seq, &self.ctl) {
                    break;
                }
            }
            let go_on = self.one_block(&b, &mut mv, &mut out);
            recycle(&self.pool, b);
            if !go_on {
                break;
            }
        }
        out.window = mv.keep.map(|k| k.counts);
        out
    }

    /// How this thread moves data: with the time window's filter, if any.
    fn mover(&self) -> Mover {
        let mut mv = Mover::new(self.sep, self.max_record);
        mv.keep = self.window.map(Keep::new);
        mv
    }

    /// Run a fresh worker for one block, report it if it failed, and pass its
    /// output on (in turn, with `--keep-order`). False once feeding stopped.
    fn one_block(&self, b: &Block, mv: &mut Mover, out: &mut FeederOut) -> bool {
        if self.all_outside(b, mv, out) {
            if let Some(r) = &self.reorder {
                r.put(b.seq, Kept::default(), &self.sink);
            }
            return true;
        }
        let given = [(b.input, b.offset, b.offset + b.len)];
        let mode = match &self.reorder {
            Some(_) => Out::Capture,
            None => Out::Sink(self.sink.clone()),
        };
        let p = match proc::spawn(&self.argv, &self.env(), mode, &self.ctl, self.pipe_size) {
            Ok(p) => p,
            Err(e) => {
                let msg = format!(
                    "wf: cannot start '{}' for block {} ({}): {}",
                    self.argv[0].to_string_lossy(),
                    b.seq,
                    ranges_text(&self.names, &given),
                    crate::scan::io_message(&e)
                );
                report_failure(&mut out.failures, msg);
                if let Some(r) = &self.reorder {
                    r.put(b.seq, Kept::default(), &self.sink);
                }
                return true;
            }
        };
        let pid = p.pid;
        let (placed, sent) = self.send_block(&p, b, false, mv, out);
        let closed = matches!(sent, Sent::Closed);
        let total = p.pipe_sent();
        let fin = p.finish();
        if self.ctl.stopped() {
            return false;
        }
        let ok = fin.status.is_some_and(|s| s.success());
        if !ok || closed || fin.unread > 0 {
            let missed = never_read(&given, std::slice::from_ref(&placed), total, fin.unread);
            let msg = format!(
                "wf: worker for block {} (slot {}, pid {pid}) {}{}",
                b.seq,
                self.slot,
                describe(fin.status),
                failure_detail(&self.names, &given, &missed, closed, false)
            );
            report_failure(&mut out.failures, msg);
        }
        if let Some(r) = &self.reorder {
            r.put(b.seq, fin.output, &self.sink);
        }
        true
    }

    /// Under a time window, whether none of `b`'s records is in it (then
    /// they are counted, and the block's bytes as read). A block of a file
    /// is read here once more (from the page cache, just read or about to
    /// be), 1 MiB at a time; one that cannot be read, or holds a record
    /// longer than that, is left to the send (a worker is started).
    fn all_outside(&self, b: &Block, mv: &mut Mover, out: &mut FeederOut) -> bool {
        let Some(k) = &mut mv.keep else {
            return false;
        };
        let counts = match &b.data {
            plan::Data::Bytes(v) => k.none_kept(&v[..b.len as usize], self.sep),
            plan::Data::Range { file, start, end } => {
                none_kept_in(k, file, (*start, *end), self.sep)
            }
        };
        match counts {
            Some(c) => {
                k.counts.add(c);
                out.bytes += b.len;
                true
            }
            None => false,
        }
    }

    /// Send a block to a worker and count it in `out` if it went whole (an
    /// input error is noted, and feeding goes on); returns where it went in the
    /// worker's pipe and how sending ended.
    fn send_block(
        &self,
        p: &Proc,
        b: &Block,
        terminate: bool,
        mv: &mut Mover,
        out: &mut FeederOut,
    ) -> (Placed, Sent) {
        let (at, in0) = (p.pipe_sent(), p.input_sent());
        let sent = p.send(b, terminate, mv);
        let lost = |(from, to)| Lost {
            input: b.input,
            from,
            to,
            why: LostWhy::TooLong(self.max_record),
        };
        out.lost.extend(mv.too_long.drain(..).map(lost));
        let mut placed = Placed {
            at,
            written: p.input_sent() - in0,
            done: sent.is_ok(),
            runs: mv.keep.as_mut().map(|k| std::mem::take(&mut k.runs)),
        };
        if let Some(r) = &mut placed.runs {
            r.shrink_to_fit();
        }
        let sent = match sent {
            Ok(()) => {
                out.bytes += b.len;
                out.blocks += 1;
                Sent::Whole
            }
            Err(SendErr::Closed) => Sent::Closed,
            Err(SendErr::Stopped) => Sent::Stopped,
            Err(SendErr::Input { at, why }) => {
                let to = b.offset + b.len;
                out.lost.push(Lost {
                    input: b.input,
                    from: at,
                    to,
                    why,
                });
                Sent::Whole
            }
        };
        (placed, sent)
    }
}

/// [`Keep::none_kept`] of the records of `file`'s bytes `[start, end)`,
/// read a piece of at most [`PIECE`] bytes at a time; `None` also if a piece
/// cannot be read or holds no record end.
fn none_kept_in(
    k: &Keep,
    file: &std::fs::File,
    (mut at, end): (u64, u64),
    sep: u8,
) -> Option<WindowCounts> {
    let mut buf = vec![0u8; PIECE.min(end - at) as usize];
    let mut all = WindowCounts::default();
    while at < end {
        let want = buf.len().min((end - at) as usize);
        let n = crate::scan::read_full_at(file, &mut buf[..want], at).ok()?;
        if n < want {
            return None;
        }
        let whole = if at + n as u64 == end {
            n
        } else {
            memchr::memrchr(sep, &buf[..n])? + 1
        };
        all.add(k.none_kept(&buf[..whole], sep)?);
        at += whole as u64;
    }
    Some(all)
}

/// The most bytes of a block read at once to see whether any of its records
/// is in the time window.
const PIECE: u64 = 1 << 20;

/// How sending a block ended.
enum Sent {
    /// As far as the input allowed: feeding goes on.
    Whole,
    /// The worker exited (or closed its input) before taking the whole block.
    Closed,
    /// Feeding stopped (signal, output gone).
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::ranges_text;

    #[test]
    fn ranges_merge_and_only_the_last_ten_are_listed() {
        let names = vec!["a.log".to_string(), "b.log".to_string()];
        // Adjacent ranges of one file merge, in any order given.
        let text = ranges_text(&names, &[(0, 10, 20), (0, 0, 10), (1, 0, 5)]);
        assert_eq!(text, "a.log bytes 0..20; b.log bytes 0..5");
        // 25 separate ranges: a count, then the last 10.
        let given: Vec<_> = (0..25u64).map(|k| (0, 100 * k, 100 * k + 10)).collect();
        let text = ranges_text(&names, &given);
        assert!(
            text.starts_with(
                "25 ranges, 250 bytes in all; 15 earlier ranges, then a.log bytes 1500..1510, "
            ),
            "{text}"
        );
        assert!(text.ends_with(", 2400..2410"), "{text}");
        assert_eq!(text.matches("..").count(), 10, "{text}");
        // 10 ranges: all listed, no count.
        let text = ranges_text(&names, &given[..10]);
        assert!(text.starts_with("a.log bytes 0..10, 100..110"), "{text}");
        assert_eq!(text.matches("..").count(), 10, "{text}");
    }
}
