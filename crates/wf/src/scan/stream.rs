//! Streams: bytes that can be read only front to back.
//!
//! Streams (stdin, FIFOs, `<(...)`) cannot be split by offset: the planner reads
//! them front to back in chunk-sized blocks cut after the last record separator
//! and hands the blocks out like chunks (buffers are recycled).

use std::fs::File;
use std::io::{self, Read};

use crossbeam_channel as chan;

use super::engine::Work;
use super::inputs::Source;

pub(super) fn open_stream(src: &Source) -> io::Result<Box<dyn Read>> {
    match src {
        Source::Stream { path: None } => Ok(Box::new(io::stdin().lock())),
        Source::Stream { path: Some(p) } => Ok(Box::new(File::open(p)?)),
        Source::File { path, .. } => Ok(Box::new(File::open(path)?)),
    }
}

pub(super) fn spool(src: &Source) -> io::Result<File> {
    let mut r = open_stream(src)?;
    let mut f = tempfile::tempfile()?;
    io::copy(&mut r, &mut f)?;
    Ok(f)
}

/// Read a stream into blocks of about `chunk` bytes cut after a separator.
pub(super) fn stream_blocks(
    input: usize,
    src: &Source,
    chunk: u64,
    sep: u8,
    tx: &chan::Sender<Work>,
    pool: &chan::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut r = open_stream(src)?;
    let want = chunk.clamp(1, 64 << 20) as usize;
    let mut offset = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let mut buf = pool.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry);
        carry.clear();
        // Fill to at least `want` bytes and until a separator is present.
        let mut searched = 0;
        let cut = loop {
            if buf.len() >= want {
                if let Some(p) = memchr::memrchr(sep, &buf[searched..]) {
                    break searched + p + 1;
                }
                searched = buf.len();
            }
            let old = buf.len();
            let target = old + want.max(64 << 10);
            buf.resize(target, 0);
            let n = loop {
                match r.read(&mut buf[old..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        buf.truncate(old);
                        if !buf.is_empty() {
                            let len = buf.len();
                            let _ = tx.send(Work::Block {
                                input,
                                offset,
                                buf,
                                len,
                            });
                        }
                        return Err(e);
                    }
                }
            };
            buf.truncate(old + n);
            if n == 0 {
                eof = true;
                break buf.len();
            }
        };
        carry.extend_from_slice(&buf[cut..]);
        let len = cut;
        if len == 0 && eof {
            break;
        }
        tx.send(Work::Block {
            input,
            offset,
            buf,
            len,
        })
        .map_err(|_| io::Error::other("workers stopped"))?;
        offset += len as u64;
    }
    Ok(())
}
