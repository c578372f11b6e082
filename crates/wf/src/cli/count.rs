use std::process::ExitCode;

use clap::Args;

use wf_core::jobs::count::{Count, CountState};
use wf_core::report;
use wf_core::scan::{Progress, ScanOptions};

use super::args::ScanArgs;
use super::follow::{self, FollowArgs, JobFollow};
use super::job::{JobCmd, JobRun};
use super::pending;
use super::state::{self, StateArg};
use super::time::{FormatArg, TimeArgs};

// `wf count`: its help is on `Cmd::Count`.
#[derive(Args)]
pub(crate) struct CountArgs {
    #[command(flatten)]
    scan: ScanArgs,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    follow: FollowArgs,
}

impl CountArgs {
    /// `wf count`, or `wf count --follow`.
    pub(crate) fn run(&self) -> ExitCode {
        if !self.follow.on() {
            return super::job::run(self);
        }
        let format = match self.format.time_format(&self.scan.input) {
            Ok(f) => f,
            Err(e) => {
                wf_core::warn!("wf: {e}");
                return ExitCode::from(2);
            }
        };
        let json = self.scan.json;
        let render = |st: CountState, files: u64| {
            let line = if json {
                report::count::json(&st, files)
            } else {
                report::count::text(&st, files)
            };
            (line + "\n").into_bytes()
        };
        let state = self.state.on();
        let cx = JobFollow::new(&self.scan, &self.time, state, &self.follow, format);
        let sep = self.scan.options().sep;
        follow::run(Count { sep }, cx, &render)
    }
}

impl JobCmd for CountArgs {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let job = Count { sep: opts.sep };
        let format = match self.format.time_format(&self.scan.input) {
            Ok(f) => f,
            Err(e) => return JobRun::failed(e),
        };
        let run = state::Run::new(&self.scan, &self.time, format, opts, progress);
        let out = match self
            .state
            .scan(job, run, vec![("--format".into(), format!("{format:?}"))])
        {
            Ok(out) => out,
            Err(e) => return JobRun::failed(e),
        };
        let mut errors = out.errors;
        pending::settle(&mut errors, out.pending);
        let line = if self.scan.json {
            report::count::json(&out.state, out.files)
        } else {
            report::count::text(&out.state, out.files)
        };
        JobRun {
            output: (line + "\n").into_bytes(),
            errors,
            bytes: out.bytes,
            records: Some(out.state.records),
            extra: out.extra,
            decoded: out.decoded,
        }
    }
}
