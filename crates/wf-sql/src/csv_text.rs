//! CSV as Arrow's writer makes it (its formatting of each value, a header
//! line, a field quoted only where it must be: a delimiter, quote, CR or LF
//! in it), except that an empty text is written `""`. NULL is an empty
//! field, and wf's CSV reader reads `""` as the empty text and an empty
//! field as NULL (DuckDB's does with `allow_quoted_nulls=false`); Arrow's
//! writer wrote both as nothing, so `''` came back NULL from a `wf sql -o
//! out.csv` read again (`WHERE s = ''` found none). DuckDB's `COPY ... TO`
//! writes `""` too. The quoting is the `csv` crate's own (`csv_core`),
//! which Arrow's writer calls. A dictionary of texts is text.

use std::io::Write;

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// A text type, or a dictionary of one (an empty value is written `""`).
fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

/// Writes batches as CSV lines with a header first.
pub struct CsvText<W: Write> {
    out: W,
    /// Decides which fields need quotes (`should_quote`), with our delimiter.
    quoting: csv_core::Writer,
    delimiter: u8,
    header_written: bool,
    line: Vec<u8>,
    value: String,
}

impl<W: Write> CsvText<W> {
    pub fn new(out: W, delimiter: u8) -> Self {
        CsvText {
            out,
            quoting: csv_core::WriterBuilder::new().delimiter(delimiter).build(),
            delimiter,
            header_written: false,
            line: Vec::new(),
            value: String::new(),
        }
    }

    /// The header line, once: the first batch's, or an empty result's.
    pub fn header(&mut self, schema: &Schema) -> Result<(), ArrowError> {
        if std::mem::replace(&mut self.header_written, true) {
            return Ok(());
        }
        self.line.clear();
        for (i, f) in schema.fields().iter().enumerate() {
            self.separate(i);
            self.field(f.name().as_bytes());
        }
        self.end_line()
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        self.header(&batch.schema())?;
        let options = FormatOptions::default().with_null("");
        let columns: Vec<(ArrayFormatter<'_>, &dyn Array, bool)> = batch
            .columns()
            .iter()
            .map(|a| {
                if a.data_type().is_nested() {
                    return Err(ArrowError::CsvError(format!(
                        "Nested type {} is not supported in CSV",
                        a.data_type()
                    )));
                }
                let text = is_text(a.data_type());
                Ok((
                    ArrayFormatter::try_new(a.as_ref(), &options)?,
                    a.as_ref(),
                    text,
                ))
            })
            .collect::<Result<_, _>>()?;
        for row in 0..batch.num_rows() {
            self.line.clear();
            for (i, (format, array, text)) in columns.iter().enumerate() {
                self.separate(i);
                if array.is_null(row) {
                    continue;
                }
                self.value.clear();
                format
                    .value(row)
                    .write(&mut self.value)
                    .map_err(|e| ArrowError::CsvError(format!("row {}: {e}", row + 1)))?;
                match (self.value.is_empty(), text) {
                    (true, true) => self.line.extend_from_slice(b"\"\""),
                    _ => {
                        let v = std::mem::take(&mut self.value);
                        self.field(v.as_bytes());
                        self.value = v;
                    }
                }
            }
            self.end_line()?;
        }
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn separate(&mut self, i: usize) {
        if i > 0 {
            self.line.push(self.delimiter);
        }
    }

    /// `v`, quoted (its quotes doubled) if it needs to be.
    fn field(&mut self, v: &[u8]) {
        if !self.quoting.should_quote(v) {
            return self.line.extend_from_slice(v);
        }
        self.line.push(b'"');
        for &b in v {
            if b == b'"' {
                self.line.push(b'"');
            }
            self.line.push(b);
        }
        self.line.push(b'"');
    }

    fn end_line(&mut self) -> Result<(), ArrowError> {
        self.line.push(b'\n');
        self.out.write_all(&self.line).map_err(ArrowError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{DictionaryArray, Int64Array, StringArray};
    use datafusion::arrow::datatypes::Field;
    use datafusion::arrow::datatypes::Int32Type;
    use std::sync::Arc;

    fn csv(batch: &RecordBatch, delimiter: u8) -> String {
        let mut w = CsvText::new(Vec::new(), delimiter);
        w.write(batch).unwrap();
        String::from_utf8(w.into_inner()).unwrap()
    }

    fn batch(s: Vec<Option<&str>>, n: Vec<Option<i64>>, t: Vec<Option<&str>>) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
            Field::new("a,b", DataType::Utf8, true),
        ]);
        let (s, n, t) = (
            StringArray::from(s),
            Int64Array::from(n),
            StringArray::from(t),
        );
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(s), Arc::new(n), Arc::new(t)],
        )
        .unwrap()
    }

    /// What Arrow's writer writes, but `''` as `""`, apart from NULL.
    #[test]
    fn empty_text_is_quoted_and_null_is_nothing() {
        let n = vec![Some(1), None, Some(-3), None, Some(5)];
        let s = vec![Some(""), None, Some("x\"y"), Some("p,q"), Some("l\nm")];
        let t = vec![Some("plain"), Some(""), None, Some(" sp "), Some("\r")];
        assert_eq!(
            csv(&batch(s, n.clone(), t), b','),
            "s,n,\"a,b\"\n\"\",1,plain\n,,\"\"\n\"x\"\"y\",-3,\n\"p,q\",, sp \n\"l\nm\",5,\"\r\"\n"
        );
        // Without `''`, Arrow's writer's text, with either delimiter.
        let s = vec![Some("e"), None, Some("x\"y"), Some("p,q\t"), Some("l\nm")];
        let t = vec![Some("plain"), Some("é"), None, Some(" sp "), Some("\r")];
        let b = batch(s, n, t);
        for d in [b',', b'\t'] {
            let mut arrow = datafusion::arrow::csv::WriterBuilder::new()
                .with_delimiter(d)
                .build(Vec::new());
            arrow.write(&b).unwrap();
            assert_eq!(csv(&b, d), String::from_utf8(arrow.into_inner()).unwrap());
        }
    }

    /// A one-column NULL is an empty line, as DuckDB writes it (wf's
    /// reader and DuckDB's read it back as NULL); `''` is `""`, also as a
    /// dictionary's value.
    #[test]
    fn one_column_null_is_an_empty_line() {
        let schema = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
        let s = StringArray::from(vec![Some("a"), None, Some(""), Some("b")]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(s)]).unwrap();
        assert_eq!(csv(&b, b','), "s\na\n\n\"\"\nb\n");
        let d: DictionaryArray<Int32Type> = vec![Some("a"), None, Some("")].into_iter().collect();
        let t = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let schema = Schema::new(vec![Field::new("d", t, true)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(d)]).unwrap();
        assert_eq!(csv(&b, b','), "d\na\n\n\"\"\n");
    }
}
