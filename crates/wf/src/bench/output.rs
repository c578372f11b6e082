//! Printing bench results: an aligned table, a JSON document and an SVG plot.

use serde_json::{json, Map, Value};

use super::{Cache, RunMeasure, SettingResult};

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
    let mut head: Vec<&str> = vec!["cache", "-j"];
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
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for r in results {
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
        rows.push(row);
    }
    let ncol = rows[0].len();
    let widths: Vec<usize> = (0..ncol)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 || (show_read && head[c] == "read") {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    out.push_str("MB/s: bytes processed / median wall time (10^6 B/s)\n");
    out.push_str("cpu%: (user + system CPU) / wall time, medians; 100% = one core busy\n");
    let methods: Vec<&str> = {
        let mut m: Vec<&str> = results
            .iter()
            .filter_map(|r| r.eviction.as_deref())
            .collect();
        m.dedup();
        m
    };
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A round step for about `n` ticks up to `max`.
fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

fn fmt_tick(v: f64) -> String {
    if v == v.round() {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// One series of the plot: a cache state and, when swept, an io / read variant.
struct Series<'a> {
    cache: Cache,
    io: Option<usize>,
    read: Option<&'a str>,
    points: Vec<&'a SettingResult>,
}

impl Series<'_> {
    fn label(&self, show_io: bool, show_read: bool) -> String {
        let mut s = self.cache.name().to_string();
        if show_io {
            s.push_str(&match self.io {
                Some(n) => format!(" io={n}"),
                None => " io=default".into(),
            });
        }
        if show_read {
            s.push_str(&format!(" {}", self.read.unwrap_or("default")));
        }
        s
    }

    fn id(&self, show_io: bool, show_read: bool) -> String {
        let mut s = format!("series-{}", self.cache.name());
        if show_io {
            s.push_str(&match self.io {
                Some(n) => format!("-io{n}"),
                None => "-iodefault".into(),
            });
        }
        if show_read {
            s.push_str(&format!("-{}", self.read.unwrap_or("default")));
        }
        s
    }
}

/// [`svg_titled`] with the default title.
pub fn svg(results: &[SettingResult]) -> String {
    svg_titled(results, "wf bench: throughput vs threads")
}

/// A standalone SVG: median throughput (MB/s) against threads, one polyline per
/// cache state (and per io / read variant when several were run), with a bar
/// from the slowest to the fastest run at each point, labelled axes with ticks,
/// the title, and a legend. Each polyline has `class="series cold"` (or `warm`)
/// and an id such as `series-cold` or `series-warm-io16-mmap`.
pub fn svg_titled(results: &[SettingResult], title: &str) -> String {
    const W: f64 = 760.0;
    const H: f64 = 460.0;
    const L: f64 = 80.0; // margins
    const R: f64 = 190.0;
    const T: f64 = 60.0;
    const B: f64 = 64.0;
    let pw = W - L - R;
    let ph = H - T - B;

    let show_io = {
        let mut v: Vec<_> = results.iter().map(|r| r.setting.io).collect();
        v.sort();
        v.dedup();
        v.len() > 1
    };
    let show_read = {
        let mut v: Vec<_> = results.iter().map(|r| r.setting.read.clone()).collect();
        v.sort();
        v.dedup();
        v.len() > 1
    };
    let mut series: Vec<Series> = Vec::new();
    for r in results {
        let s = &r.setting;
        let key = (s.cache, s.io, s.read.as_deref());
        match series.iter_mut().find(|x| (x.cache, x.io, x.read) == key) {
            Some(x) => x.points.push(r),
            None => series.push(Series {
                cache: s.cache,
                io: s.io,
                read: s.read.as_deref(),
                points: vec![r],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by_key(|r| r.setting.threads);
    }

    // Scales.
    let mut xs: Vec<usize> = results.iter().map(|r| r.setting.threads.max(1)).collect();
    xs.sort_unstable();
    xs.dedup();
    let (xmin, xmax) = (
        *xs.first().unwrap_or(&1) as f64,
        *xs.last().unwrap_or(&1) as f64,
    );
    let log = xmax / xmin >= 4.0;
    let xf = |t: f64| -> f64 {
        if xmax == xmin {
            return L + pw / 2.0;
        }
        let (a, b, v) = if log {
            (xmin.log2(), xmax.log2(), t.log2())
        } else {
            (xmin, xmax, t)
        };
        L + 20.0 + (v - a) / (b - a) * (pw - 40.0)
    };
    let fastest = |r: &SettingResult| {
        if r.wall_min > 0.0 {
            r.bytes as f64 / 1e6 / r.wall_min
        } else {
            r.mb_s
        }
    };
    let slowest = |r: &SettingResult| {
        if r.wall_max > 0.0 {
            r.bytes as f64 / 1e6 / r.wall_max
        } else {
            r.mb_s
        }
    };
    let ymax_data = results
        .iter()
        .map(|r| fastest(r).max(r.mb_s))
        .fold(0.0, f64::max);
    let step = nice_step(if ymax_data > 0.0 { ymax_data } else { 1.0 }, 5.0);
    let ymax = ((ymax_data / step).ceil() * step).max(step);
    let yf = |v: f64| T + ph - v / ymax * ph;

    let mut o = String::new();
    o.push_str(&format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" \
font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n"
    ));
    o.push_str(&format!("<title>{}</title>\n", esc(title)));
    o.push_str(&format!(
        "<rect x=\"0\" y=\"0\" width=\"{W}\" height=\"{H}\" fill=\"white\"/>\n"
    ));
    o.push_str(&format!(
        "<text class=\"title\" x=\"{}\" y=\"30\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
        L + pw / 2.0,
        esc(title)
    ));

    // Grid and y ticks.
    o.push_str("<g class=\"y-axis\">\n");
    let mut v = 0.0;
    while v <= ymax + step / 1e6 {
        let y = yf(v);
        o.push_str(&format!(
            "<line x1=\"{L}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e0e0e0\"/>\n\
<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            L + pw,
            L - 8.0,
            y + 4.0,
            fmt_tick(v)
        ));
        v += step;
    }
    o.push_str(&format!(
        "<text class=\"axis-label\" transform=\"translate(22,{:.1}) rotate(-90)\" text-anchor=\"middle\">throughput (MB/s, median of runs)</text>\n</g>\n",
        T + ph / 2.0
    ));
    // x ticks.
    o.push_str("<g class=\"x-axis\">\n");
    for &t in &xs {
        let x = xf(t as f64);
        o.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\n\
<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>\n",
            T + ph,
            T + ph + 6.0,
            T + ph + 22.0
        ));
    }
    o.push_str(&format!(
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">threads (-j){}</text>\n</g>\n",
        L + pw / 2.0,
        H - 16.0,
        if log { ", log scale" } else { "" }
    ));
    // Axes.
    o.push_str(&format!(
        "<path class=\"axes\" d=\"M{L},{T} V{:.1} H{:.1}\" fill=\"none\" stroke=\"#333\"/>\n",
        T + ph,
        L + pw
    ));

    // Series.
    const DASH: [&str; 4] = ["", "7 4", "2 3", "10 4 2 4"];
    let mut variant = std::collections::HashMap::new();
    for (i, s) in series.iter().enumerate() {
        let color = match s.cache {
            Cache::Cold => "#1f77b4",
            Cache::Warm => "#d62728",
        };
        let k = variant.entry(s.cache).or_insert(0usize);
        let dash = DASH[*k % DASH.len()];
        *k += 1;
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        let label = s.label(show_io, show_read);
        o.push_str(&format!("<g class=\"points {}\">\n", s.cache.name()));
        for r in &s.points {
            let x = xf(r.setting.threads.max(1) as f64);
            o.push_str(&format!(
                "<line class=\"range\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-opacity=\"0.5\" stroke-width=\"2\"/>\n\
<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{color}\"><title>{} -j {}: {:.1} MB/s (runs {:.1} to {:.1})</title></circle>\n",
                yf(slowest(r)),
                yf(fastest(r)),
                yf(r.mb_s),
                esc(&label),
                r.setting.threads,
                r.mb_s,
                slowest(r),
                fastest(r),
            ));
        }
        o.push_str("</g>\n");
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|r| {
                format!(
                    "{:.1},{:.1}",
                    xf(r.setting.threads.max(1) as f64),
                    yf(r.mb_s)
                )
            })
            .collect();
        o.push_str(&format!(
            "<polyline class=\"series {}\" id=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2.5\"{dash_attr}><title>{}</title></polyline>\n",
            s.cache.name(),
            s.id(show_io, show_read),
            pts.join(" "),
            esc(&label)
        ));
        // Legend entry.
        let ly = T + 10.0 + i as f64 * 22.0;
        let lx = L + pw + 20.0;
        o.push_str(&format!(
            "<g class=\"legend\"><line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2.5\"{dash_attr}/>\
<circle cx=\"{:.1}\" cy=\"{ly:.1}\" r=\"4\" fill=\"{color}\"/>\
<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>\n",
            lx + 28.0,
            lx + 14.0,
            lx + 36.0,
            ly + 4.0,
            esc(&label)
        ));
    }
    let note_y = T + 10.0 + series.len() as f64 * 22.0 + 10.0;
    o.push_str(&format!(
        "<text class=\"note\" x=\"{:.1}\" y=\"{note_y:.1}\" font-size=\"11\" fill=\"#555\">bars: slowest to fastest run</text>\n",
        L + pw + 20.0
    ));
    o.push_str("</svg>\n");
    o
}
