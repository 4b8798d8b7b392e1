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
use psd2_console::embedded::start_engine;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};

/// mimalloc instead of glibc's malloc: allocation was about 13 % of the sandbox's CPU per
/// signed read under load (perf; BENCHMARKS.md, "Everyday reads").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `println!` for command output, control characters escaped
/// ([`psd2_console::terminal::escape_output`]: text from a file or an answer never drives the
/// terminal). A closed pipe (`psd2-console send --list | head -1`) ends the program quietly
/// with status 0, as Unix tools do, instead of a panic; any other write error is reported
/// and exits 1.
macro_rules! out {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        if let Err(e) = writeln!(
            std::io::stdout(),
            "{}",
            psd2_console::terminal::escape_output(&text)
        ) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            eprintln!("error: writing to standard output: {e}");
            std::process::exit(1);
        }
    }};
}
/// `eprintln!` for what a command says on stderr about a file's requests or an answer:
/// control characters escaped ([`psd2_console::terminal::escape_output`]).
macro_rules! say {
    ($($arg:tt)*) => {{
        let text = format!($($arg)*);
        eprintln!("{}", psd2_console::terminal::escape_output(&text));
    }};
}

/// One field of a one-line output (a method, URL or name from a file) with every control
/// character escaped, line feed and tab too ([`psd2_console::terminal::escape_controls`]).
fn field(s: &str) -> std::borrow::Cow<'_, str> {
    psd2_console::terminal::escape_controls(s)
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
    /// Open the console on a case bundle (`case export`): in a fresh home under the data
    /// directory, on the case's profile and sandbox state.
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    case: Option<PathBuf>,
    /// Room mode: the embedded sandbox and the SCA callback listener listen on ADDR (this
    /// machine's address on the room's network, e.g. 192.168.1.20) instead of 127.0.0.1, and
    /// scaRedirect links and the TPP-Redirect-URI name it, so phones in the room open them.
    /// Wins over the profile's `listen`. The console shows a banner while it is on.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    listen: Option<std::net::IpAddr>,
    /// Open the console giving a lesson: its id, the file name without `.toml` of a
    /// built-in lesson (`lessons/`) or one of `<config>/lessons` (e.g. `domestic-payment`).
    #[arg(long, value_name = "NAME")]
    lesson: Option<String>,
    /// Start the console in presenter mode (P toggles it): signatures, certificates and PSU
    /// data masked on screen, the high-contrast theme, the step in words, compact layouts
    /// for 80×24 and 100×30 projectors.
    #[arg(long)]
    presenter: bool,
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
    },
    /// The history of exchanges, newest first: id, time, status, operation, URL.
    History {
        /// Only entries with this text anywhere: URL, operation, status, header values
        /// (X-Request-ID, TPP-Session-ID, PSU-ID, ...), bodies (paymentId, consentId, ...).
        #[arg(long)]
        search: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// `text` (tab-separated lines) or `json` (an array of the entries, bodies left out).
        #[arg(long, value_parser = ["text", "json"], default_value = "text")]
        format: String,
    },
    /// The flow of a session as a sequence diagram (TPP, ASPSP, PSU browser, callback
    /// listener), each arrow with the rule of the interface document it shows. Without
    /// arguments: the latest flow (the newest exchange's TPP-Session-ID).
    Flow {
        #[arg(long, value_parser = ["mermaid", "text"], default_value = "text")]
        format: String,
        /// The exchanges of this TPP-Session-ID.
        #[arg(long, conflicts_with = "ids")]
        session: Option<String>,
        /// History ids, in the order to draw them.
        ids: Vec<i64>,
    },
    /// Case bundles: export exchanges, the certificate and the sandbox state to one file;
    /// open one into an isolated home.
    Case {
        #[command(subcommand)]
        command: psd2_console::case::cli::CaseCommand,
    },
    /// Why does this request fail? Checks a recorded request (HAR, cURL, raw HTTP, or a
    /// history id) offline as the bank does; exit 0 when every check passes, 1 when one
    /// fails, 2 for unreadable input.
    Doctor(psd2_console::doctor::cli::DoctorArgs),
    /// Headless SCA at a psd2-console sandbox, for tests and CI.
    Sca {
        #[command(subcommand)]
        command: ScaCommand,
    },
    /// Export an exchange of the history: cURL (signed afresh now, so it runs as-is within
    /// the 60-second Date window), HAR 1.2 (Signature redacted), or a Python, Node, Java or
    /// Go program that signs the request afresh each time it runs (README, "From the
    /// console to your code").
    Export {
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
    },
}

#[derive(Subcommand)]
enum ScaCommand {
    /// Walk the SCA pages of a scaRedirect link as a browser would (cookie, per-step tokens,
    /// the same forms) and print the callback parameters; exit 0 when the SCA ended as asked
    /// and the redirect reached the TPP-Redirect-URI, 1 otherwise, 2 for a link that is not a
    /// psd2-console sandbox's.
    Complete(psd2_console::client::headless_sca::CompleteArgs),
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
        /// Base URL of the links the sandbox hands out (scaRedirect), e.g.
        /// https://sandbox.example when behind a proxy; never taken from the Host header.
        /// Default: http://{addr}.
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
    },
    /// Fault injection rules of a running sandbox (signed management requests): add, list,
    /// clear.
    Fault {
        #[command(subcommand)]
        command: psd2_console::client::sandbox_admin::FaultCommand,
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
        /// Overwrite existing files of the set (without it, existing files are an error).
        #[arg(long)]
        force: bool,
    },
    /// Show a certificate: serial, keyId, issuer, subject, validity, PSD2 roles.
    Show { file: PathBuf },
}

#[derive(Subcommand)]
enum ProfileCommand {
    /// Profiles, one per line: name and target (tab-separated); the directory of the
    /// profile files on stderr.
    List,
    /// One profile as TOML.
    Show { name: String },
}

/// `--listen`: an IP address links can name ([`psd2_console::profile::check_listen_address`]).
fn parse_listen(s: &str) -> Result<std::net::IpAddr, String> {
    psd2_console::profile::check_listen_address(s)
}

/// [`psd2_console::embedded::start_command_engine`] for a command-line command (beside a
/// console on the same home it uses the console's sandbox, and says so on stderr); in room
/// mode it says on stderr that the embedded sandbox and the callback listener are reachable
/// from the network.
async fn start_cli_engine(profile: psd2_console::profile::Profile, paths: Paths) -> Result<Engine> {
    let engine = psd2_console::embedded::start_command_engine(profile, paths).await?;
    if engine.shares_sandbox() {
        eprintln!(
            "using the embedded sandbox of the psd2-console running on this data directory ({}); \
             SCA callback listener on {}",
            engine.base_url, engine.redirect_uri
        );
    }
    if let Some(addr) = engine.room_address() {
        eprintln!(
            "room mode: reachable from the network on {addr}: {}the SCA callback listener ({})",
            match engine.profile.target {
                psd2_console::profile::Target::Embedded =>
                    format!("the embedded sandbox ({}) and ", engine.base_url),
                _ => String::new(),
            },
            engine.redirect_uri
        );
    }
    Ok(engine)
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
            say!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let mut paths = Paths::from_env();
    let mut cli_profile = cli.profile.clone();
    if let Some(addr) = cli.listen {
        if matches!(cli.command, Some(Command::Sandbox { .. })) {
            bail!("--listen is for the console and its commands; `sandbox serve` takes --addr");
        }
        psd2_console::embedded::listen_on(addr);
    }
    if cli.presenter && cli.command.is_some() {
        bail!("--presenter starts the console in presenter mode: give it without a command");
    }
    if let Some(file) = &cli.case {
        if cli.command.is_some() {
            bail!("--case opens the console: give it without a command");
        }
        let opened = psd2_console::case::open::open_fresh(file, &paths.data)?;
        eprintln!("{}", opened.summary());
        paths = opened.paths;
        cli_profile = Some(opened.profile);
    }
    if cli.lesson.is_some() && cli.command.is_some() {
        bail!("--lesson opens the console: give it without a command");
    }
    match cli.command {
        None => {
            // An unknown lesson is reported before the terminal is taken.
            let lesson = match &cli.lesson {
                Some(name) => {
                    let dir = psd2_console::lessons::lessons_dir(&paths);
                    let set = psd2_console::lessons::LessonSet::load(Some(&dir));
                    Some(set.require(name, &dir).map_err(|e| anyhow!(e))?.clone())
                }
                None => None,
            };
            // The TUI owns the terminal: logs go to <data dir>/console.log (0600).
            psd2_console::logging::init_file(&psd2_console::logging::console_log_file(&paths.data))
                .with_context(|| format!("opening the log file in {}", paths.data.display()))?;
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            let name = cli_profile.as_deref().unwrap_or(DEFAULT_PROFILE);
            let profile = profiles.require(name).cloned().map_err(|e| anyhow!(e))?;
            let engine = start_engine(profile, paths).await?;
            let options = psd2_console::tui::RunOptions {
                presenter: cli.presenter,
                lesson,
            };
            psd2_console::tui::run_with(engine, profiles, options).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Sandbox {
            command:
                SandboxCommand::Serve {
                    addr,
                    in_memory,
                    db,
                    public_url,
                    allow_replays,
                    operator_token_file,
                    log_format,
                    seed,
                    ready_file,
                },
        }) => {
            psd2_console::logging::init_stderr(log_format);
            use psd2_console::sandbox::store::db::{Storage, default_file};
            let storage = if in_memory {
                Storage::InMemory
            } else {
                Storage::File(db.unwrap_or_else(|| default_file(&paths.data)))
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
            let config = psd2_console::sandbox::SandboxConfig {
                storage,
                public_url,
                allow_replays,
                operator_token,
                seed,
                ..Default::default()
            };
            // Bind first, so "listening" is said only once it is true.
            let handle = psd2_console::sandbox::spawn(addr, config)
                .await
                .with_context(|| format!("cannot serve on {addr}"))?;
            eprintln!(
                "psd2-console sandbox listening on {} (state: {described}; request bodies up to {} bytes)",
                handle.base_url,
                psd2_console::xs2a::limits::MAX_BODY_BYTES
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
            std::future::pending::<()>().await;
            drop(handle);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Sca {
            command: ScaCommand::Complete(args),
        }) => {
            let done = psd2_console::client::headless_sca::run(&args).await;
            if !done.stdout.is_empty() {
                out!("{}", done.stdout);
            }
            if !done.stderr.is_empty() {
                say!("{}", done.stderr);
            }
            Ok(ExitCode::from(done.code))
        }
        Some(Command::Sandbox {
            command: SandboxCommand::Fault { command },
        }) => {
            let printed = psd2_console::client::sandbox_admin::run(command, &paths).await?;
            out!("{printed}");
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Send {
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
        }) => {
            if let Some(file) = as_given {
                return replay_command(&paths, &file, &profile, keep_signature, &[], Some(lint))
                    .await;
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
                (Some(f), _) => SendBody::Json(read_text(&f)?),
                (None, Some(f)) => SendBody::Raw(
                    std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?,
                ),
                (None, None) => SendBody::Default,
            };
            let wait = match (wait_sca, no_wait) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            };
            send_command(&paths, &operation, &profile, &params, body, wait, lint).await
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
            for (n, v) in inspection.added_headers {
                out!("{n}: {v}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Cert { command }) => match command {
            CertCommand::New {
                dir,
                name,
                roles,
                organisation,
                force,
            } => {
                let existing: Vec<String> =
                    psd2_console::cert::generate::WrittenSet::paths(&dir, &name)
                        .existing()
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                if !force && !existing.is_empty() {
                    bail!(
                        "not overwriting {} (give --force to replace them, or another --name or --dir)",
                        existing.join(", ")
                    );
                }
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
                let now = psd2_console::cert::unix_seconds(std::time::SystemTime::now());
                let text = describe_certificate(&c, now);
                out!("{}", text.trim_end());
                Ok(ExitCode::SUCCESS)
            }
        },
        Some(Command::Import {
            file,
            profile,
            send,
            env,
            requests,
            wait_sca,
            as_given,
            keep_signature,
        }) => {
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
                return replay_command(&paths, &file, &profile, keep_signature, &requests, None)
                    .await;
            }
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
                return Ok(ExitCode::SUCCESS);
            }
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            let profile = profiles
                .get(&profile)
                .cloned()
                .ok_or_else(|| anyhow!("no profile {profile:?}"))?;
            let mut engine = start_cli_engine(profile, paths.clone()).await?;
            let mut tally = ImportTally::default();
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
                            let code = ex
                                .json
                                .as_ref()
                                .and_then(|j| j["tppMessages"][0]["code"].as_str())
                                .unwrap_or("")
                                .to_string();
                            tally.count(ex.status);
                            out!(
                                "{}\t{}\t{}",
                                field(&sent_label(r, &req.url)),
                                ex.status,
                                field(&code)
                            );
                            if wait_sca && let Some(url) = ex.sca_redirect() {
                                import_wait_sca(&mut engine, &url).await?;
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
            Ok(if tally.all_2xx() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Some(Command::Case { command }) => {
            out!("{}", psd2_console::case::cli::run(&paths, command).await?);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Doctor(args)) => Ok(psd2_console::doctor::cli::run(
            &args,
            &paths,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )),
        Some(Command::History {
            search,
            limit,
            format,
        }) => {
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
            let h = open_history(&paths)?;
            let mut json = Vec::new();
            for e in h.list(search.as_deref(), limit)? {
                let at = chrono::DateTime::from_timestamp(e.at, 0)
                    .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                    .unwrap_or_default();
                let replay = h.replay_info(e.id)?;
                if format == "json" {
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
            if format == "json" {
                out!("{}", serde_json::to_string_pretty(&json)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Flow {
            format,
            session,
            ids,
        }) => {
            use psd2_console::flow;
            let h = open_history(&paths)?;
            let entries = if !ids.is_empty() {
                let mut picked = Vec::new();
                for id in ids {
                    picked.push(h.get(id)?.ok_or_else(|| anyhow!("no history entry {id}"))?);
                }
                picked
            } else {
                let recent = h.list(None, flow::HISTORY_WINDOW)?;
                match session {
                    Some(s) => flow::session(&recent, &s),
                    None => flow::latest_session(&recent, flow::GAP_SECONDS),
                }
            };
            if entries.is_empty() {
                return Err(anyhow!("no exchanges for that flow in the history"));
            }
            // The PSU browser's steps the console saw on the embedded sandbox's event stream.
            let steps = flow::steps_of(&h, &entries).unwrap_or_default();
            let f = flow::Flow::from_history_and_steps(&entries, &steps);
            let text = match format.as_str() {
                "mermaid" => f.to_mermaid(),
                _ => f.to_text(),
            };
            out!("{}", text.trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Export {
            format,
            id,
            base_url,
        }) => {
            let h = open_history(&paths)?;
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
            let mut now = std::time::SystemTime::now();
            let base = match &profile.target {
                psd2_console::profile::Target::Url(u) => u.clone(),
                psd2_console::profile::Target::Embedded => {
                    // The embedded sandbox's fixed address, served while a console runs on
                    // this home; signed at that sandbox's clock when it answers.
                    let profile = psd2_console::embedded::as_started(profile.clone());
                    if profile.sandbox_port() == 0 {
                        bail!(
                            "profile {:?} gives its embedded sandbox any free port (sandbox_port = 0 or {}=1), so no address is known: give --base-url (e.g. of a running `psd2-console sandbox serve`)",
                            profile.name,
                            psd2_console::profile::FREE_PORTS_ENV
                        );
                    }
                    let addr = SocketAddr::new(profile.listen_address(), profile.sandbox_port());
                    let key = psd2_console::embedded::instance_key(&paths.data)?;
                    match psd2_console::embedded::probe(addr, &key).await {
                        psd2_console::embedded::Holder::SameHome {
                            base_url,
                            offset_ms,
                        } => {
                            now = psd2_console::embedded::shifted(now, offset_ms);
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
                    now,
                },
            )?;
            if let Some(lang) = psd2_console::client::codegen::Language::from_name(&format) {
                use psd2_console::client::codegen;
                let (cert, key) = codegen::credential_files(&profile, &paths)?;
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
        Some(Command::Profile { command }) => {
            let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
            for e in &profiles.errors {
                eprintln!("warning: {e}");
            }
            match command {
                ProfileCommand::List => {
                    // The directory the profile files live in (profiles/*.toml say to look
                    // here for it); on stderr, so stdout stays one profile per line.
                    eprintln!(
                        "profiles directory: {} (a NAME.toml file there adds a profile)",
                        paths.profiles_dir().display()
                    );
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

/// Roles `cert show` checks for: account information and payment initiation, the roles the
/// console's operations need (a certificate without them gets `ROLE_INVALID`).
const EXPECTED_ROLES: [Psd2Role; 2] = [Psd2Role::PspAi, Psd2Role::PspPi];

/// `cert show`: the fields, then the verdict on validity at `now` (Unix seconds) and the
/// missing PSD2 roles, from the same functions as the console's profile inspector
/// ([`Certificate::validity_at`], [`Certificate::missing_roles`]).
fn describe_certificate(c: &Certificate, now: i64) -> String {
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
    use psd2_console::cert::Validity;
    let days = |secs: i64| secs.div_euclid(86_400);
    let verdict = match c.validity_at(now) {
        Validity::NotYetValid { starts_in } => format!(
            "not yet valid (starts in {} days; a bank refuses it until then)",
            days(starts_in)
        ),
        Validity::Expired { ago } => format!(
            "expired {} days ago (a bank refuses it: make a new one with `cert new`)",
            days(ago)
        ),
        Validity::ExpiresSoon { days } => format!("valid, expires in {days} days"),
        Validity::Valid { days_left } => format!("valid ({days_left} days left)"),
    };
    s.push_str(&format!("verdict:  {verdict}\n"));
    let missing: Vec<&str> = c
        .missing_roles(&EXPECTED_ROLES)
        .iter()
        .map(|r| r.name())
        .collect();
    if !missing.is_empty() {
        s.push_str(&format!(
            "missing:  {} (operations needing {} are refused with ROLE_INVALID)\n",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ));
    }
    s
}

/// The name of an imported request for a line of `import --send`, naming the URL it was
/// sent to (the profile's target) where the name held the file's URL (`curl 1 GET
/// https://bank.example/v1/accounts` sent to the embedded sandbox reads `curl 1 GET
/// http://127.0.0.1:8088/v1/accounts`): the answer beside it came from there.
fn sent_label(r: &psd2_console::client::import::ImportedRequest, sent_url: &str) -> String {
    if !r.url.is_empty() && r.name.contains(&r.url) {
        r.name.replace(&r.url, sent_url)
    } else {
        format!("{} ({sent_url})", r.name)
    }
}

/// Outcomes of `import --send`.
#[derive(Default)]
struct ImportTally {
    sent: usize,
    ok: usize,
    client: usize,
    server: usize,
    other: usize,
    /// Not sent (could not be built) or no answer.
    failed: usize,
}

impl ImportTally {
    fn count(&mut self, status: u16) {
        self.sent += 1;
        match status {
            200..=299 => self.ok += 1,
            400..=499 => self.client += 1,
            500..=599 => self.server += 1,
            _ => self.other += 1,
        }
    }

    fn all_2xx(&self) -> bool {
        self.failed == 0 && self.ok == self.sent
    }

    /// `sent 43: 2xx 40, 4xx 3, 5xx 0` (plus other statuses and failures when any).
    fn summary(&self) -> String {
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
async fn import_wait_sca(engine: &mut Engine, url: &str) -> Result<()> {
    if let Some(e) = &engine.listener_error {
        eprintln!("SCA needed: {url}\nwarning: cannot wait for the SCA callback: {e}");
        return Ok(());
    }
    eprintln!("SCA needed: open {url}\nwaiting for the SCA callback (Ctrl-C gives up)");
    open_browser(url);
    match tokio::time::timeout(SCA_WAIT, engine.next_callback()).await {
        Ok(Some(cb)) => eprintln!("{}", engine.apply_sca_callback(&cb)?.summary),
        Ok(None) => bail!("the SCA callback listener stopped"),
        Err(_) => bail!("no SCA callback within {} minutes", SCA_WAIT.as_secs() / 60),
    }
    Ok(())
}

/// The body of `send`.
enum SendBody {
    Default,
    Json(String),
    Raw(Vec<u8>),
}

/// Reads a text file; the I/O error is said once, with the path.
/// The console's history database (`history.sqlite3` of `paths`), which must exist.
///
/// Errors: the file is missing or is not a history database.
fn open_history(paths: &Paths) -> Result<psd2_console::client::history::History> {
    psd2_console::client::history::History::open_existing(&paths.history_file())
        .map_err(|e| anyhow!(e))
}

fn read_text(f: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))
}

/// How long `send` waits for an SCA callback: the sandbox's authorisations live 30 minutes.
const SCA_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Opens `url` in a browser when there is a display (or `BROWSER`), as the console does.
fn open_browser(url: &str) {
    let has = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    if has("DISPLAY") || has("WAYLAND_DISPLAY") || has("BROWSER") {
        let _ = open::that_detached(url);
    }
}

/// `send --lint`: report the findings, or also fail on an error finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LintMode {
    Report,
    Strict,
}

/// What the lint is told about a prepared request: method, path and `X-Request-ID`.
fn lint_asked(req: &psd2_console::client::PreparedRequest) -> psd2_console::lint::Asked {
    psd2_console::lint::Asked::request(&req.method, &req.path_and_query)
        .with_request_id(req.header("X-Request-ID"))
}

/// Prints the lint's findings on `exchange` (one line each, or `lint: no findings`);
/// returns whether there was an error finding.
fn print_lint(
    asked: &psd2_console::lint::Asked,
    exchange: &psd2_console::client::Exchange,
) -> bool {
    use psd2_console::lint;
    let findings = lint::check_response(asked, exchange.status, &exchange.headers, &exchange.body);
    for f in &findings {
        out!("{f}");
    }
    out!("{}", lint::summary(&findings));
    lint::has_errors(&findings)
}

/// Prints a history write failure (the send itself stands).
fn warn_history(recorded: &Result<i64, psd2_console::client::engine::HistoryWriteError>) {
    if let Err(e) = recorded {
        eprintln!("warning: history: {e}");
    }
}

/// `send`: prepares, signs and sends one request. `wait`: `Some(true)` waits for SCA on a
/// `scaRedirect`, `Some(false)` does not, `None` waits on an embedded profile only (its
/// sandbox, and so the SCA link, lives only as long as this process).
///
/// After SCA: a payment, basket or consent is not sent again; its status is read and
/// printed with its id (exit 0 when approved, 1 otherwise). An account read is sent again.
async fn send_command(
    paths: &Paths,
    operation: &str,
    profile: &str,
    params: &[String],
    body: SendBody,
    wait: Option<bool>,
    lint: Option<LintMode>,
) -> Result<ExitCode> {
    use psd2_console::client::BodyInput;
    use psd2_console::client::engine::ScaFlow;
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
    let embedded = profile.target == psd2_console::profile::Target::Embedded;
    let wait = wait.unwrap_or(embedded);
    let mut engine = start_cli_engine(profile, paths.clone()).await?;
    let input = match &body {
        SendBody::Default => BodyInput::Default,
        SendBody::Json(t) => BodyInput::Json(t),
        SendBody::Raw(b) => BodyInput::Raw(b),
    };
    // The one sender (`client::sender`), as the console's: recorded, response signature
    // checked, the SCA wait armed for this request's `sca-ref`.
    let prepared = engine.prepare_to_send(op, &values, input)?;
    let mut asked = lint_asked(&prepared);
    let sent = engine.send_full(prepared).await?;
    warn_history(&sent.recorded);
    if let Some(sig) = &sent.signature {
        eprintln!("{}", sig.summary());
    }
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
            open_browser(&url);
            let cb = match tokio::time::timeout(SCA_WAIT, engine.next_callback()).await {
                Ok(Some(cb)) => cb,
                Ok(None) => bail!("the SCA callback listener stopped"),
                Err(_) => bail!("no SCA callback within {} minutes", SCA_WAIT.as_secs() / 60),
            };
            let applied = engine.apply_sca_callback(&cb)?;
            eprintln!("{}", applied.summary);
            let flow = applied.flow.unwrap_or_else(|| {
                psd2_console::client::engine::PendingSca::from_response(
                    "",
                    &exchange_url(&engine, op, &values),
                    exchange.json.as_ref(),
                    &url,
                )
            });
            match flow.flow {
                ScaFlow::AisRead => {
                    if matches!(cb, ScaCallback::Success(_)) {
                        let input = match &body {
                            SendBody::Default => BodyInput::Default,
                            SendBody::Json(t) => BodyInput::Json(t),
                            SendBody::Raw(b) => BodyInput::Raw(b),
                        };
                        let prepared = engine.prepare_to_send(op, &values, input)?;
                        asked = lint_asked(&prepared);
                        let (ex, recorded) = engine.send_recorded(&prepared).await?;
                        warn_history(&recorded);
                        exchange = ex;
                    }
                }
                _ => {
                    let st = engine.status_after_sca(&flow).await?;
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
                    // The one verdict (`xs2a::status`): ACCP is a rejection for lack of
                    // funds in the interface document, so it exits 1.
                    status_ok = Some(st.verdict.is_approved());
                    if let Some(path) = &flow.status_path {
                        asked = psd2_console::lint::Asked::request("GET", path);
                    }
                    exchange = st.exchange;
                    if !shown.is_empty() {
                        exchange.json = Some(serde_json::Value::Object(shown));
                    }
                }
            }
        }
    }
    eprintln!(
        "HTTP {} in {} ms",
        exchange.status,
        exchange.elapsed.as_millis()
    );
    out!("{}", exchange.pretty_body());
    let lint_failed = match lint {
        Some(mode) => print_lint(&asked, &exchange) && mode == LintMode::Strict,
        None => false,
    };
    let ok = status_ok.unwrap_or_else(|| exchange.is_success()) && !lint_failed;
    engine.shutdown().await;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The URL `op` was sent to (for a flow the engine did not record).
fn exchange_url(
    engine: &Engine,
    op: &operations::Operation,
    values: &[(String, String)],
) -> String {
    format!(
        "{}{}",
        engine.base_url,
        op.path_and_query(values).unwrap_or_default()
    )
}

/// `send --as-given FILE` (`single` is `Some(lint)`: the file must hold one request; its
/// response body is printed, then the lint's findings when `lint` asks, as `send --lint`)
/// and `import FILE --as-given --send` (`single` is `None`: each request, or those of
/// `selection`, 1-based: one `source\tstatus\tcode` line each and a summary). What was
/// changed is said on stderr for each. Exit 0 when every answer is 2xx (and, with
/// `--lint=strict`, has no error finding).
async fn replay_command(
    paths: &Paths,
    file: &std::path::Path,
    profile: &str,
    keep_signature: bool,
    selection: &[usize],
    single: Option<Option<LintMode>>,
) -> Result<ExitCode> {
    use psd2_console::client::replay::{self, SignatureMode};
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
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    let profile = profiles
        .require(profile)
        .cloned()
        .map_err(|e| anyhow!("{e} (see `psd2-console profile list`)"))?;
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
            let code = ex
                .json
                .as_ref()
                .and_then(|j| j["tppMessages"][0]["code"].as_str())
                .unwrap_or("");
            out!("{}\t{}\t{}", field(source), ex.status, field(code));
        }
    }
    engine.shutdown().await;
    if single.is_none() {
        eprintln!("{}", tally.summary());
    }
    Ok(if tally.all_2xx() && !lint_failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
