//! Device figures as `iostat -x` shows them, from `/proc/diskstats`.
//!
//! The device holding the inputs is found from the files' `st_dev`:
//! `/sys/dev/block/MAJ:MIN` names it (a partition is walked up to its whole disk,
//! as the brief for `wf bench` asks), with `/proc/diskstats` and
//! `/proc/self/mountinfo` as fall-backs when `/sys` is missing. Inside a container
//! (overlay root, no block devices visible) none of this may work: the figures are
//! then `None` and the table says "n/a".
//!
//! The counters are device-wide: other processes' I/O during a run is included.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One `/proc/diskstats` line (the fields `wf bench` uses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub device: String,
    /// Reads completed.
    pub reads: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent on reads (summed over requests).
    pub read_ms: u64,
    /// Milliseconds the device had at least one request in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds: requests in flight times time (queue-depth integral).
    pub queue_ms: u64,
}

/// What the device did between two snapshots, computed as `iostat -x` does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskDelta {
    pub device: String,
    /// Bytes read from the device (sectors x 512).
    pub read_bytes: u64,
    /// Read requests completed.
    pub reads: u64,
    /// Read throughput in MB/s (10^6 bytes; `iostat -x -m` uses MiB).
    pub read_mb_s: f64,
    /// Average queue depth (`aqu-sz`): weighted I/O time delta / elapsed time.
    pub avg_queue: f64,
    /// Utilisation (`%util`): I/O ticks delta / elapsed time x 100. On devices
    /// serving requests in parallel (SSDs, virtio) 100% does not mean saturated.
    pub util_pct: f64,
    /// Average read latency (`r_await`) in milliseconds; 0 without reads.
    pub r_await_ms: f64,
}

/// Parse the line for `device` out of a `/proc/diskstats` text.
pub fn parse_diskstats(text: &str, device: &str) -> Option<DiskStat> {
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 || f[2] != device {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().ok();
        return Some(DiskStat {
            device: device.to_string(),
            reads: n(3)?,
            sectors_read: n(5)?,
            read_ms: n(6)?,
            io_ticks_ms: n(12)?,
            queue_ms: n(13)?,
        });
    }
    None
}

/// The current counters of `device` (a name as in `/proc/diskstats`, e.g. `vda`).
pub fn disk_snapshot(device: &str) -> Option<DiskStat> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    parse_diskstats(&text, device)
}

/// The device's activity between snapshots `a` and `b`, `secs` apart.
pub fn disk_delta(a: &DiskStat, b: &DiskStat, secs: f64) -> DiskDelta {
    let read_bytes = b.sectors_read.saturating_sub(a.sectors_read) * 512;
    let reads = b.reads.saturating_sub(a.reads);
    let ms = secs * 1000.0;
    let per_ms = |d: u64| if ms > 0.0 { d as f64 / ms } else { 0.0 };
    DiskDelta {
        device: b.device.clone(),
        read_bytes,
        reads,
        read_mb_s: if secs > 0.0 {
            read_bytes as f64 / 1e6 / secs
        } else {
            0.0
        },
        avg_queue: per_ms(b.queue_ms.saturating_sub(a.queue_ms)),
        util_pct: (per_ms(b.io_ticks_ms.saturating_sub(a.io_ticks_ms)) * 100.0).min(100.0),
        r_await_ms: if reads > 0 {
            b.read_ms.saturating_sub(a.read_ms) as f64 / reads as f64
        } else {
            0.0
        },
    }
}

/// The `/proc/diskstats` name of the device holding most of the bytes of
/// `files`, or `None` where it cannot be found (e.g. in a container).
pub fn device_of(files: &[PathBuf]) -> Option<String> {
    let mut by_dev: HashMap<u64, u64> = HashMap::new();
    for p in files {
        if let Ok(m) = std::fs::metadata(p) {
            *by_dev.entry(m.dev()).or_default() += m.len().max(1);
        }
    }
    let dev = by_dev.into_iter().max_by_key(|&(d, n)| (n, d))?.0;
    device_name(dev)
}

/// The `/proc/diskstats` name of the whole disk holding device number `dev`.
pub fn device_name(dev: u64) -> Option<String> {
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let stats = std::fs::read_to_string("/proc/diskstats").ok()?;
    let listed = |name: &str| parse_diskstats(&stats, name).is_some();

    // 1. sysfs.
    if let Ok(p) = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")) {
        if let Some(name) = whole_disk(&p) {
            if listed(&name) {
                return Some(name);
            }
        }
    }
    // 2. /proc/diskstats lists major and minor numbers.
    for line in stats.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 3 && f[0] == maj.to_string() && f[1] == min.to_string() {
            return Some(parent_in_diskstats(f[2], &stats));
        }
    }
    // 3. The mount's source device (`/dev/...`) in /proc/self/mountinfo.
    let mi = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = format!("{maj}:{min}");
    for line in mi.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 || f[2] != want {
            continue;
        }
        let dash = f.iter().position(|&x| x == "-")?;
        let src = f.get(dash + 2)?;
        if !src.starts_with("/dev/") {
            continue;
        }
        let real = std::fs::canonicalize(src).unwrap_or_else(|_| PathBuf::from(src));
        let base = real.file_name()?.to_str()?.to_string();
        let sys = Path::new("/sys/class/block").join(&base);
        let name = std::fs::canonicalize(sys)
            .ok()
            .and_then(|p| whole_disk(&p))
            .unwrap_or_else(|| parent_in_diskstats(&base, &stats));
        if listed(&name) {
            return Some(name);
        }
    }
    None
}

/// The name of a sysfs block device directory, or of its parent for a partition.
fn whole_disk(sys: &Path) -> Option<String> {
    let dir = if sys.join("partition").exists() {
        sys.parent()?
    } else {
        sys
    };
    Some(dir.file_name()?.to_str()?.to_string())
}

/// Without sysfs: `sda1` -> `sda`, `nvme0n1p2` -> `nvme0n1` when the shorter name
/// is listed too; otherwise the name itself.
fn parent_in_diskstats(name: &str, stats: &str) -> String {
    let t = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if t.len() < name.len() && !t.is_empty() {
        for cand in [t, t.strip_suffix('p').unwrap_or(t)] {
            if cand != name && !cand.is_empty() && parse_diskstats(stats, cand).is_some() {
                // `vda` itself ends in a letter; `loop0` -> `loop` is not listed.
                return cand.to_string();
            }
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
 254       0 vda 85777 9203 9636810 105735 9081 16191 3718736 10280 0 13200 117069 4656 56 299536 760 467 292
 254       1 vda1 85000 9203 9600000 105000 9081 16191 3718736 10280 0 13000 116000
   8       0 sda 10 0 80 5 0 0 0 0 0 4 5
";

    #[test]
    fn parses_and_computes_like_iostat() {
        let a = parse_diskstats(SAMPLE, "vda").unwrap();
        assert_eq!(a.reads, 85777);
        assert_eq!(a.sectors_read, 9636810);
        assert_eq!(a.read_ms, 105735);
        assert_eq!(a.io_ticks_ms, 13200);
        assert_eq!(a.queue_ms, 117069);
        let mut b = a.clone();
        b.reads += 100;
        b.sectors_read += 2_000_000; // 1.024 GB
        b.read_ms += 250;
        b.io_ticks_ms += 1500;
        b.queue_ms += 6000;
        let d = disk_delta(&a, &b, 2.0);
        assert_eq!(d.read_bytes, 1_024_000_000);
        assert!((d.read_mb_s - 512.0).abs() < 1e-9);
        assert!((d.avg_queue - 3.0).abs() < 1e-9);
        assert!((d.util_pct - 75.0).abs() < 1e-9);
        assert!((d.r_await_ms - 2.5).abs() < 1e-9);
        assert!(parse_diskstats(SAMPLE, "vdb").is_none());
    }

    #[test]
    fn partition_names_walk_up() {
        assert_eq!(parent_in_diskstats("vda1", SAMPLE), "vda");
        assert_eq!(parent_in_diskstats("sda", SAMPLE), "sda");
        assert_eq!(parent_in_diskstats("nvme0n1p2", SAMPLE), "nvme0n1p2");
    }
}
