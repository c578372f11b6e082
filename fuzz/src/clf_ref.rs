//! The `clf` target's reference: web-log formats written out by hand as
//! lists of literals and fields (not compiled from a format string, as wf
//! does), and a plain splitter and converters written from
//! `wf_formats::clf`'s documented rule:
//! - literals match exactly; a field runs to the first occurrence of the
//!   literal after it, or to the record's end when nothing follows it; a
//!   field between quotes (the literal before it ends with `"`, the one after
//!   starts with it) passes a quote with an odd number of backslashes before
//!   it; the last field, when the format ends with a literal, ends where that
//!   literal ends the record (trailing spaces and tabs aside); Apache's `%t`
//!   is `[` to the first `]`; nothing but spaces and tabs may follow;
//! - `-` or empty is NULL in number and time columns; a value that does not
//!   convert is NULL and counted; a request is split at its first and last
//!   space into method, path and protocol (NULL without two spaces);
//! - times are `dd/Mon/yyyy:hh:mm:ss +hhmm` of a day the month has (31/Feb
//!   is no time). Lenient as wf is, and noted here: the zone's hours and
//!   minutes are any two digits.

/// How a field becomes columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conv {
    Str,
    Int,
    Float,
    /// A CLF time without brackets (nginx's `$time_local`).
    Time,
    /// Apache's `%t`: `[` time `]`.
    BracketTime,
    /// The request line: method, path, protocol, request.
    Request,
}

#[derive(Debug, Clone, Copy)]
pub enum It {
    Lit(&'static [u8]),
    F(&'static str, Conv),
}

use Conv::*;
use It::{Lit as L, F};

const TAIL: [It; 15] = [
    F("client", Str),
    L(b" "),
    F("ident", Str),
    L(b" "),
    F("user", Str),
    L(b" "),
    F("time", BracketTime),
    L(b" \""),
    F("", Request),
    L(b"\" "),
    F("status", Int),
    L(b" "),
    F("bytes", Int),
    L(b" \""),
    F("referrer", Str),
];

/// The formats: wf's spec, and its items.
pub fn formats() -> Vec<(&'static str, Vec<It>)> {
    let combined: Vec<It> = TAIL
        .iter()
        .copied()
        .chain([L(b"\" \""), F("user_agent", Str), L(b"\"")])
        .collect();
    let mut vcombined = vec![F("vhost", Str), L(b":"), F("port", Int), L(b" ")];
    vcombined.extend(combined.iter().copied());
    let common = TAIL[..13].to_vec();
    let mut apache = TAIL[..12].to_vec();
    apache.extend([
        F("bytes", Int),
        L(b" "),
        F("duration_us", Int),
        L(b" \""),
        F("referrer", Str),
        L(b"\""),
    ]);
    let nginx = vec![
        F("client", Str),
        L(b" - "),
        F("user", Str),
        L(b" ["),
        F("time", Time),
        L(b"] \""),
        F("", Request),
        L(b"\" "),
        F("status", Int),
        L(b" "),
        F("bytes", Int),
        L(b" "),
        F("request_time", Float),
    ];
    vec![
        ("combined", combined),
        ("common", common),
        ("vcombined", vcombined),
        (
            "apache:'%h %l %u %t \"%r\" %>s %b %D \"%{Referer}i\"'",
            apache,
        ),
        (
            "nginx:'$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent $request_time'",
            nginx,
        ),
    ]
}

/// The columns of a format: names and whether each is text (else: Int,
/// Float, Time as its field's conversion).
pub fn columns(items: &[It]) -> Vec<(String, Conv)> {
    let mut out = Vec::new();
    for it in items {
        match *it {
            It::F(_, Request) => {
                out.extend(["method", "path", "protocol", "request"].map(|n| (n.to_string(), Str)))
            }
            It::F(n, BracketTime) => out.push((n.to_string(), Time)),
            It::F(n, c) => out.push((n.to_string(), c)),
            It::Lit(_) => {}
        }
    }
    out
}

fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// The fields of record `r` (one value per field item), or `None` when it
/// does not fit the format.
pub fn split<'a>(items: &[It], r: &'a [u8]) -> Option<Vec<&'a [u8]>> {
    let mut out = Vec::new();
    let mut pos = 0;
    for (k, it) in items.iter().enumerate() {
        let conv = match *it {
            It::Lit(l) => {
                if !r[pos..].starts_with(l) {
                    return None;
                }
                pos += l.len();
                continue;
            }
            It::F(_, c) => c,
        };
        if conv == BracketTime {
            if r.get(pos) != Some(&b'[') {
                return None;
            }
            let close = pos + 1 + r[pos + 1..].iter().position(|&c| c == b']')?;
            out.push(&r[pos + 1..close]);
            pos = close + 1;
            continue;
        }
        let next = match items.get(k + 1) {
            Some(It::Lit(l)) => *l,
            _ => {
                // The last field: to the end, its trailing blanks not read.
                let mut t = r.len();
                while t > pos && blank(r[t - 1]) {
                    t -= 1;
                }
                out.push(&r[pos..t]);
                pos = r.len();
                continue;
            }
        };
        let end = if k + 2 == items.len() {
            let mut t = r.len();
            while t > 0 && blank(r[t - 1]) {
                t -= 1;
            }
            match t.checked_sub(next.len()).filter(|&e| e >= pos) {
                Some(e) if &r[e..t] == next => e,
                // Fields past the format's last (nginx's `$request_time`
                // after a combined line): the closing literal's first
                // occurrence no odd run of backslashes stands before, which
                // a blank must follow; the rest is not read.
                _ => {
                    let e = (pos..r.len()).find(|&i| {
                        r[i..].starts_with(next)
                            && r[pos..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0
                    })?;
                    r.get(e + next.len()).copied().filter(|&c| blank(c))?;
                    e
                }
            }
        } else {
            let quoted = k > 0
                && matches!(items[k - 1], It::Lit(l) if l.ends_with(b"\""))
                && next[0] == b'"';
            (pos..r.len()).find(|&i| {
                r[i..].starts_with(next)
                    && (!quoted
                        || r[pos..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0)
            })?
        };
        out.push(&r[pos..end]);
        pos = end;
    }
    // Nothing, or anything after a blank (fields past the format's).
    r.get(pos).is_none_or(|&c| blank(c)).then_some(out)
}

/// The method, path and protocol of a request (first and last space).
pub fn request_parts(v: &[u8]) -> Option<[&[u8]; 3]> {
    let a = v.iter().position(|&c| c == b' ')?;
    let b = v.iter().rposition(|&c| c == b' ')?;
    (b > a).then(|| [&v[..a], &v[a + 1..b], &v[b + 1..]])
}

fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Days from 1970-01-01 (proleptic Gregorian).
pub fn days(y: i64, m: usize, d: i64) -> i64 {
    const CUM: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let leaps = |y: i64| y.div_euclid(4) - y.div_euclid(100) + y.div_euclid(400);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    (y - 1970) * 365 + leaps(y - 1) - leaps(1969) + CUM[m - 1] + (m > 2 && leap) as i64 + d - 1
}

/// `10/Oct/2000:13:55:36 -0700` as microseconds since the epoch.
pub fn clf_time(b: &[u8]) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    if b.len() != 26 {
        return None;
    }
    let s = |i: usize, c: u8| b[i] == c;
    if !(s(2, b'/') && s(6, b'/') && s(11, b':') && s(14, b':') && s(17, b':') && s(20, b' ')) {
        return None;
    }
    let d = digits(&b[0..2])?;
    let mon = std::str::from_utf8(&b[3..6]).ok()?.to_ascii_lowercase();
    let m = 1 + MONTHS.iter().position(|x| *x == mon)?;
    let y = digits(&b[7..11])?;
    let (h, mi, sec) = (
        digits(&b[12..14])?,
        digits(&b[15..17])?,
        digits(&b[18..20])?,
    );
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [31, 28 + leap as i64, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
    if !(1..=month_days).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let sign = match b[21] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    // A zone of more than 23:59 is no zone (wf's `zone_prefix`).
    let (zh, zm) = (digits(&b[22..24])?, digits(&b[24..26])?);
    if zh > 23 || zm > 59 {
        return None;
    }
    let zone = sign * (zh * 60 + zm) * 60;
    // A leap second (:60) is the second before it, on its own day.
    let sec = sec.min(59);
    Some((days(y, m, d) * 86400 + h * 3600 + mi * 60 + sec - zone) * 1_000_000)
}
