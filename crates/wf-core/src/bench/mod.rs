//! `wf bench`: repeatable measurements of a job, cold and warm, over a sweep of
//! settings, with the figures one would otherwise collect with `iostat -x`,
//! `/usr/bin/time` and a notebook.
//!
//! The module is generic over the job: the caller passes a closure that runs the
//! job once in-process with a [`Setting`] and returns the bytes it processed.
//! [`run`] does everything around that call:
//! - for each setting (cache state x threads x reads in flight x read strategy),
//!   cold runs evict the inputs from the page cache before *every* run
//!   ([`cache::evict_with`]) and record how much was still resident; warm
//!   settings get one untimed warm-up run first;
//! - each run is measured around the call itself: wall time, user and system CPU,
//!   major faults and bytes read from storage (process-wide, `getrusage` and
//!   `/proc/self/io`), and the device's counters from `/proc/diskstats`;
//! - the runs of a setting are summarised (min/median/max wall, medians of the
//!   rest) into a [`SettingResult`], which [`table`], [`json`] and [`svg`] print
//!   (`output.rs`; the chart in `plot.rs`).

pub mod cache;
pub mod disk;
mod output;
mod plot;

use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::report::stats::{self, Usage};
use crate::scan::ScanOptions;

pub use cache::{evict, evict_with, memory_backed, resident_fraction, Eviction};
pub use disk::{device_of, disk_delta, disk_snapshot, DiskDelta, DiskStat};
pub use output::{json, table};
pub use plot::{svg, svg_titled};

/// A `wf bench` list argument refused, with the item as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("expected cold, warm or both, not {0:?}")]
    Cache(String),
    #[error("expected positive integers separated by commas, not {0:?}")]
    Count(String),
    #[error("expected pread or mmap, not {0:?}")]
    Read(String),
}

/// Page-cache state of the inputs at the start of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cache {
    /// Inputs evicted before every run.
    Cold,
    /// Inputs read once (untimed) before the runs.
    Warm,
}

impl Cache {
    pub fn name(self) -> &'static str {
        match self {
            Cache::Cold => "cold",
            Cache::Warm => "warm",
        }
    }

    /// `cold`, `warm` or `both` (cold first).
    pub fn parse_list(s: &str) -> Result<Vec<Cache>, ListError> {
        match s {
            "cold" => Ok(vec![Cache::Cold]),
            "warm" => Ok(vec![Cache::Warm]),
            "both" => Ok(vec![Cache::Cold, Cache::Warm]),
            _ => Err(ListError::Cache(s.to_string())),
        }
    }
}

impl std::fmt::Display for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parse a comma-separated list of positive integers, e.g. `1,2,4,8`.
pub fn parse_counts(s: &str) -> Result<Vec<usize>, ListError> {
    s.split(',')
        .map(|x| match x.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(ListError::Count(x.to_string())),
        })
        .collect()
}

/// The read strategies [`Setting::scan_options`] understands.
pub const READS: &[&str] = &["pread", "mmap"];

/// Parse a comma-separated list of read strategies, e.g. `pread,mmap`.
pub fn parse_reads(s: &str) -> Result<Vec<String>, ListError> {
    s.split(',')
        .map(|x| {
            let x = x.trim();
            if READS.contains(&x) {
                Ok(x.to_string())
            } else {
                Err(ListError::Read(x.to_string()))
            }
        })
        .collect()
}

/// The regular files among `inputs` (what [`run`] evicts and watches; streams
/// cannot be evicted or re-read and are left out).
pub fn input_files(inputs: &[crate::scan::Input]) -> Vec<PathBuf> {
    inputs
        .iter()
        .filter_map(|i| match &i.source {
            crate::scan::Source::File { path, .. }
            | crate::scan::Source::Compressed { path, .. } => Some(path.clone()),
            crate::scan::Source::Stream { .. } => None,
        })
        .collect()
}

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub cache: Cache,
    pub threads: usize,
    /// Reads in flight (`--io`); `None` for the job's default.
    pub io: Option<usize>,
    /// Read strategy (`pread` or `mmap`); `None` for the job's default.
    pub read: Option<String>,
}

impl Setting {
    /// `base` with this setting's threads, reads in flight and read strategy;
    /// a warm setting keeps in the page cache what its warm-up run reads
    /// (`--page-cache auto` would not keep a big file's pages).
    pub fn scan_options(&self, base: &ScanOptions) -> ScanOptions {
        let mut o = base.clone();
        o.threads = self.threads.max(1);
        if self.cache == Cache::Warm {
            o.page_cache = crate::scan::PageCache::Keep;
        }
        if let Some(io) = self.io {
            o.inflight = io;
        }
        match self.read.as_deref() {
            Some("mmap") => o.mmap = true,
            Some("pread") => o.mmap = false,
            _ => {}
        }
        o
    }

    /// A short label: `cold -j 4 --io 16 mmap`.
    pub fn label(&self) -> String {
        let mut s = format!("{} -j {}", self.cache, self.threads);
        if let Some(io) = self.io {
            s.push_str(&format!(" --io {io}"));
        }
        if let Some(r) = &self.read {
            s.push_str(&format!(" {r}"));
        }
        s
    }
}

/// What to sweep and how often.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Cache states, in order (empty: warm only).
    pub caches: Vec<Cache>,
    /// Thread counts (empty: the number of cores).
    pub threads: Vec<usize>,
    /// Reads in flight (empty: `[None]`).
    pub io: Vec<Option<usize>>,
    /// Read strategies (empty: `[None]`).
    pub reads: Vec<Option<String>>,
    /// Timed runs per setting (at least 1).
    pub runs: usize,
    /// Evict with `/proc/sys/vm/drop_caches` as well (root only; falls back to
    /// `posix_fadvise` alone otherwise, and the table says so).
    pub drop_caches: bool,
    /// Print one line per run to stderr as the bench goes.
    pub verbose: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            caches: vec![Cache::Cold, Cache::Warm],
            threads: Vec::new(),
            io: Vec::new(),
            reads: Vec::new(),
            runs: 3,
            drop_caches: false,
            verbose: false,
        }
    }
}

impl BenchOptions {
    /// Every setting, cache state outermost, then threads, io, read.
    pub fn settings(&self) -> Vec<Setting> {
        let caches = if self.caches.is_empty() {
            vec![Cache::Warm]
        } else {
            self.caches.clone()
        };
        let threads = if self.threads.is_empty() {
            vec![ScanOptions::default().threads]
        } else {
            self.threads.clone()
        };
        let io = if self.io.is_empty() {
            vec![None]
        } else {
            self.io.clone()
        };
        let reads = if self.reads.is_empty() {
            vec![None]
        } else {
            self.reads.clone()
        };
        let mut out = Vec::new();
        for &cache in &caches {
            for &t in &threads {
                for &i in &io {
                    for r in &reads {
                        out.push(Setting {
                            cache,
                            threads: t,
                            io: i,
                            read: r.clone(),
                        });
                    }
                }
            }
        }
        out
    }
}

/// One timed run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeasure {
    /// Wall seconds around the job call.
    pub wall: f64,
    /// Bytes the job processed (as returned by the closure).
    pub bytes: u64,
    /// CPU seconds of the whole process during the run.
    pub user: f64,
    pub system: f64,
    /// Bytes this process caused to be read from storage (`/proc/self/io`
    /// `read_bytes`), `None` where the kernel does not report it.
    pub storage_read: Option<u64>,
    pub major_faults: u64,
    /// The device's activity during the run (`None`: device not found).
    pub disk: Option<DiskDelta>,
    /// Fraction of the input bytes in the page cache just before the run
    /// (`mincore`); about 0 for cold runs, about 1 for warm runs that fit in RAM.
    pub resident_before: Option<f64>,
}

impl RunMeasure {
    /// Job throughput, 10^6 bytes per second.
    pub fn mb_s(&self) -> f64 {
        stats::mb_per_s(self.bytes, self.wall)
    }

    /// CPU seconds per wall second (2.0 = two cores busy).
    pub fn cpu_util(&self) -> f64 {
        stats::cpu_utilisation(self.user + self.system, self.wall)
    }
}

/// A setting, its runs and their summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingResult {
    pub setting: Setting,
    pub runs: Vec<RunMeasure>,
    /// How the inputs were evicted before cold runs (`None` for warm ones).
    pub eviction: Option<String>,
    /// The device whose counters were read, `None` when not found.
    pub device: Option<String>,
    /// Bytes processed per run (median).
    pub bytes: u64,
    pub wall_min: f64,
    pub wall_median: f64,
    pub wall_max: f64,
    /// Median bytes / median wall time, 10^6 B/s.
    pub mb_s: f64,
    /// Medians of user and system CPU seconds.
    pub user: f64,
    pub system: f64,
    /// (median user + median system CPU) / median wall time.
    pub cpu_util: f64,
    /// Median bytes read from storage by this process per run.
    pub storage_read: Option<u64>,
    /// Median major faults per run.
    pub major_faults: u64,
    /// Largest page-cache residency of the inputs seen before a run (0 to 1).
    pub resident_before: Option<f64>,
    /// Medians of the device figures.
    pub disk_read_bytes: Option<u64>,
    pub disk_read_mb_s: Option<f64>,
    pub disk_avg_queue: Option<f64>,
    pub disk_util_pct: Option<f64>,
}

fn median_f(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn median_u(mut v: Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

/// Median of `f` over the runs, or `None` if any run lacks it.
fn median_opt<T: Copy>(
    runs: &[RunMeasure],
    f: impl Fn(&RunMeasure) -> Option<T>,
    med: impl Fn(Vec<T>) -> T,
) -> Option<T> {
    let v: Option<Vec<T>> = runs.iter().map(f).collect();
    v.filter(|v| !v.is_empty()).map(med)
}

impl SettingResult {
    /// Summarise `runs` of `setting`.
    pub fn new(
        setting: Setting,
        runs: Vec<RunMeasure>,
        eviction: Option<String>,
        device: Option<String>,
    ) -> SettingResult {
        let walls: Vec<f64> = runs.iter().map(|r| r.wall).collect();
        SettingResult {
            bytes: median_u(runs.iter().map(|r| r.bytes).collect()),
            wall_min: if walls.is_empty() {
                0.0
            } else {
                walls.iter().cloned().fold(f64::INFINITY, f64::min)
            },
            wall_median: median_f(walls.clone()),
            wall_max: walls.iter().cloned().fold(0.0, f64::max),
            mb_s: ratio(
                median_u(runs.iter().map(|r| r.bytes).collect()) as f64 / 1e6,
                median_f(walls.clone()),
            ),
            user: median_f(runs.iter().map(|r| r.user).collect()),
            system: median_f(runs.iter().map(|r| r.system).collect()),
            cpu_util: ratio(
                median_f(runs.iter().map(|r| r.user).collect())
                    + median_f(runs.iter().map(|r| r.system).collect()),
                median_f(walls.clone()),
            ),
            storage_read: median_opt(&runs, |r| r.storage_read, median_u),
            major_faults: median_u(runs.iter().map(|r| r.major_faults).collect()),
            resident_before: runs
                .iter()
                .map(|r| r.resident_before)
                .collect::<Option<Vec<f64>>>()
                .filter(|v| !v.is_empty())
                .map(|v| v.into_iter().fold(0.0, f64::max)),
            disk_read_bytes: median_opt(&runs, |r| r.disk.as_ref().map(|d| d.read_bytes), median_u),
            disk_read_mb_s: median_opt(&runs, |r| r.disk.as_ref().map(|d| d.read_mb_s), median_f),
            disk_avg_queue: median_opt(&runs, |r| r.disk.as_ref().map(|d| d.avg_queue), median_f),
            disk_util_pct: median_opt(&runs, |r| r.disk.as_ref().map(|d| d.util_pct), median_f),
            setting,
            runs,
            eviction,
            device,
        }
    }
}

/// Measure one call of `run_once` (no cache handling).
pub fn measure(
    setting: &Setting,
    device: Option<&str>,
    resident_before: Option<f64>,
    run_once: &mut dyn FnMut(&Setting) -> io::Result<u64>,
) -> io::Result<RunMeasure> {
    let d0 = device.and_then(disk_snapshot);
    let u0 = Usage::now();
    let t0 = Instant::now();
    let bytes = run_once(setting)?;
    let wall = t0.elapsed().as_secs_f64();
    let u1 = Usage::now();
    let d1 = device.and_then(disk_snapshot);
    Ok(RunMeasure {
        wall,
        bytes,
        user: (u1.user - u0.user).max(0.0),
        system: (u1.system - u0.system).max(0.0),
        storage_read: match (u0.storage_read, u1.storage_read) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        major_faults: u1.major_faults.saturating_sub(u0.major_faults),
        disk: match (d0, d1) {
            (Some(a), Some(b)) => Some(disk_delta(&a, &b, wall)),
            _ => None,
        },
        resident_before,
    })
}

/// Run the sweep: for each setting, evict before every cold run (or warm up once
/// for a warm setting), call `run_once` `opts.runs` times, measuring around each
/// call, and summarise. `files` are the job's input files (for eviction,
/// residency and finding the device); streams cannot be evicted and are left out.
pub fn run(
    opts: &BenchOptions,
    files: &[PathBuf],
    run_once: &mut dyn FnMut(&Setting) -> io::Result<u64>,
) -> io::Result<Vec<SettingResult>> {
    let device = device_of(files);
    let runs = opts.runs.max(1);
    if opts.caches.contains(&Cache::Cold) {
        warn_about_cold(files);
    }
    let mut results = Vec::new();
    for setting in opts.settings() {
        let mut measures = Vec::with_capacity(runs);
        let mut eviction = None;
        if setting.cache == Cache::Warm {
            if opts.verbose {
                crate::warn!("wf bench: {}: warm-up run", setting.label());
            }
            run_once(&setting).map_err(|e| context(&setting, e))?;
        }
        for i in 0..runs {
            let resident = match setting.cache {
                Cache::Cold => {
                    let ev =
                        evict_with(files, opts.drop_caches).map_err(|e| context(&setting, e))?;
                    eviction = Some(ev.method);
                    ev.resident
                }
                Cache::Warm => resident_fraction(files).ok(),
            };
            let m = measure(&setting, device.as_deref(), resident, run_once)
                .map_err(|e| context(&setting, e))?;
            if opts.verbose {
                crate::warn!(
                    "wf bench: {}: run {}/{}: {:.3} s, {:.1} MB/s, {} cached before",
                    setting.label(),
                    i + 1,
                    runs,
                    m.wall,
                    m.mb_s(),
                    resident.map_or("n/a".to_string(), |r| format!("{:.1}%", r * 100.0)),
                );
            }
            measures.push(m);
        }
        results.push(SettingResult::new(
            setting,
            measures,
            eviction,
            device.clone(),
        ));
    }
    Ok(results)
}

/// Say on stderr when cold runs of `files` cannot be cold (a file system in
/// memory) or their residency cannot be seen (`mincore` on others' files).
fn warn_about_cold(files: &[PathBuf]) {
    if let Some(p) = files.iter().find(|p| memory_backed(p).is_some()) {
        crate::warn!(
            "wf bench: warning: {} is on {}, which keeps files in memory: its \"cold\" runs read it from memory",
            p.display(),
            memory_backed(p).unwrap_or("tmpfs")
        );
    }
    if !files.is_empty() && resident_fraction(files).is_err() {
        crate::warn!(
            "wf bench: note: cached% is n/a: mincore reports the page cache only for files this user owns or may write; \"storage MB\" shows whether cold runs read the disk"
        );
    }
}

fn context(s: &Setting, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {}", s.label(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warm setting keeps what its warm-up run reads; a cold one reads as
    /// the user asked (`--page-cache`).
    #[test]
    fn warm_settings_keep_the_page_cache() {
        let base = ScanOptions {
            page_cache: crate::scan::PageCache::Drop,
            ..ScanOptions::default()
        };
        let setting = |cache| Setting {
            cache,
            threads: 2,
            io: None,
            read: None,
        };
        let warm = setting(Cache::Warm).scan_options(&base);
        assert_eq!(
            (warm.page_cache, warm.threads),
            (crate::scan::PageCache::Keep, 2)
        );
        let cold = setting(Cache::Cold).scan_options(&base);
        assert_eq!(cold.page_cache, crate::scan::PageCache::Drop);
    }
}
