//! The postman importer (and, through format detection, the others): hostile files give an
//! error, never a panic. Imported requests are then resolved as when sent.
#![no_main]

#[path = "import_common.rs"]
mod import_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    import_common::import_and_resolve(text);
    let _ = psd2_console::client::import::environment(text, "fuzz");
});
