//! The partial-state envelope (`wf_core::jobs::partial`, "WFPS"), for every
//! job that travels (count, wf2, pangram, and pangram's incremental job):
//! - arbitrary bytes, as they are and with a correct CRC appended (so the
//!   decoder's own checks are reached, not only the checksum), never panic
//!   and never allocate absurdly (a length or count of 2^60 must not
//!   allocate: libFuzzer's `-malloc_limit_mb`, 2 GB by default, makes such an
//!   allocation a crash); a state that decodes re-encodes to bytes that decode
//!   to the same encoding, and merges and finishes without a panic;
//! - a state made from real records (the fuzz input cut into chunks) encodes
//!   and decodes to the same state (the same encoding and the same finished
//!   report), and the encoding with any one byte changed, cut short or
//!   lengthened is an error, never a state.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use wf_core::jobs::count::Count;
use wf_core::jobs::pangram::{Incremental, Mode, Pangram};
use wf_core::jobs::partial::{decode, encode, Partial};
use wf_core::jobs::wf2::Wf2;
use wf_core::jobs::{Chunk, Job};
use wf_fuzz::{record_chunks, Rng};

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        arbitrary_bytes(rest);
    } else {
        round_trip(mode >> 1, rest);
    }
});

fn arbitrary_bytes(body: &[u8]) {
    let mut sealed = body.to_vec();
    sealed.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    for bytes in [body, &sealed[..]] {
        decoded::<Count>(bytes, |_, _| {});
        decoded::<Wf2>(bytes, |job, st| {
            job.finish(st, 5);
        });
        decoded::<Pangram>(bytes, |job, st| {
            let _ = job.finish(st, &mut |_, _, _| Ok(Vec::new()));
        });
        // `pangram --state`'s job (tag 5): kept window texts, per-input top K.
        decoded::<Incremental>(bytes, |job, st| {
            let _ = job.finish(st, &mut |_, _, _| Ok(Vec::new()));
        });
    }
}

/// Decode `bytes` as a state of `J`; if it is one, check that it re-encodes
/// to a fixed point, merge it into a fresh state and hand it to `finish`.
fn decoded<J: Partial>(bytes: &[u8], finish: impl Fn(&J, J::State)) {
    let Ok((job, t)) = decode::<J>(bytes) else {
        return;
    };
    let again = encode(&job, &t.state, &t.inputs);
    let (job2, t2) = decode::<J>(&again).expect("a re-encoded state decodes");
    assert_eq!(encode(&job2, &t2.state, &t2.inputs), again, "re-encoding");
    let mut st = job.new_state();
    job.merge(&mut st, t.state);
    finish(&job, st);
}

fn round_trip(mode: u8, data: &[u8]) {
    let mut rng = Rng::new(data);
    let inputs: BTreeSet<u64> = (0..rng.below(4)).map(|_| rng.below(1 << 40)).collect();
    match mode % 3 {
        0 => {
            let job = Count {
                sep: [b'\n', 0, b';'][rng.below(3) as usize],
            };
            let st = state(&job, data, job.sep, &mut rng);
            let enc = check::<Count>(&job, &st, &inputs, &mut rng);
            let (_, t) = decode::<Count>(&enc).unwrap();
            assert_eq!(t.state, st);
        }
        1 => {
            let job = Wf2;
            let st = state(&job, data, b'\n', &mut rng);
            let enc = check::<Wf2>(&job, &st, &inputs, &mut rng);
            let (_, t) = decode::<Wf2>(&enc).unwrap();
            assert_eq!(job.finish(t.state, 20), job.finish(st, 20));
        }
        _ => {
            let m = match rng.below(3) {
                0 => Mode::Top(rng.below(4) as usize),
                1 => Mode::All { max_letters: None },
                _ => Mode::All {
                    max_letters: Some(rng.below(60)),
                },
            };
            let job = Pangram { mode: m };
            let st = state(&job, data, b'\n', &mut rng);
            let enc = check::<Pangram>(&job, &st, &inputs, &mut rng);
            let (_, t) = decode::<Pangram>(&enc).unwrap();
            let read = &mut |_: usize, off: u64, len: usize| {
                let s = (off as usize).min(data.len());
                Ok(data[s..data.len().min(s + len)].to_vec())
            };
            let a = job.finish(t.state, read).unwrap();
            assert_eq!(a, job.finish(st, read).unwrap());
        }
    }
}

/// `data` processed by `job` in pseudo-random chunks ending at `sep`.
fn state<J: Job>(job: &J, data: &[u8], sep: u8, rng: &mut Rng) -> J::State {
    let mut st = job.new_state();
    for (offset, bytes) in record_chunks(data, sep, rng) {
        let chunk = Chunk {
            input: 0,
            offset,
            data: bytes,
        };
        job.process(&mut st, &chunk);
    }
    st
}

/// Encode `st`: it decodes to an equal encoding; one byte changed, the
/// encoding cut short or lengthened are errors. Returns the encoding.
fn check<J: Partial>(job: &J, st: &J::State, inputs: &BTreeSet<u64>, rng: &mut Rng) -> Vec<u8> {
    let enc = encode(job, st, inputs);
    let (job2, t) = decode::<J>(&enc).expect("an encoded state decodes");
    assert_eq!(&t.inputs, inputs, "inputs");
    assert_eq!(
        encode(&job2, &t.state, &t.inputs),
        enc,
        "state after a round trip"
    );
    let mut bad = enc.clone();
    let at = rng.below(enc.len() as u64) as usize;
    bad[at] ^= 1 + rng.below(255) as u8;
    assert!(
        decode::<J>(&bad).is_err(),
        "byte {at} changed, still a state"
    );
    let cut = rng.below(enc.len() as u64) as usize;
    assert!(
        decode::<J>(&enc[..cut]).is_err(),
        "cut to {cut}, still a state"
    );
    let mut longer = enc.clone();
    longer.push(rng.below(256) as u8);
    assert!(
        decode::<J>(&longer).is_err(),
        "a byte appended, still a state"
    );
    enc
}
