//! The one way GPU numbers add and multiply: checked, with the object they belong to named.
//!
//! Every figure gpuledger shows is a sum or product of numbers someone else wrote: a pod's container
//! requests, `replicas × nodeCount × GPUs`, a tenant's total over its workloads. Release builds wrap
//! `u64` arithmetic silently, so a manifest with `replicas: 4611686018427387904` and 8 GPUs would
//! become a workload of 0 GPUs and pass a capacity gate. Here the arithmetic is done once, checked:
//! [`add`], [`mul`] and [`sum`] fail with [`TooLarge`], and [`Named::named`] turns that into an
//! [`Overflow`] that says which object and which figure, an input error (exit 2) that the user can
//! fix. No figure is ever capped or wrapped.
//!
//! Conversions between number types go through [`to_i64`] and [`to_u32`] rather than `as`, for the
//! same reason.

use std::fmt;

/// A sum or product did not fit in 64 bits. Carries no context: [`Named::named`] adds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("too large to count (it overflows a 64-bit number)")
    }
}

impl std::error::Error for TooLarge {}

/// A GPU figure of one object (or of a total over objects) that does not fit in 64 bits: an input
/// error naming the object, e.g. `Deployment ml/big (apps.yaml:12): GPUs declared (replicas
/// 4611686018427387904 × 8 GPUs) is too large to count`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{object}: {what} is too large to count (it overflows a 64-bit number); no cluster holds that many, the input is wrong"
)]
pub struct Overflow {
    /// The object, as gpuledger names objects (`Deployment ml/big`), with its source when known.
    pub object: String,
    /// The figure that overflowed (`GPUs declared (replicas 4611686018427387904 × 8 GPUs)`).
    pub what: String,
}

/// An overflow is an input error (exit 2): the "file" is the object, which carries its source.
impl From<Overflow> for crate::error::Error {
    fn from(e: Overflow) -> Self {
        crate::error::Error::Input(crate::error::InputError {
            file: e.object,
            line: None,
            column: None,
            message: format!(
                "{} is too large to count (it overflows a 64-bit number); no cluster holds that many, the input is wrong",
                e.what
            ),
        })
    }
}

/// Gives a [`TooLarge`] the object and figure it belongs to.
pub trait Named<T> {
    fn named(self, object: impl fmt::Display, what: impl fmt::Display) -> Result<T, Overflow>;
}

impl<T> Named<T> for Result<T, TooLarge> {
    fn named(self, object: impl fmt::Display, what: impl fmt::Display) -> Result<T, Overflow> {
        self.map_err(|TooLarge| Overflow {
            object: object.to_string(),
            what: what.to_string(),
        })
    }
}

/// `a + b`, checked.
pub fn add(a: u64, b: u64) -> Result<u64, TooLarge> {
    a.checked_add(b).ok_or(TooLarge)
}

/// `*acc += n`, checked; `acc` is unchanged on overflow.
pub fn add_to(acc: &mut u64, n: u64) -> Result<(), TooLarge> {
    *acc = add(*acc, n)?;
    Ok(())
}

/// `a × b`, checked.
pub fn mul(a: u64, b: u64) -> Result<u64, TooLarge> {
    a.checked_mul(b).ok_or(TooLarge)
}

/// The sum of all the numbers, checked.
pub fn sum(numbers: impl IntoIterator<Item = u64>) -> Result<u64, TooLarge> {
    numbers.into_iter().try_fold(0u64, add)
}

/// A count of things held in memory (objects, rows): cannot exceed `u64` on any machine, but
/// converted without `as`.
pub fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A `u64` figure as `i64` (for signed deltas), checked.
pub fn to_i64(n: u64) -> Result<i64, TooLarge> {
    i64::try_from(n).map_err(|_| TooLarge)
}

/// `a - b` as a signed delta, checked (both must fit in `i64`).
pub fn delta(a: u64, b: u64) -> Result<i64, TooLarge> {
    to_i64(a)?.checked_sub(to_i64(b)?).ok_or(TooLarge)
}

/// A ratio of two figures (`a / b`), `None` when `b` is 0. `u64` → `f64` loses precision above
/// 2^53 but never wraps, which is fine for a share or a percentage.
pub fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(add(2, 3), Ok(5));
        assert_eq!(add(u64::MAX, 1), Err(TooLarge));
        assert_eq!(mul(1 << 62, 8), Err(TooLarge));
        assert_eq!(mul(1 << 31, 8), Ok(1 << 34));
        assert_eq!(sum([1, 2, 3]), Ok(6));
        assert_eq!(sum([u64::MAX, 1]), Err(TooLarge));
        let mut acc = 7;
        assert_eq!(add_to(&mut acc, u64::MAX), Err(TooLarge));
        assert_eq!(acc, 7);
        assert_eq!(delta(3, 5), Ok(-2));
        assert_eq!(delta(u64::MAX, 0), Err(TooLarge));
        assert_eq!(ratio(1, 0), None);
        assert_eq!(ratio(1, 4), Some(0.25));
    }

    #[test]
    fn an_overflow_names_its_object() {
        let e = mul(1 << 62, 8)
            .named("Deployment ml/big", "replicas × GPUs")
            .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("Deployment ml/big: replicas × GPUs is too large"));
    }
}
