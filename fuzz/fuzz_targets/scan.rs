//! The scan engine on a real file: for any bytes, separator, thread count, chunk
//! size, read size and read strategy, the chunks it hands out partition the file
//! exactly, each starts at a record start and ends just after a separator (or at
//! the end of the file), and `wf count`'s job counts what `split` counts.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use wf_core::jobs::count::Count;
use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{self, Input, ScanOptions, Source};
use wf_fuzz::Rng;

struct Record;

impl Job for Record {
    type State = Vec<(u64, Vec<u8>)>;
    fn new_state(&self) -> Self::State {
        Vec::new()
    }
    fn process(&self, st: &mut Self::State, c: &Chunk<'_>) {
        assert_eq!(c.input, 0);
        st.push((c.offset, c.data.to_vec()));
    }
    fn merge(&self, into: &mut Self::State, other: Self::State) {
        into.extend(other);
    }
}

fuzz_target!(|input: &[u8]| {
    let (seed, data) = input.split_at(input.len().min(4));
    let mut rng = Rng::new(seed);
    let sep = if rng.next_u64() & 3 == 0 { 0 } else { b'\n' };
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(data).unwrap();
    f.flush().unwrap();
    let inputs = vec![Input {
        name: "fuzz".into(),
        source: Source::File {
            path: f.path().to_path_buf(),
            size: data.len() as u64,
        },
        span: None,
    }];
    // Mostly tiny chunks, sometimes up to the whole file.
    let most = 1 + rng.below(data.len() as u64 + 8);
    let chunk_size = 1 + rng.below(most);
    let opts = ScanOptions {
        threads: 1 + rng.below(3) as usize,
        chunk_size,
        read_size: 1 + rng.below(64) as usize,
        sep,
        inflight: rng.below(4) as usize,
        readahead: rng.next_u64() & 1 == 1,
        mmap: rng.next_u64() & 1 == 1,
        ahead: rng.below(3) * chunk_size,
        spool_streams: false,
        ..Default::default()
    };
    let out = scan::run(&Record, inputs.clone(), &opts, None);
    assert!(
        out.errors.is_empty(),
        "{:?}",
        out.errors.iter().map(|e| &e.message).collect::<Vec<_>>()
    );
    let mut chunks = out.state;
    chunks.sort();
    let mut pos = 0u64;
    for (off, bytes) in &chunks {
        assert_eq!(*off, pos, "chunks must partition the file ({opts:?})");
        assert!(!bytes.is_empty());
        assert!(
            *off == 0 || data[*off as usize - 1] == sep,
            "chunk starts mid-record ({opts:?})"
        );
        let end = *off as usize + bytes.len();
        assert!(
            end == data.len() || bytes.last() == Some(&sep),
            "chunk ends mid-record ({opts:?})"
        );
        assert_eq!(&data[*off as usize..end], &bytes[..]);
        pos = end as u64;
    }
    assert_eq!(pos, data.len() as u64, "{opts:?}");

    let counted = scan::run(&Count { sep }, inputs, &opts, None);
    let mut want = data.iter().filter(|&&b| b == sep).count() as u64;
    if data.last().is_some_and(|&b| b != sep) {
        want += 1;
    }
    assert_eq!(counted.state.records, want, "{opts:?}");
});
