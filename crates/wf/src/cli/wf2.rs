use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;

use wf_core::jobs::wf2::{Wf2, Wf2State};
use wf_core::report;
use wf_core::scan::{Progress, ScanOptions};

use super::args::ScanArgs;
use super::follow::{self, FollowArgs, JobFollow};
use super::job::{JobCmd, JobRun};
use super::pending;
use super::state::{self, StateArg};
use super::time::TimeArgs;
use wf_core::jobs::time::TimeFormat;

// `wf wf2`: its help is on `Cmd::Wf2`.
#[derive(Args)]
pub(crate) struct Wf2Args {
    #[command(flatten)]
    scan: ScanArgs,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    follow: FollowArgs,
    /// Length of each top list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
}

impl Wf2Args {
    /// `wf wf2`, or `wf wf2 --follow`.
    pub(crate) fn run(&self) -> ExitCode {
        if !self.follow.on() {
            return super::job::run(self);
        }
        let (json, top) = (self.scan.json, self.top);
        let render = |st: Wf2State, _files: u64| {
            let r = Wf2.finish(st, top);
            if json {
                (report::wf2::json(&r) + "\n").into_bytes()
            } else {
                report::wf2::text(&r, std::io::stdout().is_terminal())
            }
        };
        let state = self.state.on();
        let cx = JobFollow::new(&self.scan, &self.time, state, &self.follow, TimeFormat::Clf);
        follow::run(Wf2, cx, &render)
    }
}

impl JobCmd for Wf2Args {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let format = TimeFormat::Clf;
        let run = state::Run::new(&self.scan, &self.time, format, opts, progress);
        let out = match self.state.scan(Wf2, run, vec![]) {
            Ok(out) => out,
            Err(e) => return JobRun::failed(e),
        };
        let (bytes, decoded, mut errors) = (out.bytes, out.decoded, out.errors);
        // The new state is synced and renamed while the lists are chosen.
        let r = Wf2.finish(out.state, self.top);
        pending::settle(&mut errors, out.pending);
        let output = if self.scan.json {
            (report::wf2::json(&r) + "\n").into_bytes()
        } else {
            report::wf2::text(&r, std::io::stdout().is_terminal())
        };
        JobRun {
            output,
            errors,
            bytes,
            records: Some(r.lines),
            extra: [
                ("lines not GET".into(), r.not_get),
                ("lines with too few fields".into(), r.too_few_fields),
            ]
            .into_iter()
            .chain(out.extra)
            .collect(),
            decoded,
        }
    }
}
