//! CSV files whose quoted fields hold line breaks: found before a scan, and
//! read whole and serially (their records cannot be cut at any newline).

use std::collections::BTreeSet;

use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{self, Input, InputError, ScanOptions, Source};

use super::job::{BatchJob, BatchState};
use crate::csv::Quoting;

/// For each input: is it a regular file with a line break inside quotes? One
/// scan (every core, nothing parsed) finds the files with any `"`, and only
/// those get the serial pass that follows the quote state. A serial pass over
/// every file (mmap and memchr) was 9% of a 1BRC query's CPU in perf, all of it
/// before the query's scan could start. The files are read as the query's scan
/// reads them (`pread` into each worker's reused buffer, unless `--mmap`), no
/// longer always mapped: on the AMD EPYC host, 1 GiB of 1BRC
/// took 0.083 s read against 0.122 s mapped (11 rounds of `wf count` with and
/// without `--mmap`; mapped, the search ran on freshly mapped pages and the
/// process's RSS grew by the file's size), where on the 2.25 GHz host reading
/// had cost 0.35 s of system time on the 1BRC query.
///
/// A byte range of a file (`read_range`, a Dask task) is looked at from the
/// file's start, not only its own bytes: a range that lies inside one
/// quoted field holds no quote of its own, and read as plain lines it made
/// records of the field's lines (a 1.6 MB CSV
/// whose one field held 60,000 lines gave Dask 61,974 rows for 4,000, exit
/// 0). A file without a quote before a range's end costs one `memchr` pass
/// up to there.
pub fn quoted_files(inputs: &[Input], opts: &ScanOptions, q: Quoting) -> Vec<bool> {
    let ranged = |i: &usize| inputs[*i].span.is_some();
    let files: Vec<usize> = (0..inputs.len())
        .filter(|&i| matches!(inputs[i].source, Source::File { .. }))
        .collect();
    let (ranges, files): (Vec<usize>, Vec<usize>) = files.into_iter().partition(ranged);
    // A stream is read front to back, so its records can be cut quote-aware
    // as they come (`CsvEnds`) rather than after a pass of its own.
    let streams = (0..inputs.len()).filter(|&i| matches!(inputs[i].source, Source::Stream { .. }));
    let mut opts = opts.clone();
    opts.chunk_size = opts.chunk_size.max(1 << 20);
    // The query's scan reads the same files next: what this pass brings in from
    // the disk stays for it (the scan leaves a file it finds cached as it is).
    opts.page_cache = scan::PageCache::Keep;
    let mine = files.iter().map(|&i| inputs[i].clone()).collect();
    // Unreadable files are reported by the query's own scan.
    let found = scan::run(&AnyQuote, mine, &opts, None).state;
    let mut flags = vec![false; inputs.len()];
    for i in streams {
        flags[i] = true;
    }
    for k in found {
        flags[files[k]] = has_quoted_newline(&inputs[files[k]], q);
    }
    for i in ranges {
        flags[i] = range_has_quoted_newline(&inputs[i], q);
    }
    flags
}

/// A CSV stream's record ends, for the scan to cut its blocks at (never at a
/// line break inside quotes).
#[derive(Debug)]
pub struct CsvEnds(pub Quoting);

impl wf_core::scan::RecordEnds for CsvEnds {
    fn record_end(&self, data: &[u8], start: usize) -> Option<usize> {
        self.0.stream_end(data, start)
    }
}

/// The inputs (indices) that hold a double quote anywhere.
struct AnyQuote;

impl Job for AnyQuote {
    type State = BTreeSet<usize>;

    fn new_state(&self) -> Self::State {
        BTreeSet::new()
    }

    fn process(&self, found: &mut Self::State, chunk: &Chunk<'_>) {
        if !found.contains(&chunk.input) && memchr::memchr(b'"', chunk.data).is_some() {
            found.insert(chunk.input);
        }
    }

    fn merge(&self, into: &mut Self::State, other: Self::State) {
        into.extend(other);
    }

    fn offsets(&self) -> bool {
        false
    }
}

/// [`has_quoted_newline`] of a byte range's file, looked at only when a
/// quote stands before the end of the range's last record (the first line
/// break at or after its end): without one, every record the range holds
/// is cut at plain line breaks, and the file past it need not be read (a
/// range is a Dask task: each read the whole file).
fn range_has_quoted_newline(input: &Input, q: Quoting) -> bool {
    let Ok(m) = map_file(input) else {
        return false;
    };
    let end = input
        .span
        .map_or(m.len(), |(_, e)| e.min(m.len() as u64) as usize);
    let last = memchr::memchr(b'\n', &m[end..]).map_or(m.len(), |i| end + i);
    memchr::memchr(b'"', &m[..last]).is_some() && q.has_quoted_newline(&m)
}

/// True for a regular file that holds a line break inside quotes.
fn has_quoted_newline(input: &Input, q: Quoting) -> bool {
    map_file(input).is_ok_and(|m| q.has_quoted_newline(&m))
}

/// A regular file input, mapped (the scan reports the errors).
fn map_file(input: &Input) -> std::io::Result<memmap2::Mmap> {
    let Source::File { path, .. } = &input.source else {
        return Err(std::io::ErrorKind::Unsupported.into());
    };
    let f = std::fs::File::open(path)?;
    // SAFETY: read-only map of a file this process does not write; a file
    // truncated meanwhile could fault, as with `--mmap`.
    unsafe { memmap2::Mmap::map(&f) }
}

/// The records of byte ranges of CSV files whose quoted fields hold line
/// breaks (ranges of the Python package's `read_range`, one per Dask task).
/// The engine cuts a range at newlines, which may lie inside quotes, so each
/// range is read here whole, on this thread: from the first record that
/// starts at or after the range's start to the first that starts at or after
/// its end, both found by cutting the file's records from its start (one pass
/// over its quotes and newlines up to the range's end). The ranges of a file
/// thus hold each of its records exactly once, as the CLI reads them.
pub fn read_spans(job: &BatchJob, inputs: &[Input]) -> (BatchState, Vec<InputError>, u64) {
    let q = job.format.quoting().expect("a format with quoted records");
    let mut state = job.new_state();
    let (mut errors, mut bytes) = (Vec::new(), 0);
    for (i, input) in inputs.iter().enumerate() {
        let (s, e) = input.span.unwrap_or((0, u64::MAX));
        let m = match map_file(input) {
            Ok(m) => m,
            Err(err) => {
                errors.push(InputError::io(&input.name, &err));
                continue;
            }
        };
        let clip = |x: u64| x.min(m.len() as u64) as usize;
        let start = q.record_start_from(&m, 0, clip(s));
        let end = q.record_start_from(&m, start, clip(e));
        let chunk = Chunk {
            input: i,
            offset: start as u64,
            data: &m[start..end],
        };
        job.process(&mut state, &chunk);
        bytes += (end - start) as u64;
    }
    (state, errors, bytes)
}
