//! Where psd2-console keeps its files (directories::ProjectDirs), overridable with the
//! `PSD2_CONSOLE_HOME` environment variable (then `<home>/config` and `<home>/data`).

use std::path::PathBuf;

/// Config and data directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// User profiles live in `<config>/profiles`.
    pub config: PathBuf,
    /// Generated certificates (`certs/`), session state (`sessions/`), history.
    pub data: PathBuf,
}

/// Environment variable that moves all files under one directory (tests, demos).
pub const HOME_ENV: &str = "PSD2_CONSOLE_HOME";

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

    pub fn profiles_dir(&self) -> PathBuf {
        self.config.join("profiles")
    }

    pub fn certs_dir(&self) -> PathBuf {
        self.data.join("certs")
    }

    /// Session state of the profile with slug `slug`.
    pub fn session_file(&self, slug: &str) -> PathBuf {
        self.data.join("sessions").join(format!("{slug}.toml"))
    }
}
