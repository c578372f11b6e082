use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use wf_core::jobs::time::{Reader, TimeFormat};
use wf_core::scan::{InputError, Progress, ScanOptions};
use wf_report::job::ReportState;
use wf_report::resolve::Resolver;
use wf_report::run::Settings;
use wf_report::{BotMode, ReportJob};

use super::args::ScanArgs;
use super::follow::{self, FollowArgs, JobFollow, Seen};
use super::job::{JobCmd, JobRun};
use super::pending;
use super::state::{self, StateArg};
use super::time::TimeArgs;

// `wf report`: its help is on `Cmd::Report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    scan: ScanArgs,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    state: StateArg,
    #[command(flatten)]
    follow: FollowArgs,
    /// The log format: auto (detected from the start of the first input that
    /// is a web log, stdin's too, the web log format that reads most of it when a few lines are
    /// bad; combined on a FIFO), combined, common, vcombined, vcommon, nginx-main (nginx's default
    /// `main`: combined and "$http_x_forwarded_for"), combinedio (Apache's
    /// combined and %I %O), apache:'LogFormat' or
    /// nginx:'log_format' (as wf sql reads them), e.g.
    /// --format "nginx:\$remote_addr - \$remote_user [\$time_local] \"\$request\" \$status \$body_bytes_sent";
    /// or JSON lines: caddy (Caddy's JSON access log), traefik (Traefik's), or
    /// json:NAME=PATH,... mapping keys (dot-separated paths, alternatives
    /// with |) to client, time, request (or method, uri, protocol), status,
    /// bytes, referrer, user_agent, vhost, e.g.
    /// --format 'json:client=remote_addr,time=ts,request=req,status=code,bytes=size'.
    /// Names in any case, and GoAccess's `--log-format=COMBINED` too, or its
    /// COMBINED, VCOMBINED, COMMON and VCOMMON written out
    /// (`--log-format='%h %^[%d:%t %^] "%r" %s %b "%R" "%u"'`); its other
    /// format strings are not read.
    #[arg(
        long,
        alias = "log-format",
        value_name = "FORMAT",
        default_value = "auto"
    )]
    format: String,
    /// Write the report to FILE: JSON if it ends in .json, one self-contained
    /// HTML page if in .html or .htm (e.g. -o report.html); another name, or
    /// one of the inputs, is refused before anything is read. As GoAccess's,
    /// `-o html` and `-o json` print the page or JSON on stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Rows per panel in the terminal report.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Rows per panel in --json, -o report.json and the HTML page (totals
    /// count every row); the time panels (visitors per day, time of day)
    /// keep every day and hour of the log.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_rows: usize,
    /// Crawlers and bots in the panels: include them (as GoAccess does),
    /// exclude them, or show only them. The overview counts both apart.
    #[arg(long, value_name = "WHICH", value_enum, default_value_t = Bots::Include)]
    bots: Bots,
    /// Memory for the counts (e.g. 512M, 4G): beyond it they spill to the
    /// system's temporary directory ($TMPDIR, a wf-spill-PID-* directory
    /// removed at the end and on Ctrl-C), partitioned by client, and are
    /// counted back a partition at a time; the answer is the same. The scan
    /// and the user-agent rules come on top (a log of 20 million clients
    /// peaked at 610-718 MiB under 1G, 556-644 MiB under 512M). Not with --state (a
    /// state is saved whole, in memory). [default: 1G]
    /// Example: wf report --memory 256M -o report.html big.log
    #[arg(long, value_name = "SIZE", value_parser = wf_core::scan::parse_size)]
    memory: Option<u64>,
    /// Give the visitor hosts shown (the terminal's --top rows, the page's
    /// and JSON's --max-rows, never every client) their reverse-DNS names:
    /// a column `hostname`, empty when there is none. The system resolver
    /// (hosts file, then DNS), 16 lookups at once, at most 5 s a report.
    /// Without it wf makes no DNS lookup. E.g. `wf report --resolve --top 20
    /// access.log`.
    #[arg(long)]
    resolve: bool,
}

/// Whether the file at `path` starts as a page or a JSON report that `wf
/// report` writes. Only a regular file is opened: opening a FIFO named by
/// `-o` waited for a writer, for ever.
fn is_a_report(path: &std::path::Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64).read_to_end(&mut head));
    let starts = [
        &b"<!DOCTYPE html>\n<!-- wf report:"[..],
        b"{\n  \"general\":",
        b"{\"general\":",
    ];
    read.is_ok() && starts.iter().any(|s| head.starts_with(s))
}

#[derive(Clone, Copy, ValueEnum)]
enum Bots {
    Include,
    Exclude,
    Only,
}

impl ReportArgs {
    /// `wf report`, or `wf report --follow`.
    pub(crate) fn run(&self) -> ExitCode {
        if let Some(out) = self
            .output
            .as_deref()
            .filter(|o| stdout_format(o).is_none() && is_a_report(o))
        {
            // Its last page in a directory read for logs is no input; a
            // file that is no report is one, and refused as named inputs
            // are (`output_allowed`): a JSON-lines log `-o` named was left
            // out and written over, exit 0.
            wf_core::scan::leave_out_of_walks(out);
        }
        if self.follow.on() {
            self.run_follow()
        } else {
            super::job::run(self)
        }
    }

    /// `wf report --follow`: the report of everything read so far after
    /// every interval that brought new bytes (the page rewritten whole, the
    /// terminal report in place, or one JSON report a line).
    fn run_follow(&self) -> ExitCode {
        if self.memory.is_some() {
            // A spill is read back once; a follow reports again and again.
            wf_core::warn!("wf: --memory cannot be used with --follow: the counts stay in memory");
            return ExitCode::from(2);
        }
        let collected = self.scan.input.collect();
        // Before `job` looks at stdin's first bytes.
        if follow::refuse_streams(&collected.inputs) {
            return ExitCode::from(2);
        }
        if let Err(e) = self.output_allowed(&collected.inputs) {
            wf_core::warn!("wf: {e}");
            return ExitCode::from(2);
        }
        let names: Vec<String> = collected.inputs.iter().map(|i| i.name.clone()).collect();
        let settings = self.settings();
        let job = match wf_report::run::job(&collected.inputs, &settings) {
            Ok(j) => j,
            Err(e) => {
                wf_core::warn!("wf: --format: {e}");
                return ExitCode::from(2);
            }
        };
        drop(collected);
        let format = self.time_format(&job);
        wf_report::run::prepare(&job);
        let failed = Cell::new(false);
        let resolver = RefCell::new(Resolver::default());
        let render = |st: ReportState, seen: Seen| {
            let mut acc = st.acc;
            let r = wf_report::run::report(&mut acc, &job, &settings, seen.bytes, names.clone());
            let mut r = match r {
                Ok(r) => r,
                Err(e) => {
                    wf_core::warn!("wf: --memory: {e}");
                    failed.set(true);
                    return Vec::new();
                }
            };
            self.resolve(&mut r, &mut resolver.borrow_mut());
            // A live report has no one time it took: the overview leaves it out.
            self.render(&r, &names, None).unwrap_or_else(|e| {
                wf_core::warn!("wf: {e}");
                failed.set(true);
                Vec::new()
            })
        };
        let state = self.state.on();
        let cx = JobFollow::new(&self.scan, &self.time, state, &self.follow, format);
        let code = follow::run_with(job.clone(), &|| job.clone(), cx, &render);
        if failed.get() {
            ExitCode::from(2)
        } else {
            code
        }
    }
}

impl JobCmd for ReportArgs {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn memory(&self) -> Option<u64> {
        self.memory
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let started = Instant::now();
        let collected = self.scan.input.collect();
        // Before anything is read (stdin's or a FIFO's head by `job`).
        if let Err(e) = self.output_allowed(&collected.inputs) {
            return failed(collected.errors, "-o", e);
        }
        let names: Vec<String> = collected.inputs.iter().map(|i| i.name.clone()).collect();
        let settings = self.settings();
        let job = match wf_report::run::job(&collected.inputs, &settings) {
            Ok(j) => j,
            Err(e) => return failed(collected.errors, "--format", e.to_string()),
        };
        drop(collected);
        let job = match (self.state.state.is_some(), self.memory) {
            (true, Some(_)) => {
                let why = "--memory cannot be used with --state: a state is saved whole";
                return failed(Vec::new(), "--memory", why.into());
            }
            (true, None) => job,
            (false, m) => job.with_memory(
                m.unwrap_or(wf_report::spill::DEFAULT_MEMORY),
                opts.threads,
                None,
            ),
        };
        let format = self.time_format(&job);
        wf_report::run::prepare(&job);
        if job.spill().is_some() {
            // The spill directory goes with wf on SIGINT, SIGTERM or SIGHUP.
            if let Err(e) = wf_core::cleanup::on_signals() {
                wf_core::warn!("wf report: signal handlers: {e}");
            }
        }
        let run = state::Run::new(&self.scan, &self.time, format, opts, progress);
        let more = vec![
            ("--format".into(), job.format_name()),
            ("--bots".into(), format!("{:?}", job.bots())),
        ];
        let out = match self.state.scan(job.clone(), run, more) {
            Ok(out) => out,
            Err(e) => return JobRun::failed(e),
        };
        let mut acc = out.state.acc;
        let read = read_names(&mut acc, &out.read, &names);
        let mut errors = out.errors;
        // The new state is synced and renamed while the report is made.
        // The log's size: what the counts cover (a --state run's, all its runs').
        let size = out.counted.unwrap_or(out.bytes);
        let report = wf_report::run::report(&mut acc, &job, &settings, size, names.clone());
        pending::settle(&mut errors, out.pending);
        let mut report = match report {
            Ok(r) => r,
            Err(e) => return failed(errors, "--memory", e.to_string()),
        };
        self.resolve(&mut report, &mut Resolver::default());
        errors.extend(failures(&acc, &job.format_name(), &read));
        let mut extra = vec![
            ("lines failed".to_string(), acc.failed),
            ("lines skipped (blank or #)".to_string(), acc.skipped),
        ];
        for (input, offset) in &acc.failed_at {
            let name = read.get(*input).map_or("?", String::as_str);
            extra.push((format!("failed line at byte offset of {name}"), *offset));
        }
        if let Some(s) = job.spill().filter(|s| s.runs() > 0) {
            extra.push((
                "counts spilled to disk (--memory), times".to_string(),
                s.runs() as u64,
            ));
            if s.read_by() > 0 {
                let threads = "spilled counts read back and counted, threads";
                extra.push((threads.to_string(), s.read_by() as u64));
            }
        }
        extra.extend(out.extra);
        let output = match self.render(&report, &names, Some(started.elapsed())) {
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
            bytes: out.bytes,
            records,
            extra,
            decoded: out.decoded,
        }
    }
}

/// The names of the inputs `acc` counts by: a `--state` run's are those it
/// read (`read`; a file with nothing new is not), where they were all
/// cleared and an input none of whose lines read was exit 0, unsaid. A
/// file continued is no such input for its new lines alone: its counts of
/// lines are left out.
fn read_names(
    acc: &mut wf_report::acc::Acc,
    read: &[(String, bool)],
    names: &[String],
) -> Vec<String> {
    if read.is_empty() {
        return names.to_vec();
    }
    for (k, (_, from_start)) in read.iter().enumerate() {
        match acc.inputs.get_mut(k) {
            Some(lines) if !from_start => *lines = Default::default(),
            _ => {}
        }
    }
    read.iter().map(|(n, _)| n.clone()).collect()
}

/// Says on stderr when the sizes overflowed, or most lines failed: the log
/// is likely not in the format it was read in. An input none of whose lines
/// read is an error of the run (`run::unread`: exit 2); the report is still
/// made, its overview counting them; when only some failed, stderr says so
/// and the exit status is 0.
fn failures(acc: &wf_report::acc::Acc, format: &str, names: &[String]) -> Vec<InputError> {
    if acc.bytes == u64::MAX {
        wf_core::warn!(
            "wf report: the sizes add up past 2^64 - 1 bytes (16 EiB); totals stop there: \
             some sizes in the log are corrupt"
        );
    }
    let unread = wf_report::run::unread(acc, format, names);
    if unread.is_empty() && acc.failed > 0 && acc.failed * 2 >= acc.lines {
        wf_core::warn!(
            "wf report: {} of {} lines failed to read as {format}: is that the log's format? \
             (--format; --stats gives the first ones' offsets)",
            acc.failed,
            acc.lines
        );
    }
    unread
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
    /// Where `--since`/`--until` find a record's time: the first `[...]` of
    /// the named formats (their `%t`, `$time_local`), else the format's own
    /// parser (a `LogFormat` may have another `[...]` before `%t`, a JSON
    /// mapping its own time key, Caddy's seconds since the epoch).
    fn time_format(&self, job: &ReportJob) -> TimeFormat {
        if job.named_format() || self.time.window().is_none() {
            return TimeFormat::Clf;
        }
        // A format without a time: every record is untimed, as before.
        let time = job.time_reader().unwrap_or_else(|| Box::new(|_| None));
        TimeFormat::Reader(Reader::new(job.format_name(), time))
    }

    /// Whether `-o FILE` may be written: it ends in .html, .htm or .json
    /// (as GoAccess refuses another `-o`: `-o access.log` replaced a log
    /// with a page), and it is none of the inputs (`-o x.html x.html` would
    /// replace the input with its report). The report's last page, met in a
    /// directory walked for logs (`-o logs/r.html logs/`, every night), is
    /// not an input: walks leave it out (`scan::leave_out_of_walks`), where
    /// it was read as failed lines. Asked before anything is read.
    fn output_allowed(&self, inputs: &[wf_core::scan::Input]) -> Result<(), String> {
        let Some(path) = &self.output else {
            return Ok(());
        };
        if let Some(format) = stdout_format(path) {
            if format == "html" && self.follow.on() {
                return Err("-o html: a live page is written to a file (-o live.html)".into());
            }
            return Ok(());
        }
        super::output::writable(path, "the report", &["html", "htm", "json"], inputs)
    }

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

    /// With --resolve, the shown hosts' names.
    fn resolve(&self, r: &mut wf_report::Report, resolver: &mut Resolver) {
        if self.resolve {
            let terminal = self.output.is_none() && !self.scan.json;
            resolver.fill(&mut r.hosts, if terminal { self.top } else { usize::MAX });
        }
    }

    /// Stdout's bytes; with -o, the file is written and stdout gets nothing.
    /// Following, a JSON report is one line, and the page reloads itself
    /// every --interval. `took`, the time the report took, goes in the
    /// overview of the page and of the terminal report, never in JSON.
    fn render(
        &self,
        r: &wf_report::Report,
        paths: &[String],
        took: Option<Duration>,
    ) -> Result<Vec<u8>, InputError> {
        let following = self.follow.on();
        let json = || {
            if following {
                wf_report::report::json_line(r)
            } else {
                wf_report::report::json(r)
            }
        };
        let Some(path) = &self.output else {
            return Ok(if self.scan.json {
                json().into_bytes()
            } else {
                wf_report::output::text(r, self.top, took).into_bytes()
            });
        };
        let to_stdout = stdout_format(path);
        let json_file = to_stdout.map_or_else(
            || {
                path.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            },
            |f| f == "json",
        );
        let body = if json_file {
            json()
        } else {
            let title = format!("wf report: {}", paths.join(", "));
            let page = wf_report::output::page(r, &title, took);
            let reload =
                following.then(|| self.follow.interval().as_millis().div_ceil(1000) as u64);
            wf_report::html::render_with(&page, reload)
        };
        if to_stdout.is_some() {
            return Ok(body.into_bytes());
        }
        write_whole(path, body.as_bytes())
            .map_err(|e| InputError::io(path.display().to_string(), &e))?;
        Ok(Vec::new())
    }
}

/// GoAccess's `-o html` and `-o json`: the report in that format on stdout
/// (`wf report -o html access.log > report.html`), not a file so named.
fn stdout_format(path: &Path) -> Option<&'static str> {
    match path.to_str() {
        Some("html") => Some("html"),
        Some("json") => Some("json"),
        _ => None,
    }
}

/// Write `path` whole or not at all: a temporary file beside it, renamed
/// over it, so that a reader (a browser reloading the page while `--follow`
/// rewrites it) never sees half of it. As `wf sql -o`: a symbolic link is
/// followed (its target replaced, not the link) and a file replaced keeps
/// its mode.
fn write_whole(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mode = std::fs::metadata(&target)
        .ok()
        .map(|m| m.permissions().mode());
    let written = std::fs::write(&tmp, body)
        .and_then(|_| match mode {
            Some(m) => std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(m)),
            None => Ok(()),
        })
        .and_then(|_| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
