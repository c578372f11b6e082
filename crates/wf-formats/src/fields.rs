//! `fields`: a record split on runs of whitespace (space, tab, `\x0b`, `\x0c`,
//! `\r`), like awk: leading and trailing whitespace make no empty field. Columns
//! are `c1..cN`, N the most fields of any sampled record; a record with fewer
//! fields has NULLs at the end, one with more keeps its first N. Every column is
//! text unless `--schema` gives names and types (then a value that does not
//! convert is NULL). Every record is a row: there is no malformed line here.
//!
//! Fields are found in the piece's byte map, where the five whitespace bytes are
//! one class: a byte-by-byte split was the largest single cost of the Wide
//! Finder 2 report as SQL (13% of its CPU time in perf, 1 GiB log). A field
//! starts and ends at the class's [`super::bytemap::Edges`], taken off the
//! map's words in turn (a search per start and per end took 8% more
//! instructions for six columns of that log). Runs of records go through
//! [`Parser::parse_run`] (no call per record): a scan of four fields over 300 MB
//! of the log took 13% fewer instructions and cycles (perf stat, `ci` builds).
//! When every projected column is text and the piece is checked UTF-8 (the
//! default schema), a run walks only the projected fields (`plan`): matching
//! each value's column kind and builder had made a value cost about 100
//! instructions; six columns of the 1 GiB log went from 7.5 to 6.2 G user
//! instructions (with the inline views' mask table of `columns.rs`; perf stat,
//! `ci` builds). Fields no column uses are passed with
//! [`super::bytemap::Edges::skip_edges`] (1% fewer). The run first notes the
//! spans of its records' fields, then appends them a column at a time through
//! [`super::columns::Texts`] ([`split_spans`] says why): 20% fewer
//! instructions for the six columns, 10% fewer for the whole Wide Finder 2
//! report as SQL (callgrind, 64 MiB and 1 GiB logs).

use super::bytemap::ByteMap;
use super::columns::NULL_SPAN;
use super::{Columns, Field, Format, FormatError, FormatOptions, Kind, Parser};

#[derive(Debug, Clone)]
pub struct Fields {
    fields: Vec<Field>,
}

/// The bytes a record is split at.
const SPACES: [u8; 5] = [b' ', b'\t', b'\r', 0x0b, 0x0c];

fn is_space(c: u8) -> bool {
    SPACES.contains(&c)
}

/// The fields of one record, as awk splits it.
pub fn split(r: &[u8]) -> impl Iterator<Item = &[u8]> {
    r.split(|&c| is_space(c)).filter(|f| !f.is_empty())
}

/// The number of fields `split` gives, counted without building slices: one
/// pass of a byte test, which the compiler vectorises (format inference over
/// one 64 MiB line spent 9% of `wf sql`'s CPU in `split`).
fn count_fields(r: &[u8]) -> usize {
    let mut n = 0;
    let mut prev_space = true;
    for &c in r {
        let space = is_space(c);
        n += usize::from(prev_space && !space);
        prev_space = space;
    }
    n
}

impl Fields {
    pub fn new(opts: &FormatOptions, sample: &[u8]) -> Result<Self, FormatError> {
        if let Some(s) = &opts.schema {
            return Ok(Fields { fields: s.clone() });
        }
        let n = super::sample_lines(sample, 1000)
            .iter()
            .map(|l| count_fields(l))
            .max()
            .unwrap_or(1)
            .max(1);
        Ok(Fields {
            fields: (1..=n)
                .map(|i| Field::new(format!("c{i}"), Kind::Str))
                .collect(),
        })
    }
}

impl Format for Fields {
    fn name(&self) -> String {
        "fields".into()
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn needle_classes(&self) -> Vec<Vec<u8>> {
        vec![SPACES.to_vec()]
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let mut want = vec![None; self.fields.len()];
        for (o, &c) in projection.iter().enumerate() {
            want[c] = Some(o);
        }
        let last = projection.iter().copied().max().map_or(0, |m| m + 1);
        let plan = (want.iter().enumerate())
            .filter_map(|(f, o)| o.map(|o| (f, o)))
            .collect();
        Box::new(FieldsParser {
            want,
            last,
            plan,
            spans: Vec::new(),
        })
    }
}

struct FieldsParser {
    want: Vec<Option<usize>>,
    /// One past the last projected column: later fields are not looked at.
    last: usize,
    /// The projected fields in order: (field index, column).
    plan: Vec<(usize, usize)>,
    /// The spans of the projected fields of a run's records, record by record
    /// (`plan.len()` each).
    spans: Vec<[u32; 2]>,
}

impl Parser for FieldsParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        let mut seen = 0;
        for (i, f) in split(record).take(self.last).enumerate() {
            if let Some(o) = self.want[i] {
                out.text_as_kind(o, f);
            }
            seen = i + 1;
        }
        for i in seen..self.last {
            if let Some(o) = self.want[i] {
                out.null(o);
            }
        }
        out.end_row();
        true
    }

    fn parse_in(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        start: usize,
        end: usize,
        out: &mut Columns,
    ) -> bool {
        match spaces_class(map) {
            Some(ws) => {
                self.split_in(piece, map, ws, start, end, out);
                true
            }
            None => self.parse(&piece[start..end], out),
        }
    }

    fn has_runs(&self) -> bool {
        true
    }

    /// Every record that is not blank is a row, so a run goes on until a blank
    /// one or one ending in CR (which the caller reads and counts).
    fn parse_run(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        pos: usize,
        room: usize,
        out: &mut Columns,
    ) -> (usize, usize) {
        let Some(ws) = spaces_class(map) else {
            return (pos, 0);
        };
        if piece.len() < u32::MAX as usize {
            if let Some(mut texts) = out.texts() {
                let (plan, spans) = (&self.plan, &mut self.spans);
                spans.clear();
                let (next, n) = super::run_records(piece, map, pos, room, |s, e| {
                    split_spans(plan, map, ws, s, e, spans);
                    true
                });
                for (k, &(_, o)) in plan.iter().enumerate() {
                    texts.extend(o, piece, spans, plan.len(), k);
                }
                out.add_rows(n);
                return (next, n);
            }
        }
        super::run_records(piece, map, pos, room, |s, e| {
            self.split_in(piece, map, ws, s, e, out);
            true
        })
    }
}

/// The map's class of the spaces, when all of them are in it (see
/// [`Format::needle_classes`]).
fn spaces_class(map: &ByteMap) -> Option<usize> {
    map.class(b' ')
        .filter(|&k| SPACES.iter().all(|&c| map.class(c) == Some(k)))
}

impl FieldsParser {
    /// One row from the record `piece[start..end]`, its fields found in the
    /// map's class `ws`.
    #[inline(always)]
    fn split_in(
        &mut self,
        piece: &[u8],
        map: &ByteMap,
        ws: usize,
        start: usize,
        end: usize,
        out: &mut Columns,
    ) {
        let mut edges = map.edges(ws, start, end);
        let mut i = 0;
        while i < self.last {
            let Some(s) = edges.next() else {
                break;
            };
            let e = edges.next().unwrap_or(end);
            if let Some(o) = self.want[i] {
                out.text_at(o, piece, s, e);
            }
            i += 1;
        }
        for o in self.want[i..self.last].iter().flatten() {
            out.null(*o);
        }
        out.end_row();
    }
}

/// The spans of the `plan`'s fields of the record `start..end` (see
/// [`FieldsParser::split_in`]), appended to `spans`: the fields no column uses
/// are passed two edges at a time, a missing field is [`NULL_SPAN`]. The values
/// are appended afterwards a column at a time
/// ([`super::columns::Texts::extend`]). Appended here, field by field, each
/// value took about 110 instructions (the six columns' builders and the edges
/// did not fit in registers): the scan of six columns of the 1 GiB log took 880
/// instructions per record (callgrind, `ci` build). (Every edge up to the last
/// field used, in one loop into an array, took 10% more.)
#[inline(always)]
fn split_spans(
    plan: &[(usize, usize)],
    map: &ByteMap,
    ws: usize,
    start: usize,
    end: usize,
    spans: &mut Vec<[u32; 2]>,
) {
    let mut edges = map.edges(ws, start, end);
    let mut f = 0;
    spans.reserve(plan.len());
    let filled = spans.len() + plan.len();
    for (slot, &(field, _)) in spans.spare_capacity_mut().iter_mut().zip(plan) {
        edges.skip_edges(2 * (field - f));
        f = field + 1;
        slot.write(match edges.next() {
            Some(s) => [s as u32, edges.next().unwrap_or(end) as u32],
            None => NULL_SPAN,
        });
    }
    // SAFETY: `reserve` made room for `plan.len()` spans, all written above.
    unsafe { spans.set_len(filled) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_fields_equals_split() {
        for r in [
            &b""[..],
            b" ",
            b"a",
            b" a",
            b"a ",
            b"a b",
            b"  a \t\x0b b\x0c\rc  ",
            b"\xef\xbb\xbf x",
        ] {
            assert_eq!(count_fields(r), split(r).count(), "{r:?}");
        }
    }
}
