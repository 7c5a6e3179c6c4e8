//! Calendar dates and instants (UTC), enough for accepted-drift expiry and for the `valid-at` time
//! of a pull-request comment: parse `YYYY-MM-DD` (or the date part of an RFC 3339 timestamp),
//! compare, add days, parse and print RFC 3339 instants, and convert from the system clock. The
//! analysis never reads the clock: the command layer passes "today" in.
//!
//! The calendar is jiff's. The parsers are our own thin ones, because they accept exactly the forms
//! the configuration and the CLI always have (jiff's are more liberal), and the printed forms are
//! written field by field so that they stay `2026-12-30` and `2026-11-30T16:05:00Z`.

use std::fmt;

use jiff::civil;
use jiff::tz::Offset;
use jiff::{SignedDuration, Span};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A date or time that does not parse; each message shows the text and the form expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    #[error("{0:?} is not a date (expected YYYY-MM-DD)")]
    NotADate(String),
    #[error("{0:?} is not a time (expected RFC 3339, e.g. 2026-11-30T16:05:00Z)")]
    NotATime(String),
    /// `--now`, which takes either.
    #[error(
        "{0:?} is neither a date (YYYY-MM-DD) nor a time (RFC 3339, e.g. 2026-11-30T16:05:00Z)"
    )]
    Neither(String),
    /// A date that parsed but has no instant in jiff's range.
    #[error("{0}")]
    OutOfRange(String),
}

/// A day of the proleptic Gregorian calendar, years 1000 to 9999 when parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(civil::Date);

impl Date {
    /// `2026-12-31`, or the date of `2026-12-31T10:00:00Z`.
    pub fn parse(s: &str) -> Result<Date, DateError> {
        let bad = || DateError::NotADate(s.to_string());
        let s = s.trim();
        let date = s.get(..10).ok_or_else(bad)?;
        let mut parts = date.split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let (y, m, d): (i16, i8, i8) = (
            y.parse().map_err(|_| bad())?,
            m.parse().map_err(|_| bad())?,
            d.parse().map_err(|_| bad())?,
        );
        // Four digits as written, not just four characters: `+026` and `0999` are refused.
        if !(1000..=9999).contains(&y) {
            return Err(bad());
        }
        // jiff refuses 2026-02-31 and friends.
        let date = civil::Date::new(y, m, d).map_err(|_| bad())?;
        match s.get(10..) {
            Some(rest) if rest.is_empty() || rest.starts_with(['T', 't', ' ']) => Ok(Date(date)),
            _ => Err(bad()),
        }
    }

    /// Today in UTC, from the system clock.
    pub fn today() -> Date {
        Timestamp::now().date()
    }

    /// Whole days from `earlier` to this date (negative when `earlier` is later).
    pub fn days_since(self, earlier: Date) -> i64 {
        earlier
            .0
            .until(self.0)
            .map(|span| i64::from(span.get_days()))
            .unwrap_or(0)
    }

    /// `n` days later (earlier when negative); past the end of the calendar it stays at the end.
    pub fn plus_days(self, n: i64) -> Date {
        Span::new()
            .try_days(n)
            .and_then(|span| self.0.checked_add(span))
            .map(Date)
            .unwrap_or(if n < 0 {
                Date(civil::Date::MIN)
            } else {
                Date(civil::Date::MAX)
            })
    }
}

/// An instant with one-second precision, printed as `2026-11-30T16:05:00Z` (so printed instants
/// also sort as strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z; beyond jiff's range (about ±10,000 years) it stays at
    /// the end of the range.
    pub fn from_unix(secs: i64) -> Timestamp {
        match jiff::Timestamp::from_second(secs) {
            Ok(t) => Timestamp(t),
            Err(_) if secs < 0 => Timestamp::whole_seconds(jiff::Timestamp::MIN),
            Err(_) => Timestamp::whole_seconds(jiff::Timestamp::MAX),
        }
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    pub fn unix(&self) -> i64 {
        self.0.as_second()
    }

    pub fn now() -> Timestamp {
        Timestamp::whole_seconds(jiff::Timestamp::now())
    }

    /// Truncated towards the past, like the clock's whole seconds since the epoch.
    fn whole_seconds(t: jiff::Timestamp) -> Timestamp {
        let secs = t.as_second() - i64::from(t.subsec_nanosecond() < 0);
        Timestamp(jiff::Timestamp::from_second(secs).unwrap_or(t))
    }

    /// RFC 3339: `2026-11-30T16:05:00Z`, `2026-11-30T17:05:00+01:00`, fractions ignored.
    pub fn parse(s: &str) -> Result<Timestamp, DateError> {
        let bad = || DateError::NotATime(s.to_string());
        let s = s.trim();
        let date = Date::parse(s).map_err(|_| bad())?;
        let rest = s.get(11..).ok_or_else(bad)?;
        let hms = rest.get(..8).ok_or_else(bad)?;
        let num = |r: std::ops::Range<usize>, max: i64| -> Result<i64, DateError> {
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
        // A leap second (`:60`) is the first second of the next minute.
        let (h, m, sec) = (num(0..2, 23)?, num(3..5, 59)?, num(6..8, 60)?);
        let mut zone = rest.get(8..).ok_or_else(bad)?;
        if let Some(frac) = zone.strip_prefix('.') {
            zone = frac.trim_start_matches(|c: char| c.is_ascii_digit());
        }
        let offset = match zone {
            "Z" | "z" => 0,
            z if z.len() == 6 && z.get(3..4) == Some(":") => {
                let part = |r: std::ops::Range<usize>| -> Result<i64, DateError> {
                    z.get(r).ok_or_else(bad)?.parse().map_err(|_| bad())
                };
                let o = part(1..3)? * 3600 + part(4..6)? * 60;
                match z.get(..1) {
                    Some("+") => o,
                    Some("-") => -o,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        };
        let midnight = Offset::UTC
            .to_timestamp(date.0.to_datetime(civil::Time::midnight()))
            .map_err(|_| bad())?;
        midnight
            .checked_add(SignedDuration::from_secs(h * 3600 + m * 60 + sec - offset))
            .map(Timestamp)
            .map_err(|_| bad())
    }

    /// `--now`: an RFC 3339 instant, or a date (its midnight, UTC), so a test can fix the clock to
    /// the day (accepted-drift expiry) or to the second (the age of a snapshot).
    pub fn parse_now(s: &str) -> Result<Timestamp, DateError> {
        Timestamp::parse(s).or_else(|_| {
            let date = Date::parse(s).map_err(|_| DateError::Neither(s.to_string()))?;
            Offset::UTC
                .to_timestamp(date.0.to_datetime(civil::Time::midnight()))
                .map(Timestamp)
                .map_err(|e| DateError::OutOfRange(e.to_string()))
        })
    }

    /// The day it falls on, in UTC.
    pub fn date(self) -> Date {
        Date(Offset::UTC.to_datetime(self.0).date())
    }

    /// Whole seconds from `earlier` to this instant (negative when `earlier` is later).
    pub fn seconds_since(self, earlier: Timestamp) -> i64 {
        self.0.as_second().saturating_sub(earlier.0.as_second())
    }

    /// `2026-12-02 06:00 UTC`: the form people read in a report.
    pub fn human(self) -> String {
        let t = Offset::UTC.to_datetime(self.0);
        format!("{} {:02}:{:02} UTC", Date(t.date()), t.hour(), t.minute())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = Offset::UTC.to_datetime(self.0);
        write!(
            f,
            "{}T{:02}:{:02}:{:02}Z",
            Date(t.date()),
            t.hour(),
            t.minute(),
            t.second()
        )
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(f, "{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        let s = String::deserialize(d)?;
        Date::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
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
    fn now_is_a_date_or_an_instant() {
        let t = |s| Timestamp::parse_now(s).map(|t| t.to_string());
        assert_eq!(t("2026-12-02").unwrap(), "2026-12-02T00:00:00Z");
        assert_eq!(t("2026-12-02T06:12:00Z").unwrap(), "2026-12-02T06:12:00Z");
        assert!(t("yesterday").is_err());
        let a = Timestamp::parse("2026-12-02T06:00:00Z").unwrap();
        let b = Timestamp::parse("2026-12-02T06:12:30Z").unwrap();
        assert_eq!((b.seconds_since(a), a.seconds_since(b)), (750, -750));
        assert_eq!(b.human(), "2026-12-02 06:12 UTC");
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
        assert_eq!(
            Date::parse("1970-01-01").unwrap(),
            Timestamp::from_unix(0).date()
        );
    }

    #[test]
    fn the_accepted_forms_are_the_old_ones() {
        // Offsets, lower-case separators, empty fractions and leap seconds as before.
        let t = |s| Timestamp::parse(s).map(|t| t.to_string());
        assert_eq!(t("2026-11-30 16:05:09z").unwrap(), "2026-11-30T16:05:09Z");
        assert_eq!(t("2026-11-30t16:05:09.Z").unwrap(), "2026-11-30T16:05:09Z");
        assert_eq!(
            t("2026-11-30T10:35:09-05:30").unwrap(),
            "2026-11-30T16:05:09Z"
        );
        assert_eq!(t("2026-12-31T23:59:60Z").unwrap(), "2027-01-01T00:00:00Z");
        assert_eq!(
            t("2026-11-30T16:05:09+00:00").unwrap(),
            "2026-11-30T16:05:09Z"
        );
        assert_eq!(Timestamp::from_unix(-1).to_string(), "1969-12-31T23:59:59Z");
        assert!(Timestamp::parse("2026-11-30T16:05Z").is_err());
        assert!(Date::parse("0999-01-01").is_err());
        assert_eq!(
            Date::parse("2026-12-30 anything").unwrap().to_string(),
            "2026-12-30"
        );
        assert!(Timestamp::parse("2026-11-30T17:05:09+01:00").unwrap() > Timestamp::from_unix(0));
    }

    #[test]
    fn no_input_makes_the_parsers_panic() {
        let long = "9".repeat(400);
        let inputs = [
            "",
            " ",
            "é",
            "ééééééééééééééééé",
            "2026-11-3é",
            "2026-11-30é",
            "2026-11-30Té",
            "2026-11-30T16:05:0é",
            "2026-11-30T16:05:09é",
            "2026-11-30T16:05:09+0é00",
            "2026-11-30T16:05:09+é:00",
            "2026-11-30T16:05:09+00:é",
            "2026-11-30T16:05:09.ééZ",
            "2026-11-30T16:05:09+99:99",
            "2026-11-30T16:05:09-99:99",
            "9999-12-31T23:59:60-99:99",
            "1000-01-01T00:00:00+99:99",
            "99999-01-01",
            "+9999-01-01",
            "-9999-01-01",
            "2026-+1-01",
            "2026-00-00",
            long.as_str(),
            "\u{0}\u{0}\u{0}\u{0}-\u{0}\u{0}-\u{0}\u{0}",
            "日本語の日付です",
        ];
        for s in inputs {
            let _ = Date::parse(s);
            let _ = Timestamp::parse(s);
        }
        for n in [i64::MIN, -1_000_000_000, 1_000_000_000, i64::MAX] {
            let far = Date::parse("2026-11-30").unwrap().plus_days(n);
            assert!(far.to_string().len() >= 10);
            let _ = Timestamp::from_unix(n).to_string();
        }
        assert_eq!(
            Date::parse("2026-11-30")
                .unwrap()
                .plus_days(i64::MAX)
                .to_string(),
            "9999-12-31"
        );
    }
}
