//! The report's counts as a partial state (`wf_core::jobs::partial`), for
//! `wf report --state FILE`: a run saves its merged [`Acc`], the next one
//! reads it back and merges what it read since.
//!
//! Why this shape: an `Acc` is already a set of interned strings, vectors of
//! counts indexed by id, visitors as (day, client id, agent id) and sorted
//! (row, visitor) pairs, so it is written as it is: each table's keys in id
//! order (read back through the same interning, so the ids are the same),
//! the pairs sorted and written as deltas (a few bytes each), by `codec.rs`.
//! Every id read back is checked against the table it points into, so
//! damaged bytes that pass the CRC are an error, never a report that panics
//! or lies.
//!
//! What is not saved: the first failed lines' offsets (`failed_at`, named in
//! `--stats` by input index: indices of another run's inputs mean nothing
//! in this one), and the per-thread caches (agents classified, parser
//! buffers). The format is not a job parameter (it is no number): the CLI
//! puts its name in the state's settings, so a state is only continued with
//! the same format; [`Partial::from_params`] makes a combined-log job, whose
//! only use is to read a state back.

use wf_core::jobs::partial::{Damage, Partial, Reader, Writer};
use wf_core::jobs::Job;

use crate::codec::{read_acc, write_acc};
use crate::job::{BotMode, ReportJob, ReportState};

impl Partial for ReportJob {
    const TAG: u8 = 4;
    const NAME: &'static str = "report";

    fn params(&self) -> Vec<u64> {
        vec![match self.bots() {
            BotMode::Include => 0,
            BotMode::Exclude => 1,
            BotMode::Only => 2,
        }]
    }

    fn from_params(p: &[u64]) -> Result<Self, Damage> {
        let bots = match p {
            [0] => BotMode::Include,
            [1] => BotMode::Exclude,
            [2] => BotMode::Only,
            _ => return Err(Damage::Settings(Self::NAME)),
        };
        let format = crate::format("combined", b"").map_err(|_| Damage::Settings(Self::NAME))?;
        ReportJob::new(format, bots).map_err(|_| Damage::Settings(Self::NAME))
    }

    fn write_state(&self, st: &ReportState, w: &mut Writer) {
        write_acc(&st.acc, w);
    }

    fn read_state(&self, r: &mut Reader) -> Result<ReportState, Damage> {
        let mut st = self.new_state();
        st.acc = read_acc(r)?;
        Ok(st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use wf_core::jobs::partial::{decode, encode};
    use wf_core::jobs::Chunk;

    const LOG: &[u8] = b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.css HTTP/1.0\" 200 2 \"http://x/\" \"Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0\"
5.6.7.8 - - [11/Oct/2000:13:55:36 -0700] \"GET /b HTTP/1.0\" 404 3 \"-\" \"Googlebot/2.1\"
bad line
1.2.3.4 - - [11/Oct/2000:14:55:36 -0700] \"GET /c HTTP/1.0\" 599 4 \"-\" \"curl/8\"
";

    fn state(job: &ReportJob, data: &[u8]) -> ReportState {
        let mut st = job.new_state();
        let chunk = Chunk {
            input: 0,
            offset: 0,
            data,
        };
        job.process(&mut st, &chunk);
        st
    }

    fn job() -> ReportJob {
        ReportJob::new(crate::format("combined", b"").unwrap(), BotMode::Include).unwrap()
    }

    use crate::report::tests::json;

    #[test]
    fn round_trip_gives_the_same_report_and_bytes() {
        let j = job();
        let st = state(&j, LOG);
        let bytes = encode(&j, &st, &BTreeSet::new());
        let (_, t) = decode::<ReportJob>(&bytes).unwrap();
        assert_eq!(encode(&j, &t.state, &BTreeSet::new()), bytes);
        assert_eq!(json(t.state.acc), json(state(&j, LOG).acc));
    }

    #[test]
    fn decoded_halves_merge_to_the_whole() {
        let j = job();
        let cut = LOG.iter().position(|&c| c == b'\n').unwrap() + 1;
        let (a, b) = (state(&j, &LOG[..cut]), state(&j, &LOG[cut..]));
        let ea = encode(&j, &a, &BTreeSet::new());
        let (_, mut ta) = decode::<ReportJob>(&ea).unwrap();
        j.merge(&mut ta.state, b);
        assert_eq!(json(ta.state.acc), json(state(&j, LOG).acc));
    }

    /// A state whose checksum is right but whose counts cannot be (more
    /// requests of agents than requests) is an error, not a wrapped count.
    #[test]
    fn impossible_counts_are_an_error() {
        let j = job();
        let mut st = state(&j, LOG);
        st.acc.panels.agents.values[0].all += 10;
        let bytes = encode(&j, &st, &BTreeSet::new());
        assert!(decode::<ReportJob>(&bytes).is_err());
    }

    #[test]
    fn every_damage_is_an_error() {
        let j = job();
        let good = encode(&j, &state(&j, LOG), &BTreeSet::new());
        for n in 0..good.len() {
            assert!(decode::<ReportJob>(&good[..n]).is_err(), "cut at {n}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            assert!(decode::<ReportJob>(&bad).is_err(), "byte {i}");
        }
    }
}
