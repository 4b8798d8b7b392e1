//! A check of the console's module structure (issue 10): no import cycles between the
//! modules of `src/tui`, and no component module that sees the `App` (only `app`, `ui`,
//! `mouse` and `mod` may). Test-only: it reads the sources.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    /// The modules that may name the `App`: the app itself (its state, input routing,
    /// send and SCA lifecycle, and its side of the components), its drawing and mouse
    /// routing, and the runner.
    const MAY_SEE_APP: [&str; 8] = [
        "app",
        "app_editor",
        "app_input",
        "app_send",
        "app_screens",
        "ui",
        "mouse",
        "mod",
    ];

    /// Modules still written as `impl App` blocks (issue 10, not yet components): none
    /// since the response pane became one (issue 19). Listed so that the check fails for
    /// any other module, and when one of these becomes a component (then it leaves the
    /// list).
    const NOT_YET_COMPONENTS: [&str; 0] = [];

    /// Each module of `src/tui` with the code before its test module, comment lines left
    /// out (doc links are not imports).
    fn modules() -> BTreeMap<String, String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui");
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).expect("src/tui") {
            let path = entry.expect("entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("name")
                .to_string();
            let text = std::fs::read_to_string(&path).expect("source");
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: Vec<&str> = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            out.insert(name, code.join("\n"));
        }
        out
    }

    /// The modules of `src/tui` each one names (`super::x`, `crate::tui::x`).
    fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, Vec<String>> {
        mods.iter()
            .filter(|(m, _)| m.as_str() != "mod")
            .map(|(m, code)| {
                let deps = mods
                    .keys()
                    .filter(|d| *d != m && d.as_str() != "mod")
                    .filter(|d| {
                        code.contains(&format!("super::{d}::"))
                            || code.contains(&format!("super::{d}}}"))
                            || code.contains(&format!("super::{d};"))
                            || code.contains(&format!("crate::tui::{d}::"))
                    })
                    .cloned()
                    .collect();
                (m.clone(), deps)
            })
            .collect()
    }

    /// A cycle through `node`, as the path walked, if there is one.
    fn cycle_from(
        node: &str,
        g: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.iter().any(|d| d == node) {
            return None;
        }
        path.push(node.to_string());
        for next in g.get(node).into_iter().flatten() {
            if let Some(c) = cycle_from(next, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(node.to_string());
        None
    }

    #[test]
    fn tui_modules_import_no_cycle() {
        let g = edges(&modules());
        assert!(g.contains_key("app") && g["app"].contains(&"history".to_string()));
        let mut done = Vec::new();
        for m in g.keys() {
            let found = cycle_from(m, &g, &mut Vec::new(), &mut done);
            assert!(found.is_none(), "import cycle: {:?}", found);
        }
    }

    #[test]
    fn components_do_not_see_the_app() {
        for (m, code) in modules() {
            if MAY_SEE_APP.contains(&m.as_str()) {
                continue;
            }
            // The needles are built, so this file does not match them itself.
            let sees = ["app::", "super::", "impl "]
                .map(|p| format!("{p}App"))
                .into_iter()
                .find(|n| code.contains(n.as_str()));
            if NOT_YET_COMPONENTS.contains(&m.as_str()) {
                assert!(
                    sees.is_some(),
                    "{m}.rs is a component now: take it off the list"
                );
            } else {
                assert!(sees.is_none(), "{m}.rs names the App ({sees:?})");
            }
        }
    }
}
