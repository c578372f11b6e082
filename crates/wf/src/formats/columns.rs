//! The projected columns of one batch, as Arrow builders.
//!
//! Strings go into `Utf8View` builders: a value of at most 12 bytes (status
//! words, methods, most IPv4 clients) is stored inline in its 16-byte view with
//! no buffer copy at all, and DataFusion groups and compares views without
//! materialising them.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringViewBuilder,
    TimestampMicrosecondBuilder,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::Kind;

enum Builder {
    Str(StringViewBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
    Time(TimestampMicrosecondBuilder),
    Bool(BooleanBuilder),
}

impl Builder {
    fn new(kind: Kind) -> Self {
        match kind {
            Kind::Str => Builder::Str(StringViewBuilder::new()),
            Kind::Int => Builder::Int(Int64Builder::new()),
            Kind::Float => Builder::Float(Float64Builder::new()),
            Kind::Time => Builder::Time(TimestampMicrosecondBuilder::new().with_timezone("UTC")),
            Kind::Bool => Builder::Bool(BooleanBuilder::new()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Float(b) => Arc::new(b.finish()),
            Builder::Time(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
        }
    }

    fn null(&mut self) {
        match self {
            Builder::Str(b) => b.append_null(),
            Builder::Int(b) => b.append_null(),
            Builder::Float(b) => b.append_null(),
            Builder::Time(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
        }
    }
}

/// Builders for the projected columns of one batch, plus the row count (a
/// projection may be empty: `count(*)` needs rows but no column).
pub struct Columns {
    builders: Vec<Builder>,
    kinds: Vec<Kind>,
    rows: usize,
    /// String values that were not valid UTF-8 (replaced with U+FFFD).
    pub invalid_utf8: u64,
    /// Values that did not convert to their column's type (made NULL).
    pub bad_values: u64,
    /// The bytes text values come from are known to be valid UTF-8 (see
    /// [`super::Format::ascii_boundaries`]): no check per value.
    pub utf8_checked: bool,
}

impl Columns {
    pub fn new(kinds: &[Kind]) -> Self {
        Columns {
            builders: kinds.iter().map(|&k| Builder::new(k)).collect(),
            kinds: kinds.to_vec(),
            rows: 0,
            invalid_utf8: 0,
            bad_values: 0,
            utf8_checked: false,
        }
    }

    /// Some projected column is text.
    pub fn has_text(&self) -> bool {
        self.kinds.contains(&Kind::Str)
    }

    /// The kind of projected column `i`.
    pub fn kind(&self, i: usize) -> Kind {
        self.kinds[i]
    }

    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Rows appended since the last [`Columns::finish`].
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// One row is complete (every column got exactly one value).
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// Text for column `i` (which must be a string column).
    pub fn str(&mut self, i: usize, v: &[u8]) {
        let Builder::Str(b) = &mut self.builders[i] else {
            unreachable!("column {i} is not text")
        };
        if self.utf8_checked {
            // SAFETY: the caller checked the whole record (`utf8_checked`), and
            // the value is cut at ASCII bytes of it.
            return b.append_value(unsafe { std::str::from_utf8_unchecked(v) });
        }
        match std::str::from_utf8(v) {
            Ok(s) => b.append_value(s),
            Err(_) => {
                self.invalid_utf8 += 1;
                b.append_value(String::from_utf8_lossy(v));
            }
        }
    }

    pub fn int(&mut self, i: usize, v: Option<i64>) {
        match (&mut self.builders[i], v) {
            (Builder::Int(b), v) => b.append_option(v),
            (other, None) => other.null(),
            (Builder::Float(b), Some(v)) => b.append_value(v as f64),
            _ => unreachable!("column {i} is not a number"),
        }
    }

    pub fn float(&mut self, i: usize, v: Option<f64>) {
        match (&mut self.builders[i], v) {
            (Builder::Float(b), v) => b.append_option(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a float"),
        }
    }

    /// Microseconds since the Unix epoch, UTC.
    pub fn time(&mut self, i: usize, v: Option<i64>) {
        match (&mut self.builders[i], v) {
            (Builder::Time(b), v) => b.append_option(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a timestamp"),
        }
    }

    pub fn bool(&mut self, i: usize, v: Option<bool>) {
        match (&mut self.builders[i], v) {
            (Builder::Bool(b), v) => b.append_option(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a bool"),
        }
    }

    pub fn null(&mut self, i: usize) {
        self.builders[i].null();
    }

    /// Text for column `i` converted to the column's kind; a value that does not
    /// convert is NULL (used by formats whose types are inferred or given: CSV,
    /// fields, logfmt, regex).
    pub fn text_as_kind(&mut self, i: usize, v: &[u8]) {
        match self.kinds[i] {
            Kind::Str => self.str(i, v),
            Kind::Int => self.int(i, parse_int(v)),
            Kind::Float => self.float(i, parse_float(v)),
            Kind::Time => self.time(i, super::time::parse_any(v)),
            Kind::Bool => self.bool(i, parse_bool(v)),
        }
    }

    /// Take the rows built so far: one array per column, and the row count.
    pub fn take(&mut self) -> (Vec<ArrayRef>, usize) {
        let arrays = self.builders.iter_mut().map(Builder::finish).collect();
        (arrays, std::mem::take(&mut self.rows))
    }

    /// Take the rows built so far as a batch of `schema` (the projected schema).
    pub fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
        let (arrays, rows) = self.take();
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
    }
}

/// A decimal integer with an optional sign; anything else is `None`.
pub fn parse_int(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 18 {
        return std::str::from_utf8(v).ok()?.parse().ok();
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (d - b'0') as i64;
    }
    Some(if neg { -n } else { n })
}

/// A float as Rust's parser reads it (`1.5`, `-2e3`, `inf`); `None` otherwise.
pub fn parse_float(v: &[u8]) -> Option<f64> {
    std::str::from_utf8(v).ok()?.trim().parse().ok()
}

pub fn parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"true" | b"TRUE" | b"True" | b"t" | b"1" => Some(true),
        b"false" | b"FALSE" | b"False" | b"f" | b"0" => Some(false),
        _ => None,
    }
}
