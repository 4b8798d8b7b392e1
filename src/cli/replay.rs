//! `send --as-given FILE` and `import FILE --as-given --send`: requests replayed as recorded
//! ([`psd2_console::client::replay`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};

use psd2_console::client::replay::{self, SignatureMode};
use psd2_console::profile::Paths;

use super::import::ImportTally;
use super::{
    LintMode, exit, field, first_code, lint_asked, print_lint, require_profile, start_cli_engine,
    warn_history,
};

/// `send --as-given FILE` (`single` is `Some(lint)`: the file must hold one request; its
/// response body is printed, then the lint's findings when `lint` asks, as `send --lint`)
/// and `import FILE --as-given --send` (`single` is `None`: each request, or those of
/// `selection`, 1-based: one `source\tstatus\tcode` line each and a summary). What was
/// changed is said on stderr for each. Exit 0 when every answer is 2xx (and, with
/// `--lint=strict`, has no error finding).
///
/// Errors: the file, a file of several requests for `send`, a `--request` out of range,
/// no such profile, the engine's start; for `send`, preparing or sending the request.
pub(super) async fn run(
    paths: &Paths,
    file: &Path,
    profile: &str,
    keep_signature: bool,
    selection: &[usize],
    single: Option<Option<LintMode>>,
) -> Result<ExitCode> {
    let all = replay::read_file(file)?;
    if single.is_some() && all.len() != 1 {
        bail!(
            "{} holds {} requests: `send --as-given` replays one (use `import {} --as-given --send --request N`)",
            file.display(),
            all.len(),
            file.display()
        );
    }
    if let Some(bad) = selection.iter().find(|n| **n == 0 || **n > all.len()) {
        bail!("--request {bad}: the file has requests 1 to {}", all.len());
    }
    let profile = require_profile(paths, profile)?;
    let engine = start_cli_engine(profile, paths.clone()).await?;
    let mode = match keep_signature {
        true => SignatureMode::Keep,
        false => SignatureMode::Remake,
    };
    let mut tally = ImportTally::default();
    let mut lint_failed = false;
    let chosen: Vec<usize> = match selection.is_empty() {
        true => (0..all.len()).collect(),
        false => selection.iter().map(|n| n - 1).collect(),
    };
    for i in chosen {
        let (source, recorded) = &all[i];
        let ctx = engine.request_context();
        let sent = match replay::prepare_as_given(recorded, source, &ctx, mode) {
            Ok(prepared) => {
                say!("{}", prepared.describe(&engine.profile.name));
                replay::send_replay(&engine, &prepared)
                    .await
                    .map(|sent| (sent, lint_asked(&prepared.request)))
                    .map_err(|e| ("error", e))
            }
            Err(e) => Err(("not sent", e)),
        };
        let ((ex, recorded), asked) = match sent {
            Ok(sent) => sent,
            Err((what, e)) if single.is_none() => {
                tally.failed += 1;
                out!("{}\t{what}\t{}", field(source), field(&e.to_string()));
                continue;
            }
            Err((_, e)) => return Err(e.into()),
        };
        warn_history(&recorded);
        tally.count(ex.status);
        if let Some(url) = ex.sca_redirect() {
            say!("SCA needed: {url}");
        }
        if let Some(lint) = single {
            eprintln!("HTTP {} in {} ms", ex.status, ex.elapsed.as_millis());
            out!("{}", ex.pretty_body());
            if let Some(mode) = lint {
                lint_failed |= print_lint(&asked, &ex) && mode == LintMode::Strict;
            }
        } else {
            out!(
                "{}\t{}\t{}",
                field(source),
                ex.status,
                field(first_code(&ex))
            );
        }
    }
    engine.shutdown().await;
    if single.is_none() {
        eprintln!("{}", tally.summary());
    }
    Ok(exit(tally.all_2xx() && !lint_failed))
}
