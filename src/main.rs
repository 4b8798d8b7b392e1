//! psd2-console: the console (default), the sandbox server, and command-line tools.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};

use psd2_console::cert::generate::{TppCertSpec, write_set};
use psd2_console::cert::{Certificate, Credentials, Psd2Role};
use psd2_console::client::Engine;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};

/// `println!` for command output. A closed pipe (`psd2-console send --list | head -1`) ends
/// the program quietly with status 0, as Unix tools do, instead of a panic; any other write
/// error is reported and exits 1.
macro_rules! out {
    ($($arg:tt)*) => {{
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            eprintln!("error: writing to standard output: {e}");
            std::process::exit(1);
        }
    }};
}
use psd2_console::signing::{SignOptions, sign_request};
use psd2_console::xs2a::operations::{self, OPERATIONS};
use psd2_console::xs2a::redirect::ScaCallback;

#[derive(Parser)]
#[command(
    name = "psd2-console",
    version,
    about = "Terminal console and embedded sandbox ASPSP for NextGenPSD2 XS2A v1.3 interfaces"
)]
struct Cli {
    /// Profile to open the console on.
    #[arg(long, global = false)]
    profile: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The embedded sandbox ASPSP.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// Send one signed request and print the response JSON (exit 0 for 2xx, 1 otherwise).
    Send {
        /// Operation id (see --list).
        operation: Option<String>,
        /// Profile name.
        #[arg(long, default_value = DEFAULT_PROFILE)]
        profile: String,
        /// Parameter values, name=value.
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
        /// Request body (JSON), sent compact.
        #[arg(long)]
        body_file: Option<PathBuf>,
        /// List operation ids, one per line.
        #[arg(long)]
        list: bool,
        /// On a scaRedirect, print the URL, wait for the SCA callback and send again.
        #[arg(long)]
        wait_sca: bool,
    },
    /// Sign a request and print the headers signing adds, as `Name: value` lines.
    Sign {
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
    },
    /// Certificates.
    Cert {
        #[command(subcommand)]
        command: CertCommand,
    },
    /// Profiles.
    Profile {
        #[command(subcommand)]
        command: ProfileCommand,
    },
    /// Import requests from a cURL file, a HAR file or a Postman v2.1 collection and print
    /// their names; with --send, send each one (re-signed with the profile) and print status.
    Import {
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
    },
    /// The history of exchanges, newest first: id, time, status, operation, URL.
    History {
        /// Only entries whose URL, operation, status or body contain this text.
        #[arg(long)]
        search: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Export an exchange of the history: cURL (signed afresh now, so it runs as-is within
    /// the 60-second Date window) or HAR 1.2 (Signature redacted).
    Export {
        #[arg(long, value_parser = ["curl", "har"])]
        format: String,
        /// History id, or `last`.
        #[arg(default_value = "last")]
        id: String,
        /// For cURL: send to this base URL instead of the profile's target (e.g. a
        /// `sandbox serve` at http://127.0.0.1:8080, since the embedded one ends with the command).
        #[arg(long)]
        base_url: Option<String>,
    },
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Serve the sandbox ASPSP over HTTP.
    Serve {
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        /// Keep the state in memory only (tests); default: <data dir>/sandbox.sqlite3.
        #[arg(long)]
        in_memory: bool,
        /// State database file (default: <data dir>/sandbox.sqlite3).
        #[arg(long, conflicts_with = "in_memory")]
        db: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum CertCommand {
    /// Generate a sandbox CA and a TPP QSealC with PSD2 roles.
    New {
        /// Directory to write into.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// File name stem: <stem>.pem, <stem>.key, <stem>-ca.pem, <stem>-ca.key.
        #[arg(long, default_value = "tpp")]
        name: String,
        /// Roles, comma-separated: PSP_AI, PSP_PI, PSP_AS, PSP_IC.
        #[arg(long, default_value = "PSP_AI,PSP_PI", value_delimiter = ',')]
        roles: Vec<String>,
        /// Subject organisation.
        #[arg(long, default_value = "psd2-console Test TPP")]
        organisation: String,
    },
    /// Show a certificate: serial, keyId, issuer, subject, validity, PSD2 roles.
    Show { file: PathBuf },
}

#[derive(Subcommand)]
enum ProfileCommand {
    /// Profile names, one per line.
    List,
    /// One profile as TOML.
    Show { name: String },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let paths = Paths::from_env();
    match cli.command {
        None => {
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            let name = cli.profile.as_deref().unwrap_or(DEFAULT_PROFILE);
            let profile = profiles.require(name).cloned().map_err(|e| anyhow!(e))?;
            let engine = Engine::start(profile, paths).await?;
            psd2_console::tui::run(engine, profiles).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Sandbox {
            command:
                SandboxCommand::Serve {
                    addr,
                    in_memory,
                    db,
                },
        }) => {
            use psd2_console::sandbox::db::{Storage, default_file};
            let storage = if in_memory {
                Storage::InMemory
            } else {
                Storage::File(db.unwrap_or_else(|| default_file(&paths.data)))
            };
            eprintln!(
                "psd2-console sandbox listening on http://{addr} (state: {})",
                psd2_console::sandbox::db::Db::describe(&storage)
            );
            let config = psd2_console::sandbox::SandboxConfig {
                storage,
                ..Default::default()
            };
            psd2_console::sandbox::serve_forever(addr, config)
                .await
                .with_context(|| format!("serving on {addr}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Send {
            operation,
            profile,
            params,
            body_file,
            list,
            wait_sca,
        }) => {
            if list {
                for op in OPERATIONS {
                    out!("{}\t{} {}\t{}", op.id, op.method, op.path, op.title);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let Some(operation) = operation else {
                bail!("give an operation id (see `psd2-console send --list`)");
            };
            send_command(&paths, &operation, &profile, &params, body_file, wait_sca).await
        }
        Some(Command::Sign {
            cert,
            key,
            method,
            path,
            headers,
            body_file,
            request_target,
        }) => {
            let credentials = Credentials::load(&cert, &key)?;
            let mut hs = Vec::new();
            for h in headers {
                let (n, v) = h
                    .split_once(':')
                    .ok_or_else(|| anyhow!("--header {h:?} is not 'Name: value'"))?;
                hs.push((n.trim().to_string(), v.trim().to_string()));
            }
            let body = match body_file {
                Some(f) => std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?,
                None => Vec::new(),
            };
            let inspection = sign_request(
                &credentials,
                &method.to_ascii_uppercase(),
                &path,
                &mut hs,
                &body,
                SignOptions {
                    request_target,
                    now: std::time::SystemTime::now(),
                },
            );
            let mut out = std::io::stdout().lock();
            for (n, v) in inspection.added_headers {
                writeln!(out, "{n}: {v}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Cert { command }) => match command {
            CertCommand::New {
                dir,
                name,
                roles,
                organisation,
            } => {
                let roles = roles
                    .iter()
                    .map(|r| r.parse::<Psd2Role>().map_err(|e| anyhow!(e)))
                    .collect::<Result<Vec<_>>>()?;
                let written = write_set(
                    &dir,
                    &name,
                    &TppCertSpec {
                        organisation,
                        roles,
                        ..TppCertSpec::default()
                    },
                )?;
                out!("certificate: {}", written.tpp_cert.display());
                out!("key:         {}", written.tpp_key.display());
                out!("CA:          {}", written.ca_cert.display());
                out!("CA key:      {}", written.ca_key.display());
                let c = Certificate::load(&written.tpp_cert)?;
                out!("keyId:       {}", c.key_id());
                Ok(ExitCode::SUCCESS)
            }
            CertCommand::Show { file } => {
                let c = Certificate::load(&file)?;
                print!("{}", describe_certificate(&c));
                Ok(ExitCode::SUCCESS)
            }
        },
        Some(Command::Import {
            file,
            profile,
            send,
            env,
            requests,
        }) => {
            use psd2_console::client::import::{self as imp, Variables};
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let imported = imp::import_file(&text, &file.display().to_string())?;
            let environment = match &env {
                Some(e) => imp::environment(
                    &std::fs::read_to_string(e)
                        .with_context(|| format!("reading {}", e.display()))?,
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
                let mut unknown: Vec<String> = Vec::new();
                for r in all {
                    let (url, _) = vars.display_url(r);
                    out!("{}\t{} {}", r.name, r.method, url);
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
                    eprintln!(
                        "note: set from responses by the test scripts when sent in order with --send: {}",
                        scripted.join(", ")
                    );
                }
                if !missing.is_empty() {
                    eprintln!(
                        "warning: variables without a value (give them with --env FILE): {}",
                        missing.join(", ")
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            let profile = profiles
                .get(&profile)
                .cloned()
                .ok_or_else(|| anyhow!("no profile {profile:?}"))?;
            let engine = Engine::start(profile, paths.clone()).await?;
            let mut queue: std::collections::VecDeque<usize> = if requests.is_empty() {
                (0..all.len()).collect()
            } else {
                requests.iter().map(|n| n - 1).collect()
            };
            let mut deferred = std::collections::HashSet::new();
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
                    eprintln!(
                        "warning: {}: variables without a value (a header holding one is left out, elsewhere it is sent as written): {}",
                        r.name,
                        resolved.unknown.join(", ")
                    );
                }
                let ctx = psd2_console::client::RequestContext {
                    profile: &engine.profile,
                    session: &engine.session,
                    credentials: &engine.credentials,
                    base_url: &engine.base_url,
                    redirect_uri: &engine.redirect_uri,
                    now: engine.now(),
                };
                match psd2_console::client::prepare_imported(&resolved.request, &ctx) {
                    Ok(req) => match engine.send(&req).await {
                        Ok(ex) => {
                            if let Some(j) = &ex.json {
                                vars.capture(r, j);
                            }
                            let code = ex
                                .json
                                .as_ref()
                                .and_then(|j| j["tppMessages"][0]["code"].as_str())
                                .unwrap_or("")
                                .to_string();
                            out!("{}\t{}\t{code}", r.name, ex.status)
                        }
                        Err(e) => out!("{}\terror\t{e}", r.name),
                    },
                    Err(e) => out!("{}\tnot sent\t{e}", r.name),
                }
            }
            engine.shutdown().await;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::History { search, limit }) => {
            let h =
                psd2_console::client::history::History::open(&paths.data.join("history.sqlite3"))?;
            for e in h.list(search.as_deref(), limit)? {
                let at = chrono::DateTime::from_timestamp(e.at, 0)
                    .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                    .unwrap_or_default();
                out!(
                    "{}\t{at}\t{}\t{}\t{} {}",
                    e.id,
                    e.status,
                    e.operation_id,
                    e.method,
                    e.url
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Export {
            format,
            id,
            base_url,
        }) => {
            let h =
                psd2_console::client::history::History::open(&paths.data.join("history.sqlite3"))?;
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
            let credentials = psd2_console::client::engine::ensure_credentials(&profile, &paths)?;
            if let Some(b) = base_url {
                profile.target =
                    psd2_console::profile::Target::Url(b.trim_end_matches('/').to_string());
            }
            let session =
                psd2_console::profile::SessionState::load(&paths.session_file(&profile.slug()))?;
            let base = match &profile.target {
                psd2_console::profile::Target::Url(u) => u.clone(),
                psd2_console::profile::Target::Embedded => {
                    bail!(
                        "the embedded sandbox ends with this command: give --base-url of a running `psd2-console sandbox serve`"
                    )
                }
            };
            let redirect = entry
                .request_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("TPP-Redirect-URI"))
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| "http://127.0.0.1/callback".into());
            let req = psd2_console::client::export::reprepare(
                &entry,
                &psd2_console::client::RequestContext {
                    profile: &profile,
                    session: &session,
                    credentials: &credentials,
                    base_url: &base,
                    redirect_uri: &redirect,
                    now: std::time::SystemTime::now(),
                },
            )?;
            print!("{}", psd2_console::client::export::curl_command(&req));
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Profile { command }) => {
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            for e in &profiles.errors {
                eprintln!("warning: {e}");
            }
            match command {
                ProfileCommand::List => {
                    for p in &profiles.profiles {
                        let target = match &p.target {
                            psd2_console::profile::Target::Embedded => "embedded".to_string(),
                            psd2_console::profile::Target::Url(u) => u.clone(),
                        };
                        out!("{}\t{}", p.name, target);
                    }
                    Ok(ExitCode::SUCCESS)
                }
                ProfileCommand::Show { name } => {
                    let p = profiles
                        .get(&name)
                        .ok_or_else(|| anyhow!("no profile {name:?}"))?;
                    print!("{}", toml::to_string_pretty(p)?);
                    Ok(ExitCode::SUCCESS)
                }
            }
        }
    }
}

fn describe_certificate(c: &Certificate) -> String {
    let fmt_time = |t| psd2_console::signing::imf_fixdate(t);
    let roles: Vec<&str> = c.roles().iter().map(|r| r.name()).collect();
    let mut s = String::new();
    s.push_str(&format!("serial:   {}\n", c.serial_hex()));
    s.push_str(&format!("keyId:    {}\n", c.key_id()));
    s.push_str(&format!("issuer:   {}\n", c.issuer));
    s.push_str(&format!("subject:  {}\n", c.subject));
    s.push_str(&format!(
        "valid:    {} .. {}\n",
        fmt_time(c.not_before_time()),
        fmt_time(c.not_after_time())
    ));
    s.push_str(&format!(
        "roles:    {}\n",
        if roles.is_empty() {
            "(no PSD2 statement)".to_string()
        } else {
            roles.join(", ")
        }
    ));
    if let Some(p) = &c.psd2 {
        s.push_str(&format!("NCA:      {} ({})\n", p.nca_name, p.nca_id));
    }
    s
}

async fn send_command(
    paths: &Paths,
    operation: &str,
    profile: &str,
    params: &[String],
    body_file: Option<PathBuf>,
    wait_sca: bool,
) -> Result<ExitCode> {
    let op = operations::find(operation)
        .ok_or_else(|| anyhow!("no operation {operation:?} (see `psd2-console send --list`)"))?;
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    let profile = profiles
        .require(profile)
        .cloned()
        .map_err(|e| anyhow!("{e} (see `psd2-console profile list`)"))?;
    let mut values = Vec::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| anyhow!("--param {p:?} is not name=value"))?;
        values.push((k.to_string(), v.to_string()));
    }
    let body = match body_file {
        Some(f) => {
            Some(std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?)
        }
        None => None,
    };
    let mut engine = Engine::start(profile, paths.clone()).await?;
    let mut exchange = engine
        .send(&engine.prepare(op, &values, body.as_deref())?)
        .await?;
    if wait_sca && let Some(url) = exchange.sca_redirect() {
        eprintln!("SCA needed: open {url}");
        let _ = open::that_detached(&url);
        match engine.next_callback().await {
            Some(cb) => {
                eprintln!("{}", engine.apply_callback(&cb)?);
                if matches!(cb, ScaCallback::Success(_)) {
                    exchange = engine
                        .send(&engine.prepare(op, &values, body.as_deref())?)
                        .await?;
                }
            }
            None => eprintln!("no SCA callback listener"),
        }
    }
    eprintln!(
        "HTTP {} in {} ms",
        exchange.status,
        exchange.elapsed.as_millis()
    );
    out!("{}", exchange.pretty_body());
    let ok = exchange.is_success();
    engine.shutdown().await;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
