//! `history`: the exchanges of the history, newest first.

use std::process::ExitCode;

use anyhow::{Result, bail};

use psd2_console::profile::Paths;

use super::{field, open_history};

// The `history` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct HistoryArgs {
    /// Only entries with this text anywhere: URL, operation, status, header values
    /// (X-Request-ID, TPP-Session-ID, PSU-ID, ...), bodies (paymentId, consentId, ...).
    #[arg(long)]
    search: Option<String>,
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// `text` (tab-separated lines) or `json` (an array of the entries, bodies left out).
    #[arg(long, value_parser = ["text", "json"], default_value = "text")]
    format: String,
}

/// Prints the entries of the history of `paths` (id, time, status, operation, URL; as-given
/// replays with their source and changed headers), as text lines or one JSON array.
///
/// Errors: the home is not readable or holds no history database; SQLite's.
pub(super) fn run(args: HistoryArgs, paths: &Paths) -> Result<ExitCode> {
    let file = paths.history_file();
    // Only a file that is not there means "no history yet": a home that is a file
    // (or unreadable) is an error, not an empty history.
    match std::fs::symlink_metadata(&file) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("no history yet ({} does not exist)", file.display());
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => bail!("cannot read the history {}: {e}", file.display()),
    }
    let h = open_history(paths)?;
    let mut json = Vec::new();
    for e in h.list(args.search.as_deref(), args.limit)? {
        let at = chrono::DateTime::from_timestamp(e.at, 0)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default();
        let replay = h.replay_info(e.id)?;
        if args.format == "json" {
            json.push(serde_json::json!({
                "id": e.id, "at": at, "profile": e.profile, "status": e.status,
                "operationId": e.operation_id, "method": e.method, "url": e.url,
                "replay": replay,
            }));
            continue;
        }
        // As-given replays end with a column naming the source and changed headers.
        let marker = replay
            .map(|r| {
                let changed = match r.changed_headers.is_empty() {
                    true => "nothing".to_string(),
                    false => r.changed_headers.join(","),
                };
                format!(
                    "\tas-given {} changed {}",
                    field(&r.replay_of),
                    field(&changed)
                )
            })
            .unwrap_or_default();
        out!(
            "{}\t{at}\t{}\t{}\t{} {}{}",
            e.id,
            e.status,
            field(&e.operation_id),
            field(&e.method),
            field(&e.url),
            marker
        );
    }
    if args.format == "json" {
        out!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(ExitCode::SUCCESS)
}
