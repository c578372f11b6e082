use std::io::Read;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use wf_core::scan::{self, InputError, Progress, ScanOptions, Source};
use wf_report::report::Meta;
use wf_report::{BotMode, ReportJob};

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
    /// --format "nginx:\$remote_addr - \$remote_user [\$time_local] \"\$request\" \$status \$body_bytes_sent".
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

/// Bytes of the first input read to detect `--format auto`.
const SAMPLE: u64 = 64 << 10;

impl JobCmd for ReportArgs {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let collected = self.scan.input.collect();
        let mut errors = collected.errors;
        let job = match self.job(&collected.inputs) {
            Ok(j) => j,
            Err(message) => return failed(errors, "--format", message),
        };
        let out = scan::run(&job, collected.inputs, opts, progress);
        errors.extend(out.errors.iter().cloned());
        let meta = Meta {
            log_size: out.bytes,
            log_path: out.inputs().iter().map(|i| i.name.clone()).collect(),
            max_rows: self.max_rows,
            has_vhosts: job.has_vhosts(),
        };
        let (bytes, decoded) = (out.bytes, out.decoded);
        let acc = out.state.acc;
        let r = wf_report::report::build(&acc, &meta);
        let mut extra = vec![
            ("lines failed".to_string(), acc.failed),
            ("lines skipped (blank or #)".to_string(), acc.skipped),
        ];
        for (input, offset) in &acc.failed_at {
            let name = meta.log_path.get(*input).map_or("?", String::as_str);
            extra.push((format!("failed line at byte offset of {name}"), *offset));
        }
        let output = match self.render(&r, &meta.log_path) {
            Ok(o) => o,
            Err(e) => {
                errors.push(e);
                Vec::new()
            }
        };
        let records = Some(acc.lines + acc.skipped);
        // The counts' millions of small allocations are freed on a thread of
        // their own while the report is printed (freeing them took as long as
        // the scan's counting, perf on 32 MB); the process may end first.
        std::thread::spawn(move || drop(acc));
        JobRun {
            output,
            errors,
            bytes,
            records,
            extra,
            decoded,
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
    fn job(&self, inputs: &[scan::Input]) -> Result<ReportJob, String> {
        let sample = inputs.first().and_then(sample);
        let spec = match (self.format.as_str(), &sample) {
            // A stream cannot be read twice: auto is combined there.
            ("auto", None) => "combined",
            (s, _) => s,
        };
        let sample = sample.unwrap_or_default();
        let format = wf_report::format(spec, &sample).map_err(|e| e.to_string())?;
        let bots = match self.bots {
            Bots::Include => BotMode::Include,
            Bots::Exclude => BotMode::Exclude,
            Bots::Only => BotMode::Only,
        };
        ReportJob::new(format, bots).map_err(|e| e.to_string())
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

/// The first bytes of a file input (decoded if compressed); `None` for a
/// stream, which cannot be read twice.
fn sample(input: &scan::Input) -> Option<Vec<u8>> {
    let reader: Box<dyn Read> = match &input.source {
        Source::File { path, .. } => Box::new(std::fs::File::open(path).ok()?),
        Source::Compressed { path, codec, .. } => scan::decompress::open(path, *codec).ok()?,
        Source::Stream { .. } => return None,
    };
    let mut buf = Vec::new();
    let _ = reader.take(SAMPLE).read_to_end(&mut buf);
    Some(buf)
}
