//! The `logfmt` target's reference: a byte-at-a-time splitter written from
//! `wf_formats::logfmt`'s documented rule.
//!
//! Pairs are separated by runs of spaces and tabs. A key runs to `=`, a space
//! or a tab; without `=` it is a flag whose value is `true`. A value runs to a
//! space or tab, or is quoted: `\n` and `\t` inside are a line feed and a tab,
//! a backslash before any other byte is that byte, and the closing quote ends
//! it (what follows starts the next key). A record with no `key=value` pair,
//! or with a quoted value that never closes, is malformed. A key repeated in
//! a record: the last value wins.

/// A record's pairs, or `None` when malformed.
pub fn pairs(r: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let blank = |c: u8| c == b' ' || c == b'\t';
    let mut out = Vec::new();
    let mut any = false;
    let mut i = 0;
    while i < r.len() {
        if blank(r[i]) {
            i += 1;
            continue;
        }
        let mut key = Vec::new();
        while i < r.len() && r[i] != b'=' && !blank(r[i]) {
            key.push(r[i]);
            i += 1;
        }
        if i == r.len() || r[i] != b'=' {
            out.push((key, b"true".to_vec()));
            continue;
        }
        i += 1;
        any = true;
        let mut value = Vec::new();
        if r.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match *r.get(i)? {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\\' => {
                        value.push(match *r.get(i + 1)? {
                            b'n' => b'\n',
                            b't' => b'\t',
                            c => c,
                        });
                        i += 2;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < r.len() && !blank(r[i]) {
                value.push(r[i]);
                i += 1;
            }
        }
        out.push((key, value));
    }
    any.then_some(out)
}

/// The value of `key` in a record's pairs (the last one).
pub fn get<'a>(pairs: &'a [(Vec<u8>, Vec<u8>)], key: &[u8]) -> Option<&'a [u8]> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| &v[..])
}

/// The lines of the sample a format infers its columns from: the first
/// `n` non-blank lines (a trailing `\r` removed), the piece after the last
/// newline left out when there is more than one piece.
pub fn sample_lines(sample: &[u8], n: usize) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = sample.split(|&b| b == b'\n').take(n + 1).collect();
    if lines.len() > 1 {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .take(n)
        .collect()
}
