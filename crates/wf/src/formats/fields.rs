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
//! default schema), a run writes through [`super::columns::Texts`] and walks
//! only the projected fields (`plan`): matching each value's column kind and
//! builder had made a value cost about 100 instructions; six columns of the
//! 1 GiB log went from 7.5 to 6.2 G user instructions (with the inline views'
//! mask table of `columns.rs`; perf stat, `ci` builds). Fields no column uses
//! are passed with [`super::bytemap::Edges::skip_edges`] (1% fewer).

use super::bytemap::ByteMap;
use super::columns::Texts;
use super::{Columns, Field, Format, FormatOptions, Kind, Parser};

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

impl Fields {
    pub fn new(opts: &FormatOptions, sample: &[u8]) -> Result<Self, String> {
        if let Some(s) = &opts.schema {
            return Ok(Fields { fields: s.clone() });
        }
        let n = super::sample_lines(sample, 1000)
            .iter()
            .map(|l| split(l).count())
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
        Box::new(FieldsParser { want, last, plan })
    }
}

struct FieldsParser {
    want: Vec<Option<usize>>,
    /// One past the last projected column: later fields are not looked at.
    last: usize,
    /// The projected fields in order: (field index, column).
    plan: Vec<(usize, usize)>,
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
        if let Some(mut texts) = out.texts() {
            let (next, n) = super::run_records(piece, map, pos, room, |s, e| {
                self.split_texts(piece, map, ws, s, e, &mut texts);
                true
            });
            out.add_rows(n);
            return (next, n);
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

    /// As [`FieldsParser::split_in`], every column text: the projected fields
    /// in order, the others passed two edges at a time. (One split generic
    /// over the two sinks took 1.5% more instructions for six columns of the
    /// 1 GiB log, and no fewer cycles: kept apart.)
    #[inline(always)]
    fn split_texts(
        &self,
        piece: &[u8],
        map: &ByteMap,
        ws: usize,
        start: usize,
        end: usize,
        out: &mut Texts<'_>,
    ) {
        let mut edges = map.edges(ws, start, end);
        let mut f = 0;
        for (k, &(field, o)) in self.plan.iter().enumerate() {
            edges.skip_edges(2 * (field - f));
            f = field;
            let Some(s) = edges.next() else {
                return self.nulls_from(k, out);
            };
            out.push_at(o, piece, s, edges.next().unwrap_or(end));
            f += 1;
        }
    }

    /// NULLs for the projected fields from the `k`th on (the record has fewer).
    fn nulls_from(&self, k: usize, out: &mut Texts<'_>) {
        for &(_, o) in &self.plan[k..] {
            out.null(o);
        }
    }
}
