//! TPP profiles: TOML files naming a target (the embedded sandbox or a base URL), the
//! certificate and key, and the header values a TPP sends; plus the session state learned
//! from SCA (PSU-ID, PSU-Corporate-ID, TPP-Session-ID), which is kept in a separate file per
//! profile so that user-written profile files are never rewritten.
//!
//! Profiles come from the shipped examples (`profiles/*.toml`, built into the binary) and from
//! `<config dir>/profiles/*.toml`; a user profile with the same name replaces a shipped one.

pub mod edit;
pub(crate) mod paths;

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cert::Psd2Role;
use crate::xs2a::redirect::PsuContext;

pub use paths::Paths;

/// Where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The sandbox ASPSP in this process, on 127.0.0.1 (or the room-mode `listen` address)
    /// at `sandbox_port`.
    Embedded,
    /// A remote ASPSP at this base URL (paths such as `/v1/accounts` are appended).
    Url(String),
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Target::Embedded => s.serialize_str("embedded"),
            Target::Url(u) => s.serialize_str(u),
        }
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "embedded" {
            return Ok(Target::Embedded);
        }
        let u = url::Url::parse(&s).map_err(|e| {
            serde::de::Error::custom(format!(
                "target must be \"embedded\" or an http(s) base URL; {s:?}: {e}"
            ))
        })?;
        if u.scheme() != "http" && u.scheme() != "https" {
            return Err(serde::de::Error::custom(format!(
                "target URL {s:?} must be http or https"
            )));
        }
        Ok(Target::Url(s.trim_end_matches('/').to_string()))
    }
}

impl Target {
    /// Whether this target is a sandbox on this machine: the embedded sandbox, or a URL on
    /// loopback (a local `psd2-console sandbox serve`); its management operations (event
    /// stream, state, snapshot) answer only there.
    pub(crate) fn is_local(&self) -> bool {
        match self {
            Target::Embedded => true,
            Target::Url(u) => is_loopback_url(u),
        }
    }
}

/// Whether `url`'s host is a loopback address (`localhost`, 127.0.0.0/8, `[::1]`).
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(u) = url::Url::parse(url) else {
        return false;
    };
    match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

fn default_accept_fix() -> Vec<String> {
    vec!["amount-as-string".to_string()]
}

/// A TPP profile as written in TOML.
///
/// ```toml
/// name = "Embedded sandbox"
/// target = "embedded"            # or "https://api.sandbox.example.com"
/// certificate = "certs/tpp.pem"  # relative to the profile file; absent: generated test cert
/// key = "certs/tpp.key"
/// roles = ["PSP_AI", "PSP_PI"]
/// tpp_redirect_uri = "http://127.0.0.1:8089/callback"  # absent: callback_port
/// sandbox_port = 8088            # embedded sandbox; 0: any free port
/// callback_port = 8089           # SCA callback listener; 0: any free port
/// listen = "192.168.1.20"        # room mode; absent: 127.0.0.1
/// tpp_redirect_preferred = true
/// psu_ip_address = "127.0.0.1"
/// x_accept_fix = ["amount-as-string"]
/// sign_request_target = false
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The name shown and given to `--profile`.
    pub name: String,
    /// The ASPSP: the embedded sandbox or a remote base URL.
    pub target: Target,
    /// Certificate file (PEM or DER). Absent for `embedded`: a generated test certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<PathBuf>,
    /// Private key file (PKCS#8 or PKCS#1, PEM or DER).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<PathBuf>,
    /// PSD2 roles the TPP expects its certificate to carry (checked against it, and used for
    /// a generated test certificate).
    #[serde(default = "default_roles")]
    pub roles: Vec<Psd2Role>,
    /// `TPP-Redirect-URI`; when absent the console's listener takes `callback_port` and
    /// sends `http://127.0.0.1:<callback_port>/callback` (the `listen` address instead of
    /// 127.0.0.1 in room mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpp_redirect_uri: Option<String>,
    /// TCP port of the embedded sandbox (`target = "embedded"`), so its links (scaRedirect)
    /// stay the same across restarts. Absent: [`DEFAULT_SANDBOX_PORT`] (8088); `0`: any free
    /// port, chosen at each start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_port: Option<u16>,
    /// TCP port of the SCA callback listener when `tpp_redirect_uri` is absent (with it, the
    /// URI's port). Absent: [`DEFAULT_CALLBACK_PORT`] (8089); `0`: any free port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// Room mode: the address (the laptop's LAN address) the embedded sandbox and the
    /// callback listener listen on, and that scaRedirect links and the TPP-Redirect-URI
    /// name, so that phones in the room can open them. Absent: 127.0.0.1 (loopback only).
    /// The console's `--listen ADDR` wins over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<IpAddr>,
    /// `TPP-Redirect-Preferred` (`false` asks for the app-based flow, rule 13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpp_redirect_preferred: Option<bool>,
    /// `PSU-ID` sent until SCA teaches one (a PISP-only TPP persists the PSU-ID, rule 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psu_id: Option<String>,
    /// `PSU-IP-Address`, sent when the PSU is present (rule 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psu_ip_address: Option<String>,
    /// `x-accept-fix` values (Versioning), comma-joined on the wire.
    #[serde(default = "default_accept_fix")]
    pub x_accept_fix: Vec<String>,
    /// Sign `(request-target)` too.
    #[serde(default)]
    pub sign_request_target: bool,
    /// Extra CA certificates (a PEM file with one or more certificates) trusted for the
    /// target's TLS server certificate, in addition to the system roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<PathBuf>,
    /// TLS client certificate (QWAC), PEM; sent when the server asks for one. Needs
    /// `client_key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<PathBuf>,
    /// Private key of `client_certificate` (PKCS#8, PKCS#1 or SEC1, PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<PathBuf>,
    /// Lowest TLS version accepted: `"1.2"` (the default; Authentication rule 1) or `"1.3"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_min_version: Option<TlsMinVersion>,
    /// Verify the `Signature` of signed responses (Authentication rule 10) and show the
    /// outcome with the response.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_response_signatures: bool,
    /// The ASPSP's signing certificate (PEM or DER), used to verify responses that do not
    /// carry their certificate in a header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspsp_certificate: Option<PathBuf>,
    /// `target = "embedded"` only: run the embedded sandbox over HTTPS (issue 21): its
    /// server certificate is issued by the data directory's sandbox CA
    /// (`<data>/sandbox-ca.pem`, `psd2-console cert ca`), which the console then trusts, and
    /// it asks for a client certificate (optional, so a browser without one still reaches
    /// the SCA pages); the console presents the profile's `client_certificate` or, without
    /// one, a QWAC issued by the sandbox CA for the same organisation as the signing
    /// certificate (`<data>/certs/<slug>-qwac.pem`). Default `false`: plain HTTP on
    /// loopback, so a first-time user's browser shows the SCA pages without a certificate
    /// warning (a deviation from Authentication 1, docs/sandbox.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandbox_tls: bool,
    /// The file the profile was read from (`None` for built-in ones).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// The lowest TLS version a profile accepts (`tls_min_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsMinVersion {
    /// TLS 1.2, the interface document's minimum (Authentication rule 1).
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 only.
    #[serde(rename = "1.3")]
    Tls13,
}

/// The embedded sandbox's port when a profile gives no `sandbox_port`.
pub(crate) const DEFAULT_SANDBOX_PORT: u16 = 8088;

/// The SCA callback listener's port when a profile gives neither `tpp_redirect_uri` nor
/// `callback_port` (the port of the shipped remote example's `tpp_redirect_uri` too).
pub(crate) const DEFAULT_CALLBACK_PORT: u16 = 8089;

/// Environment variable for tests and scripts: when set to `1`, the embedded sandbox and
/// the callback listener of a profile that sets no `sandbox_port` / `callback_port` take any
/// free port instead of the defaults (as `0`), so that several consoles run side by side.
/// Ports a profile sets, and the port of a `tpp_redirect_uri`, stay.
pub const FREE_PORTS_ENV: &str = "PSD2_CONSOLE_FREE_PORTS";

/// Checks a room-mode address (`listen`, `--listen`): an IP address of this machine that
/// links can name, so not `0.0.0.0`, `::` or a multicast address.
///
/// Errors: one sentence saying what to give instead.
pub fn check_listen_address(text: &str) -> Result<IpAddr, String> {
    let a: IpAddr = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not an IP address (e.g. 192.168.1.20)"))?;
    if a.is_unspecified() || a.is_multicast() {
        return Err(format!(
            "{a} cannot be named in links: give this machine's address on the room's network \
             (e.g. 192.168.1.20), which scaRedirect and TPP-Redirect-URI will carry"
        ));
    }
    Ok(a)
}

fn default_roles() -> Vec<Psd2Role> {
    vec![Psd2Role::PspAi, Psd2Role::PspPi]
}

impl Profile {
    /// Parses one profile file's text.
    pub fn from_toml(text: &str, file: &str) -> Result<Self, ProfileError> {
        toml::from_str::<Profile>(text).map_err(|e| {
            let line = e.span().map(|s| line_at(text, s.start));
            ProfileError {
                file: file.to_string(),
                line,
                message: e.message().to_string(),
            }
        })
    }

    /// Resolves a path of this profile: absolute as is, else relative to the profile file.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            return p.to_path_buf();
        }
        match self.source.as_ref().and_then(|s| s.parent()) {
            Some(dir) => dir.join(p),
            None => p.to_path_buf(),
        }
    }

    /// A file-system-safe form of the name, used for session and certificate files.
    pub fn slug(&self) -> String {
        slug_of(&self.name)
    }

    /// The address the embedded sandbox and the callback listener listen on: `listen`, else
    /// 127.0.0.1.
    pub fn listen_address(&self) -> IpAddr {
        self.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
    }

    /// The room-mode address: `listen` when it is set and is neither 127.0.0.1 nor ::1
    /// (also as `::ffff:127.0.0.1`), the addresses only this machine reaches (then the
    /// console says that the sandbox and the listener are reachable from the network).
    /// Other loopback addresses (127.0.0.2, ...) count as room addresses: the tests stand
    /// them in for a LAN address.
    pub fn room_address(&self) -> Option<IpAddr> {
        self.listen.filter(|a| {
            let a = a.to_canonical();
            a != IpAddr::V4(Ipv4Addr::LOCALHOST) && a != IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
        })
    }

    /// The embedded sandbox's port: `sandbox_port`, else [`DEFAULT_SANDBOX_PORT`].
    pub fn sandbox_port(&self) -> u16 {
        self.sandbox_port.unwrap_or(DEFAULT_SANDBOX_PORT)
    }

    /// The callback listener's port when `tpp_redirect_uri` gives none: `callback_port`,
    /// else [`DEFAULT_CALLBACK_PORT`].
    pub fn callback_port(&self) -> u16 {
        self.callback_port.unwrap_or(DEFAULT_CALLBACK_PORT)
    }

    /// The profile with any free ports for the embedded sandbox and the callback listener
    /// where it sets none (`sandbox_port = 0`, `callback_port = 0`) when [`FREE_PORTS_ENV`]
    /// is `1`.
    pub(crate) fn with_free_ports_from_env(mut self) -> Self {
        if std::env::var(FREE_PORTS_ENV).is_ok_and(|v| v == "1") {
            self.sandbox_port.get_or_insert(0);
            self.callback_port.get_or_insert(0);
        }
        self
    }

    /// Where the user changes `field` of this profile, for error messages: the profile's
    /// file, or for a built-in profile a copy of it (the built-in ones are read-only).
    pub(crate) fn where_to_set(&self, field: &str) -> String {
        match &self.source {
            Some(f) => format!("set `{field}` in {}", f.display()),
            None => format!(
                "the built-in profile {:?} is read-only: copy it (Profiles screen, c) and set \
                 `{field}` in the copy",
                self.name
            ),
        }
    }
}

/// The 1-based line of byte offset `at` in `text`: one more than the line breaks before
/// it (an offset at the start of line 2 is on line 2).
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The file-system-safe form of a profile name: ASCII letters and digits lower-cased, every
/// other character `-`, trimmed of `-` (`profile` when nothing is left).
pub(crate) fn slug_of(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "profile".into() } else { s }
}

/// A profile file that could not be read: the file, the line when known, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ProfileError {
    /// The file.
    pub file: String,
    /// The line, when the parser says.
    pub line: Option<usize>,
    /// Why.
    pub message: String,
}

/// The shipped example profiles, built into the binary: (file name, text).
pub(crate) const BUILTIN_PROFILES: &[(&str, &str)] = &[
    (
        "profiles/embedded-sandbox.toml",
        include_str!("../../profiles/embedded-sandbox.toml"),
    ),
    (
        "profiles/remote-sandbox-example.toml",
        include_str!("../../profiles/remote-sandbox-example.toml"),
    ),
];

/// Name of the built-in embedded-sandbox profile, the default.
pub const DEFAULT_PROFILE: &str = "Embedded sandbox";

/// Loaded profiles and the files that failed to load.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    /// The profiles that loaded.
    pub profiles: Vec<Profile>,
    /// The files that did not.
    pub errors: Vec<ProfileError>,
}

impl ProfileSet {
    /// Loads the built-in profiles, then every `*.toml` in `user_dir` (sorted by name). A
    /// broken file is reported in `errors` and the others still load.
    pub fn load(user_dir: Option<&Path>) -> Self {
        let mut set = ProfileSet::default();
        for (file, text) in BUILTIN_PROFILES {
            match Profile::from_toml(text, file) {
                Ok(p) => set.insert(p),
                Err(e) => set.errors.push(e),
            }
        }
        if let Some(dir) = user_dir {
            set.load_dir(dir);
        }
        set
    }

    /// Loads every `*.toml` file of `dir` into the set.
    pub(crate) fn load_dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            let name = f.display().to_string();
            match std::fs::read_to_string(&f) {
                Ok(text) => match Profile::from_toml(&text, &name) {
                    Ok(mut p) => {
                        p.source = Some(f.clone());
                        self.insert(p);
                    }
                    Err(e) => self.errors.push(e),
                },
                Err(e) => self.errors.push(ProfileError {
                    file: name,
                    line: None,
                    message: e.to_string(),
                }),
            }
        }
    }

    /// Adds `p`. A user profile named like a built-in one replaces it (an override); a
    /// second user profile with a name (or file-name form, [`Profile::slug`]) already taken
    /// is not loaded and reported in `errors`, naming the file that has it.
    fn insert(&mut self, p: Profile) {
        let same = |x: &Profile| x.name.eq_ignore_ascii_case(&p.name) || x.slug() == p.slug();
        match self.profiles.iter_mut().find(|x| same(x)) {
            Some(existing) if existing.is_builtin() => *existing = p,
            Some(existing) => self.errors.push(ProfileError {
                file: p
                    .source
                    .as_ref()
                    .map(|s| s.display().to_string())
                    .unwrap_or_default(),
                line: None,
                message: format!(
                    "a second profile named {:?} (also in {}): this file is not loaded; rename one of them",
                    p.name,
                    existing
                        .source
                        .as_ref()
                        .map(|s| s.display().to_string())
                        .unwrap_or_default()
                ),
            }),
            None => self.profiles.push(p),
        }
    }

    /// The profile called `name` ([`ProfileSet::get`]), or why there is none: the message
    /// lists the profile files that could not be read (`file:line: reason`), since the one
    /// meant may be among them.
    ///
    /// Errors: [`NoSuchProfile`].
    pub fn require(&self, name: &str) -> Result<&Profile, NoSuchProfile> {
        if let Some(p) = self.get(name) {
            return Ok(p);
        }
        let mut msg = format!("no profile {name:?}");
        if !self.errors.is_empty() {
            let slug = slug_of(name);
            // Files named like the profile first: most likely the one meant.
            let mut errs: Vec<&ProfileError> = self.errors.iter().collect();
            errs.sort_by_key(|e| {
                Path::new(&e.file)
                    .file_stem()
                    .is_none_or(|s| slug_of(&s.to_string_lossy()) != slug)
            });
            msg.push_str(&format!(
                "; {} profile file(s) could not be read: {}",
                errs.len(),
                errs.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        Err(NoSuchProfile {
            name: name.to_string(),
            message: msg,
        })
    }

    /// The profile called `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name) || p.slug() == name)
    }
}

/// What SCA taught the console for one profile (interface document, "Redirect parameters
/// after SCA" and Authentication rule 12): sent as `PSU-ID`, `PSU-Corporate-ID` and
/// `TPP-Session-ID` on later requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// `psu-id` of the last SCA, sent as `PSU-ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psu_id: Option<String>,
    /// `psu-corporate-id`, sent as `PSU-Corporate-ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psu_corporate_id: Option<String>,
    /// `tpp-session-id`, sent as `TPP-Session-ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpp_session_id: Option<String>,
    /// The context of the last SCA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<PsuContext>,
    /// When the last SCA completed, seconds since the Unix epoch. The TPP-Session-ID is valid
    /// for one hour from then (interface document, Limits: "SCA session validity").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sca_completed_at: Option<i64>,
    /// When the PSU last gave (or renewed) consent, seconds since the Unix epoch. Consent is
    /// gathered during SCA (Authentication rule 11, bank-offered consent) and must be renewed
    /// with SCA every 180 days (Limits: "SCA renewal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent_at: Option<i64>,
}

/// How long a TPP-Session-ID stays valid after SCA, seconds (interface document, Limits:
/// "SCA session validity", 1 hour).
pub(crate) const SCA_SESSION_SECS: i64 = 3600;

/// After how many days consent must be renewed with SCA (Limits: "SCA renewal", 180 days).
pub(crate) const CONSENT_RENEWAL_DAYS: i64 = 180;

impl SessionState {
    /// Seconds left of the 1-hour SCA session at `now` (Unix seconds): `None` without a
    /// completed SCA, `Some(0)` or less when it has run out.
    pub(crate) fn sca_remaining_secs(&self, now: i64) -> Option<i64> {
        self.sca_completed_at.map(|t| t + SCA_SESSION_SECS - now)
    }

    /// Whole days since consent was given, at `now` (Unix seconds); `None` without consent.
    pub(crate) fn consent_age_days(&self, now: i64) -> Option<i64> {
        self.consent_at.map(|t| (now - t).max(0) / 86_400)
    }

    /// Reads `path`; a missing file is an empty state.
    ///
    /// Errors: the file exists but is not a session TOML (named with its path).
    pub fn load(path: &Path) -> Result<Self, ProfileError> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|e| ProfileError {
                file: path.display().to_string(),
                line: e.span().map(|s| line_at(&text, s.start)),
                message: e.message().to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SessionState::default()),
            Err(e) => Err(ProfileError {
                file: path.display().to_string(),
                line: None,
                message: e.to_string(),
            }),
        }
    }

    /// Writes the state atomically (temp file + rename).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = toml::to_string(self).map_err(std::io::Error::other)?;
        // 0600: the session holds the PSU-ID and PSU-Corporate-ID (PSU data).
        crate::fsutil::write_atomic(path, text.as_bytes(), true)
    }
}

/// No profile of the name asked for ([`ProfileSet::require`]); the message also lists the
/// profile files that could not be read (`file:line: reason`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NoSuchProfile {
    /// The name asked for.
    pub name: String,
    message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_parse() {
        let set = ProfileSet::load(None);
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        let p = set.get(DEFAULT_PROFILE).expect("embedded profile");
        assert_eq!(p.target, Target::Embedded);
    }

    #[test]
    fn broken_file_names_file_and_line_and_others_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a-good.toml"),
            "name = \"Good\"\ntarget = \"https://bank.example\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b-bad.toml"),
            "name = \"Bad\"\ntarget = \"embedded\"\nroles = [\"PSP_XX\"]\n",
        )
        .unwrap();
        let set = ProfileSet::load(Some(dir.path()));
        assert!(set.get("Good").is_some());
        assert!(set.get("Bad").is_none());
        assert_eq!(set.errors.len(), 1);
        let e = &set.errors[0];
        assert!(e.file.ends_with("b-bad.toml"));
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("b-bad.toml:3"), "{e}");
        assert!(e.message.contains("PSP_XX"), "{e}");
    }

    #[test]
    fn an_unknown_key_on_line_2_is_reported_at_line_2() {
        let e = Profile::from_toml(
            "name = \"X\"\ncolour = \"blue\"\ntarget = \"embedded\"\n",
            "x.toml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().starts_with("x.toml:2: "), "{e}");
        assert!(e.message.contains("colour"), "{e}");
    }

    #[test]
    fn a_second_profile_with_the_same_name_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a.toml", "b.toml"] {
            std::fs::write(
                dir.path().join(f),
                "name = \"Twin\"\ntarget = \"embedded\"\n",
            )
            .unwrap();
        }
        let set = ProfileSet::load(Some(dir.path()));
        let twins: Vec<_> = set.profiles.iter().filter(|p| p.name == "Twin").collect();
        assert_eq!(twins.len(), 1);
        assert!(twins[0].source.as_ref().unwrap().ends_with("a.toml"));
        assert_eq!(set.errors.len(), 1, "{:?}", set.errors);
        let e = set.errors[0].to_string();
        assert!(e.contains("b.toml"), "{e}");
        assert!(e.contains("a second profile named \"Twin\""), "{e}");
        assert!(e.contains("a.toml"), "{e}");
        // A user profile named like a built-in one still overrides it, silently.
        std::fs::write(
            dir.path().join("c.toml"),
            format!("name = \"{DEFAULT_PROFILE}\"\ntarget = \"embedded\"\n"),
        )
        .unwrap();
        let set = ProfileSet::load(Some(dir.path()));
        assert_eq!(set.errors.len(), 1);
        assert!(set.get(DEFAULT_PROFILE).unwrap().source.is_some());
    }

    #[test]
    fn require_shows_the_parse_error_of_an_unreadable_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mybank.toml"),
            "name = \"mybank\"\ntarget = \n",
        )
        .unwrap();
        let set = ProfileSet::load(Some(dir.path()));
        let e = set.require("mybank").unwrap_err().to_string();
        assert!(e.starts_with("no profile \"mybank\""), "{e}");
        assert!(e.contains("mybank.toml:2"), "{e}");
        assert!(set.require(DEFAULT_PROFILE).is_ok());
    }

    #[test]
    fn session_state_round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s/x.toml");
        assert_eq!(SessionState::load(&path).unwrap(), SessionState::default());
        let s = SessionState {
            psu_id: Some(uuid::Uuid::new_v4().to_string()),
            psu_corporate_id: None,
            tpp_session_id: Some("abc".into()),
            context: Some(PsuContext::Private),
            sca_completed_at: Some(1),
            consent_at: Some(1),
        };
        s.save(&path).unwrap();
        assert_eq!(SessionState::load(&path).unwrap(), s);
    }
}
