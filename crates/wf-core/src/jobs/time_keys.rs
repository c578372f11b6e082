//! A record's time where a key or a column names it: logfmt's `time=...`
//! (`--format logfmt`) and one column of a CSV or TSV line (`--format csv
//! --time-column ts`), for `--since`/`--until` of `count` and `feed` (issue
//! 39 asks for both beside the web-log `%t` and JSON lines).
//!
//! Why apart from `time.rs`: these only find a value in a record; `time.rs`
//! hands it to its one ISO 8601 parser (they parse no time themselves, and
//! import nothing from it). Like the JSON lookup they are a few `memchr`s, not a
//! record parser: a probe of `scan::seek` and every record near a window's
//! edges pay for them, and `wf count` has no wf-formats (no Arrow) to lean on.
//!
//! A CSV record here is a line (`count` and `feed` cut records at newlines):
//! a quoted field with a line break in it makes two lines, and the second has
//! no time, so it is in no window (`--stats` counts it as without a time).

/// The keys a logfmt line's time goes by.
const LOGFMT_KEYS: [&[u8]; 5] = [b"time", b"ts", b"timestamp", b"@timestamp", b"t"];

/// The time (`parse` of the value) of the first pair of a logfmt line
/// whose key is a time key and whose value is a time (`key=value` or
/// `key="value"`, quotes removed; a quoted value is data, whatever `key=`
/// it holds). A first time key that holds no time (`t=12ms`) had the line
/// without one, left out of every `--since` window.
pub(crate) fn logfmt_time<T>(rec: &[u8], parse: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    let mut rest = trim_end(rec);
    loop {
        rest = skip_blank(rest);
        if rest.is_empty() {
            return None;
        }
        let k = rest.iter().position(|&c| matches!(c, b'=' | b' ' | b'\t'));
        let (key, after) = rest.split_at(k.unwrap_or(rest.len()));
        let Some(v) = after.strip_prefix(b"=") else {
            rest = after; // a key without a value
            continue;
        };
        let (value, next) = logfmt_value(v)?;
        if let Some(t) = LOGFMT_KEYS.contains(&key).then(|| parse(value)).flatten() {
            return Some(t);
        }
        rest = next;
    }
}

/// A value at the start of `v` and what follows it: quoted (a backslash
/// escapes the next byte) or up to the next blank. `None`: an open quote.
fn logfmt_value(v: &[u8]) -> Option<(&[u8], &[u8])> {
    let Some(q) = v.strip_prefix(b"\"") else {
        let end = memchr::memchr2(b' ', b'\t', v).unwrap_or(v.len());
        return Some(v.split_at(end));
    };
    let mut i = 0;
    loop {
        i += memchr::memchr2(b'"', b'\\', &q[i..])?;
        if q[i] == b'"' {
            return Some((&q[..i], &q[i + 1..]));
        }
        i += 2;
        if i > q.len() {
            return None;
        }
    }
}

fn skip_blank(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    &b[n..]
}

/// Column `index` (from 0) of a CSV/TSV line whose fields are separated by
/// `sep`; a quoted field without its quotes.
pub(crate) fn field_text(rec: &[u8], index: u16, sep: u8) -> Option<&[u8]> {
    field(trim_end(rec), index, sep)
}

/// The index of the column named `name` in a CSV/TSV header line, and the
/// header's names (quotes removed), for a message when it has none.
pub fn column_named(header: &[u8], name: &[u8], sep: u8) -> (Option<usize>, Vec<String>) {
    let header = trim_end(header);
    let mut names = Vec::new();
    let mut rest = header;
    loop {
        let end = field_end(rest, sep);
        let f = &rest[..end.unwrap_or(rest.len())];
        let f = match f {
            [b'"', inner @ .., b'"'] => inner,
            _ => f,
        };
        names.push(String::from_utf8_lossy(f).into_owned());
        match end {
            Some(e) => rest = &rest[e + 1..],
            None => break,
        }
    }
    let at = names.iter().position(|n| n.as_bytes() == name);
    (at, names)
}

/// Field `index` of `rec` (RFC 4180 quotes: a separator inside quotes is
/// data; a doubled quote stays doubled, as no time has one).
fn field(rec: &[u8], index: u16, sep: u8) -> Option<&[u8]> {
    let mut rest = rec;
    for _ in 0..index {
        let end = field_end(rest, sep)?;
        rest = rest.get(end + 1..)?;
    }
    let end = field_end(rest, sep).unwrap_or(rest.len());
    let f = &rest[..end];
    match f {
        [b'"', inner @ .., b'"'] => Some(inner),
        _ => Some(f),
    }
}

/// Where the field at the start of `b` ends: the index of its separator
/// (`None`: it is the last field, or an open quote runs to the end).
fn field_end(b: &[u8], sep: u8) -> Option<usize> {
    if b.first() != Some(&b'"') {
        return memchr::memchr(sep, b);
    }
    let mut i = 1;
    loop {
        i += memchr::memchr(b'"', &b[i..])? + 1;
        if b.get(i) == Some(&b'"') {
            i += 1; // a doubled quote: data
            continue;
        }
        return (b.get(i) == Some(&sep)).then_some(i);
    }
}

fn trim_end(rec: &[u8]) -> &[u8] {
    let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
    rec.strip_suffix(b"\r").unwrap_or(rec)
}

#[cfg(test)]
mod tests {
    use super::super::time::parse_iso;
    use super::*;

    fn logfmt(rec: &[u8]) -> Option<i64> {
        logfmt_time(rec, parse_iso)
    }

    fn column(rec: &[u8], index: u16, sep: u8) -> Option<i64> {
        parse_iso(field_text(rec, index, sep)?)
    }

    const T: i64 = 971_211_336_000_000; // 2000-10-10 20:55:36 UTC

    #[test]
    fn logfmt_lines() {
        let l = b"level=info msg=\"a time=1999 \\\" x\" time=2000-10-10T20:55:36Z\n";
        assert_eq!(logfmt(l), Some(T));
        let q = b"ts=\"2000-10-10 13:55:36-07:00\" level=warn\r\n";
        assert_eq!(logfmt(q), Some(T));
        // `atime=` is not `time=`; a later real key is found.
        let a = b"atime=1999-01-01T00:00:00Z t=2000-10-10T20:55:36Z";
        assert_eq!(logfmt(a), Some(T));
        assert_eq!(logfmt(b"time=yesterday msg=x"), None);
        assert_eq!(logfmt(b"msg=\"no time\""), None);
        assert_eq!(logfmt(b"time=\"2000-10-10T20:55:36Z"), None);
        // A first time key without a time: the next one's.
        assert_eq!(logfmt(b"t=12ms msg=x time=2000-10-10T20:55:36Z"), Some(T));
    }

    #[test]
    fn csv_and_tsv_columns() {
        let c = b"a,\"b,c\",2000-10-10T20:55:36Z,d\n";
        assert_eq!(column(c, 2, b','), Some(T));
        assert_eq!(column(c, 1, b','), None);
        let q = b"\"x \"\"y\"\", z\",\"2000-10-10T20:55:36Z\"\r\n";
        assert_eq!(column(q, 1, b','), Some(T));
        let t = b"2000-10-10T20:55:36Z\tGET /\n";
        assert_eq!(column(t, 0, b'\t'), Some(T));
        assert_eq!(column(t, 2, b'\t'), None);
        assert_eq!(column(b"a,\"2000-10-10T20:55:36Z", 1, b','), None);
        assert_eq!(column(b"", 0, b','), None);
    }

    #[test]
    fn header_names() {
        let h = b"id,\"msg, quoted\",ts\r\n";
        let (at, names) = column_named(h, b"ts", b',');
        assert_eq!((at, names.len()), (Some(2), 3));
        assert_eq!(names[1], "msg, quoted");
        assert_eq!(column_named(h, b"x", b',').0, None);
    }
}
