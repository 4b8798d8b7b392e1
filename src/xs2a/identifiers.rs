//! Account and agent identifiers, checked once for the sandbox (payment bodies, sandbox
//! management) and the console: the IBAN (ISO 13616, check digits ISO 7064 MOD 97-10), the
//! BICFI (ISO 9362), the Norwegian BBAN (MOD11, [`crate::xs2a::check_digits`]), and the ISO
//! 4217 currency and ISO 3166 country codes as the Berlin Group schemas write them.
//!
//! IBAN case: the interface document says nothing about the case of an IBAN; the Berlin
//! Group schema `iban` (psd2-api 1.3.11, `components/schemas/iban`, the ISO 20022
//! `IBAN2007Identifier` pattern) is `[A-Z]{2,2}[0-9]{2,2}[a-zA-Z0-9]{1,30}`: the country code
//! in capitals, the rest letters of either case. [`is_iban`] follows that pattern, and the
//! MOD 97-10 check reads a letter of either case as the same number (ISO 7064). The sandbox's
//! payment bodies formerly refused lower-case letters after the country code, its management
//! bodies accepted them; both now follow the schema.

pub use crate::xs2a::check_digits::is_norwegian_bban;

/// Shortest IBAN this check accepts: country code, 2 check digits and 11 BBAN characters
/// (Norway's 15-character IBAN is the shortest in the SWIFT IBAN registry).
pub(crate) const IBAN_MIN_LEN: usize = 15;

/// Longest IBAN (ISO 13616: 34 characters).
pub(crate) const IBAN_MAX_LEN: usize = 34;

/// Whether `s` (no spaces) is an IBAN: two capital letters, two digits, then
/// [`IBAN_MIN_LEN`]`- 4` to [`IBAN_MAX_LEN`]` - 4` letters (either case) or digits, and ISO
/// 7064 MOD 97-10 of the rearranged number is 1. See the module doc for the case rule.
pub fn is_iban(s: &str) -> bool {
    let b = s.as_bytes();
    if !(IBAN_MIN_LEN..=IBAN_MAX_LEN).contains(&b.len())
        || !b[..2].iter().all(u8::is_ascii_uppercase)
        || !b[2..4].iter().all(u8::is_ascii_digit)
        || !b.iter().all(u8::is_ascii_alphanumeric)
    {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in b[4..].iter().chain(&b[..4]) {
        rem = if c.is_ascii_digit() {
            (rem * 10 + u32::from(c - b'0')) % 97
        } else {
            (rem * 100 + u32::from(c.to_ascii_uppercase() - b'A') + 10) % 97
        };
    }
    rem == 1
}

/// Whether `s` is a BICFI (Berlin Group `bicfi`, ISO 9362):
/// `[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?`, capitals only.
pub fn is_bic(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && (b[6].is_ascii_uppercase() || (b'2'..=b'9').contains(&b[6]))
        && ((b[7].is_ascii_uppercase() && b[7] != b'O') || b[7].is_ascii_digit())
        && b[8..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Whether `s` has the shape of an ISO 4217 currency code (Berlin Group `currencyCode`,
/// `[A-Z]{3}`).
pub(crate) fn is_currency(s: &str) -> bool {
    s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// Whether `s` has the shape of an ISO 3166 alpha-2 country code (Berlin Group `countryCode`,
/// `[A-Z]{2}`).
pub(crate) fn is_country(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iban_follows_the_schema_pattern_and_mod97() {
        let cases = [
            ("NO9386011117947", true),
            ("DE89370400440532013000", true),
            ("GB82WEST12345698765432", true),
            // Letters after the country code in either case (schema `[a-zA-Z0-9]{1,30}`).
            ("GB82west12345698765432", true),
            ("NO9386011117948", false),
            ("N09386011117947", false),
            ("no9386011117947", false),
            ("NO93 8601 1117 947", false),
            ("NO938601111794", false),
        ];
        for (iban, valid) in cases {
            assert_eq!(is_iban(iban), valid, "{iban}");
        }
    }

    #[test]
    fn bic_currency_country() {
        type Check = fn(&str) -> bool;
        let cases: [(Check, &str, bool); 9] = [
            (is_bic, "DNBANOKK", true),
            (is_bic, "DNBASESXXXX", true),
            (is_bic, "dnbanokk", false),
            (is_bic, "DNBANOK", false),
            (is_bic, "DNBANOKO", false),
            (is_currency, "NOK", true),
            (is_currency, "nok", false),
            (is_country, "NO", true),
            (is_country, "NOR", false),
        ];
        for (check, value, valid) in cases {
            assert_eq!(check(value), valid, "{value}");
        }
    }
}
