//! `psd2-console doctor FILE|-|HISTORY-ID`: reads a recorded request ([`super::input`]),
//! diagnoses it ([`super::diagnose`]) and prints the report; exit 0 when every check passes,
//! 1 when one fails, 2 when the input cannot be read.

use std::io::{Read as _, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use crate::client::history::History;
use crate::profile::Paths;

use super::input::{self, InputError};
use super::{Options, RecordedRequest, diagnose_with_qwac, report};

/// Output format of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per check and a verdict line.
    Text,
    /// A JSON document (`checks[{id, status, rule, message}]`, `verdict`).
    Json,
}

/// Arguments of `psd2-console doctor`.
#[derive(Debug, Clone, clap::Args)]
pub struct DoctorArgs {
    /// A HAR file, a cURL command, raw HTTP text (request line, headers, blank line, body),
    /// `-` for standard input, or a history id (`last` for the newest).
    pub input: String,
    /// The HAR entry (or cURL command, Postman request) to diagnose, 1-based.
    #[arg(long, default_value_t = 1)]
    pub entry: usize,
    /// When the request was sent (RFC 3339, e.g. 2026-06-07T20:51:35Z), for the Date window
    /// and the certificate's validity; default: HAR startedDateTime or history time, else now.
    #[arg(long, value_parser = parse_sent_at)]
    pub sent_at: Option<SystemTime>,
    /// Output: `text` (a report for people) or `json` (the diagnosis).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The client certificate (QWAC, PEM or DER) the request went with: adds the TLS
    /// checks (validity at the request's date, PSD2 role, same organizationIdentifier as
    /// the QSealC, key and certificate a pair). Default: the `client_certificate` of
    /// `--profile`, or of the history entry's profile.
    #[arg(long, value_name = "CERT")]
    pub qwac: Option<std::path::PathBuf>,
    /// The QWAC's private key (PEM), to check it is the certificate's key.
    #[arg(long, value_name = "KEY", requires = "qwac")]
    pub qwac_key: Option<std::path::PathBuf>,
    /// The profile whose `client_certificate` and `client_key` the request went with.
    #[arg(long, value_name = "NAME", conflicts_with = "qwac")]
    pub profile: Option<String>,
}

fn parse_sent_at(s: &str) -> Result<SystemTime, String> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(SystemTime::from)
        .map_err(|e| format!("{s:?} is not an RFC 3339 time such as 2026-06-07T20:51:35Z: {e}"))
}

/// Why the history could not give the entry.
#[derive(Debug, thiserror::Error)]
enum HistoryInputError {
    #[error(transparent)]
    Open(#[from] crate::client::history::HistoryOpenError),
    #[error("reading the history: {0}")]
    Read(#[from] rusqlite::Error),
    #[error("no history entry {0} (see `psd2-console history`)")]
    NoEntry(String),
}

/// The recorded request of history entry `id` and the name of the profile that sent it.
fn from_history(paths: &Paths, id: &str) -> Result<(RecordedRequest, String), HistoryInputError> {
    let history = History::open_existing(&paths.history_file())?;
    let entry = match id {
        "last" => history.last()?,
        n => history.get(n.parse().unwrap_or(-1))?,
    };
    entry
        .map(|e| (input::from_history(&e), e.profile.clone()))
        .ok_or_else(|| HistoryInputError::NoEntry(id.to_string()))
}

/// Why the input could not be read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    History(#[from] HistoryInputError),
}

/// The recorded request, and the profile that sent it when it comes from the history.
fn read(args: &DoctorArgs, paths: &Paths) -> Result<(RecordedRequest, Option<String>), ReadError> {
    let is_history_id = args.input == "last"
        || (!args.input.is_empty() && args.input.bytes().all(|b| b.is_ascii_digit()));
    let (bytes, name) = if args.input == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|source| InputError::Read {
                path: "standard input".into(),
                source,
            })?;
        (bytes, "standard input".to_string())
    } else if is_history_id && !Path::new(&args.input).exists() {
        let (r, profile) = from_history(paths, &args.input)?;
        return Ok((r, Some(profile)));
    } else {
        let bytes = std::fs::read(&args.input).map_err(|source| InputError::Read {
            path: args.input.clone(),
            source,
        })?;
        (bytes, args.input.clone())
    };
    Ok((input::parse(&bytes, &name, args.entry)?, None))
}

/// The QWAC to check: `--qwac`, else the `client_certificate` of `--profile`, else of the
/// history entry's profile (`entry_profile`; none when it has none or is gone); for an
/// embedded profile with `sandbox_tls` and no `client_certificate`, the QWAC the sandbox
/// CA issued for it (`<data>/certs/<slug>-qwac.pem`).
///
/// Errors: a file that cannot be read, an unknown `--profile`.
fn qwac_of(
    args: &DoctorArgs,
    paths: &Paths,
    entry_profile: Option<&str>,
) -> Result<Option<super::tls::Qwac>, String> {
    if let Some(cert) = &args.qwac {
        return super::tls::Qwac::load(cert, args.qwac_key.as_deref(), "--qwac").map(Some);
    }
    let set = crate::profile::ProfileSet::load(Some(&paths.profiles_dir()));
    let profile = match (&args.profile, entry_profile) {
        (Some(name), _) => Some(
            set.require(name)
                .map_err(|e| format!("{e} (see `psd2-console profile list`)"))?,
        ),
        (None, Some(name)) => set.get(name),
        (None, None) => None,
    };
    let Some(profile) = profile else {
        return Ok(None);
    };
    if let Some(q) = super::tls::Qwac::of_profile(profile) {
        return q.map(Some);
    }
    // An embedded profile with `sandbox_tls` presents the QWAC the sandbox CA issued for it.
    if profile.sandbox_tls && profile.target == crate::profile::Target::Embedded {
        let dir = paths.certs_dir();
        let cert = dir.join(format!("{}-qwac.pem", profile.slug()));
        let key = dir.join(format!("{}-qwac.key", profile.slug()));
        if cert.exists() {
            let source = format!("profile {:?} ({})", profile.name, cert.display());
            return super::tls::Qwac::load(&cert, Some(&key), &source).map(Some);
        }
    }
    Ok(None)
}

/// Runs the command: the report on `out`, errors on `err`.
pub fn run(args: &DoctorArgs, paths: &Paths, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    let read = read(args, paths)
        .map_err(|e| e.to_string())
        .and_then(|(r, p)| qwac_of(args, paths, p.as_deref()).map(|q| (r, q)));
    let (request, qwac) = match read {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::terminal::escape_output(&e));
            return ExitCode::from(2);
        }
    };
    let diagnosis = diagnose_with_qwac(
        &request,
        &Options {
            sent_at: args.sent_at,
            now: SystemTime::now(),
        },
        qwac.as_ref(),
    );
    let text = match args.format {
        Format::Text => report::text(&diagnosis),
        Format::Json => match report::json(&diagnosis) {
            Ok(j) => j + "\n",
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    // Whatever the recording holds, control characters never reach the terminal.
    let text = crate::terminal::escape_output(&text);
    match out.write_all(text.as_bytes()) {
        Ok(()) => ExitCode::from(diagnosis.exit_code()),
        // `doctor ... | head -1`: a closed pipe ends quietly, as Unix tools do.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "error: writing to standard output: {e}");
            ExitCode::FAILURE
        }
    }
}
