use std::path::{Path, PathBuf};

use clap::Args;

use wf_core::jobs::pangram::{Incremental, Mode, Pangram, Window};
use wf_core::jobs::Job;
use wf_core::report;
use wf_core::scan::state::Settings;
use wf_core::scan::{self, InputError, Outcome, Progress, ScanOptions};

use super::args::ScanArgs;
use super::job::{self, JobCmd, JobRun};

mod state;

/// The smallest chunk `wf pangram` cuts (`--chunk-size` below it is raised to
/// it): every chunk's edges cost a carried search state, and `--chunk-size 1`
/// took 231 s on 20 MB. The library API ([`wf_core::scan::run`]) keeps any size, for
/// the tests that cut windows into chunks of a few bytes.
pub(crate) const MIN_CHUNK: u64 = 4 << 10;

// `wf pangram`: its help is on `Cmd::Pangram`.
#[derive(Args)]
pub(crate) struct PangramArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// How many of the shortest windows to print.
    #[arg(long, value_name = "K", default_value_t = 10, conflicts_with = "all")]
    top: usize,
    /// Print every minimal window, in input order.
    #[arg(long)]
    all: bool,
    /// With --all: only windows of at most N letters.
    #[arg(long, value_name = "N", requires = "all")]
    max_letters: Option<u64>,
    /// Incremental runs: read only what the inputs hold past what FILE has
    /// read, print the windows of everything, and save the new state in FILE
    /// (made by the first run). Logrotate's rotations are followed as for `wf
    /// count --state` (renamed, compressed later, copytruncate, gone); the
    /// windows of files gone since stay in the report, under their last name.
    /// FILE keeps the text of the windows a later run may report (with --top
    /// K, those no longer than the K-th shortest so far; with --all, every
    /// window), and must be used with the same --top, --all and --max-letters. E.g. every night:
    /// `wf pangram --state /var/lib/wf/books.state /srv/books/`.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
}

impl JobCmd for PangramArgs {
    fn scan_args(&self) -> &ScanArgs {
        &self.scan
    }

    fn exec(&self, opts: &ScanOptions, progress: Option<&Progress>) -> JobRun {
        let job = Pangram { mode: self.mode() };
        let mut o = opts.clone();
        o.spool_streams = true; // window text is read back after the scan
        o.chunk_size = o.chunk_size.max(MIN_CHUNK);
        if let Some(path) = &self.state {
            return self.exec_state(path, Incremental(job), &o, progress);
        }
        let (out, mut errors) = job::scan(&job, &self.scan, &o, progress);
        let (bytes, decoded) = (out.bytes, out.decoded);
        let (state, rest) = out.into_parts();
        let windows = read_windows(&job, state, &rest, &mut errors);
        JobRun {
            output: self.render(&windows, &rest),
            errors,
            bytes,
            records: None,
            extra: vec![
                ("windows reported".into(), windows.len() as u64),
                ("chunk size".into(), o.chunk_size),
            ],
            decoded,
        }
    }
}

impl PangramArgs {
    /// `--state FILE`: see `state.rs`.
    fn exec_state(
        &self,
        path: &Path,
        job: Incremental,
        o: &ScanOptions,
        progress: Option<&Progress>,
    ) -> JobRun {
        let run = state::StateRun {
            path,
            args: &self.scan,
            opts: o,
            progress,
        };
        let ran = match run.run(&job, self.settings()) {
            Ok(r) => r,
            Err(e) => return JobRun::failed(e),
        };
        let mut extra = vec![
            ("windows reported".into(), ran.windows.len() as u64),
            ("chunk size".into(), o.chunk_size),
        ];
        extra.extend(ran.extra);
        JobRun {
            output: self.render_named(&ran.windows, &|i| &ran.names[i]),
            errors: ran.errors,
            bytes: ran.bytes,
            records: None,
            extra,
            decoded: ran.decoded,
        }
    }

    /// What a state is made with: another value is refused.
    fn settings(&self) -> Settings {
        let mode = match self.mode() {
            Mode::Top(k) => format!("--top {k}"),
            Mode::All { max_letters: None } => "--all".into(),
            Mode::All {
                max_letters: Some(n),
            } => format!("--all --max-letters {n}"),
        };
        vec![
            ("job".into(), "pangram".into()),
            (
                "--decompress".into(),
                format!("{:?}", self.scan.input.decompress),
            ),
            ("windows".into(), mode),
        ]
    }

    fn mode(&self) -> Mode {
        if self.all {
            Mode::All {
                max_letters: self.max_letters,
            }
        } else {
            Mode::Top(self.top)
        }
    }

    /// One line per window, text or JSON, each naming its input by its path's
    /// raw bytes (escaped in text, exact in JSON).
    fn render(&self, windows: &[Window], rest: &Outcome<()>) -> Vec<u8> {
        self.render_named(windows, &|i| scan::input_path_bytes(&rest.inputs()[i]))
    }

    /// [`PangramArgs::render`], input `i` named `name(i)`.
    fn render_named<'a>(&self, windows: &[Window], name: &dyn Fn(usize) -> &'a [u8]) -> Vec<u8> {
        let mut output = String::new();
        for w in windows {
            let path = name(w.input);
            output.push_str(&if self.scan.json {
                report::pangram::json_line(w, path)
            } else {
                report::pangram::text_line(w, path)
            });
            output.push('\n');
        }
        output.into_bytes()
    }
}

/// Finish the job, reading each window's text back from its input. A failed read
/// is an error of the run, which then reports no windows.
fn read_windows(
    job: &Pangram,
    state: <Pangram as Job>::State,
    rest: &Outcome<()>,
    errors: &mut Vec<InputError>,
) -> Vec<Window> {
    let windows = job.finish(state, &mut |i, off, len| rest.read_range(i, off, len));
    match windows {
        Ok(w) => w,
        Err(e) => {
            let message = format!("reading windows back: {e}");
            errors.push(InputError::new("pangram", message).of_kind(e.kind()));
            Vec::new()
        }
    }
}
