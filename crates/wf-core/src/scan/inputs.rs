//! Turning what the user named into a list of inputs, before any byte is read.
//!
//! The Wide Finder and pangram work both found that walking a tree while reading it
//! makes the disk seek between metadata and data; collecting the whole list first
//! (and knowing every size) also lets the planner put the largest files first so the
//! last thread is not left alone with a big file at the end.

use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::decompress::{self, Codec, Decompress};
use super::io_message;

/// Where an input's bytes come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A regular file: it can be split into chunks and read with `pread`.
    File { path: PathBuf, size: u64 },
    /// Standard input (`path == None`), a FIFO, a process substitution or a
    /// character device: read front to back as a stream.
    /// Its first bytes are checked for a compression format unless
    /// `decompress` is `Never`.
    Stream {
        path: Option<PathBuf>,
        decompress: Decompress,
    },
    /// A regular file whose magic bytes name a compression format: decoded
    /// front to back as a stream (`scan::decompress`).
    Compressed {
        path: PathBuf,
        size: u64,
        codec: Codec,
    },
}

/// One input, in the order given.
#[derive(Debug, Clone)]
pub struct Input {
    /// How the input is named in output and messages.
    pub name: String,
    pub source: Source,
    /// Only the records that start in `[start, end)` of a regular file (a
    /// partition of a distributed run, see the Python package's `read_range`),
    /// cut into chunks like the whole file would be; `None` for the whole input.
    /// Streams and compressed files can only be read whole.
    pub span: Option<(u64, u64)>,
}

impl Input {
    /// The input's name as a value (`wf sql`'s `_file`, a format known by
    /// its extension): the name, but for a path with a control character,
    /// which [`Input::name`] shows escaped for messages (`"x\ny.csv"`,
    /// quotes and all): then the path itself. A file so named had `_file`
    /// in quotes and was not read as CSV. (Not the source's path in
    /// general: spooled stdin is read through `/proc/self/fd/N`.)
    pub fn path_text(&self) -> String {
        match &self.source {
            Source::File { path, .. } | Source::Compressed { path, .. }
                if self.name == format!("{path:?}") =>
            {
                path.to_string_lossy().into_owned()
            }
            _ => self.name.clone(),
        }
    }
}

/// An input that could not be read, with the reason: `name: message` on
/// stderr. `kind` is the kind of the I/O error behind it, when there was one,
/// so that a caller can tell a missing file from an unreadable one without
/// reading the message (the Python package's `FileNotFoundError` and
/// `PermissionError`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{name}: {message}")]
pub struct InputError {
    pub name: String,
    pub message: String,
    pub kind: Option<io::ErrorKind>,
}

impl InputError {
    /// An error that is not of an I/O call (a usage or data problem).
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            name: name.into(),
            message: message.into(),
            kind: None,
        }
    }

    /// The I/O error `e` of input `name`, said as [`io_message`] says it.
    pub fn io(name: impl Into<String>, e: &io::Error) -> Self {
        Self::new(name, io_message(e)).of_kind(e.kind())
    }

    /// This error, caused by an I/O error of kind `kind`.
    pub fn of_kind(mut self, kind: io::ErrorKind) -> Self {
        self.kind = Some(kind);
        self
    }
}

/// Paths for the files behind inputs (for jobs that re-open inputs).
pub fn input_path(inp: &Input) -> Option<&PathBuf> {
    match &inp.source {
        Source::File { path, .. } | Source::Compressed { path, .. } => Some(path),
        Source::Stream { path, .. } => path.as_ref(),
    }
}

/// An input as pangram's windows name it: its path's raw bytes (a name that
/// is not UTF-8 is exact, where [`Input::name`] is lossy), else its name.
pub fn input_path_bytes(inp: &Input) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    match input_path(inp) {
        Some(p) => p.as_os_str().as_bytes(),
        None => inp.name.as_bytes(),
    }
}

/// The input that `target` (an output file about to be written) is, by
/// device and inode (stdin's file too): writing it would destroy the input
/// (`wf report -o access.log access.log` replaced the log with its report).
/// `None` when `target` does not exist yet or is none of them.
pub fn input_at<'a>(
    target: &Path,
    inputs: impl IntoIterator<Item = &'a Input>,
) -> Option<&'a Input> {
    inputs.into_iter().find(|i| {
        let path = match &i.source {
            Source::File { path, .. } | Source::Compressed { path, .. } => path.as_path(),
            Source::Stream { path: Some(p), .. } => p.as_path(),
            Source::Stream { path: None, .. } => Path::new("/dev/stdin"),
        };
        same_file(path, target)
    })
}

/// `a` and `b` are one file (device and inode; links followed).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Files (device, inode) that directory walks leave out: a command's own
/// output in a directory it reads (`wf report -o logs/r.html logs/` every
/// night read its last page as failed lines). Set by [`leave_out_of_walks`]
/// before inputs are collected, as `set_zstd_window_log_max` is: every
/// collection of the run (a `--state` scan, `--since`'s seek) sees it.
static NOT_WALKED: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

/// Directory walks of this process leave out the file at `path` (if it
/// exists; named on the command line, it is still an input): a report's
/// page, a plot or a `--state` file, which are no logs. Not `wf sql`'s
/// `-o`: a file of rows like the inputs' may be a real input, and is
/// refused as one.
pub fn leave_out_of_walks(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = fs::metadata(path) {
        NOT_WALKED.lock().unwrap().push((m.dev(), m.ino()));
    }
}

/// A file met while walking that [`leave_out_of_walks`] named.
fn left_out(md: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let key = (md.dev(), md.ino());
    NOT_WALKED.lock().unwrap().contains(&key)
}

/// Files whose heads are asked for at once (see [`InputSpec::detect`]).
const HEAD_WINDOW: usize = 256;

/// How to collect inputs.
#[derive(Debug, Clone, Default)]
pub struct InputSpec {
    pub paths: Vec<PathBuf>,
    pub files_from: Option<PathBuf>,
    /// Follow symbolic links met while walking directories (`-L`).
    pub follow_links: bool,
    /// Which regular files are checked for compression (`--decompress`).
    pub decompress: Decompress,
}

/// The collected inputs and the paths that could not be used.
#[derive(Debug, Default)]
pub struct Collected {
    pub inputs: Vec<Input>,
    pub errors: Vec<InputError>,
}

impl InputSpec {
    /// Expand paths, directories and `--files-from` into inputs. Standard input is
    /// used when nothing is named.
    pub fn collect(&self) -> Collected {
        let mut out = Collected::default();
        let mut named: Vec<PathBuf> = self.paths.clone();
        if let Some(list) = &self.files_from {
            match read_list(list) {
                Ok(more) => named.extend(more),
                Err(e) => out
                    .errors
                    .push(InputError::io(list.display().to_string(), &e)),
            }
        }
        if named.is_empty() && self.files_from.is_none() {
            out.inputs.push(self.stdin());
            return out;
        }
        let mut stdin_used = self
            .files_from
            .as_ref()
            .is_some_and(|l| l.as_os_str() == "-");
        for p in &named {
            if p.as_os_str() == "-" {
                if stdin_used {
                    out.errors.push(InputError::new(
                        "-",
                        "standard input is named more than once (or is also --files-from -)",
                    ));
                    continue;
                }
                stdin_used = true;
            }
            self.add_path(p, &mut out);
        }
        self.detect(&mut out);
        out
    }

    /// Which regular files are compressed, by their first bytes (unless
    /// `--decompress never`). The heads are asked for in windows of
    /// [`HEAD_WINDOW`] files (`POSIX_FADV_WILLNEED`), then read. On 1,218 cold
    /// book files (medians of 7), `wf count` took 1.43x the time of `--decompress
    /// never` with one read at a time, 1.19x with windows of 64, 1.03x with 256.
    fn detect(&self, out: &mut Collected) {
        if self.decompress == Decompress::Never {
            return;
        }
        let files: Vec<usize> = (0..out.inputs.len())
            .filter(|&i| matches!(out.inputs[i].source, Source::File { size, .. } if size > 0))
            .collect();
        let mut codecs: Vec<Option<Codec>> = vec![None; out.inputs.len()];
        for w in files.chunks(HEAD_WINDOW) {
            let opened: Vec<(usize, fs::File)> = w
                .iter()
                .filter_map(|&i| {
                    let f = fs::File::open(input_path(&out.inputs[i])?).ok()?;
                    super::fadvise(
                        &f,
                        0,
                        decompress::MAGIC_LEN as u64,
                        libc::POSIX_FADV_WILLNEED,
                    );
                    Some((i, f))
                })
                .collect();
            for (i, mut f) in opened {
                codecs[i] = decompress::read_head(&mut f)
                    .ok()
                    .and_then(|h| decompress::detect(&h));
            }
        }
        let always = self.decompress == Decompress::Always;
        let mut errors = Vec::new();
        let mut k = 0;
        out.inputs.retain_mut(|inp| {
            let codec = codecs[k];
            k += 1;
            let Source::File { path, size } = &inp.source else {
                return true;
            };
            match codec {
                Some(codec) => {
                    let (path, size) = (path.clone(), *size);
                    inp.source = Source::Compressed { path, size, codec };
                }
                None if always => {
                    errors.push(InputError::new(&inp.name, decompress::NOT_COMPRESSED));
                    return false;
                }
                None => {}
            }
            true
        });
        out.errors.extend(errors);
    }

    /// Standard input, as `-` or when no input is named.
    fn stdin(&self) -> Input {
        Input {
            name: "<stdin>".into(),
            source: Source::Stream {
                path: None,
                decompress: self.decompress,
            },
            span: None,
        }
    }

    fn add_path(&self, p: &Path, out: &mut Collected) {
        if p.as_os_str() == "-" {
            out.inputs.push(self.stdin());
            return;
        }
        // Control characters (a stray `\r` from a CRLF `--files-from` list) are shown
        // escaped, so that an error message says what was really looked up.
        let name = if p
            .as_os_str()
            .as_bytes()
            .iter()
            .any(|b| b.is_ascii_control())
        {
            format!("{p:?}")
        } else {
            p.display().to_string()
        };
        // Paths named by the user are followed like `wc` follows them.
        let md = match fs::metadata(p) {
            Ok(md) => md,
            Err(e) => {
                let message = if fs::symlink_metadata(p).is_ok() {
                    format!("{} (dangling symbolic link)", io_message(&e))
                } else {
                    io_message(&e)
                };
                out.errors
                    .push(InputError::new(name, message).of_kind(e.kind()));
                return;
            }
        };
        if md.is_dir() {
            self.walk(p, out);
        } else if md.is_file() && !pseudo_file(p, &md) {
            self.push_file(name, p, md.len(), out);
        } else {
            // FIFO, /dev/fd/N from a process substitution, a character device, or a
            // /proc or /sys file (whose size says nothing about its content).
            out.inputs.push(Input {
                name,
                source: Source::Stream {
                    path: Some(p.to_path_buf()),
                    decompress: self.decompress,
                },
                span: None,
            });
        }
    }

    /// A regular file (whether it is compressed is decided by [`Self::detect`],
    /// once all are listed). A file whose first bytes cannot be read is left to
    /// the scan, which names the error.
    fn push_file(&self, name: String, path: &Path, size: u64, out: &mut Collected) {
        let path = path.to_path_buf();
        let source = Source::File { path, size };
        out.inputs.push(Input {
            name,
            source,
            span: None,
        });
    }

    fn walk(&self, dir: &Path, out: &mut Collected) {
        let walker = walkdir::WalkDir::new(dir)
            .follow_links(self.follow_links)
            .sort_by_file_name();
        for entry in walker {
            match entry {
                Ok(ent) => {
                    let ft = ent.file_type();
                    if ft.is_dir() || !ft.is_file() {
                        // Directories are descended; symlinks (when not following),
                        // FIFOs, sockets and devices met while walking are skipped.
                        continue;
                    }
                    let size = match ent.metadata() {
                        Ok(md) if left_out(&md) => continue,
                        Ok(md) => md.len(),
                        Err(e) => {
                            let name = ent.path().display().to_string();
                            let err = InputError::new(name, e.to_string());
                            out.errors.push(match e.io_error() {
                                Some(ioe) => err.of_kind(ioe.kind()),
                                None => err,
                            });
                            continue;
                        }
                    };
                    self.push_file(ent.path().display().to_string(), ent.path(), size, out);
                }
                Err(e) => {
                    let name = e
                        .path()
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| dir.display().to_string());
                    out.errors.push(match e.io_error() {
                        Some(ioe) => InputError::io(name, ioe),
                        None => InputError::new(name, e.to_string()),
                    });
                }
            }
        }
    }
}

/// Whether `p` is a regular file of /proc, /sys or a similar kernel file system,
/// whose size (0, or one page) says nothing about its content: such a file is read
/// as a stream. Only sizes of whole pages are checked (one `statfs` each).
fn pseudo_file(p: &Path, md: &fs::Metadata) -> bool {
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    const DEBUGFS_MAGIC: i64 = 0x6462_6720;
    const TRACEFS_MAGIC: i64 = 0x7472_6163;
    const CGROUP2_MAGIC: i64 = 0x6367_7270;
    const SECURITYFS_MAGIC: i64 = 0x7363_6673;
    if !md.len().is_multiple_of(4096) {
        return false;
    }
    matches!(
        super::fs_magic(p),
        Some(
            PROC_SUPER_MAGIC
                | SYSFS_MAGIC
                | DEBUGFS_MAGIC
                | TRACEFS_MAGIC
                | CGROUP2_MAGIC
                | SECURITYFS_MAGIC
        )
    )
}

/// Read a `--files-from` list: one path a line, `-` for standard input, or
/// one path per NUL-ended name if the list has a NUL byte (`find -print0`,
/// as `wc --files0-from` reads; no name holds a NUL, so the two never mix
/// up, and a name with a line break in it is read whole). Empty names are
/// ignored; a trailing `\r` is kept (it may be part of a name).
fn read_list(list: &Path) -> io::Result<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let regular = list.as_os_str() != "-" && fs::metadata(list).is_ok_and(|m| m.is_file());
    if !regular {
        if let Some(kept) = kept_list(list) {
            return Ok(kept);
        }
    }
    let mut bytes = Vec::new();
    if list.as_os_str() == "-" {
        io::stdin().lock().read_to_end(&mut bytes)?;
    } else {
        fs::File::open(list)?.read_to_end(&mut bytes)?;
    }
    let sep = if bytes.contains(&0) { 0 } else { b'\n' };
    let names = bytes.split(|&b| b == sep).filter(|n| !n.is_empty());
    let path = |n: &[u8]| PathBuf::from(std::ffi::OsString::from_vec(n.to_vec()));
    let names: Vec<PathBuf> = names.map(path).collect();
    if !regular {
        LISTS.lock().unwrap().push((list.to_owned(), names.clone()));
    }
    Ok(names)
}

/// Lists read from stdin, a pipe or a FIFO, which read once: a command
/// collects its inputs more than once (`wf report` its format from the first
/// input's head, then its scan), and a second read of the pipe was empty:
/// `ls *.log | wf report --files-from -` reported 0 requests, exit 0. A
/// regular file's list is read again by each collect.
static LISTS: std::sync::Mutex<Vec<(PathBuf, Vec<PathBuf>)>> = std::sync::Mutex::new(Vec::new());

fn kept_list(list: &Path) -> Option<Vec<PathBuf>> {
    let lists = LISTS.lock().unwrap();
    lists
        .iter()
        .find(|(l, _)| l == list)
        .map(|(_, n)| n.clone())
}

/// The largest size (`u64::MAX` bytes, one byte short of 16 EiB).
const MAX_SIZE: u128 = u64::MAX as u128;

/// Why a size argument was refused; each says the argument as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("invalid size '{input}': unknown unit '{unit}' ({units})", units = SIZE_UNITS)]
    Unit { input: String, unit: String },
    #[error("invalid size '{input}': expected a number like 64M or 1GB")]
    Number { input: String },
    #[error(
        "invalid size '{input}': must be from 1 byte to {max} bytes (just under 16 EiB)",
        max = u64::MAX
    )]
    Range { input: String },
}

/// Parse a size such as `7`, `64K`, `64M`, `1.5G`, `1GiB` (powers of 1024) or
/// `1MB`, `2GB` (powers of 1000), as `dd` and `numfmt` read them: the unit's
/// letter in either case, `iB`/`i` for binary, `B` for decimal. From 1 byte to
/// `u64::MAX` (one byte short of 16 EiB): `16E` is out of range.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    let input = || s.to_string();
    let mult = size_unit(unit.trim()).ok_or_else(|| SizeError::Unit {
        input: input(),
        unit: unit.to_string(),
    })?;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let bad_number = || SizeError::Number { input: input() };
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(bad_number());
    }
    let out_of_range = || SizeError::Range { input: input() };
    // Exact in integers: the whole part, then the fraction's digits (at most 19
    // of them matter, 1/10^19 of an EiB being below a byte), rounded down.
    let whole: u128 = if int.is_empty() {
        0
    } else {
        int.parse::<u128>().map_err(|_| out_of_range())?
    };
    let mut v = whole
        .checked_mul(mult)
        .filter(|&v| v <= MAX_SIZE)
        .ok_or_else(out_of_range)?;
    let frac = &frac[..frac.len().min(19)];
    if !frac.is_empty() {
        let den = 10u128.pow(frac.len() as u32);
        v += frac.parse::<u128>().map_err(|_| bad_number())? * mult / den;
    }
    if v == 0 || v > MAX_SIZE {
        return Err(out_of_range());
    }
    Ok(v as u64)
}

/// The units [`parse_size`] knows, for its messages.
const SIZE_UNITS: &str = "K, M, G, T, P, E: x1024; KiB, MiB...: x1024; KB, MB...: x1000";

/// The multiplier of a size's unit: none or `B` for bytes; a letter (`K`..`E`,
/// either case) alone or with `i`/`iB` for powers of 1024, with `B` for powers
/// of 1000.
fn size_unit(unit: &str) -> Option<u128> {
    let u = unit.to_ascii_uppercase();
    let (letter, rest) = match u.as_bytes() {
        [] => return Some(1),
        [b'B'] => return Some(1),
        [l, rest @ ..] => (*l, rest),
    };
    let power = b"KMGTPE".iter().position(|&c| c == letter)? as u32 + 1;
    match rest {
        [] | b"I" | b"IB" => Some(1024u128.pow(power)),
        b"B" => Some(1000u128.pow(power)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("7").unwrap(), 7);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert!(parse_size("0").is_err());
        assert!(parse_size("abc").is_err());
        assert!(parse_size("5X").is_err());
    }

    #[test]
    fn si_and_iec_suffixes_as_dd_reads_them() {
        assert_eq!(parse_size("1MB").unwrap(), 1_000_000);
        assert_eq!(parse_size("1mb").unwrap(), 1_000_000);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("1Mi").unwrap(), 1 << 20);
        assert_eq!(parse_size("3KB").unwrap(), 3_000);
        assert_eq!(parse_size("3kB").unwrap(), 3_000);
        assert_eq!(parse_size("3K").unwrap(), 3 << 10);
        assert_eq!(parse_size("3KiB").unwrap(), 3 << 10);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1TB").unwrap(), 1_000_000_000_000);
        assert_eq!(parse_size("1P").unwrap(), 1 << 50);
        assert_eq!(parse_size("1PB").unwrap(), 1_000_000_000_000_000);
        assert_eq!(parse_size("15E").unwrap(), 15 << 60);
        assert_eq!(parse_size("18EB").unwrap(), 18_000_000_000_000_000_000);
        assert_eq!(parse_size("1.5MB").unwrap(), 1_500_000);
        assert_eq!(parse_size("0.5K").unwrap(), 512);
        assert_eq!(parse_size("12B").unwrap(), 12);
        assert!(parse_size("1Kx").is_err());
        assert!(parse_size("1.2.3").is_err());
        assert!(parse_size(".").is_err());
        assert!(parse_size("0.1").is_err());
    }

    /// A missing path is an error of kind NotFound when collected, and so is
    /// a file removed between collecting and scanning: the kind, not the
    /// message, is what callers (the Python package) tell them apart by.
    #[test]
    fn missing_inputs_are_not_found_errors() {
        let dir = tempfile::tempdir().unwrap();
        let (gone, kept) = (dir.path().join("gone.log"), dir.path().join("kept.log"));
        let spec = InputSpec {
            paths: vec![gone.clone()],
            ..InputSpec::default()
        };
        let e = &spec.collect().errors[0];
        assert_eq!(e.kind, Some(io::ErrorKind::NotFound), "{e}");
        assert!(
            e.to_string().ends_with(": No such file or directory"),
            "{e}"
        );
        fs::write(&kept, "a\nb\n").unwrap();
        let inputs = InputSpec {
            paths: vec![kept.clone()],
            ..InputSpec::default()
        }
        .collect()
        .inputs;
        fs::remove_file(&kept).unwrap();
        let job = crate::jobs::count::Count { sep: b'\n' };
        let out = super::super::run(&job, inputs, &super::super::ScanOptions::default(), None);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].kind, Some(io::ErrorKind::NotFound));
        assert_eq!(out.errors[0].name, kept.display().to_string());
    }

    #[test]
    fn the_largest_size_and_the_message_agree() {
        assert_eq!(parse_size("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_size("9007199254740993").unwrap(), 9007199254740993);
        for big in [
            "16E",
            "16EiB",
            "18446744073709551616",
            "19EB",
            "99999999999999999999999999999",
        ] {
            let e = parse_size(big).unwrap_err().to_string();
            assert!(
                e.contains("invalid size") && e.contains(&u64::MAX.to_string()),
                "{big}: {e}"
            );
        }
        assert!(parse_size("15.999E").is_ok());
    }
}
