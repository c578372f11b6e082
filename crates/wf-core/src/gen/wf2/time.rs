//! The log's clock and calendar.

use super::LINES_PER_BLOCK;

/// 2007-06-17 00:00:00 in the log's local time (-0700), as seconds since 1970 "local".
const T0_SECS: u64 = 1_182_038_400;
/// Mean milliseconds between lines by local hour (busy in the day, quiet at night).
const HOURLY_GAP_MS: [u64; 24] = [
    700, 780, 860, 900, 900, 860, 780, 680, 580, 500, 450, 430, 420, 420, 430, 450, 480, 500, 520,
    540, 560, 580, 610, 650,
];

pub(super) const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Block start times and durations, computed in block order, so a pure function of the index.
pub(super) struct Clock {
    t_ms: u64,
    b: u64,
    /// `wf gen wf2 --days`: block b starts at `T0 + b * span_ms / blocks`,
    /// with `blocks` (the expected number of blocks, a fraction) as
    /// `blocks_num / blocks_den`; `None`: the hourly pattern.
    even: Option<Even>,
}

/// Times spread evenly over `span_ms`, for `blocks_num / blocks_den` blocks.
#[derive(Clone, Copy)]
pub(super) struct Even {
    pub(super) span_ms: u64,
    pub(super) blocks_num: u64,
    pub(super) blocks_den: u64,
}

impl Clock {
    pub(super) fn new(even: Option<Even>) -> Self {
        Clock {
            t_ms: T0_SECS * 1000,
            b: 0,
            even,
        }
    }
    pub(super) fn next(&mut self) -> (u64, u64) {
        if let Some(e) = self.even {
            let at = |b: u64| {
                let off = b as u128 * e.span_ms as u128 * e.blocks_den as u128
                    / e.blocks_num.max(1) as u128;
                T0_SECS * 1000 + off.min(u64::MAX as u128 / 2) as u64
            };
            let (t0, t1) = (at(self.b), at(self.b + 1));
            self.b += 1;
            return (t0, t1 - t0);
        }
        let hour = (self.t_ms / 3_600_000 % 24) as usize;
        let dur = HOURLY_GAP_MS[hour] * LINES_PER_BLOCK as u64;
        let t0 = self.t_ms;
        self.t_ms += dur;
        (t0, dur)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(super) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(super) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2007, 6, 17)), (2007, 6, 17));
        assert_eq!(T0_SECS / 86_400, days_from_civil(2007, 6, 17) as u64);
        for d in -1000..40_000 {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }
}
