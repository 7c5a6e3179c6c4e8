//! Lengths of time as `.gpuledger.yaml` writes them (`24h`, `1h30m`, `2d`): read strictly (a typo
//! is an error, never a sum) and printed back in the same form. Jobs files read their durations the
//! same way.

use serde::{Deserialize, Serialize};

/// A length of time in whole seconds, written `2d`, `24h`, `1h30m`, `90m` or `45s` (units in
/// decreasing order, each at most once), and printed back in the same form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Age(pub u64);

impl Age {
    pub fn parse(s: &str) -> Result<Age, AgeError> {
        let bad = || AgeError {
            text: s.to_string(),
        };
        let mut total: u64 = 0;
        let mut digits = String::new();
        let mut last_unit = u64::MAX;
        for c in s.trim().chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let unit = match c {
                'd' => 86_400,
                'h' => 3_600,
                'm' => 60,
                's' => 1,
                _ => return Err(bad()),
            };
            // `30m1h` or `1h1h` is a typo, not a sum.
            if digits.is_empty() || unit >= last_unit {
                return Err(bad());
            }
            last_unit = unit;
            let n: u64 = digits.parse().map_err(|_| bad())?;
            digits.clear();
            total = n
                .checked_mul(unit)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(bad)?;
        }
        if !digits.is_empty() || last_unit == u64::MAX || total == 0 {
            return Err(bad());
        }
        Ok(Age(total))
    }
}

impl std::fmt::Display for Age {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.0;
        let mut any = false;
        // A day or a day and a half reads better in hours (`24h`, `36h`); whole days past that.
        let days = if rest >= 2 * 86_400 && rest.is_multiple_of(86_400) {
            86_400
        } else {
            u64::MAX
        };
        for (unit, name) in [(days, 'd'), (3_600, 'h'), (60, 'm'), (1, 's')] {
            if rest >= unit {
                write!(f, "{}{name}", rest / unit)?;
                rest %= unit;
                any = true;
            }
        }
        if !any {
            f.write_str("0s")?;
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Age {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Age, D::Error> {
        let s = String::deserialize(d)?;
        Age::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Age {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Text that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a duration (expected e.g. 24h, 1h30m, 2d, 90m)")]
pub struct AgeError {
    pub text: String,
}
