//! `profile list` and `profile show`.

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::Subcommand;

use psd2_console::profile::{Paths, ProfileSet, Target};

#[derive(Subcommand)]
pub(super) enum ProfileCommand {
    /// Profiles, one per line: name and target (tab-separated); the directory of the
    /// profile files on stderr.
    List,
    /// One profile as TOML.
    Show { name: String },
}

/// Runs `command` on the profiles of `paths` (a profile file that does not load is a
/// warning on stderr).
///
/// Errors: `show` of a profile that does not exist; TOML serialization.
pub(super) fn run(command: ProfileCommand, paths: &Paths) -> Result<ExitCode> {
    let profiles = ProfileSet::load(Some(&paths.profiles_dir()));
    for e in &profiles.errors {
        eprintln!("warning: {e}");
    }
    match command {
        ProfileCommand::List => {
            // The directory the profile files live in (profiles/*.toml say to look
            // here for it); on stderr, so stdout stays one profile per line.
            eprintln!(
                "profiles directory: {} (a NAME.toml file there adds a profile)",
                paths.profiles_dir().display()
            );
            for p in &profiles.profiles {
                let target = match &p.target {
                    Target::Embedded => "embedded".to_string(),
                    Target::Url(u) => u.clone(),
                };
                out!("{}\t{}", p.name, target);
            }
            Ok(ExitCode::SUCCESS)
        }
        ProfileCommand::Show { name } => {
            let p = profiles
                .get(&name)
                .ok_or_else(|| anyhow!("no profile {name:?}"))?;
            print!("{}", toml::to_string_pretty(p)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
