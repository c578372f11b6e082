//! The `wf` command line: parses arguments and wires scan, jobs and report
//! together. No reading or computing happens here.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};

use wf::jobs::count::Count;
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
    Count {
        #[command(flatten)]
        scan: ScanArgs,
    },
    /// Generate test data.
    #[command(subcommand)]
    Gen(GenCmd),
}

#[derive(Subcommand)]
enum GenCmd {
    /// Apache combined log lines shaped like the Wide Finder 2 data.
    Wf2 {
        /// Approximate size to write, e.g. 100M or 1G.
        #[arg(long, default_value = "100M", value_parser = scan::parse_size)]
        size: u64,
        /// Random seed: the same seed gives the same bytes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fraction of malformed lines to mix in (0 to 1).
        #[arg(long, default_value_t = 0.0)]
        odd_lines: f64,
        /// Write to FILE instead of standard output.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Input and run options shared by every job.
#[derive(Args, Clone)]
struct ScanArgs {
    /// Files and directories (walked recursively); `-` or nothing for stdin.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Read more paths from FILE, one per line (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Follow symbolic links while walking directories.
    #[arg(short = 'L', long = "follow")]
    follow: bool,
    /// Worker threads [default: number of cores].
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
    /// Do not ask the kernel to read queued chunks ahead (posix_fadvise).
    #[arg(long)]
    no_readahead: bool,
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

impl ScanArgs {
    fn options(&self) -> ScanOptions {
        let mut o = ScanOptions::default();
        if let Some(j) = self.threads {
            o.threads = j.max(1);
        }
        o.chunk_size = self.chunk_size;
        o.inflight = self.io.unwrap_or(0);
        o.readahead = !self.no_readahead;
        o.mmap = self.mmap;
        o
    }
}

/// Collect inputs, run a job with a progress bar, and print errors and stats.
/// Returns the outcome and the run's measurements, or `None` if nothing ran.
fn run_job<J: Job>(
    job: &J,
    args: &ScanArgs,
    opts: &ScanOptions,
) -> (Outcome<J::State>, Vec<InputError>, RunStats) {
    let t0 = Instant::now();
    let u0 = Usage::now();
    let collected = scan::InputSpec {
        paths: args.paths.clone(),
        files_from: args.files_from.clone(),
        follow_links: args.follow,
    }
    .collect();
    let progress = Progress::default();
    let show = report::stats::want_progress(args.progress, args.no_progress);
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let bar = show.then(|| report::stats::progress_bar(s, &progress, &stop));
        let out = scan::run(job, collected.inputs, opts, Some(&progress));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(b) = bar {
            let _ = b.join();
        }
        out
    });
    let mut errors = collected.errors;
    errors.extend(outcome.errors.iter().cloned());
    for e in &errors {
        eprintln!("wf: {e}");
    }
    let stats = RunStats::between(
        &u0,
        &Usage::now(),
        t0.elapsed(),
        outcome.bytes,
        opts.threads,
    );
    (outcome, errors, stats)
}

fn finish(errors: &[InputError], stats: &RunStats, show_stats: bool) -> ExitCode {
    if show_stats {
        eprint!("{}", stats.text());
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn print(s: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wf: writing output: {e}");
            ExitCode::from(2)
        }
    }
}

fn cmd_count(args: &ScanArgs) -> ExitCode {
    let opts = args.options();
    let job = Count { sep: opts.sep };
    let (out, errors, mut stats) = run_job(&job, args, &opts);
    stats.records = Some(out.state.records);
    let line = if args.json {
        report::count::json(&out.state, out.files)
    } else {
        report::count::text(&out.state, out.files)
    };
    let code = print(&(line + "\n"));
    let fin = finish(&errors, &stats, args.stats);
    if code != ExitCode::SUCCESS {
        code
    } else {
        fin
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
        Cmd::Count { scan } => cmd_count(scan),
        Cmd::Gen(g) => cmd_gen(g),
    }
}
