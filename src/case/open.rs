//! `psd2-console case open FILE --into DIR` and `psd2-console --case FILE`: a bundle made
//! into an isolated home ([`open_into`], [`open_fresh`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::bundle::{Bundle, Manifest};
use super::exchanges::CaseExchange;
use super::pseudo::Replacer;
use super::{CASE_PROFILE, CaseError};
use crate::cert::Certificate;
use crate::client::engine::ensure_credentials;
use crate::client::export::shell_quote;
use crate::client::history::History;
use crate::profile::paths::HOME_ENV;
use crate::profile::{Paths, Profile, SessionState};
use crate::sandbox::bundle::{self as sandbox_bundle, StateCopy};
use crate::xs2a::headers as h;

/// The file in an opened home that keeps the bundle's manifest, for reading.
pub(crate) const MANIFEST_COPY: &str = "case-manifest.json";

/// A bundle opened into a home.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// The home directory (`PSD2_CONSOLE_HOME`).
    pub home: PathBuf,
    /// Its config and data directories.
    pub paths: Paths,
    /// The profile to open the console on ([`CASE_PROFILE`]).
    pub profile: String,
    /// The bundle's manifest.
    pub manifest: Manifest,
}

impl Opened {
    /// The command line that opens the console on this home:
    /// `PSD2_CONSOLE_HOME='DIR' psd2-console --profile 'Case'`.
    pub(crate) fn command_line(&self) -> String {
        format!(
            "{HOME_ENV}={} psd2-console --profile {}",
            shell_quote(&self.home.display().to_string()),
            shell_quote(&self.profile)
        )
    }

    /// What is in the home, in a few lines, ending with [`Opened::command_line`].
    pub fn summary(&self) -> String {
        let m = &self.manifest;
        let state = match &m.sandbox {
            Some(s) => format!(
                "the sandbox state of {} (clock {} s from real time, {} at export)",
                if m.target == "embedded" {
                    "the embedded sandbox"
                } else {
                    m.target.as_str()
                },
                s.clock_offset_seconds,
                s.now
            ),
            None => format!(
                "a new sandbox ({})",
                m.sandbox_note
                    .as_deref()
                    .unwrap_or("the bundle has no sandbox state")
            ),
        };
        format!(
            "opened the case into {}: {} exchange(s) in the history (exported from profile {:?}{}), {state}\n\
             open the console on it with:\n  {}",
            self.home.display(),
            m.exchanges.len(),
            m.profile,
            if m.pseudonymized {
                ", pseudonymized"
            } else {
                ""
            },
            self.command_line()
        )
    }
}

/// Makes the home `into` from the bundle at `bundle`: `<into>/config/profiles/case.toml`
/// (profile [`CASE_PROFILE`] on the embedded sandbox, the roles of the bundled certificate),
/// a new test certificate for it (the bundle has no private key), `<into>/data/history.sqlite3`
/// holding the bundle's exchanges (new ids, oldest first), `<into>/data/sandbox.sqlite3` =
/// the snapshot with the exported certificate's TPP rows moved to the new certificate's TPP
/// (so its consents and payments are the new certificate's), the session (PSU-ID,
/// PSU-Corporate-ID, TPP-Session-ID) of the newest exchange that sent a PSU-ID, and the
/// manifest as [`MANIFEST_COPY`]. Every file is written atomically; the history, the state
/// and the session 0600.
///
/// A directory `into` that holds anything is refused unless `force` (then the case's files
/// replace those of the same names). A relative `into` is taken from the current directory;
/// [`Opened::home`] is always absolute.
///
/// Errors: not a bundle, [`CaseError::NotEmpty`], or a write failing.
pub(crate) fn open_into(bundle: &Path, into: &Path, force: bool) -> Result<Opened, CaseError> {
    // The home is printed in a command line to paste anywhere: absolute, not relative to
    // the directory `case open` ran in.
    let into = &std::path::absolute(into).map_err(CaseError::io(into))?;
    let b = Bundle::read(bundle)?;
    let occupied = match std::fs::read_dir(into) {
        Ok(mut d) => d.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(CaseError::io(into)(e)),
    };
    if occupied && !force {
        return Err(CaseError::NotEmpty(into.to_path_buf()));
    }
    let paths = Paths::under(into.to_path_buf());
    paths.ensure_data_dir().map_err(|e| CaseError::Io {
        path: e.path,
        source: e.error,
    })?;
    let bundled_cert = match &b.certificate_pem {
        Some(p) => Some(Certificate::from_pem_or_der(
            p.as_bytes(),
            "the bundled certificate",
        )?),
        None => None,
    };
    let mut profile = Profile::new_embedded(CASE_PROFILE);
    if let Some(roles) = bundled_cert.as_ref().map(Certificate::roles)
        && !roles.is_empty()
    {
        profile.roles = roles;
    }
    profile.psu_ip_address = Some("127.0.0.1".into());
    write_profile(&paths, &profile, bundle)?;
    let credentials = ensure_credentials(&profile, &paths)?;

    let bad = |reason: String| CaseError::NotABundle {
        path: bundle.to_path_buf(),
        reason,
    };
    write_history(&paths, &b.exchanges, &bad)?;
    if let Some(bytes) = &b.snapshot {
        let rekey = bundled_cert.as_ref().map(|c| {
            (
                sandbox_bundle::tpp_id(c),
                sandbox_bundle::tpp_id(&credentials.certificate),
            )
        });
        write_snapshot(&paths, bytes, rekey)?;
    }
    write_session(&paths, &profile, &b.exchanges)?;
    let manifest_copy = into.join(MANIFEST_COPY);
    let text = serde_json::to_vec_pretty(&b.manifest).map_err(|source| CaseError::Json {
        what: "manifest.json",
        source,
    })?;
    crate::fsutil::write_atomic(&manifest_copy, &text, true)
        .map_err(CaseError::io(&manifest_copy))?;
    Ok(Opened {
        home: into.to_path_buf(),
        paths,
        profile: CASE_PROFILE.to_string(),
        manifest: b.manifest,
    })
}

/// [`open_into`] a new directory `<data>/cases/<bundle name>-<time>` (for
/// `psd2-console --case FILE`).
///
/// Errors: those of [`open_into`].
pub fn open_fresh(bundle: &Path, data: &Path) -> Result<Opened, CaseError> {
    let stem = bundle
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "case".into());
    let stem = stem.trim_end_matches(".tar.gz").trim_end_matches(".tgz");
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let short = uuid::Uuid::new_v4().simple().to_string();
    let dir = data
        .join("cases")
        .join(format!("{stem}-{stamp}-{}", &short[..8]));
    open_into(bundle, &dir, false)
}

/// `<config>/profiles/case.toml`.
fn write_profile(paths: &Paths, profile: &Profile, bundle: &Path) -> Result<(), CaseError> {
    let file = paths.profiles_dir().join("case.toml");
    let body = toml::to_string(profile).map_err(|e| CaseError::Io {
        path: file.clone(),
        source: std::io::Error::other(e),
    })?;
    let text = format!(
        "# The case opened from {} (psd2-console case open): the embedded sandbox with the\n\
         # bundle's state.\n{body}",
        bundle.display()
    );
    crate::fsutil::write_atomic(&file, text.as_bytes(), false).map_err(CaseError::io(&file))
}

/// A private temporary file next to `target` (same directory, so the rename is atomic).
fn temp_beside(target: &Path) -> Result<tempfile::TempPath, CaseError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}.case-"))
        .tempfile_in(dir)
        .map(tempfile::NamedTempFile::into_temp_path)
        .map_err(CaseError::io(dir))
}

/// Renames `tmp` onto the SQLite file `target`, removing a stale `-wal`/`-shm` of `target`
/// first (they belong to the database being replaced).
fn replace_sqlite(tmp: tempfile::TempPath, target: &Path) -> Result<(), CaseError> {
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", target.display()));
        match std::fs::remove_file(&side) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CaseError::io(side)(e));
            }
            _ => {}
        }
    }
    tmp.persist(target)
        .map_err(|e| CaseError::io(target)(e.error))?;
    crate::fsutil::tighten_sqlite(target);
    Ok(())
}

/// The history of the case: the exchanges inserted oldest first into a new database.
fn write_history(
    paths: &Paths,
    exchanges: &[CaseExchange],
    bad: &dyn Fn(String) -> CaseError,
) -> Result<(), CaseError> {
    let target = paths.history_file();
    let tmp = temp_beside(&target)?;
    {
        let history = History::open(&tmp)?;
        for ex in exchanges {
            let entry = ex
                .to_entry()
                .map_err(|e| bad(format!("exchange {}: body: {e}", ex.id)))?;
            history
                .insert(&entry)
                .map_err(CaseError::sqlite(format!("writing {}", tmp.display())))?;
        }
    }
    replace_sqlite(tmp, &target)
}

/// The sandbox state of the case: the snapshot, with TPP id `rekey.0` replaced by `rekey.1`.
fn write_snapshot(
    paths: &Paths,
    bytes: &[u8],
    rekey: Option<(String, String)>,
) -> Result<(), CaseError> {
    let target = sandbox_bundle::state_file(&paths.data);
    let tmp = temp_beside(&target)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&tmp)
        .map_err(CaseError::io(tmp.to_path_buf()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(CaseError::io(tmp.to_path_buf()))?;
    drop(f);
    if let Some(r) = rekey.and_then(|(old, new)| Replacer::new([(old, new)])) {
        let what = format!(
            "moving the snapshot's TPP rows to the new certificate in {}",
            tmp.display()
        );
        let mut c = StateCopy::open(&tmp).map_err(CaseError::sqlite(what.clone()))?;
        r.apply_state(&mut c).map_err(CaseError::sqlite(what))?;
    }
    replace_sqlite(tmp, &target)
}

/// The session of the case profile: PSU-ID, PSU-Corporate-ID and TPP-Session-ID of the
/// newest exchange that sent a PSU-ID (none: no session file).
fn write_session(
    paths: &Paths,
    profile: &Profile,
    exchanges: &[CaseExchange],
) -> Result<(), CaseError> {
    let header = |ex: &CaseExchange, name: &str| {
        ex.request
            .headers
            .iter()
            .find(|(n, v)| n.eq_ignore_ascii_case(name) && !v.is_empty())
            .map(|(_, v)| v.clone())
    };
    let Some(ex) = exchanges
        .iter()
        .rev()
        .find(|e| header(e, h::PSU_ID).is_some())
    else {
        return Ok(());
    };
    let session = SessionState {
        psu_id: header(ex, h::PSU_ID),
        psu_corporate_id: header(ex, h::PSU_CORPORATE_ID),
        tpp_session_id: header(ex, h::TPP_SESSION_ID),
        ..SessionState::default()
    };
    let file = paths.session_file(&profile.slug());
    session.save(&file).map_err(CaseError::io(&file))
}
