//! The profiles screen's state: the loaded profiles with what the inspector shows about
//! each (certificate, session), the highlighted one, and the open form
//! ([`super::profiles`] handles its keys and draws it).

use std::path::PathBuf;

use std::sync::Arc;

use crate::cert::{CertError, Certificate};
use crate::profile::edit::{FieldError, ProfileDraft};
use crate::profile::{Paths, ProfileError, ProfileSet, SessionState};

/// What the form is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormKind {
    /// A new profile.
    New,
    /// Editing the user profile `original`, read from `source`.
    Edit {
        /// The name before editing.
        original: String,
        /// Its file.
        source: PathBuf,
    },
    /// A copy of profile `from`.
    Clone {
        /// The name of the profile copied.
        from: String,
    },
}

/// The profile form: the draft, the highlighted field, the cursor, and the errors of the
/// last save attempt.
#[derive(Debug, Clone)]
pub struct ProfileForm {
    /// What saving does.
    pub kind: FormKind,
    /// The field values.
    pub draft: ProfileDraft,
    /// Index of the highlighted field in [`crate::profile::edit::FIELDS`].
    pub field: usize,
    /// Cursor position in the field, in characters.
    pub cursor: usize,
    /// Why the last save was refused, per field.
    pub errors: Vec<FieldError>,
}

/// Why the inspector cannot tell whether a key matches its certificate.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KeyCheckError {
    /// The key file cannot be read or parsed.
    #[error(transparent)]
    Key(Arc<CertError>),
    /// The certificate cannot be read, so there is nothing to compare with.
    #[error("the certificate cannot be read")]
    NoCertificate,
}

/// The certificate of a profile as the inspector shows it.
#[derive(Debug, Clone)]
pub enum CertInfo {
    /// No certificate configured; why, and what happens instead.
    Missing(String),
    /// Certificate and key files, parsed.
    Files {
        /// The certificate file.
        cert_path: PathBuf,
        /// The key file.
        key_path: Option<PathBuf>,
        /// The parsed certificate, or why it cannot be read.
        cert: Result<Box<Certificate>, Arc<CertError>>,
        /// Whether the key's public half is the certificate's (`None` without a key file),
        /// or why that cannot be told.
        key_match: Option<Result<bool, KeyCheckError>>,
    },
}

/// What the screen shows about one profile, read when the profiles are (re)loaded.
#[derive(Debug, Clone)]
pub struct ProfileDetails {
    /// The certificate inspector's content.
    pub cert: CertInfo,
    /// The session file.
    pub session_file: PathBuf,
    /// The session state, or why it cannot be read.
    pub session: Result<SessionState, Arc<ProfileError>>,
}

/// State of the profiles screen.
#[derive(Debug, Clone, Default)]
pub struct ProfilesView {
    /// Index of the highlighted profile.
    pub selected: usize,
    /// The loaded profiles.
    pub set: ProfileSet,
    /// Details per profile of `set`, same order.
    pub details: Vec<ProfileDetails>,
    /// Where profiles, certificates and sessions live (`None` before the first load).
    pub paths: Option<Paths>,
    /// The open form, if any.
    pub form: Option<ProfileForm>,
    /// The name of the profile to delete, while asking y/n.
    pub confirm_delete: Option<String>,
    /// Select this profile after the next load (after a save).
    pub(crate) pending_select: Option<String>,
    /// The active profile was saved: restart it under this name after the next load, so
    /// its edits apply at once ([`crate::tui::App::take_apply_after_load`]).
    pub apply_after_load: Option<String>,
    /// Fixed "now" (Unix seconds) for tests; `None`: the system clock.
    pub clock: Option<i64>,
}
