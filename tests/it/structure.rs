//! The module structure of issue 10, checked on every test run: the sandbox's modules import
//! each other without cycles (handlers -> domain -> store), as `scripts/sandbox_cycles.py`
//! reads them. A cycle came back once unnoticed (the access log reaching into the settlement
//! domain for a timestamp); this keeps it from coming back.

use std::process::Command;

#[test]
fn sandbox_modules_import_each_other_without_cycles() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/sandbox_cycles.py"))
        .arg(format!("{root}/src/sandbox"))
        .output()
        .expect("python3 runs scripts/sandbox_cycles.py");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "import cycle in src/sandbox:\n{text}");
    assert!(text.contains("no cycles"), "{text}");
}

#[test]
fn the_client_never_imports_the_sandbox() {
    // Every Rust file under src/client, its subdirectories (codegen/) included.
    let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/client")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/client") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    for path in files {
        let text = std::fs::read_to_string(&path).expect("source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("crate::sandbox::") && !code.contains("crate::sandbox;"),
                "{}:{}: the client imports the sandbox: {line}",
                path.display(),
                n + 1
            );
        }
    }
}
