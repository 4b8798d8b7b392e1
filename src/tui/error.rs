//! Errors the runner hands to the console ([`App::finish_send`](crate::tui::App::finish_send),
//! [`App::browser_opened`](crate::tui::App::browser_opened)); each keeps its source, and its text is what the status
//! line shows.

use crate::client::ClientError;

/// Why a request got no response to show.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Building, sending or reading the exchange failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The task sending it (or pretty-printing the answer) failed.
    #[error("internal error: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Why the browser could not be opened for SCA.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// Linux/BSD without `DISPLAY`, `WAYLAND_DISPLAY` or `BROWSER`: a text browser would
    /// fight the console for the terminal, so none is tried.
    #[error("no graphical session here (DISPLAY and WAYLAND_DISPLAY are not set)")]
    NoGraphicalSession,
    /// Starting the browser failed (the `open` crate's error).
    #[error(transparent)]
    Open(#[from] std::io::Error),
    /// The task starting it failed.
    #[error("internal error: {0}")]
    Task(#[from] tokio::task::JoinError),
}
