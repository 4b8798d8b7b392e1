//! The binary's link arguments from `build.rs` (BENCHMARKS.md, "r13/rss: RSS after start"):
//! the built `psd2-console` (this test build's profile) is read as an ELF file with `object`.
//! The symbol ordering list (`build/start-order.txt`) is passed to release builds only and
//! leaves no mark a test could read cheaply; `benches/start_order.sh --check` counts its
//! names in a release binary.

use object::Endianness;
use object::elf::{DT_RELR, FileHeader64};
use object::read::elf::{Dyn as _, FileHeader as _, ProgramHeader as _};

/// The tags of the binary's dynamic section.
fn dynamic_tags(data: &[u8]) -> Vec<i64> {
    let header = FileHeader64::<Endianness>::parse(data).unwrap();
    let endian = header.endian().unwrap();
    let mut tags = Vec::new();
    for ph in header.program_headers(endian, data).unwrap() {
        if let Some(entries) = ph.dynamic(endian, data).unwrap() {
            tags.extend(entries.iter().map(|d| d.d_tag(endian)));
        }
    }
    tags
}

/// `-z pack-relative-relocs`: the relative relocations of the position-independent binary
/// are packed (DT_RELR, a few KB) instead of a 1.5 MB `.rela.dyn` the loader reads at every
/// start. Fails when `build.rs` stops passing the argument on x86_64 Linux with glibc 2.36
/// or newer; where `build.rs` says why it passed nothing, that reason is printed instead.
#[test]
fn the_binary_packs_its_relative_relocations() {
    if !cfg!(all(
        target_arch = "x86_64",
        target_os = "linux",
        target_env = "gnu"
    )) {
        return;
    }
    if let Some(why) = option_env!("PSD2_CONSOLE_LINK_LAYOUT_SKIPPED") {
        eprintln!("no DT_RELR expected: {why}");
        return;
    }
    let data = std::fs::read(env!("CARGO_BIN_EXE_psd2-console")).unwrap();
    let tags = dynamic_tags(&data);
    assert!(!tags.is_empty(), "the binary has no dynamic section");
    assert!(
        tags.contains(&DT_RELR),
        "no DT_RELR in the binary's dynamic section (tags {tags:?}): build.rs no longer passes -z pack-relative-relocs"
    );
}
