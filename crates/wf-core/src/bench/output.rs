//! Printing bench results: an aligned table and a JSON document (the SVG plot is
//! in `plot.rs`).

use serde_json::{json, Map, Value};

use super::{RunMeasure, SettingResult};

fn opt_f(v: Option<f64>, prec: usize) -> String {
    v.map_or("n/a".to_string(), |x| format!("{x:.prec$}"))
}

/// An aligned text table, one row per setting, with notes on where each figure
/// comes from. Columns: `cache`, `-j`, `io` and `read` (only when swept),
/// `runs`, `wall min`/`wall med`/`wall max` (s), `MB/s` (median), `user s`,
/// `sys s`, `cpu%` (CPU time / wall time), `cached%` (inputs resident before a
/// run, the largest over the runs), `storage MB` (read from storage by this
/// process), `majflt`, and the device's `disk rMB/s`, `aqu-sz`, `%util`
/// (`n/a` where the device is unknown).
pub fn table(results: &[SettingResult]) -> String {
    let show_io = results.iter().any(|r| r.setting.io.is_some());
    let show_read = results.iter().any(|r| r.setting.read.is_some());
    let head = table_head(show_io, show_read);
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    rows.extend(results.iter().map(|r| table_row(r, show_io, show_read)));
    // Text columns (the cache state and the read strategy) to the left.
    let left: Vec<bool> = head
        .iter()
        .enumerate()
        .map(|(c, h)| c == 0 || *h == "read")
        .collect();
    let mut out = align(&rows, &left);
    out.push('\n');
    out.push_str(&table_notes(results));
    out
}

fn table_head(show_io: bool, show_read: bool) -> Vec<&'static str> {
    let mut head = vec!["cache", "-j"];
    if show_io {
        head.push("io");
    }
    if show_read {
        head.push("read");
    }
    head.extend([
        "runs",
        "wall min",
        "wall med",
        "wall max",
        "MB/s",
        "user s",
        "sys s",
        "cpu%",
        "cached%",
        "storage MB",
        "majflt",
        "disk rMB/s",
        "aqu-sz",
        "%util",
    ]);
    head
}

/// One setting's cells, in the order of [`table_head`].
fn table_row(r: &SettingResult, show_io: bool, show_read: bool) -> Vec<String> {
    let s = &r.setting;
    let mut row = vec![s.cache.to_string(), s.threads.to_string()];
    if show_io {
        row.push(s.io.map_or("-".into(), |n| n.to_string()));
    }
    if show_read {
        row.push(s.read.clone().unwrap_or_else(|| "-".into()));
    }
    row.extend([
        r.runs.len().to_string(),
        format!("{:.3}", r.wall_min),
        format!("{:.3}", r.wall_median),
        format!("{:.3}", r.wall_max),
        format!("{:.1}", r.mb_s),
        format!("{:.3}", r.user),
        format!("{:.3}", r.system),
        format!("{:.0}", r.cpu_util * 100.0),
        opt_f(r.resident_before.map(|x| x * 100.0), 1),
        opt_f(r.storage_read.map(|b| b as f64 / 1e6), 1),
        r.major_faults.to_string(),
        opt_f(r.disk_read_mb_s, 1),
        opt_f(r.disk_avg_queue, 2),
        opt_f(r.disk_util_pct, 1),
    ]);
    row
}

/// `rows` as lines of columns two spaces apart, each as wide as its widest
/// cell; columns marked in `left` are aligned left, the others right.
fn align(rows: &[Vec<String>], left: &[bool]) -> String {
    let widths: Vec<usize> = (0..left.len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if left[c] {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// What the columns mean and where they come from: the eviction methods used
/// and the device whose counters were read.
fn table_notes(results: &[SettingResult]) -> String {
    let mut out = String::new();
    out.push_str("MB/s: bytes processed / median wall time (10^6 B/s)\n");
    out.push_str("cpu%: (user + system CPU) / wall time, medians; 100% = one core busy\n");
    let mut methods: Vec<&str> = results
        .iter()
        .filter_map(|r| r.eviction.as_deref())
        .collect();
    methods.dedup();
    out.push_str(&format!(
        "cached%: inputs in the page cache just before a run (mincore; largest of the runs){}\n",
        if methods.is_empty() {
            String::new()
        } else {
            format!("; cold runs evicted with {}", methods.join(", "))
        }
    ));
    out.push_str(
        "storage MB: read from storage by this process per run (/proc/self/io read_bytes), median\n",
    );
    match results.iter().find_map(|r| r.device.as_deref()) {
        Some(d) => out.push_str(&format!(
            "disk: {d} (/proc/diskstats, device-wide: includes other processes); rMB/s, aqu-sz and %util as iostat -x, medians\n"
        )),
        None => out.push_str(
            "disk: n/a (the inputs' device is not listed in /proc/diskstats: a memory-backed file system such as tmpfs, or a container)\n",
        ),
    }
    out
}

fn round(x: f64, digits: i32) -> Value {
    if !x.is_finite() {
        return Value::Null;
    }
    let m = 10f64.powi(digits);
    json!((x * m).round() / m)
}

fn disk_json(d: Option<&super::DiskDelta>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({
            "device": d.device,
            "read_bytes": d.read_bytes,
            "reads": d.reads,
            "read_mb_s": round(d.read_mb_s, 3),
            "avg_queue": round(d.avg_queue, 3),
            "util_pct": round(d.util_pct, 2),
            "r_await_ms": round(d.r_await_ms, 3),
        }),
    }
}

fn run_json(m: &RunMeasure) -> Value {
    json!({
        "wall_s": round(m.wall, 6),
        "bytes": m.bytes,
        "mb_s": round(m.mb_s(), 3),
        "user_s": round(m.user, 6),
        "system_s": round(m.system, 6),
        "cpu_util": round(m.cpu_util(), 4),
        "storage_read_bytes": m.storage_read,
        "major_faults": m.major_faults,
        "resident_before": m.resident_before.map(|x| round(x, 6)),
        "disk": disk_json(m.disk.as_ref()),
    })
}

/// One JSON document:
///
/// ```text
/// { "device": "vda" | null,               // /proc/diskstats name of the inputs' disk
///   "settings": [ {
///     "cache": "cold" | "warm", "threads": 4, "io": 16 | null, "read": "mmap" | null,
///     "eviction": "fadvise" | "drop_caches" | ... | null (warm),
///     "bytes": 1073741824,                  // processed per run (median)
///     "wall_s": { "min": .., "median": .., "max": .. },
///     "mb_s": ..,                           // median bytes / median wall, 10^6 B/s
///     "user_s": .., "system_s": ..,         // medians, CPU seconds
///     "cpu_util": ..,                       // (user + system) / wall, medians; 1.0 = one core
///     "storage_read_bytes": .. | null,      // this process, /proc/self/io, median
///     "major_faults": ..,                   // median
///     "resident_before": 0.0 .. 1.0 | null, // page-cache residency before a run, largest
///     "disk": { "device", "read_bytes", "read_mb_s", "avg_queue", "util_pct" } | null, // medians
///     "runs": [ { "wall_s", "bytes", "mb_s", "user_s", "system_s", "cpu_util",
///                 "storage_read_bytes", "major_faults", "resident_before",
///                 "disk": { "device", "read_bytes", "reads", "read_mb_s",
///                           "avg_queue", "util_pct", "r_await_ms" } | null } ]
///   } ] }
/// ```
pub fn json(results: &[SettingResult]) -> String {
    let device = results.iter().find_map(|r| r.device.clone());
    let settings: Vec<Value> = results
        .iter()
        .map(|r| {
            let s = &r.setting;
            let disk = match (
                &r.device,
                r.disk_read_bytes,
                r.disk_read_mb_s,
                r.disk_avg_queue,
                r.disk_util_pct,
            ) {
                (Some(d), Some(b), Some(mb), Some(q), Some(u)) => json!({
                    "device": d,
                    "read_bytes": b,
                    "read_mb_s": round(mb, 3),
                    "avg_queue": round(q, 3),
                    "util_pct": round(u, 2),
                }),
                _ => Value::Null,
            };
            let mut o = Map::new();
            o.insert("cache".into(), json!(s.cache.name()));
            o.insert("threads".into(), json!(s.threads));
            o.insert("io".into(), json!(s.io));
            o.insert("read".into(), json!(s.read));
            o.insert("eviction".into(), json!(r.eviction));
            o.insert("bytes".into(), json!(r.bytes));
            o.insert(
                "wall_s".into(),
                json!({
                    "min": round(r.wall_min, 6),
                    "median": round(r.wall_median, 6),
                    "max": round(r.wall_max, 6),
                }),
            );
            o.insert("mb_s".into(), round(r.mb_s, 3));
            o.insert("user_s".into(), round(r.user, 6));
            o.insert("system_s".into(), round(r.system, 6));
            o.insert("cpu_util".into(), round(r.cpu_util, 4));
            o.insert("storage_read_bytes".into(), json!(r.storage_read));
            o.insert("major_faults".into(), json!(r.major_faults));
            o.insert(
                "resident_before".into(),
                r.resident_before.map_or(Value::Null, |x| round(x, 6)),
            );
            o.insert("disk".into(), disk);
            o.insert(
                "runs".into(),
                Value::Array(r.runs.iter().map(run_json).collect()),
            );
            Value::Object(o)
        })
        .collect();
    let doc = json!({ "device": device, "settings": settings });
    serde_json::to_string_pretty(&doc).expect("JSON of plain values")
}
