//! The `psd2-console case` subcommands ([`CaseCommand`], run by [`run`]).

use std::path::PathBuf;

use clap::Subcommand;

use super::CaseError;
use super::exchanges::Selection;
use super::export::{ExportOptions, export};
use super::open::open_into;
use crate::profile::Paths;

/// `psd2-console case ...`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum CaseCommand {
    /// Write one case bundle (.tar.gz, mode 0600): manifest, exchanges (also as HAR), the
    /// TPP certificate (no key) and the sandbox state. Never a private key or a Signature.
    Export {
        /// The bundle file to write (an existing one only with --force).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// History ids, or `last`. Without ids and without --session: the latest session.
        #[arg(value_name = "HISTORY-ID", conflicts_with = "session")]
        ids: Vec<String>,
        /// The latest console session: the newest exchange and the ones before it, each less
        /// than 30 minutes before the next.
        #[arg(long)]
        session: bool,
        /// Replace PSU-IDs, PSU-Corporate-IDs and customer numbers by pseudonyms, the same
        /// value by the same pseudonym throughout the bundle.
        #[arg(long)]
        pseudonymize: bool,
        /// Replace an existing bundle file.
        #[arg(long)]
        force: bool,
        /// The profile whose certificate and sandbox go in (default: the newest exchange's).
        #[arg(long)]
        profile: Option<String>,
    },
    /// Make an isolated home in DIR from a bundle (history, sandbox state, a profile on the
    /// embedded sandbox) and print how to open the console on it.
    Open {
        /// The bundle.
        file: PathBuf,
        /// The home directory to make (refused when not empty, unless --force).
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
        /// Open into a directory that is not empty (the case's files replace theirs).
        #[arg(long)]
        force: bool,
    },
}

/// The exchanges `ids` and `session` name: `last` alone is the newest entry, numbers are
/// history ids, nothing is the latest session.
///
/// Errors: [`CaseError::NoEntry`] for a word that is neither a number nor `last`.
pub fn selection(ids: &[String], session: bool) -> Result<Selection, CaseError> {
    if session || ids.is_empty() {
        return Ok(Selection::Session);
    }
    if ids.len() == 1 && ids[0] == "last" {
        return Ok(Selection::Last);
    }
    ids.iter()
        .map(|s| {
            s.parse().map_err(|_| {
                CaseError::NoEntry(format!("{s:?} (give history ids, or `last` alone)"))
            })
        })
        .collect::<Result<Vec<i64>, _>>()
        .map(Selection::Ids)
}

/// Runs `command` on the console's files in `paths`; returns what to print.
///
/// Errors: those of [`export`] and [`open_into`].
pub async fn run(paths: &Paths, command: CaseCommand) -> Result<String, CaseError> {
    match command {
        CaseCommand::Export {
            out,
            ids,
            session,
            pseudonymize,
            force,
            profile,
        } => {
            let opts = ExportOptions {
                out,
                selection: selection(&ids, session)?,
                pseudonymize,
                force,
                profile,
            };
            Ok(export(paths, &opts).await?.summary())
        }
        CaseCommand::Open { file, into, force } => Ok(open_into(&file, &into, force)?.summary()),
    }
}
