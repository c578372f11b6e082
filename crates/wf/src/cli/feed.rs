use std::process::ExitCode;

use clap::Args;

use wf::feed::FeedOptions;
use wf::scan;

use super::args::InputArgs;

// `wf feed`: its help is on `Cmd::Feed`.
#[derive(Args)]
pub(crate) struct FeedArgs {
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

impl FeedArgs {
    fn options(&self) -> FeedOptions {
        let mut opts = FeedOptions {
            block: self.block,
            command: self.command.clone(),
            combine: self.combine.clone(),
            per_block: self.per_block || self.keep_order,
            keep_order: self.keep_order,
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

/// `wf feed`: the inputs to the workers; exit status 2 if any input could not be
/// read or any worker failed (`wf::feed` has reported it on stderr).
pub(crate) fn run(f: &FeedArgs) -> ExitCode {
    let collected = f.input.collect();
    let opts = f.options();
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
