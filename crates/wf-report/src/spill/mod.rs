//! `--memory`: the report's counts spilled to disk in partitions by client,
//! and counted back one group of partitions at a time, so that a log of tens
//! of millions of distinct clients goes through in a bounded RSS.
//!
//! Why by client: a visitor is (day, client, agent), so every visitor falls
//! in the partition of its client, and the visitors of any row (a URL, a
//! day, a status code, an agent) are the sum over partitions of that row's
//! visitors in each: partitions share no visitor. A partition's counts are
//! then an ordinary [`Panels`], merged and tallied by the same code as a run
//! that never spilled (`Panels::merge`, `tally`), and the partitions' rows
//! are added up by key (`combine`). Hits and bytes of a row that is not a
//! client (a request line, a referrer, an agent) go to one partition of the
//! spill (by the row's own hash), and the row is present with no hits in the
//! partitions of its visitors; `tally` keeps a row with visitors and no hits.
//!
//! A worker spills its panels when their heap passes its share of the
//! budget (`Spill::per_thread`): one file per spill, [`PARTS`] sections, each
//! section a partition's panels in the `--state` encoding (`codec`), written
//! straight from the worker's tables (`split`).
//! Once a spill has been made, a worker that has read all it will spills
//! its remainder on its own thread, beside those still reading
//! (`Spill::done`, through `Job::worker_done`), and the remainders left
//! are spilled side by side, not merged first (`Spill::apart`). The
//! sections are then read back partition by partition, straight into a
//! group (`codec::read_into`), several partitions merged at once until
//! they pass a twentieth of the budget (`per_group`), on a thread of their
//! own while the group before is tallied (`Spill::read_back`), or, where
//! partitions are small enough, by two threads that each tally their own
//! groups of half the size (`Spill::readers`). A visitor of a day that
//! only one spill file has is read back without a lookup (`shared_days`).
//! The files live in a temporary directory (`wf-spill-<pid>-XXXXXX`,
//! `wf_core::cleanup`) removed when the report is made or dropped (also on
//! an error) and, in the CLI, on SIGINT, SIGTERM or SIGHUP; one left by a
//! wf that was killed is removed by the next spill. A
//! spill that cannot be written is named once on stderr and the counts stay
//! in memory: memory is then not bounded, the answer still exact.
//!
//! What a spill costs was measured on the 10 GiB bench log (8 spills of
//! 1.6 M visitors and 6.5 M pairs each, perf): a partition's counts were
//! found by a pass over all of a worker's counts (32 passes a spill) and
//! every key hashed again with SipHash for its partition, 13% of the
//! report's CPU; eight partitions a pass, by the hash the interner keeps,
//! 4% (then 15% with the faster tables of `intern`, as a share); written
//! straight from the worker's tables, each partition from its own entries
//! (`split`), 6.5%, and the report 0.88x its time. See `bench/results/
//! report-10G-2026-11-28c.txt` and later for the whole report.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use wf_core::cleanup::SpillDir;
use wf_core::jobs::partial::Reader;

use crate::acc::Panels;
use crate::codec::read_into;

mod split;

pub(crate) use split::part_of;
use split::Split;

/// Partitions of a spill.
pub const PARTS: usize = 64;

/// The default `--memory`.
pub const DEFAULT_MEMORY: u64 = 1 << 30;

/// What `--memory` bounds: the counts' heap is kept under this share of it
/// (the rest is the scan's buffers, the agent rules, the allocator's slack).
const COUNTED_SHARE: f64 = 0.6;

/// A spill file or its directory that could not be written or read back.
#[derive(Debug)]
pub struct SpillError {
    pub path: PathBuf,
    pub what: &'static str,
    pub error: std::io::Error,
}

impl std::fmt::Display for SpillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.what, self.path.display(), self.error)
    }
}

impl std::error::Error for SpillError {}

/// One spill file: where each partition's section starts and its length,
/// and the days of its visitors.
struct Run {
    path: PathBuf,
    sections: Vec<(u64, u64)>,
    days: Vec<i64>,
    /// The counts' heap when spilled, per byte of the file (how much a
    /// section's bytes may take again when read back: [`Spill::readers`]).
    heap_per_byte: f64,
}

/// The days of more than one of `runs`: the only days whose visitors a
/// group reads back may have twice, so the only ones looked up
/// (`codec::read_into`). A log read in time order has few: each worker's
/// spills are of its own region's days, one after the other.
fn shared_days(runs: &[Run]) -> HashSet<i64> {
    let mut runs_of: HashMap<i64, u32> = HashMap::new();
    for day in runs.iter().flat_map(|r| &r.days) {
        *runs_of.entry(*day).or_default() += 1;
    }
    runs_of.retain(|_, n| *n > 1);
    runs_of.into_keys().collect()
}

/// The spills of one report (shared by its workers).
pub struct Spill {
    /// Heap of one worker's counts past which it spills.
    per_thread: usize,
    /// Heap of the partitions merged at once after the scan.
    per_group: usize,
    temp: Option<PathBuf>,
    dir: Mutex<Option<SpillDir>>,
    runs: Mutex<Vec<Run>>,
    /// The next spill file's number.
    next: AtomicUsize,
    /// Spill files written whole (`next` counts those tried too).
    written: AtomicUsize,
    /// A spill could not be written: counting goes on in memory.
    failed: AtomicBool,
    /// Threads that read the spill back ([`Spill::readers`]; 0: not yet).
    read_by: AtomicUsize,
}

impl Spill {
    /// Spills for a budget of `memory` bytes over `threads` workers, in a
    /// directory made under `temp` (the system's temporary directory if
    /// `None`).
    pub fn new(memory: u64, threads: usize, temp: Option<PathBuf>) -> Spill {
        let counted = (memory as f64 * COUNTED_SHARE) as usize;
        Spill {
            // Each worker's counts, and the merge of two at the end.
            per_thread: counted / (threads.max(1) + 1),
            // A group's tally makes its rows again (as much again, and
            // more for groups of many URLs): at a half, the 20-million-client
            // log peaked at 995 MiB under the default 1G; at a quarter, see
            // bench/results/report-memory-2026-11-28.txt. A twelfth, of 64
            // partitions, since the next group is read while one is tallied
            // (`read_back`): at a sixth of 32 the 20-million-client log
            // peaked at 1,108 MB (a group is one partition at the least), at
            // an eighth of 64 at 907 MB, at a twelfth 842 MB, no slower.
            per_group: counted / 12,
            temp,
            dir: Mutex::new(None),
            runs: Mutex::new(Vec::new()),
            next: AtomicUsize::new(0),
            written: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            read_by: AtomicUsize::new(0),
        }
    }

    /// Spill files written whole so far (for `--stats`: one that could not
    /// be written is not counted).
    pub fn runs(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    /// Threads that read the spill back, each making groups and counting
    /// them (for `--stats`; 0 before the read back).
    pub fn read_by(&self) -> usize {
        self.read_by.load(Ordering::Relaxed)
    }

    /// Whether anything was spilled.
    pub fn spilled(&self) -> bool {
        !self.runs.lock().unwrap().is_empty()
    }

    /// Spills `p` (emptying it) if its heap is past a worker's share;
    /// whether it did (the ids of `p` are then new).
    pub fn check(&self, p: &mut Panels) -> bool {
        if p.heap_bytes() <= self.per_thread || self.failed.load(Ordering::Relaxed) {
            return false;
        }
        self.check_spill(p)
    }

    /// A worker's counts once it has read all it will, after a first
    /// spill: spilled now, on the worker's thread, while others still read
    /// (`Job::worker_done`); whether they went. They would be spilled after
    /// the scan anyway (`apart`, `read_back`), on the merging thread.
    pub fn done(&self, p: &mut Panels) -> bool {
        if p.is_empty() || !self.spilled() || self.failed.load(Ordering::Relaxed) {
            return false;
        }
        self.check_spill(p)
    }

    /// At the end of a scan that has spilled, two workers' counts to be
    /// merged: both are spilled, side by side on two threads, instead of
    /// merged here and spilled after (`read_back` spills the merge anyway;
    /// merged and spilled on one thread, 0.8 s of the 10 GiB bench log's
    /// report, side by side about 0.45 s). Whether `a` went (each one
    /// that did is emptied; one that could not be written stays, to be
    /// merged as before). Not before a first spill: two workers' counts
    /// of one log share most keys, and their merge may fit where the two
    /// did not (the 1 GiB bench log: 3 spills, and 3.4 s for 2.2 s).
    pub fn apart(&self, a: &mut Panels, b: &mut Panels) -> bool {
        // One empty (a worker that spilled at `done`): merged for nothing,
        // where spilled it was a file of empty sections.
        let one_empty = a.is_empty() || b.is_empty();
        if one_empty || !self.spilled() || self.failed.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::scope(|s| {
            let other = s.spawn(|| self.check_spill(b));
            let went = self.check_spill(a);
            other
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            went
        })
    }

    /// Spills `p` whatever its size; as [`Spill::check`] past the share.
    fn check_spill(&self, p: &mut Panels) -> bool {
        match self.spill(p) {
            Ok(()) => {
                *p = Panels::default();
                true
            }
            Err(e) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    wf_core::warn!("wf report: {e}; counting in memory (--memory not kept)");
                }
                false
            }
        }
    }

    fn dir(&self) -> Result<PathBuf, SpillError> {
        let mut dir = self.dir.lock().unwrap();
        if dir.is_none() {
            let made = SpillDir::new(self.temp.as_deref()).map_err(|error| SpillError {
                path: self.temp.clone().unwrap_or_else(std::env::temp_dir),
                what: "cannot make a spill directory in",
                error,
            })?;
            *dir = Some(made);
        }
        Ok(dir.as_ref().unwrap().path().to_path_buf())
    }

    /// A new file in the spill directory.
    pub(crate) fn create(&self, name: &str) -> Result<(PathBuf, BufWriter<File>), SpillError> {
        let path = self.dir()?.join(name);
        let f = File::create(&path).map_err(|error| SpillError {
            path: path.clone(),
            what: "cannot write the spill file",
            error,
        })?;
        Ok((path, BufWriter::new(f)))
    }

    /// Writes `p` as one run of [`PARTS`] sections.
    fn spill(&self, p: &mut Panels) -> Result<(), SpillError> {
        p.finish();
        let days = p.visitors.days();
        let heap = p.heap_bytes();
        let path = self
            .dir()?
            .join(format!("run-{}", self.next.fetch_add(1, Ordering::Relaxed)));
        let err = |error| SpillError {
            path: path.clone(),
            what: "cannot write the spill file",
            error,
        };
        let mut f = BufWriter::new(File::create(&path).map_err(err)?);
        let mut split = Split::of(p);
        let mut sections = Vec::with_capacity(PARTS);
        let mut at = 0u64;
        let mut write = || {
            let mut bytes = Vec::new();
            for q in 0..PARTS {
                bytes = split.section(q, bytes);
                f.write_all(&bytes)?;
                sections.push((at, bytes.len() as u64));
                at += bytes.len() as u64;
                bytes.clear();
            }
            f.flush()
        };
        if let Err(e) = write() {
            [
                p.status_pairs,
                p.requests.pairs,
                p.referrers.pairs,
                p.vhosts.pairs,
            ] = split.give_back();
            return Err(err(e));
        }
        drop(f);
        self.written.fetch_add(1, Ordering::Relaxed);
        self.runs.lock().unwrap().push(Run {
            path,
            sections,
            days,
            heap_per_byte: heap as f64 / at.max(1) as f64,
        });
        Ok(())
    }

    /// After the scan: spills `rest` (the merged counts' panels) and calls
    /// `each` with groups of partitions merged, each just past `per_group`
    /// or less (one partition, never cut, may be more), until it says to
    /// stop; the files are removed. `each` is called on two threads at once
    /// where the partitions are small enough ([`Spill::readers`]).
    pub fn read_back(
        &self,
        rest: &mut Panels,
        each: impl Fn(Panels) -> bool + Sync,
    ) -> Result<(), SpillError> {
        if !rest.is_empty() {
            self.spill(rest)?;
            *rest = Panels::default();
        }
        let runs = std::mem::take(&mut *self.runs.lock().unwrap());
        let (shared, next) = (shared_days(&runs), AtomicUsize::new(0));
        let reader = Partitions {
            runs: &runs,
            shared: &shared,
            next: &next,
            stop: &AtomicBool::new(false),
        };
        let readers = self.readers(&runs);
        self.read_by.store(readers, Ordering::Relaxed);
        match readers {
            1 => self.piped(&reader, each),
            _ => std::thread::scope(|s| {
                let other = s.spawn(|| reader.groups(self.per_group / 2, &each));
                let mine = reader.groups(self.per_group / 2, &each);
                let theirs = other
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                mine.and(theirs)
            }),
        }
    }

    /// How many threads read the partitions back. Two, each making groups
    /// of half a group's heap (`per_group / 2`) and counting them itself
    /// (`each`), where no partition may take more than a whole group (its
    /// sections' bytes at their runs' heap per byte: ~1.2x what one merged
    /// takes on the 10 GiB bench log); one beside `each` otherwise. Two
    /// hold two half groups and their rows where one holds a group read
    /// and a group counted with its rows: about as much (the review: peak
    /// RSS within noise of one reader's on the 1 GiB log under 64M-512M;
    /// the 10 GiB log under the default 613 -> 660 MB). Where partitions
    /// are larger than a group (the 20-million-client log: 135 MB for 54
    /// MB) two threads would hold two partitions and both their rows, past
    /// the bound (c21c965, two readers beside the counting: 789 MB for 577
    /// MB under `--memory 512M`). The estimate is from the hash's random
    /// seed's partitions: near the line a log is read by one or two from
    /// run to run (the same report). The 10 GiB bench log's tail after the
    /// scan had ~2.7 s of CPU on ~1.9 s with one reader; two: its report
    /// 0.97x (7 runs).
    fn readers(&self, runs: &[Run]) -> usize {
        let largest = (0..PARTS)
            .map(|q| {
                runs.iter()
                    .map(|r| r.sections[q].1 as f64 * r.heap_per_byte)
                    .sum::<f64>()
            })
            .fold(0.0, f64::max);
        if largest <= self.per_group as f64 {
            2
        } else {
            1
        }
    }

    /// The groups read on a thread of their own and given to `each` on
    /// this one: the two took 7 of the 26 s of the 10 GiB bench log's
    /// report one after the other (about a half each, perf).
    fn piped(
        &self,
        reader: &Partitions<'_>,
        each: impl Fn(Panels) -> bool,
    ) -> Result<(), SpillError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(0);
        std::thread::scope(|s| {
            let read = s.spawn(move || reader.groups(self.per_group, |g| tx.send(g).is_ok()));
            for group in rx {
                if !each(group) {
                    reader.stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
            read.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    /// Removes the spill directory and its files.
    pub fn remove(&self) {
        drop(self.dir.lock().unwrap().take());
    }
}

/// The partitions of a spill's runs, read back by one or two threads:
/// each takes the next partition not yet taken.
struct Partitions<'a> {
    runs: &'a [Run],
    /// Days of more than one run ([`shared_days`]).
    shared: &'a HashSet<i64>,
    /// The next partition to take.
    next: &'a AtomicUsize,
    /// Take no more: `each` said to stop, or a section could not be read.
    stop: &'a AtomicBool,
}

impl Partitions<'_> {
    /// Partitions taken in turn and merged into groups of more than
    /// `per_group` heap bytes (or what is left), each given to `each`
    /// (which says whether to go on). Groups are never merged: partitions
    /// share no visitor, so any grouping gives the same report.
    fn groups(&self, per_group: usize, each: impl Fn(Panels) -> bool) -> Result<(), SpillError> {
        let (mut group, mut bytes) = (Panels::default(), Vec::new());
        // Partitions read into `group` since it was last given: a partition
        // may hold only rows' hits (a URL's, in the partition of its key),
        // and `group.is_empty()` looks at clients, agents and visitors.
        let mut held = 0;
        loop {
            let q = self.next.fetch_add(1, Ordering::Relaxed);
            if q >= PARTS || self.stop.load(Ordering::Relaxed) {
                break;
            }
            for run in self.runs {
                let read = read_section(run, q, &mut group, (self.shared, &mut bytes));
                if read.is_err() {
                    self.stop.store(true, Ordering::Relaxed);
                    return read;
                }
            }
            held += 1;
            if group.heap_bytes() > per_group {
                held = 0;
                if !self.give(std::mem::take(&mut group), &each) {
                    return Ok(());
                }
            }
        }
        if held > 0 {
            self.give(group, &each);
        }
        Ok(())
    }

    fn give(&self, group: Panels, each: impl Fn(Panels) -> bool) -> bool {
        let go_on = !self.stop.load(Ordering::Relaxed) && each(group);
        if !go_on {
            self.stop.store(true, Ordering::Relaxed);
        }
        go_on
    }
}

/// Folds partition `q` of `run` into `group`, whose visitors of days not
/// `shared` are listed without tables; read into `bytes` (kept for the
/// next section: a buffer made for each was pages faulted in and zeroed).
fn read_section(
    run: &Run,
    q: usize,
    group: &mut Panels,
    (shared, bytes): (&HashSet<i64>, &mut Vec<u8>),
) -> Result<(), SpillError> {
    let err = |what, error| SpillError {
        path: run.path.clone(),
        what,
        error,
    };
    let (at, len) = run.sections[q];
    let mut f = File::open(&run.path).map_err(|e| err("cannot read the spill file", e))?;
    f.seek(SeekFrom::Start(at))
        .map_err(|e| err("cannot read the spill file", e))?;
    bytes.clear();
    bytes.resize(len as usize, 0);
    f.read_exact(bytes)
        .map_err(|e| err("cannot read the spill file", e))?;
    read_into(group, &mut Reader::new(bytes), false, Some(shared)).map_err(|d| {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{d:?}"));
        err("damaged spill file", e)
    })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use wf_core::jobs::{Chunk, Job};

    use crate::job::{BotMode, ReportJob};
    use crate::run::{report, Settings};

    /// Lines of many clients (IPv4, IPv6, names), days, statuses, URLs.
    fn log(n: usize) -> Vec<u8> {
        let mut s = String::new();
        for i in 0..n {
            let c = i / 3;
            let client = match c % 3 {
                0 => format!("10.0.{}.{}", c >> 8 & 255, c & 255),
                1 => format!("2001:db8::{c:x}"),
                _ => format!("h{c}.example"),
            };
            let status = [200, 299, 404, 500, 304][i % 5];
            writeln!(
                s,
                "{client} - - [{:02}/Jun/2007:{:02}:00:00 -0700] \"GET /p/{}{} HTTP/1.1\" {status} {} \"http://r{}.org/\" \"{}\"",
                10 + i % 3,
                i % 24,
                i % 211,
                [".png", "", "?a=1"][i % 3],
                i % 1000,
                i % 17,
                ["Mozilla/5.0 Firefox/120.0", "Googlebot/2.1", "curl/8"][i % 3],
            )
            .unwrap();
        }
        s.into_bytes()
    }

    /// Lines in time order over 30 days, each day's clients coming back
    /// through the day.
    fn log_in_order(n: usize) -> Vec<u8> {
        let mut s = String::new();
        for i in 0..n {
            let (day, c) = (1 + i * 30 / n, i * 7 % 37);
            writeln!(
                s,
                "10.1.{}.{} - - [{day:02}/Jun/2007:{:02}:00:00 -0700] \"GET /q/{} HTTP/1.1\" {} 9 \"-\" \"agent {}\"",
                c >> 8,
                c & 255,
                i * 24 * 30 / n % 24,
                i % 97,
                [200, 304, 503][i % 3],
                c % 3,
            )
            .unwrap();
        }
        s.into_bytes()
    }

    /// The JSON of `data` counted in `parts` chunks by two workers, merged.
    fn json(job: &ReportJob, data: &[u8], parts: usize, max_rows: usize) -> String {
        let (mut a, mut b) = (job.new_state(), job.new_state());
        let mut start = 0;
        for k in 1..=parts {
            let mut end = data.len() * k / parts;
            while end < data.len() && data[end - 1] != b'\n' {
                end += 1;
            }
            let chunk = Chunk {
                input: 0,
                offset: start as u64,
                data: &data[start..end],
            };
            // The first half to one worker, the rest to the other (as
            // the scan's regions of a file).
            job.process(if k <= parts / 2 { &mut a } else { &mut b }, &chunk);
            start = end;
        }
        job.worker_done(&mut a);
        job.worker_done(&mut b);
        job.merge(&mut a, b);
        let settings = Settings {
            max_rows,
            ..Settings::default()
        };
        let r = report(&mut a.acc, job, &settings, 0, vec![]).unwrap();
        crate::report::json(&r)
    }

    /// Spilled counts read back by one thread beside the counting, or by
    /// two that each count their own groups (`Spill::readers`: larger
    /// budgets, smaller partitions), give the report counted in memory.
    #[test]
    fn spilled_counts_give_the_same_report() {
        let data = log(6000);
        let plain = ReportJob::new(crate::format("combined", b"").unwrap(), BotMode::Include);
        let plain = plain.unwrap();
        for max_rows in [100_000, 3] {
            let want = json(&plain, &data, 7, max_rows);
            // Budgets at which a thread often ends with a group not yet
            // given (the partitions are from the hash's random seed): with
            // that group dropped, 1M alone failed in about a third of runs
            // (the review), with 1.5M and 2M beside it in 9 of 10.
            let cases = [
                (20_000, 7, 1),
                (200_000, 40, 1),
                (1_000_000, 40, 2),
                (1_500_000, 40, 2),
                (2_000_000, 40, 2),
            ];
            for (memory, parts, readers) in cases {
                let job = plain.clone().with_memory(memory, 2, None);
                assert_eq!(
                    json(&job, &data, parts, max_rows),
                    want,
                    "{memory} {max_rows}"
                );
                let spill = job.spill().unwrap();
                assert!(spill.runs() > 1, "no spill at {memory}");
                assert_eq!(spill.read_by(), readers, "{memory}");
            }
        }
    }

    /// URLs that decode to bytes that are not UTF-8 (`/x%ff`, `/x%fe`) are
    /// rows of the same name; with as many hits each, they are ordered and
    /// cut by their bytes: the same report whatever the lines' order and
    /// the spill's partitions (it was that of their first lines, and which
    /// one a spilled report kept changed from run to run: the review).
    #[test]
    fn rows_alike_as_text_are_ordered_by_their_bytes() {
        let mut lines = Vec::new();
        for c in 0..24 {
            // As many hits each, other bytes: the row a tie puts first
            // shows. 128 URLs alike: several in one file of rows (`combine`).
            for b in 0x80..0x100 {
                lines.push(format!(
                    "10.0.{}.{} - - [1{}/Jun/2007:10:00:00 -0700] \"GET /x%{b:02x} HTTP/1.1\" 200 {b} \"-\" \"agent {}\"\n",
                    c / 7,
                    c % 7,
                    c % 3,
                    c % 5
                ));
            }
        }
        let forward = lines.concat().into_bytes();
        lines.reverse();
        let backward = lines.concat().into_bytes();
        let plain = ReportJob::new(crate::format("combined", b"").unwrap(), BotMode::Include);
        let plain = plain.unwrap();
        for max_rows in [1, 2, 3, 100] {
            let want = json(&plain, &forward, 3, max_rows);
            assert_eq!(json(&plain, &backward, 3, max_rows), want, "{max_rows}");
            for memory in [10_000, 40_000] {
                let job = plain.clone().with_memory(memory, 2, None);
                assert_eq!(
                    json(&job, &forward, 8, max_rows),
                    want,
                    "{memory} {max_rows}"
                );
                assert_eq!(
                    json(&job, &backward, 8, max_rows),
                    want,
                    "{memory} {max_rows}"
                );
                assert!(job.spill().unwrap().runs() > 0, "no spill at {memory}");
            }
        }
    }

    /// A log in time order: its spills' days are mostly theirs alone,
    /// whose visitors are read back without a lookup (`shared_days`), and
    /// a day's visitors in two spills are one each still.
    #[test]
    fn spills_of_a_log_in_time_order_give_the_same_report() {
        let data = log_in_order(9000);
        let plain = ReportJob::new(crate::format("combined", b"").unwrap(), BotMode::Include);
        let plain = plain.unwrap();
        let want = json(&plain, &data, 9, 100_000);
        for (memory, parts) in [(30_000, 9), (120_000, 60)] {
            let job = plain.clone().with_memory(memory, 2, None);
            assert_eq!(json(&job, &data, parts, 100_000), want, "{memory}");
            assert!(job.spill().unwrap().runs() > 3, "few spills at {memory}");
        }
    }
}
