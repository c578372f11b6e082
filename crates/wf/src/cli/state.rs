//! `--state FILE` of `count`, `wf2` and `report`: incremental runs. A run reads only
//! what the inputs hold past what the state has counted, merges, prints the
//! report of everything, and saves the new state.
//!
//! Why here: wf-core's `scan::state` matches inputs to what a state has read
//! (by identity, through rotations) and sets the spans the scan reads; the
//! job's merged partial state and that ledger travel in one `WFPS` envelope
//! (`jobs::partial::encode_with`). This file wires them: load and check the
//! state (a damaged or foreign file, or one made with other settings, is an
//! error before anything is read), scan the spans, scan the partial last
//! lines apart (in this run's report, not in the saved state), write the new
//! state atomically, say on stderr what rotation did.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Args;

use wf_core::jobs::partial::{self, Partial};
use wf_core::jobs::time::TimeFormat;
use wf_core::jobs::Same;
use wf_core::scan::state::{self, Entry, Fate, Ledger, Restart, Settings, StateError};
use wf_core::scan::{Input, InputError, Progress, ScanOptions, Source};

use super::args::ScanArgs;
use super::pending::{unwritten, Pending};
use super::time::{Scanned, TimeArgs};

/// `--state FILE`.
#[derive(Args, Clone)]
pub(crate) struct StateArg {
    /// Incremental runs: read only what the inputs hold past what FILE has
    /// counted, print the report of everything, and save the new state in FILE
    /// (made by the first run). Each input is known by its device, inode and
    /// first 4 KiB, so logrotate's rotations are followed: a renamed
    /// `access.log.1` is continued where it was left, `access.log.1.gz` too
    /// (nothing counted twice), a file truncated by copytruncate is read from
    /// its start (said on stderr), and a file gone stays counted. A last line
    /// without its newline is in the report but read again by the next run.
    /// FILE must be used with the same job and settings (--since, --until,
    /// --format, ...; a --since or --until relative to now, `-1h`, `today`,
    /// is refused); --top may change. E.g. every hour: `wf wf2 --state
    /// /var/lib/wf/access.state /var/log/nginx/access.log*`.
    #[arg(long, value_name = "FILE")]
    pub(crate) state: Option<PathBuf>,
}

/// Everything a state run needs besides the job.
/// What `count` and `wf2` share of a run: the scan, through `--state` when
/// given (`more`: the job's own settings the state must have been made with).
pub(crate) struct Run<'a> {
    pub(crate) time: &'a TimeArgs,
    pub(crate) format: TimeFormat,
    pub(crate) args: &'a ScanArgs,
    pub(crate) opts: &'a ScanOptions,
    pub(crate) progress: Option<&'a Progress>,
}

impl<'a> Run<'a> {
    pub(crate) fn new(
        args: &'a ScanArgs,
        time: &'a TimeArgs,
        format: TimeFormat,
        opts: &'a ScanOptions,
        progress: Option<&'a Progress>,
    ) -> Self {
        Run {
            time,
            format,
            args,
            opts,
            progress,
        }
    }
}

impl StateArg {
    /// Whether `--state` was given.
    pub(crate) fn on(&self) -> bool {
        self.state.is_some()
    }

    /// Scan with `--since`/`--until`, and with `--state FILE` if given.
    pub(crate) fn scan<J: Partial>(
        &self,
        job: J,
        r: Run<'_>,
        more: Settings,
    ) -> Result<Scanned<J::State>, InputError> {
        let Some(path) = &self.state else {
            return Ok(r.time.scan(job, r.format, r.args, r.opts, r.progress));
        };
        if let Some(rel) = r.time.relative() {
            // Refused before the state is read or written: each run would
            // count another window into the one count (it failed every run
            // after the first as "made with other settings").
            let why = format!(
                "a --since/--until relative to now ('{rel}') moves from run to run, and a \
                 state counts every run's new records once: give a time (2026-11-27T10:00)"
            );
            return Err(InputError::new(path.display().to_string(), why));
        }
        let run = StateRun {
            path,
            time: r.time,
            format: r.format,
            args: r.args,
            opts: r.opts,
            progress: r.progress,
        };
        run.scan(job, settings::<J>(&run, more))
    }
}

pub(crate) struct StateRun<'a> {
    pub(crate) path: &'a Path,
    pub(crate) time: &'a TimeArgs,
    pub(crate) format: TimeFormat,
    pub(crate) args: &'a ScanArgs,
    pub(crate) opts: &'a ScanOptions,
    pub(crate) progress: Option<&'a Progress>,
}

/// A `--state` run reads files only: a stream's bytes cannot be found again.
pub(crate) fn files_only(inputs: &[wf_core::scan::Input]) -> Result<(), StateError> {
    match inputs
        .iter()
        .find(|i| matches!(i.source, Source::Stream { .. }))
    {
        Some(s) => Err(StateError::Stream(s.name.clone())),
        None => Ok(()),
    }
}

/// A `--state` run's inputs: the state file is none, left out unsaid by a
/// walk of its directory and said where it is named: read as a log, it
/// added its bytes to the count every run (`wf count --state logs/wf.state
/// logs/`: 100, then 103, 105 records; a glob `access.log*` meets
/// `access.log.state`; `wf pangram` found windows in it).
pub(crate) fn collect_without(
    input: &super::args::InputArgs,
    state: &Path,
) -> wf_core::scan::Collected {
    wf_core::scan::leave_out_of_walks(state);
    let mut collected = input.collect();
    leave_out_state(&mut collected.inputs, state);
    collected
}

fn leave_out_state(inputs: &mut Vec<Input>, state: &Path) {
    inputs.retain(|i| {
        let named = wf_core::scan::input_at(state, [i]).is_some();
        if named {
            wf_core::warn!("wf: {}: the --state file, left out of the inputs", i.name);
        }
        !named
    });
}

/// The tails' counts of records (kept, outside the window, without a
/// time) added to the main scan's (they were left out: `--stats` said 2
/// records without a time where a plain run said 4); the search's figures
/// are the main scan's alone.
fn add_records(extra: &mut Vec<(String, u64)>, tail: Vec<(String, u64)>) {
    for (k, v) in tail.into_iter().filter(|(k, _)| k.starts_with("records ")) {
        match extra.iter_mut().find(|(m, _)| *m == k) {
            Some((_, n)) => *n += v,
            None => extra.push((k, v)),
        }
    }
}

/// The main scan's inputs (each from where the state left it) and the
/// tails' scan's, input k of one being input k of the other (nothing read
/// where a file has no tail): the job's counts per input add up.
fn scans_of(
    inputs: &[Input],
    read: &[usize],
    tails: &[Option<(u64, u64)>],
) -> (Vec<Input>, Vec<Input>) {
    let with = |i: usize, span| Input {
        span: Some(span),
        ..inputs[i].clone()
    };
    let main = read
        .iter()
        .map(|&i| with(i, inputs[i].span.unwrap_or((0, u64::MAX))));
    let tail = read.iter().map(|&i| match tails[i] {
        Some(span) => with(i, span),
        None => nothing_of(&inputs[i]),
    });
    (main.collect(), tail.collect())
}

/// An input of no bytes in place of `i`, under its name: an empty span of
/// /dev/null, which always opens (`i`'s file may be gone since the main
/// scan read it, which is no error; and a compressed file cannot be cut).
fn nothing_of(i: &Input) -> Input {
    let mut none = i.clone();
    none.source = Source::File {
        path: PathBuf::from("/dev/null"),
        size: 0,
    };
    none.span = Some((0, 0));
    none
}

/// The settings a state of `job` is made with: the job's name, the input and
/// window settings, and `more` of the command.
pub(crate) fn settings<J: Partial>(r: &StateRun, more: Settings) -> Settings {
    let mut s = vec![("job".into(), J::NAME.into())];
    s.push((
        "--decompress".into(),
        format!("{:?}", r.args.input.decompress),
    ));
    s.extend(r.time.settings());
    s.extend(more);
    s
}

impl StateRun<'_> {
    /// Scan with `job`, incrementally: see the module's comment. A state that
    /// cannot be used is an error of the whole run (nothing is read).
    pub(crate) fn scan<J: Partial>(
        &self,
        job: J,
        settings: Settings,
    ) -> Result<Scanned<J::State>, InputError> {
        let name = self.path.display().to_string();
        let fail = |e: StateError| InputError::new(&name, e.to_string());
        let loaded = state::load(self.path, &job, &settings).map_err(fail)?;
        let ledger = loaded
            .as_ref()
            .map(|l| l.ledger.clone())
            .unwrap_or_default();
        let collected = collect_without(&self.args.input, self.path);
        let mut inputs = collected.inputs;
        files_only(&inputs).map_err(fail)?;
        let old = &ledger.entries;
        let resume = state::resume(old, &mut inputs, self.opts.sep);
        say(&resume, old, &inputs);
        let read: Vec<usize> = (0..inputs.len()).filter(|&i| !resume.skipped(i)).collect();
        let (main_inputs, tail_inputs) = scans_of(&inputs, &read, &resume.tails);
        let from_start = |i: usize| inputs[i].span.is_none_or(|(s, _)| s == 0);
        let tails = read.iter().any(|&i| resume.tails[i].is_some());
        let again = || Same(&job);
        let (t, o, p) = (self.time, self.opts, self.progress);
        // The old state is decoded while the scan runs (see `state::Loaded`).
        let (main, old_state) = std::thread::scope(|s| {
            let old = s.spawn(|| loaded.as_ref().map(|l| l.state()).transpose());
            let main = t.scan_inputs(again(), self.format, main_inputs, vec![], o, p);
            (
                main,
                old.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        });
        let old_state = old_state.map_err(fail)?;
        let mut merged = old_state.unwrap_or_else(|| job.new_state());
        let failed = !main.errors.is_empty();
        job.merge(&mut merged, main.state);
        let (mut unsaved, mut pending) = (None, None);
        // The bytes the counts cover: the old state's (its ledger's, a file
        // gone or cut staying counted) and this run's; its partial last
        // lines are added below. Without a window: a window's runs read
        // only its bytes, and a state does not say how many those were.
        let counted = (self.time.window().is_none())
            .then(|| old.iter().map(|e| e.offset).sum::<u64>() + main.bytes);
        if failed {
            wf_core::warn!("wf: {name}: not updated (an input could not be read whole)");
        } else {
            let ends = |k: usize| read.iter().position(|&i| i == k).and_then(|j| main.ends[j]);
            let entries = resume.ledger(old, &inputs, &ends);
            // A state that cannot be written fails the run (exit 2), but the
            // report of what was read is still made and printed.
            match write_unsynced(self.path, &job, &merged, settings, entries) {
                Ok(u) => pending = Some(Pending::start(u, self.path)),
                Err(e) => unsaved = Some(e),
            }
        }
        let mut out = Scanned {
            state: merged,
            bytes: main.bytes,
            files: main.files + (inputs.len() - read.len()) as u64,
            decoded: main.decoded,
            errors: collected.errors,
            extra: main.extra,
            ends: vec![],
            pending,
            read: read
                .iter()
                .map(|&i| (inputs[i].name.clone(), from_start(i)))
                .collect(),
            counted,
        };
        out.errors.extend(main.errors);
        out.errors.extend(unsaved);
        if tails {
            let tail = t.scan_inputs(again(), self.format, tail_inputs, vec![], o, None);
            job.merge(&mut out.state, tail.state);
            out.bytes += tail.bytes;
            out.counted = out.counted.map(|c| c + tail.bytes);
            out.errors.extend(tail.errors);
            add_records(&mut out.extra, tail.extra);
        }
        out.extra.extend(extra(&resume));
        Ok(out)
    }
}

/// Write `st` of `job` with its ledger to `path`, atomically (pangram's own
/// state run).
pub(crate) fn write_state<J: Partial>(
    path: &std::path::Path,
    job: &J,
    st: &J::State,
    settings: Settings,
    entries: Vec<Entry>,
) -> Result<(), InputError> {
    let unsynced = write_unsynced(path, job, st, settings, entries)?;
    unsynced.commit().map_err(|e| unwritten(path, e))
}

/// Write `st` of `job` with its ledger beside `path`, to be synced and
/// renamed over it ([`state::Unsynced::commit`]).
fn write_unsynced<J: Partial>(
    path: &std::path::Path,
    job: &J,
    st: &J::State,
    settings: Settings,
    entries: Vec<Entry>,
) -> Result<state::Unsynced, InputError> {
    let ledger = state::write_ledger(&Ledger { settings, entries });
    // Written as it is encoded: never whole in memory.
    let encode = |f: &mut std::fs::File| partial::encode_to(job, st, &BTreeSet::new(), &ledger, f);
    state::write_unsynced(path, encode).map_err(|e| unwritten(path, e))
}

/// The `--stats` lines of a state run: inputs continued, read from their
/// start, and gone.
pub(crate) fn extra(r: &state::Resume) -> Vec<(String, u64)> {
    vec![
        stat("inputs continued (--state)", r, |f| {
            matches!(f, Fate::Continued { .. } | Fate::Unchanged { .. })
        }),
        stat("inputs read from the start (--state)", r, |f| {
            matches!(f, Fate::New | Fate::Restarted { .. })
        }),
        ("inputs gone, kept in the state".into(), r.gone.len() as u64),
    ]
}

fn stat(what: &str, r: &state::Resume, f: impl Fn(&Fate) -> bool) -> (String, u64) {
    (what.into(), r.fates.iter().filter(|x| f(x)).count() as u64)
}

/// Say on stderr what rotation did: files read again from their start, and
/// files gone since the last run (once, when they go).
pub(crate) fn say(r: &state::Resume, old: &[Entry], inputs: &[wf_core::scan::Input]) {
    for (i, f) in r.fates.iter().enumerate() {
        let name = &inputs[i].name;
        if let Fate::Restarted { entry, why } = f {
            let why = match why {
                Restart::Shrunk { was, now } => {
                    format!("is {now} bytes, shorter than the {was} it had (truncated)")
                }
                Restart::HeadChanged => "its first bytes changed (rewritten)".into(),
                Restart::Rewritten => {
                    "its bytes before where it was read to end no line (rewritten)".into()
                }
            };
            let was = &old[*entry].name;
            wf_core::warn!("wf: {name}: {why} since the last run: read from its start (--state; {was} was read before)");
        }
    }
    for &(i, was) in &r.cut {
        let now = match inputs[i].source {
            wf_core::scan::Source::File { size, .. } => size,
            _ => 0,
        };
        wf_core::warn!(
            "wf: {}: is {now} bytes, shorter than the {was} counted of it, its first bytes unchanged (cut): read on from its end, its bytes stay counted; lines written after the cut and before this run are not read, nor, if it was cut inside a line, the first line written after it (--state)",
            inputs[i].name
        );
    }
    for &e in &r.gone {
        let o = &old[e];
        if !o.gone {
            let n = o.offset;
            wf_core::warn!(
                "wf: {}: gone since the last run (renamed away or removed): its {n} bytes stay counted in the state",
                o.name
            );
        }
    }
}
