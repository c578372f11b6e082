use std::os::unix::ffi::OsStrExt;

use clap::Args;

use wf_core::jobs::pangram::{Mode, Pangram, Window};
use wf_core::jobs::Job;
use wf_core::report;
use wf_core::scan::{self, InputError, Outcome, Progress, ScanOptions};

use super::args::ScanArgs;
use super::job::{self, JobCmd, JobRun};

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
        let mut output = String::new();
        for w in windows {
            let input = &rest.inputs()[w.input];
            let path = match scan::input_path(input) {
                Some(p) => p.as_os_str().as_bytes(),
                None => input.name.as_bytes(),
            };
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
