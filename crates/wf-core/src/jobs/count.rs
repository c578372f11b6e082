//! `wf count`: records and bytes, like `wc -l`, but on every core.
//!
//! Counting is one SIMD pass (`bytecount`, AVX2 where available) over each chunk;
//! a final record without a separator counts as one record. A record longer than
//! 64 KiB is counted in pieces ([`Job::long_records`]): `wf count /dev/zero` runs
//! in bounded memory.

use super::partial::{Damage, Partial, Reader, Writer};
use super::{Chunk, Job, Piece};

/// Count records (separated by `sep`) and bytes.
pub struct Count {
    pub sep: u8,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CountState {
    pub records: u64,
    pub bytes: u64,
}

/// Records longer than this are counted in pieces: a few reads' worth.
const LONG: usize = 64 << 10;

impl Job for Count {
    type State = CountState;

    /// Offsets are not used: a compressed file may be decoded in parts.
    fn offsets(&self) -> bool {
        false
    }

    fn new_state(&self) -> CountState {
        CountState::default()
    }

    fn process(&self, st: &mut CountState, chunk: &Chunk<'_>) {
        let d = chunk.data;
        st.bytes += d.len() as u64;
        st.records += bytecount::count(d, self.sep) as u64;
        if let Some(&last) = d.last() {
            if last != self.sep {
                // Only the final chunk of an input can end without a separator.
                st.records += 1;
            }
        }
    }

    /// Nothing of a record is needed whole: its bytes and its end.
    fn long_records(&self) -> Option<usize> {
        Some(LONG)
    }

    fn piece(&self, st: &mut CountState, piece: &Piece<'_>) {
        st.bytes += piece.data.len() as u64;
        st.records += piece.last as u64;
    }

    fn merge(&self, into: &mut CountState, other: CountState) {
        into.records += other.records;
        into.bytes += other.bytes;
    }
}

impl Partial for Count {
    const TAG: u8 = 1;
    const NAME: &'static str = "count";

    fn params(&self) -> Vec<u64> {
        vec![self.sep as u64]
    }

    fn from_params(p: &[u64]) -> Result<Self, Damage> {
        match p {
            &[sep] if sep < 256 => Ok(Count { sep: sep as u8 }),
            _ => Err(Damage::Settings(Self::NAME)),
        }
    }

    fn write_state(&self, st: &CountState, w: &mut Writer) {
        w.uint(st.records);
        w.uint(st.bytes);
    }

    fn read_state(&self, r: &mut Reader) -> Result<CountState, Damage> {
        Ok(CountState {
            records: r.uint()?,
            bytes: r.uint()?,
        })
    }
}
