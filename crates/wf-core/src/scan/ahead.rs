//! The read-ahead helper of a worker in a region, and its gate.
//!
//! Each worker in a region has a helper thread that reads the region into the
//! page cache up to `--ahead` (64 MiB) beyond it, and the worker reads only what
//! the helper has read ([`ReadAhead`]): one stream of 4 MiB requests per region
//! that never waits for the parser. Cold, 1 GiB, 15 interleaved runs (2026-11-24):
//! `wf wf2` 0.88x the time of `wc -l` with helpers, 1.08x without; `wf count`
//! 0.83x. Warm, no difference (0.303 s against 0.301 s).
//!
//! The helper is also the one that knows where the disk begins to give the
//! pages (it asks `mincore` before reading, until a step misses), so under
//! `--page-cache drop` (and `auto` for a file over a quarter of the memory) it
//! drops what it reads from that step on once the worker has passed it; a
//! region found in the cache is left there. (Past the first miss it no longer
//! asks, see [`Helper::step`], so a page cached further on is dropped too.)
//! The 10 GiB `wf report` cold: 19.5 s against 24.1 s, 4.6 s of system time
//! against 13.2 s (see [`PageCache`](super::options::PageCache)).

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use super::regions::Regions;

/// A helper thread that reads a worker's region into the page cache ahead of the
/// worker, and the gate through which the worker waits for it: while a helper
/// runs, it is the only reader that goes to the disk for that region.
///
/// Why: cold, the kernel's own readahead behind a worker's `pread`s starts the next
/// window only when the worker reaches the current one; a worker that spends its
/// time parsing (`wf wf2`) gets there late, and the disk waits with it. Sampling
/// `/proc/diskstats` every 5 ms during cold 1 GiB runs (2026-11-24, 5 runs each):
/// `wf wf2` without helpers left the disk idle in 20% of samples (`wc -l`: 11%,
/// `wf count`: 7%). A helper that read ahead while the worker also read for itself
/// kept the disk busy (6% idle) but halved the requests (4 MiB to 1.9 MiB; 1.5 MiB
/// for `wf count`, which was then slower than without helpers, 1.12x `wc -l`
/// against 0.92x): two readahead streams met at the front of the same region.
/// Hence the gate: the worker asks for each piece through [`ReadAhead::reach`] and
/// reads it once the helper has it, so each region is one stream of large requests
/// that never waits for the parser.
///
/// The helper reads with `sendfile` to `/dev/null`: the pages pass through the
/// ordinary read path, whose readahead issues large requests (4 MiB here, like
/// `cat`), and nothing is copied to user space. Hints (`POSIX_FADV_WILLNEED`,
/// `readahead(2)`) were tried in its place and issued three times as many, smaller
/// requests, and the run was slower (0.72-0.91 s against 0.51 s). Ranges the page
/// cache already holds (`mincore`) are skipped, so a warm run pays almost nothing.
///
/// The gate never decides what is read, only when: the worker still reads every
/// byte itself, so a helper that is slow, fails or guesses wrong costs time, never
/// a wrong result. Positions carry an epoch (the top 16 bits) that the worker moves
/// on at each jump to a new region, so progress made in the old one never opens
/// the gate in the new one.
pub(super) struct ReadAhead<'scope> {
    link: &'scope AheadLink,
    thread: std::thread::ScopedJoinHandle<'scope, ()>,
    /// The worker's current epoch and the last position it published.
    epoch: std::cell::Cell<u64>,
    asked: std::cell::Cell<u64>,
    /// How far the worker may move before it tells the helper again.
    every: u64,
}

/// What a worker and its helper share.
#[derive(Debug)]
pub(super) struct AheadLink {
    /// Worker -> helper: epoch << 48 | where the worker's current region starts
    /// (set before `asked` at each jump).
    start: AtomicU64,
    /// Worker -> helper: epoch << 48 | the offset the worker needs read up to
    /// (exclusive); [`AHEAD_STOP`] when the worker is done.
    asked: AtomicU64,
    /// Helper -> worker: epoch << 48 | the offset up to which the region is read.
    ready: AtomicU64,
    /// The helper has ended (done, failed or stopped): the gate stays open.
    gone: std::sync::atomic::AtomicBool,
    /// The worker's thread, to wake it when `ready` moves.
    worker: std::thread::Thread,
}

/// [`AheadLink::asked`] once the worker is done.
const AHEAD_STOP: u64 = u64::MAX;

/// Bits of an [`AheadLink`] position that hold the offset (256 TiB).
const AHEAD_OFFSET_BITS: u32 = 48;
const AHEAD_OFFSET_MASK: u64 = (1 << AHEAD_OFFSET_BITS) - 1;

/// Bytes per `sendfile` of a [`ReadAhead`] helper.
const AHEAD_STEP: u64 = 1 << 20;

impl AheadLink {
    pub(super) fn new() -> Self {
        AheadLink {
            start: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            ready: AtomicU64::new(0),
            gone: false.into(),
            worker: std::thread::current(),
        }
    }
}

impl<'scope> ReadAhead<'scope> {
    /// Start a helper for the worker on this thread; `None` where it is off
    /// (`ahead` 0), the file is larger than a position can hold, or it cannot
    /// run here.
    pub(super) fn start<'env>(
        s: &'scope std::thread::Scope<'scope, 'env>,
        r: &Regions,
        link: &'scope AheadLink,
        ahead: u64,
        drop_read: bool,
    ) -> Option<Self> {
        if ahead == 0 || r.size > AHEAD_OFFSET_MASK || !cfg!(target_os = "linux") {
            return None;
        }
        // A description of its own: the helper's sequential reads get their own
        // readahead state.
        let file = r.own_file();
        let null = File::options().write(true).open("/dev/null").ok()?;
        // Mapped only to ask `mincore` what is cached: never read through, so a
        // file truncated meanwhile cannot fault here.
        // SAFETY: see above; the map is dropped before the file.
        let map = unsafe { memmap2::Mmap::map(&*file) }.ok();
        let size = r.size;
        // A helper that cannot be started (too many threads) is no helper.
        let thread = std::thread::Builder::new()
            .spawn_scoped(s, move || {
                read_ahead(&file, &null, map.as_deref(), size, link, (ahead, drop_read));
                link.gone.store(true, Ordering::Release);
                link.worker.unpark();
            })
            .ok()?;
        Some(ReadAhead {
            link,
            thread,
            epoch: 0.into(),
            asked: 0.into(),
            every: (ahead / 4).max(1),
        })
    }

    /// The worker starts reading a new region at `offset` (the byte before it
    /// included, where the worker looks for its first record).
    pub(super) fn jump(&self, offset: u64) {
        let epoch = (self.epoch.get() + 1) & (u64::MAX >> AHEAD_OFFSET_BITS);
        self.epoch.set(epoch);
        let at = epoch << AHEAD_OFFSET_BITS | offset.saturating_sub(1);
        self.link.start.store(at, Ordering::Release);
        self.publish(at);
    }

    /// Wait until the helper has read `[.., end)` (or has ended). The helper is
    /// told where the worker is only every quarter of `ahead` and when the worker
    /// has to wait: told at every 32 KiB piece, the helper was woken so often
    /// that a warm 1 GiB `wf wf2` spent 0.44 s in the kernel against 0.17 s.
    pub(super) fn reach(&self, end: u64) {
        let want = self.epoch.get() << AHEAD_OFFSET_BITS | end.min(AHEAD_OFFSET_MASK);
        let open = || {
            self.link.ready.load(Ordering::Acquire) >= want
                || self.link.gone.load(Ordering::Acquire)
        };
        let asked = self.asked.get();
        if want >= asked.saturating_add(self.every) || (want > asked && !open()) {
            self.publish(want);
        }
        let mut spun = 0;
        while !open() {
            if spun < 64 {
                spun += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park_timeout(std::time::Duration::from_millis(5));
            }
        }
    }

    fn publish(&self, at: u64) {
        self.asked.set(at);
        self.link.asked.store(at, Ordering::Release);
        self.thread.thread().unpark();
    }
}

/// Dropped (the worker is done, or its job panicked): the helper stops, and the
/// scope it runs in can end.
impl Drop for ReadAhead<'_> {
    fn drop(&mut self) {
        self.link.asked.store(AHEAD_STOP, Ordering::Release);
        self.thread.thread().unpark();
    }
}

/// The helper's loop: keep the worker's epoch read from where it jumped to
/// `ahead` bytes past what it last asked for, `AHEAD_STEP` at a time, and publish
/// each step in `link.ready`. Any failure only ends the helper (the worker's own
/// reads report errors); the caller then opens the gate for good.
#[cfg(target_os = "linux")]
fn read_ahead(
    file: &File,
    null: &File,
    map: Option<&[u8]>,
    size: u64,
    link: &AheadLink,
    (ahead, drop_read): (u64, bool),
) {
    let mut h = Helper {
        epoch: u64::MAX,
        done: 0,
        cold: false,
        drop_read,
        cold_from: 0,
        behind: 0,
    };
    loop {
        let asked = link.asked.load(Ordering::Acquire);
        if asked == AHEAD_STOP {
            h.drop_behind(file, None);
            return;
        }
        h.follow(file, link);
        // What the worker needs in this epoch (nothing yet, if it has not asked).
        let at = if asked >> AHEAD_OFFSET_BITS == h.epoch {
            let at = asked & AHEAD_OFFSET_MASK;
            h.drop_behind(file, Some(at));
            at
        } else {
            h.done
        };
        let target = at.saturating_add(ahead).min(size);
        if h.done >= target {
            std::thread::park_timeout(std::time::Duration::from_millis(10));
            continue;
        }
        let n = (target - h.done).min(AHEAD_STEP);
        if !h.step(file, null, map, n) {
            return;
        }
        // Tagged with the helper's epoch: if the worker has jumped meanwhile, its
        // gate waits for the next epoch's progress instead.
        let pos = h.epoch << AHEAD_OFFSET_BITS | h.done.min(size);
        link.ready.store(pos, Ordering::Release);
        link.worker.unpark();
    }
}

/// Where a helper is: read up to `done` in the region of `epoch`; `cold`: a step
/// of this region was not in the page cache, so `mincore` is no longer asked.
/// With `drop_read` ([`PageCache`](super::options::PageCache)), the pages from `cold_from`
/// (where the disk began to give them) up to where the worker has gone, less a
/// margin, leave the cache; `behind`: where the worker last asked in this epoch.
#[cfg(target_os = "linux")]
struct Helper {
    epoch: u64,
    done: u64,
    cold: bool,
    drop_read: bool,
    cold_from: u64,
    behind: u64,
}

#[cfg(target_os = "linux")]
impl Helper {
    /// Follow the worker to a new region, if it jumped.
    fn follow(&mut self, file: &File, link: &AheadLink) {
        // Loaded after `asked`, and stored before it: an epoch at least as new.
        let start = link.start.load(Ordering::Acquire);
        if start >> AHEAD_OFFSET_BITS == self.epoch {
            return;
        }
        self.drop_behind(file, None);
        // A new region: start at the page the worker starts in (not at what
        // it has asked for since: that skipped the region's first steps).
        self.epoch = start >> AHEAD_OFFSET_BITS;
        self.done = start & AHEAD_OFFSET_MASK & !4095;
        self.cold = false;
        self.behind = self.done;
        link.ready.store(
            self.epoch << AHEAD_OFFSET_BITS | self.done,
            Ordering::Release,
        );
    }

    /// Read the next `n` bytes into the page cache (unless they are there
    /// already). False if reading failed or the file ended.
    fn step(&mut self, file: &File, null: &File, map: Option<&[u8]>, n: u64) -> bool {
        // Pages under readahead are resident before they are read, so asking
        // `mincore` on a cold stream would skip the steps in flight, and with
        // them the pages that start the kernel's next readahead window: the
        // stream broke into 1 MiB requests (against 4 MiB), so once a step
        // misses, the rest of the region is read without asking.
        if !self.cold && !map.is_some_and(|m| cached(m, self.done, n)) {
            self.cold = true;
            self.cold_from = self.done.next_multiple_of(DROP_ALIGN);
        }
        if !self.cold {
            self.done += n;
            return true;
        }
        let mut off = self.done as libc::off_t;
        // SAFETY: plain descriptors; `off` is a valid offset variable.
        let got =
            unsafe { libc::sendfile(null.as_raw_fd(), file.as_raw_fd(), &mut off, n as usize) };
        if got <= 0 {
            return false;
        }
        self.done += got as u64;
        true
    }

    /// The worker asked for bytes up to `at` (`None`: it is done with this
    /// region): drop what the disk gave before it, less [`DROP_MARGIN`] while
    /// the worker may still be reading just behind `at`, and no further than
    /// this helper has read (a worker that waits asks ahead of it: pages not
    /// yet read cannot be dropped, and would stay once read). Clean pages
    /// only: a dropped page read again comes from the disk, never wrong.
    fn drop_behind(&mut self, file: &File, at: Option<u64>) {
        if !(self.drop_read && self.cold) {
            return;
        }
        let to = match at {
            Some(at) => {
                self.behind = self.behind.max(at);
                self.behind.saturating_sub(DROP_MARGIN)
            }
            None => self.behind,
        }
        .min(self.done)
            & !(DROP_ALIGN - 1);
        if to > self.cold_from {
            let n = to - self.cold_from;
            super::fadvise(file, self.cold_from, n, libc::POSIX_FADV_DONTNEED);
            self.cold_from = to;
        }
    }
}

/// The bounds of what is dropped: the largest folio of the page cache (2 MiB
/// on x86-64). `POSIX_FADV_DONTNEED` drops only folios wholly in its range,
/// and readahead fills the cache with large folios: dropped between unaligned
/// bounds, 59% of a 24 MiB file stayed cached (`engine.rs`'s test).
#[cfg(target_os = "linux")]
const DROP_ALIGN: u64 = 2 << 20;

/// Bytes left cached behind where a worker asked last: it asks for the end of
/// the 32 KiB piece it reads next, and reads every piece once.
#[cfg(target_os = "linux")]
const DROP_MARGIN: u64 = 1 << 20;

#[cfg(not(target_os = "linux"))]
fn read_ahead(_: &File, _: &File, _: Option<&[u8]>, _: u64, _: &AheadLink, _: (u64, bool)) {}

/// Is `map[off..off + n]` in the page cache? Asks `mincore` about its first,
/// middle and last pages only: readahead fills a range front to back, and asking
/// about all 256 pages of a step cost about 50 us a call (65 ms over a warm GiB).
/// A wrong guess costs a `sendfile` too many or too few, never a wrong result.
#[cfg(target_os = "linux")]
fn cached(map: &[u8], off: u64, n: u64) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let end = (off + n).min(map.len() as u64);
    if end <= off {
        return true;
    }
    [off, off + (end - off) / 2, end - 1].iter().all(|&at| {
        let at = at / page * page;
        let mut resident = 0u8;
        // SAFETY: `at` is page-aligned and inside the mapping; one page, one byte.
        let r = unsafe {
            libc::mincore(
                map.as_ptr().add(at as usize) as *mut libc::c_void,
                1,
                &mut resident,
            )
        };
        r == 0 && resident & 1 != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{fadvise, read_full_at};
    use std::sync::Arc;

    /// A file in the page cache's sight: the file, its map (for `mincore`)
    /// and the directory that holds it.
    struct Evicted {
        _dir: tempfile::TempDir,
        file: Arc<File>,
        map: memmap2::Mmap,
    }

    impl Evicted {
        /// A file of `size` bytes on a file system whose cache can be emptied
        /// (`POSIX_FADV_DONTNEED`), emptied; `None` on others (tmpfs), saying so.
        fn new(size: u64) -> Option<Evicted> {
            let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
                .or_else(|_| tempfile::tempdir())
                .unwrap();
            let path = dir.path().join("f");
            std::fs::write(&path, vec![b'x'; size as usize]).unwrap();
            let file = Arc::new(File::open(&path).unwrap());
            file.sync_all().unwrap();
            fadvise(&file, 0, 0, libc::POSIX_FADV_DONTNEED);
            // SAFETY: read-only map of a file nobody truncates.
            let map = unsafe { memmap2::Mmap::map(&*file) }.unwrap();
            let e = Evicted {
                _dir: dir,
                file,
                map,
            };
            if e.in_cache(0, size) {
                eprintln!("skipped: the page cache cannot be emptied here");
                return None;
            }
            Some(e)
        }

        /// Is every page of `[a, b)` cached?
        fn in_cache(&self, a: u64, b: u64) -> bool {
            (a..b).step_by(4096).all(|p| cached(&self.map, p, 1))
        }
    }

    /// The read-ahead gate opens only on bytes the helper has read into the page
    /// cache, in the region the worker is in now, and never holds a worker whose
    /// helper has ended.
    #[cfg(target_os = "linux")]
    #[test]
    fn read_ahead_gate_opens_only_on_what_the_helper_has_read() {
        // Large enough that the kernel's own readahead behind the helper's reads
        // cannot reach where the worker jumps next.
        let size = 64u64 << 20;
        let Some(e) = Evicted::new(size) else {
            return;
        };
        let (file, in_cache) = (e.file.clone(), |a, b| e.in_cache(a, b));
        let regions = Regions::new(0, file.clone(), size, 8 << 20, 1);
        let link = AheadLink::new();
        std::thread::scope(|s| {
            let a = ReadAhead::start(s, &regions, &link, 3 << 20, false).expect("a helper");
            // Each time the gate opens, what the worker asked for is in the cache.
            a.jump(0);
            a.reach(1 << 20);
            assert!(in_cache(0, 1 << 20));
            assert!(!in_cache(24 << 20, 25 << 20), "read far past the worker");
            assert!(!in_cache(40 << 20, size), "read far past the worker");
            a.jump(40 << 20);
            a.reach(42 << 20);
            assert!(in_cache((40 << 20) - 1, 42 << 20));
            // A jump back: the progress made further on must not open the gate.
            a.jump(24 << 20);
            a.reach(25 << 20);
            assert!(in_cache((24 << 20) - 1, 25 << 20));
            assert!(!link.gone.load(Ordering::Acquire));
            drop(a);
        });
        assert!(link.gone.load(Ordering::Acquire));
        // A file shorter than planned (it shrank): the helper ends at its end,
        // and the gate opens instead of holding the worker.
        let short = Regions::new(0, file.clone(), size + (8 << 20), 8 << 20, 1);
        let link = AheadLink::new();
        std::thread::scope(|s| {
            let a = ReadAhead::start(s, &short, &link, 64 << 20, false).expect("a helper");
            a.jump(60 << 20);
            a.reach(size + (8 << 20));
            assert!(link.gone.load(Ordering::Acquire));
            drop(a);
        });
    }

    /// With `drop`, the pages the helper read from the disk leave the cache
    /// once the worker has passed them (all up to where it last asked, once it
    /// is done); without, they stay. Pages cached before the first miss stay too.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_dropping_helper_leaves_the_cache_as_it_found_it_behind_the_worker() {
        let size = 48u64 << 20;
        for drop_read in [false, true] {
            let Some(e) = Evicted::new(size) else {
                return;
            };
            let (file, in_cache) = (e.file.clone(), |a, b| e.in_cache(a, b));
            // The first 2 MiB were cached before the run (and no more: without
            // the kernel's readahead, which once cached some of the next MiB).
            fadvise(&file, 0, 0, libc::POSIX_FADV_RANDOM);
            read_full_at(&file, &mut vec![0; 2 << 20], 0).unwrap();
            assert!(!in_cache(2 << 20, 3 << 20), "read ahead");
            let regions = Regions::new(0, file.clone(), size, 8 << 20, 1);
            let link = AheadLink::new();
            std::thread::scope(|s| {
                let a = ReadAhead::start(s, &regions, &link, 3 << 20, drop_read).unwrap();
                a.jump(0);
                a.reach(8 << 20);
                a.reach(32 << 20);
                drop(a);
            });
            assert!(in_cache(0, 2 << 20), "pages cached before were dropped");
            let page = |at: u64| in_cache(at, at + 1);
            let read = (3..32).map(|m| m << 20).filter(|&at| page(at)).count();
            assert_eq!(read, if drop_read { 0 } else { 29 }, "drop: {drop_read}");
        }
    }
}
