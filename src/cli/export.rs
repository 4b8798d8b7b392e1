//! `export`: an exchange of the history as cURL (signed afresh), HAR 1.2, or a program
//! (Python, Node, Java, Go) that signs the request each time it runs.

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};

use psd2_console::client::codegen;
use psd2_console::embedded::{self, Holder};
use psd2_console::profile::{Paths, ProfileSet, SessionState, Target};
use psd2_console::xs2a::headers;

use super::open_history;

// The `export` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct ExportArgs {
    #[arg(long, value_parser = ["curl", "har", "python", "node", "java", "go"])]
    format: String,
    /// History id, or `last`.
    #[arg(default_value = "last")]
    id: String,
    /// For cURL and programs: send to this base URL instead of the profile's target (e.g. a
    /// `sandbox serve` at http://127.0.0.1:8080). Without it an embedded profile's
    /// command goes to its embedded sandbox's address (`sandbox_port`), which the
    /// console serves while it runs on this home.
    #[arg(long)]
    base_url: Option<String>,
}

/// Prints the history entry `args.id` of `paths` in `args.format`.
///
/// Errors: no history or no such entry, the entry's profile is gone, its credentials, an
/// embedded profile on any free port without `--base-url`, re-preparing the request.
pub(super) async fn run(args: ExportArgs, paths: &Paths) -> Result<ExitCode> {
    let ExportArgs {
        format,
        id,
        base_url,
    } = args;
    let h = open_history(paths)?;
    let entry = if id == "last" {
        h.last()?
    } else {
        h.get(
            id.parse()
                .map_err(|_| anyhow!("history id {id:?} is neither a number nor `last`"))?,
        )?
    }
    .ok_or_else(|| anyhow!("no history entry {id} (see `psd2-console history`)"))?;
    if format == "har" {
        out!(
            "{}",
            serde_json::to_string_pretty(&psd2_console::client::export::har(&[entry]))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    let mut profile = profiles.get(&entry.profile).cloned().ok_or_else(|| {
        anyhow!(
            "the profile {:?} of entry {} is gone",
            entry.profile,
            entry.id
        )
    })?;
    let credentials = psd2_console::client::engine::ensure_credentials(&profile, paths)?;
    if let Some(b) = base_url {
        profile.target = Target::Url(b.trim_end_matches('/').to_string());
    }
    let session = SessionState::load(&paths.session_file(&profile.slug()))?;
    let mut now = std::time::SystemTime::now();
    let base = match &profile.target {
        Target::Url(u) => u.clone(),
        Target::Embedded => {
            // The embedded sandbox's fixed address, served while a console runs on
            // this home; signed at that sandbox's clock when it answers.
            let profile = embedded::as_started(profile.clone());
            if profile.sandbox_port() == 0 {
                bail!(
                    "profile {:?} gives its embedded sandbox any free port (sandbox_port = 0 or {}=1), so no address is known: give --base-url (e.g. of a running `psd2-console sandbox serve`)",
                    profile.name,
                    psd2_console::profile::FREE_PORTS_ENV
                );
            }
            let addr = SocketAddr::new(profile.listen_address(), profile.sandbox_port());
            let key = embedded::instance_key(&paths.data)?;
            match embedded::probe(addr, &key).await {
                Holder::SameHome {
                    base_url,
                    offset_ms,
                } => {
                    now = embedded::shifted(now, offset_ms);
                    base_url
                }
                _ => {
                    eprintln!(
                        "note: no psd2-console on this data directory serves http://{addr} now: \
                         the command runs while the console (its embedded sandbox) is open, \
                         or give --base-url"
                    );
                    format!("http://{addr}")
                }
            }
        }
    };
    let redirect = headers::find(&entry.request_headers, headers::TPP_REDIRECT_URI)
        .unwrap_or("http://127.0.0.1/callback");
    let req = psd2_console::client::export::reprepare(
        &entry,
        &psd2_console::client::RequestContext {
            profile: &profile,
            session: &session,
            credentials: &credentials,
            base_url: &base,
            redirect_uri: redirect,
            now,
        },
    )?;
    if let Some(lang) = codegen::Language::from_name(&format) {
        let (cert, key) = codegen::credential_files(&profile, paths)?;
        let title = format!(
            "{} {} (psd2-console history #{}, profile {})",
            req.method, req.path_and_query, entry.id, entry.profile
        );
        let code = codegen::CodeRequest::from_prepared(
            &req,
            &title,
            profile.sign_request_target,
            &cert,
            &key,
        );
        print!("{}", codegen::program(lang, &code));
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", psd2_console::client::export::curl_script(&req));
    Ok(ExitCode::SUCCESS)
}
