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

/// Why the browser could not be opened for SCA (defined beside the one `open_browser`).
pub use crate::redirect::BrowserError;
