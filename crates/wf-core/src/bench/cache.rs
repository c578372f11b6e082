//! Page-cache control for cold runs: evict the inputs (no root needed) and check
//! with `mincore` how much of them is still resident.
//!
//! Linux answers `mincore` truthfully only for files the caller owns or may open
//! for writing (or as root); for any other file it reports every page resident
//! (seen here: a read-only, root-owned file evicted by root, checked by `nobody`,
//! showed 520 of 520 pages while `fincore` showed 0). Such files are reported as
//! of unknown residency, never as cached; the cold runs' `/proc/self/io` storage
//! bytes still show whether the data came from the disk.
//!
//! `posix_fadvise(POSIX_FADV_DONTNEED)` drops only clean, unmapped pages, so the
//! files are flushed first (`fdatasync` each, then a global `sync()` if pages
//! remain). As root, `/proc/sys/vm/drop_caches` can be used instead (it drops the
//! whole page cache, not just the inputs). Memory-backed file systems (tmpfs,
//! ramfs) cannot be evicted at all: see [`memory_backed`].

use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Pages examined per file with one `mincore` call over the whole mapping; larger
/// files (over 1 GiB with 4 KiB pages) are sampled.
const FULL_PAGES: u64 = 1 << 18;
/// Sample windows spread over a large file.
const SAMPLE_WINDOWS: u64 = 1024;
/// Pages per sample window.
const WINDOW_PAGES: u64 = 16;

/// How an eviction was done and how much of the inputs stayed in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Eviction {
    /// Fraction of the input bytes still in the page cache afterwards (0 to 1);
    /// `None` when `mincore` cannot see any of the inputs (see the module comment).
    pub resident: Option<f64>,
    /// `"fadvise"`, `"drop_caches"`, or `"fadvise (drop_caches failed: ...)"`.
    pub method: String,
}

fn page_size() -> u64 {
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Evict `files` from the page cache; with `drop_caches` (and root) also write `1`
/// to `/proc/sys/vm/drop_caches`. Returns the fraction still resident (mincore),
/// or an error when it cannot be seen.
pub fn evict(files: &[PathBuf], drop_caches: bool) -> io::Result<f64> {
    evict_with(files, drop_caches)?;
    resident_fraction(files)
}

/// [`evict`], also saying which method was used.
pub fn evict_with(files: &[PathBuf], drop_caches: bool) -> io::Result<Eviction> {
    if let Some(fs) = files.first().and_then(|p| memory_backed(p)) {
        if files.iter().all(|p| memory_backed(p).is_some()) {
            return Ok(Eviction {
                resident: resident_fraction(files).ok(),
                method: format!("nothing ({fs} keeps its files in memory: no cold run possible)"),
            });
        }
    }
    let mut method = "fadvise".to_string();
    // Flush and advise each file; files that cannot be opened are skipped (the job
    // reports them).
    fadvise_all(files, true);
    if drop_caches {
        unsafe { libc::sync() };
        match std::fs::write("/proc/sys/vm/drop_caches", b"1\n") {
            Ok(()) => method = "drop_caches".to_string(),
            Err(e) => {
                method = format!(
                    "fadvise (drop_caches failed: {})",
                    crate::scan::io_message(&e)
                )
            }
        }
    }
    let mut resident = resident_fraction(files).ok();
    if resident.is_some_and(|r| r > 0.01) {
        // Some pages were dirty (or written back by someone else meanwhile):
        // flush everything and advise again.
        unsafe { libc::sync() };
        fadvise_all(files, false);
        resident = resident_fraction(files).ok();
    }
    Ok(Eviction { resident, method })
}

fn fadvise_all(files: &[PathBuf], datasync: bool) {
    for p in files {
        if let Ok(f) = File::open(p) {
            if datasync {
                let _ = f.sync_data();
            }
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// Fraction (0 to 1, weighted by file size) of the bytes of `files` that are in
/// the page cache, by `mincore` over a read-only mapping of each file (every page
/// for files up to 1 GiB, 1024 windows of 16 pages spread over larger ones).
/// Mapping does not fault pages in, so this does not disturb the cache. Empty
/// and unreadable files, and files whose residency `mincore` would not tell this
/// user, are skipped; an error only if no file could be examined.
pub fn resident_fraction(files: &[PathBuf]) -> io::Result<f64> {
    let mut total = 0f64;
    let mut resident = 0f64;
    let mut examined = 0usize;
    let mut last_err = None;
    for p in files {
        match file_residency(p) {
            Ok(Some((frac, len))) => {
                total += len as f64;
                resident += frac * len as f64;
                examined += 1;
            }
            Ok(None) => examined += 1,
            Err(e) => last_err = Some(e),
        }
    }
    if examined == 0 {
        if let Some(e) = last_err {
            return Err(e);
        }
    }
    Ok(if total > 0.0 { resident / total } else { 0.0 })
}

struct Mapping {
    addr: *mut libc::c_void,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// `(fraction resident, file length)`, or `None` for an empty file.
fn file_residency(path: &Path) -> io::Result<Option<(f64, u64)>> {
    let f = File::open(path)?;
    let meta = f.metadata()?;
    let len = meta.len();
    if len == 0 {
        return Ok(None);
    }
    if !mincore_sees(path, &meta) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: mincore reports the page cache only for files this user owns or may write",
                path.display()
            ),
        ));
    }
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let map = Mapping {
        addr,
        len: len as usize,
    };
    let ps = page_size();
    let pages = len.div_ceil(ps);
    let (seen, inside) = if pages <= FULL_PAGES {
        let mut v = vec![0u8; pages as usize];
        mincore(&map, 0, pages, ps, &mut v)?;
        (pages, v.iter().filter(|&&b| b & 1 != 0).count() as u64)
    } else {
        let mut v = vec![0u8; WINDOW_PAGES as usize];
        let mut inside = 0;
        for i in 0..SAMPLE_WINDOWS {
            let start = i * (pages - WINDOW_PAGES) / (SAMPLE_WINDOWS - 1);
            mincore(&map, start, WINDOW_PAGES, ps, &mut v)?;
            inside += v.iter().filter(|&&b| b & 1 != 0).count() as u64;
        }
        (SAMPLE_WINDOWS * WINDOW_PAGES, inside)
    };
    Ok(Some((inside as f64 / seen as f64, len)))
}

/// Whether the kernel tells this process the truth about `path`'s pages: it does
/// for root, the file's owner, and anyone who may open it for writing (Linux's
/// `can_do_mincore`); for others it reports every page resident.
fn mincore_sees(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let euid = unsafe { libc::geteuid() };
    if euid == 0 || meta.uid() == euid {
        return true;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

fn mincore(map: &Mapping, first: u64, n: u64, ps: u64, out: &mut [u8]) -> io::Result<()> {
    let off = (first * ps) as usize;
    let len = ((n * ps) as usize).min(map.len - off);
    let r = unsafe {
        libc::mincore(
            (map.addr as *mut u8).add(off) as *mut libc::c_void,
            len,
            out.as_mut_ptr(),
        )
    };
    if r != 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The file system type name of `path` as far as eviction is concerned:
/// `Some("tmpfs")` or `Some("ramfs")` when the file lives in memory and cannot be
/// evicted, `None` otherwise (or when `statfs` fails).
pub fn memory_backed(path: &Path) -> Option<&'static str> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    match crate::scan::fs_magic(path)? {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}
