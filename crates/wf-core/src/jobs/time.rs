//! A record's time, to microseconds since the epoch (UTC, the zone offset
//! applied), for `--since`/`--until` ([`super::window`], `scan::seek`).
//!
//! The one record-time parser: `wf sql`'s columns use it too (through
//! `wf_formats::time`, which only adds a stricter ISO shape for inferring
//! column types). Why here: wf-core sits below wf-formats and must not depend on it,
//! and the `wf` binary built without the `sql` feature has no wf-formats at all
//! (no Arrow), yet `wf count --since` must work there. The shapes are fixed and
//! few, so a hand-written parser is short and costs a few ns per record: a
//! general date parser would cost several times more on every record of the
//! window's edges and of every file read whole.

use super::time_keys::{field_text, logfmt_time};

/// How to find the time in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// Apache/nginx `%t`: the first `[dd/Mon/yyyy:HH:MM:SS +zzzz]` of the
    /// line, among its first four `[...]` (combined, common, vcombined).
    Clf,
    /// JSON lines: the ISO 8601 string, or number since the epoch from
    /// 10^8 s ([`epoch_prefix`]), of the first top-level key named `time`,
    /// `timestamp`, `@timestamp` or `ts` that holds one.
    Json,
    /// An ISO 8601 time at the start of the line (`2026-11-27T10:00:00Z ...`).
    Iso,
    /// logfmt: the ISO 8601 value (or number since the epoch from 10^8 s) of
    /// the first key `time`, `ts`, `timestamp`, `@timestamp` or `t` that
    /// holds one (`time=2026-11-27T10:00:00Z`).
    Logfmt,
    /// CSV or TSV: the ISO 8601 value of column `index` (from 0), fields
    /// separated by `sep`, a quoted field read without its quotes.
    Field { index: u16, sep: u8 },
    /// Each record by its shape: `{` is JSON, else a leading ISO 8601 time,
    /// else a `[...]` time ([`TimeFormat::Clf`]), else a logfmt time key.
    Auto,
    /// The format's own reader of its time field: an Apache `LogFormat` or
    /// nginx `log_format` whose `%t` need not be the first `[...]` (or is
    /// `$time_iso8601`), a JSON key mapping. Slower than the fixed shapes
    /// (a record is parsed up to its time), exact where they may not be.
    Reader(Reader),
}

/// A record's time in UTC microseconds, as a format's parser reads it.
pub type TimeFn = dyn Fn(&[u8]) -> Option<i64> + Send + Sync;

/// A format's time reader and the format's name (for messages and
/// `--state` settings).
///
/// Why `'static`: [`TimeFormat`] is `Copy` and goes by value through the
/// scan's window, `--state` and `--follow`; a reader is made once per run of
/// a command and lives to its end, so it is leaked ([`Reader::new`]) rather
/// than counted.
#[derive(Clone, Copy)]
pub struct Reader {
    pub name: &'static str,
    pub time: &'static TimeFn,
}

impl Reader {
    /// A reader for the rest of the process (see [`Reader`]).
    pub fn new(name: String, time: Box<TimeFn>) -> Reader {
        Reader {
            name: Box::leak(name.into_boxed_str()),
            time: Box::leak(time),
        }
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reader({})", self.name)
    }
}

impl PartialEq for Reader {
    fn eq(&self, o: &Reader) -> bool {
        self.name == o.name && std::ptr::addr_eq(self.time, o.time)
    }
}

impl Eq for Reader {}

impl TimeFormat {
    /// The time of `rec` (one record, with or without its separator).
    pub fn time(self, rec: &[u8]) -> Option<i64> {
        match self {
            TimeFormat::Clf => clf_field(rec),
            TimeFormat::Json => json_time(rec),
            TimeFormat::Iso => iso_prefix(rec).map(|(t, _)| t),
            TimeFormat::Logfmt => logfmt_time(rec, iso_or_epoch),
            TimeFormat::Field { index, sep } => parse_iso(field_text(rec, index, sep)?),
            TimeFormat::Auto => {
                let rec = strip_bom(rec);
                match rec.first()? {
                    b'{' => json_time(rec),
                    _ => iso_prefix(rec)
                        .map(|(t, _)| t)
                        .or_else(|| clf_field(rec))
                        .or_else(|| logfmt_time(rec, iso_or_epoch)),
                }
            }
            TimeFormat::Reader(r) => (r.time)(rec),
        }
    }
}

/// Days from 1970-01-01 to the civil date (proleptic Gregorian), after Howard
/// Hinnant's `days_from_civil`.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Whether day `d` of month `m` (1..=12) is in year `y`'s calendar: a
/// `31/Feb/2007` or `2023-02-29` is no time (days_from_civil would make it
/// 3 March, or 1 March, and the line would count on a day it does not say).
fn real_date(y: i64, m: u32, d: u32) -> bool {
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&d)
}

fn num(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |n, &d| n * 10 + (d - b'0') as u32))
}

fn month(b: &[u8]) -> Option<u32> {
    const NAMES: [&[u8; 3]; 12] = [
        b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov",
        b"dec",
    ];
    let m = [b[0] | 0x20, b[1] | 0x20, b[2] | 0x20];
    NAMES.iter().position(|n| **n == m).map(|i| i as u32 + 1)
}

fn micros(days: i64, (h, mi, s): (u32, u32, u32), frac_us: i64, offset_s: i64) -> Option<i64> {
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // A leap second (`23:59:60`) is the second before it: its day and hour
    // are those written (read as the next minute, it counted on the next
    // day, as GoAccess does not).
    let s = s.min(59);
    let secs = days * 86400 + (h * 3600 + mi * 60 + s) as i64 - offset_s;
    Some(secs * 1_000_000 + frac_us)
}

/// A zone at the start of `b`: `Z`, `+hh:mm`, `+hhmm` or `+hh`, as seconds
/// east of UTC and the bytes it took.
fn zone_prefix(b: &[u8]) -> Option<(i64, usize)> {
    match b {
        [b'Z' | b'z', ..] => Some((0, 1)),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let two = |x: &[u8]| num(x.get(..2)?).map(|n| n as i64);
            let h = two(rest)?;
            let (m, n) = match rest.get(2..) {
                Some([b':', m @ ..]) => (two(m)?, 6),
                Some(m) if m.len() >= 2 && m[..2].iter().all(u8::is_ascii_digit) => (two(m)?, 5),
                _ => (0, 3),
            };
            if h > 23 || m > 59 {
                return None;
            }
            let s = (h * 60 + m) * 60;
            Some((if *sign == b'-' { -s } else { s }, n))
        }
        _ => None,
    }
}

/// `10/Oct/2000:13:55:36 -0700` (the `%t` of Apache and nginx, brackets removed).
pub fn parse_clf(b: &[u8]) -> Option<i64> {
    if b.len() != 26 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return None;
    }
    let d = num(&b[0..2])?;
    let m = month(&b[3..6])?;
    let y = num(&b[7..11])? as i64;
    let (h, mi, s) = (num(&b[12..14])?, num(&b[15..17])?, num(&b[18..20])?);
    if b[14] != b':' || b[17] != b':' || !real_date(y, m, d) {
        return None;
    }
    let (off, n) = zone_prefix(&b[21..])?;
    if n != 5 {
        return None;
    }
    micros(days_from_civil(y, m, d), (h, mi, s), 0, off)
}

/// The time in the first `[...]` of a record that holds one (of its first
/// 4): a bracket before `%t` (nginx's `$host` of `[::1]:443`, a user
/// `[bob]`) had such lines left out of every `--since` window, exit 0,
/// where `wf report` read their time.
fn clf_field(rec: &[u8]) -> Option<i64> {
    memchr::memchr_iter(b'[', rec).take(4).find_map(|open| {
        let field = rec.get(open + 1..open + 27)?;
        if rec.get(open + 27) != Some(&b']') {
            return None;
        }
        parse_clf(field)
    })
}

/// An ISO 8601 / RFC 3339 time at the start of `b` and the bytes it took:
/// `2026-11-27`, `2026-11-27T10:00`, `2026-11-27 10:00:00.250+01:00`, ...; a
/// space may stand for the `T`; no zone is UTC.
pub fn iso_prefix(b: &[u8]) -> Option<(i64, usize)> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(&b[0..4])? as i64, num(&b[5..7])?, num(&b[8..10])?);
    if !(1..=12).contains(&m) || !real_date(y, m, d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    let timed = b.len() >= 16 && matches!(b[10], b'T' | b't' | b' ') && b[13] == b':';
    let (h, mi) = match timed {
        true => (num(&b[11..13]), num(&b[14..16])),
        false => (None, None),
    };
    let (Some(h), Some(mi)) = (h, mi) else {
        return Some((days * 86_400_000_000, 10));
    };
    let mut at = 16;
    let mut s = 0;
    if b.get(16) == Some(&b':') {
        s = num(b.get(17..19)?)?;
        at = 19;
    }
    let mut frac_us = 0i64;
    if at == 19 && matches!(b.get(19), Some(b'.' | b',')) {
        let n = b[20..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let digits = &b[20..20 + n.min(6)];
        frac_us = num(digits)? as i64 * 10i64.pow(6 - digits.len() as u32);
        at = 20 + n;
    }
    let (off, n) = zone_prefix(&b[at..]).unwrap_or((0, 0));
    Some((micros(days, (h, mi, s), frac_us, off)?, at + n))
}

/// A whole string as an ISO 8601 time (nothing after it).
pub fn parse_iso(b: &[u8]) -> Option<i64> {
    match iso_prefix(b)? {
        (t, n) if n == b.len() => Some(t),
        _ => None,
    }
}

/// The time of a JSON record: the value of its first top-level key named
/// `time`, `timestamp`, `@timestamp` or `ts` that is an ISO 8601 text or a
/// number since the epoch of 10^8 s or more (1973 on: a smaller number is
/// a duration, `"time":0.5`). A search of the text for each name in turn
/// found keys of nested objects (`{"data":{"time":...}}`) and values
/// (`"unit":"time"`), and read a duration as 1970: `--since` left out a
/// third of a log, exit 0. The keys are walked in the record's order and
/// the walk stops at the first time (Caddy's `ts` is its second key).
fn json_time(rec: &[u8]) -> Option<i64> {
    const KEYS: [&[u8]; 4] = [b"time", b"timestamp", b"@timestamp", b"ts"];
    TopLevel::of(rec)
        .filter(|(key, _)| KEYS.contains(key))
        .find_map(|(_, value)| json_time_value(value))
}

/// A JSON value as a time: an ISO 8601 string, or a number since the
/// epoch ([`epoch_prefix`]) of at least 10^8 seconds.
fn json_time_value(v: &[u8]) -> Option<i64> {
    match v.strip_prefix(b"\"") {
        Some(rest) => {
            let (t, n) = iso_prefix(rest)?;
            (rest.get(n) == Some(&b'"')).then_some(t)
        }
        None => {
            let (t, n) = epoch_prefix(v)?;
            (n == v.len() && t.abs() >= 100_000_000 * 1_000_000).then_some(t)
        }
    }
}

/// The top-level `key: value` pairs of a JSON object, in order: the key's
/// text between its quotes (escapes kept) and the value's bytes. Stops at
/// anything that is not a well-formed object's next pair.
struct TopLevel<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> TopLevel<'a> {
    fn of(rec: &'a [u8]) -> Self {
        let b = skip_ws(strip_bom(rec));
        match b.first() {
            Some(b'{') => TopLevel { b, at: 1 },
            _ => TopLevel { b, at: b.len() },
        }
    }

    fn ws(&mut self) {
        while self.b.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// The end of the string whose opening quote is at `from` (after its
    /// closing quote).
    fn string_end(&self, from: usize) -> Option<usize> {
        let mut i = from + 1;
        loop {
            i += memchr::memchr2(b'"', b'\\', self.b.get(i..)?)?;
            match self.b[i] {
                b'"' => return Some(i + 1),
                _ => i += 2,
            }
        }
    }

    /// The end of the value that starts at `from`.
    fn value_end(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = from;
        loop {
            match *self.b.get(i)? {
                b'"' => {
                    i = self.string_end(i)?;
                    if depth == 0 {
                        return Some(i);
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                b',' | b'}' | b']' if depth == 0 => return Some(i),
                c if depth == 0 && c.is_ascii_whitespace() => return Some(i),
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'a> Iterator for TopLevel<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        self.ws();
        if self.b.get(self.at) == Some(&b',') {
            self.at += 1;
            self.ws();
        }
        if self.b.get(self.at) != Some(&b'"') {
            self.at = self.b.len();
            return None;
        }
        let key_end = self.string_end(self.at)?;
        let key = &self.b[self.at + 1..key_end - 1];
        self.at = key_end;
        self.ws();
        if self.b.get(self.at) != Some(&b':') {
            self.at = self.b.len();
            return None;
        }
        self.at += 1;
        self.ws();
        let start = self.at;
        let end = self.value_end(start)?;
        self.at = end;
        Some((key, &self.b[start..end]))
    }
}

/// An ISO 8601 time, or a number since the epoch ([`epoch_prefix`]) of
/// 10^8 s or more (as in JSON: a smaller one is a duration), whole.
fn iso_or_epoch(v: &[u8]) -> Option<i64> {
    parse_iso(v).or_else(|| {
        epoch_prefix(v)
            .filter(|&(t, n)| n == v.len() && t.abs() >= 100_000_000 * 1_000_000)
            .map(|(t, _)| t)
    })
}

/// A number at the start of `v` as a time since the epoch, in microseconds,
/// and its length: seconds, milliseconds, microseconds or nanoseconds, told
/// apart by size (under 10^11 seconds is before the year 5138), as zap's
/// `"ts":1767225600.5` (Caddy's) and pino's `"time":1767225600500` are
/// written. A record of these was no time at all: `wf count --since` on a
/// Caddy log counted 0 of its 20,000 records, exit 0. An exponent (`1e9`)
/// is no time.
fn epoch_prefix(v: &[u8]) -> Option<(i64, usize)> {
    let neg = v.first() == Some(&b'-');
    let digits = |b: &[u8]| b.iter().take_while(|c| c.is_ascii_digit()).count();
    let start = neg as usize;
    let n_int = digits(&v[start..]);
    if n_int == 0 || n_int > 19 {
        return None;
    }
    let int: i64 = std::str::from_utf8(&v[start..start + n_int])
        .ok()?
        .parse()
        .ok()?;
    let mut end = start + n_int;
    let mut frac: &[u8] = b"";
    if v.get(end) == Some(&b'.') {
        let n = digits(&v[end + 1..]);
        frac = &v[end + 1..end + 1 + n];
        end += 1 + n;
    }
    if matches!(v.get(end), Some(b'e' | b'E')) {
        return None;
    }
    // Digits of a microsecond in the unit: 6 for seconds, 3, 0, and -3 for
    // nanoseconds (whose last three are dropped).
    let places: i32 = match int {
        i if i < 100_000_000_000 => 6,
        i if i < 100_000_000_000_000 => 3,
        i if i < 100_000_000_000_000_000 => 0,
        _ => -3,
    };
    let us = if places >= 0 {
        let p = places as usize;
        let f: i64 = frac
            .iter()
            .take(p)
            .fold(0, |a, &c| a * 10 + (c - b'0') as i64);
        int * 10i64.pow(places as u32) + f * 10i64.pow((p - frac.len().min(p)) as u32)
    } else {
        int / 1000
    };
    Some((if neg { -us } else { us }, end))
}

fn strip_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(b"\xef\xbb\xbf").unwrap_or(b)
}

fn skip_ws(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 971_211_336_000_000; // 2000-10-10 20:55:36 UTC

    #[test]
    fn clf_records() {
        let line = b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2\n";
        assert_eq!(TimeFormat::Clf.time(line), Some(T));
        assert_eq!(TimeFormat::Auto.time(line), Some(T));
        assert_eq!(parse_clf(b"01/Jan/1970:00:00:00 +0000"), Some(0));
        assert_eq!(TimeFormat::Clf.time(b"x [10/Oct/2000:13:55:36 -0700"), None);
        assert_eq!(
            TimeFormat::Clf.time(b"x [10/Foo/2000:13:55:36 -0700]"),
            None
        );
        assert_eq!(TimeFormat::Clf.time(b"no time here\n"), None);
    }

    /// Numbers since the epoch under a JSON or logfmt time key, in the unit
    /// their size says (zap's seconds, pino's milliseconds, ...).
    #[test]
    fn epoch_numbers_by_their_size() {
        let s = 1_767_225_600; // 2026-01-01T00:00:00Z
        let us = s * 1_000_000;
        let half = us + 500_000;
        for (v, want) in [
            ("1767225600", us),
            ("1767225600.5", half),
            ("1767225600.123456789", us + 123_456),
            ("1767225600500", half),
            ("1767225600500000", half),
            ("1767225600500000123", half),
            ("-1.5", -1_500_000),
            ("0", 0),
        ] {
            assert_eq!(epoch_prefix(v.as_bytes()), Some((want, v.len())), "{v}");
        }
        assert_eq!(
            json_time(br#"{"level":"info","ts":1767225600.5,"msg":"x"}"#),
            Some(half)
        );
        assert_eq!(json_time(br#"{"time": 1767225600500}"#), Some(half));
        assert_eq!(json_time(br#"{"ts":1e9}"#), None);
        let clf = |l: &str| TimeFormat::Clf.time(l.as_bytes());
        let t = clf("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1");
        assert!(t.is_some());
        assert_eq!(
            clf("[::1]:443 1.2.3.4 - [bob] [10/Oct/2000:13:55:36 -0700] \"GET /\""),
            t
        );
        assert_eq!(clf("a [b] [c] [d] [e] [10/Oct/2000:13:55:36 -0700]"), None);
        // Top-level keys only, a duration is no time, a later key in the
        // order may be the one with a time, a BOM starts a record.
        let at =
            br#"{"@timestamp":"2026-01-01T00:00:00.5Z","data":{"time":"2001-01-01T00:00:00Z"}}"#;
        assert_eq!(json_time(at), Some(half));
        assert_eq!(json_time(br#"{"time":0.5,"ts":1767225600.5}"#), Some(half));
        assert_eq!(
            json_time(br#"{"unit":"time","time":"2026-01-01T00:00:00.5Z"}"#),
            Some(half)
        );
        assert_eq!(
            json_time(b"\xef\xbb\xbf{\"ts\": 1767225600.5 }"),
            Some(half)
        );
        assert_eq!(
            TimeFormat::Auto.time(b"\xef\xbb\xbf{\"ts\":1767225600.5}"),
            Some(half)
        );
        assert_eq!(
            json_time(br#"{"a":"x\"time\":1","b":[1,{"ts":2}],"ts":1767225600.5}"#),
            Some(half)
        );
        assert_eq!(json_time(br#"{"data":{"ts":1767225600.5}}"#), None);
        assert_eq!(json_time(br#"{"ts":17672x}"#), None);
        assert_eq!(
            TimeFormat::Logfmt.time(b"ts=1767225600.5 msg=x"),
            Some(half)
        );
        assert_eq!(TimeFormat::Auto.time(br#"{"ts":1767225600.5}"#), Some(half));
        assert_eq!(TimeFormat::Logfmt.time(b"ts=1767225600x msg=x"), None);
    }

    /// A day its month does not have is no time (it was the next month's).
    #[test]
    fn dates_that_are_not_in_the_calendar_are_no_time() {
        assert_eq!(parse_clf(b"31/Feb/2007:00:00:00 -0700"), None);
        assert_eq!(parse_clf(b"29/Feb/2023:00:00:00 +0000"), None);
        assert_eq!(parse_clf(b"31/Apr/2023:00:00:00 +0000"), None);
        assert!(parse_clf(b"29/Feb/2024:00:00:00 +0000").is_some());
        assert!(parse_clf(b"29/Feb/2000:00:00:00 +0000").is_some());
        assert_eq!(parse_clf(b"29/Feb/1900:00:00:00 +0000"), None);
        assert!(parse_clf(b"31/Dec/2023:23:59:59 +0000").is_some());
        // A leap second is the second before it, on the day written.
        let leap = parse_clf(b"31/Dec/2016:23:59:60 +0000");
        assert_eq!(leap, parse_clf(b"31/Dec/2016:23:59:59 +0000"));
        assert_eq!(parse_iso(b"2016-12-31T23:59:60Z"), leap);
        assert_eq!(parse_clf(b"31/Dec/2016:23:59:61 +0000"), None);
        assert_eq!(parse_iso(b"2023-02-29T00:00:00Z"), None);
        assert_eq!(parse_iso(b"2023-06-31"), None);
        assert!(parse_iso(b"2024-02-29T00:00:00Z").is_some());
    }

    #[test]
    fn iso_shapes() {
        assert_eq!(parse_iso(b"2000-10-10T20:55:36Z"), Some(T));
        assert_eq!(parse_iso(b"2000-10-10T13:55:36-07:00"), Some(T));
        assert_eq!(parse_iso(b"2000-10-10T13:55:36-0700"), Some(T));
        assert_eq!(parse_iso(b"2000-10-10T13:55:36-07"), Some(T));
        assert_eq!(parse_iso(b"2000-10-10 20:55:36.25"), Some(T + 250_000));
        assert_eq!(parse_iso(b"2000-10-10T20:55"), Some(T - 36_000_000));
        assert_eq!(parse_iso(b"2000-10-10T21:55+01:00"), Some(T - 36_000_000));
        assert_eq!(parse_iso(b"1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_iso(b"1969-12-31T23:59:59Z"), Some(-1_000_000));
        assert_eq!(parse_iso(b"2000-13-10T20:55:36Z"), None);
        assert_eq!(parse_iso(b"2000-10-10T20:55:36Zjunk"), None);
        assert_eq!(parse_iso(b"2000-10-10T20:55:36."), None);
    }

    #[test]
    fn json_and_iso_lines() {
        let j = br#"{"level":"info", "time" : "2000-10-10T20:55:36Z","msg":"x"}"#;
        assert_eq!(TimeFormat::Json.time(j), Some(T));
        assert_eq!(TimeFormat::Auto.time(j), Some(T));
        let ts = br#"{"@timestamp":"2000-10-10T20:55:36.000Z"}"#;
        assert_eq!(TimeFormat::Json.time(ts), Some(T));
        // A number is seconds since the epoch (`epoch_numbers_by_their_size`),
        // from 10^8 s (1973) on: a smaller one is a duration.
        assert_eq!(TimeFormat::Json.time(br#"{"time":971211336}"#), Some(T));
        assert_eq!(TimeFormat::Json.time(br#"{"time":12}"#), None);
        // The same threshold for logfmt: `t=12` is a duration.
        let l = b"t=12 msg=x time=2000-10-10T20:55:36Z";
        assert_eq!(TimeFormat::Logfmt.time(l), Some(T));
        assert_eq!(TimeFormat::Json.time(br#"{"time":true}"#), None);
        let l = b"2000-10-10T20:55:36Z GET /x\n";
        assert_eq!(TimeFormat::Iso.time(l), Some(T));
        assert_eq!(TimeFormat::Auto.time(l), Some(T));
        assert_eq!(TimeFormat::Iso.time(b"hello\n"), None);
    }
}
