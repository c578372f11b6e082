//! What the planner and the workers of one scan share: the work they pass
//! ([`Work`]) and the errors and byte counts they record ([`Shared`]).
//!
//! Why a file of its own: the engine (`engine.rs`) makes both and starts the
//! planner (`plan.rs`) and the workers (`worker.rs`), which use them; kept in
//! the engine, they made engine, planner and workers import each other.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::decompress::Meter;
use super::inputs::InputError;
use super::options::Progress;
use super::range::{Long, Unread};
use super::regions::Regions;
use super::split::Parts;

/// One piece of work the planner sends a worker.
pub(super) enum Work {
    /// One worker's share of a big file (see [`Regions`]); a file is sent once per
    /// worker.
    Regions(Arc<Regions>),
    Range {
        input: usize,
        file: Arc<File>,
        start: u64,
        end: u64,
        size: u64,
    },
    Mapped {
        input: usize,
        map: Arc<memmap2::Mmap>,
        start: u64,
        end: u64,
    },
    Block {
        input: usize,
        offset: u64,
        buf: Vec<u8>,
        len: usize,
        /// A piece of a long record (first, last), not whole records.
        piece: Option<(bool, bool)>,
    },
    /// Part `k` of a compressed file (see `split.rs`).
    Part { parts: Arc<Parts>, k: usize },
}

/// What the planner and the workers share: the inputs' errors and the bytes done.
pub(super) struct Shared<'a> {
    pub(super) errors: Mutex<Vec<(usize, InputError)>>,
    /// Ranges of files whose reads failed or came short (a file that shrank
    /// while being read fails every range past its new end): merged into one
    /// error of the input when the scan ends ([`Unread::summary`]).
    pub(super) unread: Mutex<Vec<(usize, Unread)>>,
    /// Records refused as longer than the job's bound: (input, offset),
    /// merged into one error of the input ([`Shared::too_long`]).
    pub(super) too_long: Mutex<Vec<(usize, u64)>>,
    pub(super) bytes: AtomicU64,
    pub(super) progress: Option<&'a Progress>,
    pub(super) meter: Arc<Meter>,
    /// Compressed files may be decoded in parts (the job does not use offsets).
    pub(super) split: bool,
    /// What becomes of long records.
    pub(super) long: Long,
    /// Streams and compressed files read to their end: (input, decoded bytes).
    pub(super) ends: Mutex<Vec<(usize, u64)>>,
}

impl Shared<'_> {
    pub(super) fn error(&self, input: usize, msg: String) {
        self.fail(input, InputError::new(String::new(), msg));
    }

    /// An error of `input` said by `msg`, caused by the I/O error `e`.
    pub(super) fn io_error(&self, input: usize, msg: String, e: &io::Error) {
        self.fail(input, InputError::new(String::new(), msg).of_kind(e.kind()));
    }

    /// A record of `input` at byte `at` refused: longer than the job's bound.
    pub(super) fn too_long(&self, input: usize, at: u64) {
        self.too_long.lock().unwrap().push((input, at));
    }

    /// The bytes `u` of `input` that were not read.
    pub(super) fn unread(&self, input: usize, u: Unread) {
        self.unread.lock().unwrap().push((input, u));
    }

    /// `err` (named when the scan ends) as an error of `input`.
    pub(super) fn fail(&self, input: usize, err: InputError) {
        self.errors.lock().unwrap().push((input, err));
    }

    /// `n` more bytes handed to the job.
    pub(super) fn account(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
        if let Some(p) = self.progress {
            p.done.fetch_add(n, Ordering::Relaxed);
        }
    }
}
