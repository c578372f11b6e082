//! The time push-down's check of the bytes it would read: how the times of
//! their records run ([`Order`], as `wf count --since` notes them in its
//! window job). The search trusts that no record is more than `--disorder`
//! earlier than one before it and checks that only at its probes; a log
//! with requests of an hour logged when they ended lost records of a window
//! near its end, exit 0. A searched file whose records go back further is
//! searched again with twice the farthest jump back seen, then read whole
//! (`time::time_scan`; a whole read is the last round: nothing is left out).
//!
//! What it cannot see: a record out of place is found by its neighbours in
//! the bytes read, so a lone one just outside a span (a late record just
//! past its end, an early one just before its start, with none out of
//! place inside it) is still left out; the spans of BGZF and
//! zstd files found by block are not checked (their edges would have to be
//! cut at block starts); the check runs where DataFusion asks the table for
//! its scan, so `EXPLAIN` runs it too.
//!
//! Why a scan of its own before the query, not a note taken while the query
//! reads: the query's reader hands batches to DataFusion as it goes, so a
//! second search would come after rows were answered; this scan reads only
//! the spans of searched regular files (never a stream, which could not be
//! read again), only their first and last 32 MiB (where records of the
//! window lie beside bytes left out; a wide window's whole span tripled its
//! `count(*)`, `seek::EDGE`), parses only the time, on the query's `-j`
//! threads, each with its own parser, and the query then reads those bytes
//! from the page cache. An input error met here is left to the query, which
//! reads the same bytes and names it.
//!
//! [`record_time`], a record's time as the query would read it, lives here
//! and `time.rs` (the push-down, above this check) takes it from here, so
//! the two modules' arrow runs one way.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, TimeUnit, TimestampMicrosecondType, TimestampNanosecondType,
};
use wf_core::jobs::window::{self, Order};
use wf_core::jobs::{Chunk, Job};
use wf_core::scan::{self, seek, Input};
use wf_formats::columns::Columns;
use wf_formats::{Format, Kind, Parser};

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
    let (of, edges) = seek::span_edges(given, seeked, seek::EDGE);
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

/// A record's time, by the table's own parser (`rec` may end in its
/// separator and a `\r`); text as DataFusion's `CAST(... AS TIMESTAMP)`
/// reads it (Arrow's cast), to the microsecond below.
pub(crate) fn record_time(
    parser: &mut dyn wf_formats::Parser,
    text: bool,
    rec: &[u8],
) -> Option<i64> {
    let mut rec = rec.strip_suffix(b"\n").unwrap_or(rec);
    rec = rec.strip_suffix(b"\r").unwrap_or(rec);
    let mut cols = Columns::new(&[if text { Kind::Str } else { Kind::Time }]);
    if !parser.parse(rec, &mut cols) {
        return None;
    }
    let (arrays, _) = cols.take();
    let a = arrays.first()?;
    if !text {
        let a = a.as_primitive_opt::<TimestampMicrosecondType>()?;
        return (a.len() == 1 && a.is_valid(0)).then(|| a.value(0));
    }
    let ns = DataType::Timestamp(TimeUnit::Nanosecond, None);
    let t = cast(a, &ns).ok()?;
    let t = t.as_primitive_opt::<TimestampNanosecondType>()?;
    (t.len() == 1 && t.is_valid(0)).then(|| t.value(0).div_euclid(1000))
}
