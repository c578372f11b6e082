//! Output cut into fixed blocks, each a function of its index alone (`wf gen
//! wf2` seeds each from (seed, block index)), so the bytes depend only on seed and
//! size; worker threads make blocks, the caller's thread writes them in order.
//! Shaped by `wf gen wf2`, whose module comment has the measurement.

use crossbeam_channel::{bounded, Receiver, Sender};
use std::io::{self, Write};

/// Threads for an output of `size` bytes: small outputs are not worth the threads
/// (and the blocks they would make in vain).
pub(super) fn threads_for(size: u64) -> usize {
    if size < 4 << 20 {
        1
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 4)
    }
}

/// Write blocks 0, 1, 2, ... to `out` up to the first line end at or after `size`
/// bytes, made on `threads` threads and written in order. `maker` gives each
/// thread its block maker, which is called with every block index in order and
/// appends the block to the buffer when it is given one (the blocks of other
/// threads it only steps past), so a block may depend on state carried from block
/// to block and still be the same at any thread count. `capacity` is a block's
/// usual size.
pub(super) fn write_blocks<W, F>(
    out: &mut W,
    size: u64,
    threads: usize,
    capacity: usize,
    maker: impl Fn() -> F + Sync,
) -> io::Result<u64>
where
    W: Write + ?Sized,
    F: FnMut(u64, Option<&mut Vec<u8>>),
{
    if threads <= 1 {
        return write_serial(out, size, capacity, maker());
    }
    std::thread::scope(|s| {
        let mut full: Vec<Receiver<Vec<u8>>> = Vec::new();
        let mut empty: Vec<Sender<Vec<u8>>> = Vec::new();
        for wid in 0..threads {
            let (ftx, frx) = bounded::<Vec<u8>>(2);
            let (etx, erx) = bounded::<Vec<u8>>(4);
            full.push(frx);
            empty.push(etx);
            let maker = &maker;
            s.spawn(move || make_blocks(wid, threads, capacity, maker(), ftx, erx));
        }
        let written = write_in_order(out, size, &full, &empty);
        // Dropping the receivers makes the workers' next send fail, so they stop.
        drop(full);
        written
    })
}

/// All blocks made and written on the caller's thread.
fn write_serial<W: Write + ?Sized>(
    out: &mut W,
    size: u64,
    capacity: usize,
    mut make: impl FnMut(u64, Option<&mut Vec<u8>>),
) -> io::Result<u64> {
    let mut w = Writer::new(out, size);
    let mut buf = Vec::with_capacity(capacity);
    for b in 0.. {
        buf.clear();
        make(b, Some(&mut buf));
        if w.put(&buf)? {
            break;
        }
    }
    Ok(w.written)
}

/// Worker `wid` of `threads`: makes blocks wid, wid + threads, ... into buffers
/// the writer sends back (or new ones) until the writer stops taking them.
fn make_blocks<F: FnMut(u64, Option<&mut Vec<u8>>)>(
    wid: usize,
    threads: usize,
    capacity: usize,
    mut make: F,
    full: Sender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
) {
    for b in 0u64.. {
        if b % threads as u64 != wid as u64 {
            make(b, None);
            continue;
        }
        let mut buf = empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(capacity));
        buf.clear();
        make(b, Some(&mut buf));
        if full.send(buf).is_err() {
            return;
        }
    }
}

/// Take block b from worker b % threads, write it and send its buffer back, until
/// the output is complete.
fn write_in_order<W: Write + ?Sized>(
    out: &mut W,
    size: u64,
    full: &[Receiver<Vec<u8>>],
    empty: &[Sender<Vec<u8>>],
) -> io::Result<u64> {
    let threads = full.len();
    let mut w = Writer::new(out, size);
    for b in 0usize.. {
        let buf = match full[b % threads].recv() {
            Ok(buf) => buf,
            Err(_) => return Err(io::Error::other("generator thread failed")),
        };
        let done = w.put(&buf)?;
        let _ = empty[b % threads].try_send(buf);
        if done {
            break;
        }
    }
    Ok(w.written)
}

/// Writes whole blocks until `size` is reached, then the part up to the next line end.
struct Writer<'a, W: Write + ?Sized> {
    out: &'a mut W,
    size: u64,
    written: u64,
}

impl<'a, W: Write + ?Sized> Writer<'a, W> {
    fn new(out: &'a mut W, size: u64) -> Self {
        Writer {
            out,
            size,
            written: 0,
        }
    }

    /// Returns true when the output is complete.
    fn put(&mut self, buf: &[u8]) -> io::Result<bool> {
        let end = self.written + buf.len() as u64;
        if end < self.size {
            self.out.write_all(buf)?;
            self.written = end;
            return Ok(false);
        }
        // The newline that ends the output sits at index >= size - 1 (0-based, global).
        let from = (self.size - 1 - self.written) as usize;
        let nl = memchr::memchr(b'\n', &buf[from..]).map(|i| from + i + 1);
        let cut = nl.unwrap_or(buf.len());
        self.out.write_all(&buf[..cut])?;
        self.written += cut as u64;
        Ok(nl.is_some())
    }
}
