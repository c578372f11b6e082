//! The files a followed name held between two polls, found after the fact.
//!
//! `tail -F` looks at the name only, so when a log is rotated twice within
//! one poll (`access.log` renamed to `.1`, a new `access.log` written and
//! renamed in its turn, a third created) the file in the middle is never
//! opened and its records are lost. Rotation keeps that file beside the
//! name (`access.log.1`, `access.log-20261128`), so at each rotation by
//! rename wf looks at the files in the name's directory whose name is the
//! followed one's and a rotation's suffix (`.1`, `-20261128`), and reads
//! whole those that can only be such a file:
//!
//! - not compressed (a compressed copy is of a file that was read);
//! - not a file wf has followed, nor one that was there when it started
//!   (by device and inode);
//! - not starting with the first bytes of a file wf has read (a copy made by
//!   `copytruncate` is another inode holding records already handed on).
//!
//! What this cannot see: a file in the middle that was also removed or
//! compressed within the same poll, or one whose inode is that of a file wf
//! followed before (reused after a removal); those records are lost as
//! they are by `tail -F`. An unrelated file copied in beside the log under
//! such a name (`access.log.1`) between two rotations is read as if it were
//! one.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::super::decompress::{detect, MAGIC_LEN};
use super::super::read_full_at;
use super::super::state::head_hash;

/// What wf knows of the files beside the names it follows.
#[derive(Default)]
pub(super) struct Known {
    /// (device, inode) of every file followed, and of every file beside a
    /// followed name when wf started.
    ids: HashSet<(u64, u64)>,
    /// (length, hash) of the first bytes of files read.
    heads: HashSet<(u64, u64)>,
}

impl Known {
    /// Remember the files beside `path` as they are now.
    pub(super) fn siblings_of(&mut self, path: &Path) {
        for (_, id, _) in siblings(path) {
            self.ids.insert(id);
        }
    }

    pub(super) fn file(&mut self, id: (u64, u64)) {
        self.ids.insert(id);
    }

    pub(super) fn head(&mut self, head: (u64, u64)) {
        if head.0 > 0 {
            self.heads.insert(head);
        }
    }

    /// The files beside `path` that held the name between two polls (see
    /// the module's comment), oldest first, each now known.
    pub(super) fn missed(&mut self, path: &Path) -> Vec<(PathBuf, File)> {
        let mut found = Vec::new();
        for (p, id, mtime) in siblings(path) {
            if self.ids.contains(&id) {
                continue;
            }
            let Ok(file) = File::open(&p) else { continue };
            match file.metadata() {
                Ok(m) if (m.dev(), m.ino()) == id => {}
                _ => continue,
            }
            if self.is_copy_or_compressed(&file) {
                self.ids.insert(id);
                continue;
            }
            self.ids.insert(id);
            found.push((mtime, p, file));
        }
        found.sort_by_key(|(mtime, p, _)| (*mtime, p.clone()));
        found.into_iter().map(|(_, p, f)| (p, f)).collect()
    }

    /// Does `file` start with the first bytes of a file read, or with a
    /// compressed format's magic?
    fn is_copy_or_compressed(&self, file: &File) -> bool {
        let mut magic = [0u8; MAGIC_LEN];
        let n = read_full_at(file, &mut magic, 0).unwrap_or(0);
        if detect(&magic[..n]).is_some() {
            return true;
        }
        self.heads.iter().any(|&(len, hash)| {
            let mut b = vec![0u8; len as usize];
            matches!(read_full_at(file, &mut b, 0), Ok(n) if n == b.len() && head_hash(&b) == hash)
        })
    }
}

/// Whether a name's end after the followed one's is a rotation's: `.`, `-`
/// or `_` and a digit (`.1`, `-20261128`, `.2026-11-28`). Another log whose
/// name starts with the log's (`access.log_ssl`, `access.log.old`) is none:
/// one made beside the log while it was followed was read whole at the
/// next rotation (1,600 records where the two files of the log held 1,100).
fn rotation_suffix(end: &[u8]) -> bool {
    matches!(end, [b'.' | b'-' | b'_', d, ..] if d.is_ascii_digit())
}

/// Regular files in `path`'s directory whose name is its name and a
/// rotation's suffix ([`rotation_suffix`]): (path, (device, inode),
/// modification time in ns).
fn siblings(path: &Path) -> Vec<(PathBuf, (u64, u64), i128)> {
    let (Some(name), dir) = (path.file_name(), path.parent()) else {
        return Vec::new();
    };
    let dir = match dir {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let prefix = name.as_encoded_bytes();
    let mut v = Vec::new();
    for e in entries.flatten() {
        let n = e.file_name();
        let b = n.as_encoded_bytes();
        if !b.starts_with(prefix) || !rotation_suffix(&b[prefix.len()..]) {
            continue;
        }
        let p = dir.join(&n);
        if let Ok(m) = std::fs::metadata(&p) {
            if m.is_file() {
                let mtime = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
                v.push((p, (m.dev(), m.ino()), mtime));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only rotations' names are looked at: another log whose name starts
    /// with the followed one's is not.
    #[test]
    fn siblings_are_the_rotations_names() {
        let d = tempfile::tempdir().unwrap();
        let names = [
            "access.log",
            "access.log.1",
            "access.log-20261128",
            "access.log_2",
            "access.log_ssl",
            "access.log.old",
            "access.logs",
            "access.log.",
        ];
        for n in names {
            std::fs::write(d.path().join(n), "x\n").unwrap();
        }
        let mut found: Vec<String> = siblings(&d.path().join("access.log"))
            .into_iter()
            .map(|(p, _, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(
            found,
            ["access.log-20261128", "access.log.1", "access.log_2"]
        );
    }
}
