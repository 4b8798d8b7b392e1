//! `sca complete`: headless SCA at a psd2-console sandbox
//! ([`psd2_console::client::headless_sca`]).

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand)]
pub(super) enum ScaCommand {
    /// Walk the SCA pages of a scaRedirect link as a browser would (cookie, per-step tokens,
    /// the same forms) and print the callback parameters; exit 0 when the SCA ended as asked
    /// and the redirect reached the TPP-Redirect-URI, 1 otherwise, 2 for a link that is not a
    /// psd2-console sandbox's.
    Complete(psd2_console::client::headless_sca::CompleteArgs),
}

/// Runs `command`: prints what the walk says and exits with its code.
pub(super) async fn run(command: ScaCommand) -> Result<ExitCode> {
    let ScaCommand::Complete(args) = command;
    let done = psd2_console::client::headless_sca::run(&args).await;
    if !done.stdout.is_empty() {
        out!("{}", done.stdout);
    }
    if !done.stderr.is_empty() {
        say!("{}", done.stderr);
    }
    Ok(ExitCode::from(done.code))
}
