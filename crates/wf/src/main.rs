//! The `wf` command line: parses arguments and wires scan, jobs and report
//! together. No reading or computing happens here.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};

use wf::bench;
use wf::jobs::count::Count;
use wf::jobs::pangram::{Mode as PangramMode, Pangram};
use wf::jobs::wf2::Wf2;
use wf::jobs::Job;
use wf::report;
use wf::report::stats::{RunStats, Usage};
use wf::scan::{self, InputError, Outcome, Progress, ScanOptions};

#[derive(Parser)]
#[command(
    name = "wf",
    version,
    about = "widefinder: read big text at the speed of the disk, on every core",
    long_about = "widefinder reads big text (one huge log, or thousands of files) as fast as the \
disk or the page cache can deliver it, splits it into record-aligned chunks, runs a job on \
every core and combines the results.\n\nExamples:\n  wf gen wf2 --size 1G -o access.log\n  \
wf count access.log\n  wf count -j 2 --stats logs/\n  find . -name '*.txt' | wf count --files-from -",
    after_help = "Exit status: 0 on success, 2 if any input could not be read (the rest is still processed) or on usage errors."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Count records (lines), bytes and files, like `wc -l`, on all cores.
    #[command(
        long_about = "Count records (lines), bytes and files, like `wc -l` over everything named, \
but on all cores and inside single large files too. A final line without a newline counts.\n\n\
Output: `N records, N bytes, N files`; with --json exactly \
{\"records\": N, \"bytes\": N, \"files\": N} on one line.\n\n\
Examples:\n  wf count access.log\n  wf count --json -j 2 logs/\n  \
find /data -name '*.log' | wf count --files-from -\n  wf count <(zcat old.log.gz)",
        after_help = JOB_EXIT
    )]
    Count {
        #[command(flatten)]
        scan: ScanArgs,
    },
    /// The Wide Finder 2 report over Apache logs: top URIs, 404s, clients, referrers.
    #[command(
        long_about = "The Wide Finder 2 report (Tim Bray, 2008) over Apache combined logs: for GET \
lines, the top 10 article URIs by hits, URIs by bytes, 404s, client addresses and referrers, \
exactly as the 2008 reference computed them.\n\n\
Text output: `N resources, M 404s, K clients`, then the five lists. --json prints one object: \
{\"lines\", \"resources\", \"404s\", \"clients\", \"top\": {\"uri_hits\", \"uri_bytes\", \
\"404s\", \"clients\", \"referrers\"}}, each list [[key, value], ...], bytes in bytes. \
--stats adds the lines that were not GET lines and those with fewer than 6 fields.\n\n\
Examples:\n  wf wf2 access.log\n  wf wf2 --top 20 --json --stats logs/",
        after_help = JOB_EXIT
    )]
    Wf2 {
        #[command(flatten)]
        scan: ScanArgs,
        /// Length of each top list.
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
    },
    /// The shortest stretches of text that hold all 26 letters (pangrammatic windows).
    #[command(
        long_about = "Find minimal pangrammatic windows: stretches of text, from a letter to a \
letter, holding all 26 letters A-Z (case folded) with no shorter such stretch inside. Windows \
never span two files. By default prints the 10 shortest: letters, path:offset, text.\n\n\
--json prints one object per line: {\"path\", \"offset\", \"bytes\", \"letters\", \"text\"}.\n\n\
Examples:\n  wf pangram books/\n  wf pangram --all --max-letters 100 --json book.txt",
        after_help = JOB_EXIT
    )]
    Pangram {
        #[command(flatten)]
        scan: ScanArgs,
        /// How many of the shortest windows to print.
        #[arg(long, value_name = "K", default_value_t = 10, conflicts_with = "all")]
        top: usize,
        /// Print every minimal window, in input order.
        #[arg(long)]
        all: bool,
        /// With --all: only windows of at most N letters.
        #[arg(long, value_name = "N", requires = "all")]
        max_letters: Option<u64>,
    },
    /// Feed record-aligned blocks to N worker processes of any command.
    #[command(
        long_about = "Split the inputs into blocks of whole records and feed them to N long-lived \
worker processes (any command: awk, perl, python...) on their stdin, each block to whichever \
worker is ready. Workers' output lines go to stdout (never mixed mid-line), or through one \
--combine process. Regular files move into the pipes with splice(2). Each worker sees \
WF_WORKER (0..N-1) and WF_WORKERS.\n\nExamples:\n  wf feed -j 4 access.log -- wc -l\n  \
wf feed --combine 'python3 combine.py' logs/ -- python3 reduce.py\n  \
wf feed --per-block --keep-order big.txt -- sort",
        after_help = "Exit status: 0 on success; 2 if any input could not be read, on usage errors, \
or if a worker failed (exited non-zero, died, or stopped before the end of its input: it is named \
on stderr with the input ranges it was given and the bytes it never read); 128+N after signal N."
    )]
    Feed(FeedArgs),
    /// Time a job: cold and warm runs, thread sweeps, I/O figures and a plot.
    #[command(
        long_about = "Run a wf job in-process several times per setting and report wall time \
(min, median, max), MB/s, CPU, bytes read from storage, major faults and the input device's \
read rate, queue depth and utilisation. Cold runs first evict the inputs from the page cache \
with posix_fadvise (no root needed) and check the eviction with mincore.\n\nExample:\n  \
wf bench --cache both --threads 1,2,4,8 --runs 5 --plot wf2.svg -- wf2 access.log",
        after_help = JOB_EXIT
    )]
    Bench(BenchArgs),
    /// Generate test data.
    #[command(subcommand)]
    Gen(GenCmd),
}

/// The exit statuses of the scan jobs, in their `--help`.
const JOB_EXIT: &str =
    "Exit status: 0 on success; 2 if any input could not be read (it is named on \
stderr and the rest is still processed) or on usage errors.";

#[derive(Args)]
struct FeedArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Worker processes [default, or 0: number of cores].
    #[arg(
        short = 'j',
        long = "jobs",
        visible_alias = "threads",
        value_name = "N"
    )]
    jobs: Option<usize>,
    /// About this many bytes per block, cut after a record end.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = scan::parse_size)]
    block: u64,
    /// Record separator: one byte, e.g. '\0', '\t', ';' [default: newline].
    #[arg(long, value_name = "BYTE", value_parser = wf::feed::parse_rs)]
    rs: Option<u8>,
    /// Output separator: worker output reaches stdout in whole units ending with
    /// this byte, never mixed inside one [default: the --rs byte]. Use --ors '\n'
    /// when workers read other records but print lines.
    #[arg(long, value_name = "BYTE", value_parser = wf::feed::parse_rs)]
    ors: Option<u8>,
    /// Pipe all worker output into this command (run with sh -c); its output is wf's.
    #[arg(long, value_name = "CMD")]
    combine: Option<String>,
    /// Start a fresh process for every block (for commands that need a whole input).
    #[arg(long)]
    per_block: bool,
    /// With one process per block, print block outputs in input order (implies --per-block).
    #[arg(long)]
    keep_order: bool,
    /// The worker command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
}

#[derive(Args)]
struct BenchArgs {
    /// Cache states to measure: cold, warm or both.
    #[arg(long, default_value = "warm", value_name = "STATE")]
    cache: String,
    /// Thread counts to sweep, e.g. 1,2,4,8 [default: the job's -j].
    #[arg(long, value_name = "LIST")]
    threads: Option<String>,
    /// Reads in flight (queued chunks) to sweep, e.g. 2,8,32.
    #[arg(long, value_name = "LIST")]
    io: Option<String>,
    /// Read strategies to compare: pread, mmap.
    #[arg(long, value_name = "LIST")]
    read: Option<String>,
    /// Timed runs per setting.
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: usize,
    /// Evict with /proc/sys/vm/drop_caches (root; empties the whole page cache).
    #[arg(long)]
    drop_caches: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Draw throughput against threads, one line per cache state, to an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// One line per run on stderr.
    #[arg(short, long)]
    verbose: bool,
    /// The job and its arguments, e.g. `wf2 access.log` (a leading `wf` is allowed).
    #[arg(last = true, required = true, value_name = "JOB")]
    job: Vec<String>,
}

#[derive(Subcommand)]
enum GenCmd {
    /// Apache combined log lines shaped like the Wide Finder 2 data.
    #[command(
        long_about = "Apache combined log lines shaped like the Wide Finder 2 data (Tim Bray's \
blog): article URIs /ongoing/When/200x/YYYY/MM/DD/Slug and static files with skewed popularity, \
many clients, referrers, statuses 200/304/404/301/500. The same seed gives the same bytes. \
--odd-lines mixes in malformed lines: short, empty, tabs, leading spaces, invalid UTF-8 and \
very long lines.\n\nExamples:\n  wf gen wf2 --size 1G -o access.log\n  \
wf gen wf2 --size 100M --seed 7 --odd-lines 0.01 | wf wf2 --stats"
    )]
    Wf2 {
        /// Approximate size to write, e.g. 100M or 1G.
        #[arg(long, default_value = "100M", value_parser = scan::parse_size)]
        size: u64,
        /// Random seed: the same seed gives the same bytes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fraction of malformed lines to mix in (0 to 1).
        #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
        odd_lines: f64,
        /// Write to FILE instead of standard output.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Which inputs to read: the same for every command.
#[derive(Args, Clone)]
struct InputArgs {
    /// Files and directories (walked recursively); `-` or nothing for stdin.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Read more paths from FILE, one per line (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Follow symbolic links while walking directories.
    #[arg(short = 'L', long = "follow")]
    follow: bool,
}

impl InputArgs {
    fn collect(&self) -> scan::Collected {
        scan::InputSpec {
            paths: self.paths.clone(),
            files_from: self.files_from.clone(),
            follow_links: self.follow,
        }
        .collect()
    }
}

/// Input and run options shared by every scan job.
#[derive(Args, Clone)]
struct ScanArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Worker threads [default, or 0: number of cores].
    #[arg(short = 'j', long = "threads", value_name = "N")]
    threads: Option<usize>,
    /// Chunk size for splitting files, e.g. 64K, 8M, 1G.
    #[arg(long, value_name = "SIZE", default_value = "8M", value_parser = scan::parse_size)]
    chunk_size: u64,
    /// Chunks read ahead and queued for the workers [default: 2 x threads].
    #[arg(long, value_name = "N")]
    io: Option<usize>,
    /// Map files with mmap instead of reading them with pread (no copy; but a file
    /// truncated during the run then kills wf).
    #[arg(long)]
    mmap: bool,
    /// Ask the kernel to read queued chunks ahead (posix_fadvise WILLNEED); off by
    /// default because it measured slower on a cold cache here (see README).
    #[arg(long)]
    readahead: bool,
    /// How far a helper thread per worker reads a big file ahead of the worker, into
    /// the page cache and without copying (sendfile to /dev/null); the worker reads
    /// what the helper has read, so a cold disk sees one stream of large requests per
    /// worker and never waits for a busy one. 0 turns the helpers off (the kernel's
    /// own readahead behind each worker).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = size_or_zero)]
    ahead: u64,
    /// Show a progress bar on stderr even when it is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Print wall time, throughput, CPU and I/O figures to stderr after the run.
    #[arg(long)]
    stats: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// A size as [`scan::parse_size`] reads it, or 0 (off).
fn size_or_zero(s: &str) -> Result<u64, String> {
    if s.trim() == "0" {
        Ok(0)
    } else {
        scan::parse_size(s)
    }
}

impl ScanArgs {
    fn options(&self) -> ScanOptions {
        let mut o = ScanOptions::default();
        if let Some(j) = self.threads.filter(|&j| j > 0) {
            o.threads = j;
        }
        o.chunk_size = self.chunk_size;
        o.inflight = self.io.unwrap_or(0);
        o.readahead = self.readahead;
        o.mmap = self.mmap;
        o.ahead = self.ahead;
        o
    }
}

/// What one run of a job produced.
struct JobRun {
    /// What to print on stdout (bytes: the wf2 text report prints keys raw).
    output: Vec<u8>,
    errors: Vec<InputError>,
    bytes: u64,
    records: Option<u64>,
    /// Job-specific `--stats` counters.
    extra: Vec<(String, u64)>,
}

/// Run a scan job once with the given options and render its result. Used by the
/// job commands and, in-process and repeatedly, by `wf bench`.
fn exec(cmd: &Cmd, opts: &ScanOptions, progress: Option<&Progress>) -> Result<JobRun, String> {
    fn start<J: Job>(
        job: &J,
        args: &ScanArgs,
        opts: &ScanOptions,
        progress: Option<&Progress>,
    ) -> (Outcome<J::State>, Vec<InputError>) {
        let collected = args.input.collect();
        let out = scan::run(job, collected.inputs, opts, progress);
        let mut errors = collected.errors;
        errors.extend(out.errors.iter().cloned());
        (out, errors)
    }
    match cmd {
        Cmd::Count { scan: args } => {
            let (out, errors) = start(&Count { sep: opts.sep }, args, opts, progress);
            let line = if args.json {
                report::count::json(&out.state, out.files)
            } else {
                report::count::text(&out.state, out.files)
            };
            Ok(JobRun {
                output: (line + "\n").into_bytes(),
                errors,
                bytes: out.bytes,
                records: Some(out.state.records),
                extra: vec![],
            })
        }
        Cmd::Wf2 { scan: args, top } => {
            let job = Wf2;
            let (out, errors) = start(&job, args, opts, progress);
            let bytes = out.bytes;
            let r = job.finish(out.state, *top);
            let output = if args.json {
                (report::wf2::json(&r) + "\n").into_bytes()
            } else {
                report::wf2::text(&r)
            };
            Ok(JobRun {
                output,
                errors,
                bytes,
                records: Some(r.lines),
                extra: vec![
                    ("lines not GET".into(), r.not_get),
                    ("lines with too few fields".into(), r.too_few_fields),
                ],
            })
        }
        Cmd::Pangram {
            scan: args,
            top,
            all,
            max_letters,
        } => {
            let mode = if *all {
                PangramMode::All {
                    max_letters: *max_letters,
                }
            } else {
                PangramMode::Top(*top)
            };
            let job = Pangram { mode };
            let mut o = opts.clone();
            o.spool_streams = true; // window text is read back after the scan
            let (out, mut errors) = start(&job, args, &o, progress);
            let bytes = out.bytes;
            let state_out = out;
            let (state, rest) = state_out.into_parts();
            let windows = job
                .finish(state, &mut |i, off, len| rest.read_range(i, off, len))
                .map_err(|e| format!("reading windows back: {e}"));
            let windows = match windows {
                Ok(w) => w,
                Err(e) => {
                    errors.push(InputError {
                        name: "pangram".into(),
                        message: e,
                    });
                    Vec::new()
                }
            };
            let mut output = String::new();
            for w in &windows {
                let name = &rest.inputs()[w.input].name;
                output.push_str(&if args.json {
                    report::pangram::json_line(w, name)
                } else {
                    report::pangram::text_line(w, name)
                });
                output.push('\n');
            }
            Ok(JobRun {
                output: output.into_bytes(),
                errors,
                bytes,
                records: None,
                extra: vec![("windows reported".into(), windows.len() as u64)],
            })
        }
        _ => Err("not a scan job (count, wf2 or pangram)".into()),
    }
}

fn scan_args(cmd: &Cmd) -> Option<&ScanArgs> {
    match cmd {
        Cmd::Count { scan } | Cmd::Wf2 { scan, .. } | Cmd::Pangram { scan, .. } => Some(scan),
        _ => None,
    }
}

/// A job command: run it with a progress bar, print its output, errors and stats.
fn cmd_job(cmd: &Cmd) -> ExitCode {
    let args = scan_args(cmd).expect("a scan job");
    let opts = args.options();
    let t0 = Instant::now();
    let u0 = Usage::now();
    let progress = Progress::default();
    let show = report::stats::want_progress(args.progress, args.no_progress);
    let stop = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        let bar = show.then(|| report::stats::progress_bar(s, &progress, &stop));
        let r = exec(cmd, &opts, Some(&progress));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(b) = bar {
            let _ = b.join();
        }
        r
    });
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            eprintln!("wf: {e}");
            return ExitCode::from(2);
        }
    };
    for e in &run.errors {
        eprintln!("wf: {e}");
    }
    let code = print(&run.output);
    if args.stats {
        let mut st = RunStats::between(&u0, &Usage::now(), t0.elapsed(), run.bytes, opts.threads);
        st.records = run.records;
        st.extra = run.extra;
        eprint!("{}", st.text());
    }
    if code != ExitCode::SUCCESS || !run.errors.is_empty() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn cmd_feed(f: &FeedArgs) -> ExitCode {
    let collected = f.input.collect();
    let mut opts = wf::feed::FeedOptions {
        block: f.block,
        command: f.command.clone(),
        combine: f.combine.clone(),
        per_block: f.per_block || f.keep_order,
        keep_order: f.keep_order,
        ..Default::default()
    };
    if let Some(j) = f.jobs.filter(|&j| j > 0) {
        opts.workers = j;
    }
    if let Some(rs) = f.rs {
        opts.sep = rs;
    }
    opts.out_sep = f.ors;
    for e in &collected.errors {
        eprintln!("wf: {e}");
    }
    match wf::feed::run(collected.inputs, &opts) {
        Ok(r) => {
            for e in &r.input_errors {
                eprintln!("wf: {e}");
            }
            if collected.errors.is_empty() && r.input_errors.is_empty() && r.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(e) => {
            eprintln!("wf feed: {e}");
            ExitCode::from(2)
        }
    }
}

fn cmd_bench(b: &BenchArgs) -> ExitCode {
    let bad = |m: String| {
        eprintln!("wf bench: {m}");
        ExitCode::from(2)
    };
    let caches = match bench::Cache::parse_list(&b.cache) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    let threads = match b.threads.as_deref().map(bench::parse_counts).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return bad(e),
    };
    let io = match b.io.as_deref().map(bench::parse_counts).transpose() {
        Ok(v) => v.unwrap_or_default().into_iter().map(Some).collect(),
        Err(e) => return bad(e),
    };
    let reads = match b.read.as_deref().map(bench::parse_reads).transpose() {
        Ok(v) => v.unwrap_or_default().into_iter().map(Some).collect(),
        Err(e) => return bad(e),
    };
    if b.runs == 0 {
        return bad("--runs must be at least 1".into());
    }
    let words = if b.job.first().map(String::as_str) == Some("wf") {
        &b.job[1..]
    } else {
        &b.job[..]
    };
    let sub =
        match Cli::try_parse_from(std::iter::once("wf").chain(words.iter().map(String::as_str))) {
            Ok(c) => c,
            Err(e) => return bad(format!("the job to measure: {e}")),
        };
    let Some(args) = scan_args(&sub.cmd) else {
        return bad("can measure count, wf2 and pangram".into());
    };
    let base = args.options();
    let collected = args.input.collect();
    let files = bench::input_files(&collected.inputs);
    if files.is_empty() {
        let why: Vec<String> = collected.errors.iter().map(|e| e.to_string()).collect();
        return bad(if why.is_empty() {
            "the job names no regular file to measure".into()
        } else {
            format!(
                "the job names no regular file to measure ({})",
                why.join("; ")
            )
        });
    }
    let opts = bench::BenchOptions {
        caches,
        threads: if threads.is_empty() {
            vec![base.threads]
        } else {
            threads
        },
        io,
        reads,
        runs: b.runs,
        drop_caches: b.drop_caches,
        verbose: b.verbose,
    };
    let mut once = |s: &bench::Setting| -> std::io::Result<u64> {
        let r = exec(&sub.cmd, &s.scan_options(&base), None).map_err(std::io::Error::other)?;
        match r.errors.first() {
            Some(e) => Err(std::io::Error::other(e.to_string())),
            None => Ok(r.bytes),
        }
    };
    let res = match bench::run(&opts, &files, &mut once) {
        Ok(r) => r,
        Err(e) => return bad(e.to_string()),
    };
    if let Some(p) = &b.plot {
        let title = format!("wf {}", words.join(" "));
        if let Err(e) = std::fs::write(p, bench::svg_titled(&res, &title)) {
            return bad(format!("{}: {e}", p.display()));
        }
    }
    print(
        if b.json {
            bench::json(&res) + "\n"
        } else {
            bench::table(&res)
        }
        .as_bytes(),
    )
}

/// Write to stdout; a closed pipe (`wf ... | head`) is not an error.
fn print(s: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(s).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wf: writing output: {e}");
            ExitCode::from(2)
        }
    }
}

fn cmd_gen(g: &GenCmd) -> ExitCode {
    match g {
        GenCmd::Wf2 {
            size,
            seed,
            odd_lines,
            output,
        } => {
            if !(0.0..=1.0).contains(odd_lines) {
                eprintln!("wf: --odd-lines must be between 0 and 1");
                return ExitCode::from(2);
            }
            let res = match output {
                Some(p) => std::fs::File::create(p).and_then(|f| {
                    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
                    let n = wf::gen::wf2(&mut w, *size, *seed, *odd_lines)?;
                    w.flush()?;
                    Ok(n)
                }),
                None => {
                    let mut w =
                        std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
                    wf::gen::wf2(&mut w, *size, *seed, *odd_lines)
                        .and_then(|n| w.flush().map(|_| n))
                }
            };
            match res {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("wf: gen: {}", scan::io_message(&e));
                    ExitCode::from(2)
                }
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match &cli.cmd {
        Cmd::Count { .. } | Cmd::Wf2 { .. } | Cmd::Pangram { .. } => cmd_job(&cli.cmd),
        Cmd::Bench(b) => cmd_bench(b),
        Cmd::Feed(f) => cmd_feed(f),
        Cmd::Gen(g) => cmd_gen(g),
    }
}
