//! The Berlin Group amount string (schema `amountValue`, pattern
//! `-?[0-9]{1,14}(\.[0-9]{1,3})?`), checked once for the sandbox's payment bodies
//! ([`crate::sandbox::http::payments::body`]) and the console's request validator
//! ([`crate::client::validate`]).
//!
//! The pattern is anchored (the whole string must match): no spaces, no `+`, no `.` without
//! fraction digits, no exponent, at most 14 integer and 3 fraction digits. An instructed
//! amount (what a payment moves) must in addition be greater than zero (Berlin Group
//! `instructedAmount`: "the amount to be transferred"; a zero or negative transfer is not a
//! payment). Checked by hand: a 20-line scan over bytes, no regular-expression engine needed.

/// The Berlin Group `amountValue` pattern (for messages and documentation).
pub(crate) const AMOUNT_PATTERN: &str = r"-?[0-9]{1,14}(\.[0-9]{1,3})?";

/// Most integer digits of an amount (`amountValue`: "Up to 14 significant figures").
pub(crate) const MAX_INTEGER_DIGITS: usize = 14;

/// Most fraction digits the pattern allows.
pub(crate) const MAX_FRACTION_DIGITS: usize = 3;

/// Why an amount string was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountProblem {
    /// Does not match [`AMOUNT_PATTERN`].
    Pattern,
    /// Matches, but an instructed amount must be greater than zero.
    NotPositive,
}

impl AmountProblem {
    /// A sentence about `value` of field `field` (e.g. `instructedAmount.amount`).
    pub fn describe(self, field: &str, value: &str) -> String {
        format!("{field} {}", self.reason(value))
    }

    /// Why `value` was refused, without the field name.
    pub fn reason(self, value: &str) -> String {
        match self {
            AmountProblem::Pattern => format!(
                "{value:?} is not an amount of the form {AMOUNT_PATTERN} (digits, an optional \
                 leading minus, a dot and 1 to 3 fraction digits; no spaces or plus sign), \
                 e.g. \"1056\" or \"5877.78\""
            ),
            AmountProblem::NotPositive => format!("{value:?} must be greater than zero"),
        }
    }
}

/// Whether `s` matches [`AMOUNT_PATTERN`] as a whole.
pub(crate) fn matches_pattern(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    (1..=MAX_INTEGER_DIGITS).contains(&int.len())
        && all_digits(int)
        && frac.is_none_or(|f| (1..=MAX_FRACTION_DIGITS).contains(&f.len()) && all_digits(f))
}

/// Checks an amount string: the pattern, and when `positive` (an instructed amount) that it
/// is greater than zero.
///
/// Errors: [`AmountProblem::Pattern`], [`AmountProblem::NotPositive`].
pub fn check_amount(s: &str, positive: bool) -> Result<(), AmountProblem> {
    if !matches_pattern(s) {
        return Err(AmountProblem::Pattern);
    }
    if positive && (s.starts_with('-') || !s.bytes().any(|b| (b'1'..=b'9').contains(&b))) {
        return Err(AmountProblem::NotPositive);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_berlin_group_pattern_exactly() {
        for ok in [
            "0",
            "1056",
            "5768.2",
            "-1.50",
            "5877.78",
            "1.005",
            "99999999999999.999",
        ] {
            assert!(matches_pattern(ok), "{ok}");
        }
        for bad in [
            "",
            " 10",
            "10 ",
            "+10",
            "10.",
            ".5",
            "1.0000",
            "1e3",
            "1,50",
            "--1",
            "-",
            "0x10",
            "123456789012345",
            "١٠",
        ] {
            assert!(!matches_pattern(bad), "{bad}");
            assert_eq!(
                check_amount(bad, false),
                Err(AmountProblem::Pattern),
                "{bad}"
            );
        }
    }

    #[test]
    fn instructed_amounts_are_positive() {
        assert_eq!(check_amount("0.01", true), Ok(()));
        assert_eq!(check_amount("10", true), Ok(()));
        for bad in ["0", "0.00", "-1.00", "-0"] {
            assert_eq!(
                check_amount(bad, true),
                Err(AmountProblem::NotPositive),
                "{bad}"
            );
        }
        assert_eq!(check_amount("-1.00", false), Ok(()));
        assert!(
            AmountProblem::Pattern
                .describe("instructedAmount.amount", "+10")
                .contains("instructedAmount.amount \"+10\"")
        );
    }
}
