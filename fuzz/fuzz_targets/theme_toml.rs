//! Theme files (`themes/*.toml`): errors and warnings name a line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use psd2_console::tui::theme::{Theme, parse_theme};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = Theme::dark();
    let _ = parse_theme("fuzz", text, "fuzz.toml", Some(&base));
    let _ = parse_theme("fuzz", text, "fuzz.toml", None);
});
