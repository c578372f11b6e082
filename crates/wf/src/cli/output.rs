use std::io::Write;
use std::process::ExitCode;

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
