//! How numbers read, everywhere gpuledger writes one for people: money and percentages.
//!
//! One place, below every layer that writes text, so the report's own sentences (a drift summary,
//! a cost rule) and the rendered tables say `46%` and `$12.34` the same way. Percentages take a
//! share (0–1) and say how many digits the place they stand in needs: a headline rounds, a table
//! keeps a decimal.

/// How many digits a percentage keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Digits {
    /// `46%`: headlines and sentences.
    Whole,
    /// `46.0%`: columns, where the figures line up.
    Tenth,
    /// `46%` or `46.5%`: a tenth only when there is one.
    Trimmed,
}

/// `share` (0–1; negative or above 1 allowed) as a percentage.
pub fn percent(share: f64, digits: Digits) -> String {
    format!("{}%", percent_value(share, digits))
}

/// [`percent`] without the sign, for machine-read outputs (a step output `88.1`).
pub fn percent_value(share: f64, digits: Digits) -> String {
    let p = share * 100.0;
    match digits {
        Digits::Whole => format!("{p:.0}"),
        Digits::Tenth => format!("{p:.1}"),
        Digits::Trimmed => {
            let s = format!("{p:.1}");
            match s.strip_suffix(".0") {
                Some("-0") => "0".to_string(),
                Some(whole) => whole.to_string(),
                None => s,
            }
        }
    }
}

/// `$12.34`, or `unknown`.
pub fn money(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |v| format!("${v:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_keep_the_digits_their_place_needs() {
        assert_eq!(percent(0.4567, Digits::Whole), "46%");
        assert_eq!(percent(0.4567, Digits::Tenth), "45.7%");
        assert_eq!(percent(0.46, Digits::Tenth), "46.0%");
        assert_eq!(percent(0.46, Digits::Trimmed), "46%");
        assert_eq!(percent(0.465, Digits::Trimmed), "46.5%");
        assert_eq!(percent(-0.12, Digits::Trimmed), "-12%");
        assert_eq!(percent(-0.0001, Digits::Trimmed), "0%");
        assert_eq!(percent_value(0.881, Digits::Tenth), "88.1");
        assert_eq!(money(Some(2.0199)), "$2.02");
        assert_eq!(money(None), "unknown");
    }
}
