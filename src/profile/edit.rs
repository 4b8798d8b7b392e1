//! Creating, editing, cloning and deleting user profiles: a [`ProfileDraft`] holds the text
//! of every field as typed in the console's form, [`ProfileDraft::validate`] turns it into a
//! [`Profile`] or says what is wrong next to which field, and [`save_profile`] /
//! [`delete_profile`] write `<config>/profiles/<slug>.toml` atomically (an existing file is
//! edited in place, format-preserving, under its own name).
//!
//! Built-in profiles (no `source` file) are read-only: they can be cloned, not changed.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::{Paths, Profile, ProfileSet, Target, TlsMinVersion, slug_of};
use crate::cert::generate::{TppCertSpec, WrittenSet, write_set};
use crate::cert::{CertError, Psd2Role};

/// The PSU-IP-Address new profiles get, as the built-in embedded profile has
/// (`profiles/embedded-sandbox.toml`).
pub(crate) const DEFAULT_PSU_IP_ADDRESS: &str = "127.0.0.1";

/// One field of the profile form: its key (the TOML key), label and help line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldSpec {
    /// The TOML key of [`Profile`], e.g. `ca_bundle`.
    pub key: &'static str,
    /// The label shown in the form.
    pub label: &'static str,
    /// One line of help shown under the form for the highlighted field.
    pub help: &'static str,
}

const fn f(key: &'static str, label: &'static str, help: &'static str) -> FieldSpec {
    FieldSpec { key, label, help }
}

/// The form's fields, in Tab order.
pub(crate) const FIELDS: &[FieldSpec] = &[
    f("name", "Name", "unique name of the profile (required)"),
    f(
        "target",
        "Target",
        "\"embedded\" for the built-in sandbox, or the ASPSP's base URL (https://…)",
    ),
    f(
        "certificate",
        "Certificate",
        "QSealC file (PEM/DER), relative to the profiles folder; Ctrl-g generates a test one",
    ),
    f("key", "Key", "private key of the certificate (PEM/DER)"),
    f(
        "roles",
        "Roles",
        "PSD2 roles, comma-separated: PSP_AI, PSP_PI, PSP_IC, PSP_AS (used by Ctrl-g)",
    ),
    f(
        "psu_id",
        "PSU-ID",
        "PSU-ID sent until SCA teaches one (a PISP persists it, rule 15); empty: none",
    ),
    f(
        "psu_ip_address",
        "PSU-IP-Address",
        "sent when the PSU is present (rule 16); empty: not sent",
    ),
    f(
        "tpp_redirect_uri",
        "TPP-Redirect-URI",
        "where SCA returns; empty: the console's listener, http://127.0.0.1:<callback port>/callback",
    ),
    f(
        "tpp_redirect_preferred",
        "Redirect preferred",
        "yes / no (no asks for the app-based flow, rule 13) / empty: header not sent",
    ),
    f(
        "x_accept_fix",
        "x-accept-fix",
        "opt-in changes, comma-separated (e.g. amount-as-string)",
    ),
    f("sign_request_target", "Sign (request-target)", "yes / no"),
    f(
        "ca_bundle",
        "Extra CA bundle",
        "PEM file of CA certificates trusted for the server, besides the system roots",
    ),
    f(
        "client_certificate",
        "Client cert (QWAC)",
        "TLS client certificate (PEM), for servers that ask for one",
    ),
    f("client_key", "Client key", "private key of the QWAC (PEM)"),
    f("tls_min_version", "Min TLS version", "1.2 (default) or 1.3"),
    f(
        "sandbox_tls",
        "Sandbox over TLS",
        "yes / no: embedded sandbox over HTTPS with the sandbox CA and a QWAC",
    ),
    f(
        "verify_response_signatures",
        "Verify responses",
        "yes / no: check the Signature of signed responses (rule 10)",
    ),
    f(
        "aspsp_certificate",
        "ASPSP certificate",
        "the bank's signing certificate, for signed responses that do not carry one",
    ),
    f(
        "sandbox_port",
        "Sandbox port",
        "the embedded sandbox's TCP port; empty: 8088; 0: any free port (links change each start)",
    ),
    f(
        "callback_port",
        "Callback port",
        "the SCA callback listener's port when TPP-Redirect-URI is empty; empty: 8089; 0: any",
    ),
    f(
        "listen",
        "Listen address",
        "room mode: this machine's LAN address for the sandbox and the callback; empty: 127.0.0.1",
    ),
];

/// A validation failure next to one form field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's key ([`FieldSpec::key`]).
    pub field: &'static str,
    /// What is wrong, one line.
    pub message: String,
}

/// The text of every form field, in [`FIELDS`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileDraft {
    /// One value per entry of [`FIELDS`].
    pub values: Vec<String>,
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

fn path_text(p: &Option<PathBuf>) -> String {
    p.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

impl Default for ProfileDraft {
    /// A new remote profile's form: empty name and target, roles PSP_AI and PSP_PI, TLS 1.2,
    /// `x-accept-fix: amount-as-string`, PSU-IP-Address `127.0.0.1` (as the built-in
    /// profile: without it the sandbox counts every read as TPP-initiated, 4 a day per
    /// account, and the 5th answers 429).
    fn default() -> Self {
        let mut d = ProfileDraft {
            values: vec![String::new(); FIELDS.len()],
        };
        d.set("roles", "PSP_AI, PSP_PI");
        d.set("psu_ip_address", DEFAULT_PSU_IP_ADDRESS);
        d.set("x_accept_fix", "amount-as-string");
        d.set("sign_request_target", "no");
        d.set("verify_response_signatures", "no");
        d.set("sandbox_tls", "no");
        d
    }
}

impl ProfileDraft {
    /// The form filled from `p` (paths as written in the file).
    pub(crate) fn from_profile(p: &Profile) -> Self {
        let mut d = ProfileDraft::default();
        d.set("name", &p.name);
        d.set(
            "target",
            &match &p.target {
                Target::Embedded => "embedded".to_string(),
                Target::Url(u) => u.clone(),
            },
        );
        d.set("certificate", &path_text(&p.certificate));
        d.set("key", &path_text(&p.key));
        d.set(
            "roles",
            &p.roles
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", "),
        );
        d.set("psu_id", p.psu_id.as_deref().unwrap_or(""));
        d.set("psu_ip_address", p.psu_ip_address.as_deref().unwrap_or(""));
        d.set(
            "tpp_redirect_uri",
            p.tpp_redirect_uri.as_deref().unwrap_or(""),
        );
        d.set(
            "tpp_redirect_preferred",
            &p.tpp_redirect_preferred.map(yes_no).unwrap_or_default(),
        );
        d.set("x_accept_fix", &p.x_accept_fix.join(", "));
        d.set("sign_request_target", &yes_no(p.sign_request_target));
        d.set("ca_bundle", &path_text(&p.ca_bundle));
        d.set("client_certificate", &path_text(&p.client_certificate));
        d.set("client_key", &path_text(&p.client_key));
        d.set(
            "tls_min_version",
            match p.tls_min_version {
                None => "",
                Some(TlsMinVersion::Tls12) => "1.2",
                Some(TlsMinVersion::Tls13) => "1.3",
            },
        );
        d.set(
            "verify_response_signatures",
            &yes_no(p.verify_response_signatures),
        );
        d.set("sandbox_tls", &yes_no(p.sandbox_tls));
        d.set("aspsp_certificate", &path_text(&p.aspsp_certificate));
        let text = |v: Option<String>| v.unwrap_or_default();
        d.set("sandbox_port", &text(p.sandbox_port.map(|n| n.to_string())));
        d.set(
            "callback_port",
            &text(p.callback_port.map(|n| n.to_string())),
        );
        d.set("listen", &text(p.listen.map(|a| a.to_string())));
        d
    }

    /// Index of field `key` in [`FIELDS`].
    pub fn index(key: &str) -> Option<usize> {
        FIELDS.iter().position(|f| f.key == key)
    }

    /// The text of field `key` (`""` for an unknown key).
    pub fn get(&self, key: &str) -> &str {
        Self::index(key)
            .and_then(|i| self.values.get(i))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// Sets field `key`; false for an unknown key.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        match Self::index(key).and_then(|i| self.values.get_mut(i)) {
            Some(v) => {
                *v = value.to_string();
                true
            }
            None => false,
        }
    }

    /// The roles typed (unknown names are skipped here; [`Self::validate`] reports them).
    pub fn roles(&self) -> Vec<Psd2Role> {
        split_list(self.get("roles"))
            .filter_map(|r| r.parse().ok())
            .collect()
    }

    /// Checks the form and builds the profile it describes.
    ///
    /// - `set`: the loaded profiles, for the unique-name check;
    /// - `original`: the name of the profile being edited (`None` when creating or cloning);
    /// - `dir`: the user profiles folder, against which relative paths are resolved.
    ///
    /// Errors: one [`FieldError`] per wrong field: empty or taken name (or a name whose file
    /// name another profile uses), a target that is neither `embedded` nor an http(s) URL,
    /// unknown roles, files that do not exist, half a certificate/key or QWAC pair, a
    /// malformed IP address or redirect URI, a yes/no field with another value.
    pub fn validate(
        &self,
        set: &ProfileSet,
        original: Option<&str>,
        dir: &Path,
    ) -> Result<Profile, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut err =
            |field: &'static str, message: String| errors.push(FieldError { field, message });
        let name = self.get("name").trim().to_string();
        let is_original = |n: &str| original.is_some_and(|o| o.eq_ignore_ascii_case(n));
        if name.is_empty() {
            err("name", "a name is required".into());
        } else if !is_original(&name)
            && set
                .profiles
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(&name))
        {
            err("name", format!("a profile called {name:?} exists already"));
        } else {
            let slug = slug_of(&name);
            if let Some(other) = set.profiles.iter().find(|p| {
                p.slug() == slug && !is_original(&p.name) && !p.name.eq_ignore_ascii_case(&name)
            }) {
                err(
                    "name",
                    format!(
                        "the file name {slug}.toml is taken by profile {:?}; choose another name",
                        other.name
                    ),
                );
            }
        }
        let target_text = self.get("target").trim();
        let target = if target_text.is_empty() {
            err("target", "\"embedded\" or a base URL is required".into());
            None
        } else {
            match toml::Value::String(target_text.to_string()).try_into::<Target>() {
                Ok(t) => Some(t),
                Err(e) => {
                    err("target", e.to_string());
                    None
                }
            }
        };
        let mut roles = Vec::new();
        for r in split_list(self.get("roles")) {
            match r.parse::<Psd2Role>() {
                Ok(role) if !roles.contains(&role) => roles.push(role),
                Ok(_) => {}
                Err(e) => err("roles", e),
            }
        }
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                dir.join(p)
            }
        };
        let mut file = |key: &'static str| -> Option<PathBuf> {
            let t = self.get(key).trim();
            if t.is_empty() {
                return None;
            }
            let p = PathBuf::from(t);
            if !resolve(&p).is_file() {
                err(key, format!("no such file: {}", resolve(&p).display()));
            }
            Some(p)
        };
        let certificate = file("certificate");
        let key = file("key");
        let ca_bundle = file("ca_bundle");
        let client_certificate = file("client_certificate");
        let client_key = file("client_key");
        let aspsp_certificate = file("aspsp_certificate");
        match (&certificate, &key) {
            (Some(_), None) => err("key", "the certificate needs its key".into()),
            (None, Some(_)) => err("certificate", "the key needs its certificate".into()),
            (None, None) if target.as_ref().is_some_and(|t| *t != Target::Embedded) => err(
                "certificate",
                "a remote target needs a certificate and key (Ctrl-g generates a test one)".into(),
            ),
            _ => {}
        }
        match (&client_certificate, &client_key) {
            (Some(_), None) => err("client_key", "the client certificate needs its key".into()),
            (None, Some(_)) => err(
                "client_certificate",
                "the client key needs its certificate".into(),
            ),
            _ => {}
        }
        let opt = |key: &str| {
            let t = self.get(key).trim();
            (!t.is_empty()).then(|| t.to_string())
        };
        let psu_ip_address = opt("psu_ip_address");
        if let Some(ip) = &psu_ip_address
            && ip.parse::<IpAddr>().is_err()
        {
            err("psu_ip_address", format!("{ip:?} is not an IP address"));
        }
        let tpp_redirect_uri = opt("tpp_redirect_uri");
        if let Some(u) = &tpp_redirect_uri {
            match url::Url::parse(u) {
                Ok(parsed) if parsed.scheme() == "http" || parsed.scheme() == "https" => {}
                Ok(_) => err("tpp_redirect_uri", "must be an http(s) URL".into()),
                Err(e) => err("tpp_redirect_uri", format!("not a URL: {e}")),
            }
        }
        let mut flag = |key: &'static str| -> Option<bool> {
            match self.get(key).trim().to_ascii_lowercase().as_str() {
                "" => None,
                "yes" | "y" | "true" | "on" => Some(true),
                "no" | "n" | "false" | "off" => Some(false),
                other => {
                    err(key, format!("{other:?}: type yes or no"));
                    None
                }
            }
        };
        let tpp_redirect_preferred = flag("tpp_redirect_preferred");
        let sign_request_target = flag("sign_request_target").unwrap_or(false);
        let verify_response_signatures = flag("verify_response_signatures").unwrap_or(false);
        let sandbox_tls = flag("sandbox_tls").unwrap_or(false);
        let tls_min_version = match self.get("tls_min_version").trim() {
            "" => None,
            "1.2" => Some(TlsMinVersion::Tls12),
            "1.3" => Some(TlsMinVersion::Tls13),
            other => {
                err(
                    "tls_min_version",
                    format!("{other:?}: 1.2 or 1.3 (older versions are not allowed, rule 1)"),
                );
                None
            }
        };
        let mut port = |key: &'static str| -> Option<u16> {
            let t = self.get(key).trim();
            if t.is_empty() {
                return None;
            }
            t.parse::<u16>()
                .map_err(|_| {
                    err(
                        key,
                        format!("{t:?}: a port from 0 to 65535 (0: any free port)"),
                    )
                })
                .ok()
        };
        let sandbox_port = port("sandbox_port");
        let callback_port = port("callback_port");
        let listen = match self.get("listen").trim() {
            "" => None,
            t => match crate::profile::check_listen_address(t) {
                Ok(a) => Some(a),
                Err(e) => {
                    err("listen", e);
                    None
                }
            },
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Profile {
            sandbox_port,
            callback_port,
            listen,
            name,
            target: target.unwrap_or(Target::Embedded),
            certificate,
            key,
            roles,
            tpp_redirect_uri,
            tpp_redirect_preferred,
            psu_ip_address,
            x_accept_fix: split_list(self.get("x_accept_fix"))
                .map(str::to_string)
                .collect(),
            sign_request_target,
            ca_bundle,
            client_certificate,
            client_key,
            tls_min_version,
            verify_response_signatures,
            aspsp_certificate,
            psu_id: opt("psu_id"),
            sandbox_tls,
            source: None,
        })
    }
}

fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split([',', ' ']).map(str::trim).filter(|x| !x.is_empty())
}

/// Why a profile could not be written or removed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Built-in profiles have no file: they can be cloned, not changed.
    #[error("{0:?} is a built-in profile: it cannot be changed or deleted (clone it with c)")]
    BuiltIn(String),
    /// Writing or removing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The profile could not be written as TOML.
    #[error("the profile cannot be written as TOML: {0}")]
    Toml(String),
    /// Generating the test certificate failed.
    #[error("{0}")]
    Cert(#[from] CertError),
    /// A new profile's file name is taken by another file (never overwritten).
    #[error("{} already exists: choose another name", .0.display())]
    Exists(PathBuf),
}

impl Profile {
    /// A minimal embedded-sandbox profile called `name` (the shape of the built-in one).
    pub fn new_embedded(name: &str) -> Self {
        Profile {
            name: name.to_string(),
            target: Target::Embedded,
            certificate: None,
            key: None,
            roles: vec![Psd2Role::PspAi, Psd2Role::PspPi],
            tpp_redirect_uri: None,
            sandbox_port: None,
            callback_port: None,
            listen: None,
            tpp_redirect_preferred: None,
            psu_ip_address: None,
            x_accept_fix: vec!["amount-as-string".into()],
            sign_request_target: false,
            ca_bundle: None,
            client_certificate: None,
            client_key: None,
            tls_min_version: None,
            verify_response_signatures: false,
            aspsp_certificate: None,
            psu_id: None,
            sandbox_tls: false,
            source: None,
        }
    }

    /// Whether the profile is built into the binary (read-only).
    pub(crate) fn is_builtin(&self) -> bool {
        self.source.is_none()
    }

    /// The profile as TOML text (the format of `profiles/*.toml`).
    ///
    /// Errors: a value TOML cannot hold (not expected for profiles).
    pub fn to_toml(&self) -> Result<String, EditError> {
        toml::to_string(self).map_err(|e| EditError::Toml(e.to_string()))
    }
}

/// Writes `profile` atomically (temp file + rename) and returns the path written.
///
/// - `previous` (the file the profile was read from) exists: that file is edited in place,
///   format-preserving ([`toml_edit`]): its name, comments, key order and layout are kept,
///   only keys whose value changed are rewritten, keys now unset are removed and new keys
///   are appended. A rename changes the `name` key, not the file name.
/// - Otherwise (a new profile or a copy) `<dir>/<slug>.toml` is written; an existing file
///   there is never overwritten ([`EditError::Exists`]).
///
/// Errors: the file cannot be read, parsed or written.
pub(crate) fn save_profile(
    dir: &Path,
    profile: &Profile,
    previous: Option<&Path>,
) -> Result<PathBuf, EditError> {
    let new_text = profile.to_toml()?;
    if let Some(old) = previous
        && old.exists()
    {
        let old_text = std::fs::read_to_string(old)?;
        let text = edit_in_place(&old_text, &new_text)?;
        crate::fsutil::write_atomic(old, text.as_bytes(), false)?;
        return Ok(old.to_path_buf());
    }
    let path = dir.join(format!("{}.toml", profile.slug()));
    if path.exists() {
        return Err(EditError::Exists(path));
    }
    let text = format!("# psd2-console profile, written by the profiles screen.\n{new_text}");
    crate::fsutil::write_atomic(&path, text.as_bytes(), false)?;
    Ok(path)
}

/// `old_text` (a profile file) changed to the values of `new_text` (the profile as
/// [`Profile::to_toml`] writes it), touching only the keys whose meaning differs (a key the
/// file leaves out at its default stays out); each changed value keeps the spacing and
/// trailing comment of the one it replaces.
fn edit_in_place(old_text: &str, new_text: &str) -> Result<String, EditError> {
    let toml_err = |e: &dyn std::fmt::Display| EditError::Toml(e.to_string());
    let mut doc: toml_edit::DocumentMut = old_text.parse().map_err(|e| toml_err(&e))?;
    let new_doc: toml_edit::DocumentMut = new_text.parse().map_err(|e| toml_err(&e))?;
    // What the file means, written the way `new_text` is (defaults filled in).
    let old_profile: Profile = toml::from_str(old_text).map_err(|e| toml_err(&e))?;
    let old_tab: toml::Table = toml::from_str(&old_profile.to_toml()?).map_err(|e| toml_err(&e))?;
    let new_tab: toml::Table = toml::from_str(new_text).map_err(|e| toml_err(&e))?;
    let gone: Vec<String> = old_tab
        .keys()
        .filter(|k| !new_tab.contains_key(*k))
        .cloned()
        .collect();
    for k in gone {
        doc.remove(&k);
    }
    for (k, item) in new_doc.iter() {
        if old_tab.get(k) == new_tab.get(k) {
            continue;
        }
        match (
            doc.get_mut(k).and_then(|i| i.as_value_mut()),
            item.as_value(),
        ) {
            (Some(v), Some(nv)) => {
                let decor = v.decor().clone();
                *v = nv.clone();
                *v.decor_mut() = decor;
            }
            _ => {
                doc.insert(k, item.clone());
            }
        }
    }
    Ok(doc.to_string())
}

/// Removes the file of user profile `profile`.
///
/// Errors: [`EditError::BuiltIn`] for a built-in profile; the I/O error otherwise.
pub(crate) fn delete_profile(profile: &Profile) -> Result<PathBuf, EditError> {
    let Some(path) = &profile.source else {
        return Err(EditError::BuiltIn(profile.name.clone()));
    };
    std::fs::remove_file(path)?;
    Ok(path.clone())
}

/// A name for a copy of `name` that no profile in `set` has: `<name> (copy)`,
/// `<name> (copy 2)`, …
pub(crate) fn copy_name(set: &ProfileSet, name: &str) -> String {
    let taken = |n: &str| {
        let slug = slug_of(n);
        set.profiles
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(n) || p.slug() == slug)
    };
    let first = format!("{name} (copy)");
    if !taken(&first) {
        return first;
    }
    (2..)
        .map(|i| format!("{name} (copy {i})"))
        .find(|n| !taken(n))
        .unwrap_or(first)
}

/// Generates a test certificate (a sandbox CA and a QSealC it issues, with `roles`) for the
/// profile called `name` into `<data>/certs/<slug>.pem` / `.key` (key 0600, written
/// atomically, see [`write_set`]) and returns the files.
///
/// Errors: generation or writing failed.
pub fn generate_certificate(
    paths: &Paths,
    name: &str,
    roles: &[Psd2Role],
) -> Result<WrittenSet, EditError> {
    let spec = TppCertSpec {
        roles: if roles.is_empty() {
            TppCertSpec::default().roles
        } else {
            roles.to_vec()
        },
        ..TppCertSpec::default()
    };
    Ok(write_set(&paths.certs_dir(), &slug_of(name), &spec)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_round_trips_a_profile() {
        let set = ProfileSet::load(None);
        let p = set.get("Embedded sandbox").unwrap();
        let d = ProfileDraft::from_profile(p);
        let dir = tempfile::tempdir().unwrap();
        let back = d.validate(&set, Some(&p.name), dir.path()).unwrap();
        assert_eq!(&back, p);
    }

    #[test]
    fn validation_names_each_wrong_field() {
        let set = ProfileSet::load(None);
        let dir = tempfile::tempdir().unwrap();
        let mut d = ProfileDraft::default();
        d.set("name", "embedded SANDBOX");
        d.set("target", "ftp://x");
        d.set("roles", "PSP_AI, PSP_XX");
        d.set("psu_ip_address", "300.1.1.1");
        d.set("certificate", "missing.pem");
        d.set("verify_response_signatures", "maybe");
        let errors = d.validate(&set, None, dir.path()).unwrap_err();
        let fields: Vec<_> = errors.iter().map(|e| e.field).collect();
        for f in [
            "name",
            "target",
            "roles",
            "psu_ip_address",
            "certificate",
            "key",
            "verify_response_signatures",
        ] {
            assert!(fields.contains(&f), "{f} missing in {errors:?}");
        }
    }

    #[test]
    fn the_address_fields_round_trip_and_are_checked() {
        let set = ProfileSet::load(None);
        let dir = tempfile::tempdir().unwrap();
        let p = Profile {
            sandbox_port: Some(9100),
            callback_port: Some(0),
            listen: Some("192.168.1.20".parse().unwrap()),
            ..Profile::new_embedded("Room")
        };
        let d = ProfileDraft::from_profile(&p);
        assert_eq!(d.validate(&set, None, dir.path()).unwrap(), p);
        let mut bad = d.clone();
        bad.set("sandbox_port", "70000");
        bad.set("callback_port", "x");
        bad.set("listen", "0.0.0.0");
        let errors = bad.validate(&set, None, dir.path()).unwrap_err();
        let fields: Vec<_> = errors.iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            ["sandbox_port", "callback_port", "listen"],
            "{errors:?}"
        );
        // An edit elsewhere keeps the port line of the file as written.
        let file = dir.path().join("room.toml");
        let text = "name = \"Room\"\ntarget = \"embedded\"\nsandbox_port = 9100  # the lab's\n";
        std::fs::write(&file, text).unwrap();
        let mut read = Profile::from_toml(text, "room.toml").unwrap();
        read.source = Some(file.clone());
        let mut d = ProfileDraft::from_profile(&read);
        d.set("psu_id", "PSU-1");
        let edited = d.validate(&set, Some("Room"), dir.path()).unwrap();
        save_profile(dir.path(), &edited, Some(&file)).unwrap();
        let after = std::fs::read_to_string(&file).unwrap();
        assert!(
            after.contains("sandbox_port = 9100  # the lab's\n"),
            "{after}"
        );
        assert!(after.contains("psu_id = \"PSU-1\""), "{after}");
    }

    #[test]
    fn copy_names_are_unique() {
        let set = ProfileSet::load(None);
        assert_eq!(
            copy_name(&set, "Embedded sandbox"),
            "Embedded sandbox (copy)"
        );
        let mut set2 = set.clone();
        set2.profiles
            .push(Profile::new_embedded("Embedded sandbox (copy)"));
        assert_eq!(
            copy_name(&set2, "Embedded sandbox"),
            "Embedded sandbox (copy 2)"
        );
    }
}
