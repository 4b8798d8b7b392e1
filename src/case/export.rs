//! `psd2-console case export`: history entries, the TPP certificate and the sandbox's state
//! into one bundle ([`export`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::bundle::{self, Bundle, ExchangeSummary, Manifest, SandboxState};
use super::exchanges::{CaseExchange, Selection, select};
use super::pseudo::Pseudonyms;
use super::{CASE_PROFILE, CaseError};
use crate::cert::Certificate;
use crate::client::history::History;
use crate::client::import::ImportedRequest;
use crate::client::{RequestContext, prepare_imported};
use crate::profile::is_loopback_url;
use crate::profile::{Paths, Profile, ProfileSet, SessionState, Target};
use crate::sandbox::bundle::{self as sandbox_bundle, StateCopy};

/// The management route that hands out a `sandbox serve`'s state (`GET /v1/sandbox/snapshot`,
/// operator plane only).
pub(crate) const SNAPSHOT_PATH: &str = "/v1/sandbox/snapshot";

/// What to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The bundle file to write.
    pub out: PathBuf,
    /// Which history entries.
    pub selection: Selection,
    /// Replace PSU values by pseudonyms ([`super::pseudo`]).
    pub pseudonymize: bool,
    /// Replace an existing `out`.
    pub force: bool,
    /// The profile whose certificate and sandbox go in; default: the newest exchange's.
    pub profile: Option<String>,
}

/// What [`export`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportReport {
    /// The bundle file.
    pub out: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// How many distinct values were pseudonymized (0 without `--pseudonymize`).
    pub pseudonyms: usize,
}

impl ExportReport {
    /// One line for the terminal: `wrote FILE: N exchanges, sandbox state (clock +Xs)` or
    /// why there is no sandbox state.
    pub fn summary(&self) -> String {
        let m = &self.manifest;
        let state = match (&m.sandbox, &m.sandbox_note) {
            (Some(s), _) => format!(
                "sandbox state (clock {} s from real time, {})",
                s.clock_offset_seconds, s.now
            ),
            (None, Some(n)) => format!("no sandbox state: {n}"),
            (None, None) => "no sandbox state".into(),
        };
        let pseudo = if m.pseudonymized {
            format!(
                ", {} values pseudonymized ({})",
                self.pseudonyms,
                m.pseudonymized_kinds.join(", ")
            )
        } else {
            String::new()
        };
        format!(
            "wrote {}: {} exchange(s) of profile {:?}, {state}{pseudo}",
            self.out.display(),
            m.exchanges.len(),
            m.profile
        )
    }
}

/// Writes the case bundle `opts.out` from the history in `paths` (see [`super`] for the
/// members): the selected entries as stored (Signature redacted), the profile's certificate
/// without its key, and the sandbox's state when the profile's target is the embedded
/// sandbox (its database in the data directory) or a `sandbox serve` on loopback (fetched
/// with a signed `GET /v1/sandbox/snapshot`); with `pseudonymize` the PSU values in all of
/// them are replaced by pseudonyms, in a copy (the live history and sandbox are untouched).
///
/// A `sandbox serve` that refuses the snapshot ([`CaseError::SnapshotRefused`]) gives a
/// bundle without state; the manifest's `sandboxNote` says why.
///
/// Errors: `out` exists without `force` ([`CaseError::Exists`]), no history or an unknown
/// id, the credentials cannot be loaded, the sandbox state cannot be copied, or a write
/// fails.
pub async fn export(paths: &Paths, opts: &ExportOptions) -> Result<ExportReport, CaseError> {
    if !opts.force && (opts.out.exists() || opts.out.is_symlink()) {
        return Err(CaseError::Exists(opts.out.clone()));
    }
    let mut entries = {
        let history = History::open_existing(&paths.history_file())?;
        select(&history, &opts.selection)?
    };
    let profile_name = match (&opts.profile, entries.last()) {
        (Some(p), _) => p.clone(),
        (None, Some(e)) => e.profile.clone(),
        (None, None) => CASE_PROFILE.to_string(),
    };
    let profile = ProfileSet::load(Some(&paths.profiles_dir()))
        .get(&profile_name)
        .cloned();
    let target = match profile.as_ref().map(|p| &p.target) {
        Some(Target::Embedded) => "embedded".to_string(),
        Some(Target::Url(u)) => u.clone(),
        None => "unknown".to_string(),
    };
    let certificate_pem = match &profile {
        Some(p) => certificate_pem(p, paths)?,
        None => None,
    };

    let tmp = tempfile::tempdir().map_err(CaseError::io(std::env::temp_dir()))?;
    let snap = tmp.path().join(bundle::SNAPSHOT);
    let note = match &profile {
        None => Some(format!("the profile {profile_name:?} is gone")),
        Some(p) => match &p.target {
            Target::Embedded => {
                let db = sandbox_bundle::state_file(&paths.data);
                if db.exists() {
                    copy_local(&db, &snap)?;
                    None
                } else {
                    Some(format!(
                        "the embedded sandbox has no state yet ({} does not exist)",
                        db.display()
                    ))
                }
            }
            // A refusal (e.g. an older sandbox without the route, or a Date outside its
            // moved clock's window) leaves the state out and says why; the exchanges stand.
            Target::Url(u) if is_loopback_url(u) => match fetch_snapshot(p, paths, u).await {
                Ok(bytes) => {
                    crate::fsutil::write_atomic(&snap, &bytes, true)
                        .map_err(CaseError::io(&snap))?;
                    None
                }
                Err(e @ CaseError::SnapshotRefused { .. }) => Some(e.to_string()),
                Err(e) => return Err(e),
            },
            Target::Url(u) => Some(format!(
                "{u} is not on loopback (only a local sandbox's state is copied)"
            )),
        },
    };
    let has_snapshot = note.is_none();

    let mut pseudonyms = 0;
    let mut kinds = Vec::new();
    if opts.pseudonymize {
        let mut ps = Pseudonyms::new();
        ps.collect_entries(&entries);
        if has_snapshot {
            ps.collect_state(&open_copy(&snap)?)
                .map_err(CaseError::sqlite("reading the sandbox state copy"))?;
        }
        pseudonyms = ps.len();
        kinds = ps.kinds().iter().map(|k| k.label().to_string()).collect();
        if let Some(r) = ps.replacer() {
            entries = entries.iter().map(|e| r.apply_entry(e)).collect();
            if has_snapshot {
                let mut c = open_copy(&snap)?;
                r.apply_state(&mut c)
                    .map_err(CaseError::sqlite("pseudonymizing the sandbox state copy"))?;
            }
        }
    }

    let (sandbox, snapshot) = if has_snapshot {
        // The exporting profile's TPP: its own sandbox clock counts too (issue 20).
        let tpp = certificate_pem
            .as_deref()
            .and_then(|pem| Certificate::from_pem_or_der(pem.as_bytes(), "certificate").ok())
            .map(|c| sandbox_bundle::tpp_id(&c));
        let offset = seal_copy(&snap, opts.pseudonymize, tpp.as_deref())?;
        let now = crate::cert::unix_seconds(SystemTime::now()).saturating_add(offset);
        (
            Some(SandboxState {
                snapshot: bundle::SNAPSHOT.to_string(),
                clock_offset_seconds: offset,
                now: rfc3339(now),
            }),
            Some(std::fs::read(&snap).map_err(CaseError::io(&snap))?),
        )
    } else {
        (None, None)
    };

    let manifest = Manifest {
        format: bundle::FORMAT.to_string(),
        version: bundle::VERSION,
        created_at: rfc3339(crate::cert::unix_seconds(SystemTime::now())),
        console_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: profile_name,
        target,
        sandbox,
        sandbox_note: note,
        pseudonymized: opts.pseudonymize,
        pseudonymized_kinds: kinds,
        certificate: certificate_pem
            .as_ref()
            .map(|_| bundle::CERTIFICATE.to_string()),
        exchanges: entries
            .iter()
            .map(|e| ExchangeSummary {
                id: e.id,
                at: rfc3339(e.at),
                operation_id: e.operation_id.clone(),
                method: e.method.clone(),
                url: e.url.clone(),
                status: e.status,
            })
            .collect(),
    };
    let bundle = Bundle {
        manifest: manifest.clone(),
        exchanges: entries.iter().map(CaseExchange::from).collect(),
        har: Some(crate::client::export::har(&entries)),
        certificate_pem,
        snapshot,
    };
    bundle.write(&opts.out, opts.force)?;
    Ok(ExportReport {
        out: opts.out.clone(),
        manifest,
        pseudonyms,
    })
}

pub use crate::xs2a::fields::rfc3339;

/// The PEM of `profile`'s certificate (its DER re-encoded, so nothing else of the file,
/// such as a key, can follow); `None` when the profile has none yet.
///
/// Errors: the certificate file cannot be read or parsed.
fn certificate_pem(profile: &Profile, paths: &Paths) -> Result<Option<String>, CaseError> {
    let path = match (&profile.certificate, &profile.target) {
        (Some(c), _) => profile.resolve(c),
        (None, Target::Embedded) => paths.certs_dir().join(format!("{}.pem", profile.slug())),
        (None, Target::Url(_)) => return Ok(None),
    };
    if !path.exists() {
        return Ok(None);
    }
    let cert = Certificate::load(&path)?;
    let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
    Ok(Some(pem::encode_config(
        &pem::Pem::new("CERTIFICATE", cert.der),
        config,
    )))
}

/// Copies the sandbox database `db` (perhaps in use by a running console) to `dst`
/// ([`sandbox_bundle::copy_state`]).
fn copy_local(db: &Path, dst: &Path) -> Result<(), CaseError> {
    let what = format!("copying the sandbox state {}", db.display());
    sandbox_bundle::copy_state(db, dst).map_err(CaseError::sqlite(what))
}

/// Opens the copy of the sandbox state at `path`.
fn open_copy(path: &Path) -> Result<StateCopy, CaseError> {
    StateCopy::open(path).map_err(CaseError::sqlite("opening the sandbox state copy"))
}

/// Makes the copy at `path` one self-contained file; after pseudonymization (`scrub`)
/// rebuilds it, so no replaced value stays behind in a free page
/// ([`StateCopy::seal`]). Returns the sandbox clock offset it holds for TPP `tpp` (the
/// shared offset plus the TPP's own), whole seconds.
fn seal_copy(path: &Path, scrub: bool, tpp: Option<&str>) -> Result<i64, CaseError> {
    open_copy(path)?
        .seal(scrub, tpp)
        .map_err(CaseError::sqlite("sealing the sandbox state copy"))
}

/// `GET {base}/v1/sandbox/snapshot`, signed with `profile`'s credentials at the system
/// clock's time.
///
/// Errors: credentials, the request, or an answer other than 200
/// ([`CaseError::SnapshotRefused`]).
async fn fetch_snapshot(
    profile: &Profile,
    paths: &Paths,
    base: &str,
) -> Result<Vec<u8>, CaseError> {
    let credentials = crate::client::engine::ensure_credentials(profile, paths)?;
    let base = base.trim_end_matches('/');
    let url = format!("{base}{SNAPSHOT_PATH}");
    let redirect = profile
        .tpp_redirect_uri
        .clone()
        .unwrap_or_else(|| "http://127.0.0.1/callback".to_string());
    let req = prepare_imported(
        &ImportedRequest {
            name: "case snapshot".into(),
            method: "GET".into(),
            url: url.clone(),
            ..ImportedRequest::default()
        },
        &RequestContext {
            profile,
            session: &SessionState::default(),
            credentials: &credentials,
            base_url: base,
            redirect_uri: &redirect,
            now: SystemTime::now(),
        },
    )?;
    let http = crate::client::tls::http_client_for(profile)?;
    let ex = crate::client::send(&http, &req).await?;
    if ex.status != 200 {
        return Err(CaseError::SnapshotRefused {
            url,
            status: ex.status,
            text: String::from_utf8_lossy(&ex.body)
                .chars()
                .take(300)
                .collect(),
        });
    }
    Ok(ex.body)
}
