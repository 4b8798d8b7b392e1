//! RFC 2047 encoded words for the `Signature` header (interface document, Authentication
//! rule 8): a value that is not ASCII is sent whole as `=?utf-8?B?<base64>?=`.

use base64::Engine as _;

/// Encodes `text` as one `B` encoded word in UTF-8: `=?utf-8?B?<base64>?=`.
///
/// The interface document encodes the whole header value as one word, so the 75-character
/// limit of RFC 2047 section 2 is not applied (clients in the field do the same).
pub fn encode_utf8_b(text: &str) -> String {
    format!(
        "=?utf-8?B?{}?=",
        base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
    )
}

/// Whether `value` looks like one or more encoded words.
pub(crate) fn is_encoded(value: &str) -> bool {
    let v = value.trim();
    v.starts_with("=?") && v.ends_with("?=")
}

/// Decodes `value` when it is RFC 2047-encoded (charset `utf-8` or `iso-8859-1`, encoding
/// `B` or `Q` in either case; over-long words accepted) and returns it unchanged otherwise.
///
/// Errors: the decoder's, for a malformed encoded word or bytes that are not text in the
/// charset named.
pub fn decode_if_encoded(value: &str) -> Result<std::borrow::Cow<'_, str>, rfc2047_decoder::Error> {
    if !is_encoded(value) {
        return Ok(std::borrow::Cow::Borrowed(value));
    }
    rfc2047_decoder::Decoder::new()
        .too_long_encoded_word_strategy(rfc2047_decoder::RecoverStrategy::Decode)
        .decode(value.trim().as_bytes())
        .map(std::borrow::Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_decodes_both_letter_cases() {
        let text = "Ola Nordmann Ærø";
        let enc = encode_utf8_b(text);
        assert_eq!(enc, "=?utf-8?B?T2xhIE5vcmRtYW5uIMOGcsO4?=");
        assert_eq!(decode_if_encoded(&enc).unwrap(), text);
        assert_eq!(
            decode_if_encoded("=?utf-8?b?T2xhIE5vcmRtYW5uIMOGcsO4?=").unwrap(),
            text
        );
        assert_eq!(
            decode_if_encoded("=?iso-8859-1?q?Ola_Nordmann_=C6r=F8?=").unwrap(),
            text
        );
        assert_eq!(decode_if_encoded("plain").unwrap(), "plain");
    }
}
