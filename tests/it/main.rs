//! The integration tests in one binary (one link of the crate with aws-lc and SQLite instead
//! of one per file): a module per area, named after the file it was in before, so test names
//! read `sandbox_ais::…`, `tui_profiles::…`. Shared harnesses live in [`common`]. The tmux
//! tests (`tests/tmux/`) and the headless-browser test (`tests/browser_sca.rs`) are binaries
//! of their own: they drive real terminals and a real browser.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

mod common;

mod case;
mod cli_import;
mod cli_messages;
mod cli_sca;
mod cli_send;
mod cli_sign_serve;
mod codegen;
mod docs_tables;
mod doctor;
mod events;
mod faults;
mod flow;
mod flow_view;
mod fuzz_regressions;
mod history_export;
mod history_search;
mod instances;
mod lessons;
mod link_layout;
mod lint;
mod main_flow;
mod pg_store;
mod postman_collections;
mod qr;
mod redaction;
mod redirect_listener;
mod remote_tls;
mod replay;
mod room;
mod sandbox_ais;
mod sandbox_baskets;
mod sandbox_flow;
mod sandbox_hostile;
mod sandbox_manage;
mod sandbox_payments;
mod sandbox_reads;
mod sandbox_rules;
mod sandbox_schema;
mod sandbox_state;
mod sca_complete;
mod send_pipeline;
mod signing_props;
mod signing_vectors;
mod structure;
mod tenancy;
mod tls_server;
mod tui_catalogue;
mod tui_editor;
mod tui_history;
mod tui_ids;
mod tui_keys;
mod tui_monitor;
mod tui_presenter;
mod tui_profiles;
mod tui_response;
mod tui_screens;
mod validate;
mod verify_cache;
