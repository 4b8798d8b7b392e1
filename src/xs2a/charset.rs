//! The characters the bank's downstream payment systems accept, shared by the embedded
//! sandbox (which answers 400 `FORMAT_ERROR` for anything else) and the console's request
//! validation ([`crate::client::validate`]), so both sides apply one definition.
//!
//! Interface document, Errors: "ASPSP downstream system rejects a UTF-8 character (for
//! example an emoji): 400". The document lists no character set; this is printable Latin-1
//! (which holds the Norwegian `æøåÆØÅ`) plus a few typographic marks.

/// Characters outside Latin-1 that the downstream systems still take: en and em dash,
/// typographic quotes, ellipsis, euro sign.
pub const EXTRA_ALLOWED: &[char] = &[
    '\u{2013}', '\u{2014}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{201C}', '\u{201D}', '\u{201E}',
    '\u{2026}', '\u{20AC}',
];

/// Whether the bank's downstream systems take `c`: printable ASCII (U+0020–U+007E), printable
/// Latin-1 (U+00A0–U+00FF: æ ø å é ü § « » ...), and [`EXTRA_ALLOWED`]. Control characters
/// (including line breaks and tabs), emoji, other scripts and every astral-plane character
/// are refused.
pub fn is_allowed_char(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{FF}') || EXTRA_ALLOWED.contains(&c)
}

/// The first character of `value` the bank refuses, with its 0-based character position.
pub(crate) fn first_refused(value: &str) -> Option<(usize, char)> {
    value
        .chars()
        .enumerate()
        .find(|(_, c)| !is_allowed_char(*c))
}
