//! `wf pangram --all` on arbitrary bytes (split into two inputs, each cut into
//! pseudo-random chunks, processed out of order on up to three states) must list
//! exactly the windows a brute-force search finds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_core::jobs::pangram::{Mode, Pangram};
use wf_core::jobs::{Chunk, Job};
use wf_fuzz::{brute_pangrams, Rng};

fuzz_target!(|input: &[u8]| {
    let (seed, data) = input.split_at(input.len().min(2));
    let mut rng = Rng::new(seed);
    let cut = rng.below(data.len() as u64 + 1) as usize;
    let inputs = [&data[..cut], &data[cut..]];
    let job = Pangram {
        mode: Mode::All { max_letters: None },
    };
    let nstates = 1 + rng.below(3) as usize;
    let mut states: Vec<_> = (0..nstates).map(|_| job.new_state()).collect();
    let mut chunks = Vec::new();
    for (i, text) in inputs.iter().enumerate() {
        let mut start = 0;
        while start < text.len() {
            let most = 1 + rng.below(text.len() as u64);
            let len = 1 + rng.below(most) as usize;
            let end = (start + len).min(text.len());
            chunks.push((i, start, &text[start..end]));
            start = end;
        }
    }
    for i in (1..chunks.len()).rev() {
        chunks.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for (i, offset, bytes) in chunks {
        let s = rng.below(nstates as u64) as usize;
        job.process(
            &mut states[s],
            &Chunk {
                input: i,
                offset: offset as u64,
                data: bytes,
            },
        );
    }
    let mut st = states.pop().unwrap();
    for s in states {
        job.merge(&mut st, s);
    }
    let got = job
        .finish(st, &mut |i, off, len| {
            Ok(inputs[i][off as usize..off as usize + len].to_vec())
        })
        .unwrap();
    let mut want = Vec::new();
    for (i, text) in inputs.iter().enumerate() {
        for (off, bytes, letters) in brute_pangrams(text) {
            want.push((
                i,
                off,
                bytes,
                letters,
                text[off as usize..(off + bytes) as usize].to_vec(),
            ));
        }
    }
    let got: Vec<_> = got
        .into_iter()
        .map(|w| (w.input, w.offset, w.bytes, w.letters, w.text))
        .collect();
    assert_eq!(got, want);
});
