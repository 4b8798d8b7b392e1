//! `sandbox serve` (the sandbox ASPSP over HTTP) and `sandbox fault` (a running sandbox's
//! fault rules, [`psd2_console::client::sandbox_admin`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use clap::Subcommand;

use psd2_console::profile::Paths;

#[derive(Subcommand)]
pub(super) enum SandboxCommand {
    /// Serve the sandbox ASPSP over HTTP (or HTTPS with --tls).
    Serve(ServeArgs),
    /// Fault injection rules of a running sandbox (signed management requests): add, list,
    /// clear.
    Fault {
        #[command(subcommand)]
        command: psd2_console::client::sandbox_admin::FaultCommand,
    },
}

// The `sandbox serve` command's arguments (its help is the variant's doc comment).
#[derive(clap::Args)]
pub(super) struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Keep the state in memory only (tests); default: <data dir>/sandbox.sqlite3.
    #[arg(long)]
    in_memory: bool,
    /// State database: a SQLite file (default: <data dir>/sandbox.sqlite3), or a
    /// PostgreSQL URL postgres://user[:password]@host[:port]/db (the password is never
    /// logged or shown).
    #[arg(long, conflicts_with = "in_memory")]
    db: Option<PathBuf>,
    /// Base URL of the links the sandbox hands out (scaRedirect), e.g.
    /// https://sandbox.example when behind a proxy; never taken from the Host header.
    /// Default: http://{addr}, https://{addr} with --tls.
    #[arg(long, value_parser = parse_public_url)]
    public_url: Option<String>,
    /// Accept a repeated X-Request-ID (turns the replay check off): only for load
    /// benchmarks that send one signed request many times.
    #[arg(long)]
    allow_replays: bool,
    /// File whose first line is the operator token (at least 16 characters): with it in
    /// X-Sandbox-Operator-Token a client on another machine reaches the operator plane
    /// (snapshot, whole state, global reset, every TPP's events); without it only
    /// clients on this machine (a loopback peer address) do.
    #[arg(long)]
    operator_token_file: Option<PathBuf>,
    /// Log lines on stderr (one per request) as text or JSON; filtered by RUST_LOG.
    #[arg(long, value_enum, default_value = "text")]
    log_format: psd2_console::logging::LogFormat,
    /// Customers, accounts, balances, transactions and agreements from a TOML or JSON
    /// file (docs/sandbox.md, "Seed files") instead of the built-in ones; the state is
    /// reset to it at start, and by POST /v1/sandbox/initialize.
    #[arg(long, value_name = "FILE")]
    seed: Option<PathBuf>,
    /// Write the base URL into this file (atomically) once the sandbox is ready (GET
    /// /ready would answer 200): CI waits for the file.
    #[arg(long, value_name = "PATH")]
    ready_file: Option<PathBuf>,
    /// Serve HTTPS (TLS 1.2 and 1.3 only). The server certificate is --tls-cert/--tls-key,
    /// else issued at start by the sandbox CA (`cert ca` prints it) for the address,
    /// localhost and the --public-url host.
    #[arg(long)]
    tls: bool,
    /// Server certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// Private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// TLS client certificates (QWAC): none, optional (checked when sent) or required
    /// (a client without one is refused at the handshake).
    #[arg(long, value_enum, default_value = "none", requires = "tls")]
    client_auth: psd2_console::sandbox::tls::ClientAuth,
    /// More CAs (PEM bundle) trusted for client certificates, besides the sandbox CA.
    #[arg(long, value_name = "FILE", requires = "tls")]
    client_ca: Option<PathBuf>,
}

/// The TLS setup of `serve --tls`: the data directory's sandbox CA (made on first use), the
/// given server certificate and key or none (issued at start), the client-certificate mode
/// and the extra trusted client CAs.
///
/// Errors: the CA, certificate, key or CA bundle files.
fn server_tls(
    paths: &Paths,
    cert_and_key: Option<(PathBuf, PathBuf)>,
    client_auth: psd2_console::sandbox::tls::ClientAuth,
    client_ca: Option<&std::path::Path>,
) -> Result<psd2_console::sandbox::tls::ServerTls> {
    let ca =
        psd2_console::cert::ca::SandboxCa::load_or_create(&paths.data).context("the sandbox CA")?;
    let mut tls = psd2_console::sandbox::tls::ServerTls::new(ca)?.client_auth(client_auth);
    if let Some((cert, key)) = cert_and_key {
        tls = tls.server_cert_files(&cert, &key)?;
    }
    if let Some(file) = client_ca {
        let pem = std::fs::read(file)
            .with_context(|| format!("cannot read --client-ca {}", file.display()))?;
        tls = tls.trust_client_cas(&pem, &file.display().to_string())?;
    }
    Ok(tls)
}

/// `--public-url`: an absolute http(s) URL without query or fragment; kept without its
/// trailing slash.
fn parse_public_url(s: &str) -> Result<String, String> {
    let u = url::Url::parse(s).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || !u.has_host() {
        return Err(format!("{s:?} is not an absolute http(s) URL"));
    }
    if u.query().is_some() || u.fragment().is_some() || !u.username().is_empty() {
        return Err(format!(
            "{s:?} must not have a query, a fragment or credentials"
        ));
    }
    Ok(s.trim_end_matches('/').to_string())
}

/// Runs `command` on the home `paths`: `serve` runs until the process is stopped; `fault`
/// prints what the sandbox answered.
///
/// Errors: the database, operator token, seed file, address or ready file of `serve`; the
/// fault command's [`psd2_console::client::sandbox_admin::AdminError`].
pub(super) async fn run(command: SandboxCommand, paths: &Paths) -> Result<ExitCode> {
    match command {
        SandboxCommand::Serve(args) => serve(args, paths).await,
        SandboxCommand::Fault { command } => {
            let printed = psd2_console::client::sandbox_admin::run(command, paths).await?;
            out!("{printed}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `sandbox serve`: binds, says where it listens, writes the ready file, serves forever.
async fn serve(args: ServeArgs, paths: &Paths) -> Result<ExitCode> {
    let ServeArgs {
        addr,
        in_memory,
        db,
        public_url,
        allow_replays,
        operator_token_file,
        log_format,
        seed,
        ready_file,
        tls,
        tls_cert,
        tls_key,
        client_auth,
        client_ca,
    } = args;
    psd2_console::logging::init_stderr(log_format);
    use psd2_console::sandbox::store::db::{Storage, default_file};
    let storage = match db {
        _ if in_memory => Storage::InMemory,
        Some(db) => match db.to_str() {
            Some(url) => Storage::parse(url),
            None => Storage::File(db),
        },
        None => Storage::File(default_file(&paths.data)),
    };
    let described = psd2_console::sandbox::store::db::Db::describe(&storage);
    let operator_token = operator_token_file
        .as_deref()
        .map(psd2_console::sandbox::http::operator::OperatorToken::from_file)
        .transpose()?;
    let seed = match &seed {
        Some(file) => Some(
            psd2_console::sandbox::domain::seed_file::load(
                file,
                psd2_console::sandbox::Clock::system().today(),
                std::time::SystemTime::now(),
            )
            .map_err(|e| anyhow!("seed file {e}"))?,
        ),
        None => None,
    };
    let tls = if tls {
        Some(server_tls(
            paths,
            tls_cert.zip(tls_key),
            client_auth,
            client_ca.as_deref(),
        )?)
    } else {
        None
    };
    let config = psd2_console::sandbox::SandboxConfig {
        storage,
        public_url,
        allow_replays,
        operator_token,
        seed,
        tls,
        ..Default::default()
    };
    // Bind first, so "listening" is said only once it is true.
    let handle = psd2_console::sandbox::spawn(addr, config)
        .await
        .with_context(|| format!("cannot serve on {addr}"))?;
    eprintln!(
        "psd2-console sandbox listening on {} (state: {described}; request bodies up to {} bytes{})",
        handle.base_url,
        psd2_console::xs2a::limits::MAX_BODY_BYTES,
        if handle.base_url.starts_with("https:") {
            let mode = format!("{client_auth:?}").to_lowercase();
            format!("; TLS 1.2 and 1.3, client certificates: {mode}")
        } else {
            String::new()
        }
    );
    if let Some(file) = ready_file {
        // The router was built over a migrated, initialized database: ready.
        psd2_console::fsutil::write_atomic(
            &file,
            format!("{}\n", handle.base_url).as_bytes(),
            false,
        )
        .with_context(|| format!("writing the ready file {}", file.display()))?;
    }
    let signal = stop_signal().await;
    eprintln!(
        "psd2-console sandbox: {signal}: no new connections; finishing the requests under way (at most {} s)",
        psd2_console::sandbox::DRAIN_TIMEOUT.as_secs()
    );
    handle.shutdown().await;
    eprintln!("psd2-console sandbox stopped");
    Ok(ExitCode::SUCCESS)
}

/// Waits for SIGTERM (a service manager, an orchestrator, `kill`) or SIGINT (ctrl-c) and
/// names it. Where a signal handler cannot be installed only the other ends the wait.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        () = one(&mut term) => "SIGTERM",
        () = one(&mut int) => "SIGINT",
    }
}
