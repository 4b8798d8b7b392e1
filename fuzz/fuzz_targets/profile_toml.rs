//! Profile files (`profiles/*.toml`): parse, and a parsed profile writes back as TOML that
//! parses again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use psd2_console::profile::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(profile) = Profile::from_toml(text, "fuzz.toml") {
        let _ = profile.slug();
        if let Ok(written) = profile.to_toml() {
            let _ = Profile::from_toml(&written, "written.toml");
        }
    }
});
