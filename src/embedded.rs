//! The composition layer: wires the console ([`crate::client`], [`crate::tui`], the CLI) to
//! the embedded sandbox ASPSP ([`crate::sandbox`]). It sits above both: the client never
//! imports the sandbox, and the sandbox never imports the client; only this module (and the
//! binary's `sandbox serve` command) knows both.
//!
//! An `embedded` profile talks to a sandbox started on the profile's `sandbox_port` (8088 by
//! default) on 127.0.0.1, or on the room-mode address (`listen`, `--listen`), with its state
//! in the data directory's database ([`crate::sandbox::db::default_file`]) and the system
//! clock; the engine signs requests at that clock's time ([`crate::client::engine::LocalAspsp`]).
//! Its links (scaRedirect) name the address it listens on, so they survive a restart.

use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::client::engine::{BoxFuture, LocalAspsp, LocalAspspStarter};
use crate::client::{ClientError, Engine};
use crate::profile::{Paths, Profile};
use crate::sandbox::db::{Storage, default_file};
use crate::sandbox::operator::OperatorToken;
use crate::sandbox::{Clock, SandboxConfig, SandboxHandle};

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
            .now_in(&crate::sandbox::auth::tpp_id(certificate).0)
    }

    fn operator_token(&self) -> Option<&str> {
        self.operator_token.as_deref()
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.handle.shutdown())
    }
}

impl LocalAspspStarter for EmbeddedSandbox {
    fn start<'a>(
        &'a self,
        paths: &'a Paths,
        addr: SocketAddr,
    ) -> BoxFuture<'a, std::io::Result<Box<dyn LocalAspsp>>> {
        Box::pin(async move {
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
                    operator_token: token,
                    ..SandboxConfig::default()
                },
            )
            .await?;
            Ok(Box::new(Running {
                handle,
                clock,
                operator_token,
            }) as Box<dyn LocalAspsp>)
        })
    }
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
