//! Norwegian check digits, the one implementation shared by the sandbox (payment bodies,
//! sandbox management, the seed) and the console: MOD11 with given weights (account numbers,
//! national identity numbers, organisation numbers), MOD10 (Luhn), and the KID payment
//! reference (Norwegian "kundeidentifikasjon"), which carries a MOD10 or a MOD11 check digit.
//!
//! Sources: Bits (Norwegian banks' standardisation body) "KID" specification: 2 to 25
//! digits, the last a check digit computed with MOD10 (Luhn: weights 2, 1, 2, ... from the
//! right) or MOD11 (weights 2, 3, 4, 5, 6, 7, 2, ... from the right; remainder 10 is written
//! `-`); interface document, Errors table ("KID errors: 400") and release 1.7.0 ("KID errors
//! changed from 401 to 400").

/// Weights of the MOD11 check digit of a Norwegian account number (BBAN), digits 1–10.
pub(crate) const BBAN_WEIGHTS: [u32; 10] = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

/// Shortest KID, digits including the check digit.
pub(crate) const KID_MIN_LEN: usize = 2;

/// Longest KID, digits including the check digit.
pub(crate) const KID_MAX_LEN: usize = 25;

/// The MOD11 check value of `digits` (ASCII digits) each multiplied by its weight:
/// `(11 - sum mod 11) mod 11`, 0 to 10. The one MOD11 computation behind [`mod11`] and
/// [`kid_mod11`].
fn mod11_value(digits: impl Iterator<Item = u8>, weights: impl Iterator<Item = u32>) -> u32 {
    let sum: u32 = digits
        .zip(weights)
        .map(|(d, w)| u32::from(d - b'0') * w)
        .sum();
    (11 - sum % 11) % 11
}

/// The MOD11 check digit of the ASCII digits `digits` with `weights` (paired from the left):
/// `(11 - sum mod 11) mod 11`. `None` when it would be 10 (no single digit), when `digits`
/// holds a non-digit, or when the lengths differ.
pub(crate) fn mod11(digits: &str, weights: &[u32]) -> Option<u32> {
    if digits.len() != weights.len() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let check = mod11_value(digits.bytes(), weights.iter().copied());
    (check < 10).then_some(check)
}

/// Whether `s` is a Norwegian BBAN: 11 digits, the last the MOD11 check digit of the first
/// ten with [`BBAN_WEIGHTS`].
pub fn is_norwegian_bban(s: &str) -> bool {
    s.len() == 11
        && s.bytes().all(|b| b.is_ascii_digit())
        && mod11(&s[..10], &BBAN_WEIGHTS) == Some(u32::from(s.as_bytes()[10] - b'0'))
}

/// The MOD10 (Luhn) check digit of the ASCII digits `digits`; `None` for a non-digit or an
/// empty string.
pub(crate) fn luhn(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 0 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    Some((10 - sum % 10) % 10)
}

/// The KID MOD11 check character of `digits`: weights 2, 3, 4, 5, 6, 7 repeating from the
/// right; `'-'` when the remainder gives 10. `None` for a non-digit or an empty string.
pub(crate) fn kid_mod11(digits: &str) -> Option<char> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match mod11_value(
        digits.bytes().rev(),
        [2u32, 3, 4, 5, 6, 7].into_iter().cycle(),
    ) {
        10 => Some('-'),
        c => char::from_digit(c, 10),
    }
}

/// Why a KID was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KidProblem {
    /// Not 2–25 characters.
    Length,
    /// A character other than a digit (or `-` as the MOD11 check character).
    NotDigits,
    /// Neither the MOD10 nor the MOD11 check digit is right.
    CheckDigit,
}

impl KidProblem {
    /// A sentence about KID `value` in field `field`.
    pub fn describe(self, field: &str, value: &str) -> String {
        format!("{field}: {}", self.reason(value))
    }

    /// Why KID `value` was refused, without the field name.
    pub fn reason(self, value: &str) -> String {
        match self {
            KidProblem::Length => format!(
                "the KID {value:?} has {} characters; a KID has {KID_MIN_LEN} to \
                 {KID_MAX_LEN} digits",
                value.chars().count()
            ),
            KidProblem::NotDigits => format!(
                "the KID {value:?} must be digits only (the last may be '-' for a MOD11 \
                 check digit of 10)"
            ),
            KidProblem::CheckDigit => format!(
                "the KID {value:?} has a wrong check digit (neither MOD10 nor MOD11 fits); \
                 check the reference on the invoice"
            ),
        }
    }
}

/// Checks a KID: [`KID_MIN_LEN`]–[`KID_MAX_LEN`] digits whose last is a valid MOD10 ([`luhn`])
/// or MOD11 ([`kid_mod11`]) check digit of the others (the creditor's agreement with its bank
/// picks the algorithm; the payer's bank accepts either).
///
/// Errors: the first [`KidProblem`] found: length, characters, check digit.
pub fn check_kid(kid: &str) -> Result<(), KidProblem> {
    if !(KID_MIN_LEN..=KID_MAX_LEN).contains(&kid.len()) {
        return Err(KidProblem::Length);
    }
    let (body, check) = kid.split_at(kid.len() - 1);
    if !body.bytes().all(|b| b.is_ascii_digit())
        || !(check == "-" || check.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(KidProblem::NotDigits);
    }
    let check = check.chars().next();
    let mod10 = luhn(body).and_then(|d| char::from_digit(d, 10));
    if check == mod10 || check == kid_mod11(body) {
        Ok(())
    } else {
        Err(KidProblem::CheckDigit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bban_and_national_numbers() {
        assert!(is_norwegian_bban("12094355778"));
        assert!(is_norwegian_bban("70011968048"));
        assert!(!is_norwegian_bban("12094355779"));
        assert!(!is_norwegian_bban("1209435577"));
        assert!(!is_norwegian_bban("1209435577x"));
        // A national identity number's first check digit (weights 3 7 6 1 8 9 4 5 2).
        assert_eq!(mod11("010100123", &[3, 7, 6, 1, 8, 9, 4, 5, 2]), Some(5));
        assert_eq!(mod11("12", &[1]), None);
    }

    #[test]
    fn kid_mod10_and_mod11() {
        // Luhn: 7992739871 has check digit 3 (the classic example).
        assert_eq!(luhn("7992739871"), Some(3));
        assert_eq!(check_kid("79927398713"), Ok(()));
        // MOD11 from the right with 2..7: 1234567 → 1*8%.. computed: check 0.
        let body = "1234567";
        let m11 = kid_mod11(body).unwrap();
        assert_eq!(check_kid(&format!("{body}{m11}")), Ok(()));
        // A body whose MOD11 remainder gives 10 is written with '-'.
        let dash = (0..1000u32)
            .map(|n| n.to_string())
            .find(|b| kid_mod11(b) == Some('-'))
            .unwrap();
        assert_eq!(check_kid(&format!("{dash}-")), Ok(()));
        assert_eq!(check_kid("79927398710"), Err(KidProblem::CheckDigit));
        assert_eq!(check_kid("1"), Err(KidProblem::Length));
        assert_eq!(check_kid(&"1".repeat(26)), Err(KidProblem::Length));
        assert_eq!(check_kid("12a4"), Err(KidProblem::NotDigits));
        assert_eq!(check_kid("-1"), Err(KidProblem::NotDigits));
    }
}
