//! `send`: one signed request through the one sender (`client::sender`, as the console's),
//! waiting for SCA on a `scaRedirect`; `--as-given` goes to [`super::replay`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};

use psd2_console::client::engine::{PendingSca, ScaFlow};
use psd2_console::client::{BodyInput, Engine, Exchange};
use psd2_console::profile::{DEFAULT_PROFILE, Paths, Target};
use psd2_console::xs2a::operations::{self, OPERATIONS, Operation};
use psd2_console::xs2a::redirect::ScaCallback;

use super::{
    LintMode, exit, lint_asked, print_lint, require_profile, start_cli_engine, wait_for_callback,
    warn_history,
};

// The `send` command's arguments (its help is the variant's doc comment in `Command`).
#[derive(clap::Args)]
pub(super) struct SendArgs {
    /// Operation id (see --list).
    operation: Option<String>,
    /// Profile name.
    #[arg(long, default_value = DEFAULT_PROFILE)]
    profile: String,
    /// Parameter values, name=value.
    #[arg(long = "param", value_name = "K=V")]
    params: Vec<String>,
    /// Request body (JSON), sent compact.
    #[arg(long, conflicts_with = "raw_body")]
    body_file: Option<PathBuf>,
    /// Request body sent byte for byte as in the file (may be invalid JSON or not
    /// UTF-8); the Digest covers exactly these bytes.
    #[arg(long, value_name = "FILE")]
    raw_body: Option<PathBuf>,
    /// List operation ids, one per line.
    #[arg(long)]
    list: bool,
    /// On a scaRedirect, print the URL and wait for the SCA callback; then read the
    /// status of a payment, basket or consent (exit 0 when approved), or send an account
    /// read again. The default on an embedded profile.
    #[arg(long, conflicts_with = "no_wait")]
    wait_sca: bool,
    /// Do not wait for SCA (on an embedded profile the printed link dies with the command).
    #[arg(long)]
    no_wait: bool,
    /// Check the response against the Berlin Group 1.3.11 schemas and the interface
    /// document's response rules; print the findings after the body, one per line
    /// (`lint: no findings` when clean). `--lint=strict` also exits 1 on an error finding.
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "report")]
    lint: Option<LintMode>,
    /// Replay the one request recorded in FILE (HAR entry, cURL command or raw HTTP) as
    /// given: every header and the exact body bytes, to the profile's target (path and
    /// query kept); Date, Digest, TPP-Signature-Certificate and Signature are made again
    /// with the profile's certificate. Does not wait for SCA (the link is printed).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["operation", "params", "body_file", "raw_body", "list", "wait_sca"])]
    as_given: Option<PathBuf>,
    /// With --as-given: keep the recorded signature too, changing nothing but the host
    /// (to reproduce a TIMESTAMP_INVALID or SIGNATURE_INVALID answer).
    #[arg(long, requires = "as_given")]
    keep_signature: bool,
    /// Print the TLS session of the exchange to stderr after the status line: TLS
    /// version, cipher suite, the server's certificate chain (subject, issuer, validity,
    /// SAN), whether the server asked for a client certificate (the CAs it named) and which
    /// was sent (subject, serial). Over plain HTTP it says so.
    #[arg(long, conflicts_with = "as_given")]
    tls: bool,
}

/// The body of `send`.
enum SendBody {
    Default,
    Json(String),
    Raw(Vec<u8>),
}

impl SendBody {
    /// The engine's view of this body.
    fn input(&self) -> BodyInput<'_> {
        match self {
            SendBody::Default => BodyInput::Default,
            SendBody::Json(t) => BodyInput::Json(t),
            SendBody::Raw(b) => BodyInput::Raw(b),
        }
    }
}

/// Runs `send` on the home `paths`: `--list`, `--as-given`, or one operation.
///
/// Errors: no operation given, a body file, and those of [`send_command`].
pub(super) async fn run(args: SendArgs, paths: &Paths) -> Result<ExitCode> {
    let SendArgs {
        operation,
        profile,
        params,
        body_file,
        raw_body,
        list,
        wait_sca,
        no_wait,
        lint,
        as_given,
        keep_signature,
        tls,
    } = args;
    if let Some(file) = as_given {
        return super::replay::run(paths, &file, &profile, keep_signature, &[], Some(lint)).await;
    }
    if list {
        for op in OPERATIONS {
            out!("{}\t{} {}\t{}", op.id, op.method, op.path, op.title);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(operation) = operation else {
        bail!("give an operation id (see `psd2-console send --list`)");
    };
    let body = match (body_file, raw_body) {
        (Some(f), _) => SendBody::Json(
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?,
        ),
        (None, Some(f)) => {
            SendBody::Raw(std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?)
        }
        (None, None) => SendBody::Default,
    };
    let wait = match (wait_sca, no_wait) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let show = Show { lint, tls };
    send_command(paths, &operation, &profile, &params, body, wait, show).await
}

/// What `send` prints besides the body.
struct Show {
    /// `--lint`.
    lint: Option<LintMode>,
    /// `--tls`.
    tls: bool,
}

/// `send`: prepares, signs and sends one request. `wait`: `Some(true)` waits for SCA on a
/// `scaRedirect`, `Some(false)` does not, `None` waits on an embedded profile only (its
/// sandbox, and so the SCA link, lives only as long as this process).
///
/// After SCA: a payment, basket or consent is not sent again; its status is read and
/// printed with its id (exit 0 when approved, 1 otherwise). An account read is sent again.
///
/// Errors: an unknown operation or profile, a `--param` without `=`, preparing or sending,
/// no SCA callback in time.
async fn send_command(
    paths: &Paths,
    operation: &str,
    profile: &str,
    params: &[String],
    body: SendBody,
    wait: Option<bool>,
    show: Show,
) -> Result<ExitCode> {
    let lint = show.lint;
    let op = operations::find(operation)
        .ok_or_else(|| anyhow!("no operation {operation:?} (see `psd2-console send --list`)"))?;
    let profile = require_profile(paths, profile)?;
    let mut values = Vec::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| anyhow!("--param {p:?} is not name=value"))?;
        values.push((k.to_string(), v.to_string()));
    }
    let embedded = profile.target == Target::Embedded;
    let wait = wait.unwrap_or(embedded);
    let mut engine = start_cli_engine(profile, paths.clone()).await?;
    // The one sender (`client::sender`), as the console's: recorded, response signature
    // checked, the SCA wait armed for this request's `sca-ref`.
    let prepared = engine.prepare_to_send(op, &values, body.input())?;
    let mut asked = lint_asked(&prepared);
    let sent = engine.send_full(prepared).await?;
    warn_history(&sent.recorded);
    if let Some(sig) = &sent.signature {
        eprintln!("{}", sig.summary());
    }
    let tls_lines = match &sent.tls {
        Some(t) => t.lines(),
        None => vec![format!("TLS: none (plain HTTP to {})", engine.base_url)],
    };
    let mut exchange = sent.exchange;
    let mut status_ok = None;
    if let Some(url) = exchange.sca_redirect() {
        if !wait {
            eprintln!("SCA needed: {url}");
            if embedded && engine.shares_sandbox() {
                eprintln!(
                    "note: the console's embedded sandbox serves this link: it stays valid while \
                     the console runs"
                );
            } else if embedded {
                eprintln!(
                    "note: this link dies with this command (the embedded sandbox stops when it ends); \
                     leave out --no-wait to complete SCA while the command waits"
                );
            }
        } else if let Some(e) = &engine.listener_error {
            eprintln!("SCA needed: {url}\nwarning: cannot wait for the SCA callback: {e}");
        } else {
            eprintln!("SCA needed: open {url}");
            if embedded && !engine.shares_sandbox() {
                eprintln!(
                    "waiting for the SCA callback: the embedded sandbox, and so this link, lives only \
                     as long as this command (Ctrl-C gives up; --no-wait does not wait)"
                );
            } else {
                eprintln!("waiting for the SCA callback (Ctrl-C gives up)");
            }
            let cb = wait_for_callback(&mut engine, &url).await?;
            let applied = engine.apply_sca_callback(&cb)?;
            eprintln!("{}", applied.summary);
            let flow = applied.flow.unwrap_or_else(|| {
                PendingSca::from_response(
                    "",
                    &exchange_url(&engine, op, &values),
                    exchange.json.as_ref(),
                    &url,
                )
            });
            match flow.flow {
                ScaFlow::AisRead => {
                    if matches!(cb, ScaCallback::Success(_)) {
                        let prepared = engine.prepare_to_send(op, &values, body.input())?;
                        asked = lint_asked(&prepared);
                        let (ex, recorded) = engine.send_recorded(&prepared).await?;
                        warn_history(&recorded);
                        exchange = ex;
                    }
                }
                _ => {
                    let read = status_after_sca(&engine, &flow).await?;
                    status_ok = Some(read.approved);
                    if let Some(path) = &flow.status_path {
                        asked = psd2_console::lint::Asked::request("GET", path);
                    }
                    exchange = read.exchange;
                }
            }
        }
    }
    eprintln!(
        "HTTP {} in {} ms",
        exchange.status,
        exchange.elapsed.as_millis()
    );
    if show.tls {
        for l in &tls_lines {
            eprintln!("{l}");
        }
    }
    out!("{}", exchange.pretty_body());
    let lint_failed = match lint {
        Some(mode) => print_lint(&asked, &exchange) && mode == LintMode::Strict,
        None => false,
    };
    let ok = status_ok.unwrap_or_else(|| exchange.is_success()) && !lint_failed;
    engine.shutdown().await;
    Ok(exit(ok))
}

/// The status read after the SCA of a payment, basket or consent.
struct StatusRead {
    /// The status answer, its JSON led by the resource's id (`paymentId`, `basketId`,
    /// `consentId`).
    exchange: Exchange,
    /// The one verdict (`xs2a::status`): ACCP is a rejection for lack of funds in the
    /// interface document, so it is not approved.
    approved: bool,
}

/// Reads the status of `flow`'s resource after its SCA and says it on stderr.
///
/// Errors: the status read's.
async fn status_after_sca(engine: &Engine, flow: &PendingSca) -> Result<StatusRead> {
    let st = engine.status_after_sca(flow).await?;
    eprintln!("{}", st.summary());
    let mut shown = serde_json::Map::new();
    let id_key = match flow.flow {
        ScaFlow::Payment => "paymentId",
        ScaFlow::Basket => "basketId",
        _ => "consentId",
    };
    if let Some(id) = &st.resource_id {
        shown.insert(id_key.into(), id.clone().into());
    }
    if let Some(serde_json::Value::Object(m)) = &st.exchange.json {
        shown.extend(m.clone());
    }
    let approved = st.verdict.is_approved();
    let mut exchange = st.exchange;
    if !shown.is_empty() {
        exchange.json = Some(serde_json::Value::Object(shown));
    }
    Ok(StatusRead { exchange, approved })
}

/// The URL `op` was sent to (for a flow the engine did not record).
fn exchange_url(engine: &Engine, op: &Operation, values: &[(String, String)]) -> String {
    format!(
        "{}{}",
        engine.base_url,
        op.path_and_query(values).unwrap_or_default()
    )
}
