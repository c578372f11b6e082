//! Time push-down: `WHERE time >= X AND time < Y` on a log's own time column
//! becomes the byte spans of `wf count --since X --until Y` (`scan::seek`), so
//! the last hour of a month-long log reads about an hour's bytes.
//!
//! Why this shape: DataFusion offers each conjunct of a WHERE to the table
//! (`supports_filters_pushdown`); a bound on the time column with a constant
//! (after DataFusion's own folding: `TIMESTAMP '...'`, `'...'::timestamp`,
//! `now() - INTERVAL '1 hour'`) is accepted as `Inexact`, so DataFusion still
//! applies it to every row and the answer stays exact whatever the spans hold.
//! The scan gets the bounds as a window and narrows each regular file to the
//! records that can lie in it, with the slack of `--disorder` (5 minutes: logs
//! are written when requests end). BGZF and multi-frame zstd files are
//! searched by block, and the scan decodes the range found from its start at
//! its true decoded offset (`_offset`); a zstd file whose frames do not say
//! their sizes, other compressed files, streams and files found out of order
//! are read whole, as `--since` reads them. The search trusts the slack
//! only as far as the ends of the spans bear it out (`time_order`): records
//! there further back than the slack have the files searched again with
//! twice the farthest jump back seen, then every file read whole (not a
//! lone record out of place just outside a span, nor the spans of BGZF and
//! zstd files: known gaps). A query that uses `_line` (a
//! count of lines from the file's start) is not pushed down (`table.rs`).
//!
//! Only a column that is the record's log time is trusted to be in file order:
//! the `%t`/`$time_local`/`$time_iso8601` column (`time`) of the Apache and
//! nginx formats, and the `time`, `timestamp`, `@timestamp` or `ts` column of
//! JSON lines and logfmt when it is a timestamp. A probe's time is read with
//! the table's own parser, so the search compares the very values the filter
//! does. `WF_TIME_PUSHDOWN=0` turns the push-down off (for comparisons).

use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::temporal_conversions::timestamp_us_to_datetime;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

use wf_core::scan::seek::{self, Seeked, Whole};
use wf_core::scan::{Input, Source};
use wf_formats::read;
use wf_formats::{Format, Kind};

/// The slack: how much earlier than one before it a record may be.
pub(crate) const DISORDER_US: i64 = 5 * 60 * 1_000_000;

/// Whether the push-down is on (`WF_TIME_PUSHDOWN=0`: off).
fn enabled() -> bool {
    std::env::var("WF_TIME_PUSHDOWN").map_or(true, |v| v != "0")
}

/// The column of `format` that is its records' log time, if it has one:
/// its index and whether it is text (a JSON or logfmt time inferred as a
/// string, which a query compares as `CAST(time AS TIMESTAMP)`).
pub(crate) fn time_column(format: &dyn Format) -> Option<(usize, bool)> {
    if !enabled() {
        return None;
    }
    let name = format.name();
    let clf = wf_formats::clf::LogFormat::is_named(&name)
        || name.starts_with("apache:")
        || name.starts_with("nginx:");
    let keyed = name == "jsonl" || name == "logfmt";
    let keys: &[&str] = match (clf, keyed) {
        (true, _) => &["time"],
        (_, true) => &["time", "timestamp", "@timestamp", "ts"],
        _ => return None,
    };
    let fields = format.fields();
    keys.iter().find_map(|k| {
        let i = fields.iter().position(|f| f.name == *k)?;
        match fields[i].kind {
            Kind::Time => Some((i, false)),
            Kind::Str if keyed => Some((i, true)),
            _ => None,
        }
    })
}

/// A time window in microseconds, `[since, until)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub since: i64,
    pub until: i64,
}

impl Bounds {
    const ALL: Bounds = Bounds {
        since: i64::MIN,
        until: i64::MAX,
    };

    fn and(self, o: Bounds) -> Bounds {
        Bounds {
            since: self.since.max(o.since),
            until: self.until.min(o.until),
        }
    }
}

/// The time column as the filters see it: its name, and whether it is text
/// (then only its cast to a timestamp is a time).
#[derive(Debug, Clone)]
pub(crate) struct TimeCol {
    pub index: usize,
    pub name: String,
    pub text: bool,
    /// The slack, in microseconds (`--disorder`, default [`DISORDER_US`]).
    pub disorder: i64,
}

/// The bounds a filter sets on the time column, if it is a comparison of the
/// column with a constant timestamp (or a conjunction or BETWEEN of such);
/// `None`: not a filter the scan can use.
pub(crate) fn bounds(e: &Expr, name: &TimeCol) -> Option<Bounds> {
    match e {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And,
            right,
        }) => Some(bounds(left, name)?.and(bounds(right, name)?)),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            if is_time(left, name) {
                compare(*op, constant(right)?)
            } else if is_time(right, name) {
                compare(op.swap()?, constant(left)?)
            } else {
                None
            }
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) if is_time(expr, name) => {
            let lo = compare(Operator::GtEq, constant(low)?)?;
            Some(lo.and(compare(Operator::LtEq, constant(high)?)?))
        }
        _ => None,
    }
}

/// The time column itself (unless it is text), or cast to a timestamp type
/// (the instant is the same: the column is UTC, and text is cast as
/// [`record_time`](crate::time_order::record_time) casts it).
fn is_time(e: &Expr, tc: &TimeCol) -> bool {
    let column = |e: &Expr| matches!(e, Expr::Column(c) if c.name == tc.name);
    let (inner, to) = match e {
        Expr::Column(_) => return !tc.text && column(e),
        Expr::Cast(c) => (&*c.expr, c.field.data_type()),
        Expr::TryCast(c) => (&*c.expr, c.field.data_type()),
        _ => return false,
    };
    matches!(to, DataType::Timestamp(..)) && column(inner)
}

/// A constant timestamp as (floor, ceiling) microseconds.
fn constant(e: &Expr) -> Option<(i64, i64)> {
    let Expr::Literal(v, _) = e else {
        return None;
    };
    let (v, per_us_num, per_us_den) = match v {
        ScalarValue::TimestampSecond(Some(v), _) => (*v, 1_000_000, 1),
        ScalarValue::TimestampMillisecond(Some(v), _) => (*v, 1_000, 1),
        ScalarValue::TimestampMicrosecond(Some(v), _) => (*v, 1, 1),
        ScalarValue::TimestampNanosecond(Some(v), _) => (*v, 1, 1_000),
        _ => return None,
    };
    let us = (v as i128) * per_us_num;
    let floor = us.div_euclid(per_us_den);
    let ceil = floor + i128::from(us.rem_euclid(per_us_den) != 0);
    let clamp = |x: i128| x.clamp(i64::MIN as i128 + 1, i64::MAX as i128 - 1) as i64;
    Some((clamp(floor), clamp(ceil)))
}

/// `time op c`, with c as (floor, ceiling) microseconds: the window of the
/// records it can keep (wider by a microsecond where that is simpler).
fn compare(op: Operator, (floor, ceil): (i64, i64)) -> Option<Bounds> {
    let all = Bounds::ALL;
    Some(match op {
        Operator::Gt | Operator::GtEq => Bounds {
            since: floor,
            ..all
        },
        Operator::Lt | Operator::LtEq => Bounds {
            until: ceil + 1,
            ..all
        },
        Operator::Eq => Bounds {
            since: floor,
            until: ceil + 1,
        },
        _ => return None,
    })
}

/// What a scan with a window reads: the table with its files narrowed to
/// spans, and what the search found (for `EXPLAIN` and `--stats`).
#[derive(Debug)]
pub(crate) struct TimeScan {
    pub table: Arc<read::Table>,
    pub note: Arc<SeekNote>,
}

/// What the search did to one scan's inputs.
#[derive(Debug)]
pub(crate) struct SeekNote {
    pub bounds: Bounds,
    /// Per input: its name, size (None: a stream) and span (compressed
    /// files: their compressed bytes).
    pub spans: Vec<(String, Option<u64>, (u64, u64))>,
    pub probed: u64,
    /// The slack, in microseconds.
    pub disorder: i64,
    /// Inputs read whole and why.
    pub whole: Vec<(String, String)>,
}

impl SeekNote {
    /// Bytes of regular files in the spans, and in the files.
    pub fn bytes(&self) -> (u64, u64) {
        let files = self
            .spans
            .iter()
            .filter_map(|(_, s, sp)| s.map(|s| (s, sp)));
        files.fold((0, 0), |(a, b), (s, sp)| (a + sp.1 - sp.0, b + s))
    }
}

/// Narrow the files of `table` to `bounds` on the time column; searched
/// again with a wider slack while the spans' records go back further than
/// it (`time_order`).
pub(crate) fn time_scan(table: &read::Table, tc: &TimeCol, bounds: Bounds) -> TimeScan {
    let (mut disorder, mut first) = (tc.disorder, true);
    loop {
        let (inputs, seeked) = search(table, tc, bounds, disorder);
        let format = table.format();
        let col = (tc.index, tc.text);
        let both = (table.inputs(), &inputs[..]);
        let far = crate::time_order::far_back(format, col, table.options(), both, disorder);
        if far.is_empty() {
            let note = note(&inputs, bounds, disorder, &seeked);
            return TimeScan {
                table: Arc::new(table.with_inputs(inputs)),
                note: Arc::new(note),
            };
        }
        let most = far.iter().map(|f| f.1).max().unwrap_or(0);
        let again = seek::wider(most, first);
        for (i, back, at) in far {
            wf_core::warn!(
                "wf sql: {}: the record at byte {at} is {:.3} s earlier than one before it, \
                 more than --disorder ({} s): {}",
                inputs[i].name,
                back as f64 / 1e6,
                disorder / 1_000_000,
                match again >= seek::WHOLE {
                    true => "read whole and filtered".to_string(),
                    false => format!(
                        "searched again with --disorder {}s",
                        (again + 999_999) / 1_000_000
                    ),
                }
            );
        }
        (disorder, first) = (again, false);
    }
}

/// The table's inputs narrowed to `bounds` with slack `disorder`.
fn search(
    table: &read::Table,
    tc: &TimeCol,
    bounds: Bounds,
    disorder: i64,
) -> (Vec<Input>, Seeked) {
    let mut inputs: Vec<Input> = table.inputs().to_vec();
    let w = seek::Window {
        since: bounds.since,
        until: bounds.until,
        disorder,
    };
    let parser = Mutex::new(table.format().parser(&[tc.index]));
    let text = tc.text;
    let time = move |rec: &[u8]| {
        crate::time_order::record_time(parser.lock().unwrap().as_mut(), text, rec)
    };
    let sep = table.format().separator();
    // BGZF and multi-frame zstd files by block: the scan decodes a range
    // from its start at its true decoded offset (`_offset`); `_line` is not
    // pushed down at all (`table.rs`).
    let seeked = seek::seek_all(&mut inputs, &w, sep, &time, seek::Blocks::Offsets);
    (inputs, seeked)
}

fn note(inputs: &[Input], bounds: Bounds, disorder: i64, s: &Seeked) -> SeekNote {
    let spans = inputs
        .iter()
        .map(|i| {
            // Compressed files count by their compressed bytes.
            let size = match &i.source {
                Source::File { size, .. } | Source::Compressed { size, .. } => Some(*size),
                _ => None,
            };
            let span = i.span.unwrap_or((0, size.unwrap_or(0)));
            (i.name.clone(), size, span)
        })
        .collect();
    let whole = s
        .whole
        .iter()
        .map(|(i, why)| {
            let say = !matches!(why, Whole::NotSeekable | Whole::Slack);
            let why = match why {
                Whole::NotSeekable => "a stream or compressed".to_string(),
                Whole::NoSizes => "zstd frames without content sizes".to_string(),
                Whole::OutOfOrder { at, back_us } => format!(
                    "not in time order: the record at byte {at} is {:.3} s earlier than one \
                     before it",
                    *back_us as f64 / 1e6
                ),
                Whole::Io(e) => format!("cannot be searched: {e}"),
                Whole::Slack => "--disorder 10000w or more".to_string(),
            };
            let name = inputs[*i].name.clone();
            if say {
                wf_core::warn!("wf sql: {name}: {why}: read whole and filtered");
            }
            (name, why)
        })
        .collect();
    SeekNote {
        bounds,
        spans,
        probed: s.probed,
        disorder,
        whole,
    }
}

/// A time in microseconds as ISO 8601 UTC (`-inf`/`+inf` for no bound).
fn iso(us: i64) -> String {
    match us {
        i64::MIN => "-inf".into(),
        i64::MAX => "+inf".into(),
        _ => match timestamp_us_to_datetime(us) {
            Some(t) => format!("{}Z", t.format("%Y-%m-%dT%H:%M:%S%.f")),
            None => format!("{us} us"),
        },
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {})", iso(self.since), iso(self.until))
    }
}

impl fmt::Display for SeekNote {
    /// One line: the window, the bytes in the spans, the probes' bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (span, size) = self.bytes();
        write!(
            f,
            "time={} +/- {}s: spans {span} of {size} bytes",
            self.bounds,
            self.disorder / 1_000_000
        )?;
        let shown: Vec<String> = self
            .spans
            .iter()
            .take(4)
            .filter(|(_, s, _)| s.is_some())
            .map(|(n, _, (a, b))| format!("{n}:{a}..{b}"))
            .collect();
        write!(f, " [{}", shown.join(", "))?;
        if self.spans.len() > 4 {
            write!(f, ", ...")?;
        }
        write!(f, "], probes {} bytes", self.probed)?;
        if !self.whole.is_empty() {
            write!(f, ", {} read whole", self.whole.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn ts(us: i64) -> Expr {
        lit(ScalarValue::TimestampMicrosecond(
            Some(us),
            Some("UTC".into()),
        ))
    }

    #[test]
    fn bounds_of_comparisons() {
        let tc = TimeCol {
            index: 0,
            name: "time".into(),
            text: false,
            disorder: DISORDER_US,
        };
        let b = |e: Expr| bounds(&e, &tc);
        assert_eq!(b(col("time").gt_eq(ts(10))).unwrap().since, 10);
        assert_eq!(b(col("time").lt(ts(10))).unwrap().until, 11);
        assert_eq!(b(ts(10).lt_eq(col("time"))).unwrap().since, 10);
        let r = b(col("time").between(ts(5), ts(9))).unwrap();
        assert_eq!((r.since, r.until), (5, 10));
        let r = b(col("time").gt(ts(5)).and(col("time").lt(ts(9)))).unwrap();
        assert_eq!((r.since, r.until), (5, 10));
        let ns = lit(ScalarValue::TimestampNanosecond(Some(10_500), None));
        assert_eq!(b(col("time").gt_eq(ns)).unwrap().since, 10);
        assert!(b(col("time").not_eq(ts(5))).is_none());
        assert!(b(col("other").gt(ts(5))).is_none());
        assert!(b(col("time").gt(lit("2026"))).is_none());
        assert!(b(col("time").gt(ts(5)).or(col("time").lt(ts(2)))).is_none());
        assert!(b(col("time").not_between(ts(5), ts(9))).is_none());
    }
}
