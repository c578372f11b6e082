//! `wf bench` machinery: page-cache eviction and residency, cold and warm runs of
//! a real job, and the table / JSON / SVG outputs; plus the `wf bench` command.
//!
//! Figures such as bytes read from storage are process-wide, so every test that
//! does file I/O holds `IO_LOCK` (the test harness runs tests on threads of one
//! process).

mod common;

use std::io::{self, Write};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use wf_core::bench::{self, BenchOptions, Cache, RunMeasure, Setting, SettingResult};
use wf_core::jobs::count::Count;
use wf_core::scan::{InputSpec, ScanOptions};

static IO_LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    IO_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch directory on the same file system as the build (usually a real
/// disk; `/tmp` may be tmpfs).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Write `n` numbered lines (about 60 bytes each) to `path`, flushed to disk.
fn write_lines(path: &Path, n: u64) -> u64 {
    let f = std::fs::File::create(path).unwrap();
    let mut w = io::BufWriter::new(&f);
    for i in 0..n {
        writeln!(
            w,
            "{i:010} GET /widefinder/bench/page-{:06}.html 200 {}",
            i % 99991,
            i % 7919
        )
        .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    f.sync_all().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Whether eviction can work where `path` lives; prints why not.
fn evictable(path: &Path) -> bool {
    match bench::memory_backed(path) {
        Some(fs) => {
            eprintln!(
                "skipping eviction asserts: {} is on {fs}, which cannot be evicted",
                path.display()
            );
            false
        }
        None => true,
    }
}

fn read_all(path: &Path) {
    let _ = std::fs::read(path).unwrap();
}

#[test]
fn evict_then_read_changes_residency() {
    let _g = lock();
    let dir = scratch();
    let path = dir.path().join("lines.txt");
    write_lines(&path, 100_000); // about 6 MB
    let files = vec![path.clone()];

    read_all(&path);
    let warm = bench::resident_fraction(&files).unwrap();
    assert!(warm > 0.9, "just read, residency {warm}");

    let left = bench::evict(&files, false).unwrap();
    let after = bench::resident_fraction(&files).unwrap();
    eprintln!("residency after eviction: {left} (rechecked {after})");
    if evictable(&path) {
        assert!(left < 0.5, "evicted, residency {left}");
        assert!(after < 0.5, "evicted, residency {after}");
    }

    read_all(&path);
    let again = bench::resident_fraction(&files).unwrap();
    assert!(again > 0.9, "read again, residency {again}");

    // Empty files and an empty list count as nothing resident; a missing file
    // alone is an error.
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(bench::resident_fraction(&[empty]).unwrap(), 0.0);
    assert_eq!(bench::resident_fraction(&[]).unwrap(), 0.0);
    assert!(bench::resident_fraction(&[dir.path().join("missing")]).is_err());
}

#[test]
fn large_files_are_sampled() {
    let _g = lock();
    let dir = scratch();
    let path = dir.path().join("sparse");
    if !evictable(dir.path()) {
        return;
    }
    // 2 GiB of holes (no disk space used), the first 64 MiB read into the cache.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.set_len(2 << 30).unwrap();
    let files = vec![path.clone()];
    bench::evict(&files, false).unwrap();
    let before = bench::resident_fraction(&files).unwrap();
    assert!(before < 0.01, "untouched sparse file, residency {before}");
    {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 1 << 20];
        for i in 0..64u64 {
            f.read_exact_at(&mut buf, i << 20).unwrap();
        }
    }
    let part = bench::resident_fraction(&files).unwrap();
    bench::evict(&files, false).unwrap();
    // 64 MiB of 2 GiB is 3.1%.
    assert!(
        (0.01..0.07).contains(&part),
        "first 64 MiB of 2 GiB read, residency {part}"
    );
}

/// Run `wf count`'s job in-process over `path` with the setting.
fn count_once(path: &Path, lines: u64) -> impl FnMut(&Setting) -> io::Result<u64> + '_ {
    move |s: &Setting| {
        let base = ScanOptions {
            chunk_size: 1 << 20,
            ..ScanOptions::default()
        };
        let inputs = InputSpec {
            paths: vec![path.to_path_buf()],
            ..Default::default()
        }
        .collect();
        let out = wf_core::scan::run(
            &Count { sep: b'\n' },
            inputs.inputs,
            &s.scan_options(&base),
            None,
        );
        if let Some(e) = out.errors.first() {
            return Err(io::Error::other(e.to_string()));
        }
        assert_eq!(out.state.records, lines);
        Ok(out.bytes)
    }
}

#[test]
fn cold_runs_read_storage_and_warm_runs_do_not() {
    let _g = lock();
    let dir = scratch();
    let path = dir.path().join("log.txt");
    let lines = 150_000;
    let size = write_lines(&path, lines); // about 9 MB
    let files = bench::input_files(
        &InputSpec {
            paths: vec![dir.path().to_path_buf()],
            ..Default::default()
        }
        .collect()
        .inputs,
    );
    assert_eq!(files, std::slice::from_ref(&path));
    let opts = BenchOptions {
        caches: vec![Cache::Cold, Cache::Warm],
        threads: vec![1, 2],
        runs: 2,
        ..BenchOptions::default()
    };
    let mut job = count_once(&path, lines);
    let results = bench::run(&opts, &files, &mut job).unwrap();
    print!("{}", bench::table(&results));

    let names: Vec<(Cache, usize)> = results
        .iter()
        .map(|r| (r.setting.cache, r.setting.threads))
        .collect();
    assert_eq!(
        names,
        [
            (Cache::Cold, 1),
            (Cache::Cold, 2),
            (Cache::Warm, 1),
            (Cache::Warm, 2)
        ]
    );
    let can_evict = evictable(&path);
    for r in &results {
        assert_eq!(r.runs.len(), 2);
        assert_eq!(r.bytes, size);
        assert!(r.wall_min > 0.0 && r.wall_min <= r.wall_median && r.wall_median <= r.wall_max);
        assert!(r.mb_s > 0.0);
        assert!(r.user + r.system > 0.0, "some CPU time: {r:?}");
        let res = r.resident_before.expect("mincore works");
        match r.setting.cache {
            Cache::Cold => {
                assert!(r.eviction.as_deref().unwrap().contains("fadvise"));
                if can_evict {
                    assert!(res < 0.5, "cold run started with {res} resident");
                    match r.storage_read {
                        Some(b) => assert!(
                            b > size / 2,
                            "cold run read {b} bytes from storage, file is {size}"
                        ),
                        None => eprintln!("no /proc/self/io: storage bytes not checked"),
                    }
                    if let Some(d) = r.disk_read_bytes {
                        assert!(d > 0, "the device read nothing during cold runs");
                    }
                }
            }
            Cache::Warm => {
                assert!(r.eviction.is_none());
                assert!(res > 0.9, "warm run started with {res} resident");
                if let Some(b) = r.storage_read {
                    assert!(b < (1 << 20), "warm run read {b} bytes from storage");
                }
            }
        }
    }
    match &results[0].device {
        Some(d) => eprintln!("device: {d}"),
        None => eprintln!("device not found in /proc/diskstats: disk figures n/a"),
    }
}

#[test]
fn read_strategies_and_reads_in_flight_are_swept() {
    let _g = lock();
    let dir = scratch();
    let path = dir.path().join("log.txt");
    let lines = 50_000;
    let size = write_lines(&path, lines);
    let opts = BenchOptions {
        caches: vec![Cache::Cold],
        threads: vec![2],
        io: vec![Some(1), Some(8)],
        reads: vec![Some("pread".into()), Some("mmap".into())],
        runs: 1,
        ..BenchOptions::default()
    };
    let mut job = count_once(&path, lines);
    let results = bench::run(&opts, std::slice::from_ref(&path), &mut job).unwrap();
    assert_eq!(results.len(), 4);
    for r in &results {
        assert_eq!(r.bytes, size);
        if evictable(&path) {
            if let Some(b) = r.storage_read {
                assert!(b > size / 2, "{}: read {b} of {size}", r.setting.label());
            }
        }
    }
    let mmap = results
        .iter()
        .find(|r| r.setting.read.as_deref() == Some("mmap"))
        .unwrap();
    assert!(mmap.setting.scan_options(&ScanOptions::default()).mmap);
    let table = bench::table(&results);
    assert!(table.lines().next().unwrap().contains(" io "), "{table}");
    assert!(table.contains("mmap") && table.contains("pread"), "{table}");
    let plot = Plot::parse(&bench::svg(&results));
    for label in [
        "cold io=1 pread",
        "cold io=1 mmap",
        "cold io=8 pread",
        "cold io=8 mmap",
    ] {
        assert!(
            plot.has_text(label),
            "one line per io x read variant: {label:?} missing"
        );
    }
    assert_eq!(
        plot.dots_of(COLD).len(),
        4 + 4,
        "a dot per line and per legend entry"
    );
}

// ---- Output formats, on made-up measurements ----

fn fake(cache: Cache, threads: usize, io: Option<usize>, mb_s: f64) -> SettingResult {
    let bytes = 100_000_000u64;
    let wall = bytes as f64 / 1e6 / mb_s;
    let runs = (0..3)
        .map(|i| RunMeasure {
            wall: wall * (1.0 + 0.05 * i as f64),
            bytes,
            user: 0.1 * threads as f64,
            system: 0.05,
            storage_read: Some(if cache == Cache::Cold { bytes } else { 0 }),
            major_faults: 2,
            disk: Some(bench::DiskDelta {
                device: "vda".into(),
                read_bytes: if cache == Cache::Cold { bytes } else { 0 },
                reads: 100,
                read_mb_s: mb_s,
                avg_queue: 1.5,
                util_pct: 80.0,
                r_await_ms: 0.4,
            }),
            resident_before: Some(if cache == Cache::Cold { 0.0 } else { 1.0 }),
        })
        .collect();
    SettingResult::new(
        Setting {
            cache,
            threads,
            io,
            read: None,
        },
        runs,
        (cache == Cache::Cold).then(|| "fadvise".to_string()),
        Some("vda".into()),
    )
}

fn fakes() -> Vec<SettingResult> {
    let mut v = Vec::new();
    for (c, base) in [(Cache::Cold, 150.0), (Cache::Warm, 900.0)] {
        for (t, f) in [(1, 1.0), (2, 1.8), (4, 3.1), (8, 2.7)] {
            v.push(fake(c, t, None, base * f));
        }
    }
    v
}

#[test]
fn summary_is_min_median_max() {
    let r = fake(Cache::Cold, 2, None, 100.0);
    assert!((r.wall_min - 1.0).abs() < 1e-9);
    assert!((r.wall_median - 1.05).abs() < 1e-9);
    assert!((r.wall_max - 1.1).abs() < 1e-9);
    assert!((r.mb_s - 100.0 / 1.05).abs() < 1e-6);
    assert_eq!(r.storage_read, Some(100_000_000));
    assert_eq!(r.disk_read_mb_s, Some(100.0));
    assert_eq!(r.resident_before, Some(0.0));
}

#[test]
fn table_has_every_field() {
    let t = bench::table(&fakes());
    print!("{t}");
    let head = t.lines().next().unwrap();
    for col in [
        "cache",
        "-j",
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
    ] {
        assert!(head.contains(col), "column {col} missing: {head}");
    }
    // Nothing was swept but threads: no io or read columns.
    assert!(!head.contains(" io ") && !head.contains("read "));
    // 8 rows, all the same width as the header (aligned).
    let rows: Vec<&str> = t.lines().skip(1).take(8).collect();
    assert!(rows[0].starts_with("cold") && rows[7].starts_with("warm"));
    assert!(rows.iter().all(|r| r.len() == head.len()), "{t}");
    assert!(t.contains("disk: vda"));
    assert!(t.contains("evicted with fadvise"));

    // Without a device the disk figures say n/a.
    let mut r = fakes();
    for x in &mut r {
        x.device = None;
        x.disk_read_mb_s = None;
        x.disk_avg_queue = None;
        x.disk_util_pct = None;
    }
    let t = bench::table(&r);
    assert!(t.lines().nth(1).unwrap().trim_end().ends_with("n/a"), "{t}");
    assert!(t.contains("disk: n/a"));
}

#[test]
fn json_has_every_field() {
    let v: serde_json::Value = serde_json::from_str(&bench::json(&fakes())).unwrap();
    assert_eq!(v["device"], "vda");
    let s = v["settings"].as_array().unwrap();
    assert_eq!(s.len(), 8);
    for key in [
        "cache",
        "threads",
        "io",
        "read",
        "eviction",
        "bytes",
        "wall_s",
        "mb_s",
        "user_s",
        "system_s",
        "cpu_util",
        "storage_read_bytes",
        "major_faults",
        "resident_before",
        "disk",
        "runs",
    ] {
        assert!(s[0].get(key).is_some(), "setting field {key} missing");
    }
    for key in ["min", "median", "max"] {
        assert!(s[0]["wall_s"][key].as_f64().unwrap() > 0.0);
    }
    for key in ["device", "read_bytes", "read_mb_s", "avg_queue", "util_pct"] {
        assert!(s[0]["disk"].get(key).is_some(), "disk field {key} missing");
    }
    assert_eq!(s[0]["cache"], "cold");
    assert_eq!(s[0]["eviction"], "fadvise");
    assert_eq!(s[7]["cache"], "warm");
    assert!(s[7]["eviction"].is_null());
    let run = &s[0]["runs"][0];
    for key in [
        "wall_s",
        "bytes",
        "mb_s",
        "user_s",
        "system_s",
        "cpu_util",
        "storage_read_bytes",
        "major_faults",
        "resident_before",
        "disk",
    ] {
        assert!(run.get(key).is_some(), "run field {key} missing");
    }
    assert_eq!(s[0]["runs"].as_array().unwrap().len(), 3);
}

/// What a person sees in a plot, read back from the SVG with a real XML parser
/// (which fails the test if the document is not well-formed).
struct Plot {
    /// `width x height` of the `<svg>` root.
    size: (f64, f64),
    /// Every `<text>`, trimmed.
    texts: Vec<String>,
    /// `(stroke colour, points)` of every `<polyline>` 3 px wide: the series
    /// lines, their legend samples and the dashes of dashed lines.
    lines: Vec<(String, Vec<(f64, f64)>)>,
    /// `(fill colour, opacity, centre)` of every `<circle>`: the dots at the
    /// medians, the legend's dots and the bars' translucent centres.
    dots: Vec<(String, f64, (f64, f64))>,
    /// `(stroke colour, (x, y1, y2))` of every vertical translucent `<line>`:
    /// the bars from the slowest to the fastest run.
    bars: Vec<(String, (f64, f64, f64))>,
}

const COLD: &str = "#1F77B4";
const WARM: &str = "#D62728";

impl Plot {
    fn parse(svg: &str) -> Plot {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plot.svg");
        std::fs::write(&file, svg).unwrap();
        Plot::read(&file)
    }

    fn read(file: &Path) -> Plot {
        let script = r#"
import json, sys, xml.dom.minidom as m
d = m.parse(sys.argv[1]).documentElement
assert d.tagName == 'svg', d.tagName
f = lambda e, a: float(e.getAttribute(a) or 'nan')
pts = lambda e: [[float(v) for v in p.split(',')] for p in e.getAttribute('points').split()]
print(json.dumps({
  'size': [f(d, 'width'), f(d, 'height')],
  'texts': [''.join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE).strip()
            for t in d.getElementsByTagName('text')],
  'lines': [[p.getAttribute('stroke'), pts(p)] for p in d.getElementsByTagName('polyline')
            if p.getAttribute('stroke-width') == '3'],
  'dots': [[c.getAttribute('fill'), f(c, 'opacity'), [f(c, 'cx'), f(c, 'cy')]]
           for c in d.getElementsByTagName('circle')],
  'bars': [[l.getAttribute('stroke'), [f(l, 'x1'), f(l, 'y1'), f(l, 'y2')]]
           for l in d.getElementsByTagName('line')
           if f(l, 'opacity') < 1 and l.getAttribute('x1') == l.getAttribute('x2')],
}))
"#;
        let out = Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(file)
            .output()
            .expect("python3 reads the SVG in these tests");
        assert!(
            out.status.success(),
            "SVG is not well-formed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let pair = |p: &serde_json::Value| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
        let s = |x: &serde_json::Value| x.as_str().unwrap().to_string();
        let each = |key: &str| v[key].as_array().unwrap().clone();
        Plot {
            size: pair(&v["size"]),
            texts: each("texts").iter().map(s).collect(),
            lines: each("lines")
                .iter()
                .map(|l| {
                    (
                        s(&l[0]),
                        l[1].as_array().unwrap().iter().map(pair).collect(),
                    )
                })
                .collect(),
            dots: each("dots")
                .iter()
                .map(|c| (s(&c[0]), c[1].as_f64().unwrap(), pair(&c[2])))
                .collect(),
            bars: each("bars")
                .iter()
                .map(|b| {
                    let p: Vec<f64> = b[1]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap())
                        .collect();
                    (s(&b[0]), (p[0], p[1], p[2]))
                })
                .collect(),
        }
    }

    fn has_text(&self, t: &str) -> bool {
        self.texts.iter().any(|x| x == t)
    }

    /// The line of `color` through `n` points (there must be exactly one).
    fn line(&self, color: &str, n: usize) -> &[(f64, f64)] {
        let found: Vec<_> = self
            .lines
            .iter()
            .filter(|(c, p)| c == color && p.len() == n)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "lines of {color} through {n} points: {:?}",
            self.lines
        );
        &found[0].1
    }

    /// Centres of the opaque dots of `color`.
    fn dots_of(&self, color: &str) -> Vec<(f64, f64)> {
        self.dots
            .iter()
            .filter(|(c, o, _)| c == color && *o == 1.0)
            .map(|d| d.2)
            .collect()
    }

    /// Whether a bar of `color` stands at `x` and spans `y` (a bar of no height
    /// does not count).
    fn bar_through(&self, color: &str, (x, y): (f64, f64)) -> bool {
        self.bars.iter().any(|(c, (bx, y1, y2))| {
            let (lo, hi) = (y1.min(*y2), y1.max(*y2));
            c == color && (bx - x).abs() < 1.0 && lo < hi && lo <= y && y <= hi
        })
    }
}

#[test]
fn svg_draws_each_series_with_its_bars_axes_and_legend() {
    let results = fakes();
    let plot = Plot::parse(&bench::svg(&results));
    assert!(
        plot.size.0 >= 600.0 && plot.size.1 >= 400.0,
        "{:?}",
        plot.size
    );
    for text in [
        "wf bench: throughput vs threads",
        "threads (-j), log2 scale",
        "throughput (MB/s, median of runs)",
        "1",
        "2",
        "4",
        "8",
        "0",
        "cold",
        "warm",
        "min\u{2013}max of runs",
    ] {
        assert!(
            plot.has_text(text),
            "{text:?} missing from {:?}",
            plot.texts
        );
    }
    let cold = plot.line(COLD, 4);
    let warm = plot.line(WARM, 4);
    for line in [cold, warm] {
        // Threads left to right, on a log scale: 1, 2, 4 and 8 equally spaced.
        let dx: Vec<f64> = line.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert!(dx.iter().all(|&d| d > 0.0), "{line:?}");
        assert!(
            dx.iter().all(|&d| (d - dx[0]).abs() <= 2.0),
            "not log2: {line:?}"
        );
        // Faster is higher (smaller y): the fakes peak at -j 4.
        assert!(line[2].1 < line[1].1 && line[1].1 < line[0].1 && line[2].1 < line[3].1);
    }
    for i in 0..4 {
        assert_eq!(cold[i].0, warm[i].0);
        assert!(warm[i].1 < cold[i].1, "warm is faster at every point");
    }
    // A dot at each median and one in the legend; a bar through every median.
    for (color, line) in [(COLD, cold), (WARM, warm)] {
        let dots = plot.dots_of(color);
        assert_eq!(dots.len(), line.len() + 1, "{color}: {dots:?}");
        for p in line {
            assert!(dots
                .iter()
                .any(|d| (d.0 - p.0).abs() < 1.0 && (d.1 - p.1).abs() < 1.0));
            assert!(plot.bar_through(color, *p), "no bar of {color} at {p:?}");
        }
    }

    // Titles are text, escaped in the document.
    let t = bench::svg_titled(&fakes(), "count <a & b>");
    assert!(t.contains("count &lt;a &amp; b&gt;"));
    assert!(Plot::parse(&t).has_text("count <a & b>"));

    // Variants of io get a line each (one point per line still draws a dot).
    let v = vec![
        fake(Cache::Warm, 4, Some(4), 500.0),
        fake(Cache::Warm, 4, Some(16), 600.0),
    ];
    let plot = Plot::parse(&bench::svg(&v));
    assert!(
        plot.has_text("warm io=4") && plot.has_text("warm io=16"),
        "{:?}",
        plot.texts
    );
    assert_eq!(plot.dots_of(WARM).len(), 2 + 2);

    // No results: still a document with its axes, and no series.
    let plot = Plot::parse(&bench::svg(&[]));
    assert!(plot.has_text("threads (-j), log2 scale"));
    assert!(
        plot.lines.is_empty() && plot.dots.is_empty(),
        "{:?}",
        plot.lines
    );
}

#[test]
fn options_and_parsing() {
    assert_eq!(
        Cache::parse_list("both").unwrap(),
        [Cache::Cold, Cache::Warm]
    );
    assert!(Cache::parse_list("hot").is_err());
    assert_eq!(bench::parse_counts("1,2, 4").unwrap(), [1, 2, 4]);
    assert!(bench::parse_counts("1,0").is_err());
    assert!(bench::parse_counts("1,x").is_err());
    assert_eq!(bench::parse_reads("pread,mmap").unwrap(), ["pread", "mmap"]);
    assert!(bench::parse_reads("aio").is_err());
    let o = BenchOptions {
        caches: vec![Cache::Warm],
        threads: vec![1, 2],
        io: vec![None, Some(4)],
        reads: vec![],
        runs: 1,
        drop_caches: false,
        verbose: false,
    };
    let s = o.settings();
    assert_eq!(s.len(), 4);
    assert_eq!(s[1].io, Some(4));
    assert_eq!(s[1].label(), "warm -j 1 --io 4");
    let so = s[1].scan_options(&ScanOptions::default());
    assert_eq!((so.threads, so.inflight, so.mmap), (1, 4, false));
}

// ---- The command ----

/// `--plot` never replaces the job's input, and is an .svg: refused before
/// anything runs, exit 2, the input unchanged.
#[test]
fn cli_bench_plot_over_an_input_is_refused() {
    let dir = scratch();
    let data = dir.path().join("log.svg");
    write_lines(&data, 100);
    let before = std::fs::read(&data).unwrap();
    let text = dir.path().join("plot.txt");
    for plot in [&data, &text] {
        let out = common::wf()
            .args(["bench", "--runs", "1", "--plot"])
            .arg(plot)
            .arg("--")
            .arg("count")
            .arg(&data)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{plot:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--plot"));
        assert_eq!(std::fs::read(&data).unwrap(), before);
    }
    assert!(!text.exists());
}

#[test]
fn cli_bench_cold_and_warm() {
    let _g = lock();
    let dir = scratch();
    let data = dir.path().join("log.txt");
    let lines = 100_000;
    let size = write_lines(&data, lines);
    let plot = dir.path().join("out.svg");
    let out = common::wf()
        .args([
            "bench",
            "--cache",
            "both",
            "--threads",
            "1,2",
            "--runs",
            "2",
            "--json",
            "--plot",
        ])
        .arg(&plot)
        .arg("--")
        .arg("count")
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wf bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let s = v["settings"].as_array().unwrap();
    assert_eq!(s.len(), 4);
    let can_evict = evictable(&data);
    for x in s {
        assert_eq!(x["bytes"], size);
        assert_eq!(x["runs"].as_array().unwrap().len(), 2);
        assert!(x["mb_s"].as_f64().unwrap() > 0.0);
        let read = x["storage_read_bytes"].as_u64();
        match x["cache"].as_str().unwrap() {
            "cold" if can_evict => {
                assert!(x["resident_before"].as_f64().unwrap() < 0.5, "{x}");
                if let Some(b) = read {
                    assert!(b > size / 2, "cold run read {b} of {size} from storage");
                }
            }
            "warm" => {
                assert!(x["resident_before"].as_f64().unwrap() > 0.9, "{x}");
                if let Some(b) = read {
                    assert!(b < 1 << 20, "warm run read {b} from storage");
                }
            }
            _ => {}
        }
    }
    let plot = Plot::read(&plot);
    assert!(
        plot.has_text(&format!("wf count {}", data.display())),
        "{:?}",
        plot.texts
    );
    for color in [COLD, WARM] {
        // -j 1 and -j 2: a dot at each, and one in the legend.
        assert_eq!(plot.dots_of(color).len(), 3, "{color}");
    }

    // Without --json: the table.
    let out = common::wf()
        .args([
            "bench",
            "--cache",
            "warm",
            "--threads",
            "1",
            "--runs",
            "1",
            "--",
            "count",
        ])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8(out.stdout).unwrap();
    for col in [
        "cache",
        "wall med",
        "MB/s",
        "cpu%",
        "cached%",
        "storage MB",
        "majflt",
        "%util",
    ] {
        assert!(t.contains(col), "column {col} missing:\n{t}");
    }
    assert!(t.lines().any(|l| l.starts_with("warm")), "{t}");
}

#[test]
fn cli_bench_rejects_bad_options() {
    for args in [
        vec!["bench", "--cache", "hot", "--", "count", "x"],
        vec!["bench", "--threads", "0", "--", "count", "x"],
        vec!["bench", "--read", "aio", "--", "count", "x"],
    ] {
        let out = common::wf().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn cli_bench_names_a_missing_input() {
    let out = common::wf()
        .args(["bench", "--", "count", "/nonexistent/wf-bench-input.log"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/wf-bench-input.log"), "{err}");
}

#[test]
fn cli_bench_names_a_missing_input_once_and_measures_the_rest() {
    let _g = lock();
    let dir = scratch();
    let data = dir.path().join("log.txt");
    let size = write_lines(&data, 1_000);
    let missing = dir.path().join("missing.log");
    let out = common::wf()
        .args([
            "bench",
            "--runs",
            "2",
            "--threads",
            "1,2",
            "--json",
            "--",
            "count",
        ])
        .arg(&missing)
        .arg(&data)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches(missing.to_str().unwrap()).count(), 1, "{err}");
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no results ({e}): {err}"));
    let s = v["settings"].as_array().unwrap();
    assert_eq!(s.len(), 2);
    for x in s {
        assert_eq!(x["bytes"], size);
    }
}

#[test]
fn cli_bench_bounds_its_sweeps() {
    for (args, bound) in [
        (vec!["--threads", "1,100000"], "1024"),
        (vec!["--io", "100000000"], "4096"),
        (vec!["--runs", "1000000000000"], "10000"),
    ] {
        let out = common::wf()
            .arg("bench")
            .args(&args)
            .args(["--", "count", "x"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(bound), "{args:?}: {err}");
    }
}

/// Linux's `mincore` shows every page of a file as resident to a user who neither
/// owns nor may write it; `wf bench` must then say residency is unknown rather
/// than report a cold run as cached. Run as `nobody` on a root-owned file.
#[test]
fn cold_residency_is_unknown_not_cached_for_files_mincore_cannot_see() {
    let _g = lock();
    use std::os::unix::fs::PermissionsExt;
    // `nobody` must reach the file and the binary through the directories.
    let Some(dir) = common::open_tempdir() else {
        return;
    };
    let Some(mut c) = common::wf_as_nobody(dir.path()) else {
        return;
    };
    let data = dir.path().join("ro.log");
    write_lines(&data, 20_000);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = c
        .args(["bench", "--cache", "cold", "--runs", "1", "--json", "--"])
        .arg("count")
        .arg(&data)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["settings"][0];
    assert!(
        s["resident_before"].is_null(),
        "residency should be unknown, not {}",
        s["resident_before"]
    );
    assert!(err.contains("mincore"), "{err}");
}
