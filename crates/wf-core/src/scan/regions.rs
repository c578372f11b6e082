//! Per-worker regions of a big file, and stealing at the end.
//!
//! A file of more than one chunk is shared out as one region per worker, read
//! front to back through a file description of the worker's own, with stealing
//! of half a region at the end ([`Regions`]): cold, on 1 GiB with two workers,
//! the time they spent waiting in `pread` fell from 166-226 ms to 58-132 ms per
//! run (8 interleaved runs each, those with the disk in its fast mode).

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::{Arc, Mutex};

/// A file of more than one chunk, shared out as one region per worker: each
/// worker reads its region's chunks front to back through a file description of
/// its own, so that the kernel's readahead sees one sequential stream per worker;
/// a worker whose region is done takes regions nobody took, then the back half of
/// the region with the most left, and so on. Chunks lie on the same grid as without
/// regions (multiples of the chunk size), so the records each one owns are the
/// same.
///
/// Why: with chunks handed out in file order, the workers took turns through one
/// file description, and its single readahead state never saw a sequential
/// stream: cold, a worker waited in `pread` at almost every chunk start (1 GiB,
/// `wf wf2`, two workers: 166-226 ms of waiting per run; with regions 58-132 ms).
/// A description per worker with chunks still in file order was worse, and so was
/// one per chunk: each new position starts the kernel's readahead from nothing.
pub(super) struct Regions {
    pub(super) input: usize,
    pub(super) file: Arc<File>,
    pub(super) size: u64,
    chunk: u64,
    left: Mutex<RegionsLeft>,
}

struct RegionsLeft {
    /// `[front, back)` of each region not yet taken.
    ranges: Vec<(u64, u64)>,
    /// Regions not yet claimed by a worker, lowest first.
    unclaimed: std::ops::Range<usize>,
}

impl Regions {
    pub(super) fn new(
        input: usize,
        file: Arc<File>,
        size: u64,
        chunk: u64,
        workers: usize,
    ) -> Self {
        let chunks = size.div_ceil(chunk);
        let n = (workers as u64).min(chunks);
        let edge = |r: u64| (chunks * r / n * chunk).min(size);
        let ranges: Vec<(u64, u64)> = (0..n).map(|r| (edge(r), edge(r + 1))).collect();
        Regions {
            input,
            file,
            size,
            chunk,
            left: Mutex::new(RegionsLeft {
                unclaimed: 0..ranges.len(),
                ranges,
            }),
        }
    }

    /// A file description of the caller's own for the same file (its own
    /// readahead state), or the shared one where it cannot be had.
    pub(super) fn own_file(&self) -> Arc<File> {
        #[cfg(target_os = "linux")]
        if let Ok(f) = File::open(format!("/proc/self/fd/{}", self.file.as_raw_fd())) {
            return Arc::new(f);
        }
        self.file.clone()
    }

    /// The next chunk for a worker whose region is `*region` (`None` before it
    /// has one): the front chunk of its region, else of a region nobody claimed
    /// (which becomes its region), else the first chunk of the back half of the
    /// region with the most left (that half becomes its region). `None` when the
    /// whole file is taken.
    pub(super) fn take(&self, region: &mut Option<usize>) -> Option<(u64, u64)> {
        let mut l = self.left.lock().unwrap();
        loop {
            if let Some(r) = *region {
                let (a, b) = l.ranges[r];
                if a < b {
                    let e = (a + self.chunk).min(b);
                    l.ranges[r].0 = e;
                    return Some((a, e));
                }
            }
            if let Some(r) = l.unclaimed.next() {
                *region = Some(r);
                continue;
            }
            // The back half of the region with the most left, in whole chunks (its
            // one chunk, when only one is left), becomes the caller's region, read
            // front to back: one more sequential stream, not one per chunk.
            let r = (0..l.ranges.len()).max_by_key(|&r| l.ranges[r].1 - l.ranges[r].0)?;
            let (a, b) = l.ranges[r];
            if a >= b {
                return None;
            }
            let n = (b - a).div_ceil(self.chunk);
            let s = if n == 1 {
                a
            } else {
                a + n.div_ceil(2) * self.chunk
            };
            l.ranges[r].1 = s;
            l.ranges.push((s, b));
            *region = Some(l.ranges.len() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk of the grid is taken exactly once, whatever the order in which
    /// workers join and take: own regions front to back, then unclaimed regions,
    /// then the backs of the others.
    #[test]
    fn regions_take_every_chunk_once() {
        let file = Arc::new(File::open("/dev/null").unwrap());
        for (size, chunk, workers) in [
            (100, 10, 2),
            (101, 10, 2),
            (11, 10, 4),
            (95, 7, 3),
            (1000, 1, 5),
            (64, 64, 2),
            (65, 64, 8),
        ] {
            for order in 0..4u64 {
                let r = Regions::new(0, file.clone(), size, chunk, workers);
                let mut regions = vec![None; workers];
                let mut taken = Vec::new();
                let mut live: Vec<usize> = (0..workers).collect();
                let mut step = order;
                while !live.is_empty() {
                    // A deterministic interleaving that differs with `order`.
                    step = step
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let k = (step >> 33) as usize % live.len();
                    let w = live[k];
                    match r.take(&mut regions[w]) {
                        Some(c) => taken.push(c),
                        None => {
                            live.remove(k);
                        }
                    }
                }
                taken.sort();
                let want: Vec<(u64, u64)> = (0..size.div_ceil(chunk))
                    .map(|c| (c * chunk, ((c + 1) * chunk).min(size)))
                    .collect();
                assert_eq!(taken, want, "size {size} chunk {chunk} workers {workers}");
            }
        }
    }

    /// A worker reads its own region front to back, and only then takes the
    /// back half of another's, which it also reads front to back.
    #[test]
    fn regions_stream_then_steal_back_halves() {
        let file = Arc::new(File::open("/dev/null").unwrap());
        let r = Regions::new(0, file, 100, 10, 2);
        let (mut a, mut b) = (None, None);
        assert_eq!(r.take(&mut a), Some((0, 10)));
        assert_eq!(r.take(&mut b), Some((50, 60)));
        for c in 1..5 {
            assert_eq!(r.take(&mut a), Some((c * 10, c * 10 + 10)));
        }
        // Region 0 is done; b's has 60..100 left: a takes 80..100, front first.
        assert_eq!(r.take(&mut a), Some((80, 90)));
        assert_eq!(r.take(&mut b), Some((60, 70)));
        assert_eq!(r.take(&mut a), Some((90, 100)));
        // Only 70..80 is left, one chunk: a takes it whole.
        assert_eq!(r.take(&mut a), Some((70, 80)));
        assert_eq!(r.take(&mut b), None);
        assert_eq!(r.take(&mut a), None);
        // A worker that joins late, with nothing left, gets nothing.
        assert_eq!(r.take(&mut None), None);
    }
}
