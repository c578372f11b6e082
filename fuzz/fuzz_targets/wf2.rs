//! `wf wf2` on arbitrary bytes, cut into pseudo-random record-aligned chunks spread
//! over up to three states and merged, must equal the plain reimplementation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wf_core::jobs::wf2::{Wf2, CLIENTS, NOT_FOUND, REFERRERS, URI_BYTES, URI_HITS};
use wf_core::jobs::{Chunk, Job};
use wf_fuzz::{record_chunks, NaiveWf2, Rng};

fuzz_target!(|input: &[u8]| {
    let (seed, data) = input.split_at(input.len().min(2));
    let mut rng = Rng::new(seed);
    let job = Wf2;
    let nstates = 1 + rng.below(3) as usize;
    let mut states: Vec<_> = (0..nstates).map(|_| job.new_state()).collect();
    let mut chunks = record_chunks(data, b'\n', &mut rng);
    // Chunks arrive in any order on any thread.
    for i in (1..chunks.len()).rev() {
        chunks.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for (offset, bytes) in chunks {
        let s = rng.below(nstates as u64) as usize;
        job.process(
            &mut states[s],
            &Chunk {
                input: 0,
                offset,
                data: bytes,
            },
        );
    }
    let mut st = states.pop().unwrap();
    for s in states {
        job.merge(&mut st, s);
    }
    let got = job.finish(st, usize::MAX);
    let want = NaiveWf2::run(data);
    assert_eq!(got.lines, want.lines);
    assert_eq!(got.not_get, want.not_get);
    assert_eq!(got.too_few_fields, want.too_few_fields);
    assert_eq!(got.resources, want.hits.len() as u64);
    assert_eq!(got.not_found, want.not_found.len() as u64);
    assert_eq!(got.clients, want.clients.len() as u64);
    assert_eq!(got.top[URI_HITS], NaiveWf2::sorted(&want.hits));
    assert_eq!(got.top[URI_BYTES], NaiveWf2::sorted(&want.bytes));
    assert_eq!(got.top[NOT_FOUND], NaiveWf2::sorted(&want.not_found));
    assert_eq!(got.top[CLIENTS], NaiveWf2::sorted(&want.clients));
    assert_eq!(got.top[REFERRERS], NaiveWf2::sorted(&want.referrers));
    // The hand-written matcher and number parser agree with the plain ones.
    for f in data.split(|b| b.is_ascii_whitespace()) {
        assert_eq!(
            wf_core::jobs::wf2::is_article(f),
            wf_fuzz::naive_article(f),
            "{f:?}"
        );
    }
});
