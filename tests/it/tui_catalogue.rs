//! The operation catalogue in the console: every operation the interface document names is
//! in it, grouped, and the finder (`/`) narrows the list as words are typed. Rendered into
//! ratatui's `TestBackend` and compared with insta snapshots.

use psd2_console::tui::{Action, App};
use psd2_console::xs2a::operations::{Group, OPERATIONS};

use crate::common::tui::{Drive, status};

const DOCUMENT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/seed/000_f6a84b91d653835a.txt"
));

/// Whether path templates match segment by segment, `{…}` matching any one segment.
fn same_path(doc: &str, op: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (doc.split('/').collect(), op.split('/').collect());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || x.starts_with('{') || y.starts_with('{'))
}

/// The `| METHOD | `/path` | ...` rows of the document's operations table.
fn document_operations() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for line in DOCUMENT.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !["GET", "POST", "DELETE", "PUT"].contains(&cells[1]) {
            continue;
        }
        // The first path of the cell (`/v1/users` (also written `/v1/user`) is one).
        if let Some(path) = cells[2].split('`').nth(1).filter(|p| p.starts_with("/v1/")) {
            v.push((cells[1].to_string(), path.to_string()));
        }
    }
    v
}

#[test]
fn every_operation_the_document_names_is_in_the_catalogue() {
    let named = document_operations();
    assert!(named.len() >= 13, "the table was read: {named:?}");
    for (method, path) in &named {
        assert!(
            OPERATIONS
                .iter()
                .any(|o| o.method == method && same_path(path, o.path)),
            "{method} {path} is not in the catalogue"
        );
    }
    // Operations the document names outside that table.
    for (method, path) in [
        ("POST", "/v1/bank-offered-consents"),
        ("POST", "/v1/signing-baskets"),
        ("GET", "/v1/card-accounts"),
        ("POST", "/v1/sandbox/initialize"),
        ("GET", "/v1/accounts/{id}/transactions/{transactionId}"),
    ] {
        assert!(
            OPERATIONS
                .iter()
                .any(|o| o.method == method && same_path(path, o.path)),
            "{method} {path} is not in the catalogue"
        );
    }
    for g in [
        Group::Ais,
        Group::Pis,
        Group::Baskets,
        Group::Psu,
        Group::Sandbox,
    ] {
        assert!(OPERATIONS.iter().any(|o| o.group == g), "{g:?} is empty");
    }
    let consents = OPERATIONS
        .iter()
        .find(|o| o.method == "POST" && o.path == "/v1/consents")
        .expect("/v1/consents");
    assert!(consents.deprecated, "/v1/consents is marked deprecated");
}

#[test]
fn the_finder_narrows_the_list_and_typing_never_runs_commands() {
    let mut app = App::new(status());
    let before = app.selected_operation().id;
    assert_eq!(app.press("/"), Action::None);
    assert!(app.operation_finder().is_some());
    // `q` quits and `s` sends outside the finder; here they are letters of the query.
    app.type_text("status");
    assert!(!app.should_quit());
    let f = app.operation_finder().unwrap();
    assert!(!f.matches.is_empty());
    let chosen = app.selected_operation();
    assert!(
        chosen.title.to_lowercase().contains("status") || chosen.path.contains("status"),
        "{}",
        chosen.id
    );
    insta::assert_snapshot!("finder_status", app.screen_text(160, 40));
    app.keys("Down");
    let second = app.selected_operation().id;
    assert_ne!(second, chosen.id, "Down moves to the next match");
    assert_eq!(app.press("Enter"), Action::None);
    assert!(app.operation_finder().is_none());
    assert_eq!(app.selected_operation().id, second, "Enter keeps the match");

    // Esc puts back the selection from before the finder.
    app.keys("/").type_text("sandbox customers");
    assert_ne!(app.selected_operation().id, second);
    app.keys("Esc");
    assert_eq!(app.selected_operation().id, second);
    assert_ne!(before, second);

    // No match: the list is empty and Enter keeps the previous selection.
    app.keys("/").type_text("zzzz");
    assert!(app.operation_finder().unwrap().matches.is_empty());
    app.enter();
    assert_eq!(app.selected_operation().id, second);
}

#[test]
fn the_operation_list_shows_every_group() {
    let app = App::new(status());
    let s = app.screen_text(160, 60);
    for heading in ["AIS", "PIS", "Baskets", "PSU", "Sandbox"] {
        assert!(s.contains(heading), "{heading} missing:\n{s}");
    }
    insta::assert_snapshot!("operation_list", s);
}
