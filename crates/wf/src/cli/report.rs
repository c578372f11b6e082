use std::path::PathBuf;

use clap::{Args, ValueEnum};

use wf_core::scan::{InputError, Progress, ScanOptions};
use wf_report::run::Settings;
use wf_report::BotMode;

use super::args::ScanArgs;
use super::job::{JobCmd, JobRun};

// `wf report`: its help is on `Cmd::Report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// The log format: auto (detected from the first file's start; combined
    /// on stdin), combined, common, vcombined, apache:'LogFormat' or
    /// nginx:'log_format' (as wf sql reads them), e.g.
    /// --format "nginx:\$remote_addr - \$remote_user [\$time_local] \"\$request\" \$status \$body_bytes_sent";
    /// or JSON lines: caddy (Caddy's JSON access log), traefik (Traefik's), or
    /// json:NAME=PATH,... mapping keys (dot-separated paths, alternatives
    /// with |) to client, time, request (or method, uri, protocol), status,
    /// bytes, referrer, user_agent, vhost, e.g.
    /// --format 'json:client=remote_addr,time=ts,request=req,status=code,bytes=size'.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    format: String,
    /// Write the report to FILE: JSON if it ends in .json, else one
    /// self-contained HTML page (e.g. -o report.html).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Rows per panel in the terminal report.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Rows per panel in --json, -o report.json and the HTML page (totals
    /// count every row).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_rows: usize,
    /// Crawlers and bots in the panels: include them (as GoAccess does),
    /// exclude them, or show only them. The overview counts both apart.
    #[arg(long, value_name = "WHICH", value_enum, default_value_t = Bots::Include)]
    bots: Bots,
}

#[derive(Clone, Copy, ValueEnum)]
enum Bots {
    Include,
    Exclude,
    Only,
}

impl JobCmd for ReportArgs {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let collected = self.scan.input.collect();
        let mut errors = collected.errors;
        let done = match wf_report::run::run(collected.inputs, &self.settings(), opts, progress) {
            Ok(d) => d,
            Err(e) => return failed(errors, "--format", e.to_string()),
        };
        errors.extend(done.errors);
        let acc = done.acc;
        let mut extra = vec![
            ("lines failed".to_string(), acc.failed),
            ("lines skipped (blank or #)".to_string(), acc.skipped),
        ];
        for (input, offset) in &acc.failed_at {
            let name = done.log_path.get(*input).map_or("?", String::as_str);
            extra.push((format!("failed line at byte offset of {name}"), *offset));
        }
        let output = match self.render(&done.report, &done.log_path) {
            Ok(o) => o,
            Err(e) => {
                errors.push(e);
                Vec::new()
            }
        };
        let records = Some(acc.lines + acc.skipped);
        // The counts' allocations are freed on a thread of their own while
        // the report is printed; the process may end first.
        std::thread::spawn(move || drop(acc));
        JobRun {
            output,
            errors,
            bytes: done.bytes,
            records,
            extra,
            decoded: done.decoded,
        }
    }
}

fn failed(mut errors: Vec<InputError>, name: &str, message: String) -> JobRun {
    errors.push(InputError::new(name, message));
    JobRun {
        output: Vec::new(),
        errors,
        bytes: 0,
        records: None,
        extra: Vec::new(),
        decoded: Default::default(),
    }
}

impl ReportArgs {
    fn settings(&self) -> Settings {
        Settings {
            format: self.format.clone(),
            bots: match self.bots {
                Bots::Include => BotMode::Include,
                Bots::Exclude => BotMode::Exclude,
                Bots::Only => BotMode::Only,
            },
            max_rows: self.max_rows,
        }
    }

    /// Stdout's bytes; with -o, the file is written and stdout gets nothing.
    fn render(&self, r: &wf_report::Report, paths: &[String]) -> Result<Vec<u8>, InputError> {
        let json = || wf_report::report::json(r);
        let Some(path) = &self.output else {
            return Ok(if self.scan.json {
                json().into_bytes()
            } else {
                wf_report::output::text(r, self.top).into_bytes()
            });
        };
        let body = if path.extension().is_some_and(|e| e == "json") {
            json()
        } else {
            let title = format!("wf report: {}", paths.join(", "));
            wf_report::html::render(&wf_report::output::page(r, &title))
        };
        std::fs::write(path, body).map_err(|e| InputError::io(path.display().to_string(), &e))?;
        Ok(Vec::new())
    }
}
