use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser};

use wf_core::bench::{self, BenchOptions, SettingResult};

use super::limits;
use super::output::print;
use super::Cli;

// `wf bench`: its help is on `Cmd::Bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Cache states to measure: cold, warm or both.
    #[arg(long, default_value = "warm", value_name = "STATE")]
    cache: String,
    /// Thread counts to sweep, e.g. 1,2,4,8, each at most 1024 [default: the job's -j].
    #[arg(long, value_name = "LIST")]
    threads: Option<String>,
    /// Reads in flight (queued chunks) to sweep, e.g. 2,8,32, each at most 4096.
    #[arg(long, value_name = "LIST")]
    io: Option<String>,
    /// Read strategies to compare: pread, mmap.
    #[arg(long, value_name = "LIST")]
    read: Option<String>,
    /// Timed runs per setting (1 to 10000).
    #[arg(long, default_value = "5", value_name = "N", value_parser = limits::runs)]
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
    /// The job (count, wf2, pangram or report) and its arguments, e.g. `wf2 access.log` (a
    /// leading `wf` is allowed).
    #[arg(last = true, required = true, value_name = "JOB")]
    job: Vec<String>,
}

/// `wf bench`: any error is named on stderr and exits 2; an input that cannot be
/// read is named once and the rest measured (exit 2 at the end), as the jobs do.
pub(crate) fn run(b: &BenchArgs) -> ExitCode {
    match measure(b) {
        Ok(code) => code,
        Err(m) => {
            wf_core::warn!("wf bench: {m}");
            ExitCode::from(2)
        }
    }
}

/// Parse the sweep and the job, run the sweep, write the plot, print the results.
fn measure(b: &BenchArgs) -> Result<ExitCode, String> {
    let mut opts = b.sweep()?;
    let words = b.job_words();
    let sub = parse_job(words)?;
    let cmd = sub
        .cmd
        .scan_job()
        .ok_or("can measure count, wf2, pangram and report")?;
    let base = cmd.scan_args().options();
    if let Some(p) = &b.plot {
        // Its last plot in a directory the job walks is no input.
        wf_core::scan::leave_out_of_walks(p);
    }
    let collected = cmd.scan_args().input.collect();
    if let Some(p) = &b.plot {
        plot_allowed(p, &collected.inputs)?;
    }
    let files = input_files(collected)?;
    if opts.threads.is_empty() {
        opts.threads = vec![base.threads];
    }
    // Every run meets the same unreadable inputs: each is named the first time.
    let mut named = HashSet::new();
    let mut once = |s: &bench::Setting| -> std::io::Result<u64> {
        let r = cmd.exec(&s.scan_options(&base), None);
        for e in &r.errors {
            if named.insert(e.to_string()) {
                wf_core::warn!("wf bench: {e}");
            }
        }
        Ok(r.bytes)
    };
    let res = bench::run(&opts, &files, &mut once).map_err(|e| e.to_string())?;
    if let Some(p) = &b.plot {
        write_plot(p, &res, words)?;
    }
    let code = print(
        if b.json {
            bench::json(&res) + "\n"
        } else {
            bench::table(&res)
        }
        .as_bytes(),
    );
    Ok(if named.is_empty() {
        code
    } else {
        ExitCode::from(2)
    })
}

impl BenchArgs {
    /// What to sweep and how often; `threads` is empty without --threads.
    fn sweep(&self) -> Result<BenchOptions, String> {
        let caches = bench::Cache::parse_list(&self.cache).map_err(|e| e.to_string())?;
        let list = |s: &Option<String>, max, what| {
            s.as_deref()
                .map(|s| limits::counts_upto(s, max, what))
                .transpose()
        };
        let threads = list(&self.threads, limits::MAX_THREADS, "--threads")?.unwrap_or_default();
        let io = list(&self.io, limits::MAX_IO, "--io")?.unwrap_or_default();
        let reads = self.read.as_deref().map(bench::parse_reads);
        let reads = reads.transpose().map_err(|e| e.to_string())?;
        if self.runs == 0 {
            return Err("--runs must be at least 1".into());
        }
        Ok(BenchOptions {
            caches,
            threads,
            io: io.into_iter().map(Some).collect(),
            reads: reads.unwrap_or_default().into_iter().map(Some).collect(),
            runs: self.runs,
            drop_caches: self.drop_caches,
            verbose: self.verbose,
        })
    }

    /// The job's words, without a leading `wf`.
    fn job_words(&self) -> &[String] {
        if self.job.first().map(String::as_str) == Some("wf") {
            &self.job[1..]
        } else {
            &self.job[..]
        }
    }
}

/// The job to measure, parsed as `wf` would parse it.
fn parse_job(words: &[String]) -> Result<Cli, String> {
    Cli::try_parse_from(std::iter::once("wf").chain(words.iter().map(String::as_str)))
        .map_err(|e| format!("the job to measure: {e}"))
}

/// The job's regular input files: those a cold run can evict.
fn input_files(collected: wf_core::scan::Collected) -> Result<Vec<PathBuf>, String> {
    let files = bench::input_files(&collected.inputs);
    if !files.is_empty() {
        return Ok(files);
    }
    let why: Vec<String> = collected.errors.iter().map(|e| e.to_string()).collect();
    Err(if why.is_empty() {
        "the job names no regular file to measure".into()
    } else {
        format!(
            "the job names no regular file to measure ({})",
            why.join("; ")
        )
    })
}

/// `--plot FILE` may be written: it ends in .svg, and it is none of the
/// job's inputs (a log named by mistake would be replaced by the plot after
/// being measured, as `wf report -o access.log access.log` replaced a log).
/// Asked before anything is run.
fn plot_allowed(p: &Path, inputs: &[wf_core::scan::Input]) -> Result<(), String> {
    super::output::writable(p, "the plot", &["svg"], inputs).map_err(|e| format!("--plot {e}"))
}

/// Throughput against threads as SVG, titled with the job's command line.
fn write_plot(p: &Path, res: &[SettingResult], words: &[String]) -> Result<(), String> {
    let title = format!("wf {}", words.join(" "));
    std::fs::write(p, bench::svg_titled(res, &title)).map_err(|e| format!("{}: {e}", p.display()))
}
