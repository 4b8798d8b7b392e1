//! The bundle file: a gzip-compressed tar archive (`tar` + `flate2`) of named members, and
//! its manifest.

use std::io::Read as _;
use std::path::Path;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use super::CaseError;
use super::exchanges::CaseExchange;

/// `format` of every manifest.
pub const FORMAT: &str = "psd2-console case bundle";

/// The manifest version this console writes and reads.
pub const VERSION: u32 = 1;

/// Member names.
pub(crate) const MANIFEST: &str = "manifest.json";
/// The exchanges ([`CaseExchange`], a JSON array).
pub(crate) const EXCHANGES: &str = "exchanges.json";
/// The exchanges as HAR 1.2.
pub(crate) const EXCHANGES_HAR: &str = "exchanges.har";
/// The TPP certificate (PEM, public part only).
pub const CERTIFICATE: &str = "tpp-certificate.pem";
/// The sandbox's state (SQLite 3 database file).
pub(crate) const SNAPSHOT: &str = "sandbox.sqlite3";

/// Largest bundle read back, bytes after decompression (1 GiB): the members' sizes
/// together; a bigger one is refused, naming the member that goes over, before it is read.
pub(crate) const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// Largest member of a bundle read back, bytes (256 MiB; [`MANIFEST`] and the certificate:
/// [`MAX_SMALL_MEMBER_BYTES`]). A bundle is read member by member from the stream, and a
/// member's size (from its tar header) is checked before it is read, so a small file that
/// unpacks to a huge member is refused at once, naming the member, without taking memory.
pub(crate) const MAX_MEMBER_BYTES: u64 = 256 << 20;

/// Largest [`MANIFEST`] or certificate member, bytes (1 MiB).
pub(crate) const MAX_SMALL_MEMBER_BYTES: u64 = 1 << 20;

/// Most members a bundle may have (this console writes five).
pub(crate) const MAX_MEMBERS: usize = 64;

/// The size limit of the member `name` ([`MAX_MEMBER_BYTES`], [`MAX_SMALL_MEMBER_BYTES`]).
pub(crate) fn member_limit(name: &str) -> u64 {
    match name {
        MANIFEST | CERTIFICATE => MAX_SMALL_MEMBER_BYTES,
        _ => MAX_MEMBER_BYTES,
    }
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// When the bundle was written, RFC 3339 (UTC).
    pub created_at: String,
    /// The console's version (`CARGO_PKG_VERSION`) that wrote it.
    pub console_version: String,
    /// The profile the exchanges were sent with (of the newest exchange, or `--profile`).
    pub profile: String,
    /// `embedded`, or the base URL of the target.
    pub target: String,
    /// The sandbox's state, when the bundle has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxState>,
    /// Why the bundle has no sandbox state, when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
    /// Whether PSU values were replaced by pseudonyms ([`super::pseudo`]).
    pub pseudonymized: bool,
    /// What kinds of values were replaced ([`super::pseudo::Kind::label`], e.g. `PSU-ID`,
    /// `BBAN`, `account names`); empty when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pseudonymized_kinds: Vec<String>,
    /// The certificate member ([`CERTIFICATE`]) when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// The exchanges, oldest first.
    pub exchanges: Vec<ExchangeSummary>,
}

/// The sandbox state of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxState {
    /// The member holding the database ([`SNAPSHOT`]).
    pub snapshot: String,
    /// The sandbox clock's offset from real time when the snapshot was taken, seconds (0 when
    /// the clock was never moved; `POST /v1/sandbox/clock`).
    pub clock_offset_seconds: i64,
    /// The sandbox clock's time when the snapshot was taken, RFC 3339 (UTC).
    pub now: String,
}

/// One exchange in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeSummary {
    /// History id where it was exported from.
    pub id: i64,
    /// When it was sent, RFC 3339 (UTC).
    pub at: String,
    /// Catalogue operation id, e.g. `accounts.list`.
    pub operation_id: String,
    /// HTTP method.
    pub method: String,
    /// The URL sent to.
    pub url: String,
    /// HTTP status of the answer.
    pub status: u16,
}

/// A bundle in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// The manifest (`case.json`).
    pub manifest: Manifest,
    /// The exchanges, oldest first.
    pub exchanges: Vec<CaseExchange>,
    /// HAR 1.2 of the exchanges (written, not read back: the exchanges are the source).
    pub har: Option<serde_json::Value>,
    /// PEM of the TPP certificate.
    pub certificate_pem: Option<String>,
    /// The SQLite file of the sandbox's state.
    pub snapshot: Option<Vec<u8>>,
}

impl Bundle {
    /// The `.tar.gz` bytes: the members of the module table, each mode 0600.
    ///
    /// Errors: JSON or archive writing (in memory).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, CaseError> {
        let mut members: Vec<(&str, Vec<u8>)> = vec![
            (MANIFEST, pretty(MANIFEST, &self.manifest)?),
            (EXCHANGES, pretty(EXCHANGES, &self.exchanges)?),
        ];
        if let Some(h) = &self.har {
            members.push((EXCHANGES_HAR, pretty(EXCHANGES_HAR, h)?));
        }
        if let Some(p) = &self.certificate_pem {
            members.push((CERTIFICATE, p.as_bytes().to_vec()));
        }
        if let Some(s) = &self.snapshot {
            members.push((SNAPSHOT, s.clone()));
        }
        let io = CaseError::io("case bundle (in memory)");
        let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
        let mtime = u64::try_from(chrono::Utc::now().timestamp()).unwrap_or(0);
        for (name, bytes) in members {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o600);
            h.set_mtime(mtime);
            h.set_entry_type(tar::EntryType::Regular);
            if let Err(e) = tar.append_data(&mut h, name, bytes.as_slice()) {
                return Err(io(e));
            }
        }
        tar.into_inner()
            .and_then(|gz| gz.finish())
            .map_err(CaseError::io("case bundle (in memory)"))
    }

    /// Writes the bundle to `out` atomically (temp file + rename), mode 0600. An existing
    /// `out` is replaced only with `force`.
    ///
    /// Errors: [`CaseError::Exists`], or the I/O error.
    pub fn write(&self, out: &Path, force: bool) -> Result<(), CaseError> {
        if !force && (out.exists() || out.is_symlink()) {
            return Err(CaseError::Exists(out.to_path_buf()));
        }
        let bytes = self.to_bytes()?;
        crate::fsutil::write_atomic(out, &bytes, true).map_err(CaseError::io(out))
    }

    /// Reads the bundle at `path`.
    ///
    /// Errors: the file cannot be read, or is not a bundle of [`FORMAT`] version
    /// [`VERSION`] ([`CaseError::NotABundle`], saying why: e.g. which member is too big,
    /// [`member_limit`], [`MAX_UNPACKED_BYTES`]).
    pub fn read(path: &Path) -> Result<Self, CaseError> {
        let file = std::fs::File::open(path).map_err(CaseError::io(path))?;
        let not = |reason: String| CaseError::NotABundle {
            path: path.to_path_buf(),
            reason,
        };
        // Headers and padding come on top of the members' bytes; the members themselves are
        // counted below, each before it is read.
        let slack = (MAX_MEMBERS as u64 + 2) * 1024;
        let mut archive =
            tar::Archive::new(GzDecoder::new(file).take(MAX_UNPACKED_BYTES.saturating_add(slack)));
        let mut members: Vec<(String, Vec<u8>)> = Vec::new();
        let mut total: u64 = 0;
        let entries = archive
            .entries()
            .map_err(|e| not(format!("not a .tar.gz: {e}")))?;
        for (i, entry) in entries.enumerate() {
            let mut entry = entry.map_err(|e| not(format!("not a .tar.gz: {e}")))?;
            let name = entry
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|e| not(format!("a member's name: {e}")))?;
            if i >= MAX_MEMBERS {
                return Err(not(format!(
                    "more than {MAX_MEMBERS} members (at {name}); this console writes five"
                )));
            }
            let size = entry.size();
            let limit = member_limit(&name);
            if size > limit {
                return Err(not(format!(
                    "member {name} is too big: {size} bytes unpacked, more than the {limit} a \
                     bundle member may have"
                )));
            }
            total = total.saturating_add(size);
            if total > MAX_UNPACKED_BYTES {
                return Err(not(format!(
                    "member {name} is too big: with it the members hold {total} bytes unpacked, \
                     more than the {MAX_UNPACKED_BYTES} a bundle may have"
                )));
            }
            if name == EXCHANGES_HAR {
                // Written for other tools, not read back (the exchanges are the source).
                continue;
            }
            let mut bytes = Vec::with_capacity(usize::try_from(size.min(1 << 24)).unwrap_or(0));
            (&mut entry)
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(|e| not(format!("member {name}: {e}")))?;
            members.push((name, bytes));
        }
        let take = |name: &str| {
            members
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
        };
        let manifest: Manifest =
            serde_json::from_slice(&take(MANIFEST).ok_or_else(|| not(format!("no {MANIFEST}")))?)
                .map_err(|e| not(format!("{MANIFEST}: {e}")))?;
        if manifest.format != FORMAT || manifest.version != VERSION {
            return Err(not(format!(
                "{MANIFEST} says {:?} version {}; this console reads {FORMAT:?} version {VERSION}",
                manifest.format, manifest.version
            )));
        }
        let exchanges: Vec<CaseExchange> =
            serde_json::from_slice(&take(EXCHANGES).ok_or_else(|| not(format!("no {EXCHANGES}")))?)
                .map_err(|e| not(format!("{EXCHANGES}: {e}")))?;
        let certificate_pem = match manifest.certificate.as_deref() {
            Some(name) => Some(
                String::from_utf8(take(name).ok_or_else(|| not(format!("no {name}")))?)
                    .map_err(|e| not(format!("{name}: {e}")))?,
            ),
            None => None,
        };
        let snapshot = match &manifest.sandbox {
            Some(s) => Some(take(&s.snapshot).ok_or_else(|| not(format!("no {}", s.snapshot)))?),
            None => None,
        };
        Ok(Bundle {
            manifest,
            exchanges,
            har: None,
            certificate_pem,
            snapshot,
        })
    }
}

/// Pretty JSON of a member; `what` names it in the error.
fn pretty<T: Serialize + ?Sized>(what: &'static str, v: &T) -> Result<Vec<u8>, CaseError> {
    serde_json::to_vec_pretty(v).map_err(|source| CaseError::Json { what, source })
}
