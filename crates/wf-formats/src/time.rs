//! Timestamps of `wf sql` columns, to microseconds since the epoch (UTC, the
//! zone offset applied).
//!
//! Why so thin: the record-time parser is one, `wf_core::jobs::time` (there
//! because `wf count --since` must work in the `wf` built without Arrow, and
//! wf-core sits below this crate). Columns take a stricter ISO 8601 than
//! `--since` does: a value is a timestamp only with its seconds and a zone of
//! `Z`, `+hh:mm` or `+hhmm` (or none), so that inferring a CSV column's type
//! gives what it gave before the parsers were merged and what DuckDB's sniffer
//! gives; `2026-11-27T10:00` stays text there, while `--since` takes it.
//! Checked on 3 million generated shapes against the column parser this
//! replaced: the same answers but for zones out of range (`-0799`, `+2500`),
//! which are no longer timestamps.
//!
//! Apache's `%{format}t` times ([`Strftime`]) are the one exception: any
//! strftime pattern may be configured, so they are read with chrono's
//! parser (already built for Arrow) rather than a second strptime here;
//! they are rare, and not on the named formats' path.

pub use wf_core::jobs::time::{days_from_civil, parse_clf};

/// ISO 8601 / RFC 3339: `2000-10-10T13:55:36`, with a space instead of `T`,
/// optional fraction, optional zone (`Z`, `+07:00`, `-0700`); no zone is UTC.
/// A bare date `2000-10-10` is midnight UTC.
pub fn parse_iso(b: &[u8]) -> Option<i64> {
    let t = wf_core::jobs::time::parse_iso(b)?;
    if b.len() == 10 {
        return Some(t);
    }
    if b.get(16) != Some(&b':') {
        return None; // no seconds
    }
    let frac = match b.get(19) {
        Some(b'.' | b',') => 1 + b[20..].iter().take_while(|c| c.is_ascii_digit()).count(),
        _ => 0,
    };
    let zone = b.len() - 19 - frac;
    matches!(zone, 0 | 1 | 5 | 6).then_some(t)
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
            parse_iso(b"2000-10-10T13:55:36-0700"),
            Some(971_211_336_000_000)
        );
        assert_eq!(
            parse_iso(b"2000-10-10 20:55:36.25"),
            Some(971_211_336_250_000)
        );
        assert_eq!(
            parse_iso(b"2000-10-10 20:55:36,250Z"),
            Some(971_211_336_250_000)
        );
        assert_eq!(parse_iso(b"1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_iso(b"1969-12-31T23:59:59Z"), Some(-1_000_000));
        assert_eq!(parse_iso(b"2000-13-10T20:55:36Z"), None);
    }

    /// The shapes `--since` takes but a column does not (the column types
    /// inferred before the two parsers became one).
    #[test]
    fn columns_want_seconds_and_a_full_zone() {
        assert_eq!(parse_iso(b"2000-10-10T20:55"), None);
        assert_eq!(parse_iso(b"2000-10-10T21:55+01:00"), None);
        assert_eq!(parse_iso(b"2000-10-10T13:55:36-07"), None);
        assert_eq!(parse_iso(b"2000-10-10T20:55:36Zjunk"), None);
        assert_eq!(parse_iso(b"2000-10-10T20:55:36."), None);
        // Out-of-range zones were timestamps before the merge; no longer.
        assert_eq!(parse_iso(b"2000-10-10T20:55:36-0799"), None);
        assert_eq!(parse_clf(b"10/Oct/2000:13:55:36 -2500"), None);
        assert_eq!(
            parse_any(b"10/Oct/2000:13:55:36 -0700"),
            Some(971_211_336_000_000)
        );
    }
}

/// An Apache `%{format}t` time: a strftime pattern (`%Y-%m-%d %H:%M:%S`,
/// `%d/%b/%Y:%T %z`), read with chrono's parser in the C locale. A pattern
/// that is not a whole date and time (`%{%z}t`, `%{%H}t`: a part of a time
/// written in pieces) makes none: such a piece is read and not kept, as
/// before. Without `%z` the time is the server's local time, read as UTC
/// (offset 0): a day or hour of the report is the one written, as
/// GoAccess's; with it (or `%s`), the instant is UTC and [`Strftime::parse`]
/// gives the offset too.
#[derive(Debug, PartialEq, Eq)]
pub struct Strftime {
    items: Vec<chrono::format::Item<'static>>,
    zoned: bool,
}

impl Strftime {
    /// The pattern's time, if it writes a whole date and time: a sample
    /// instant written with it must read back to the same second.
    pub fn new(pattern: &str) -> Option<Strftime> {
        use chrono::format::StrftimeItems;
        let items = StrftimeItems::new(pattern).parse_to_owned().ok()?;
        if items
            .iter()
            .any(|i| matches!(i, chrono::format::Item::Error))
        {
            return None;
        }
        let sample = chrono::DateTime::from_timestamp(1_234_567_890, 0)?
            .with_timezone(&chrono::FixedOffset::east_opt(-7 * 3600)?);
        let text = sample.format_with_items(items.iter()).to_string();
        let mut t = Strftime {
            items,
            zoned: false,
        };
        let mut parsed = chrono::format::Parsed::new();
        chrono::format::parse(&mut parsed, &text, t.items.iter()).ok()?;
        // A zone or seconds since the epoch (`%s`): an instant.
        t.zoned = parsed.offset.is_some() || parsed.timestamp.is_some();
        let (utc, _) = t.parse(text.as_bytes())?;
        let local = if t.zoned { 0 } else { -7 * 3600 };
        (utc == (1_234_567_890 + local) * 1_000_000).then_some(t)
    }

    /// The pattern writes a zone (`%z`) or `%s`: its times are instants.
    pub fn zoned(&self) -> bool {
        self.zoned
    }

    /// (UTC microseconds, offset in seconds) of `text`, if it is a time of
    /// the pattern's; a date its month does not have is none.
    pub fn parse(&self, text: &[u8]) -> Option<(i64, i64)> {
        let text = std::str::from_utf8(text).ok()?;
        let mut p = chrono::format::Parsed::new();
        chrono::format::parse(&mut p, text, self.items.iter()).ok()?;
        if self.zoned {
            if p.offset.is_none() {
                p.set_offset(0).ok()?; // `%s`
            }
            let t = p.to_datetime().ok()?;
            return Some((micros(&t), t.offset().local_minus_utc() as i64));
        }
        let t = p.to_naive_datetime_with_offset(0).ok()?;
        Some((micros(&t.and_utc()), 0))
    }
}

/// UTC microseconds of `t`, a leap second (chrono's second 59 with a
/// billion nanoseconds or more) read as the second before it, as every
/// other time parser here reads `:60`: chrono's own count put it on the next
/// minute, and the line on the next day (`23:59:60`).
fn micros<Tz: chrono::TimeZone>(t: &chrono::DateTime<Tz>) -> i64 {
    t.timestamp() * 1_000_000 + i64::from(t.timestamp_subsec_nanos() % 1_000_000_000) / 1000
}

#[cfg(test)]
mod strftime_tests {
    use super::*;

    #[test]
    fn patterns_of_a_whole_time_read_their_times() {
        let t = |p: &str, text: &str| Strftime::new(p).and_then(|s| s.parse(text.as_bytes()));
        let noon = 1_234_567_890 * 1_000_000;
        assert_eq!(t("%s", "1234567890"), Some((noon, 0)));
        // A leap second is the second before it, on its day.
        let p = "%Y-%m-%d %H:%M:%S %z";
        let before = t(p, "2016-12-31 23:59:59 +0000");
        assert!(before.is_some());
        assert_eq!(t(p, "2016-12-31 23:59:60 +0000"), before);
        assert_eq!(
            t("%Y-%m-%d %H:%M:%S", "2016-12-31 23:59:60"),
            t("%Y-%m-%d %H:%M:%S", "2016-12-31 23:59:59")
        );
        assert_eq!(
            t("%Y-%m-%d %H:%M:%S", "2009-02-13 23:31:30"),
            Some((noon, 0))
        );
        assert_eq!(
            t("%d/%b/%Y:%T %z", "13/Feb/2009:16:31:30 -0700"),
            Some((noon, -25200))
        );
        assert_eq!(t("%d/%b/%Y %T", "13/Feb/2009 23:31:30"), Some((noon, 0)));
        assert_eq!(t("%Y%m%d%H%M%S", "20090213233130"), Some((noon, 0)));
        // Not of the pattern, or no such day: none.
        assert_eq!(t("%Y-%m-%d %H:%M:%S", "2009-02-13T23:31:30"), None);
        assert_eq!(t("%Y-%m-%d %H:%M:%S", "2009-02-30 23:31:30"), None);
        assert_eq!(t("%Y-%m-%d %H:%M:%S", "-"), None);
        // Pieces of a time are no time.
        for piece in ["%z", "%H:%M:%S", "%Y-%m-%d", "%b %Y", "plain", "%Q"] {
            assert!(Strftime::new(piece).is_none(), "{piece}");
        }
        assert!(Strftime::new("%d/%b/%Y:%T %z").unwrap().zoned());
        assert!(Strftime::new("%s").unwrap().zoned());
        assert!(!Strftime::new("%F %T").unwrap().zoned());
    }
}
