//! Calendar dates (UTC), enough for accepted-drift expiry: parse `YYYY-MM-DD` (or the date part of
//! an RFC 3339 timestamp), compare, add days, and convert from the system clock. The analysis never
//! reads the clock: the command layer passes "today" in.

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
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        Date {
            days: secs.div_euclid(86_400),
        }
    }

    pub fn plus_days(self, n: i64) -> Date {
        Date {
            days: self.days + n,
        }
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
    use super::Date;

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
