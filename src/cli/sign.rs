//! `sign`: signs a request and prints the headers signing adds.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};

use psd2_console::cert::Credentials;
use psd2_console::signing::{SignOptions, sign_request};

// The `sign` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct SignArgs {
    #[arg(long)]
    cert: PathBuf,
    #[arg(long)]
    key: PathBuf,
    #[arg(long)]
    method: String,
    /// Path and query, e.g. /v1/accounts?withBalance=true
    #[arg(long)]
    path: String,
    /// Request headers to sign, 'Name: value' (eligible ones are signed).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The body, signed exactly as in the file.
    #[arg(long)]
    body_file: Option<PathBuf>,
    /// Sign (request-target) too.
    #[arg(long)]
    request_target: bool,
}

/// Signs the request of `args` now and prints the added headers as `Name: value` lines.
///
/// Errors: the certificate or key, a `--header` without a colon, the body file.
pub(super) fn run(args: SignArgs) -> Result<ExitCode> {
    let credentials = Credentials::load(&args.cert, &args.key)?;
    let mut hs = Vec::new();
    for h in args.headers {
        let (n, v) = h
            .split_once(':')
            .ok_or_else(|| anyhow!("--header {h:?} is not 'Name: value'"))?;
        hs.push((n.trim().to_string(), v.trim().to_string()));
    }
    let body = match args.body_file {
        Some(f) => std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?,
        None => Vec::new(),
    };
    let inspection = sign_request(
        &credentials,
        &args.method.to_ascii_uppercase(),
        &args.path,
        &mut hs,
        &body,
        SignOptions {
            request_target: args.request_target,
            now: std::time::SystemTime::now(),
        },
    );
    for (n, v) in inspection.added_headers {
        out!("{n}: {v}");
    }
    Ok(ExitCode::SUCCESS)
}
