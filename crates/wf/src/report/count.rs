//! Output of `wf count`.

use crate::jobs::count::CountState;

/// `{"records": N, "bytes": N, "files": N}` on one line.
pub fn json(st: &CountState, files: u64) -> String {
    format!(
        "{{\"records\": {}, \"bytes\": {}, \"files\": {}}}",
        st.records, st.bytes, files
    )
}

/// A short line for people.
pub fn text(st: &CountState, files: u64) -> String {
    format!(
        "{} records, {} bytes, {} file{}",
        st.records,
        st.bytes,
        files,
        if files == 1 { "" } else { "s" }
    )
}
