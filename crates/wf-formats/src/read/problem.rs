//! Records that stop a query: under `--strict` every malformed record, value
//! not of its column's type and invalid UTF-8 does; without it, a value that
//! does not fit a type *inferred* from the first records does (DuckDB fails
//! such a query too, naming the line and the value). A sum over a column whose
//! later values turned NULL was a wrong answer with exit status 0.
//!
//! The scan knows a problem happened from its counts; to name it, the record is
//! parsed again on its own ([`super::job`]), and its line is counted from
//! the file's start only then, so the fast paths carry no positions.

use std::fmt;
use std::io::Read;

use crate::{Field, Kind};
use wf_core::scan::{Input, Source};

/// What was wrong with a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// The record does not parse (it is not a row).
    Malformed,
    /// A value does not convert to its column's type.
    BadValue,
    /// Text that is not valid UTF-8.
    InvalidUtf8,
}

/// The first record that stopped a query: where it is and what was wrong.
#[derive(Debug, Clone)]
pub struct RecordError {
    pub kind: ProblemKind,
    /// The input's name.
    pub input: String,
    /// Byte offset of the record in its input.
    pub byte: u64,
    /// Line (from 1) of the record's first byte, when the input could be read again.
    pub line: Option<u64>,
    /// The column and the value that did not fit it (for `BadValue`).
    pub column: Option<Field>,
    /// The value (for `BadValue`) or the record, cut to [`SHOWN`] bytes.
    pub text: Vec<u8>,
    /// How to go on: `--schema` with the column widened, or `--strict`'s name.
    pub hint: String,
}

/// Bytes of a record or value a message shows.
const SHOWN: usize = 200;

impl RecordError {
    /// The text shown of a record or value: at most [`SHOWN`] bytes.
    pub fn cut(text: &[u8]) -> Vec<u8> {
        text[..text.len().min(SHOWN)].to_vec()
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.input)?;
        match self.line {
            Some(l) => write!(f, "line {l} (byte {}): ", self.byte)?,
            None => write!(f, "byte {}: ", self.byte)?,
        }
        let text = String::from_utf8_lossy(&self.text);
        match (self.kind, &self.column) {
            (ProblemKind::BadValue, Some(c)) => write!(
                f,
                "column {}: {text:?} is not of its type {}",
                c.name,
                c.kind.spec()
            )?,
            (ProblemKind::BadValue, None) => {
                write!(f, "a value is not of its column's type in {text:?}")?
            }
            (ProblemKind::Malformed, _) => write!(f, "malformed record {text:?}")?,
            (ProblemKind::InvalidUtf8, _) => write!(f, "invalid UTF-8 in {text:?}")?,
        }
        write!(f, " ({})", self.hint)
    }
}

impl std::error::Error for RecordError {}

/// The hint for a value that does not fit an inferred type: the `--schema`
/// that reads it, `column` widened: int to decimal(38,0) when the value is
/// an integer past int64 (to float, the hint rounded every integer past
/// 2^53 unsaid), to float when it is another number, else to string.
pub fn schema_hint(fields: &[Field], column: &str, value: &[u8]) -> String {
    let spec: Vec<String> = fields
        .iter()
        .map(|f| {
            let kind = match f.kind {
                Kind::Int if f.name == column => widened(value),
                _ if f.name == column => Kind::Str,
                k => k,
            };
            format!("{}:{}", f.name, kind.spec())
        })
        .collect();
    format!(
        "the type was inferred from the first 1000 records of the first input (a column \
         with no value there: more of its sample, or the next file when the first has \
         only a header); give the types with --schema '{}'",
        spec.join(",")
    )
}

/// The type an int column widens to for `value` (see [`schema_hint`]).
fn widened(value: &[u8]) -> Kind {
    let v = value.trim_ascii();
    let digits = v.strip_prefix(b"-").or(v.strip_prefix(b"+")).unwrap_or(v);
    let integer = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
    match (integer, crate::csv::decimal(value).is_some()) {
        (true, _) if digits.len() <= 38 => Kind::Decimal {
            precision: 38,
            scale: 0,
        },
        (false, true) => Kind::Float,
        _ => Kind::Str,
    }
}

/// The line (from 1) of byte `at` of a regular file: the newlines before it,
/// counted by reading the file again (only for a message).
pub fn line_at(input: &Input, at: u64) -> Option<u64> {
    let Source::File { path, .. } = &input.source else {
        return None;
    };
    let mut f = std::fs::File::open(path).ok()?.take(at);
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 1u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Some(lines),
            Ok(n) => lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// The [`RecordError`] that failed a query, wherever DataFusion wrapped it.
pub fn record_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a RecordError> {
    std::iter::successors(Some(e), |e| e.source()).find_map(|e| e.downcast_ref::<RecordError>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint widens an int column as far as its value needs: an integer
    /// past int64 to decimal(38,0) (float would round every integer past
    /// 2^53), another number to float, anything else to string.
    #[test]
    fn the_hint_widens_an_int_column_as_far_as_the_value_needs() {
        let fields = [Field::new("id", Kind::Int), Field::new("a", Kind::Int)];
        let hint = |v: &str| schema_hint(&fields, "a", v.as_bytes());
        for (value, wanted) in [
            ("9223372036854775808", "'id:int,a:decimal(38,0)'"),
            (
                "-99999999999999999999999999999999999999",
                "a:decimal(38,0)'",
            ),
            ("1.5", "'id:int,a:float'"),
            ("1e3", "a:float'"),
            ("999999999999999999999999999999999999999", "a:string'"),
            ("N/A", "a:string'"),
        ] {
            assert!(hint(value).ends_with(wanted), "{value}: {}", hint(value));
        }
    }
}
