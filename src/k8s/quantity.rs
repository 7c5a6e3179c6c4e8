//! Kubernetes resource quantities, parsed exactly.
//!
//! GPU counts arrive as quantities in every spelling the API accepts: `"8"`, `8`, `1e1`, `"1k"`,
//! `"8000m"`. Floating point would make `"0.1" * 10` differ from `1`, so a quantity is held as an exact
//! count of nano-units (the API's own finest precision) in an `i128`, which covers the whole range the
//! API allows (up to `Ei` times a large mantissa). Anything finer than a nano-unit is kept as "inexact"
//! and is never a whole number, which is all the GPU rules need: an extended resource must be an
//! integer, so a fractional GPU quantity is an input error that names the object.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

const NANO: i128 = 1_000_000_000;

/// Why a text or number is not a Kubernetes quantity; each message quotes what was written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuantityError {
    /// Not the grammar `<sign><digits>[.<digits>]<suffix>`.
    #[error("{0:?} is not a valid Kubernetes quantity")]
    Invalid(String),
    /// More digits, or a larger value, than a quantity holds.
    #[error("{0:?} is too large a quantity")]
    TooLarge(String),
    /// A decimal exponent beyond ±40.
    #[error("{0:?} has an exponent out of range")]
    ExponentOutOfRange(String),
    /// A number that is infinite or not a number.
    #[error("{0} is not a valid quantity")]
    NotFinite(f64),
}

/// An exact Kubernetes quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    nanos: i128,
    /// True when the written value had precision below one nano-unit (then `nanos` is rounded up).
    inexact: bool,
}

impl Quantity {
    pub fn from_whole(n: u64) -> Self {
        Quantity {
            nanos: i128::from(n) * NANO,
            inexact: false,
        }
    }

    /// The value as a non-negative whole number, or `None` when it is fractional or negative.
    pub fn whole(&self) -> Option<u64> {
        if self.inexact || self.nanos < 0 || self.nanos % NANO != 0 {
            return None;
        }
        u64::try_from(self.nanos / NANO).ok()
    }

    /// The value as a float (a KAI queue's fractional GPUs: `0.5`, `1500m`).
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> f64 {
        self.nanos as f64 / NANO as f64
    }

    /// Parses the quantity grammar of `k8s.io/apimachinery/pkg/api/resource`:
    /// `<sign><digits>[.<digits>]<suffix>` where the suffix is a binary SI suffix (`Ki`…`Ei`), a
    /// decimal SI suffix (`n u m "" k M G T P E`) or a decimal exponent (`e3`, `E-2`).
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let s = text.trim();
        let bad = || QuantityError::Invalid(text.to_string());
        let (negative, rest) = match (s.strip_prefix('-'), s.strip_prefix('+')) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => (false, s),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (int_part, frac_part) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(bad());
        }
        // The mantissa as an integer and the power of ten it is scaled by.
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return Err(QuantityError::TooLarge(text.to_string()));
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad())?
        };
        // In i64, a fraction as long as any input and an exponent of ±40 cannot overflow.
        let mut exp10: i64 = -i64::try_from(frac_part.len()).map_err(|_| bad())?;
        let mut binary_shift: u32 = 0;
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => binary_shift = 10,
            "Mi" => binary_shift = 20,
            "Gi" => binary_shift = 30,
            "Ti" => binary_shift = 40,
            "Pi" => binary_shift = 50,
            "Ei" => binary_shift = 60,
            other if other.starts_with(['e', 'E']) => {
                let e: i32 = other
                    .strip_prefix(['e', 'E'])
                    .unwrap_or_default()
                    .parse()
                    .map_err(|_| bad())?;
                if !(-40..=40).contains(&e) {
                    return Err(QuantityError::ExponentOutOfRange(text.to_string()));
                }
                exp10 += i64::from(e);
            }
            _ => return Err(bad()),
        }
        let too_large = || QuantityError::TooLarge(text.to_string());
        let mut value = mantissa.checked_shl(binary_shift).ok_or_else(too_large)?;
        if binary_shift > 0 && value >> binary_shift != mantissa {
            return Err(too_large());
        }
        // Scale to nano-units: multiply by 10^(exp10 + 9).
        let scale = exp10 + 9;
        let mut inexact = false;
        if scale >= 0 {
            let factor = u32::try_from(scale)
                .ok()
                .and_then(|s| 10i128.checked_pow(s))
                .ok_or_else(too_large)?;
            value = value.checked_mul(factor).ok_or_else(too_large)?;
        } else {
            let divisor = u32::try_from(-scale)
                .ok()
                .and_then(|s| 10i128.checked_pow(s))
                .unwrap_or(i128::MAX);
            if value % divisor != 0 {
                inexact = true;
            }
            value = value / divisor + i128::from(inexact);
        }
        Ok(Quantity {
            nanos: if negative { -value } else { value },
            inexact,
        })
    }

    fn from_f64(v: f64) -> Result<Self, QuantityError> {
        if !v.is_finite() {
            return Err(QuantityError::NotFinite(v));
        }
        if v.fract() == 0.0 && v.abs() < 1e18 {
            return Ok(Quantity {
                nanos: (v as i128) * NANO,
                inexact: false,
            });
        }
        // A fractional number written without quotes: re-parse its shortest decimal form exactly.
        Quantity::parse(&format!("{v}"))
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.nanos / NANO;
        let frac = (self.nanos % NANO).abs();
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let frac = format!("{frac:09}");
            let sign = if self.nanos < 0 && whole == 0 {
                "-"
            } else {
                ""
            };
            write!(f, "{sign}{whole}.{}", frac.trim_end_matches('0'))
        }
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuantityVisitor;
        impl Visitor<'_> for QuantityVisitor {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes quantity (a number or a string such as \"8\" or \"1k\")")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::from_whole(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity {
                    nanos: i128::from(v) * NANO,
                    inexact: false,
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Quantity::from_f64(v).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Quantity::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(QuantityVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(s: &str) -> Option<u64> {
        Quantity::parse(s).unwrap().whole()
    }

    #[test]
    fn every_spelling_of_eight() {
        for s in [
            "8",
            "+8",
            "8.0",
            "8000m",
            "8e0",
            "0.008k",
            "80e-1",
            "8000000000n",
            "08",
        ] {
            assert_eq!(whole(s), Some(8), "{s}");
        }
    }

    #[test]
    fn suffixes_and_exponents() {
        assert_eq!(whole("1e1"), Some(10));
        assert_eq!(whole("1E3"), Some(1000));
        assert_eq!(whole("1k"), Some(1000));
        assert_eq!(whole("1Ki"), Some(1024));
        assert_eq!(whole("2Mi"), Some(2 * 1024 * 1024));
        assert_eq!(whole("1Ei"), Some(1 << 60));
        assert_eq!(whole("3M"), Some(3_000_000));
        assert_eq!(whole("0"), Some(0));
    }

    #[test]
    fn fractions_are_not_whole() {
        for s in ["0.5", "500m", "1.5", "1e-1", "1n", "0.0000000001", "-1"] {
            assert_eq!(whole(s), None, "{s}");
        }
        assert_eq!(Quantity::parse("500m").unwrap().to_string(), "0.5");
        assert_eq!(Quantity::parse("1.25").unwrap().to_string(), "1.25");
    }

    #[test]
    fn errors_quote_what_was_written() {
        let e = |s: &str| Quantity::parse(s).unwrap_err().to_string();
        assert_eq!(e("8x"), "\"8x\" is not a valid Kubernetes quantity");
        assert_eq!(e("1e999"), "\"1e999\" has an exponent out of range");
        assert_eq!(
            e("99999999999999999999999999999999Ei"),
            "\"99999999999999999999999999999999Ei\" is too large a quantity"
        );
        assert_eq!(
            Quantity::from_f64(f64::NAN).unwrap_err().to_string(),
            "NaN is not a valid quantity"
        );
    }

    #[test]
    fn garbage_is_rejected() {
        for s in [
            "",
            "abc",
            "8x",
            "1.2.3",
            "Ki",
            "1e",
            "1e999",
            "99999999999999999999999999999999Ei",
        ] {
            assert!(Quantity::parse(s).is_err(), "{s} should be rejected");
        }
    }

    #[test]
    fn deserializes_numbers_and_strings() {
        let q: Vec<Quantity> = serde_json::from_str(r#"[8, "8", 1e1, 8.0, "1k", 0.5]"#).unwrap();
        let w: Vec<Option<u64>> = q.iter().map(Quantity::whole).collect();
        assert_eq!(
            w,
            vec![Some(8), Some(8), Some(10), Some(8), Some(1000), None]
        );
    }
}
