//! The composition layer: wires the console ([`crate::client`], [`crate::tui`], the CLI) to
//! the embedded sandbox ASPSP ([`crate::sandbox`]). It sits above both: the client never
//! imports the sandbox, and the sandbox never imports the client; only this module (and the
//! binary's `sandbox serve` command) knows both.
//!
//! An `embedded` profile talks to a sandbox started on the profile's `sandbox_port` (8088 by
//! default) on 127.0.0.1, or on the room-mode address (`listen`, `--listen`), with its state
//! in the data directory's database ([`crate::sandbox::store::db::default_file`]) and the system
//! clock; the engine signs requests at that clock's time ([`crate::client::engine::LocalAspsp`]).
//! Its links (scaRedirect) name the address it listens on, so they survive a restart.
//!
//! A command beside a console (issue 18, cause D): the console holds the profile's
//! `sandbox_port`, so a `psd2-console send ...` on the same home cannot start its own
//! sandbox there. A command starts through [`BesideConsole`] instead: when the port is
//! taken it asks the holder the identity check ([`crate::sandbox::http::identity`], an unsigned
//! `GET /.well-known/psd2-console?challenge=...`). Every embedded sandbox started here
//! answers it with an HMAC of the challenge under the data directory's secret key
//! ([`instance_key`], `<data>/sandbox-identity.key`, 0600, created once), so only a process
//! that can read this home's files proves sameness; the command then uses that running
//! sandbox (same state; its links stay valid after the command ends), signs at its clock,
//! and takes a free port for its own callback listener (the engine, see
//! [`LocalAspsp::shared`]). A holder that fails the check (a foreign program, a
//! psd2-console of another home) stays an error naming the field to change. The console
//! itself never shares ([`EmbeddedSandbox`]): a sandbox that ends with a command would
//! take the console's links with it.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use crate::client::engine::{BoxFuture, LocalAspsp, LocalAspspStarter};

/// What [`LocalAspspStarter::start`] answers: the started sandbox, or why it did not start.
type Starting<'a> = BoxFuture<'a, std::io::Result<Box<dyn LocalAspsp>>>;
use crate::client::{ClientError, Engine};
use crate::profile::{Paths, Profile};
use crate::sandbox::http::identity::{IdentityAnswer, InstanceKey, PATH as IDENTITY_PATH, PRODUCT};
use crate::sandbox::http::operator::OperatorToken;
use crate::sandbox::store::db::{Storage, default_file};
use crate::sandbox::{Clock, SandboxConfig, SandboxHandle};

/// The data directory's secret key file of the identity check ([`instance_key`]).
pub const INSTANCE_KEY_FILE: &str = "sandbox-identity.key";

/// How long the identity check may take before the holder of a port counts as foreign.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Starts the embedded sandbox for `embedded` profiles: on the address the engine gives
/// (the profile's `listen` and `sandbox_port`), state in `<data>/` ([`default_file`]), the
/// system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbeddedSandbox;

/// A running embedded sandbox, the clock it was started with and its operator token.
struct Running {
    handle: SandboxHandle,
    clock: Clock,
    operator_token: Option<String>,
}

impl LocalAspsp for Running {
    fn base_url(&self) -> &str {
        &self.handle.base_url
    }

    fn now(&self) -> SystemTime {
        self.clock.now()
    }

    /// The TPP's own sandbox clock (issue 20: each TPP moves only its own).
    fn now_for(&self, certificate: &crate::cert::Certificate) -> SystemTime {
        self.clock
            .now_in(&crate::sandbox::http::auth::tpp_id(certificate).0)
    }

    fn operator_token(&self) -> Option<&str> {
        self.operator_token.as_deref()
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.handle.shutdown())
    }
}

impl LocalAspspStarter for EmbeddedSandbox {
    fn start<'a>(&'a self, paths: &'a Paths, addr: SocketAddr) -> Starting<'a> {
        Box::pin(start_embedded(paths, addr, None))
    }

    /// Over HTTPS (`sandbox_tls`): a server certificate from the sandbox CA `ca`, a client
    /// certificate asked for but optional (the PSU's browser has none on the SCA pages).
    fn start_tls<'a>(
        &'a self,
        paths: &'a Paths,
        addr: SocketAddr,
        ca: crate::cert::ca::SandboxCa,
    ) -> Starting<'a> {
        Box::pin(async move {
            let tls = crate::sandbox::http::tls::ServerTls::new(ca)
                .map_err(std::io::Error::other)?
                .client_auth(crate::sandbox::http::tls::ClientAuth::Optional);
            start_embedded(paths, addr, Some(tls)).await
        })
    }
}

/// Starts the embedded sandbox on `addr` with its state in `paths` (HTTPS with `tls`).
async fn start_embedded(
    paths: &Paths,
    addr: SocketAddr,
    tls: Option<crate::sandbox::http::tls::ServerTls>,
) -> std::io::Result<Box<dyn LocalAspsp>> {
    let clock = Clock::system();
    // A fresh operator token per start: the console that started the sandbox reaches
    // its operator plane with it also in room mode, where its own requests come
    // from the room address, not loopback.
    let (operator_token, token) = match OperatorToken::generate() {
        Some((text, token)) => (Some(text), Some(token)),
        None => (None, None),
    };
    let handle = crate::sandbox::spawn(
        addr,
        SandboxConfig {
            clock: clock.clone(),
            storage: Storage::File(default_file(&paths.data)),
            // Without a key the sandbox still serves; commands beside it then
            // cannot share it (they say the port is taken).
            identity: instance_key(&paths.data)
                .map_err(|e| tracing::warn!(error = %e, "no sandbox identity key"))
                .ok(),
            operator_token: token,
            tls,
            ..SandboxConfig::default()
        },
    )
    .await?;
    Ok(Box::new(Running {
        handle,
        clock,
        operator_token,
    }) as Box<dyn LocalAspsp>)
}

/// Starts the embedded sandbox for a command (`send`, `import --send`, ...): as
/// [`EmbeddedSandbox`], but when its port is held by a psd2-console serving the same data
/// directory (the identity check, [`probe`]), uses that running sandbox
/// ([`LocalAspsp::shared`]). Any other holder of the port stays an `AddrInUse` error that
/// says what it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct BesideConsole;

/// The sandbox of another psd2-console process on the same data directory.
struct Shared {
    base_url: String,
    /// Its clock minus ours when asked, milliseconds.
    offset_ms: i64,
}

impl LocalAspsp for Shared {
    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn now(&self) -> SystemTime {
        shifted(SystemTime::now(), self.offset_ms)
    }

    fn shared(&self) -> bool {
        true
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        // Not ours to stop.
        Box::pin(async {})
    }
}

impl LocalAspspStarter for BesideConsole {
    fn start<'a>(&'a self, paths: &'a Paths, addr: SocketAddr) -> Starting<'a> {
        Box::pin(async move {
            match EmbeddedSandbox.start(paths, addr).await {
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && addr.port() != 0 => {
                    let Ok(key) = instance_key(&paths.data) else {
                        return Err(e);
                    };
                    match probe(addr, &key).await {
                        Holder::SameHome {
                            base_url,
                            offset_ms,
                        } => {
                            tracing::info!(%addr, "using the embedded sandbox of the psd2-console on this data directory");
                            Ok(Box::new(Shared {
                                base_url,
                                offset_ms,
                            }) as Box<dyn LocalAspsp>)
                        }
                        Holder::OtherHome => Err(std::io::Error::new(
                            std::io::ErrorKind::AddrInUse,
                            "a psd2-console serving another data directory",
                        )),
                        Holder::Foreign => Err(std::io::Error::new(
                            std::io::ErrorKind::AddrInUse,
                            "a program that is not a psd2-console serving this data directory",
                        )),
                    }
                }
                other => other,
            }
        })
    }

    /// Over HTTPS: the console's own sandbox is not shared (the identity check speaks plain
    /// HTTP), so a taken port stays an error.
    fn start_tls<'a>(
        &'a self,
        paths: &'a Paths,
        addr: SocketAddr,
        ca: crate::cert::ca::SandboxCa,
    ) -> Starting<'a> {
        EmbeddedSandbox.start_tls(paths, addr, ca)
    }
}

/// `t` moved by `offset_ms` milliseconds (either way); `t` itself when out of range.
pub fn shifted(t: SystemTime, offset_ms: i64) -> SystemTime {
    let d = Duration::from_millis(offset_ms.unsigned_abs());
    match offset_ms >= 0 {
        true => t.checked_add(d),
        false => t.checked_sub(d),
    }
    .unwrap_or(t)
}

/// Who holds a port ([`probe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// A psd2-console whose sandbox proved it reads this data directory's key: its base URL
    /// and its clock minus ours (milliseconds).
    SameHome {
        /// Its embedded sandbox's base URL.
        base_url: String,
        /// Its sandbox clock minus ours, milliseconds.
        offset_ms: i64,
    },
    /// A psd2-console (it answered the identity check) of another data directory.
    OtherHome,
    /// Anything else: no answer, no HTTP, or not the identity answer.
    Foreign,
}

/// Asks the holder of `addr` the identity check with a fresh random challenge and checks
/// its proof under `key` ([`crate::sandbox::http::identity`]); at most [`PROBE_TIMEOUT`].
pub async fn probe(addr: SocketAddr, key: &InstanceKey) -> Holder {
    let mut raw = [0u8; 32];
    if aws_lc_rs::rand::fill(&mut raw).is_err() {
        return Holder::Foreign;
    }
    let challenge = crate::sandbox::http::identity::to_hex(&raw);
    let base_url = format!("http://{addr}");
    let Ok(http) = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return Holder::Foreign;
    };
    let asked = SystemTime::now();
    let answer = async {
        let r = http
            .get(format!("{base_url}{IDENTITY_PATH}"))
            .query(&[("challenge", &challenge)])
            .send()
            .await
            .ok()?;
        if !r.status().is_success() {
            return None;
        }
        // The answer is small: anything longer is not one.
        let body = r.bytes().await.ok()?;
        (body.len() <= 4096)
            .then(|| serde_json::from_slice::<IdentityAnswer>(&body).ok())
            .flatten()
    }
    .await;
    let Some(a) = answer.filter(|a| a.product == PRODUCT) else {
        return Holder::Foreign;
    };
    if !key.verify(&challenge, &a.proof) {
        return Holder::OtherHome;
    }
    let ours = asked
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Holder::SameHome {
        base_url,
        offset_ms: a.now.saturating_sub(ours),
    }
}

/// The data directory's secret key of the identity check: `<data>/`[`INSTANCE_KEY_FILE`],
/// 32 random bytes as hex, created on first use (mode 0600, atomically and never replaced,
/// so two processes starting at once agree on one key).
///
/// Errors: the data directory cannot be created or the file written or read; a file that
/// does not hold 32 bytes of hex is an `InvalidData` error naming it.
pub fn instance_key(data: &Path) -> std::io::Result<InstanceKey> {
    let file = data.join(INSTANCE_KEY_FILE);
    if !file.exists() {
        Paths {
            config: PathBuf::new(),
            data: data.to_path_buf(),
        }
        .ensure_data_dir()
        .map_err(|e| e.error)?;
        let mut raw = [0u8; 32];
        aws_lc_rs::rand::fill(&mut raw)
            .map_err(|_| std::io::Error::other("no random bytes for the sandbox identity key"))?;
        let mut tmp = tempfile::NamedTempFile::new_in(data)?;
        std::io::Write::write_all(
            &mut tmp,
            crate::sandbox::http::identity::to_hex(&raw).as_bytes(),
        )?;
        tmp.as_file().sync_all()?;
        // Another process may have made it meanwhile: then its key counts.
        match tmp.persist_noclobber(&file) {
            Ok(_) => {}
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.error),
        }
    }
    let text = std::fs::read_to_string(&file)?;
    crate::sandbox::http::identity::from_hex(text.trim())
        .filter(|k| k.len() == 32)
        .map(|k| InstanceKey::new(&k))
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} does not hold a sandbox identity key (64 hex digits): remove it, a new one is made",
                    file.display()
                ),
            )
        })
}

/// The console's `--listen ADDR`, set once at start ([`listen_on`]).
static LISTEN: OnceLock<IpAddr> = OnceLock::new();

/// Room mode for every profile this process starts from now on (the first one and those
/// switched to): `--listen ADDR` wins over the profiles' `listen`. Set once; a second call
/// is ignored.
pub fn listen_on(addr: IpAddr) {
    let _ = LISTEN.set(addr);
}

/// The profile as this process starts it: `--listen` ([`listen_on`]) over its `listen`,
/// and any free ports when [`crate::profile::FREE_PORTS_ENV`] is `1`.
pub fn as_started(mut profile: Profile) -> Profile {
    if let Some(addr) = LISTEN.get() {
        profile.listen = Some(*addr);
    }
    profile.with_free_ports_from_env()
}

/// Starts `profile` ([`as_started`]) with the embedded sandbox for `embedded` targets
/// ([`Engine::start`] with [`EmbeddedSandbox`]).
///
/// Errors: those of [`Engine::start`].
pub async fn start_engine(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
    Engine::start(as_started(profile), paths, &EmbeddedSandbox).await
}

/// The console's start of `profile` ([`as_started`]): [`Engine::start_offline`], so the
/// first frame is drawn before the embedded sandbox starts; the console then starts it with
/// [`EmbeddedSandbox`] beside its event loop (issue 23), and what needs it waits.
///
/// Errors: those of [`Engine::start_offline`].
pub fn start_console_engine(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
    Engine::start_offline(as_started(profile), paths)
}

/// [`start_engine`] for a command (`send`, `import --send`, `case export`, ...): with
/// [`BesideConsole`], so that beside a console on the same data directory it uses the
/// console's embedded sandbox and a free port for its callback listener.
///
/// Errors: those of [`Engine::start`].
pub async fn start_command_engine(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
    Engine::start(as_started(profile), paths, &BesideConsole).await
}
