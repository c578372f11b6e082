//! Incremental runs (`--state FILE`): which bytes of each input a run has
//! already counted, so that the next run reads only what lies past them.
//!
//! Why this shape: a state is the job's merged partial state (`jobs::partial`,
//! the `WFPS` envelope with its CRC) plus a ledger, one [`Entry`] per file
//! seen: its identity (device, inode, size, a hash of its first 4 KiB of
//! decoded bytes) and the offset of the end of the last whole record
//! counted. The ledger rides in the envelope's trailer, inside the checksum,
//! so a damaged state file is an error, never a wrong answer. Before a run,
//! [`resume`] finds each input's entry and sets [`Input::span`] to the bytes
//! past it, so the scan itself (chunks, regions, threads) reads only those;
//! a compressed file's span skips decoded bytes (`plan.rs`).
//!
//! Rotation as logrotate does it, all by identity rather than by name:
//! - renamed (`access.log` -> `access.log.1`): same device and inode, same
//!   head: continued from its offset; the new `access.log` is new, read from 0;
//! - compressed later (`access.log.1.gz`): another inode, but the hash of its
//!   decoded head is the entry's: continued from the entry's offset, in
//!   decoded bytes;
//! - `copytruncate`: the copy has the old head (continued, like a rename), the
//!   truncated file keeps the inode but is shorter or its head changed: read
//!   from 0, and said so ([`Fate::Restarted`]);
//! - gone: the entry stays in the ledger (its records stay counted).
//!
//! An entry is claimed by one input at most, so two copies of one file are
//! never both continued: one of them is read from 0, as a fresh run would.
//! The last record of a plain file without its separator is not counted in
//! the saved state (it is still being written): its span ends after the last
//! separator, and [`Resume::tails`] gives the partial record, for a report
//! of everything the files hold now.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::inputs::{Input, Source};
use super::read_full_at;
use crate::jobs::partial::{self, Damage, Head, Partial, PartialError, Reader, Writer};

/// Bytes of an input's decoded head that identify it.
pub const HEAD: usize = 4096;

/// The trailer's first bytes and layout version (see [`write_ledger`]).
const MAGIC: &[u8; 4] = b"WFST";
const LEDGER_VERSION: u64 = 2;
/// The layout before the ledger's length came last (still read).
const LEDGER_V1: u64 = 1;

/// One file a state has read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// How the input was named when it was last seen.
    pub name: String,
    pub dev: u64,
    pub ino: u64,
    /// Its size when it was last read (compressed bytes for a compressed file).
    pub size: u64,
    /// The first `head_len` decoded bytes (at most [`HEAD`], no more than were
    /// counted) hash to `head_hash`.
    pub head_len: u64,
    pub head_hash: u64,
    /// Decoded bytes counted: the end of the last whole record.
    pub offset: u64,
    /// It was a compressed file.
    pub compressed: bool,
    /// No input of the last run was this file (it is said once, when it goes).
    pub gone: bool,
    /// `offset` is where the file was cut short (`truncate -s`, [`was_cut`]),
    /// maybe not a record's end: the hash of the bytes before it (up to
    /// [`BEFORE`]), and the file is continued from it while they are the
    /// same. A cut mid-line was taken at the next run for a rewrite and read
    /// from its start, its records counted twice (1,682 of 1,000, exit 0);
    /// continued whatever those bytes, a file rewritten after its cut was
    /// read from the cut, mid-line (267 records of 302, exit 0).
    pub cut: Option<u64>,
}

/// The bytes before a cut that a later run finds again to continue from it.
const BEFORE: u64 = 64;

/// The hash of plain file `s`'s bytes before `at` (up to [`BEFORE`]).
fn before_hash(s: &Seen, at: u64) -> Option<u64> {
    let path = s.plain.as_ref()?;
    let from = at.saturating_sub(BEFORE);
    let mut b = vec![0u8; (at - from) as usize];
    let n = read_full_at(&File::open(path).ok()?, &mut b, from).ok()?;
    (n == b.len()).then(|| head_hash(&b))
}

/// What the state's job settings were: names and values, compared as a whole
/// and shown side by side when they differ.
pub type Settings = Vec<(String, String)>;

/// The trailer of a state file: the settings it was made with and its ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    pub settings: Settings,
    pub entries: Vec<Entry>,
}

/// The hash of a head: two CRC-32s with different seeds, so that two heads of
/// the same length agree by chance once in 2^64.
pub fn head_hash(b: &[u8]) -> u64 {
    let mut h = crc32fast::Hasher::new_with_initial(0x5746_5354);
    h.update(b);
    (u64::from(crc32fast::hash(b)) << 32) | u64::from(h.finalize())
}

/// The ledger as trailer bytes: `"WFST" | version | settings | entries`.
pub fn write_ledger(l: &Ledger) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(MAGIC);
    w.uint(LEDGER_VERSION);
    w.uint(l.settings.len() as u64);
    for (k, v) in &l.settings {
        w.bytes(k.as_bytes());
        w.bytes(v.as_bytes());
    }
    w.uint(l.entries.len() as u64);
    for e in &l.entries {
        w.bytes(e.name.as_bytes());
        for n in [e.dev, e.ino, e.size, e.head_len, e.head_hash, e.offset] {
            w.uint(n);
        }
        w.uint(u64::from(e.compressed) | u64::from(e.gone) << 1 | u64::from(e.cut.is_some()) << 2);
        if let Some(h) = e.cut {
            w.uint(h);
        }
    }
    let mut b = w.into_bytes();
    let len = b.len() as u64;
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// The ledger at the end of a state's `body` (its bytes without the CRC), found
/// by the length [`write_ledger`] puts last: `None` for a state of the first
/// layout (its ledger is found only after the payload is read).
fn ledger_at_end(body: &[u8]) -> Option<&[u8]> {
    let (rest, len) = body.split_last_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    let start = rest.len().checked_sub(len)?;
    let mut r = Reader::new(&rest[start..]);
    let ours = r.bytes().ok() == Some(&MAGIC[..]) && r.uint().ok() == Some(LEDGER_VERSION);
    ours.then_some(&body[start..])
}

/// Why a trailer is not a ledger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error("it is a partial state without the list of inputs a --state file has")]
    NoLedger,
    #[error("its list of inputs is of layout version {0}; this widefinder reads version {LEDGER_VERSION}")]
    Version(u64),
    #[error("its list of inputs is damaged: {0}")]
    Damaged(Damage),
}

impl From<Damage> for LedgerError {
    fn from(d: Damage) -> Self {
        LedgerError::Damaged(d)
    }
}

/// Read what [`write_ledger`] wrote.
pub fn read_ledger(b: &[u8]) -> Result<Ledger, LedgerError> {
    let mut r = Reader::new(b);
    if b.is_empty() || r.bytes().ok() != Some(&MAGIC[..]) {
        return Err(LedgerError::NoLedger);
    }
    let v = r.uint()?;
    let b = match v {
        LEDGER_VERSION => match b.split_last_chunk::<8>() {
            Some((b, len)) if u64::from_le_bytes(*len) == b.len() as u64 => b,
            _ => return Err(Damage::Invalid("a list of inputs of the wrong length").into()),
        },
        LEDGER_V1 => b,
        _ => return Err(LedgerError::Version(v)),
    };
    let mut r = Reader::new(b);
    r.bytes()?;
    r.uint()?;
    let text = |r: &mut Reader| -> Result<String, Damage> {
        String::from_utf8(r.bytes()?.to_vec()).map_err(|_| Damage::Invalid("a name not UTF-8"))
    };
    let mut l = Ledger::default();
    for _ in 0..r.index(r.left() as u64)? {
        l.settings.push((text(&mut r)?, text(&mut r)?));
    }
    for _ in 0..r.index(r.left() as u64)? {
        let name = text(&mut r)?;
        let mut n = [0u64; 6];
        for x in &mut n {
            *x = r.uint()?;
        }
        let flags = r.index(7)?;
        let (compressed, gone) = (flags & 1 == 1, flags & 2 == 2);
        let cut = if flags & 4 == 4 {
            Some(r.uint()?)
        } else {
            None
        };
        let [dev, ino, size, head_len, head_hash, offset] = n;
        if head_len > HEAD as u64 || head_len > offset {
            return Err(Damage::Invalid("a head longer than what was read").into());
        }
        l.entries.push(Entry {
            name,
            dev,
            ino,
            size,
            head_len,
            head_hash,
            offset,
            compressed,
            gone,
            cut,
        });
    }
    if r.left() != 0 {
        return Err(Damage::LeftOver.into());
    }
    Ok(l)
}

/// Why a `--state` run did not run.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    #[error("not a usable state file: {0}")]
    Partial(#[from] PartialError),
    #[error("not a usable state file: {0}")]
    Ledger(#[from] LedgerError),
    #[error("made with other settings ({0}): use another state file, or remove it to start again")]
    Settings(String),
    #[error("{0} is a stream: --state needs files, whose bytes can be found again")]
    Stream(String),
}

/// A state file read and checked: its ledger, and the job's state still as
/// bytes ([`Loaded::state`] decodes it). A `--state` run needs the ledger
/// before its scan and the job's state only after it, so it decodes the
/// state on a thread while the scan runs: on the 10 GiB bench's hourly run
/// (a 9.5 MB state), decoding it was a third of the run's CPU.
pub struct Loaded<J> {
    pub ledger: Ledger,
    head: Head<J>,
    /// Shared: a state may keep parts of it (wf2's saved tables).
    bytes: partial::Shared,
}

impl<J: Partial> Loaded<J> {
    /// The job's state. A state of the first ledger layout was decoded once
    /// already to find its ledger; it is decoded again here.
    pub fn state(&self) -> Result<J::State, StateError> {
        let (st, trailer) = self.head.payload_shared(&self.bytes)?;
        let bytes = (*self.bytes).as_ref();
        match ledger_at_end(&bytes[..bytes.len() - 4]) {
            Some(l) if l.len() != trailer.len() => {
                let offset = bytes.len() - 4 - trailer.len();
                let (job, what) = (J::NAME, Damage::LeftOver);
                Err(PartialError::Damaged { job, what, offset }.into())
            }
            _ => Ok(st),
        }
    }
}

/// Read the state at `path` (`None` if there is none yet) and check that it
/// was made by job `job` with `settings`.
pub fn load<J: Partial>(
    path: &Path,
    job: &J,
    settings: &Settings,
) -> Result<Option<Loaded<J>>, StateError> {
    let shared = match read_shared(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StateError::Read(e)),
    };
    let bytes = (*shared).as_ref();
    let head = partial::open::<J>(bytes)?;
    let ledger = match ledger_at_end(&bytes[..bytes.len() - 4]) {
        Some(l) => read_ledger(l)?,
        None => read_ledger(head.payload(bytes)?.1)?,
    };
    check_settings(&head.job, job, &ledger, settings)?;
    Ok(Some(Loaded {
        ledger,
        head,
        bytes: shared,
    }))
}

/// The state file's bytes, mapped: a copy into a fresh buffer was a third of
/// the cost of reading a 9.5 MB state (2,300 page faults, 2.8 us each on the
/// bench VM, and the copy; perf). A state is replaced by a rename, never
/// written in place, so the mapping stays the old file's; an empty file is
/// read (it cannot be mapped, and is refused as damaged).
fn read_shared(path: &Path) -> std::io::Result<partial::Shared> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(std::sync::Arc::new(Vec::new()));
    }
    // SAFETY: the map is read only; wf replaces state files by rename and
    // never truncates one (a file truncated by another process while mapped
    // would fault, as any mapped input would).
    match unsafe { memmap2::Mmap::map(&file) } {
        Ok(map) => Ok(std::sync::Arc::new(map)),
        // A file system that cannot map it: read it.
        Err(_) => Ok(std::sync::Arc::new(std::fs::read(path)?)),
    }
}

/// Refuse a state made with other settings than this run's, naming each.
fn check_settings<J: Partial>(
    made_by: &J,
    job: &J,
    ledger: &Ledger,
    settings: &Settings,
) -> Result<(), StateError> {
    let mut differ = Vec::new();
    if made_by.params() != job.params() {
        differ.push(format!("the {} job's own settings", J::NAME));
    }
    for (k, v) in settings {
        let was = ledger.settings.iter().find(|s| &s.0 == k);
        match was {
            Some((_, w)) if w == v => {}
            Some((_, w)) => differ.push(format!("{k} was {w}, is {v}")),
            None => differ.push(format!("{k} was not set, is {v}")),
        }
    }
    if ledger.settings.len() != settings.len() && differ.is_empty() {
        differ.push("settings of another version".into());
    }
    match differ.is_empty() {
        true => Ok(()),
        false => Err(StateError::Settings(differ.join("; "))),
    }
}

/// Write what `write` writes to `path` atomically: a temporary file beside it, synced,
/// renamed over it, and the directory synced, so a crash leaves the old
/// state or the new one, never a mix.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    write_unsynced(path, write)?.commit()
}

/// [`write_atomic_with`] up to the sync: the new state is written beside
/// `path`, and [`Unsynced::commit`] makes it durable and renames it over
/// `path` (the state at `path` stays the old one until then; dropped, the
/// new one is removed).
pub fn write_unsynced(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<Unsynced> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".wf-state")
        .tempfile_in(dir)?;
    write(tmp.as_file_mut())?;
    Ok(Unsynced {
        tmp,
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
    })
}

/// A state written beside its file, not yet synced nor renamed over it.
pub struct Unsynced {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    dir: PathBuf,
}

/// [`Unsynced::commit`] running on a thread of its own (the caller makes
/// its report meanwhile: on the 10 GiB bench's hourly run the sync and
/// renames were ~8 ms of waiting for the disk). Dropped unwaited, it still
/// waits: no return leaves a state half done.
pub struct Committing {
    handle: Option<std::thread::JoinHandle<io::Result<()>>>,
    path: PathBuf,
}

impl Committing {
    /// The state is in place, or why it is not.
    pub fn wait(mut self) -> io::Result<()> {
        self.join()
    }

    fn join(&mut self) -> io::Result<()> {
        match self.handle.take() {
            Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            None => Ok(()),
        }
    }
}

impl Drop for Committing {
    fn drop(&mut self) {
        if let Err(e) = self.join() {
            let why = super::io_message(&e);
            crate::warn!("wf: {}: cannot write the state: {why}", self.path.display());
        }
    }
}

impl Unsynced {
    /// [`Unsynced::commit`] on a thread while the caller goes on.
    pub fn commit_behind(self) -> Committing {
        let path = self.path.clone();
        Committing {
            handle: Some(std::thread::spawn(move || self.commit())),
            path,
        }
    }

    /// Sync the new state, rename it over the old one, sync the directory.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.as_file().sync_all()?;
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        // The rename is durable once the directory is synced (best effort:
        // some file systems refuse to sync a directory).
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// What became of one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Not in the state: read from its start.
    New,
    /// Entry `entry` is this file (the same inode, or a copy or compressed
    /// copy of it by its head): read from `from`.
    Continued { entry: usize, from: u64 },
    /// Entry `entry` is a compressed file read to its end and unchanged:
    /// not read at all.
    Unchanged { entry: usize },
    /// The inode of entry `entry`, but not the same file any more (truncated,
    /// as copytruncate does, or rewritten): read from its start.
    Restarted { entry: usize, why: Restart },
    /// It could not be looked at (the scan names the error): no entry.
    Unknown,
}

/// Why a file with a known inode is read from its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restart {
    /// It is smaller than what was read of it.
    Shrunk { was: u64, now: u64 },
    /// Its first bytes are not the ones read before.
    HeadChanged,
    /// Its first bytes are, but the byte before where it was read to is not
    /// a separator: rewritten with the same start (a report run by cron
    /// with a fixed header, `job > job.log`), not appended to.
    Rewritten,
}

/// One input as it is now.
#[derive(Debug)]
struct Seen {
    dev: u64,
    ino: u64,
    size: u64,
    compressed: bool,
    /// Its first [`HEAD`] decoded bytes (fewer if it is shorter).
    head: Vec<u8>,
    /// A plain file's path (to look at the byte before an offset; not kept
    /// open: a run of 1,100 files ran out of descriptors).
    plain: Option<std::path::PathBuf>,
}

/// The plan of an incremental run: what to read of each input, and what to
/// write in the ledger afterwards.
#[derive(Debug)]
pub struct Resume {
    /// Per input, as given.
    pub fates: Vec<Fate>,
    /// Per input: the partial last record of a plain file (`[start, size)`),
    /// counted in this run's report but not in the saved state.
    pub tails: Vec<Option<(u64, u64)>>,
    /// Entries of the old ledger that no input claimed (gone, or renamed to a
    /// name not given).
    pub gone: Vec<usize>,
    /// Inputs cut shorter than what was counted of them, their first bytes
    /// unchanged ([`was_cut`]), with the bytes counted before: continued
    /// from their end, nothing read.
    pub cut: Vec<(usize, u64)>,
    seen: Vec<Option<Seen>>,
    /// Per input: where its counted bytes end after this run (plain files:
    /// known now; compressed ones: from the scan, see [`Resume::ledger`]).
    ends: Vec<Option<u64>>,
}

/// Match `inputs` (files only: the caller refuses streams) with the entries
/// of `old`, and set each input's span to the bytes this run must read.
pub fn resume(old: &[Entry], inputs: &mut [Input], sep: u8) -> Resume {
    let seen: Vec<Option<Seen>> = inputs.iter().map(|i| look(i).ok()).collect();
    let mut claimed = vec![false; old.len()];
    let mut fates = vec![Fate::New; inputs.len()];
    // Same inode and head first (a file still being written, or renamed),
    // then the head alone (a copy: copytruncate's, or compressed).
    for pass in 0..2 {
        for (i, s) in seen.iter().enumerate() {
            let Some(s) = s else {
                fates[i] = Fate::Unknown;
                continue;
            };
            if fates[i] != Fate::New {
                continue;
            }
            if let Some(e) = find(old, &claimed, s, pass == 0, sep) {
                claimed[e] = true;
                fates[i] = continued(&old[e], e, s);
            }
        }
    }
    let mut cut = Vec::new();
    for (i, s) in seen.iter().enumerate() {
        if let (Fate::New, Some(s)) = (&fates[i], s) {
            if let Some(e) = was_cut(old, &claimed, s) {
                claimed[e] = true;
                fates[i] = Fate::Continued {
                    entry: e,
                    from: s.size,
                };
                cut.push((i, old[e].offset));
                continue;
            }
            if let Some(e) = old.iter().position(|e| (e.dev, e.ino) == (s.dev, s.ino)) {
                let why = if s.size < old[e].size {
                    Restart::Shrunk {
                        was: old[e].size,
                        now: s.size,
                    }
                } else if same_head(&old[e], s) {
                    Restart::Rewritten
                } else {
                    Restart::HeadChanged
                };
                fates[i] = Fate::Restarted { entry: e, why };
            }
        }
    }
    let gone = (0..old.len()).filter(|&e| !claimed[e]).collect();
    let mut r = Resume {
        cut,
        tails: vec![None; inputs.len()],
        ends: vec![None; inputs.len()],
        fates,
        gone,
        seen,
    };
    for (i, inp) in inputs.iter_mut().enumerate() {
        r.set_span(i, inp, sep);
    }
    r
}

/// The unclaimed entry whose inode plain file `s` has, and its first bytes,
/// but fewer bytes than were counted of it: cut short (`truncate -s`), not
/// rewritten. Its bytes were all counted: it is read on from its end. Read
/// from its start, they were counted twice (1,439 records of a file of
/// 1,000, exit 0). A copytruncate's file starts with new lines. Where it
/// was cut is not known: lines written after the cut and before this run
/// (still under what was counted) are not read, and the warning says so; nor
/// is the first line written after a cut inside a line (its span starts
/// inside it), which the warning also says.
fn was_cut(old: &[Entry], claimed: &[bool], s: &Seen) -> Option<usize> {
    (0..old.len()).find(|&e| {
        let o = &old[e];
        !claimed[e]
            && !s.compressed
            && !o.compressed
            && (o.dev, o.ino) == (s.dev, s.ino)
            && s.size < o.offset
            && same_head(o, s)
    })
}

/// `s` starts with the bytes entry `o` counted first (an entry that has
/// counted nothing identifies nothing).
fn same_head(o: &Entry, s: &Seen) -> bool {
    let head = o.head_len as usize;
    o.head_len > 0 && s.head.len() >= head && head_hash(&s.head[..head]) == o.head_hash
}

/// The unclaimed entry that is file `s`: with its inode (`by_inode`), or any
/// with its head. An entry that has counted nothing identifies nothing. A
/// plain file continues an entry only where a record ends (its counted
/// bytes end after a separator `sep`): a file rewritten with the same first
/// 4 KiB and grown past them was read on from the old offset, mid-line,
/// its new lines before it lost (501 records of 620, exit 0).
fn find(old: &[Entry], claimed: &[bool], s: &Seen, by_inode: bool, sep: u8) -> Option<usize> {
    (0..old.len()).find(|&e| {
        let o = &old[e];
        !claimed[e]
            && (!by_inode || (o.dev, o.ino) == (s.dev, s.ino))
            && same_head(o, s)
            && (s.compressed || s.size >= o.offset && continues_at(o, s, sep))
    })
}

/// Whether plain file `s` goes on where entry `o` was counted to: after a
/// separator, or after the same bytes as where it was cut.
fn continues_at(o: &Entry, s: &Seen, sep: u8) -> bool {
    let cut = o.cut.is_some_and(|h| before_hash(s, o.offset) == Some(h));
    cut || record_ends_at(s, o.offset, sep)
}

/// Whether plain file `s` has a separator just before byte `at` (or `at` is
/// its start). A byte that cannot be read is not taken for a sign.
fn record_ends_at(s: &Seen, at: u64, sep: u8) -> bool {
    let (Some(path), Some(before)) = (&s.plain, at.checked_sub(1)) else {
        return true;
    };
    let mut b = [0u8; 1];
    File::open(path)
        .and_then(|f| read_full_at(&f, &mut b, before))
        .map_or(true, |n| n < 1 || b[0] == sep)
}

fn continued(o: &Entry, e: usize, s: &Seen) -> Fate {
    let same = (o.dev, o.ino, o.size, o.compressed) == (s.dev, s.ino, s.size, true);
    if same {
        Fate::Unchanged { entry: e }
    } else {
        Fate::Continued {
            entry: e,
            from: o.offset,
        }
    }
}

impl Resume {
    /// Set input `i`'s span from its fate (a plain file's ends after its last
    /// separator; the rest is its tail).
    fn set_span(&mut self, i: usize, inp: &mut Input, sep: u8) {
        let from = match &self.fates[i] {
            Fate::Continued { from, .. } => *from,
            Fate::Unchanged { .. } | Fate::Unknown => return,
            Fate::New | Fate::Restarted { .. } => 0,
        };
        match &inp.source {
            Source::File { path, size } => {
                let end = File::open(path)
                    .and_then(|f| last_record_end(&f, from, *size, sep))
                    .unwrap_or(*size);
                inp.span = Some((from, end));
                self.ends[i] = Some(end);
                if end < *size {
                    self.tails[i] = Some((end, *size));
                }
            }
            // Decoded bytes to skip; the scan reads to the end (a span on a
            // compressed file also keeps it whole, not cut into parts).
            Source::Compressed { .. } => inp.span = Some((from, u64::MAX)),
            Source::Stream { .. } => {}
        }
    }

    /// Inputs the scan need not open (compressed files read to their end).
    pub fn skipped(&self, i: usize) -> bool {
        matches!(self.fates[i], Fate::Unchanged { .. })
    }

    /// The ledger after the run: an entry per input looked at (offsets of
    /// compressed files from `decoded_end`, the decoded bytes the scan
    /// reached, per input), then the old entries no input claimed.
    pub fn ledger(
        &self,
        old: &[Entry],
        inputs: &[Input],
        decoded_end: &dyn Fn(usize) -> Option<u64>,
    ) -> Vec<Entry> {
        let mut out = Vec::new();
        for (i, inp) in inputs.iter().enumerate() {
            let Some(s) = &self.seen[i] else { continue };
            let Some(offset) = self.offset(i, old, decoded_end) else {
                continue;
            };
            let head_len = offset.min(s.head.len() as u64);
            // Still where it was cut: no record read past it.
            let cut = match self.fates[i] {
                Fate::Continued { entry, from } => {
                    offset == from
                        && (old[entry].cut.is_some() || self.cut.iter().any(|&(k, _)| k == i))
                }
                _ => false,
            };
            let cut = cut.then(|| before_hash(s, offset)).flatten();
            out.push(Entry {
                name: inp.name.clone(),
                dev: s.dev,
                ino: s.ino,
                size: s.size,
                head_len,
                head_hash: head_hash(&s.head[..head_len as usize]),
                offset,
                compressed: s.compressed,
                gone: false,
                cut,
            });
        }
        out.extend(self.gone.iter().map(|&e| Entry {
            gone: true,
            ..old[e].clone()
        }));
        out
    }

    /// Where input `i`'s counted bytes end after the run, if it has an entry
    /// in [`Resume::ledger`].
    fn offset(
        &self,
        i: usize,
        old: &[Entry],
        decoded_end: &dyn Fn(usize) -> Option<u64>,
    ) -> Option<u64> {
        self.seen[i].as_ref()?;
        match (&self.fates[i], self.ends[i]) {
            (Fate::Unchanged { entry }, _) => Some(old[*entry].offset),
            (_, Some(end)) => Some(end),
            (_, None) => decoded_end(i),
        }
    }

    /// The index in [`Resume::ledger`]'s entries of each input's entry (for a
    /// job whose state names inputs: pangram's windows), then of each
    /// [`Resume::gone`] entry.
    pub fn entry_indices(
        &self,
        old: &[Entry],
        decoded_end: &dyn Fn(usize) -> Option<u64>,
    ) -> (Vec<Option<usize>>, Vec<usize>) {
        let mut n = 0;
        let inputs = (0..self.fates.len())
            .map(|i| {
                self.offset(i, old, decoded_end).map(|_| {
                    n += 1;
                    n - 1
                })
            })
            .collect();
        (inputs, (n..n + self.gone.len()).collect())
    }
}

/// Identity and head of an input.
fn look(inp: &Input) -> io::Result<Seen> {
    let (path, compressed) = match &inp.source {
        Source::File { path, .. } => (path, false),
        Source::Compressed { path, .. } => (path, true),
        Source::Stream { .. } => return Err(io::Error::other("a stream")),
    };
    let f = File::open(path)?;
    let m = f.metadata()?;
    let mut head = vec![0u8; HEAD];
    let n = if compressed {
        let mut src = super::stream::open_stream(&inp.source, None)?;
        let mut n = 0;
        while n < HEAD {
            match src.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A damaged file: what decoded identifies it; the scan
                // names the error.
                Err(_) => break,
            }
        }
        n
    } else {
        read_full_at(&f, &mut head, 0)?
    };
    head.truncate(n);
    Ok(Seen {
        dev: m.dev(),
        ino: m.ino(),
        size: m.len(),
        compressed,
        head,
        plain: (!compressed).then(|| path.clone()),
    })
}

/// The end of the last whole record of `f` in `[from, size)`: just after its
/// last separator there, or `from` if it has none. Read backwards in 64 KiB
/// steps (a log's last record is short).
pub fn last_record_end(f: &File, from: u64, size: u64, sep: u8) -> io::Result<u64> {
    const STEP: u64 = 64 << 10;
    let mut buf = vec![0u8; STEP as usize];
    let mut hi = size;
    while hi > from {
        let lo = hi.saturating_sub(STEP).max(from);
        let len = (hi - lo) as usize;
        let n = read_full_at(f, &mut buf[..len], lo)?;
        if let Some(p) = memchr::memrchr(sep, &buf[..n]) {
            return Ok(lo + p as u64 + 1);
        }
        hi = lo;
    }
    Ok(from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn entry(name: &str, offset: u64) -> Entry {
        Entry {
            name: name.into(),
            dev: 1,
            ino: 2,
            size: offset + 3,
            head_len: offset.min(HEAD as u64),
            head_hash: 7,
            offset,
            compressed: name.ends_with(".gz"),
            gone: false,
            cut: name.contains("cut").then_some(11),
        }
    }

    #[test]
    fn ledger_round_trips_and_refuses_damage() {
        let l = Ledger {
            settings: vec![("job".into(), "count".into())],
            entries: vec![
                entry("a.log", 10),
                entry("b.log.gz", 5000),
                entry("cut.log", 9),
            ],
        };
        let b = write_ledger(&l);
        assert_eq!(read_ledger(&b), Ok(l));
        assert_eq!(read_ledger(&[]), Err(LedgerError::NoLedger));
        for n in 0..b.len() {
            assert!(read_ledger(&b[..n]).is_err(), "cut at {n}");
        }
        let mut more = b.clone();
        more.push(0);
        assert!(read_ledger(&more).is_err());
    }

    /// A state file of either ledger layout loads, and its job's state is
    /// the one written; a ledger whose length does not meet the payload's
    /// end is refused.
    #[test]
    fn states_of_both_ledger_layouts_load() {
        use crate::jobs::count::{Count, CountState};
        let l = Ledger {
            settings: vec![("job".into(), "count".into())],
            entries: vec![entry("a.log", 10)],
        };
        let v2 = write_ledger(&l);
        let mut v1 = v2[..v2.len() - 8].to_vec();
        assert_eq!(v1[5], LEDGER_VERSION as u8);
        v1[5] = LEDGER_V1 as u8;
        let job = Count { sep: b'\n' };
        let st = CountState {
            records: 41,
            bytes: 4242,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        for ledger in [&v2, &v1] {
            let bytes = partial::encode_with(&job, &st, &Default::default(), ledger);
            std::fs::write(&path, bytes).unwrap();
            let loaded = load(&path, &job, &l.settings).unwrap().unwrap();
            assert_eq!(loaded.ledger, l);
            let got = loaded.state().unwrap();
            assert_eq!((got.records, got.bytes), (41, 4242));
        }
        // A payload one byte longer than written: the ledger found from the
        // end no longer starts where the payload ends.
        let mut padded = v2.clone();
        padded.insert(0, 0);
        let bytes = partial::encode_with(&job, &st, &Default::default(), &padded);
        std::fs::write(&path, bytes).unwrap();
        let loaded = load(&path, &job, &l.settings).unwrap().unwrap();
        assert!(loaded.state().is_err());
    }

    #[test]
    fn last_record_end_leaves_the_partial_line() {
        let mut f = tempfile::tempfile().unwrap();
        let text = format!("{}\nab\ncd", "x".repeat(100_000));
        f.write_all(text.as_bytes()).unwrap();
        let n = text.len() as u64;
        assert_eq!(last_record_end(&f, 0, n, b'\n').unwrap(), n - 2);
        assert_eq!(last_record_end(&f, n - 2, n, b'\n').unwrap(), n - 2);
        assert_eq!(last_record_end(&f, 0, 100_001, b'\n').unwrap(), 100_001);
        assert_eq!(last_record_end(&f, 0, 50_000, b'\n').unwrap(), 0);
    }
}
