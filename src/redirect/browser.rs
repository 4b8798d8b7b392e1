//! Opening an `scaRedirect` link in the PSU's browser: the console's `o` on the SCA prompt
//! and the commands' `send --wait-sca` and `import --send --wait-sca` use this one
//! definition (through the `open` crate).
//!
//! On Linux and the BSDs a browser is tried only in a graphical session (`DISPLAY` or
//! `WAYLAND_DISPLAY` set) or when `BROWSER` names one: without them `xdg-open` would start
//! a text browser that fights the console for the terminal. macOS (`/usr/bin/open`, which
//! hands the link to LaunchServices) and Windows need no such variable.

/// Whether this OS needs a graphical session (or `BROWSER`) before a browser is tried:
/// Unix but not macOS.
const NEEDS_GRAPHICAL_SESSION: bool = cfg!(all(unix, not(target_os = "macos")));

/// The environment variables that say a browser can be shown ([`NEEDS_GRAPHICAL_SESSION`]).
const SESSION_VARS: [&str; 3] = ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"];

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

/// Whether a browser may be tried here; `set` says whether an environment variable is set
/// and not empty.
///
/// Errors: [`BrowserError::NoGraphicalSession`] on Linux/BSD without any of
/// [`SESSION_VARS`].
fn may_open(set: impl Fn(&str) -> bool) -> Result<(), BrowserError> {
    if NEEDS_GRAPHICAL_SESSION && !SESSION_VARS.iter().any(|v| set(v)) {
        return Err(BrowserError::NoGraphicalSession);
    }
    Ok(())
}

/// Whether the environment variable `name` is set and not empty.
fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|x| !x.is_empty())
}

/// The commands [`open_browser`] would try for `url` on this OS, in order (the `open`
/// crate's launchers: `xdg-open`, `gio`, ... on Linux; `/usr/bin/open` on macOS), with the
/// environment read through `set` (whether a variable is set and not empty).
///
/// Errors: [`BrowserError::NoGraphicalSession`] as [`open_browser`].
pub fn browser_commands(
    url: &str,
    set: impl Fn(&str) -> bool,
) -> Result<Vec<std::process::Command>, BrowserError> {
    may_open(set)?;
    Ok(open::commands(url))
}

/// Opens `url` in the browser, detached (the call returns once a launcher started).
///
/// Errors: [`BrowserError::NoGraphicalSession`] on Linux/BSD without a graphical session
/// or `BROWSER` (nothing is tried); [`BrowserError::Open`] when no launcher could start.
pub fn open_browser(url: &str) -> Result<(), BrowserError> {
    may_open(env_set)?;
    Ok(open::that_detached(url)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:8088/sca/abc";

    fn programs(set: impl Fn(&str) -> bool) -> Result<Vec<String>, BrowserError> {
        browser_commands(URL, set).map(|cs| {
            cs.iter()
                .map(|c| c.get_program().to_string_lossy().into_owned())
                .collect()
        })
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn on_linux_a_browser_is_tried_only_in_a_graphical_session_or_with_browser() {
        assert!(matches!(
            programs(|_| false),
            Err(BrowserError::NoGraphicalSession)
        ));
        for var in SESSION_VARS {
            let found = programs(|v| v == var).unwrap();
            assert_eq!(found.first().map(String::as_str), Some("xdg-open"), "{var}");
        }
        let first = browser_commands(URL, |v| v == "DISPLAY").unwrap();
        let args: Vec<_> = first[0].get_args().collect();
        assert_eq!(args.last().map(|a| a.to_string_lossy()), Some(URL.into()));
    }

    #[cfg(target_os = "macos")]
    #[test]
    fn on_macos_the_link_is_handed_to_open_without_any_display_variable() {
        assert_eq!(programs(|_| false).unwrap(), vec!["/usr/bin/open"]);
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_browser_is_tried_without_any_display_variable() {
        assert!(!programs(|_| false).unwrap().is_empty());
    }
}
