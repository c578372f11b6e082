//! GoAccess's rules for one request, written out so that the report's numbers
//! agree with GoAccess 1.7's where the two define a panel the same way
//! (`DESIGN.md`; each rule was checked against `goaccess --no-ip-validation`
//! on lines made to test it, see `tests/report.rs` in the `wf` crate).
//!
//! - The request line, trimmed: a known method as a prefix (any case), then the URL up
//!   to the last space, then a known protocol; a line that starts with no known
//!   method is its own URL with method and protocol `---`; a known method
//!   without a known protocol is the URL `-`. The URL is %-decoded once and
//!   trimmed (`Notes%20` is `Notes`).
//! - Static files: the URL (no query string) ends in one of the extensions of
//!   Debian's `goaccess.conf`, in any case.
//! - The referring site: the host after `//` of the referrer, up to `/` or `?`.
//! - The day and hour are those written in the log (its own time zone), not
//!   UTC: the offset is read back from the record's time text.

use std::borrow::Cow;

/// HTTP methods as GoAccess 1.7 knows them (`src/parser.c`, `http_methods`),
/// WebDAV's included; matched as prefixes, in this order. Not `SEARCH`:
/// GoAccess 1.7 keys `SEARCH /s HTTP/1.1` as one unsplit request (checked,
/// each method of this list on one line; later versions may know it).
const METHODS: &[&str] = &[
    "OPTIONS",
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "TRACE",
    "CONNECT",
    "PATCH",
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
    "VERSION-CONTROL",
    "REPORT",
    "CHECKOUT",
    "CHECKIN",
    "UNCHECKOUT",
    "MKWORKSPACE",
    "UPDATE",
    "LABEL",
    "MERGE",
    "BASELINE-CONTROL",
    "MKACTIVITY",
    "ORDERPATCH",
];

const PROTOCOLS: &[&str] = &["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3"];

/// Method and protocol of a request GoAccess could not split.
pub const NO_METHOD: &str = "---";

/// Static file extensions of Debian's `/etc/goaccess/goaccess.conf` (1.7).
const STATIC: &[&str] = &[
    ".css", ".js", ".jpg", ".png", ".gif", ".ico", ".jpeg", ".pdf", ".csv", ".mpeg", ".mpg",
    ".swf", ".woff", ".woff2", ".xls", ".xlsx", ".doc", ".docx", ".ppt", ".pptx", ".txt", ".zip",
    ".ogg", ".mp3", ".mp4", ".exe", ".iso", ".gz", ".rar", ".svg", ".bmp", ".tar", ".tgz", ".tiff",
    ".tif", ".ttf", ".flv", ".dmg", ".xz", ".zst",
];

/// A request line split as GoAccess splits it.
#[derive(Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub method: &'static str,
    pub url: Cow<'a, [u8]>,
    pub protocol: &'static str,
}

fn prefix_of(s: &[u8], list: &[&'static str]) -> Option<&'static str> {
    list.iter()
        .copied()
        .find(|m| s.len() >= m.len() && s[..m.len()].eq_ignore_ascii_case(m.as_bytes()))
}

/// GoAccess's `parse_req` (see the module comment), of the line trimmed
/// first, as GoAccess 1.7 reads the field (`" GET /a HTTP/1.1"` was an
/// unsplit request here, `"GET /a HTTP/1.1 "` the URL `-`).
pub fn request(line: &[u8]) -> Request<'_> {
    let line = line.trim_ascii();
    let whole = |url: &'static [u8]| Request {
        method: NO_METHOD,
        url: Cow::Borrowed(url),
        protocol: NO_METHOD,
    };
    let Some(method) = prefix_of(line, METHODS) else {
        return whole_decoded(line);
    };
    let rest = &line[method.len()..];
    let Some(sp) = rest.iter().rposition(|&c| c == b' ') else {
        return whole(b"-");
    };
    let Some(protocol) = prefix_of(&rest[sp + 1..], PROTOCOLS) else {
        return whole(b"-");
    };
    // GoAccess skips the one byte after the method, whatever it is.
    if sp < 1 {
        return whole(b"-");
    }
    let url = &rest[1..sp];
    Request {
        method,
        url: decode_url(url),
        protocol,
    }
}

fn whole_decoded(line: &[u8]) -> Request<'_> {
    Request {
        method: NO_METHOD,
        url: decode_url(line),
        protocol: NO_METHOD,
    }
}

/// A user agent as GoAccess 1.7 keys its visitors and names its browsers
/// by: trimmed, "-" when that leaves nothing (`""` and `"-"` were two
/// visitors here, one there), and else through [`decode_url`] (CloudFront
/// writes agents %-encoded; `a%20b` and `a b` are one agent there). Most
/// agents need none of it ([`agent_is_key`]) and are borrowed.
pub fn agent_key(raw: &[u8]) -> Cow<'_, [u8]> {
    let t = agent_trimmed(raw);
    match agent_is_key(t) {
        true => Cow::Borrowed(t),
        false => decode_url(t),
    }
}

/// A user agent trimmed, "-" when that leaves nothing, as a referrer is
/// keyed ([`referrer_key`]): its key ([`agent_key`]) when [`agent_is_key`].
#[inline]
pub fn agent_trimmed(raw: &[u8]) -> &[u8] {
    referrer_key(raw)
}

/// Whether a trimmed agent ([`agent_trimmed`]) is its own key: it holds no
/// byte [`decode_url`] reads (`%`, CR, NUL). A SIMD search of the agent,
/// the longest field of most lines: the report asks it once per distinct
/// agent, not once a line (`job::agent_id`; 3.5% of the report's time
/// on the 1 GiB bench log, 9 runs).
pub fn agent_is_key(t: &[u8]) -> bool {
    memchr::memchr3(b'%', b'\r', 0, t).is_none()
}

/// A client as GoAccess 1.7 keys it: an IPv6 address in brackets
/// (`[::2]`, or `[::2]:443` with a port, as some proxies write `%h`) is
/// the address alone, one host and one visitor with `::2` (they were two
/// here, one there).
pub fn client_key(raw: &[u8]) -> &[u8] {
    match raw {
        [b'[', rest @ ..] => match memchr::memchr(b']', rest) {
            Some(end) if end > 0 => &rest[..end],
            _ => raw,
        },
        _ => raw,
    }
}

/// A referrer as GoAccess 1.7 keys it: trimmed, "-" when that leaves
/// nothing (an empty one was a row of its own here); not decoded.
pub fn referrer_key(raw: &[u8]) -> &[u8] {
    let blank = |c: Option<&u8>| c.is_none_or(u8::is_ascii_whitespace);
    // Most are neither empty nor blank at an end (trim_ascii's two loops
    // were ~46 instructions a line for the referrer and the agent).
    if !blank(raw.first()) && !blank(raw.last()) {
        return raw;
    }
    match raw.trim_ascii() {
        b"" => b"-",
        t => t,
    }
}

/// GoAccess's `decode_url`: %XX decoded once, the C string ends at a decoded
/// NUL, CR and LF removed, blanks trimmed; an empty result keeps the original.
/// Most URLs need none of it and are borrowed.
pub fn decode_url(url: &[u8]) -> Cow<'_, [u8]> {
    let plain = |c: &u8| !matches!(c, b'%' | 0 | b'\r' | b'\n');
    let edge = |c: Option<&u8>| c.is_some_and(u8::is_ascii_whitespace);
    if url.iter().all(plain) && !edge(url.first()) && !edge(url.last()) {
        return Cow::Borrowed(url);
    }
    Cow::Owned(decode_slow(url))
}

fn decode_slow(url: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(url.len());
    let mut i = 0;
    while i < url.len() {
        let c = url[i];
        match (c, url.get(i + 1), url.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => {
                out.push(hex(h) * 16 + hex(l));
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if let Some(nul) = out.iter().position(|&c| c == 0) {
        out.truncate(nul);
    }
    out.retain(|&c| c != b'\r' && c != b'\n');
    let trimmed = out.trim_ascii();
    if trimmed.is_empty() {
        return url.to_vec();
    }
    trimmed.to_vec()
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// The static extension of `url` (lower case, with its dot), if it is a
/// static file: no query string, and one of GoAccess's extensions.
pub fn static_ext(url: &[u8]) -> Option<&'static str> {
    if url.contains(&b'?') {
        return None;
    }
    STATIC.iter().copied().find(|e| {
        url.len() >= e.len() && url[url.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes())
    })
}

/// The host of a referrer (`http://digg.com/x` -> `digg.com`); none for `-`
/// or a referrer without `//`.
pub fn referring_site(referrer: &[u8]) -> Option<&[u8]> {
    let at = memchr::memmem::find(referrer, b"//")?;
    let rest = &referrer[at + 2..];
    let end = rest
        .iter()
        .position(|&c| c == b'/' || c == b'?')
        .unwrap_or(rest.len());
    (end > 0).then_some(&rest[..end])
}

/// A status code GoAccess accepts.
pub fn valid_status(s: i64) -> bool {
    (100..=599).contains(&s)
}

/// GoAccess's group of a status code.
pub fn status_group(code: u16) -> &'static str {
    match code / 100 {
        1 => "1xx Informational",
        2 => "2xx Success",
        3 => "3xx Redirection",
        4 => "4xx Client Errors",
        _ => "5xx Server Errors",
    }
}

/// "404 Not Found": the code and its reason phrase (IANA's registry, through the
/// `http` crate; nginx's and Cloudflare's own codes by hand), or the code alone.
pub fn status_label(code: u16) -> String {
    let registered = http::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason());
    match registered.or_else(|| server_reason(code)) {
        Some(reason) => format!("{code} {reason}"),
        None => code.to_string(),
    }
}

/// Codes of nginx and Cloudflare that GoAccess names too (not registered).
fn server_reason(code: u16) -> Option<&'static str> {
    Some(match code {
        444 => "No Response (nginx)",
        494 => "Request Header Too Large (nginx)",
        495 => "SSL Certificate Error (nginx)",
        496 => "SSL Certificate Required (nginx)",
        497 => "HTTP Request Sent to HTTPS Port (nginx)",
        499 => "Client Closed Request (nginx)",
        520 => "Unknown Error (Cloudflare)",
        521 => "Web Server Is Down (Cloudflare)",
        522 => "Connection Timed Out (Cloudflare)",
        523 => "Origin Is Unreachable (Cloudflare)",
        524 => "A Timeout Occurred (Cloudflare)",
        525 => "SSL Handshake Failed (Cloudflare)",
        526 => "Invalid SSL Certificate (Cloudflare)",
        _ => return None,
    })
}

/// The offset from UTC, in seconds, of the time written in `record` that
/// parsed to `utc` (microseconds): the first `dd/Mon/yyyy:HH:MM:SS +hhmm`
/// or ISO 8601 text in the record that parses to exactly that instant. 0
/// when none does (a time without a zone is UTC anyway). `zones` remembers
/// the last log time's date and zone, so that a time of the same day and
/// zone is checked by its `HH:MM:SS` alone.
pub fn local_offset(record: &[u8], utc: i64, zones: &mut ZoneCache) -> i64 {
    clf_offset(record, utc, zones)
        .or_else(|| iso_offset(record, utc))
        .unwrap_or(0)
}

/// A log time written `dd/Mon/yyyy:HH:MM:SS +hhmm` (the text of the format's
/// time field): its UTC microseconds, offset in seconds and local hour since
/// the epoch ([`hour_of`]), as `parse_clf` and [`local_offset`] read them,
/// through `zones` (a time of the last date and zone is read by its
/// `HH:MM:SS`, one of the last minute by its `SS`: a full parse a line, and
/// the search of the record for its zone, were ~400 of the report's ~4,500
/// instructions a line, cachegrind; the minute's took ~70 more off ~2,960,
/// with the hour's division). `None` when the text is not such a time: the
/// caller then takes the long way.
pub fn clf_time(text: &[u8], zones: &mut ZoneCache) -> Option<(i64, i64, i64)> {
    let text: &[u8; 26] = text.try_into().ok()?;
    if let Some(t) = zones.of_minute(text) {
        return t;
    }
    // A minute is cached only as `parse` reads it, so that its seconds read
    // alone give what `parse` gives: a time `parse` read is; one of a new
    // date, read by `parse_clf`, is asked of `parse` once the date is
    // learnt (today `parse_clf` reads the same texts: a check, not a filter).
    let (utc, as_parse) = match zones.parse(text) {
        Some(utc) => (utc?, true),
        None => {
            let utc = wf_formats::time::parse_clf(text)?;
            zones.learn(text, utc, zone_seconds(&text[21..]));
            (utc, zones.parse(text) == Some(Some(utc)))
        }
    };
    let offset = zones.offset?;
    let hour = hour_of(utc, offset);
    if as_parse {
        let s = ((text[18] - b'0') * 10 + text[19] - b'0').min(59) as i64;
        zones.minute = Some(Minute {
            text: text[12..18].try_into().expect("six bytes"),
            utc: utc - s * 1_000_000,
            hour,
        });
    }
    Some((utc, offset, hour))
}

/// The local hour since the epoch of `utc` microseconds at `offset` seconds.
#[inline]
pub fn hour_of(utc: i64, offset: i64) -> i64 {
    (utc + offset * 1_000_000).div_euclid(MICROS_PER_HOUR)
}

const MICROS_PER_HOUR: i64 = 3_600_000_000;

/// The date and zone of the last `dd/Mon/yyyy:HH:MM:SS +hhmm` text that
/// parsed: the instant of its midnight, and its offset. A line's time is
/// parsed a second time to find its zone (`local_offset`); most lines share
/// their date and zone with the line before, and a full parse was about 4%
/// of `wf report`'s CPU (perf: parse_clf, zone_prefix, days_from_civil).
#[derive(Default)]
pub struct ZoneCache {
    /// `dd/Mon/yyyy:` and ` +hhmm` as written; empty until a time parsed.
    date: [u8; 12],
    zone: [u8; 6],
    known: bool,
    /// UTC microseconds of `dd/Mon/yyyy:00:00:00 +hhmm`.
    midnight: i64,
    offset: Option<i64>,
    /// The last minute [`clf_time`] read, of this date and zone.
    minute: Option<Minute>,
}

/// A minute of the cached date and zone: `HH:MM:` as written (valid), the
/// UTC microseconds of its second 0 and its local hour since the epoch.
struct Minute {
    text: [u8; 6],
    utc: i64,
    hour: i64,
}

impl ZoneCache {
    /// What [`clf_time`] gives for `text`, if it is of the cached date,
    /// zone and minute (`Some(None)`: its seconds do not parse).
    #[inline]
    fn of_minute(&self, text: &[u8; 26]) -> Option<Option<(i64, i64, i64)>> {
        let m = self.minute.as_ref()?;
        if text[12..18] != m.text || text[..12] != self.date || text[20..26] != self.zone {
            return None;
        }
        let (a, b) = (text[18].wrapping_sub(b'0'), text[19].wrapping_sub(b'0'));
        // (`a` past 9 makes `s` past 60.)
        let s = a as i64 * 10 + b as i64;
        if b >= 10 || s > 60 {
            return Some(None);
        }
        let offset = self.offset.expect("a minute is cached with its offset");
        Some(Some((m.utc + s.min(59) * 1_000_000, offset, m.hour)))
    }

    /// `text` (26 bytes) parsed as `parse_clf` would, if its date and zone
    /// are the cached ones; `None` if they are not (ask `parse_clf`), and
    /// `Some(None)` if its `HH:MM:SS` does not parse.
    fn parse(&self, text: &[u8]) -> Option<Option<i64>> {
        if !self.known || text[..12] != self.date || text[20..26] != self.zone {
            return None;
        }
        let t = &text[12..20];
        let two = |i: usize| {
            let (a, b) = (t[i].wrapping_sub(b'0'), t[i + 1].wrapping_sub(b'0'));
            (a < 10 && b < 10).then_some(a as i64 * 10 + b as i64)
        };
        let hms = match (two(0), two(3), two(6), t[2], t[5]) {
            (Some(h), Some(m), Some(s), b':', b':') if h <= 23 && m <= 59 && s <= 60 => {
                h * 3600 + m * 60 + s.min(59)
            }
            _ => return Some(None),
        };
        Some(Some(self.midnight + hms * 1_000_000))
    }

    /// Remember the date and zone of `text`, which parsed to `utc`.
    fn learn(&mut self, text: &[u8], utc: i64, offset: Option<i64>) {
        let n = |i: usize| (text[i] - b'0') as i64 * 10 + (text[i + 1] - b'0') as i64;
        let hms = n(12) * 3600 + n(15) * 60 + n(18).min(59);
        self.date.copy_from_slice(&text[..12]);
        self.zone.copy_from_slice(&text[20..26]);
        self.midnight = utc - hms * 1_000_000;
        self.offset = offset;
        self.known = true;
        self.minute = None;
    }
}

fn clf_offset(r: &[u8], utc: i64, zones: &mut ZoneCache) -> Option<i64> {
    for slash in memchr::memchr_iter(b'/', r) {
        let Some(start) = slash.checked_sub(2) else {
            continue;
        };
        let text = r.get(start..start + 26)?;
        match zones.parse(text) {
            Some(t) if t == Some(utc) => return zones.offset,
            Some(_) => {}
            None => {
                if wf_formats::time::parse_clf(text) == Some(utc) {
                    let offset = zone_seconds(&text[21..]);
                    zones.learn(text, utc, offset);
                    return offset;
                }
            }
        }
    }
    None
}

fn iso_offset(r: &[u8], utc: i64) -> Option<i64> {
    for t in memchr::memchr2_iter(b'T', b' ', r) {
        let Some(start) = t.checked_sub(10) else {
            continue;
        };
        let end = r[t + 1..]
            .iter()
            .position(|&c| matches!(c, b'"' | b']' | b' ' | b','))
            .map_or(r.len(), |e| t + 1 + e);
        let text = &r[start..end];
        if wf_formats::time::parse_iso(text) == Some(utc) {
            return Some(iso_zone(text));
        }
    }
    None
}

/// `+0700`, `-07:00`: seconds east of UTC.
/// No allocation: it runs once a line (a `Vec` of the digits was 4% of
/// `wf report`'s instructions, in malloc and free, cachegrind 2026-11-28).
fn zone_seconds(z: &[u8]) -> Option<i64> {
    let mut digits = [0u8; 4];
    let mut len = 0;
    for &c in z[1..].iter().filter(|c| **c != b':') {
        if len == 4 || !c.is_ascii_digit() {
            return None;
        }
        digits[len] = c;
        len += 1;
    }
    if len != 4 {
        return None;
    }
    let n = |a: usize| ((digits[a] - b'0') * 10 + digits[a + 1] - b'0') as i64;
    let s = n(0) * 3600 + n(2) * 60;
    match z[0] {
        b'+' => Some(s),
        b'-' => Some(-s),
        _ => None,
    }
}

/// The zone at the end of an ISO time text (after the seconds), 0 for `Z` or none.
fn iso_zone(text: &[u8]) -> i64 {
    let tail = &text[text.len().min(19)..];
    match tail.iter().position(|&c| c == b'+' || c == b'-') {
        Some(p) => zone_seconds(&tail[p..]).unwrap_or(0),
        None => 0,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn status_labels_name_registered_and_server_codes() {
        assert_eq!(status_label(404), "404 Not Found");
        assert_eq!(status_label(418), "418 I'm a teapot");
        assert_eq!(status_label(451), "451 Unavailable For Legal Reasons");
        assert_eq!(status_label(499), "499 Client Closed Request (nginx)");
        assert_eq!(status_label(522), "522 Connection Timed Out (Cloudflare)");
        assert_eq!(status_label(299), "299");
    }
    use super::*;

    #[test]
    fn requests_split_as_goaccess_splits_them() {
        let r = request(b"GET /a%20b%20 HTTP/1.1");
        assert_eq!(
            (r.method, &r.url[..], r.protocol),
            ("GET", &b"/a b"[..], "HTTP/1.1")
        );
        assert_eq!(request(b"get /x http/2.0").protocol, "HTTP/2");
        assert_eq!(&request(b"GET /c").url[..], b"-");
        assert_eq!(&request(b"GET /d HTTP/9.9").url[..], b"-");
        assert_eq!(&request(b"-").url[..], b"-");
        assert_eq!(&decode_url(b" %41%00b")[..], b"A");
        assert_eq!(&decode_url(b"%20")[..], b"%20");
        let r = request(b"FOO /b HTTP/1.1");
        assert_eq!((r.method, &r.url[..]), (NO_METHOD, &b"FOO /b HTTP/1.1"[..]));
    }

    /// A leap second is read as the second before it, through the cache of
    /// the last date and zone and without it: on the day and hour written.
    #[test]
    fn a_leap_second_stays_on_its_day() {
        let before = b"05/Feb/2024:23:59:59 +0530";
        let leap = b"05/Feb/2024:23:59:60 +0530";
        let want = clf_time(before, &mut ZoneCache::default());
        assert!(want.is_some());
        assert_eq!(clf_time(leap, &mut ZoneCache::default()), want);
        let mut zones = ZoneCache::default();
        assert_eq!(clf_time(leap, &mut zones), want);
        assert_eq!(clf_time(before, &mut zones), want);
        assert_eq!(clf_time(leap, &mut zones), want);
    }

    /// Times of the cached minute read by their seconds give what a fresh
    /// cache gives: seconds that are no number (either digit) or past 60, a
    /// leap second, the minute's `:` another byte, the same minute on
    /// another date, in another zone, or both, times before 1970, an hour
    /// `parse_clf` does not read (`24:00`), minutes back and forth; and
    /// after the cache learnt another date from a record
    /// ([`local_offset`]), a time of the old date's minute on the new date.
    #[test]
    fn a_minute_read_by_its_seconds() {
        let dates = ["17/Jun/2007", "18/Jun/2007", "31/Dec/1969"];
        let zones = ["-0700", "+0530"];
        let minutes = ["23:59", "00:00", "23:59", "24:00", "12:7a"];
        let mut runs = Vec::new();
        for d in dates {
            for z in zones {
                runs.extend(minutes.map(|m| (d, z, m)));
            }
        }
        // The same minute on the next line's other date, zone, or both.
        for m in minutes {
            for d in dates {
                runs.extend(zones.map(|z| (d, z, m)));
            }
            for z in zones {
                runs.extend(dates.map(|d| (d, z, m)));
            }
        }
        let mut texts = Vec::new();
        for (date, zone, minute) in runs {
            for sec in ["00", "59", "60", "61", "5a", "0a", "1?", "0:", "-1", "07"] {
                texts.push(format!("{date}:{minute}:{sec} {zone}"));
            }
            texts.push(format!("{date}:{minute};07 {zone}"));
        }
        let mut cache = ZoneCache::default();
        let (mut cached, mut read) = (0, 0);
        for round in 0..2 {
            for text in &texts {
                let t: &[u8; 26] = text.as_bytes().try_into().unwrap();
                cached += cache.of_minute(t).is_some() as usize;
                let got = clf_time(t, &mut cache);
                assert_eq!(
                    got,
                    clf_time(t, &mut ZoneCache::default()),
                    "{round} {text}"
                );
                read += got.is_some() as usize;
                // The hour is the one the local time is in (1969's too).
                if let Some((utc, off, hour)) = got {
                    let local = utc + off * 1_000_000;
                    assert!((0..MICROS_PER_HOUR).contains(&(local - hour * MICROS_PER_HOUR)));
                }
            }
        }
        // A quarter came through the minute's cache (a date, zone or
        // minute changes every eleven texts, a fifth of the minutes are no
        // minutes); some parsed, some did not.
        assert!(
            cached * 2 > texts.len(),
            "{cached} cached of {}",
            texts.len() * 2
        );
        assert!(read > texts.len() / 4 && read < texts.len(), "{read} read");
        // A date learnt from a record drops the minute of the date before.
        let mut cache = ZoneCache::default();
        let first = b"17/Jun/2007:12:00:10 +0000";
        assert!(clf_time(first, &mut cache).is_some());
        let other = b"18/Jun/2007:12:00:00 +0000";
        let utc = wf_formats::time::parse_clf(other).unwrap();
        let rec = b"h - - [18/Jun/2007:12:00:00 +0000] \"GET / HTTP/1.1\" 200 1";
        assert_eq!(local_offset(rec, utc, &mut cache), 0);
        let later = b"18/Jun/2007:12:00:30 +0000";
        let want = clf_time(later, &mut ZoneCache::default());
        assert_eq!(clf_time(later, &mut cache), want);
    }

    /// A referrer's (and an agent's) key is its text trimmed as
    /// `trim_ascii` trims it, `-` when nothing is left.
    #[test]
    fn referrers_trimmed() {
        let blanks = [
            &b""[..],
            b" ",
            b"\t",
            b"\r",
            b"\n",
            b"\x0c",
            b"\x0b",
            b"x",
            b"\xa0",
        ];
        for a in blanks {
            for mid in [&b""[..], b"-", b"a b", b"\xff"] {
                for b in blanks {
                    let raw = [a, mid, b].concat();
                    let want = match raw.trim_ascii() {
                        b"" => &b"-"[..],
                        t => t,
                    };
                    assert_eq!(referrer_key(&raw), want, "{raw:?}");
                }
            }
        }
    }

    #[test]
    fn static_sites_and_offsets() {
        assert_eq!(static_ext(b"/a/B.PNG"), Some(".png"));
        assert_eq!(static_ext(b"/a.png?x=1"), None);
        assert_eq!(referring_site(b"http://x.org/a?b"), Some(&b"x.org"[..]));
        assert_eq!(referring_site(b"-"), None);
        let rec = b"h - - [17/Jun/2007:23:00:00 -0700] \"GET / HTTP/1.1\" 200 1";
        let t = wf_formats::time::parse_clf(b"17/Jun/2007:23:00:00 -0700").unwrap();
        assert_eq!(local_offset(rec, t, &mut ZoneCache::default()), -7 * 3600);
        let rec = b"2007-06-17T23:00:00+02:00 h \"GET / HTTP/1.1\" 200";
        let t = wf_formats::time::parse_iso(b"2007-06-17T23:00:00+02:00").unwrap();
        assert_eq!(local_offset(rec, t, &mut ZoneCache::default()), 2 * 3600);
    }

    #[test]
    fn zones_as_written() {
        assert_eq!(zone_seconds(b"+0700"), Some(7 * 3600));
        assert_eq!(zone_seconds(b"-07:30"), Some(-(7 * 3600 + 30 * 60)));
        assert_eq!(zone_seconds(b"+0:7:3:0"), Some(7 * 3600 + 30 * 60));
        for bad in [&b"+07"[..], b"+07000", b"+07a0", b"*0700", b"+"] {
            assert_eq!(zone_seconds(bad), None, "{:?}", bad);
        }
    }

    /// The cached date and zone give each record the offset a fresh parse
    /// gives: records of a few dates and zones in runs (some zones written
    /// oddly, some times out of range, some with a date-like text before the
    /// time), each asked for its own time or another record's.
    #[test]
    fn cached_zones_as_parsed() {
        let dates = ["17/Jun/2007", "18/Jun/2007", "29/Feb/2024"];
        let zones = ["-0700", "+0530", "+0000", "+07:0"];
        let times = [
            "23:00:00", "00:00:59", "12:34:60", "24:00:00", "12:60:00", "1a:00:00",
        ];
        let mut x: u64 = 7;
        let mut pick = |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % n
        };
        let (mut date, mut zone) = (0, 0);
        let mut records = Vec::new();
        for _ in 0..5000 {
            if pick(10) == 0 {
                (date, zone) = (pick(dates.len()), pick(zones.len()));
            }
            let time = times[pick(times.len())];
            let text = format!("{}:{time} {}", dates[date], zones[zone]);
            let user = ["-", "a/b", "-", "01/Jan/2000:00:00:00 +0100"][pick(4)];
            records.push((
                format!("h - {user} [{text}] \"GET / HTTP/1.1\" 200 1"),
                text,
            ));
        }
        let mut cache = ZoneCache::default();
        let (mut fast, mut asked) = (0, 0);
        for (i, (rec, own)) in records.iter().enumerate() {
            let other = &records[pick(records.len())].1;
            for text in [own, other] {
                let Some(utc) = wf_formats::time::parse_clf(text.as_bytes()) else {
                    continue;
                };
                asked += 1;
                fast += (cache.parse(text.as_bytes()) == Some(Some(utc)) && text == own) as usize;
                let want = local_offset(rec.as_bytes(), utc, &mut ZoneCache::default());
                let got = local_offset(rec.as_bytes(), utc, &mut cache);
                assert_eq!(got, want, "{i}: {rec} {text}");
            }
        }
        // Most of the lookups of a record's own time took the cached way.
        assert!(asked > 3000 && fast * 3 > asked, "{fast} of {asked}");
        // A time field's text read alone, through its own cache: the same
        // instant and offset, or None (then the long way is taken).
        let (mut by_text, mut read) = (ZoneCache::default(), 0);
        for (rec, own) in &records {
            let want = wf_formats::time::parse_clf(own.as_bytes()).map(|utc| {
                let off = local_offset(rec.as_bytes(), utc, &mut ZoneCache::default());
                (utc, off, hour_of(utc, off))
            });
            if let Some(got) = clf_time(own.as_bytes(), &mut by_text) {
                assert_eq!(Some(got), want, "{rec}");
                read += 1;
            }
        }
        assert!(read > 1500, "{read} read by their text");
        // A time out of range is not read as the instant it would overflow to.
        let mut cache = ZoneCache::default();
        let t = |s: &str| wf_formats::time::parse_clf(s.as_bytes()).unwrap();
        let rec = b"h - - [17/Jun/2007:23:00:00 -0700] \"GET / HTTP/1.1\" 200 1";
        assert_eq!(
            local_offset(rec, t("17/Jun/2007:23:00:00 -0700"), &mut cache),
            -25200
        );
        for (odd, same) in [
            ("24:00:00", "18/Jun/2007:00:00:00"),
            ("22:60:00", "17/Jun/2007:23:00:00"),
        ] {
            let rec = format!("h - - [17/Jun/2007:{odd} -0700] \"GET / HTTP/1.1\" 200 1");
            let utc = t(&format!("{same} -0700"));
            assert_eq!(local_offset(rec.as_bytes(), utc, &mut cache), 0, "{odd}");
        }
    }
}
