use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use wf_core::feed::{FeedOptions, FeedReport, TimeFilter};
use wf_core::report::stats::{RunStats, Usage};
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
    /// After the run, print on stderr the bytes read and handed on, the time
    /// taken, and with --since/--until the records kept and left out and, per
    /// input, whether it was searched (the bytes read) or read whole. E.g.
    /// `wf feed --since -1h --stats access.log -- wc -l`.
    #[arg(long)]
    stats: bool,
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
    let mut opts = f.options();
    // --since/--until: the records filtered as they are handed on (see
    // `window`); followed files come as one live stream, filtered so.
    let filter = match f.time.window() {
        None => None,
        Some(w) => match f.time_format.time_format(&f.input) {
            Ok(format) => Some((w, format)),
            Err(e) => {
                wf_core::warn!("wf feed: {e}");
                return ExitCode::from(2);
            }
        },
    };
    opts.window = filter.map(|(w, format)| TimeFilter {
        since: w.since,
        until: w.until,
        format,
    });
    if f.follow.on() {
        return super::follow::feed(&f.follow, &f.input, opts);
    }
    let (t0, u0) = (Instant::now(), Usage::now());
    let mut collected = f.input.collect();
    for e in &collected.errors {
        wf_core::warn!("wf: {e}");
    }
    // Each regular file's span only (see `window`).
    let searched =
        filter.map(|(w, format)| window::narrow(&mut collected.inputs, &w, format, &opts));
    let result = wf_core::feed::run(collected.inputs, &opts);
    let code = match &result {
        Ok(r) => {
            for e in &r.input_errors {
                wf_core::warn!("wf: {e}");
            }
            // A window none of whose records had a time: an error, as for
            // the other jobs (the workers were handed nothing, exit 0).
            let none = match (r.window, opts.window.as_ref()) {
                (Some(w), Some(f)) => {
                    super::time::none_timed(w.kept + w.outside, w.untimed, f.format)
                }
                _ => None,
            };
            if let Some(e) = &none {
                wf_core::warn!("wf: {e}");
            }
            if none.is_none()
                && collected.errors.is_empty()
                && r.input_errors.is_empty()
                && r.failures.is_empty()
            {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(e) => {
            wf_core::warn!("wf feed: {e}");
            ExitCode::from(2)
        }
    };
    if let (true, Ok(r)) = (f.stats, &result) {
        print_stats(r, searched, (t0, u0), opts.workers);
    }
    code
}

/// `--stats`: bytes handed on, and under --since/--until the records kept
/// and left out and what the time search read.
fn print_stats(
    r: &FeedReport,
    searched: Option<window::Searched>,
    (t0, u0): (Instant, Usage),
    workers: usize,
) {
    let mut st = RunStats::between(&u0, &Usage::now(), t0.elapsed(), r.bytes, workers);
    st.extra.push(("blocks".into(), r.blocks));
    if let Some(w) = r.window {
        st.records = Some(w.kept);
        st.extra
            .push(("records outside the time range".into(), w.outside));
        st.extra.push(("records without a time".into(), w.untimed));
    }
    let mut text = st.text();
    if let Some(s) = searched {
        for (k, v) in s.extra {
            text.push_str(&format!("{k}: {v}\n"));
        }
        for l in s.lines {
            text.push_str(&l);
            text.push('\n');
        }
    }
    wf_core::report::warn::text(&text);
}
