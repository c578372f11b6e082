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

/// Bytes read from the start of the first input to detect a format or infer types.
pub const SAMPLE: usize = 256 << 10;
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
    let format = match spec.eq_ignore_ascii_case("auto") {
        true => crate::detect::detect_named(&first, fopts, &name)?,
        false => crate::from_spec(spec, fopts, &first)?,
    };
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
            Ok(Arc::new(csv.clone().by_name(&samples)?))
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
/// Each byte is searched once and copied once: `buf[SAMPLE..searched]` holds
/// no newline (a search from SAMPLE after every read made a 64 MiB line
/// quadratic), and the reads go straight into the buffer (`read_to_end` in
/// steps of SAMPLE probed with small reads and grew the buffer by copying, and
/// the BOM was stripped by a copy of the whole sample: 60% of the CPU time of
/// `wf sql` over one 64 MiB line went to faulting in and copying those pages).
pub fn sample_of(r: &mut dyn Read, size: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(SAMPLE);
    let mut searched = SAMPLE;
    loop {
        if buf.len() >= SAMPLE {
            if buf.len() >= MAX_SAMPLE || memchr::memchr(b'\n', &buf[searched..]).is_some() {
                break;
            }
            searched = buf.len();
            let want = (size as usize).clamp(buf.len(), MAX_SAMPLE);
            buf.reserve_exact(want.saturating_sub(buf.capacity()));
        }
        if append(r, &mut buf, SAMPLE)? == 0 {
            break;
        }
    }
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok(buf)
}

/// Append up to `n` bytes of `r` to `buf` (fewer only at its end); returns
/// how many. Read into the buffer's spare room, which is not zeroed first.
fn append(r: &mut dyn Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<usize> {
    buf.reserve(n);
    r.take(n as u64).read_to_end(buf)
}
