//! The last steps of a `--state` run's write, running behind the report
//! (`scan::state::Committing`), and their error as the CLI names it. Apart
//! from `state` so that `time`'s `Scanned`, which carries one, does not
//! import the module that imports it.

use wf_core::scan::state;
use wf_core::scan::InputError;

/// The error of a state that could not be written to `path`.
pub(crate) fn unwritten(path: &std::path::Path, e: std::io::Error) -> InputError {
    let why = format!("cannot write the state: {}", wf_core::scan::io_message(&e));
    InputError::new(path.display().to_string(), why).of_kind(e.kind())
}

/// A new state being synced and renamed over its file at `path`
/// ([`state::Committing`]). [`Pending::wait`] before the report is shown.
pub(crate) struct Pending {
    committing: state::Committing,
    path: std::path::PathBuf,
}

impl Pending {
    pub(crate) fn start(u: state::Unsynced, path: &std::path::Path) -> Pending {
        Pending {
            committing: u.commit_behind(),
            path: path.to_path_buf(),
        }
    }

    /// The state is in place, or why it is not.
    pub(crate) fn wait(self) -> Option<InputError> {
        let e = self.committing.wait().err()?;
        Some(unwritten(&self.path, e))
    }
}

/// Waits for `pending` (a `--state` run's new state) and adds its error,
/// if it could not be put in place, to `errors`.
pub(crate) fn settle(errors: &mut Vec<InputError>, pending: Option<Pending>) {
    errors.extend(pending.and_then(Pending::wait));
}
