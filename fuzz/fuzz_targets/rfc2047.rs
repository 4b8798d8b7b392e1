//! RFC 2047 decoding of header values (interface document, Authentication rule 8), and the
//! round trip of our own encoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use psd2_console::signing::rfc2047::{decode_if_encoded, encode_utf8_b};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = decode_if_encoded(text);
    // Whatever we encode decodes to the same text.
    let encoded = encode_utf8_b(text);
    assert_eq!(decode_if_encoded(&encoded).as_deref(), Ok(text));
});
