//! The last steps of a `--state` run's write (sync, rename, sync of the
//! directory) on a thread while the report is made: on the 10 GiB bench's
//! hourly run they were ~8 ms of waiting for the disk, after the 10 ms of
//! choosing wf2's top lists (`bench/results/PERFORMANCE.md`, fourth pass).
//! Apart from `state` so that `time`'s `Scanned`, which carries one, does
//! not import the module that imports it.

use wf_core::scan::state;
use wf_core::scan::InputError;

/// The error of a state that could not be written to `path`.
pub(crate) fn unwritten(path: &std::path::Path, e: std::io::Error) -> InputError {
    let why = format!("cannot write the state: {}", wf_core::scan::io_message(&e));
    InputError::new(path.display().to_string(), why).of_kind(e.kind())
}

/// A new state being synced and renamed over its file. [`Pending::wait`]
/// before the report is shown; dropped unwaited, it still waits (a state is
/// never left half done by a return).
pub(crate) struct Pending {
    handle: Option<std::thread::JoinHandle<Result<(), InputError>>>,
}

impl Pending {
    pub(crate) fn start(u: state::Unsynced, path: &std::path::Path) -> Pending {
        let path = path.to_path_buf();
        let commit = move || u.commit().map_err(|e| unwritten(&path, e));
        Pending {
            handle: Some(std::thread::spawn(commit)),
        }
    }

    /// The state is in place, or why it is not.
    pub(crate) fn wait(mut self) -> Option<InputError> {
        let h = self.handle.take()?;
        h.join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
            .err()
    }
}

/// Waits for `pending` (a `--state` run's new state) and adds its error,
/// if it could not be put in place, to `errors`.
pub(crate) fn settle(errors: &mut Vec<InputError>, pending: Option<Pending>) {
    errors.extend(pending.and_then(Pending::wait));
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(Ok(Err(e))) = self.handle.take().map(|h| h.join()) {
            wf_core::warn!("wf: {e}");
        }
    }
}
