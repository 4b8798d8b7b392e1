//! The tmux tests in one binary: the real `psd2-console` binary in a real terminal (tmux),
//! driven by keys and read back from the pane. Each module was a file of its own before.

// Tests and benches may unwrap: a panic is their failure report (Cargo.toml [lints]).
#![allow(clippy::unwrap_used)]

#[path = "../it/common/mod.rs"]
mod common;

mod tmux_beside;
mod tmux_console;
mod tmux_import_export;
mod tmux_lessons;
mod tmux_memory;
mod tmux_monitor;
mod tmux_presenter;
mod tmux_profiles;
mod tmux_room;
mod tmux_start;
mod tmux_support;
mod tmux_teaching;
