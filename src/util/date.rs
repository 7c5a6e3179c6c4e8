//! Calendar dates and instants (UTC), enough for accepted-drift expiry and for the `valid-at` time
//! of a pull-request comment: parse `YYYY-MM-DD` (or the date part of an RFC 3339 timestamp),
//! compare, add days, parse and print RFC 3339 instants, and convert from the system clock. The
//! analysis never reads the clock: the command layer passes "today" in.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 1970-01-01.
    days: i64,
}

// Howard Hinnant's civil-date algorithms.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl Date {
    /// `2026-12-31`, or the date of `2026-12-31T10:00:00Z`.
    pub fn parse(s: &str) -> Result<Date, String> {
        let bad = || format!("{s:?} is not a date (expected YYYY-MM-DD)");
        let date = s.trim().get(..10).ok_or_else(bad)?;
        let mut parts = date.split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let (y, m, d): (i64, u32, u32) = (
            y.parse().map_err(|_| bad())?,
            m.parse().map_err(|_| bad())?,
            d.parse().map_err(|_| bad())?,
        );
        if !(1..=12).contains(&m) || d == 0 || y.to_string().len() != 4 {
            return Err(bad());
        }
        let date = Date {
            days: days_from_civil(y, m, d),
        };
        // Reject 2026-02-31 and friends: the round trip must give the same day.
        if civil_from_days(date.days) != (y, m, d) {
            return Err(bad());
        }
        if s.trim().len() > 10 && !s.trim()[10..].starts_with(['T', 't', ' ']) {
            return Err(bad());
        }
        Ok(date)
    }

    /// Today in UTC, from the system clock.
    pub fn today() -> Date {
        Date {
            days: Timestamp::now().secs.div_euclid(86_400),
        }
    }

    pub fn plus_days(self, n: i64) -> Date {
        Date {
            days: self.days + n,
        }
    }
}

/// An instant with one-second precision, printed as `2026-11-30T16:05:00Z` (so printed instants
/// also sort as strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    secs: i64,
}

impl Timestamp {
    pub fn from_unix(secs: i64) -> Timestamp {
        Timestamp { secs }
    }

    pub fn now() -> Timestamp {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        Timestamp { secs }
    }

    /// RFC 3339: `2026-11-30T16:05:00Z`, `2026-11-30T17:05:00+01:00`, fractions ignored.
    pub fn parse(s: &str) -> Result<Timestamp, String> {
        let bad = || format!("{s:?} is not a time (expected RFC 3339, e.g. 2026-11-30T16:05:00Z)");
        let s = s.trim();
        let date = Date::parse(s).map_err(|_| bad())?;
        let rest = s.get(11..).ok_or_else(bad)?;
        let hms = rest.get(..8).ok_or_else(bad)?;
        let num = |r: std::ops::Range<usize>, max: i64| -> Result<i64, String> {
            let v: i64 = hms.get(r).ok_or_else(bad)?.parse().map_err(|_| bad())?;
            if (0..=max).contains(&v) {
                Ok(v)
            } else {
                Err(bad())
            }
        };
        if hms.as_bytes().get(2) != Some(&b':') || hms.as_bytes().get(5) != Some(&b':') {
            return Err(bad());
        }
        let (h, m, sec) = (num(0..2, 23)?, num(3..5, 59)?, num(6..8, 60)?);
        let mut zone = &rest[8..];
        if let Some(frac) = zone.strip_prefix('.') {
            zone = frac.trim_start_matches(|c: char| c.is_ascii_digit());
        }
        let offset = match zone {
            "Z" | "z" => 0,
            z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) && &z[3..4] == ":" => {
                let oh: i64 = z[1..3].parse().map_err(|_| bad())?;
                let om: i64 = z[4..6].parse().map_err(|_| bad())?;
                let o = oh * 3600 + om * 60;
                if z.starts_with('-') { -o } else { o }
            }
            _ => return Err(bad()),
        };
        Ok(Timestamp {
            secs: date.days * 86_400 + h * 3600 + m * 60 + sec - offset,
        })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let day = Date {
            days: self.secs.div_euclid(86_400),
        };
        let s = self.secs.rem_euclid(86_400);
        write!(f, "{day}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(self.days);
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        let s = String::deserialize(d)?;
        Date::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{Date, Timestamp};

    #[test]
    fn timestamps_round_trip_and_honour_offsets() {
        let t = Timestamp::parse("2026-11-30T16:05:09Z").unwrap();
        assert_eq!(t.to_string(), "2026-11-30T16:05:09Z");
        assert_eq!(Timestamp::parse("2026-11-30T17:05:09+01:00").unwrap(), t);
        assert_eq!(Timestamp::parse("2026-11-30T16:05:09.123Z").unwrap(), t);
        assert_eq!(Timestamp::from_unix(0).to_string(), "1970-01-01T00:00:00Z");
        for bad in [
            "2026-11-30",
            "2026-11-30T25:00:00Z",
            "2026-11-30T16:05:09",
            "x",
            "2026-11-30T16:05:09+1",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_compare_and_print() {
        let a = Date::parse("2026-11-30").unwrap();
        assert_eq!(a.to_string(), "2026-11-30");
        assert_eq!(a.plus_days(31).to_string(), "2026-12-31");
        assert_eq!(a.plus_days(32).to_string(), "2027-01-01");
        assert_eq!(
            Date::parse("2024-02-29").unwrap().plus_days(1).to_string(),
            "2024-03-01"
        );
        assert_eq!(Date::parse("2026-11-30T23:59:59Z").unwrap(), a);
        assert!(Date::parse("2026-12-01").unwrap() > a);
        for bad in [
            "2026-02-31",
            "2026-13-01",
            "tomorrow",
            "26-1-1",
            "2026-11-30x",
        ] {
            assert!(Date::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Date::parse("1970-01-01").unwrap().days, 0);
    }
}
