//! The command line: [`Cli`] (clap) and [`run`], which checks the global flags and hands
//! each command to its file: the console (no command, [`console`]), `sandbox`, `send`
//! (with `replay` for `--as-given`), `sign`, `cert`, `profile`, `import`, `history`,
//! `flow`, `export`, `sca`; `case` and `doctor` live in the library
//! (`psd2_console::case::cli`, `psd2_console::doctor::cli`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::{Parser, Subcommand};

use psd2_console::client::Engine;
use psd2_console::client::engine::HistoryWriteError;
use psd2_console::profile::{Paths, Profile, ProfileSet};
use psd2_console::xs2a::redirect::ScaCallback;

/// `println!` for command output, control characters escaped
/// ([`psd2_console::terminal::escape_output`]: text from a file or an answer never drives the
/// terminal). A closed pipe (`psd2-console send --list | head -1`) ends the program quietly
/// with status 0, as Unix tools do, instead of a panic; any other write error is reported
/// and exits 1.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
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
pub(crate) use say;

mod cert;
mod console;
mod export;
mod flow;
mod history;
mod import;
mod profile;
mod replay;
mod sandbox;
mod sca;
mod send;
mod sign;

#[derive(Parser)]
#[command(
    name = "psd2-console",
    version,
    about = "Terminal console and embedded sandbox ASPSP for NextGenPSD2 XS2A v1.3 interfaces"
)]
pub(crate) struct Cli {
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
        command: sandbox::SandboxCommand,
    },
    /// Send one signed request and print the response JSON (exit 0 for 2xx, 1 otherwise).
    Send(send::SendArgs),
    /// Sign a request and print the headers signing adds, as `Name: value` lines.
    Sign(sign::SignArgs),
    /// Certificates.
    Cert {
        #[command(subcommand)]
        command: cert::CertCommand,
    },
    /// Profiles.
    Profile {
        #[command(subcommand)]
        command: profile::ProfileCommand,
    },
    /// Import requests from a cURL file, a HAR file or a Postman v2.1 collection and print
    /// their names; with --send, send each one (re-signed with the profile) and print status.
    Import(import::ImportArgs),
    /// The history of exchanges, newest first: id, time, status, operation, URL.
    History(history::HistoryArgs),
    /// The flow of a session as a sequence diagram (TPP, ASPSP, PSU browser, callback
    /// listener), each arrow with the rule of the interface document it shows. Without
    /// arguments: the latest flow (the newest exchange's TPP-Session-ID).
    Flow(flow::FlowArgs),
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
        command: sca::ScaCommand,
    },
    /// Export an exchange of the history: cURL (signed afresh now, so it runs as-is within
    /// the 60-second Date window), HAR 1.2 (Signature redacted), or a Python, Node, Java or
    /// Go program that signs the request afresh each time it runs (README, "From the
    /// console to your code").
    Export(export::ExportArgs),
}

/// `--listen`: an IP address links can name ([`psd2_console::profile::check_listen_address`]).
fn parse_listen(s: &str) -> Result<std::net::IpAddr, String> {
    psd2_console::profile::check_listen_address(s)
}

/// Runs the command line `cli`: the global flags' checks (`--listen`, `--presenter`,
/// `--case`, `--lesson` belong to the console), then the command, or the console.
///
/// Errors: a refused flag combination, or the command's error (printed by `main`, exit 1).
pub(crate) async fn run(cli: Cli) -> Result<ExitCode> {
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
            let options = console::ConsoleOptions {
                profile: cli_profile,
                lesson: cli.lesson,
                presenter: cli.presenter,
            };
            console::run(paths, options).await
        }
        Some(Command::Sandbox { command }) => sandbox::run(command, &paths).await,
        Some(Command::Sca { command }) => sca::run(command).await,
        Some(Command::Send(args)) => send::run(args, &paths).await,
        Some(Command::Sign(args)) => sign::run(args),
        Some(Command::Cert { command }) => cert::run(command, &paths),
        Some(Command::Import(args)) => import::run(args, &paths).await,
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
        Some(Command::History(args)) => history::run(args, &paths),
        Some(Command::Flow(args)) => flow::run(args, &paths),
        Some(Command::Export(args)) => export::run(args, &paths).await,
        Some(Command::Profile { command }) => profile::run(command, &paths),
    }
}

/// One field of a one-line output (a method, URL or name from a file) with every control
/// character escaped, line feed and tab too ([`psd2_console::terminal::escape_controls`]).
fn field(s: &str) -> std::borrow::Cow<'_, str> {
    psd2_console::terminal::escape_controls(s)
}

/// The profile `name` of the home `paths`.
///
/// Errors: no such profile (the message names `profile list`).
fn require_profile(paths: &Paths, name: &str) -> Result<Profile> {
    ProfileSet::load(Some(&paths.profiles_dir()))
        .require(name)
        .cloned()
        .map_err(|e| anyhow!("{e} (see `psd2-console profile list`)"))
}

/// [`psd2_console::embedded::start_command_engine`] for a command-line command (beside a
/// console on the same home it uses the console's sandbox, and says so on stderr); in room
/// mode it says on stderr that the embedded sandbox and the callback listener are reachable
/// from the network.
async fn start_cli_engine(profile: Profile, paths: Paths) -> Result<Engine> {
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

/// The console's history database (`history.sqlite3` of `paths`), which must exist.
///
/// Errors: the file is missing or is not a history database.
fn open_history(paths: &Paths) -> Result<psd2_console::client::history::History> {
    psd2_console::client::history::History::open_existing(&paths.history_file())
        .map_err(|e| anyhow!(e))
}

/// How long `send` waits for an SCA callback: the sandbox's authorisations live 30 minutes.
const SCA_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Opens `url` in the browser (the library's one [`psd2_console::redirect::open_browser`])
/// and waits up to [`SCA_WAIT`] for the SCA callback.
///
/// Errors: the listener stopped, or no callback in time.
async fn wait_for_callback(engine: &mut Engine, url: &str) -> Result<ScaCallback> {
    // As the console: no browser without a graphical session on Linux (the link is printed).
    let _ = psd2_console::redirect::open_browser(url);
    match tokio::time::timeout(SCA_WAIT, engine.next_callback()).await {
        Ok(Some(cb)) => Ok(cb),
        Ok(None) => bail!("the SCA callback listener stopped"),
        Err(_) => bail!("no SCA callback within {} minutes", SCA_WAIT.as_secs() / 60),
    }
}

/// Prints a history write failure (the send itself stands).
fn warn_history(recorded: &Result<i64, HistoryWriteError>) {
    if let Err(e) = recorded {
        eprintln!("warning: history: {e}");
    }
}

/// The first `tppMessages` code of an answer (empty when there is none).
fn first_code(exchange: &psd2_console::client::Exchange) -> &str {
    exchange
        .json
        .as_ref()
        .and_then(|j| j["tppMessages"][0]["code"].as_str())
        .unwrap_or("")
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
        .with_request_id(req.header(psd2_console::xs2a::headers::X_REQUEST_ID))
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

/// Exit 0 when `ok`, else 1.
fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
