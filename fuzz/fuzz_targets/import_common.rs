//! Shared by the import targets: import a file, then resolve and capture variables of every
//! request the way the console does when it sends a collection.

use psd2_console::client::import::{Variables, import_file, set_later};

/// Imports `text` and uses every imported request.
pub fn import_and_resolve(text: &str) {
    let Ok(import) = import_file(text, "fuzz") else {
        return;
    };
    let mut vars = Variables::new(&import.variables, &[("host".into(), "localhost".into())]);
    let response = serde_json::json!({"a": [{"b": 1, "c": "x"}], "paymentId": "p1", "links": {}});
    for (i, req) in import.requests.iter().enumerate() {
        let _ = vars.display_url(req);
        let _ = vars.resolve(req);
        let names: Vec<String> = req.sets.iter().map(|s| s.variable.clone()).collect();
        let _ = set_later(&import.requests, i, &names);
        let _ = vars.capture(req, &response);
    }
}
