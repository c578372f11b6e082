//! Compressed inputs: which files are compressed (by their magic bytes, never
//! by their names) and the streaming decoders that read them.
//!
//! A compressed file is read front to back through its decoder, as a stream:
//! the planner's stream path (`stream::read_cut`) cuts the decoded bytes into
//! record-aligned blocks that the workers parse, so parsing runs beside the
//! decoder and the decoder is the only serial part. Memory stays at the stream
//! path's block buffers whatever the ratio (a decompression bomb is read like
//! any long stream).
//!
//! A decoding error names the compressed offset the decoder had reached (the
//! input it consumed, counted by [`Consumed`]; exact to the decoder's own
//! look-ahead), rewritten into the error by [`Located`]. Streams (stdin, pipes)
//! are sniffed too: their first bytes are read, then put back in front.
//!
//! gzip members are walked here ([`GzMembers`]) rather than by flate2's
//! `MultiGzDecoder`, so that zero bytes after the last member are padding, as
//! `gzip -d` takes them, and so that the parts path (`split.rs`) knows where a
//! damaged member starts. zstd frames of windows past zstd's default limit
//! (`zstd --long`) are allowed by [`set_zstd_window_log_max`].

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use flate2::bufread::GzDecoder;

/// A compression format `wf` decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// gzip, single or multi-member (BGZF and `pigz` output included).
    Gzip,
    /// zstd, single or multi-frame (skippable frames are skipped).
    Zstd,
    /// bzip2, single or multi-stream.
    Bzip2,
    /// xz (multi-stream) or legacy `.lzma`.
    Xz,
    Lzma,
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
            Codec::Lzma => "lzma",
        })
    }
}

/// `--decompress`: whether inputs are checked for compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decompress {
    /// Decode what has a known magic; read the rest as text.
    #[default]
    Auto,
    /// Read every input as it is.
    Never,
    /// Decode every input; one with no known magic is an error.
    Always,
}

/// Decoding work done in a scan, for `--stats`: compressed bytes consumed,
/// decoded bytes produced, and the time spent in the decoders (reading the
/// compressed bytes included), summed over the threads that decoded.
#[derive(Debug, Default)]
pub struct Meter {
    pub compressed: AtomicU64,
    pub decoded: AtomicU64,
    pub nanos: AtomicU64,
}

impl Meter {
    /// The totals so far.
    pub fn totals(&self) -> Decoded {
        Decoded {
            compressed: self.compressed.load(Ordering::Relaxed),
            decoded: self.decoded.load(Ordering::Relaxed),
            seconds: self.nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

/// What a [`Meter`] measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Decoded {
    pub compressed: u64,
    pub decoded: u64,
    /// Decoder time summed over threads.
    pub seconds: f64,
}

/// The error of an input that `--decompress always` finds not compressed.
pub const NOT_COMPRESSED: &str =
    "not in a compressed format wf knows (gzip, zstd, bzip2, xz, lzma) and --decompress always";

/// The bytes a file must start with to be detected (the longest magic).
pub const MAGIC_LEN: usize = 6;

/// The format whose magic `head` starts with.
pub fn detect(head: &[u8]) -> Option<Codec> {
    match head {
        [0x1f, 0x8b, 8, ..] => Some(Codec::Gzip),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Codec::Zstd),
        // A zstd file may start with a skippable frame (pzstd writes one).
        [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Some(Codec::Zstd),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some(Codec::Bzip2),
        [0xfd, b'7', b'z', b'X', b'Z', 0] => Some(Codec::Xz),
        // lzma_alone: properties byte 0x5d and a 32-bit dictionary size.
        [0x5d, 0, 0, _, _, _] => Some(Codec::Lzma),
        _ => None,
    }
}

/// Whether `head`, shorter than [`MAGIC_LEN`], may be the start of a
/// compressed file (the first bytes of some format's magic): a file that
/// grows is looked at again once it holds enough bytes to tell.
pub fn may_start(head: &[u8]) -> bool {
    // Each magic byte as a range of values: the formats of `detect`.
    const MAGICS: [&[(u8, u8)]; 6] = [
        &[(0x1f, 0x1f), (0x8b, 0x8b), (8, 8)],
        &[(0x28, 0x28), (0xb5, 0xb5), (0x2f, 0x2f), (0xfd, 0xfd)],
        &[(0x50, 0x5f), (0x2a, 0x2a), (0x4d, 0x4d), (0x18, 0x18)],
        &[(b'B', b'B'), (b'Z', b'Z'), (b'h', b'h'), (b'1', b'9')],
        &[
            (0xfd, 0xfd),
            (b'7', b'7'),
            (b'z', b'z'),
            (b'X', b'X'),
            (b'Z', b'Z'),
            (0, 0),
        ],
        &[(0x5d, 0x5d), (0, 0), (0, 0)],
    ];
    let fits = |m: &[(u8, u8)]| (head.iter().zip(m)).all(|(&b, &(lo, hi))| (lo..=hi).contains(&b));
    MAGICS.iter().any(|m| fits(m))
}

/// A reader of the decoded bytes of `path`.
pub fn open(path: &Path, codec: Codec) -> io::Result<Box<dyn Read>> {
    metered(path, codec, None)
}

/// A reader of the decoded bytes of `path` whose work is added to `meter`.
pub fn metered(path: &Path, codec: Codec, meter: Option<&Arc<Meter>>) -> io::Result<Box<dyn Read>> {
    let src: Box<dyn Read> = Box::new(File::open(path)?);
    Ok(decoder(src, codec, 0, meter.cloned()))
}

/// The decoded bytes of a stream that starts with `head` (bytes already read
/// from it) and goes on with `rest`: decoded if `head` names a format, as they
/// are otherwise; an error under `--decompress always` if it names none.
pub fn sniffed(head: Vec<u8>, rest: Box<dyn Read>, mode: Decompress) -> io::Result<Box<dyn Read>> {
    sniffed_metered(head, rest, mode, None)
}

/// [`sniffed`], with the decoding work added to `meter`.
pub fn sniffed_metered(
    head: Vec<u8>,
    rest: Box<dyn Read>,
    mode: Decompress,
    meter: Option<&Arc<Meter>>,
) -> io::Result<Box<dyn Read>> {
    let whole: Box<dyn Read> = Box::new(io::Cursor::new(head.clone()).chain(rest));
    match (mode, detect(&head)) {
        (Decompress::Never, _) => Ok(whole),
        (_, Some(codec)) => Ok(decoder(whole, codec, 0, meter.cloned())),
        (Decompress::Always, None) => {
            Err(io::Error::new(io::ErrorKind::InvalidData, NOT_COMPRESSED))
        }
        (Decompress::Auto, None) => Ok(whole),
    }
}

/// The first [`MAGIC_LEN`] bytes of `r` (fewer at its end).
pub fn read_head(r: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut head = vec![0; MAGIC_LEN];
    let mut n = 0;
    while n < MAGIC_LEN {
        match r.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(n);
    Ok(head)
}

/// `codec`'s decoder over `src` (which starts at compressed byte `base`), with
/// errors that name the compressed offset.
pub(super) fn decoder(
    src: Box<dyn Read>,
    codec: Codec,
    base: u64,
    meter: Option<Arc<Meter>>,
) -> Box<dyn Read> {
    let input = Consumed::new(src);
    let read = input.consumed.clone();
    let decoder: Box<dyn Read> = match codec {
        Codec::Gzip => Box::new(GzMembers::new(input, base, u64::MAX)),
        Codec::Zstd => match zstd_decoder(input) {
            Ok(d) => Box::new(d),
            Err(e) => return Box::new(Failed(Some(e))),
        },
        Codec::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(input)),
        Codec::Xz => Box::new(XzStreams::new(input)),
        Codec::Lzma => match liblzma::stream::Stream::new_lzma_decoder(u64::MAX) {
            Ok(stream) => Box::new(XzStreams::lzma(liblzma::bufread::XzDecoder::new_stream(
                input, stream,
            ))),
            Err(e) => return Box::new(Failed(Some(io::Error::other(e)))),
        },
    };
    Box::new(Located::new(decoder, codec, base, read, meter))
}

/// xz streams one after another, as `xz -d` reads them: zero bytes between
/// and after them are stream padding (in 4-byte words); any other byte after a stream is an
/// error, once every byte of the streams before it was read. liblzma's
/// multi-stream decoder failed on such bytes in the read that held the last
/// stream's end: ~20 KB of a 20 MB log with garbage appended were lost,
/// where `xz -dc` gives them all.
///
/// A legacy `.lzma` file is one stream ([`XzStreams::lzma`]): any byte after
/// it is an error, once every byte of the stream was read. The format has no
/// multi-stream form: `xz -dc` says "Compressed data is corrupt" there,
/// where liblzma's decoder ended without a word (two `.lzma` files
/// concatenated counted the first's records only, exit 0).
struct XzStreams {
    dec: Option<liblzma::bufread::XzDecoder<Consumed>>,
    /// A legacy `.lzma` stream: nothing may follow it.
    alone: bool,
}

const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0];

impl XzStreams {
    fn new(src: Consumed) -> Self {
        XzStreams {
            dec: Some(liblzma::bufread::XzDecoder::new(src)),
            alone: false,
        }
    }

    /// A legacy `.lzma` file's one stream, decoded by `dec`.
    fn lzma(dec: liblzma::bufread::XzDecoder<Consumed>) -> Self {
        XzStreams {
            dec: Some(dec),
            alone: true,
        }
    }

    /// After a stream's end: the next stream's decoder, `None` at the end
    /// of the input, an error for bytes that start no stream (any byte
    /// after a `.lzma` stream).
    fn next_stream(
        mut src: Consumed,
        alone: bool,
    ) -> io::Result<Option<liblzma::bufread::XzDecoder<Consumed>>> {
        if alone {
            return match src.fill_buf()?.is_empty() {
                true => Ok(None),
                false => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes after the end of the .lzma stream (the format holds one; xz -d stops there too)",
                )),
            };
        }
        let mut padding = 0;
        let end = loop {
            let b = src.fill_buf()?;
            if b.is_empty() {
                break true;
            }
            let zeros = b.iter().take_while(|&&c| c == 0).count();
            if zeros == 0 {
                break false;
            }
            src.consume(zeros);
            padding += zeros;
        };
        // Stream padding is whole 4-byte words, as `xz -d` checks it.
        if padding % 4 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "xz stream padding is not a multiple of 4 bytes",
            ));
        }
        if end {
            return Ok(None);
        }
        let b = src.fill_buf()?;
        match XZ_MAGIC.starts_with(&b[..b.len().min(XZ_MAGIC.len())]) {
            true => Ok(Some(liblzma::bufread::XzDecoder::new(src))),
            false => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "bytes after the last xz stream are no xz stream (garbage appended)",
            )),
        }
    }
}

impl Read for XzStreams {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(d) = self.dec.as_mut() else {
                return Ok(0);
            };
            let n = d.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let src = self.dec.take().unwrap().into_inner();
            self.dec = Self::next_stream(src, self.alone)?;
        }
    }
}

/// The gzip members of a file, one after another, from a member start up to
/// the first member that ends at or after compressed byte `end` (`u64::MAX`:
/// all). Zero bytes after the last member are padding, as `gzip -d` takes
/// them (tape blocks, some log rotations leave them): skipped. Any other byte
/// there is an error (a member header that does not check out).
pub(super) struct GzMembers {
    dec: Option<GzDecoder<Consumed>>,
    base: u64,
    end: u64,
    /// Where the member being decoded starts (compressed offset), shared with
    /// whoever resynchronises after an error.
    pub(super) member: Arc<AtomicU64>,
}

impl GzMembers {
    pub(super) fn new(src: Consumed, base: u64, end: u64) -> Self {
        let member = Arc::new(AtomicU64::new(base + src.consumed.load(Ordering::Relaxed)));
        GzMembers {
            dec: Some(GzDecoder::new(src)),
            base,
            end,
            member,
        }
    }
}

impl Read for GzMembers {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(d) = self.dec.as_mut() else {
                return Ok(0);
            };
            let n = d.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let mut r = self.dec.take().unwrap().into_inner();
            let at = self.base + r.consumed.load(Ordering::Relaxed);
            self.member.store(at, Ordering::Relaxed);
            if at >= self.end || zero_padding_to_end(&mut r)? {
                return Ok(0);
            }
            self.dec = Some(GzDecoder::new(r));
        }
    }
}

/// Whether `r` holds nothing more but zero bytes (then all consumed); false,
/// with nothing consumed, if its next byte is not zero. An error if zeros are
/// followed by anything else.
pub(super) fn zero_padding_to_end(r: &mut Consumed) -> io::Result<bool> {
    match r.fill_buf()?.first() {
        None => return Ok(true),
        Some(0) => {}
        Some(_) => return Ok(false),
    }
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let zeros = buf.iter().take_while(|&&b| b == 0).count();
        let more = zeros < buf.len();
        r.consume(zeros);
        if more {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "zero padding followed by data that is not a gzip member",
            ));
        }
    }
}

/// `--zstd-window-log-max`: the largest zstd window a decoder accepts, as a
/// power of two (0: zstd's default, 2^27 = 128 MiB). Data made with `zstd
/// --long=31` needs 31 (and up to 2 GiB of memory per decoder). Kept here for
/// the process, like `zstd --memory`: every zstd decoder is made deep inside
/// the scan, far from the options, and the setting is the same for all.
static ZSTD_WINDOW_LOG_MAX: AtomicU32 = AtomicU32::new(0);

/// The accepted range of [`set_zstd_window_log_max`] (zstd's own, 64-bit).
pub const ZSTD_WINDOW_LOG: std::ops::RangeInclusive<u32> = 10..=31;

/// Let zstd decoders accept windows of up to 2^`log` bytes (see
/// [`ZSTD_WINDOW_LOG`]; 0 restores zstd's default of 2^27).
pub fn set_zstd_window_log_max(log: u32) {
    ZSTD_WINDOW_LOG_MAX.store(log, Ordering::Relaxed);
}

/// A zstd decoder over `input`, with the window limit set by
/// [`set_zstd_window_log_max`]; a frame that needs more names the option.
pub(super) fn zstd_decoder<R: BufRead>(
    input: R,
) -> io::Result<ZstdHint<zstd::stream::read::Decoder<'static, R>>> {
    let mut d = zstd::stream::read::Decoder::with_buffer(input)?;
    let log = ZSTD_WINDOW_LOG_MAX.load(Ordering::Relaxed);
    if log != 0 {
        d.window_log_max(log)?;
    }
    Ok(ZstdHint(d))
}

/// A zstd decoder whose "requires too much memory" error says how to allow it.
pub(super) struct ZstdHint<R>(R);

impl<R: Read> Read for ZstdHint<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.to_string().contains("too much memory") {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{e} (a window larger than this decoder allows: made with zstd --long? \
                         allow it with --zstd-window-log-max 31)"
                    ),
                )
            } else {
                e
            }
        })
    }
}

/// A decoder that could not be made: its error, on the first read.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(self
            .0
            .take()
            .unwrap_or_else(|| io::Error::other("decoder failed")))
    }
}

/// Buffered compressed input that counts the bytes the decoder consumed (the
/// compressed offset it reached).
pub(super) struct Consumed {
    inner: BufReader<Box<dyn Read>>,
    pub(super) consumed: Arc<AtomicU64>,
}

impl Consumed {
    pub(super) fn new(src: Box<dyn Read>) -> Self {
        Consumed {
            inner: BufReader::with_capacity(128 << 10, src),
            consumed: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Read for Consumed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl BufRead for Consumed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// A decoder whose errors say where they happened, and which treats a stream
/// that ends inside a member or frame as an error. Its work goes to a [`Meter`].
pub(super) struct Located {
    inner: Box<dyn Read>,
    codec: Codec,
    /// The compressed offset `read` counts from.
    base: u64,
    /// Compressed bytes read from the file so far.
    read: Arc<AtomicU64>,
    /// Decoded bytes so far (all of them handed out before a read decodes
    /// more, so a decoding error comes after them all).
    out: u64,
    meter: Option<Arc<Meter>>,
    /// Decoded bytes not yet handed out: `held[at..]` (see [`Located::read`]).
    held: Vec<u8>,
    at: usize,
}

impl Located {
    pub(super) fn new(
        inner: Box<dyn Read>,
        codec: Codec,
        base: u64,
        read: Arc<AtomicU64>,
        meter: Option<Arc<Meter>>,
    ) -> Self {
        Located {
            inner,
            codec,
            base,
            read,
            out: 0,
            meter,
            held: Vec::new(),
            at: 0,
        }
    }

    /// One read of the decoder into `buf` (a whole piece), timed and
    /// counted, its error located.
    fn decode(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = self.meter.as_ref().map(|_| Instant::now());
        let r = self.inner.read(buf);
        if let (Some(m), Some(t)) = (&self.meter, t) {
            m.nanos
                .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        match r {
            Ok(n) => {
                self.out += n as u64;
                Ok(n)
            }
            Err(e) => Err(io::Error::new(
                e.kind(),
                DecodeError {
                    codec: self.codec,
                    at: self.base + self.read.load(Ordering::Relaxed),
                    after: self.out,
                    message: e.to_string(),
                    truncated: e.kind() == io::ErrorKind::UnexpectedEof,
                },
            )),
        }
    }
}

impl Drop for Located {
    fn drop(&mut self) {
        if let Some(m) = &self.meter {
            let read = self.read.load(Ordering::Relaxed);
            m.compressed.fetch_add(read, Ordering::Relaxed);
            m.decoded.fetch_add(self.out, Ordering::Relaxed);
        }
    }
}

/// The decoded bytes each read of a [`Located`] asks of its decoder,
/// exactly, whatever the caller's buffer (a smaller one is served from
/// [`Located::held`]). A decoder that fails part way through a read hands out
/// none of what it decoded in it, and fills the whole buffer from one call:
/// a 1.5 MB zstd file with a damaged block at its middle was "0 decoded
/// bytes" into an 8 MiB chunk; and a gzip file with a damaged deflate block
/// lost what its member had decoded in that read, as much as the caller
/// asked: 557,056 good bytes of a member from a file's parts, and over a
/// stream an amount that changed with `--chunk-size` (9,961, 10,991 or
/// 11,178 records of one file). Now what a failed read loses is at most
/// one piece; from a file, the same at every chunk size (from a pipe, where
/// a piece ends depends on how much the pipe held when the decoder read). 32 KiB: as fast as 8 MiB reads
/// for zstd on the 1 GiB log (0.817 s against 0.831 s, medians of 5);
/// gzip's decoder pays for each call (32 KiB reads cost it 10%), so its
/// pieces are 256 KiB.
const PIECE: usize = 32 << 10;
const GZIP_PIECE: usize = 256 << 10;

impl Read for Located {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.held.len() {
            let piece = match self.codec {
                Codec::Gzip => GZIP_PIECE,
                _ => PIECE,
            };
            if buf.len() >= piece {
                return self.decode(&mut buf[..piece]);
            }
            let mut held = std::mem::take(&mut self.held);
            // Nothing held, whatever the decode gives (a read after an
            // error would otherwise slice past the empty buffer).
            self.at = 0;
            held.resize(piece, 0);
            let n = self.decode(&mut held)?;
            held.truncate(n);
            self.held = held;
        }
        let n = buf.len().min(self.held.len() - self.at);
        buf[..n].copy_from_slice(&self.held[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A decoding error and where it happened.
#[derive(Debug, Clone)]
pub struct DecodeError {
    pub codec: Codec,
    /// About the compressed byte the decoder had reached (exact to its look-ahead).
    pub at: u64,
    /// Decoded bytes before the error (of the part that failed, for a file
    /// decoded in parts, until the part's start is known: [`DecodeError::after_more`]).
    pub after: u64,
    pub message: String,
    /// The data ended early (rather than being wrong).
    pub truncated: bool,
}

impl DecodeError {
    /// `e` with `n` more decoded bytes before it, if it is a decoding error.
    pub fn after_more(e: io::Error, n: u64) -> io::Error {
        match e.get_ref().and_then(|x| x.downcast_ref::<DecodeError>()) {
            Some(d) => {
                let mut d = d.clone();
                d.after += n;
                io::Error::new(e.kind(), d)
            }
            None => e,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.truncated {
            "truncated"
        } else {
            "corrupt"
        };
        write!(
            f,
            "{} data {what} (decoding failed at about compressed byte {}, after {} decoded \
             bytes): {}",
            self.codec, self.at, self.after, self.message
        )?;
        // A check is made at the end of what it covers (a gzip member, a
        // zstd frame, an xz or bzip2 block): the bytes decoded before a
        // damage was found were read, and some may be wrong (a damaged gzip
        // file gave 7,117 lines of a 7,000-line log, some of them garbage).
        if !self.truncated {
            write!(
                f,
                "; the bytes decoded before it were read, and some may not be the data's"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_heads_that_may_be_compressed() {
        assert!(may_start(b"") && may_start(&[0x1f]) && may_start(&[0x1f, 0x8b]));
        assert!(may_start(b"BZ") && may_start(&[0x5a, 0x2a]) && may_start(&[0xfd, b'7']));
        assert!(!may_start(b"ab\n") && !may_start(b"B\n") && !may_start(b"Po"));
        for m in [
            &[0x1f, 0x8b, 8, 0, 0, 0][..],
            &[0x28, 0xb5, 0x2f, 0xfd, 1, 2],
            b"BZh9xx",
        ] {
            assert!((0..MAGIC_LEN).all(|n| may_start(&m[..n])), "{m:?}");
            assert!(detect(m).is_some());
        }
    }

    #[test]
    fn magics() {
        assert_eq!(detect(&[0x1f, 0x8b, 8, 0, 0, 0]), Some(Codec::Gzip));
        assert_eq!(detect(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]), Some(Codec::Zstd));
        assert_eq!(detect(&[0x50, 0x2a, 0x4d, 0x18, 0, 0]), Some(Codec::Zstd));
        assert_eq!(detect(b"BZh91A"), Some(Codec::Bzip2));
        assert_eq!(detect(&[0xfd, b'7', b'z', b'X', b'Z', 0]), Some(Codec::Xz));
        assert_eq!(detect(b"1.2.3.4 - -"), None);
        assert_eq!(detect(b"BZ"), None);
        assert_eq!(detect(b""), None);
    }
}
