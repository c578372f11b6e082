//! Byte ranges (`Input::span`) and partial states (`jobs::partial`), as a
//! distributed run uses them: ranges that tile a file, each scanned on its own
//! and its state encoded, then decoded and merged in a random tree, give the
//! answer of one whole run, for count, wf2 and pangram, at any chunk size and
//! thread count. The tilings cut at random bytes, right at and just after line
//! ends, and leave empty and one-byte ranges.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wf_core::jobs::count::Count;
use wf_core::jobs::pangram::{Mode, Pangram};
use wf_core::jobs::partial::{self, Partial};
use wf_core::jobs::wf2::Wf2;
use wf_core::scan::{self, Input, InputSpec, ScanOptions};

mod common;

fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn input(path: &Path, span: Option<(u64, u64)>) -> Input {
    let mut i = InputSpec {
        paths: vec![path.to_path_buf()],
        ..Default::default()
    }
    .collect()
    .inputs
    .remove(0);
    i.span = span;
    i
}

/// Cut points tiling `[0, size)`: random bytes, line ends and the bytes after
/// them, repeated points (empty ranges) and neighbours (one-byte ranges).
fn tiling(data: &[u8], rng: &mut impl FnMut() -> u64, n: usize) -> Vec<u64> {
    let size = data.len() as u64;
    let mut cuts = vec![0, size];
    for _ in 0..n {
        let p = rng() % (size + 1);
        let at_nl = memchr::memchr(b'\n', &data[p as usize..]).map(|i| p + i as u64);
        match rng() % 4 {
            0 => cuts.push(p),
            1 => cuts.extend(at_nl),
            2 => cuts.extend(at_nl.map(|q| q + 1)),
            _ => cuts.extend([p, p, (p + 1).min(size)]),
        }
    }
    cuts.sort_unstable();
    cuts
}

/// Encode the state of each range of `cuts` over `path` (input index `k`).
fn states<J: Partial>(
    job: &J,
    path: &Path,
    k: usize,
    cuts: &[u64],
    rng: &mut impl FnMut() -> u64,
) -> Vec<Vec<u8>>
where
    J::State: Send,
{
    cuts.windows(2)
        .map(|w| {
            let opts = ScanOptions {
                threads: 1 + (rng() % 3) as usize,
                chunk_size: [7, 300, 4096, 1 << 20][(rng() % 4) as usize],
                ..Default::default()
            };
            let out = scan::run(job, vec![input(path, Some((w[0], w[1])))], &opts, None);
            assert!(out.errors.is_empty(), "{:?}", out.errors);
            let mut st = out.state;
            job.relabel(&mut st, k);
            partial::encode(job, &st, &BTreeSet::from([k as u64]))
        })
        .collect()
}

/// Merge encoded states in a random tree (random groups of 2 to 4, shuffled).
fn merge_tree<J: Partial>(mut level: Vec<Vec<u8>>, rng: &mut impl FnMut() -> u64) -> Vec<u8> {
    while level.len() > 1 {
        for i in (1..level.len()).rev() {
            level.swap(i, (rng() % (i as u64 + 1)) as usize);
        }
        let mut next = Vec::new();
        while !level.is_empty() {
            let n = (2 + rng() % 3).min(level.len() as u64) as usize;
            let group: Vec<Vec<u8>> = level.drain(..n).collect();
            let refs: Vec<&[u8]> = group.iter().map(Vec::as_slice).collect();
            next.push(partial::merge::<J>(&refs).unwrap());
        }
        level = next;
    }
    level.remove(0)
}

fn log_file(dir: &Path) -> PathBuf {
    let p = dir.join("access.log");
    let mut f = std::fs::File::create(&p).unwrap();
    wf_core::gen::wf2(&mut f, 300_000, 11, 0.05).unwrap();
    // A final line without its newline, and a CRLF line.
    use std::io::Write;
    f.write_all(b"1.2.3.4 - - [x] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\r\nlast line")
        .unwrap();
    p
}

#[test]
fn count_and_wf2_over_tiled_ranges_equal_one_run() {
    let t = tempfile::tempdir().unwrap();
    let path = log_file(t.path());
    let data = std::fs::read(&path).unwrap();
    let whole = scan::run(
        &Wf2,
        vec![input(&path, None)],
        &ScanOptions::default(),
        None,
    );
    let want_wf2 = Wf2.finish(whole.state, 10);
    let count = Count { sep: b'\n' };
    let whole = scan::run(
        &count,
        vec![input(&path, None)],
        &ScanOptions::default(),
        None,
    );
    let mut rng = xorshift(0x5eed);
    for round in 0..6 {
        let cuts = tiling(&data, &mut rng, [1, 3, 20, 60, 5, 200][round]);
        let s = states(&Wf2, &path, 0, &cuts, &mut rng);
        let (job, got) = partial::decode::<Wf2>(&merge_tree::<Wf2>(s, &mut rng)).unwrap();
        assert_eq!(job.finish(got.state, 10), want_wf2, "cuts {cuts:?}");
        let s = states(&count, &path, 0, &cuts, &mut rng);
        let (_, got) = partial::decode::<Count>(&merge_tree::<Count>(s, &mut rng)).unwrap();
        assert_eq!(got.state, whole.state, "cuts {cuts:?}");
        assert_eq!(got.inputs, BTreeSet::from([0]));
    }
}

#[test]
fn pangram_over_tiled_ranges_of_several_files_equals_one_run() {
    let t = tempfile::tempdir().unwrap();
    let mut rng = xorshift(0xb00c);
    // Text where windows cross most cut points: letters in a random order,
    // short lines.
    let paths: Vec<PathBuf> = (0..3)
        .map(|k| {
            let text: Vec<u8> = (0..40_000)
                .map(|_| match rng() % 9 {
                    0 => b'\n',
                    1 => b' ',
                    _ => b"abcdefghijklmnopqrstuvwxyzETAOIN"[(rng() % 32) as usize],
                })
                .collect();
            let p = t.path().join(format!("book{k}.txt"));
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect();
    for mode in [
        Mode::Top(7),
        Mode::All {
            max_letters: Some(60),
        },
    ] {
        let job = Pangram { mode };
        let inputs: Vec<Input> = paths.iter().map(|p| input(p, None)).collect();
        let o = ScanOptions {
            spool_streams: true,
            ..Default::default()
        };
        let whole = scan::run(&job, inputs.clone(), &o, None);
        let (st, rest) = whole.into_parts();
        let want = job
            .finish(st, &mut |i, off, len| rest.read_range(i, off, len))
            .unwrap();
        assert!(!want.is_empty());
        for _ in 0..3 {
            let mut all = Vec::new();
            for (k, p) in paths.iter().enumerate() {
                let data = std::fs::read(p).unwrap();
                let cuts = tiling(&data, &mut rng, 25);
                all.extend(states(&job, p, k, &cuts, &mut rng));
            }
            let (job2, got) =
                partial::decode::<Pangram>(&merge_tree::<Pangram>(all, &mut rng)).unwrap();
            let windows = job2
                .finish(got.state, &mut |i, off, len| {
                    scan::read_back(&inputs[i], off, len)
                })
                .unwrap();
            assert_eq!(windows, want, "{mode:?}");
        }
    }
}

#[test]
fn states_of_other_settings_do_not_merge() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("t.txt");
    std::fs::write(&p, "the quick brown fox jumps over the lazy dog\n").unwrap();
    let enc = |mode| {
        let job = Pangram { mode };
        let out = scan::run(&job, vec![input(&p, None)], &ScanOptions::default(), None);
        partial::encode(&job, &out.state, &BTreeSet::from([0]))
    };
    let (a, b) = (enc(Mode::Top(3)), enc(Mode::Top(4)));
    let e = partial::merge::<Pangram>(&[&a, &b])
        .unwrap_err()
        .to_string();
    assert!(e.contains("different settings"), "{e}");
    // A wf2 state is not a pangram state.
    let out = scan::run(&Wf2, vec![input(&p, None)], &ScanOptions::default(), None);
    let w = partial::encode(&Wf2, &out.state, &BTreeSet::new());
    let e = partial::decode::<Pangram>(&w).err().unwrap().to_string();
    assert!(e.contains("another job"), "{e}");
}

#[test]
fn a_span_of_a_compressed_file_is_an_error_and_the_whole_file_is_read() {
    let Some(books) = common::shared_data("logs") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let gz = t.path().join("x.gz");
    let raw = std::fs::read(books.join("ongoing-1000.log")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, &raw).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let count = Count { sep: b'\n' };
    let out = scan::run(
        &count,
        vec![input(&gz, Some((0, 10)))],
        &ScanOptions::default(),
        None,
    );
    assert_eq!(out.errors.len(), 1);
    assert!(
        out.errors[0].message.contains("read whole"),
        "{:?}",
        out.errors
    );
    let out = scan::run(
        &count,
        vec![input(&gz, None)],
        &ScanOptions::default(),
        None,
    );
    assert_eq!(out.state.records, 1000);
}
