//! `flow`: the flow of a session as a sequence diagram ([`psd2_console::flow`]).

use std::process::ExitCode;

use anyhow::{Result, anyhow};

use psd2_console::flow;
use psd2_console::profile::Paths;

use super::open_history;

// The `flow` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct FlowArgs {
    #[arg(long, value_parser = ["mermaid", "text"], default_value = "text")]
    format: String,
    /// The exchanges of this TPP-Session-ID.
    #[arg(long, conflicts_with = "ids")]
    session: Option<String>,
    /// History ids, in the order to draw them.
    ids: Vec<i64>,
}

/// Prints the diagram of the exchanges `args` picks (ids, a session, or the latest flow)
/// with the PSU browser's steps the console saw, as text or Mermaid.
///
/// Errors: no history, an unknown id, no exchanges for the flow; SQLite's.
pub(super) fn run(args: FlowArgs, paths: &Paths) -> Result<ExitCode> {
    let h = open_history(paths)?;
    let entries = if !args.ids.is_empty() {
        let mut picked = Vec::new();
        for id in args.ids {
            picked.push(h.get(id)?.ok_or_else(|| anyhow!("no history entry {id}"))?);
        }
        picked
    } else {
        let recent = h.list(None, flow::HISTORY_WINDOW)?;
        match args.session {
            Some(s) => flow::session(&recent, &s),
            None => flow::latest_session(&recent, flow::GAP_SECONDS),
        }
    };
    if entries.is_empty() {
        return Err(anyhow!("no exchanges for that flow in the history"));
    }
    // The PSU browser's steps the console saw on the embedded sandbox's event stream.
    let steps = flow::steps_of(&h, &entries).unwrap_or_default();
    let f = flow::Flow::from_history_and_steps(&entries, &steps);
    let text = match args.format.as_str() {
        "mermaid" => f.to_mermaid(),
        _ => f.to_text(),
    };
    out!("{}", text.trim_end());
    Ok(ExitCode::SUCCESS)
}
