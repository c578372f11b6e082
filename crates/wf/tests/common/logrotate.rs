//! A log written in pieces and rotated as logrotate rotates it, for the tests
//! of `--state` and `--follow` (one copy: each of those tests once had its own).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Appends `bytes` to `path` (made if absent), as a logging server does.
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// `from` compressed to `to`, then removed (logrotate's `compress`).
pub fn gzip(from: &Path, to: &Path) {
    let data = fs::read(from).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&data).unwrap();
    fs::write(to, e.finish().unwrap()).unwrap();
    fs::remove_file(from).unwrap();
}

/// One of logrotate's rotations of `dir/access.log`.
#[derive(Clone, Copy)]
pub enum Rotation {
    /// access.log -> access.log.1; the next append makes a new access.log.
    Rename,
    /// access.log.1 -> access.log.1.gz (compressed a rotation later).
    Gzip,
    /// The next rotation: access.log.1.gz -> access.log.2.gz, then
    /// copytruncate: access.log copied to access.log.1 and truncated.
    CopyTruncate,
}

/// Does `r` to `log` in `dir`; its name, for messages.
pub fn rotate(r: Rotation, dir: &Path, log: &Path) -> &'static str {
    let n1 = dir.join("access.log.1");
    match r {
        Rotation::Rename => {
            fs::rename(log, &n1).unwrap();
            "rename"
        }
        Rotation::Gzip => {
            gzip(&n1, &dir.join("access.log.1.gz"));
            "gzip"
        }
        Rotation::CopyTruncate => {
            fs::rename(dir.join("access.log.1.gz"), dir.join("access.log.2.gz")).unwrap();
            fs::copy(log, &n1).unwrap();
            let f = OpenOptions::new().write(true).open(log).unwrap();
            f.set_len(0).unwrap();
            "copytruncate"
        }
    }
}

/// The rotations of the `--state` tests, by step: rename, compress,
/// copytruncate, and the copy compressed.
pub const EVERY_KIND: &[(usize, Rotation)] = &[
    (3, Rotation::Rename),
    (5, Rotation::Gzip),
    (7, Rotation::CopyTruncate),
    (10, Rotation::Gzip),
];

/// Does the rotation `plan` gives for `step`, if any; its name.
pub fn at_step(
    plan: &[(usize, Rotation)],
    step: usize,
    dir: &Path,
    log: &Path,
) -> Option<&'static str> {
    let &(_, r) = plan.iter().find(|(s, _)| *s == step)?;
    Some(rotate(r, dir, log))
}
