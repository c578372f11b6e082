//! `fields`: a record split on runs of whitespace (space, tab, `\x0b`, `\x0c`,
//! `\r`), like awk: leading and trailing whitespace make no empty field. Columns
//! are `c1..cN`, N the most fields of any sampled record; a record with fewer
//! fields has NULLs at the end, one with more keeps its first N. Every column is
//! text unless `--schema` gives names and types (then a value that does not
//! convert is NULL). Every record is a row: there is no malformed line here.

use super::{Columns, Field, Format, FormatOptions, Kind, Parser};

#[derive(Debug, Clone)]
pub struct Fields {
    fields: Vec<Field>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
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

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let mut want = vec![None; self.fields.len()];
        for (o, &c) in projection.iter().enumerate() {
            want[c] = Some(o);
        }
        let last = projection.iter().copied().max().map_or(0, |m| m + 1);
        Box::new(FieldsParser { want, last })
    }
}

struct FieldsParser {
    want: Vec<Option<usize>>,
    /// One past the last projected column: later fields are not looked at.
    last: usize,
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
}
