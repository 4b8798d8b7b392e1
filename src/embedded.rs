//! The composition layer: wires the console ([`crate::client`], [`crate::tui`], the CLI) to
//! the embedded sandbox ASPSP ([`crate::sandbox`]). It sits above both: the client never
//! imports the sandbox, and the sandbox never imports the client; only this module (and the
//! binary's `sandbox serve` command) knows both.
//!
//! An `embedded` profile talks to a sandbox started on a free loopback port, with its state
//! in the data directory's database ([`crate::sandbox::db::default_file`]) and the system
//! clock; the engine signs requests at that clock's time ([`crate::client::engine::LocalAspsp`]).

use std::net::SocketAddr;
use std::time::SystemTime;

use crate::client::engine::{BoxFuture, LocalAspsp, LocalAspspStarter};
use crate::client::{ClientError, Engine};
use crate::profile::{Paths, Profile};
use crate::sandbox::db::{Storage, default_file};
use crate::sandbox::{Clock, SandboxConfig, SandboxHandle};

/// Starts the embedded sandbox for `embedded` profiles: loopback, a free port, state in
/// `<data>/` ([`default_file`]), the system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbeddedSandbox;

/// A running embedded sandbox and the clock it was started with.
struct Running {
    handle: SandboxHandle,
    clock: Clock,
}

impl LocalAspsp for Running {
    fn base_url(&self) -> &str {
        &self.handle.base_url
    }

    fn now(&self) -> SystemTime {
        self.clock.now()
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(self.handle.shutdown())
    }
}

impl LocalAspspStarter for EmbeddedSandbox {
    fn start<'a>(
        &'a self,
        paths: &'a Paths,
    ) -> BoxFuture<'a, std::io::Result<Box<dyn LocalAspsp>>> {
        Box::pin(async move {
            let clock = Clock::system();
            let handle = crate::sandbox::spawn(
                SocketAddr::from(([127, 0, 0, 1], 0)),
                SandboxConfig {
                    clock: clock.clone(),
                    storage: Storage::File(default_file(&paths.data)),
                    ..SandboxConfig::default()
                },
            )
            .await?;
            Ok(Box::new(Running { handle, clock }) as Box<dyn LocalAspsp>)
        })
    }
}

/// Starts `profile` with the embedded sandbox for `embedded` targets ([`Engine::start`] with
/// [`EmbeddedSandbox`]).
///
/// Errors: those of [`Engine::start`].
pub async fn start_engine(profile: Profile, paths: Paths) -> Result<Engine, ClientError> {
    Engine::start(profile, paths, &EmbeddedSandbox).await
}
