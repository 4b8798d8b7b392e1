//! Runs the programs of the code export (`export --format python|node|java|go`) with their
//! real runtimes and reads what they print: `HTTP <status>`, the response headers, a blank
//! line and the body.
//!
//! A runtime that is missing here makes a test skip that language with a message; in CI
//! (env `CI` set, or `PSD2_REQUIRE_RUNTIMES=1` as `.ci/run` exports) it fails instead.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use psd2_console::client::codegen::Language;

/// Whether a missing runtime must fail the test instead of skipping it.
pub fn runtimes_required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var("PSD2_REQUIRE_RUNTIMES").is_ok_and(|v| v == "1")
}

/// The command line that runs a program file (without the file).
fn runtime(lang: Language) -> (&'static str, &'static [&'static str]) {
    match lang {
        Language::Python => ("python3", &[]),
        Language::Node => ("node", &[]),
        Language::Java => ("java", &[]),
        Language::Go => ("go", &["run"]),
    }
}

/// Why `lang` cannot run here, or `None` when its runtime (and, for Python, `requests` and
/// `cryptography`; for Node, version 18 or newer) is installed.
fn missing(lang: Language) -> Option<String> {
    let probe = |cmd: &str, args: &[&str]| Command::new(cmd).args(args).output();
    let out = match lang {
        Language::Python => probe("python3", &["-c", "import requests, cryptography"]),
        Language::Node => probe(
            "node",
            &[
                "-e",
                "process.exit(+process.versions.node.split('.')[0] >= 18 ? 0 : 1)",
            ],
        ),
        Language::Java => probe("java", &["-version"]),
        Language::Go => probe("go", &["version"]),
    };
    match out {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "{} runtime check failed: {}",
            lang.name(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("{} runtime not found: {e}", lang.name())),
    }
}

/// The languages whose runtime is installed. A missing one is skipped with a message on
/// stderr, or fails the test when [`runtimes_required`].
pub fn available() -> Vec<Language> {
    let mut out = Vec::new();
    for lang in Language::ALL {
        match missing(lang) {
            None => out.push(lang),
            Some(why) if runtimes_required() => {
                panic!("{why} (CI or PSD2_REQUIRE_RUNTIMES=1: every runtime must be installed)")
            }
            Some(why) => eprintln!("skipping the {} program: {why}", lang.name()),
        }
    }
    out
}

/// What a program printed and how it ended.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub status: u16,
    /// Response headers as printed: (name, value), names as the runtime spells them.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub stderr: String,
}

impl Outcome {
    /// The body as JSON (panics with the output when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\nstderr: {}",
                String::from_utf8_lossy(&self.body),
                self.stderr
            )
        })
    }
}

/// Writes `text` as `lang`'s program file in a new directory under `dir` and runs it with
/// `args` to the end.
fn execute(dir: &Path, lang: Language, text: &str, args: &[&str]) -> std::process::Output {
    let own = dir.join(format!("{}-{}", lang.name(), uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join(lang.file_name()), text).unwrap();
    let (cmd, pre) = runtime(lang);
    Command::new(cmd)
        .current_dir(&own)
        .args(pre)
        .arg(lang.file_name())
        .args(args)
        // Go: never download another toolchain (one file, standard library only).
        .env("GOTOOLCHAIN", "local")
        .output()
        .unwrap_or_else(|e| panic!("cannot start {cmd}: {e}"))
}

/// Runs the program (see [`execute`]) and returns its stdout; panics when it fails.
pub fn output(dir: &Path, lang: Language, text: &str, args: &[&str]) -> String {
    let out = execute(dir, lang, text, args);
    assert!(
        out.status.success(),
        "{} program failed: {}",
        lang.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs the program (see [`execute`]) and returns what it printed.
pub fn run(dir: &Path, lang: Language, text: &str, args: &[&str]) -> Outcome {
    let out = execute(dir, lang, text, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    let stdout = out.stdout;
    let split = stdout
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or_else(|| {
            panic!(
                "{} program printed no header block (exit {code}): {}\nstderr: {stderr}",
                lang.name(),
                String::from_utf8_lossy(&stdout)
            )
        });
    let head = String::from_utf8_lossy(&stdout[..split]).into_owned();
    let body = stdout[split + 2..].to_vec();
    let mut lines = head.lines();
    let first = lines.next().unwrap_or_default();
    let status = first
        .strip_prefix("HTTP ")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "{} program: first line {first:?}\nstderr: {stderr}",
                lang.name()
            )
        });
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    Outcome {
        code,
        status,
        headers,
        body,
        stderr,
    }
}
