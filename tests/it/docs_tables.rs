//! `docs/sandbox.md` names a test for every rule: each named test exists, so the table cannot
//! point at tests that were renamed or never written.

use std::collections::HashSet;

/// The folders whose `.rs` files hold integration tests: the `it` binary's modules, the tmux
/// binary's modules, and the binaries directly under `tests/`.
const TEST_DIRS: [&str; 3] = ["tests/it", "tests/tmux", "tests"];

/// `(file stem, fn name)` of every `#[test]`/`#[tokio::test]` function in [`TEST_DIRS`]; the
/// stem is the module name (`sandbox_ais` for `tests/it/sandbox_ais.rs`).
fn test_functions() -> HashSet<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = HashSet::new();
    let files = TEST_DIRS
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path());
    for path in files {
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut armed = false;
        for line in text.lines() {
            // A test other modules run too (`pg_store`'s PostgreSQL copies) is `pub(crate)`.
            let l = line.trim();
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            if l.starts_with("#[test]") || l.starts_with("#[tokio::test") {
                armed = true;
                continue;
            }
            if armed
                && let Some(rest) = l
                    .strip_prefix("async fn ")
                    .or_else(|| l.strip_prefix("fn "))
            {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert((stem.clone(), name));
                armed = false;
            }
        }
        // proptest! blocks: `fn name(` inside the macro
        if text.contains("proptest!") {
            for line in text.lines() {
                if let Some(rest) = line.trim().strip_prefix("fn ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.insert((stem.clone(), name));
                }
            }
        }
    }
    out
}

/// Whether a `#[test] fn name` exists in some file under `src/`.
fn unit_test_exists(name: &str) -> bool {
    fn walk(dir: &std::path::Path, name: &str) -> bool {
        std::fs::read_dir(dir).unwrap().any(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, name)
            } else {
                std::fs::read_to_string(&p).is_ok_and(|t| {
                    let mut armed = false;
                    t.lines().any(|l| {
                        let l = l.trim();
                        if l.starts_with("#[test]") {
                            armed = true;
                            return false;
                        }
                        let hit = armed && l.starts_with(&format!("fn {name}("));
                        if l.starts_with("fn ") {
                            armed = false;
                        }
                        hit
                    })
                })
            }
        })
    }
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        name,
    )
}

#[test]
fn every_test_named_in_docs_sandbox_exists() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sandbox.md"),
    )
    .unwrap();
    let tests = test_functions();
    let mut checked = 0;
    let mut missing = Vec::new();
    for line in doc.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').collect();
        let Some(last) = cells.iter().rev().find(|c| !c.trim().is_empty()) else {
            continue;
        };
        // default file from a header like "Test (`tests/sandbox_payments.rs`)" is not per
        // line, so names without a file are looked up in every file.
        for quoted in last.split('`').skip(1).step_by(2) {
            if quoted.contains(' ') || quoted.contains('/') || quoted == "TestSandbox" {
                continue;
            }
            let found = if quoted.matches("::").count() >= 2 {
                // a unit test: `module::path::tests::name` under src/
                let name = quoted.rsplit("::").next().unwrap_or_default();
                unit_test_exists(name)
            } else {
                match quoted.split_once("::") {
                    Some((file, f)) => tests.contains(&(file.to_string(), f.to_string())),
                    None => tests.iter().any(|(_, f)| f == quoted),
                }
            };
            checked += 1;
            if !found {
                missing.push(quoted.to_string());
            }
        }
    }
    assert!(checked > 50, "the table names tests ({checked} found)");
    assert!(
        missing.is_empty(),
        "docs/sandbox.md names tests that do not exist: {missing:?}"
    );
}
