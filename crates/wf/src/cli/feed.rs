use std::process::ExitCode;

use clap::Args;

use wf_core::feed::FeedOptions;
use wf_core::scan;

use super::args::InputArgs;

mod window;

// `wf feed`: its help is on `Cmd::Feed`.
#[derive(Args)]
pub(crate) struct FeedArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Worker processes, at most 1024 [default, or 0: number of cores].
    #[arg(
        short = 'j',
        long = "jobs",
        visible_alias = "threads",
        value_name = "N",
        value_parser = parse_jobs
    )]
    jobs: Option<usize>,
    /// About this many bytes per block, cut after a record end.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = scan::parse_size)]
    block: u64,
    /// Longest record given to a worker (without its separator). A longer one
    /// is given to no worker: it is named on stderr with its input and byte
    /// offset, the rest is fed, and the exit status is 2. wf holds a record
    /// whole before writing it, so this bounds wf's memory per worker.
    /// E.g. --max-record 64M.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = scan::parse_size)]
    max_record: u64,
    /// Record separator: one byte, e.g. '\0', '\t', ';' [default: newline].
    #[arg(long, value_name = "BYTE", value_parser = wf_core::feed::parse_rs)]
    rs: Option<u8>,
    /// Output separator: worker output reaches stdout in whole units ending with
    /// this byte, never mixed inside one [default: the --rs byte]. Use --ors '\n'
    /// when workers read other records but print lines.
    #[arg(long, value_name = "BYTE", value_parser = wf_core::feed::parse_rs)]
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
    #[command(flatten)]
    follow: super::follow::FollowArgs,
    /// The worker command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
    /// --since/--until: the workers get only the records of the window, e.g.
    /// `wf feed --since -1h access.log -- wc -l`.
    #[command(flatten)]
    time: super::time::TimeArgs,
    #[command(flatten)]
    time_format: super::time::FormatArg,
}

impl FeedArgs {
    fn options(&self) -> FeedOptions {
        let mut opts = FeedOptions {
            block: self.block,
            command: self.command.clone(),
            combine: self.combine.clone(),
            per_block: self.per_block || self.keep_order,
            keep_order: self.keep_order,
            max_record: self.max_record,
            ..Default::default()
        };
        if let Some(j) = self.jobs.filter(|&j| j > 0) {
            opts.workers = j;
        }
        if let Some(rs) = self.rs {
            opts.sep = rs;
        }
        opts.out_sep = self.ors;
        opts
    }
}

/// `-j N`: a number of workers up to [`wf_core::feed::MAX_WORKERS`] (0: the cores).
fn parse_jobs(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("invalid number of workers '{s}'"))?;
    if n > wf_core::feed::MAX_WORKERS {
        return Err(format!(
            "{n} workers is too many: at most {} processes",
            wf_core::feed::MAX_WORKERS
        ));
    }
    Ok(n)
}

/// `wf feed`: the inputs to the workers; exit status 2 if any input could not be
/// read or any worker failed (`wf_core::feed` has reported it on stderr).
pub(crate) fn run(f: &FeedArgs) -> ExitCode {
    if f.follow.on() {
        if f.time.window().is_some() {
            wf_core::warn!("wf feed: --follow does not take --since/--until yet");
            return ExitCode::from(2);
        }
        return super::follow::feed(&f.follow, &f.input, f.options());
    }
    let mut collected = f.input.collect();
    let opts = f.options();
    for e in &collected.errors {
        wf_core::warn!("wf: {e}");
    }
    // --since/--until: the window's records through a pipe (see `window`).
    let narrowed = match f.time.window() {
        Some(w) => {
            let inputs = std::mem::take(&mut collected.inputs);
            let fmt = match f.time_format.time_format(&f.input) {
                Ok(fmt) => fmt,
                Err(e) => {
                    wf_core::warn!("wf feed: {e}");
                    return ExitCode::from(2);
                }
            };
            match window::narrow(inputs, w, fmt, opts.sep, opts.max_record) {
                Ok(n) => Some(n),
                Err(e) => {
                    wf_core::warn!("wf feed: --since/--until: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    if let Some(n) = &narrowed {
        collected.inputs = vec![n.input.clone()];
    }
    let result = wf_core::feed::run(collected.inputs, &opts);
    let window_errors = narrowed.map(|n| n.finish()).unwrap_or_default();
    window_errors.iter().for_each(|e| wf_core::warn!("wf: {e}"));
    collected.errors.extend(window_errors);
    match result {
        Ok(r) => {
            for e in &r.input_errors {
                wf_core::warn!("wf: {e}");
            }
            if collected.errors.is_empty() && r.input_errors.is_empty() && r.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(e) => {
            wf_core::warn!("wf feed: {e}");
            ExitCode::from(2)
        }
    }
}
