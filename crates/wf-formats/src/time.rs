//! Timestamps of log formats, to microseconds since the epoch (UTC, the zone
//! offset applied). Hand-written because they sit on the hot path of every log
//! row that projects `time` and have fixed shapes: a general date parser
//! (chrono's `parse_from_str`) costs several times more per value.

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

fn num(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
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

fn micros(days: i64, h: u32, mi: u32, s: u32, frac_us: i64, offset_s: i64) -> Option<i64> {
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let secs = days * 86400 + (h * 3600 + mi * 60 + s) as i64 - offset_s;
    Some(secs * 1_000_000 + frac_us)
}

/// `+hhmm`, `-hh:mm` or `Z` as seconds east of UTC.
fn zone(b: &[u8]) -> Option<i64> {
    match b {
        b"Z" | b"z" => Some(0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (hh, mm) = match rest {
                [a, b, b':', c, d] | [a, b, c, d] => ([*a, *b], [*c, *d]),
                _ => return None,
            };
            let h = num(&hh)? as i64;
            let m = num(&mm)? as i64;
            let s = (h * 60 + m) * 60;
            Some(if *sign == b'-' { -s } else { s })
        }
        _ => None,
    }
}

/// Apache/nginx `%t`/`$time_local`: `10/Oct/2000:13:55:36 -0700` (brackets
/// already removed).
pub fn parse_clf(b: &[u8]) -> Option<i64> {
    if b.len() != 26 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return None;
    }
    let d = num(&b[0..2])?;
    let m = month(&b[3..6])?;
    let y = num(&b[7..11])? as i64;
    let (h, mi, s) = (num(&b[12..14])?, num(&b[15..17])?, num(&b[18..20])?);
    if b[14] != b':' || b[17] != b':' || !(1..=31).contains(&d) {
        return None;
    }
    micros(days_from_civil(y, m, d), h, mi, s, 0, zone(&b[21..])?)
}

/// ISO 8601 / RFC 3339: `2000-10-10T13:55:36`, with a space instead of `T`,
/// optional fraction, optional zone (`Z`, `+07:00`, `-0700`); no zone is UTC.
/// A bare date `2000-10-10` is midnight UTC.
pub fn parse_iso(b: &[u8]) -> Option<i64> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(&b[0..4])? as i64, num(&b[5..7])?, num(&b[8..10])?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    if b.len() == 10 {
        return Some(days * 86_400_000_000);
    }
    if b.len() < 19 || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, s) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    let mut rest = &b[19..];
    let mut frac_us = 0i64;
    if let [b'.' | b',', tail @ ..] = rest {
        let n = tail.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let digits = &tail[..n.min(6)];
        frac_us = num(digits)? as i64 * 10i64.pow(6 - digits.len() as u32);
        rest = &tail[n..];
    }
    let offset = if rest.is_empty() { 0 } else { zone(rest)? };
    micros(days, h, mi, s, frac_us, offset)
}

/// Any timestamp shape wf knows: ISO 8601 first, then the log time.
pub fn parse_any(b: &[u8]) -> Option<i64> {
    parse_iso(b).or_else(|| parse_clf(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clf_applies_the_zone() {
        // 2000-10-10 20:55:36 UTC = 971211336
        assert_eq!(
            parse_clf(b"10/Oct/2000:13:55:36 -0700"),
            Some(971_211_336_000_000)
        );
        assert_eq!(parse_clf(b"01/Jan/1970:00:00:00 +0000"), Some(0));
        assert_eq!(
            parse_clf(b"29/Feb/2024:23:59:59 +0100"),
            Some(1_709_247_599_000_000)
        );
        assert_eq!(parse_clf(b"10/Foo/2000:13:55:36 -0700"), None);
        assert_eq!(parse_clf(b"10/Oct/2000:13:55:36"), None);
    }

    #[test]
    fn iso_shapes() {
        assert_eq!(
            parse_iso(b"2000-10-10T20:55:36Z"),
            Some(971_211_336_000_000)
        );
        assert_eq!(
            parse_iso(b"2000-10-10T13:55:36-07:00"),
            Some(971_211_336_000_000)
        );
        assert_eq!(
            parse_iso(b"2000-10-10 20:55:36.25"),
            Some(971_211_336_250_000)
        );
        assert_eq!(parse_iso(b"1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_iso(b"1969-12-31T23:59:59Z"), Some(-1_000_000));
        assert_eq!(parse_iso(b"2000-13-10T20:55:36Z"), None);
    }
}
