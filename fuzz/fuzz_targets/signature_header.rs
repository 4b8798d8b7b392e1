//! The `Signature` header parser (interface document, Authentication rules 5 and 8): plain
//! or RFC 2047-encoded values. Must return an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use psd2_console::signing::SignatureParams;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(params) = SignatureParams::parse(text) {
        // What we print for parsed parameters parses again.
        let _ = params.to_header_value();
        let _ = SignatureParams::parse(&params.to_plain_value());
    }
});
