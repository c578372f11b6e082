use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use wf_core::scan::Input;

/// Write to stdout; a closed pipe (`wf ... | head`) is not an error.
pub(crate) fn print(s: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(s).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            wf_core::warn!("wf: writing output: {e}");
            ExitCode::from(2)
        }
    }
}

/// Whether a file the command writes (`what`, e.g. "the report") may be
/// `path`: its extension one of `extensions` (a log named by mistake is
/// refused, as GoAccess refuses an `-o` of another kind), and none of
/// `inputs` (`wf report -o access.log access.log` replaced the log). Asked
/// before anything is read.
pub(crate) fn writable(
    path: &Path,
    what: &str,
    extensions: &[&str],
    inputs: &[Input],
) -> Result<(), String> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !extensions.contains(&ext.to_ascii_lowercase().as_str()) {
        let want: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
        return Err(format!(
            "{}: {what} is written to a {} file; other names are refused, so that a log \
             named by mistake is not replaced",
            path.display(),
            want.join(", ")
        ));
    }
    match wf_core::scan::input_at(path, inputs) {
        Some(i) => Err(format!(
            "{} is the input {}: writing {what} there would destroy it",
            path.display(),
            i.name
        )),
        None => Ok(()),
    }
}
