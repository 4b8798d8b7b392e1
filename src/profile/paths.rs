//! Where psd2-console keeps its files (directories::ProjectDirs), overridable with the
//! `PSD2_CONSOLE_HOME` environment variable (then `<home>/config` and `<home>/data`).

use std::path::PathBuf;

/// The data directory cannot be created ([`Paths::ensure_data_dir`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot create the data directory {}: {error} (make it writable, or set PSD2_CONSOLE_HOME to a writable directory)",
    path.display()
)]
pub(crate) struct DataDirError {
    /// The directory.
    pub path: PathBuf,
    /// What the system said.
    pub error: std::io::Error,
}

/// Config and data directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// User profiles live in `<config>/profiles`.
    pub config: PathBuf,
    /// Generated certificates (`certs/`), session state (`sessions/`), history.
    pub data: PathBuf,
}

/// Environment variable that moves all files under one directory (tests, demos).
pub(crate) const HOME_ENV: &str = "PSD2_CONSOLE_HOME";

impl Paths {
    /// `PSD2_CONSOLE_HOME` if set, else the platform directories, else `./.psd2-console`.
    pub fn from_env() -> Self {
        if let Some(home) = std::env::var_os(HOME_ENV) {
            return Self::under(PathBuf::from(home));
        }
        match directories::ProjectDirs::from("", "", "psd2-console") {
            Some(d) => Paths {
                config: d.config_dir().to_path_buf(),
                data: d.data_dir().to_path_buf(),
            },
            None => Self::under(PathBuf::from(".psd2-console")),
        }
    }

    /// Everything under `home`.
    pub fn under(home: PathBuf) -> Self {
        Paths {
            config: home.join("config"),
            data: home.join("data"),
        }
    }

    /// `<config>/profiles`: the profile files.
    pub fn profiles_dir(&self) -> PathBuf {
        self.config.join("profiles")
    }

    /// `<data>/certs`: generated certificates and keys.
    pub fn certs_dir(&self) -> PathBuf {
        self.data.join("certs")
    }

    /// The history database, `<data>/history.sqlite3`.
    pub fn history_file(&self) -> PathBuf {
        self.data.join("history.sqlite3")
    }

    /// Creates the data directory (and its parents) when missing, mode 0700 on Unix: it
    /// holds session files, the history and generated keys (PSU data and secrets). An
    /// existing data directory is tightened to 0700 too (best effort).
    ///
    /// Errors: [`DataDirError`] naming the directory, e.g. for a read-only home.
    pub(crate) fn ensure_data_dir(&self) -> Result<(), DataDirError> {
        let err = |e: std::io::Error| DataDirError {
            path: self.data.clone(),
            error: e,
        };
        if !self.data.is_dir() {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            b.create(&self.data).map_err(err)?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(m) = std::fs::metadata(&self.data)
                && m.permissions().mode() & 0o077 != 0
            {
                let _ =
                    std::fs::set_permissions(&self.data, std::fs::Permissions::from_mode(0o700));
            }
        }
        Ok(())
    }

    /// Session state of the profile with slug `slug`.
    pub fn session_file(&self, slug: &str) -> PathBuf {
        self.data.join("sessions").join(format!("{slug}.toml"))
    }
}
