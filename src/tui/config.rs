//! The console's config file, `<config>/config.toml` (the config directory of
//! [`Paths`]; `PSD2_CONSOLE_HOME` moves it to `$PSD2_CONSOLE_HOME/config`):
//!
//! ```toml
//! theme = "light"            # a built-in theme or one of <config>/themes/*.toml
//!
//! [keys]                     # command = [keys]; replaces the command's keys everywhere
//! send = ["s", "ctrl-enter"]
//! toggle_theme = ["T"]
//!
//! [presenter]                # presenter mode (P, --presenter)
//! mask_customer_numbers = true   # also shorten sandbox customer numbers (default false)
//! ```
//!
//! Command names are [`Command::name`](super::keymap::Command::name), keys are
//! [`parse_key`](super::keymap::parse_key). Everything that goes wrong (TOML syntax, unknown
//! keys or commands, bad keys, clashes) is reported in the status line as `file:line: reason`
//! and the rest of the file still applies. The theme at start is, in this order:
//! `PSD2_CONSOLE_THEME`, the file's `theme`, `dark`.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::keymap::{KeyOverride, Keymap};
use super::theme::{DEFAULT_THEME, Theme, ThemeSet, line_of, toml_error};
use crate::profile::Paths;

/// File name of the config file in the config directory.
pub const CONFIG_FILE: &str = "config.toml";

/// Directory of the user's themes inside the config directory.
pub const THEMES_DIR: &str = "themes";

/// `<config>/config.toml`.
pub fn config_file(paths: &Paths) -> PathBuf {
    paths.config.join(CONFIG_FILE)
}

/// `<config>/themes`.
pub fn themes_dir(paths: &Paths) -> PathBuf {
    paths.config.join(THEMES_DIR)
}

/// The content of the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsoleConfig {
    /// `theme = "..."`: the theme to start with.
    pub theme: Option<String>,
    /// The `[keys]` entries, in file order.
    pub keys: Vec<KeyOverride>,
    /// `[presenter] mask_customer_numbers`: presenter mode also shortens sandbox customer
    /// numbers ([`super::presenter`]).
    pub mask_customer_numbers: bool,
    /// What could not be understood, as `file:line: reason`.
    pub problems: Vec<String>,
}

/// Parses the config file `text` read from `origin` (used in messages). Never fails: a
/// TOML syntax error gives an empty config with one problem; unknown keys and values of the
/// wrong type are problems, the rest applies.
pub fn parse_config(text: &str, origin: &str) -> ConsoleConfig {
    let mut cfg = ConsoleConfig::default();
    let doc = match DeTable::parse(text) {
        Ok(d) => d,
        Err(e) => {
            cfg.problems
                .push(format!("{}; file ignored", toml_error(origin, text, &e)));
            return cfg;
        }
    };
    let at = |start: usize| format!("{origin}:{}", line_of(text, start));
    // A problem of the file: `what` at the line of byte `start`.
    let problem = |start: usize, what: &str| format!("{}: {what}", at(start));
    let mut entries: Vec<_> = doc.get_ref().iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (k, v) in entries {
        let key: &str = k.get_ref();
        match (key, v.get_ref()) {
            ("theme", DeValue::String(s)) => cfg.theme = Some(s.to_string()),
            ("theme", _) => cfg.problems.push(problem(
                v.span().start,
                "theme must be a string such as \"light\"",
            )),
            ("keys", DeValue::Table(t)) => {
                let mut keys: Vec<_> = t.iter().collect();
                keys.sort_by_key(|(k, _)| k.span().start);
                for (cmd, val) in keys {
                    let origin = at(cmd.span().start);
                    let list = match val.get_ref() {
                        DeValue::String(s) => Some(vec![s.to_string()]),
                        DeValue::Array(a) => a
                            .iter()
                            .map(|x| x.get_ref().as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>(),
                        _ => None,
                    };
                    match list {
                        Some(keys) => cfg.keys.push(KeyOverride {
                            command: cmd.get_ref().to_string(),
                            keys,
                            origin,
                        }),
                        None => cfg.problems.push(format!(
                            "{origin}: {}: keys must be a list of strings such as [\"s\", \"ctrl-enter\"]; ignored",
                            cmd.get_ref()
                        )),
                    }
                }
            }
            ("keys", _) => cfg
                .problems
                .push(problem(v.span().start, "keys must be a table ([keys])")),
            ("presenter", DeValue::Table(t)) => {
                for (name, val) in t.iter() {
                    match (name.get_ref().as_ref(), val.get_ref()) {
                        ("mask_customer_numbers", DeValue::Boolean(b)) => {
                            cfg.mask_customer_numbers = *b
                        }
                        ("mask_customer_numbers", _) => cfg.problems.push(problem(val.span().start, "mask_customer_numbers must be true or false")),
                        (other, _) => cfg.problems.push(problem(
                            name.span().start,
                            &format!("unknown key \"{other}\" in [presenter] (known: mask_customer_numbers)"),
                        )),
                    }
                }
            }
            ("presenter", _) => cfg.problems.push(problem(
                v.span().start,
                "presenter must be a table ([presenter])",
            )),
            (other, _) => cfg.problems.push(problem(
                k.span().start,
                &format!("unknown key \"{other}\" (known: theme, [keys], [presenter])"),
            )),
        }
    }
    cfg
}

/// Reads the config file at `path`; a missing file is an empty config, an unreadable one
/// an empty config with a problem.
pub fn read_config(path: &Path) -> ConsoleConfig {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_config(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ConsoleConfig::default(),
        Err(e) => ConsoleConfig {
            problems: vec![format!("{}: cannot read: {e}", path.display())],
            ..ConsoleConfig::default()
        },
    }
}

/// What the console starts with: keys, themes and the start theme, and every problem met
/// on the way (for the status line). The default: [`super::keymap::KEYMAP`], the built-in
/// themes, dark, no problems.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// [`super::keymap::KEYMAP`] with the config file's overrides.
    pub keymap: Keymap,
    /// Built-in and user themes.
    pub themes: ThemeSet,
    /// The theme to start with.
    pub theme: Theme,
    /// Presenter mode also shortens sandbox customer numbers (`[presenter]`).
    pub mask_customer_numbers: bool,
    /// Problems as `file:line: reason`.
    pub problems: Vec<String>,
}

/// Reads `<config>/config.toml` and `<config>/themes/*.toml`; the start theme comes from
/// `PSD2_CONSOLE_THEME` ([`super::THEME_ENV`]) if set.
pub fn load(paths: &Paths) -> Setup {
    let env = std::env::var(super::THEME_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    load_with(paths, env.as_deref())
}

/// [`load`] with the environment's theme passed in (`None`: unset).
pub fn load_with(paths: &Paths, env_theme: Option<&str>) -> Setup {
    let cfg = read_config(&config_file(paths));
    let themes = ThemeSet::load(Some(&themes_dir(paths)));
    let mut problems = cfg.problems.clone();
    problems.extend(themes.problems().iter().cloned());
    let mut keymap = Keymap::default();
    problems.extend(keymap.apply_overrides(&cfg.keys));
    let wanted = env_theme
        .map(|t| (t.trim().to_string(), super::THEME_ENV.to_string()))
        .or_else(|| {
            cfg.theme
                .clone()
                .map(|t| (t, config_file(paths).display().to_string()))
        });
    let theme = match wanted {
        None => themes
            .select(DEFAULT_THEME)
            .unwrap_or_else(|_| Theme::dark()),
        Some((name, from)) => match themes.select(&name) {
            Ok(t) => t,
            Err(e) => {
                // A broken file already names itself in the problems: say it once.
                let e = e.to_string();
                problems.retain(|p| !e.contains(p.as_str()));
                problems.push(format!("{from}: {e}"));
                Theme::dark()
            }
        },
    };
    Setup {
        keymap,
        themes,
        theme,
        mask_customer_numbers: cfg.mask_customer_numbers,
        problems,
    }
}
