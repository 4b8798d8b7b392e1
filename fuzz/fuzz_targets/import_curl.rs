//! The curl importer (and, through format detection, the others): hostile files give an
//! error, never a panic. Imported requests are then resolved as when sent.
#![no_main]

#[path = "import_common.rs"]
mod import_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.trim_start().starts_with("curl") {
        import_common::import_and_resolve(text);
    } else {
        import_common::import_and_resolve(&format!("curl {text}"));
    }
});
