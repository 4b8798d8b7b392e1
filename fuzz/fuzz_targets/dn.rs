//! RFC 2253 distinguished names (the `CA=` part of a keyId, Authentication rule 5): parsing,
//! and printing then parsing again gives an equal name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use psd2_console::cert::DistinguishedName;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(dn) = DistinguishedName::parse_rfc2253(text) {
        let printed = dn.to_rfc2253();
        let again = DistinguishedName::parse_rfc2253(&printed).unwrap_or_else(|e| {
            panic!("{printed:?} (printed from {text:?}) does not parse: {e:?}")
        });
        assert!(
            again.matches(&dn),
            "{printed:?} (printed from {text:?}) parses to another name"
        );
    }
});
