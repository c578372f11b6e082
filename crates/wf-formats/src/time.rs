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
