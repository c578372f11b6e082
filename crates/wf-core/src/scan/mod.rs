//! scan: the only module that knows about files, threads and I/O.
//!
//! `inputs` turns what the user named into a list of inputs (collected before any
//! data is read); `engine` splits them into record-aligned chunks, reads them on
//! worker threads and feeds whole records to a [`crate::jobs::Job`]. Its parts:
//! `options` (the options and progress counters a caller gives), `shared` (the
//! work and errors the planner and workers share), `plan` (the chunk plan),
//! `regions` (per-worker regions of a big file and stealing), `ahead` (the
//! read-ahead helper and its gate), `worker` (a worker thread), `range` (the
//! records a chunk owns), `stream` (streams into record-aligned blocks, for the
//! engine and for `feed`), `decompress` (formats
//! and decoders), `split` (one compressed file decoded in parts) `state`
//! (what `--state` keeps between incremental runs) and `follow` (`--follow`:
//! files read as they grow).

mod ahead;
pub mod decompress;
pub mod engine;
pub mod follow;
pub mod inputs;
mod options;
mod plan;
mod range;
mod regions;
pub mod seek;
mod shared;
pub(crate) mod split;
pub mod state;
pub(crate) mod stream;
mod worker;

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

pub use decompress::{Codec, Decoded, Decompress};
pub use engine::{
    read_back, run, too_long_errors, useful_threads, Outcome, Progress, ScanOptions, DEFAULT_CHUNK,
    DEFAULT_MAX_RECORD, DEFAULT_READ, MAX_THREADS,
};
pub use inputs::{
    input_at, input_path, input_path_bytes, leave_out_of_walks, parse_size, Collected, Input,
    InputError, InputSpec, SizeError, Source,
};
pub use options::{
    parse_count, parse_span, parse_span_or_zero, parse_threads, PageCache, ScanSettings,
    SettingError, MAX_IO, MAX_SPAN,
};
pub use range::record_start_at;
pub use stream::{open_stream, stream_head, RecordEnds};

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

/// Read as much of `buf` as the file has at `offset`; returns bytes read (short
/// only at end of file).
pub(crate) fn read_full_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

pub(crate) fn fadvise(f: &File, offset: u64, len: u64, advice: libc::c_int) {
    // Advice only: failures (e.g. on file systems without readahead) are harmless.
    unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            advice,
        );
    }
}
