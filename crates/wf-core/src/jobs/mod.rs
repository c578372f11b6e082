//! Built-in jobs. A job sees only whole records of one chunk at a time and keeps
//! its own per-thread state; states merge once at the end of a run.
//!
//! Why this shape: the scan engine hands every worker thread its own `State`, so
//! the hot loop touches no lock, channel or shared cache line per record; the only
//! synchronisation is one channel receive per chunk (megabytes) and one `merge` per
//! thread at the end. Jobs never see files, threads or I/O, so the same job runs
//! over one huge file split in chunks, thousands of small files, or a pipe.
//!
//! Records of any length: a job that does not need a record whole (a count, a
//! search that only looks at its start) says so with [`Job::long_records`] and
//! takes a long record in [`Piece`]s, so a 200 MB line or an endless stream with
//! no separator (`/dev/zero`) is read in bounded memory. A job that needs whole
//! records (a SQL scan) keeps the default: the scan holds a record up to
//! `ScanOptions::max_record` bytes and refuses a longer one (an error naming
//! the input and the record's offset; the rest of the input is still read).

pub mod count;
pub mod pangram;
pub mod partial;
pub mod time;
pub mod time_keys;
pub mod wf2;
pub mod window;

/// One chunk of one input: whole records, in input order.
///
/// The chunks of an input partition it exactly: every byte of the input lies in
/// exactly one chunk (or, for a record longer than [`Job::long_records`], in
/// one [`Piece`]), and chunk `data` always starts at a record start and ends just
/// after a record separator (or at the end of the input). Chunks with no data may
/// be skipped. Chunks of one input may arrive in any order and on any thread.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Index of the input in the order the inputs were given (after directory
    /// walking and `--files-from` expansion).
    pub input: usize,
    /// Byte offset of `data[0]` within its input (but see [`Job::offsets`]).
    pub offset: u64,
    /// Whole records.
    pub data: &'a [u8],
}

/// A piece of a record longer than the job's [`Job::long_records`] bound.
///
/// The pieces of one record partition it in order of offset: the first starts
/// the record and holds at least its first `long_records() + 1` bytes (none of
/// them a separator), the last ends just after its separator (or at the end of
/// the input). Like chunks, the pieces of one record may come on different
/// threads and in any order (the pieces of a stream's record do); a piece may
/// be the whole record (`first` and `last`).
#[derive(Debug, Clone, Copy)]
pub struct Piece<'a> {
    /// Index of the input (as [`Chunk::input`]).
    pub input: usize,
    /// Byte offset of `data[0]` within its input (see [`Job::offsets`]).
    pub offset: u64,
    /// Bytes of the record.
    pub data: &'a [u8],
    /// This piece starts the record.
    pub first: bool,
    /// This piece ends the record.
    pub last: bool,
}

/// A built-in job: per-thread state, fed whole-record chunks, merged at the end.
pub trait Job: Sync {
    type State: Send;
    /// A fresh, empty state (one per worker thread).
    fn new_state(&self) -> Self::State;
    /// Consume one chunk of whole records.
    fn process(&self, state: &mut Self::State, chunk: &Chunk<'_>);
    /// Fold `other` into `into`. Must be associative and give the same final
    /// answer whatever the thread count or chunk size.
    fn merge(&self, into: &mut Self::State, other: Self::State);
    /// A worker's state once the worker has no more input, on the worker's
    /// own thread, while others may still be reading: the states are then
    /// merged on one thread, one after another, so work that a job can do
    /// on a state alone is done here side by side (the report writes a
    /// worker's counts out to its spill files, `--memory`: on the 10 GiB
    /// bench log the first worker to finish otherwise waited ~0.45 s for
    /// the other, then spilled on the merging thread alone). Must not
    /// change the final answer. The default does nothing.
    fn worker_done(&self, _state: &mut Self::State) {}
    /// Does the job use [`Chunk::offset`]? A job that does not lets the scan
    /// decode one compressed file in parts on several threads, where the
    /// decoded offset of a later part is not known while it is parsed (its
    /// chunks' offsets then only order them within the part).
    fn offsets(&self) -> bool {
        true
    }
    /// Does the job want no more input (a SQL scan whose query has all the
    /// rows it asked for, `LIMIT`)? The scan then stops reading files at the
    /// next piece: checked once per piece read, so a job that never stops pays
    /// one call per 64 KiB or so.
    fn stopped(&self) -> bool {
        false
    }
    /// The longest record (bytes before its separator) the job needs whole,
    /// if it can take longer ones in pieces ([`Job::piece`]). Such a record is
    /// then never passed to [`Job::process`]: all its bytes go to `piece`, in
    /// pieces as [`Piece`] describes, whatever the chunk and read sizes, so the
    /// answer stays the same at every `-j` and chunk size. The scan holds at most
    /// about this many bytes of a record at once.
    ///
    /// `None` (the default): the job needs every record whole. The scan then
    /// holds records up to `ScanOptions::max_record` bytes and refuses a longer
    /// one: it is an error of its input, naming the record's offset, and its
    /// bytes reach the job by neither `process` nor `piece`.
    fn long_records(&self) -> Option<usize> {
        None
    }
    /// Consume one piece of a record longer than [`Job::long_records`].
    fn piece(&self, _state: &mut Self::State, _piece: &Piece<'_>) {}
}

/// `job` by reference, for a caller that scans more than once with one job
/// (a `--state` run's main scan and its partial last lines; a time window
/// searched again): a job whose settings are not all numbers (the report's
/// format) cannot be made again from its `params`.
pub struct Same<'a, J>(pub &'a J);

impl<J: Job> Job for Same<'_, J> {
    type State = J::State;
    fn new_state(&self) -> J::State {
        self.0.new_state()
    }
    fn process(&self, st: &mut J::State, chunk: &Chunk<'_>) {
        self.0.process(st, chunk)
    }
    fn merge(&self, into: &mut J::State, other: J::State) {
        self.0.merge(into, other)
    }
    fn worker_done(&self, st: &mut J::State) {
        self.0.worker_done(st)
    }
    fn offsets(&self) -> bool {
        self.0.offsets()
    }
    fn stopped(&self) -> bool {
        self.0.stopped()
    }
    fn long_records(&self) -> Option<usize> {
        self.0.long_records()
    }
    fn piece(&self, st: &mut J::State, piece: &Piece<'_>) {
        self.0.piece(st, piece)
    }
}
