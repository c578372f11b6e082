//! Output of `wf count`.

use crate::jobs::count::CountState;

/// `{"records": N, "bytes": N, "files": N}` on one line.
pub fn json(st: &CountState, files: u64) -> String {
    format!(
        "{{\"records\": {}, \"bytes\": {}, \"files\": {}}}",
        st.records, st.bytes, files
    )
}

/// A short line for people: `3 records, 120 bytes, 2 files` (singular for one).
pub fn text(st: &CountState, files: u64) -> String {
    format!(
        "{}, {}, {}",
        counted(st.records, "record"),
        counted(st.bytes, "byte"),
        counted(files, "file")
    )
}

/// `1 file`, `0 files`, `2 files`.
pub fn counted(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular() {
        let st = |records, bytes| CountState { records, bytes };
        assert_eq!(text(&st(1, 1), 1), "1 record, 1 byte, 1 file");
        assert_eq!(text(&st(0, 2), 0), "0 records, 2 bytes, 0 files");
    }
}
