//! The time push-down's check of the bytes it would read: how the times of
//! their records run ([`Order`], as `wf count --since` notes them in its
//! window job). The search trusts that no record is more than `--disorder`
//! earlier than one before it and checks that only at its probes; a log
//! with requests of an hour logged when they ended lost records of a window
//! near its end, exit 0. A searched file whose records go back further is
//! searched again with twice that slack, then read whole (`time::time_scan`).
//!
//! Why a scan of its own before the query, not a note taken while the query
//! reads: the query's reader hands batches to DataFusion as it goes, so a
//! second search would come after rows were answered; this scan reads only
//! the spans of searched regular files (never a stream, which could not be
//! read again), only their first and last 32 MiB (where records of the
//! window lie beside bytes left out; a wide window's whole span tripled its
//! `count(*)`), parses only the time, on every core, each thread with its
//! own parser, and the query then reads those bytes from the page cache.

use std::sync::Arc;

use wf_core::jobs::window::{self, Order};
use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{self, seek, Input};
use wf_formats::{Format, Parser};

use crate::time::record_time;

/// Notes the order of the times of a table's records.
struct OrderJob {
    format: Arc<dyn Format>,
    /// The time column, and whether it is text.
    col: usize,
    text: bool,
    sep: u8,
}

struct OrderState {
    parser: Box<dyn Parser>,
    order: Vec<Order>,
}

impl Job for OrderJob {
    type State = OrderState;

    fn new_state(&self) -> OrderState {
        OrderState {
            parser: self.format.parser(&[self.col]),
            order: Vec::new(),
        }
    }

    fn process(&self, st: &mut OrderState, chunk: &Chunk<'_>) {
        let d = chunk.data;
        let mut order = Order::new(chunk.input, chunk.offset);
        let mut at = 0;
        while at < d.len() {
            let end = memchr::memchr(self.sep, &d[at..]).map_or(d.len(), |p| at + p + 1);
            if let Some(t) = record_time(st.parser.as_mut(), self.text, &d[at..end]) {
                order.note(t, chunk.offset + at as u64);
            }
            at = end;
        }
        order.end = chunk.offset + d.len() as u64;
        order.push_to(&mut st.order);
    }

    fn merge(&self, into: &mut OrderState, other: OrderState) {
        into.order.extend(other.order);
    }
}

/// Of `seeked` (the table's `given` inputs after the search), the files
/// searched whose spans' edges hold records further back than `disorder`:
/// `(input, how far, the record's byte)`.
pub(crate) fn far_back(
    format: &Arc<dyn Format>,
    (col, text): (usize, bool),
    opts: &scan::ScanOptions,
    (given, seeked): (&[Input], &[Input]),
    disorder: i64,
) -> Vec<(usize, i64, u64)> {
    let (of, edges) = seek::span_edges(given, seeked, EDGE);
    if edges.is_empty() {
        return Vec::new();
    }
    let job = OrderJob {
        format: format.clone(),
        col,
        text,
        sep: format.separator(),
    };
    let mut out = scan::run(&job, edges, opts, None);
    let mut far = window::far_back_of(&mut out.state.order, &of);
    far.retain(|f| f.1 > disorder);
    far
}

/// Bytes checked at each end of a span (`wf feed --since` checks as much): a 1-hour window of the 1 GiB bench
/// log is checked whole, a wide one in ~60 ms (the whole span of `time >=`
/// most of the log took `count(*)` from 0.26 to 0.85 s).
const EDGE: u64 = 32 << 20;
