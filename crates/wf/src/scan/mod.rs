//! scan: the only module that knows about files, threads and I/O.
//!
//! `inputs` turns what the user named into a list of inputs (collected before any
//! data is read); `engine` splits them into record-aligned chunks, reads them on
//! worker threads and feeds whole records to a [`crate::jobs::Job`].

pub mod engine;
pub mod inputs;

pub use engine::{
    record_start_at, run, Outcome, Progress, ScanOptions, DEFAULT_CHUNK, DEFAULT_READ,
};
pub use inputs::{parse_size, Collected, Input, InputError, InputSpec, Source};

/// The file system type (`statfs`'s `f_type` magic number) of the file system
/// holding `path`, or `None` when `statfs` fails.
pub fn fs_magic(path: &std::path::Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_type as i64)
}

/// An OS error without the "(os error N)" suffix.
pub fn io_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
