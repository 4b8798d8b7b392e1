//! `import`: the requests of a cURL file, a HAR file or a Postman v2.1 collection, listed or
//! sent (re-signed with the profile); `--as-given` goes to [`super::replay`].

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};

use psd2_console::client::Engine;
use psd2_console::client::import::{self as imp, ImportedRequest, Variables};
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};

use super::{exit, field, first_code, start_cli_engine, wait_for_callback, warn_history};

// The `import` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct ImportArgs {
    file: PathBuf,
    #[arg(long, default_value = DEFAULT_PROFILE)]
    profile: String,
    #[arg(long)]
    send: bool,
    /// A Postman environment export (or a JSON object of names to values) giving values
    /// of `{{variables}}`.
    #[arg(long, value_name = "ENV.json")]
    env: Option<PathBuf>,
    /// With --send: send only the Nth request (1-based, in the order listed); repeatable.
    #[arg(long = "request", value_name = "N")]
    requests: Vec<usize>,
    /// With --send: on a scaRedirect, print the link and pause until the SCA callback
    /// (then go on with the next request).
    #[arg(long, requires = "send")]
    wait_sca: bool,
    /// Take the requests as recorded (HAR, cURL or raw HTTP): every header and the exact
    /// body bytes; with --send, only Date, Digest, TPP-Signature-Certificate and
    /// Signature are made again (see `send --as-given`).
    #[arg(long, conflicts_with_all = ["env", "wait_sca"])]
    as_given: bool,
    /// With --as-given --send: keep the recorded signature too (byte for byte).
    #[arg(long, requires = "as_given")]
    keep_signature: bool,
}

/// Lists the requests of `args.file` (name, method, URL; variables without a value on
/// stderr) or, with `--send`, sends them in order (a request using a variable that a later
/// request's script sets goes after it), one `name\tstatus\tcode` line each and a summary.
/// Exit 0 when every answer is 2xx.
///
/// Errors: the files, a `--request` out of range, no such profile, the engine's start; with
/// `--wait-sca`, no SCA callback.
pub(super) async fn run(args: ImportArgs, paths: &Paths) -> Result<ExitCode> {
    let ImportArgs {
        file,
        profile,
        send,
        env,
        requests,
        wait_sca,
        as_given,
        keep_signature,
    } = args;
    if as_given {
        if !send {
            let all = psd2_console::client::replay::read_file(&file)?;
            for (source, r) in all {
                out!(
                    "{}\t{} {}\t{}",
                    field(&source),
                    field(&r.method),
                    field(&r.url),
                    field(&r.name)
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        return super::replay::run(paths, &file, &profile, keep_signature, &requests, None).await;
    }
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let imported = imp::import_file(&text, &file.display().to_string())?;
    let environment = match &env {
        Some(e) => imp::environment(
            &std::fs::read_to_string(e).with_context(|| format!("reading {}", e.display()))?,
            &e.display().to_string(),
        )?,
        None => Vec::new(),
    };
    let mut vars = Variables::new(&imported.variables, &environment);
    let all = &imported.requests;
    if let Some(bad) = requests.iter().find(|n| **n == 0 || **n > all.len()) {
        bail!("--request {bad}: the file has requests 1 to {}", all.len());
    }
    if !send {
        list(all, &vars);
        return Ok(ExitCode::SUCCESS);
    }
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    let profile = profiles
        .get(&profile)
        .cloned()
        .ok_or_else(|| anyhow!("no profile {profile:?}"))?;
    let mut engine = start_cli_engine(profile, paths.clone()).await?;
    let mut tally = ImportTally::default();
    let mut queue: VecDeque<usize> = if requests.is_empty() {
        (0..all.len()).collect()
    } else {
        requests.iter().map(|n| n - 1).collect()
    };
    let mut deferred = HashSet::new();
    while let Some(i) = queue.pop_front() {
        let r = &all[i];
        let resolved = vars.resolve(r);
        // A variable that a later request's script sets: send this one after it.
        if !resolved.unknown.is_empty()
            && requests.is_empty()
            && imp::set_later(all, i, &resolved.unknown)
            && deferred.insert(i)
        {
            queue.push_back(i);
            continue;
        }
        if !resolved.unknown.is_empty() {
            say!(
                "warning: {}: variables without a value (a header holding one is left out, elsewhere it is sent as written): {}",
                field(&r.name),
                resolved.unknown.join(", ")
            );
        }
        let ctx = engine.request_context();
        let prepared = psd2_console::client::prepare_imported(&resolved.request, &ctx);
        match prepared {
            Ok(req) => match engine.send_recorded(&req).await {
                Ok((ex, recorded)) => {
                    warn_history(&recorded);
                    if let Some(j) = &ex.json {
                        vars.capture(r, j);
                    }
                    tally.count(ex.status);
                    out!(
                        "{}\t{}\t{}",
                        field(&sent_label(r, &req.url)),
                        ex.status,
                        field(first_code(&ex))
                    );
                    if wait_sca && let Some(url) = ex.sca_redirect() {
                        wait_sca_between(&mut engine, &url).await?;
                    }
                }
                Err(e) => {
                    tally.failed += 1;
                    out!(
                        "{}\terror\t{}",
                        field(&sent_label(r, &req.url)),
                        field(&e.to_string())
                    )
                }
            },
            Err(e) => {
                tally.failed += 1;
                out!("{}\tnot sent\t{}", field(&r.name), field(&e.to_string()))
            }
        }
    }
    engine.shutdown().await;
    eprintln!("{}", tally.summary());
    Ok(exit(tally.all_2xx()))
}

/// `import FILE` without `--send`: one `name\tmethod url` line per request; the variables
/// without a value on stderr, those the test scripts set apart from the missing ones.
fn list(all: &[ImportedRequest], vars: &Variables) {
    let mut unknown: Vec<String> = Vec::new();
    for r in all {
        let (url, _) = vars.display_url(r);
        out!("{}\t{} {}", field(&r.name), field(&r.method), field(&url));
        for n in vars.resolve(r).unknown {
            if !unknown.contains(&n) {
                unknown.push(n);
            }
        }
    }
    let (scripted, missing): (Vec<String>, Vec<String>) = unknown
        .into_iter()
        .partition(|n| all.iter().flat_map(|r| &r.sets).any(|s| &s.variable == n));
    if !scripted.is_empty() {
        say!(
            "note: set from responses by the test scripts when sent in order with --send: {}",
            scripted.join(", ")
        );
    }
    if !missing.is_empty() {
        say!(
            "warning: variables without a value (give them with --env FILE): {}",
            missing.join(", ")
        );
    }
}

/// The name of an imported request for a line of `import --send`, naming the URL it was
/// sent to (the profile's target) where the name held the file's URL (`curl 1 GET
/// https://bank.example/v1/accounts` sent to the embedded sandbox reads `curl 1 GET
/// http://127.0.0.1:8088/v1/accounts`): the answer beside it came from there.
fn sent_label(r: &ImportedRequest, sent_url: &str) -> String {
    if !r.url.is_empty() && r.name.contains(&r.url) {
        r.name.replace(&r.url, sent_url)
    } else {
        format!("{} ({sent_url})", r.name)
    }
}

/// Outcomes of `import --send` (and of as-given replays).
#[derive(Default)]
pub(super) struct ImportTally {
    sent: usize,
    ok: usize,
    client: usize,
    server: usize,
    other: usize,
    /// Not sent (could not be built) or no answer.
    pub(super) failed: usize,
}

impl ImportTally {
    /// Counts an answer with HTTP status `status`.
    pub(super) fn count(&mut self, status: u16) {
        self.sent += 1;
        match status {
            200..=299 => self.ok += 1,
            400..=499 => self.client += 1,
            500..=599 => self.server += 1,
            _ => self.other += 1,
        }
    }

    /// Whether every request was answered with 2xx.
    pub(super) fn all_2xx(&self) -> bool {
        self.failed == 0 && self.ok == self.sent
    }

    /// `sent 43: 2xx 40, 4xx 3, 5xx 0` (plus other statuses and failures when any).
    pub(super) fn summary(&self) -> String {
        let mut s = format!(
            "sent {}: 2xx {}, 4xx {}, 5xx {}",
            self.sent, self.ok, self.client, self.server
        );
        if self.other > 0 {
            s.push_str(&format!(", other {}", self.other));
        }
        if self.failed > 0 {
            s.push_str(&format!(", not sent or no answer {}", self.failed));
        }
        s
    }
}

/// `import --send --wait-sca`: prints the link and waits for its callback, applying it.
///
/// Errors: the listener stopped, no callback in time, or the callback could not be applied.
async fn wait_sca_between(engine: &mut Engine, url: &str) -> Result<()> {
    if let Some(e) = &engine.listener_error {
        eprintln!("SCA needed: {url}\nwarning: cannot wait for the SCA callback: {e}");
        return Ok(());
    }
    eprintln!("SCA needed: open {url}\nwaiting for the SCA callback (Ctrl-C gives up)");
    let cb = wait_for_callback(engine, url).await?;
    eprintln!("{}", engine.apply_sca_callback(&cb)?.summary);
    Ok(())
}
