//! The `csv` target's reference: the `csv` crate reads the records, wf's
//! documented quote rule (in `wf_formats::csv`) decides only what the crate
//! has no word for.
//!
//! Where the two readers legitimately differ, and how it is normalised:
//! - A quoted field whose closing quote is followed by something other than
//!   the delimiter or the line's end (`"a"b`): the crate reads `ab`, wf calls
//!   the record malformed. If such a field (or a quote that never closes)
//!   spans a line break, wf ends the record with the line of that quote and
//!   starts the next record on the next line, where the crate reads on to
//!   the next quote (or the end of the file). [`walk`] applies wf's rule by
//!   itself, byte by byte; the crate is then asked about the next record.
//! - `\r`: the crate is told that only `\n` ends a record (so a lone `\r` is
//!   data for both); wf removes one `\r` before the `\n` (or the end), which
//!   the crate keeps at the end of the last field: removed from it here.
//! - Blank records (nothing but an optional `\r`) are no records for wf; the
//!   crate skips empty lines and reads a `\r` line as one field: left out.
//! - An unquoted empty field is NULL for wf, a quoted one the empty string:
//!   the crate does not say which, [`walk`] does.
//!
//! Everything else (record ends, field splits, `""` unescaping, quotes inside
//! unquoted fields, line breaks inside quotes, field counts) is the crate's.

/// A field: `None` for NULL.
pub type Row = Vec<Option<Vec<u8>>>;

/// One record as wf must read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its bytes (no separator, no trailing `\r`).
    pub start: usize,
    pub end: usize,
    /// Its fields; `None` when malformed.
    pub row: Option<Row>,
}

/// One record walked with wf's quote rule.
#[derive(Debug)]
pub struct Walk {
    /// The `\n` ending it, or the data's length.
    pub end: usize,
    /// Every quoted field closes and is followed by the delimiter or the end.
    pub ok: bool,
    /// Per field, whether it was quoted.
    pub quoted: Vec<bool>,
}

fn line_end(data: &[u8], from: usize) -> usize {
    data[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| from + i)
}

/// The record starting at `start`, by the rule `wf_formats::csv::Quoting`
/// documents: a quote opens a field only at its start; `""` inside is a
/// quote; a quoted field that never closes, or that spans a line break and
/// is followed by anything but the delimiter, `\n`, `\r` or the end, makes
/// the record end with the line of its opening quote (malformed). A field
/// that does not span lines and is followed by other bytes makes the record
/// malformed but ends nothing.
pub fn walk(data: &[u8], start: usize, delim: u8) -> Walk {
    let mut quoted = Vec::new();
    let mut ok = true;
    let mut i = start;
    loop {
        // `i` starts a field.
        if data.get(i) == Some(&b'"') {
            quoted.push(true);
            let mut j = i + 1;
            let close = loop {
                match data.get(j) {
                    None => break None,
                    Some(b'"') if data.get(j + 1) == Some(&b'"') => j += 2,
                    Some(b'"') => break Some(j),
                    Some(_) => j += 1,
                }
            };
            let Some(c) = close else {
                let end = line_end(data, i);
                return Walk {
                    end,
                    ok: false,
                    quoted,
                };
            };
            let spans = data[i..c].contains(&b'\n');
            match data.get(c + 1) {
                Some(&d) if d == delim => {
                    i = c + 2;
                    continue;
                }
                None | Some(b'\n') => {
                    return Walk {
                        end: c + 1,
                        ok,
                        quoted,
                    }
                }
                Some(b'\r') if matches!(data.get(c + 2), None | Some(b'\n')) => {
                    return Walk {
                        end: c + 2,
                        ok,
                        quoted,
                    }
                }
                Some(b'\r') => {
                    ok = false;
                    i = c + 1;
                }
                Some(_) if spans => {
                    let end = line_end(data, i);
                    return Walk {
                        end,
                        ok: false,
                        quoted,
                    };
                }
                Some(_) => {
                    ok = false;
                    i = c + 1;
                }
            }
        } else {
            quoted.push(false);
        }
        // The unquoted (rest of the) field: to the delimiter or the line's end.
        loop {
            match data.get(i) {
                None => {
                    return Walk {
                        end: data.len(),
                        ok,
                        quoted,
                    }
                }
                Some(b'\n') => return Walk { end: i, ok, quoted },
                Some(&d) if d == delim => {
                    i += 1;
                    break;
                }
                Some(_) => i += 1,
            }
        }
    }
}

/// The records of `data` (after `skip` records: a header) as wf must read
/// them with `ncols` columns; and whether any record, the skipped ones and
/// malformed ones too, spans a line break.
pub fn records(data: &[u8], delim: u8, skip: usize, ncols: usize) -> (Vec<Record>, bool) {
    let mut out = Vec::new();
    let mut multiline = false;
    let (mut pos, mut k) = (0, 0);
    while pos < data.len() {
        let w = walk(data, pos, delim);
        multiline |= data[pos..w.end].contains(&b'\n');
        let cr = w.end > pos && data[w.end - 1] == b'\r';
        let end = w.end - cr as usize;
        let next = w.end + 1;
        k += 1;
        if k <= skip || end == pos {
            pos = next;
            continue;
        }
        let row = w.ok.then(|| crate_row(data, pos, delim, &w, cr)).flatten();
        let row = row.filter(|r| r.len() == ncols);
        out.push(Record {
            start: pos,
            end,
            row,
        });
        pos = next;
    }
    (out, multiline)
}

/// The records of a file read without quoting (wf's reading of a sample
/// whose `"` is data, `csv::sniff_quote`): a line each (blank ones and the
/// first `skip` left out), split at every delimiter, an empty field NULL;
/// malformed when it has not `ncols` fields.
pub fn plain_records(data: &[u8], delim: u8, skip: usize, ncols: usize) -> Vec<Record> {
    let mut out = Vec::new();
    for (start, end) in crate::drive::line_records(data, b'\n', skip) {
        let row: Row = data[start..end]
            .split(|&c| c == delim)
            .map(|f| (!f.is_empty()).then(|| f.to_vec()))
            .collect();
        let row = (row.len() == ncols).then_some(row);
        out.push(Record { start, end, row });
    }
    out
}

/// The record at `pos` as the `csv` crate reads it, normalised as the module
/// says; checks that the crate ends it where [`walk`] did.
fn crate_row(data: &[u8], pos: usize, delim: u8, w: &Walk, cr: bool) -> Option<Row> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delim)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(&data[pos..]);
    let mut rec = csv::ByteRecord::new();
    assert!(rdr.read_byte_record(&mut rec).expect("reading a slice"));
    assert_eq!(
        rec.position().map(|p| p.byte()),
        Some(0),
        "csv skipped bytes"
    );
    let after = pos + rdr.position().byte() as usize;
    assert_eq!(
        after,
        data.len().min(w.end + 1),
        "csv ends the record elsewhere"
    );
    let mut fields: Vec<Vec<u8>> = rec.iter().map(<[u8]>::to_vec).collect();
    if cr {
        let last = fields.last_mut().expect("a field");
        assert_eq!(last.pop(), Some(b'\r'), "the record's \\r");
    }
    assert_eq!(fields.len(), w.quoted.len(), "fields: csv against the walk");
    Some(
        fields
            .into_iter()
            .zip(&w.quoted)
            .map(|(f, &q)| (q || !f.is_empty()).then_some(f))
            .collect(),
    )
}

/// A float as wf's CSV reads it: Rust's parser on the text, refusing every
/// letter but the exponent's (no `inf`, `nan`).
pub fn csv_float(v: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(v).ok()?;
    if s.bytes()
        .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
    {
        return None;
    }
    s.parse().ok()
}
