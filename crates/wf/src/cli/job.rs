//! What the scan-job commands (count, wf2, pangram) share: one run of a job
//! ([`JobCmd::exec`], also used in-process and repeatedly by `wf bench`), and the
//! command around it: progress bar, output, errors, `--stats` and exit status.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use wf_core::jobs::Job;
use wf_core::report;
use wf_core::report::stats::{RunStats, Usage};
use wf_core::scan::{self, InputError, Outcome, Progress, ScanOptions};

use super::args::ScanArgs;
use super::output::print;

/// What one run of a job produced.
pub(crate) struct JobRun {
    /// What to print on stdout (bytes: the wf2 text report prints keys raw).
    pub(crate) output: Vec<u8>,
    pub(crate) errors: Vec<InputError>,
    pub(crate) bytes: u64,
    pub(crate) records: Option<u64>,
    /// Job-specific `--stats` counters.
    pub(crate) extra: Vec<(String, u64)>,
    /// The decoding of compressed inputs.
    pub(crate) decoded: scan::Decoded,
}

impl JobRun {
    /// A run that did not start: no output, one error (exit status 2).
    pub(crate) fn failed(e: InputError) -> JobRun {
        JobRun {
            output: Vec::new(),
            errors: vec![e],
            bytes: 0,
            records: None,
            extra: Vec::new(),
            decoded: scan::Decoded::default(),
        }
    }
}

/// A command that runs one scan job.
pub(crate) trait JobCmd {
    /// Its input and scan arguments.
    fn scan_args(&self) -> &ScanArgs;
    /// Run the job once with the given options and render its result.
    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun;
    /// Its `--memory`, if it has one and it was given (it bounds the
    /// records held whole, [`ScanArgs::options_within`]).
    fn memory(&self) -> Option<u64> {
        None
    }
}

/// Collect the inputs of `args` and scan them with `job`; the errors are those of
/// collecting the inputs, then those of reading them.
pub(crate) fn scan<J: Job>(
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

/// A job command: run it with a progress bar, print its output, errors and stats.
pub(crate) fn run(cmd: &dyn JobCmd) -> ExitCode {
    let args = cmd.scan_args();
    let opts = args.options_within(cmd.memory());
    let t0 = Instant::now();
    let u0 = Usage::now();
    let show = report::stats::want_progress(args.progress, args.no_progress);
    let run = exec_with_progress(cmd, &opts, show);
    for e in &run.errors {
        wf_core::warn!("wf: {e}");
    }
    let code = print(&run.output);
    let failed = code != ExitCode::SUCCESS || !run.errors.is_empty();
    if args.stats {
        let mut st = RunStats::between(&u0, &Usage::now(), t0.elapsed(), run.bytes, opts.threads);
        st.records = run.records;
        st.extra = run.extra;
        st.decoded = run.decoded;
        wf_core::report::warn::text(&st.text());
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// Run the job once, with a progress bar on stderr while it runs if `show`.
fn exec_with_progress(cmd: &dyn JobCmd, opts: &ScanOptions, show: bool) -> JobRun {
    let progress = Progress::default();
    with_progress(show, &progress, || cmd.exec(opts, Some(&progress)))
}

/// Run `f`, with a progress bar of `progress` on stderr while it runs if `show`.
pub(crate) fn with_progress<T>(show: bool, progress: &Progress, f: impl FnOnce() -> T) -> T {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let bar = show.then(|| report::stats::progress_bar(s, progress, &stop));
        let r = f();
        stop.store(true, Ordering::Relaxed);
        if let Some(b) = bar {
            let _ = b.join();
        }
        r
    })
}
