//! The first bytes of a table's inputs, and the format they decide: `auto`
//! detects a format from them, CSV and JSON infer their types, and a table of
//! several CSV files matches their headers by name.
//!
//! Streams (standard input, pipes, compressed files) can be read once, so
//! their samples are taken by whoever opened them (`wf_sql::stream`) and
//! handed in by input index; regular files are sampled here.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use wf_core::scan::{Input, InputError, Source};

use super::OpenError;
use crate::{Format, FormatError, FormatOptions};

pub use crate::SAMPLE;
/// The most a sample holds to finish a long first record.
pub const MAX_SAMPLE: usize = 64 << 20;

const BOM: &[u8] = b"\xef\xbb\xbf";

/// A record without the UTF-8 byte order mark that may start a file (Excel's CSV).
pub fn strip_bom(r: &[u8]) -> &[u8] {
    r.strip_prefix(BOM).unwrap_or(r)
}

/// The format of a table: `spec` (`--format`) read against a sample of its
/// first input with data (`streams`: the samples of its stream inputs, by
/// input index); CSV over several files matches their headers by name. A
/// first input that cannot be read is an error, of the I/O error's kind.
pub fn format_of(
    spec: &str,
    inputs: &[Input],
    streams: &[(usize, &[u8])],
    fopts: &FormatOptions,
) -> Result<Arc<dyn Format>, OpenError> {
    let sample = |k: usize| -> Result<Cow<'_, [u8]>, InputError> {
        match streams.iter().find(|(i, _)| *i == k) {
            Some((_, s)) => Ok(Cow::Borrowed(*s)),
            None => read_sample(&inputs[k]).map(Cow::Owned),
        }
    };
    // The first input with data: an empty first file says nothing of the format.
    let (mut first, mut name, mut at) = (Cow::Borrowed(&[][..]), String::new(), 0);
    for (k, input) in inputs.iter().enumerate() {
        (first, name, at) = (sample(k)?, input.path_text(), k);
        if !first.is_empty() {
            break;
        }
    }
    if cr_lines(&first) {
        return Err(FormatError::CrLines(inputs[at].name.clone()).into());
    }
    // `whole`: the sample is known to be the input's every byte (see
    // `FormatOptions::whole_sample`): read on to its end.
    let make = |sample: &[u8], whole: bool| {
        let o = fopts.whole_if(whole);
        match spec.eq_ignore_ascii_case("auto") {
            true => crate::detect::detect_named(sample, &o, &name),
            false => crate::from_spec(spec, &o, sample),
        }
    };
    // A file shorter than SAMPLE is sampled whole (a stream's, which may end
    // at a pause mid-record, only when it ended: `wf_sql` says so).
    let short_file = inputs.get(at).is_some_and(
        |i| matches!(i.source, Source::File { size, .. } if size < crate::SAMPLE as u64),
    );
    let mut format = make(&first, short_file)?;
    // A stream's sample is never known to be its whole input.
    let mut whole = false;
    let mut lines = WIDE_LINES;
    while needs_wider_sample(format.as_ref()) {
        let Some((wide, eof, all)) = wide_sample(&inputs[at], lines)? else {
            break;
        };
        (first, whole) = (Cow::Owned(wide), all);
        format = make(&first, eof)?;
        // Read on further only to close a quoted field the sample ends in.
        let open = format.as_csv().is_some_and(|c| c.open_at_end());
        if !open || eof || first.len() >= MAX_SAMPLE {
            break;
        }
        lines *= 4;
    }
    if inputs.len() > 1 && format.as_jsonl().is_some_and(|j| j.inferred()) {
        let later = (at + 1..inputs.len()).take(crate::jsonl::SAMPLE_FILES - 1);
        // An input that cannot be read is named by the scan.
        let later: Vec<_> = later.map(|k| sample(k).unwrap_or_default()).collect();
        let mut all = vec![&first[..]];
        all.extend(later.iter().map(|s| &s[..]));
        return Ok(Arc::new(crate::jsonl::JsonLines::of_samples(fopts, &all)?));
    }
    match format.as_csv() {
        Some(csv) if inputs.len() > 1 => {
            let mut samples = Vec::with_capacity(inputs.len());
            for (k, i) in inputs.iter().enumerate() {
                // An input that cannot be read is named by the scan.
                let s = sample(k).map(|s| s.into_owned()).unwrap_or_default();
                if cr_lines(&s) {
                    return Err(FormatError::CrLines(i.name.clone()).into());
                }
                samples.push((i.name.clone(), s));
            }
            Ok(Arc::new(csv.clone().by_name(&samples, whole)?))
        }
        _ => Ok(format),
    }
}

/// Whether a sample's lines end in `\r` alone: no `\n`, and a `\r` with
/// more after it.
fn cr_lines(sample: &[u8]) -> bool {
    let cr = memchr::memchr(b'\r', sample);
    memchr::memchr(b'\n', sample).is_none() && cr.is_some_and(|at| at + 1 < sample.len())
}

/// Lines a CSV or JSON-lines table's first input is sampled to, for the
/// types of its columns: DuckDB's `sample_size` (a column empty for the
/// first 5,000 rows of a 535 KB file was text in a sample of SAMPLE bytes,
/// `max` 98 of 70..133).
pub use crate::csv::WIDE_SAMPLE as WIDE_LINES;

/// Where a sample growing in a buffer may end: SAMPLE bytes and a record
/// end past them, and `lines` line ends; or MAX_SAMPLE bytes. Files' and
/// streams' samples both end so (`wf_sql::stream`). Each byte is searched
/// once: a search from SAMPLE after every read made a 64 MiB line
/// quadratic.
pub struct SampleEnd {
    lines: usize,
    searched: usize,
    ends: usize,
    past: bool,
}

impl SampleEnd {
    pub fn new(lines: usize) -> Self {
        SampleEnd {
            lines,
            searched: 0,
            ends: 0,
            past: false,
        }
    }

    /// Whether `buf`, grown since the last call, holds a whole sample.
    pub fn reached(&mut self, buf: &[u8]) -> bool {
        if buf.len() < SAMPLE {
            return false;
        }
        if self.lines > 0 {
            self.ends += memchr::memchr_iter(b'\n', &buf[self.searched..]).count();
        }
        let after = &buf[self.searched.max(SAMPLE)..];
        self.past = self.past || memchr::memchr(b'\n', after).is_some();
        self.searched = buf.len();
        buf.len() >= MAX_SAMPLE || (self.past && self.ends >= self.lines)
    }
}

/// Whether `format` has a column its sample gave no type (CSV, JSON lines),
/// or its sample ends inside a CSV quoted field (a record of 60,000 lines
/// had its lines typed the columns, or turned quoting off): only then is
/// the first input read further (3 KB lines: 64 MiB, 0.1 s), the second
/// case until the field closes (at most [`MAX_SAMPLE`]).
pub fn needs_wider_sample(format: &dyn Format) -> bool {
    format
        .as_csv()
        .is_some_and(|c| c.has_unseen() || c.open_at_end())
        || format.as_jsonl().is_some_and(|j| j.has_untyped())
}

/// The sample of a regular file read on to `lines` lines, whether it is
/// the whole file, and whether the whole file is in [`WIDE_LINES`] lines;
/// `None` for a stream (sampled when opened, to SAMPLE bytes).
type Wide = (Vec<u8>, bool, bool);

fn wide_sample(i: &Input, lines: usize) -> Result<Option<Wide>, InputError> {
    let Source::File { path, size } = &i.source else {
        return Ok(None);
    };
    let io = |e: std::io::Error| InputError::io(&i.name, &e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let (wide, eof) = sample_lines_of(&mut f, *size, lines).map_err(io)?;
    // DuckDB's sample is of lines: 30,000 short ones are not all sampled.
    let cut = usize::from(!wide.ends_with(b"\n") && !wide.is_empty());
    let whole = eof && memchr::memchr_iter(b'\n', &wide).count() + cut <= WIDE_LINES;
    Ok(Some((wide, eof, whole)))
}

/// The sample of a regular file (streams have theirs taken when opened).
pub fn read_sample(i: &Input) -> Result<Vec<u8>, InputError> {
    let Source::File { path, size } = &i.source else {
        return Ok(Vec::new());
    };
    let io = |e: std::io::Error| InputError::io(&i.name, &e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    sample_of(&mut f, *size).map_err(io)
}

/// The sample of a reader: at least SAMPLE bytes, then on to the end of a
/// record (at most MAX_SAMPLE), so a long first record is sampled whole;
/// without a leading byte order mark. `size` (the input's, if known) sizes the
/// buffer for a long record at once.
///
/// Each byte is searched once ([`SampleEnd`]) and copied once: the reads go
/// straight into the buffer (`read_to_end` in
/// steps of SAMPLE probed with small reads and grew the buffer by copying, and
/// the BOM was stripped by a copy of the whole sample: 60% of the CPU time of
/// `wf sql` over one 64 MiB line went to faulting in and copying those pages).
pub fn sample_of(r: &mut dyn Read, size: u64) -> std::io::Result<Vec<u8>> {
    Ok(sample_lines_of(r, size, 0)?.0)
}

/// [`sample_of`], read on until it also holds `lines` line ends (at most
/// MAX_SAMPLE bytes); and whether it holds the whole input.
fn sample_lines_of(r: &mut dyn Read, size: u64, lines: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut buf = Vec::with_capacity(SAMPLE);
    let mut end = SampleEnd::new(lines);
    let whole = loop {
        if end.reached(&buf) {
            break false;
        }
        if buf.len() >= SAMPLE {
            let want = (size as usize).clamp(buf.len(), MAX_SAMPLE);
            buf.reserve_exact(want.saturating_sub(buf.capacity()));
        }
        if append(r, &mut buf, SAMPLE)? == 0 {
            break true;
        }
    };
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok((buf, whole))
}

/// Append up to `n` bytes of `r` to `buf` (fewer only at its end); returns
/// how many. Read into the buffer's spare room, which is not zeroed first.
fn append(r: &mut dyn Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<usize> {
    buf.reserve(n);
    r.take(n as u64).read_to_end(buf)
}
