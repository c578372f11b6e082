//! The scan engine through the library API: a file that shrinks while it is read
//! is an error for that file, never a crash; results do not depend on threads.

use std::sync::atomic::{AtomicBool, Ordering};

use wf::jobs::count::{Count, CountState};
use wf::jobs::{Chunk, Job};
use wf::scan::{self, InputSpec, ScanOptions};

/// Counts like `Count`, but truncates a file the first time it sees a chunk.
struct Shrinker {
    victim: std::path::PathBuf,
    done: AtomicBool,
}

impl Job for Shrinker {
    type State = CountState;
    fn new_state(&self) -> CountState {
        CountState::default()
    }
    fn process(&self, st: &mut CountState, c: &Chunk<'_>) {
        if !self.done.swap(true, Ordering::SeqCst) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.victim)
                .unwrap();
            f.set_len(10).unwrap();
        }
        Count { sep: b'\n' }.process(st, c)
    }
    fn merge(&self, a: &mut CountState, b: CountState) {
        Count { sep: b'\n' }.merge(a, b)
    }
}

#[test]
fn file_shrinking_mid_run_is_an_error_for_that_file() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    let line = b"0123456789abcdef\n".repeat(100_000);
    std::fs::write(&victim, &line).unwrap();
    let other = t.path().join("other");
    std::fs::write(&other, b"x\n").unwrap();
    let collected = InputSpec {
        paths: vec![victim.clone(), other.clone()],
        ..Default::default()
    }
    .collect();
    let job = Shrinker {
        victim: victim.clone(),
        done: AtomicBool::new(false),
    };
    let opts = ScanOptions {
        threads: 1,
        chunk_size: 64 << 10,
        ..Default::default()
    };
    let out = scan::run(&job, collected.inputs, &opts, None);
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert!(out.errors[0].name.contains("victim"));
    assert!(
        out.errors[0].message.contains("shrank"),
        "{}",
        out.errors[0].message
    );
    assert_eq!(out.files, 1);
}

#[test]
fn same_state_for_every_thread_count_and_chunk_size() {
    let t = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..4_000u32 {
        data.extend(std::iter::repeat_n(b'a', (i % 97) as usize));
        if i % 13 != 0 {
            data.push(b'\n');
        }
    }
    let f = t.path().join("f");
    std::fs::write(&f, &data).unwrap();
    let want = Count { sep: b'\n' };
    let mut reference = None;
    for threads in [1, 2, 3, 8] {
        for chunk_size in [1, 2, 7, 64, 1000, 1 << 20] {
            for (read_size, mmap, ahead) in [
                (64, false, 0),
                (100, false, 1),
                (32 << 10, false, 64 << 20),
                (32 << 10, false, 0),
                (0, true, 0),
            ] {
                let collected = InputSpec {
                    paths: vec![f.clone()],
                    ..Default::default()
                }
                .collect();
                let opts = ScanOptions {
                    threads,
                    chunk_size,
                    read_size: read_size.max(64),
                    mmap,
                    ahead,
                    ..Default::default()
                };
                let out = scan::run(&want, collected.inputs, &opts, None);
                assert!(out.errors.is_empty());
                let r = reference.get_or_insert(out.state);
                assert_eq!(
                    *r, out.state,
                    "threads {threads} chunk {chunk_size} read {read_size} ahead {ahead}"
                );
            }
        }
    }
}
