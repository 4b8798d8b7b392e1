//! The console (no command): the TUI on a profile, optionally giving a lesson or in
//! presenter mode.

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};

use psd2_console::embedded::start_console_engine;
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};

/// What the global flags ask of the console.
pub(super) struct ConsoleOptions {
    /// `--profile` (or the case bundle's profile); the default profile when absent.
    pub profile: Option<String>,
    /// `--lesson`: the lesson's id.
    pub lesson: Option<String>,
    /// `--presenter`.
    pub presenter: bool,
}

/// Opens the console on the home `paths` until the user quits.
///
/// Errors: an unknown lesson (before the terminal is taken) or profile, the log file, the
/// engine's start, or the terminal.
pub(super) async fn run(paths: Paths, options: ConsoleOptions) -> Result<ExitCode> {
    // An unknown lesson is reported before the terminal is taken.
    let lesson = match &options.lesson {
        Some(name) => {
            let dir = psd2_console::lessons::lessons_dir(&paths);
            let set = psd2_console::lessons::LessonSet::load(Some(&dir));
            Some(set.require(name, &dir).map_err(|e| anyhow!(e))?.clone())
        }
        None => None,
    };
    // The TUI owns the terminal: logs go to <data dir>/console.log (0600).
    psd2_console::logging::init_file(&psd2_console::logging::console_log_file(&paths.data))
        .with_context(|| format!("opening the log file in {}", paths.data.display()))?;
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    let name = options.profile.as_deref().unwrap_or(DEFAULT_PROFILE);
    let profile = profiles.require(name).cloned().map_err(|e| anyhow!(e))?;
    // The embedded sandbox starts after the first frame (the console's event loop).
    let engine = start_console_engine(profile, paths)?;
    let options = psd2_console::tui::RunOptions {
        presenter: options.presenter,
        lesson,
    };
    psd2_console::tui::run_with(engine, profiles, options).await?;
    Ok(ExitCode::SUCCESS)
}
