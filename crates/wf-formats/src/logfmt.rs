//! `logfmt`: `key=value key2="quoted \"value\"" flag` records (Heroku/Go style).
//! Keys seen in the first 1000 records of the first input become columns, in the
//! order first seen (or `--schema` names them); types are inferred from the
//! sampled values like CSV's (int, float, timestamp, bool, text). A bare key is
//! `true`; a missing key is NULL; a value that does not convert stops the
//! query when the types were inferred (`read::problem`), and is NULL (counted)
//! when `--schema` gave them. A record with no `key=value` pair, or with an
//! unclosed quote, is malformed. A key first seen after the sample is not a
//! column: the records that have one are counted, as in `jsonl`.

use std::collections::HashSet;

use super::{csv, Columns, Field, Format, FormatError, FormatOptions, Kind, Parser};

#[derive(Debug, Clone)]
pub struct Logfmt {
    fields: Vec<Field>,
    /// Each column's key as it is in the records: a key that is not valid
    /// UTF-8 has a column name with U+FFFD in it, and its values were lost
    /// when the records' keys were compared with that name.
    keys: Vec<Vec<u8>>,
    inferred: bool,
}

/// A key and its value (unescaped when it was quoted).
pub type Pair<'a> = (&'a [u8], std::borrow::Cow<'a, [u8]>);

/// The pairs of one record; `None` when malformed.
pub fn pairs(r: &[u8]) -> Option<Vec<Pair<'_>>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut any_eq = false;
    while pos < r.len() {
        if r[pos] == b' ' || r[pos] == b'\t' {
            pos += 1;
            continue;
        }
        let key_end = r[pos..]
            .iter()
            .position(|&c| c == b'=' || c == b' ' || c == b'\t')
            .map_or(r.len(), |e| pos + e);
        let key = &r[pos..key_end];
        if r.get(key_end) != Some(&b'=') {
            out.push((key, std::borrow::Cow::Borrowed(&b"true"[..])));
            pos = key_end;
            continue;
        }
        any_eq = true;
        let (value, next) = logfmt_value(r, key_end + 1)?;
        out.push((key, value));
        pos = next;
    }
    any_eq.then_some(out)
}

fn logfmt_value(r: &[u8], start: usize) -> Option<(std::borrow::Cow<'_, [u8]>, usize)> {
    if r.get(start) != Some(&b'"') {
        let end = r[start..]
            .iter()
            .position(|&c| c == b' ' || c == b'\t')
            .map_or(r.len(), |e| start + e);
        return Some((std::borrow::Cow::Borrowed(&r[start..end]), end));
    }
    let mut v = Vec::new();
    let mut i = start + 1;
    loop {
        match *r.get(i)? {
            b'"' => return Some((std::borrow::Cow::Owned(v), i + 1)),
            b'\\' => {
                let c = *r.get(i + 1)?;
                v.push(match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    other => other,
                });
                i += 2;
            }
            c => {
                v.push(c);
                i += 1;
            }
        }
    }
}

impl Logfmt {
    pub fn new(opts: &FormatOptions, sample: &[u8]) -> Result<Self, FormatError> {
        if let Some(s) = &opts.schema {
            return Ok(Logfmt {
                fields: s.clone(),
                keys: s.iter().map(|f| f.name.as_bytes().to_vec()).collect(),
                inferred: false,
            });
        }
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut values: Vec<Vec<Vec<u8>>> = Vec::new();
        for line in super::sample_lines(sample, 1000) {
            for (k, v) in pairs(line).unwrap_or_default() {
                let i = names.iter().position(|n| n == k).unwrap_or_else(|| {
                    names.push(k.to_vec());
                    values.push(Vec::new());
                    names.len() - 1
                });
                values[i].push(v.into_owned());
            }
        }
        if names.is_empty() {
            return Err(FormatError::NoLogfmtPair);
        }
        let fields = names
            .iter()
            .zip(&values)
            .map(|(n, vs)| {
                let kind = csv::infer_kind(vs.iter().map(Vec::as_slice));
                Field::new(String::from_utf8_lossy(n), kind)
            })
            .collect();
        Ok(Logfmt {
            fields,
            keys: names,
            inferred: true,
        })
    }
}

impl Format for Logfmt {
    fn name(&self) -> String {
        "logfmt".into()
    }

    fn fields(&self) -> &[Field] {
        &self.fields
    }

    fn parser(&self, projection: &[usize]) -> Box<dyn Parser> {
        let keys: Vec<Vec<u8>> = projection.iter().map(|&c| self.keys[c].clone()).collect();
        Box::new(LogfmtParser {
            bad_keys: keys
                .iter()
                .map(|k| std::str::from_utf8(k).is_err())
                .collect(),
            keys,
            known: self.inferred.then(|| self.keys.iter().cloned().collect()),
        })
    }

    fn types_inferred(&self) -> bool {
        self.inferred
    }

    fn notes(&self) -> Vec<String> {
        (self.keys.iter().zip(&self.fields))
            .filter(|(k, _)| std::str::from_utf8(k).is_err())
            .map(|(_, f)| {
                format!(
                    "key {:?} is not valid UTF-8 (its column's name has U+FFFD)",
                    f.name
                )
            })
            .collect()
    }
}

struct LogfmtParser {
    keys: Vec<Vec<u8>>,
    /// The key is not valid UTF-8: each of its values is counted as invalid
    /// UTF-8 (its column's name was replaced), so `--strict` stops at it.
    bad_keys: Vec<bool>,
    /// Every column's key, when the columns are a sample's keys: a record
    /// with another key is counted ([`Columns::unknown`]).
    known: Option<HashSet<Vec<u8>>>,
}

impl Parser for LogfmtParser {
    fn parse(&mut self, record: &[u8], out: &mut Columns) -> bool {
        let Some(pairs) = pairs(record) else {
            return false;
        };
        for (o, key) in self.keys.iter().enumerate() {
            // The last occurrence of a repeated key wins.
            match pairs.iter().rev().find(|(k, _)| *k == key.as_slice()) {
                Some((_, v)) if !(v.is_empty() && out.kind(o) != Kind::Str) => {
                    out.invalid_utf8 += self.bad_keys[o] as u64;
                    out.text_as_kind(o, v)
                }
                _ => out.null(o),
            }
        }
        if let Some(known) = &self.known {
            if pairs.iter().any(|(k, _)| !known.contains(*k)) {
                let others = pairs.iter().filter(|(k, _)| !known.contains(*k));
                out.unknown.add(others.map(|(k, _)| *k));
            }
        }
        out.end_row();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As in JSON lines: a record with keys the sample did not have is
    /// counted, its keys named.
    #[test]
    fn keys_after_the_sample_are_counted() {
        let f = Logfmt::new(&FormatOptions::default(), b"level=info msg=a\n").unwrap();
        let mut cols = Columns::new(&[Kind::Str]);
        let mut p = f.parser(&[1]);
        for r in ["level=info msg=b", "level=error msg=c err=\"disk full\""] {
            assert!(p.parse(r.as_bytes(), &mut cols));
        }
        assert_eq!(
            (cols.unknown.records, &cols.unknown.names[..]),
            (1, &["err".to_string()][..])
        );
    }

    #[test]
    fn pairs_quotes_and_flags() {
        let p = pairs(br#"level=info msg="hello \"x\" world" dur=1.5 ok"#).unwrap();
        let got: Vec<(String, String)> = p
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into(),
                    String::from_utf8_lossy(v).into(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("level".into(), "info".into()),
                ("msg".into(), "hello \"x\" world".into()),
                ("dur".into(), "1.5".into()),
                ("ok".into(), "true".into())
            ]
        );
        assert!(pairs(b"just words here").is_none());
        assert!(pairs(br#"a="unclosed"#).is_none());
    }
}
