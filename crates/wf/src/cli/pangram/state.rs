//! `wf pangram --state FILE`: incremental runs of pangram, as `cli/state.rs`
//! does them for count, wf2 and report (the same ledger, rotations and
//! atomic write), with what pangram needs besides.
//!
//! Why apart: pangram's state names inputs (a window is input, offset), and
//! its windows' text is read back after the scan. So the saved state
//! ([`Incremental`]) carries the kept windows' text and names inputs by
//! their ledger entry; a run maps them through the resume's fates: an entry
//! continued by input `i` (renamed, compressed, copied) becomes `i`, an entry
//! no input claimed (gone) comes after the inputs, as in the ledger. In this
//! run every window names its "report index": the inputs as given, then the
//! gone entries; the saved copy is mapped once more to the new ledger's
//! entries. Windows that start before a saved offset and end after it are
//! found by stitching the new ranges to the input's saved summary.

use std::io;
use std::path::Path;

use wf_core::jobs::pangram::{Incremental, PangramState, Window};
use wf_core::jobs::Job;
use wf_core::scan::state::{self, Entry, Fate, Ledger, Resume, Settings, StateError};
use wf_core::scan::{self, Decoded, Input, InputError, Outcome, Progress, ScanOptions};

use crate::cli::args::ScanArgs;
use crate::cli::state::{extra, files_only, say, write_state};

/// What a state run found: the windows, each input's name (by report index)
/// and the scan's figures.
pub(crate) struct Ran {
    pub(crate) windows: Vec<Window>,
    pub(crate) names: Vec<Vec<u8>>,
    pub(crate) errors: Vec<InputError>,
    pub(crate) bytes: u64,
    pub(crate) decoded: Decoded,
    pub(crate) extra: Vec<(String, u64)>,
}

pub(crate) struct StateRun<'a> {
    pub(crate) path: &'a Path,
    pub(crate) args: &'a ScanArgs,
    pub(crate) opts: &'a ScanOptions,
    pub(crate) progress: Option<&'a Progress>,
}

/// The inputs of a run and how they stand to the old ledger.
struct Plan {
    inputs: Vec<Input>,
    old: Vec<Entry>,
    resume: Resume,
    /// Inputs the main scan reads (not the unchanged compressed ones).
    read: Vec<usize>,
}

impl Plan {
    /// The report index of old entry `e`: the input that continues it, or
    /// its place after the inputs among the gone entries.
    fn old_to_now(&self) -> Vec<Option<usize>> {
        let n = self.inputs.len();
        let mut to: Vec<Option<usize>> = vec![None; self.old.len()];
        for (i, f) in self.resume.fates.iter().enumerate() {
            if let Fate::Continued { entry, .. } | Fate::Unchanged { entry } = f {
                to[*entry] = Some(i);
            }
        }
        for (g, &e) in self.resume.gone.iter().enumerate() {
            to[e] = Some(n + g);
        }
        to
    }

    /// The name of each report index, as raw bytes.
    fn names(&self) -> Vec<Vec<u8>> {
        let inputs = self
            .inputs
            .iter()
            .map(|i| scan::input_path_bytes(i).to_vec());
        let gone = self.resume.gone.iter();
        inputs
            .chain(gone.map(|&e| self.old[e].name.as_bytes().to_vec()))
            .collect()
    }

    /// `inputs[i]` for each `i` in `which`, with span `span(i)`.
    fn part(&self, which: &[usize], span: impl Fn(usize) -> (u64, u64)) -> Vec<Input> {
        let with = |i: usize| {
            let mut inp = self.inputs[i].clone();
            inp.span = Some(span(i));
            inp
        };
        which.iter().map(|&i| with(i)).collect()
    }
}

impl StateRun<'_> {
    /// The run: see the module's comment. A state that cannot be used is an
    /// error of the whole run (nothing is read).
    pub(crate) fn run(&self, job: &Incremental, settings: Settings) -> Result<Ran, InputError> {
        let name = self.path.display().to_string();
        let fail = |e: StateError| InputError::new(&name, e.to_string());
        let (old_state, ledger) = match state::load(self.path, job, &settings).map_err(fail)? {
            // A pangram state is small: decoded before the scan.
            Some(l) => (Some(l.state().map_err(fail)?), l.ledger),
            None => (None, Ledger::default()),
        };
        let collected = crate::cli::state::collect_without(&self.args.input, self.path);
        let mut inputs = collected.inputs;
        files_only(&inputs).map_err(fail)?;
        let old = ledger.entries;
        let resume = state::resume(&old, &mut inputs, self.opts.sep);
        say(&resume, &old, &inputs);
        let read = (0..inputs.len()).filter(|&i| !resume.skipped(i)).collect();
        let plan = Plan {
            inputs,
            old,
            resume,
            read,
        };
        let mut ran = self.scan(job, &plan, old_state, settings)?;
        ran.errors.splice(0..0, collected.errors);
        Ok(ran)
    }

    /// The main scan, the new state saved, then the partial last records.
    fn scan(
        &self,
        job: &Incremental,
        p: &Plan,
        old_state: Option<PangramState>,
        settings: Settings,
    ) -> Result<Ran, InputError> {
        let spans = |i: usize| p.inputs[i].span.unwrap_or((0, u64::MAX));
        let main = scan::run(job, p.part(&p.read, spans), self.opts, self.progress);
        let (main_state, main) = main.into_parts();
        let mut errors = main.errors.clone();
        let mut st = job.new_state();
        if let Some(mut old) = old_state {
            let to = p.old_to_now();
            job.remap(&mut old, &|e| to.get(e).copied().flatten());
            job.merge(&mut st, old);
        }
        let mut new = main_state;
        job.remap(&mut new, &|j| p.read.get(j).copied());
        job.merge(&mut st, new);
        job.compact(&mut st);
        let mut read = |i: usize, o: u64, len: usize| match p.read.iter().position(|&k| k == i) {
            Some(j) => main.read_range(j, o, len),
            None => Err(io::Error::other(
                "a window of an input not read, without its text",
            )),
        };
        let kept = job.keep_texts(&mut st, &mut read);
        if let Err(e) = &kept {
            let message = format!("reading windows back: {e}");
            errors.push(InputError::new("pangram", message).of_kind(e.kind()));
        }
        if errors.is_empty() {
            self.save(job, p, &main, &st, settings)?;
        } else {
            let name = self.path.display();
            wf_core::warn!("wf: {name}: not updated (an input could not be read whole)");
        }
        let mut ran = self.tails(job, p, st, errors);
        ran.bytes += main.bytes;
        ran.decoded = main.decoded;
        Ok(ran)
    }

    /// Save `st` (by report index) with the new ledger, atomically.
    fn save(
        &self,
        job: &Incremental,
        p: &Plan,
        main: &Outcome<()>,
        st: &PangramState,
        settings: Settings,
    ) -> Result<(), InputError> {
        let ends = |k: usize| {
            let j = p.read.iter().position(|&i| i == k)?;
            main.decoded_end(j)
        };
        let entries = p.resume.ledger(&p.old, &p.inputs, &ends);
        let (by_input, by_gone) = p.resume.entry_indices(&p.old, &ends);
        let n = p.inputs.len();
        let mut saved = st.clone();
        job.remap(&mut saved, &|i| {
            if i < n {
                by_input[i]
            } else {
                by_gone.get(i - n).copied()
            }
        });
        write_state(self.path, job, &saved, settings, entries)
    }

    /// The partial last records (in this report, not in the saved state),
    /// then the windows of everything.
    fn tails(
        &self,
        job: &Incremental,
        p: &Plan,
        mut st: PangramState,
        mut errors: Vec<InputError>,
    ) -> Ran {
        let with_tail: Vec<usize> = (p.read.iter().copied())
            .filter(|&i| p.resume.tails[i].is_some())
            .collect();
        let mut bytes = 0;
        if !with_tail.is_empty() {
            let tail_inputs = p.part(&with_tail, |i| p.resume.tails[i].unwrap_or_default());
            let (mut tail, out) = scan::run(job, tail_inputs, self.opts, None).into_parts();
            job.remap(&mut tail, &|t| with_tail.get(t).copied());
            job.merge(&mut st, tail);
            errors.extend(out.errors.iter().cloned());
            bytes = out.bytes;
        }
        let mut read = |i: usize, o: u64, len: usize| match p.inputs.get(i) {
            Some(input) => scan::read_back(input, o, len),
            None => Err(io::Error::other(
                "a window of a gone input, without its text",
            )),
        };
        let windows = match job.finish(st, &mut read) {
            Ok(w) => w,
            Err(e) => {
                let message = format!("reading windows back: {e}");
                errors.push(InputError::new("pangram", message).of_kind(e.kind()));
                Vec::new()
            }
        };
        Ran {
            windows,
            names: p.names(),
            errors,
            bytes,
            decoded: Decoded::default(),
            extra: extra(&p.resume),
        }
    }
}
