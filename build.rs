//! Link arguments of the `psd2-console` binary only (`cargo:rustc-link-arg-bins`): a relink,
//! never a rebuild of a dependency, and nothing for the library, the tests or the benches
//! (BENCHMARKS.md, "r13/rss: RSS after start", issue 23).
//!
//! - `-z pack-relative-relocs` (DT_RELR): the binary is a position-independent executable
//!   whose ~63,000 relative relocations took a 1.5 MB `.rela.dyn` table that the loader reads
//!   at every start (resident file pages); packed they take a few KB. Passed when the target
//!   is `x86_64-unknown-linux-gnu`, built on itself (`HOST` = `TARGET`), and the glibc of the
//!   build machine is 2.36 or newer (`getconf GNU_LIBC_VERSION`): the linker then records a
//!   need of `GLIBC_ABI_DT_RELR`, which an older glibc refuses with a clear message.
//! - `--symbol-ordering-file=build/start-order.txt` (release builds only, `PROFILE` =
//!   `release`, when the file exists): the functions the console runs up to its first frame
//!   and in the seconds after (the embedded sandbox's start), written by
//!   `benches/start_order.sh` from a callgrind trace of the real start, are laid out together
//!   at the start of `.text`; the start then touches a few MiB of the 23 MB of code instead of
//!   64 KiB windows (the kernel's fault-around) all over it. Names of the list that no longer
//!   exist (a renamed function, another hash) are skipped without a warning
//!   (`--no-warn-symbol-ordering`): a stale list costs layout, never the build.
//!
//! Both are linker options of lld (rustc's default linker for this target) and of mold; GNU
//! ld does not know `--symbol-ordering-file`. So nothing is passed when another linker was
//! chosen: `RUSTC_LINKER` set (a `linker` in Cargo's configuration), or `linker`,
//! `fuse-ld` or `link-self-contained` in the RUSTFLAGS. `PSD2_CONSOLE_LINK_LAYOUT=0` turns
//! both off.

use std::path::Path;
use std::process::Command;

/// The ordering list, relative to the package root.
const ORDER: &str = "build/start-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The directory: a list added later reruns this script too.
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-env-changed=PSD2_CONSOLE_LINK_LAYOUT");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let target = var("TARGET");
    if target != "x86_64-unknown-linux-gnu" {
        return;
    }
    // Why the binary has no DT_RELR on this target, for the test that reads it
    // (tests/it/link_layout.rs).
    let skipped = |why: &str| println!("cargo:rustc-env=PSD2_CONSOLE_LINK_LAYOUT_SKIPPED={why}");
    if var("PSD2_CONSOLE_LINK_LAYOUT") == "0" {
        return skipped("PSD2_CONSOLE_LINK_LAYOUT=0");
    }
    if other_linker() {
        return skipped("another linker was chosen");
    }
    if var("HOST") != target {
        skipped("a cross build");
    } else if !glibc_has_relr() {
        skipped("the glibc of the build machine is older than 2.36");
    } else {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(ORDER);
    let path = order.display().to_string();
    // `-Wl,` splits its argument at commas.
    if var("PROFILE") == "release" && order.is_file() && !path.contains(',') {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={path}");
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the build chose a linker other than rustc's default for the target.
fn other_linker() -> bool {
    if std::env::var_os("RUSTC_LINKER").is_some() {
        return true;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    flags
        .split('\u{1f}')
        .any(|f| f.contains("linker") || f.contains("fuse-ld") || f.contains("link-self-contained"))
}

/// Whether the build machine's glibc handles DT_RELR (2.36 or newer).
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (2, 36),
        _ => false,
    }
}
