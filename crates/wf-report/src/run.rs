//! `wf report` as one library call: the format read from the start of the
//! first input that is a web log, the scan, the report. The Python package (`widefinder.report`)
//! calls [`run`]; the CLI calls its parts, [`job`], [`prepare`] and
//! [`report`], around the scan of `--since`/`--until`/`--state` (which live
//! in the CLI with `count`'s and `wf2`'s), so the two cannot choose a format,
//! count or build the report differently; each only renders the result.

use std::io::Read;
use std::sync::Arc;

use wf_core::scan::{self, Decoded, Input, InputError, Progress, ScanOptions, Source};

use crate::acc::{Acc, InputLines};
use crate::report::{self, Meta, Report};
use crate::spill::{self, SpillError};
use crate::{BotMode, ReportJob};

/// What a report is asked for, besides its inputs and the scan's options.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--format`: `auto` (detected from the start of the first input that
    /// is a web log; combined on a stream), or any format `wf sql` reads.
    pub format: String,
    pub bots: BotMode,
    /// Rows per panel (`--max-rows`).
    pub max_rows: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            format: "auto".into(),
            bots: BotMode::Include,
            max_rows: 1000,
        }
    }
}

/// A format the report cannot use.
#[derive(Debug)]
pub enum SetupError {
    /// `--format` names no format the report reads: the spec as given.
    Unknown(String),
    /// `--format` names a format that cannot be made (or `auto` recognised
    /// none).
    Format(wf_formats::FormatError),
    /// A JSON-lines mapping (`json:name=path,...`) that cannot be used.
    Mapping(crate::mapped::MappingError),
    /// The format lacks a column the report needs.
    Columns(crate::FormatError),
    /// `--format auto` found no web log at the start of `input`, which
    /// reads as `format` (csv, fields, ...).
    NoWebLog { input: String, format: String },
    /// A spill of `--memory` could not be read back.
    Spill(crate::spill::SpillError),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Unknown(spec) => unknown(spec, f),
            SetupError::Format(e) => e.fmt(f),
            SetupError::Mapping(e) => e.fmt(f),
            SetupError::Columns(e) => e.fmt(f),
            SetupError::NoWebLog { input, format } => write!(
                f,
                "auto: {input} starts as no web log wf report reads (its lines read as \
                 {format}): give its format, e.g. --format apache:'%h %l %u %t \"%r\" %>s %b' \
                 (wf report --help lists them)"
            ),
            SetupError::Spill(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SetupError {}

/// The report's formats (not all of `wf sql`'s), and how to write the
/// format string a user gave bare: a GoAccess `--log-format` (`%^`, `%d`,
/// `%R`) is not read, an Apache `LogFormat` or nginx `log_format` needs its
/// prefix.
fn unknown(spec: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    write!(
        f,
        "unknown format '{spec}' (wf report reads auto, combined, common, vcombined, \
         vcommon, nginx-main, combinedio, apache:'LogFormat', nginx:'log_format', caddy, traefik, \
         json:NAME=PATH,...)"
    )?;
    let goaccess = ["%^", "%d", "%R", "%x", "%~"]
        .iter()
        .any(|g| spec.contains(g));
    if goaccess {
        write!(
            f,
            ": GoAccess's log-format specifiers are not read, but for its predefined \
             formats (COMBINED, VCOMBINED, COMMON, VCOMMON, CADDY; the first four's strings too); \
             write the server's own format instead, e.g. apache:'%h %l %u %t \"%r\" %>s %b'"
        )
    } else if spec.contains('%') {
        write!(f, ": an Apache LogFormat is written apache:'{spec}'")
    } else if spec.contains('$') {
        write!(f, ": an nginx log_format is written nginx:'{spec}'")
    } else {
        Ok(())
    }
}

/// A finished report and what the scan says besides it.
pub struct Done {
    pub report: Report,
    /// The merged counts (failed and skipped lines, their offsets).
    pub acc: Acc,
    /// Inputs that could not be read, in full or in part.
    pub errors: Vec<InputError>,
    /// Bytes read.
    pub bytes: u64,
    pub decoded: Decoded,
    /// The inputs' names, in order (failed offsets refer to them).
    pub log_path: Vec<String>,
    /// The format the lines were read in (`--format`, or what `auto` chose).
    pub format: String,
}

impl Done {
    /// [`unread`] of this run.
    pub fn unread(&self) -> Vec<InputError> {
        unread(&self.acc, &self.format, &self.log_path)
    }
}

/// Bytes of the first input read to detect `--format auto`.
const SAMPLE: u64 = 64 << 10;

/// The report's job for `settings` over `inputs`.
pub fn job(inputs: &[Input], settings: &Settings) -> Result<ReportJob, SetupError> {
    // The first input with something in it: a log just rotated is empty
    // (`wf report /var/log/apache2/` read every vhost's lines as combined
    // after an empty access.log, and failed them all).
    let mut heads = inputs.iter().map(|i| (i, sample(i)));
    let sampled = heads.find_map(|(i, s)| s.filter(|s| !s.is_empty()).map(|s| (i, s)));
    let spec = match (settings.format.as_str(), &sampled) {
        // No input, or only empty ones, says nothing: auto is combined there.
        ("auto", None) => "combined",
        (s, _) => s,
    };
    let (first, sample) = match sampled {
        Some((i, s)) => (i.name.clone(), s),
        None => (String::new(), Vec::new()),
    };
    let format: Arc<dyn wf_formats::Format> = match spec {
        // The first web log's format ([`web_log`]): a first input that is
        // no log (`wf report notes.txt access.log`) refused the whole run,
        // where the other order reported the log and failed the notes'
        // lines. Else the detection of `wf sql`, said.
        "auto" => match web_log(&sample).or_else(|| later_web_log(inputs, &first)) {
            Some(f) => f,
            None => {
                let f = crate::format(spec, &sample)?;
                return ReportJob::new(f.clone(), settings.bots).map_err(|_| {
                    let format = f.name();
                    SetupError::NoWebLog {
                        input: first,
                        format,
                    }
                });
            }
        },
        _ => crate::format(spec, &sample)?,
    };
    ReportJob::new(format, settings.bots).map_err(SetupError::Columns)
}

/// A JSON mapping that reads `sample`; else the named web log that reads the
/// most lines as the report counts them (`detect::web_log`: `wf sql`'s
/// detection, which splits only, took a combined log with one odd line in
/// six for common).
fn web_log(sample: &[u8]) -> Option<Arc<dyn wf_formats::Format>> {
    match crate::mapped::Mapped::detect(sample) {
        Some(m) => Some(Arc::new(m)),
        None => wf_formats::detect::web_log(sample).map(|f| Arc::new(f) as _),
    }
}

/// The format of the first input after `first` (by name) whose start is a
/// web log.
fn later_web_log(inputs: &[Input], first: &str) -> Option<Arc<dyn wf_formats::Format>> {
    let later = inputs.iter().skip_while(|i| i.name != first).skip(1);
    later.filter_map(sample).find_map(|s| web_log(&s))
}

/// Reads `inputs` and makes their report.
pub fn run(
    inputs: Vec<Input>,
    settings: &Settings,
    opts: &ScanOptions,
    progress: Option<&Progress>,
) -> Result<Done, SetupError> {
    let job = job(&inputs, settings)?.with_memory(spill::DEFAULT_MEMORY, opts.threads, None);
    prepare(&job);
    let out = scan::run(&job, inputs, opts, progress);
    let log_path: Vec<String> = out.inputs().iter().map(|i| i.name.clone()).collect();
    let (mut state, out) = out.into_parts();
    let report = report(&mut state.acc, &job, settings, out.bytes, log_path.clone())
        .map_err(SetupError::Spill)?;
    Ok(Done {
        format: job.format_name(),
        report,
        acc: state.acc,
        errors: out.errors,
        bytes: out.bytes,
        decoded: out.decoded,
        log_path,
    })
}

/// The errors of a run some of whose inputs had no line read in its
/// format (`format`): each such input named (`names`) with its first failed
/// line's offset; without per-input counts (`acc.inputs` empty: a `--state`
/// run, whose scans' inputs are not `names`), the run when none of its lines
/// read. The report is still made, but the CLI exits 2 and the Python
/// package raises, as GoAccess 1.7 stops (exit 1) when the first lines it
/// tests of a file all fail. A report of no request from a log of
/// thousands, with exit 0, was a wrong answer a script would mail on; and
/// a vhosts' log given beside a combined one, every line of it failed, was
/// one warning about the total.
pub fn unread(acc: &Acc, format: &str, names: &[String]) -> Vec<InputError> {
    let hint = "is that the log's format? (--format; --stats gives the first ones' offsets)";
    let none = |n: u64| format!("none of {n} lines read as {format}");
    let name = |i: usize| names.get(i).map_or("?", String::as_str);
    if acc.inputs.is_empty() {
        if acc.failed == 0 || acc.failed < acc.lines {
            return Vec::new();
        }
        return vec![match acc.failed_at.first() {
            Some(&(i, at)) => {
                let why = format!("{} (the first at byte {at}): {hint}", none(acc.lines));
                InputError::new(name(i), why)
            }
            None => InputError::new("--format", format!("{}: {hint}", none(acc.lines))),
        }];
    }
    let unread = |l: &&InputLines| l.lines > 0 && l.failed == l.lines;
    let inputs = acc.inputs.iter().enumerate();
    inputs
        .filter(|(_, l)| unread(l))
        .map(|(i, l)| {
            let at = l.first_failed;
            InputError::new(
                name(i),
                format!("{} (the first at byte {at}): {hint}", none(l.lines)),
            )
        })
        .collect()
}

/// What to start before `job`'s scan, on a thread of its own while the scan
/// runs: under `--bots exclude|only`, which classify agents as they are
/// read, the agents' rules compile (every rule, ~0.12 s of a core); else
/// only what the rules need is read (`needs`, ~20 ms), and the rules that
/// the log's agents could meet are compiled once the scan ends
/// (`agent::rules_for`).
pub fn prepare(job: &ReportJob) {
    if !job.has_agents() {
        return;
    }
    match job.bots() {
        BotMode::Include => std::thread::spawn(crate::agent::read_needs),
        _ => std::thread::spawn(|| {
            crate::agent::parsers();
        }),
    };
}

/// The report of the merged counts `acc` of `job` (`log_size`: bytes read),
/// with what `job` spilled under `--memory` (`spill`, `combine`).
pub fn report(
    acc: &mut Acc,
    job: &ReportJob,
    settings: &Settings,
    log_size: u64,
    log_path: Vec<String>,
) -> Result<Report, SpillError> {
    let meta = Meta {
        log_size,
        log_path,
        max_rows: settings.max_rows,
        has_vhosts: job.has_vhosts(),
        has_agents: job.has_agents(),
    };
    match job.spill() {
        Some(s) if s.spilled() => crate::combine::report(acc, s, &meta),
        _ => Ok(report::build(acc, &meta)),
    }
}

/// The first bytes of an input (decoded if compressed): of a stream too
/// (stdin, a FIFO by name), whose bytes the scan then reads again
/// (`scan::stream_head`).
fn sample(input: &Input) -> Option<Vec<u8>> {
    let reader: Box<dyn Read> = match &input.source {
        Source::File { path, .. } => Box::new(std::fs::File::open(path).ok()?),
        Source::Compressed { path, codec, .. } => scan::decompress::open(path, *codec).ok()?,
        Source::Stream { path, decompress } => {
            let head = scan::stream_head(path.as_deref(), SAMPLE as usize, *decompress);
            return Some(head);
        }
    };
    let mut buf = Vec::new();
    let _ = reader.take(SAMPLE).read_to_end(&mut buf);
    Some(buf)
}
