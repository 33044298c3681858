//! Wire-up only: command line -> logging -> configuration -> the chosen command.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Parser;
use tokio::sync::mpsc::unbounded_channel;

use gavel::app::{Command, Model};
use gavel::cli::{Cli, Commands};
use gavel::config::Config;
use gavel::simulate::{Fixture, Playback};
use gavel::theme::Theme;
use gavel::{demo, logging, tui};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gavel: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let config = Config::load(cli.config.as_deref())?;
    match cli.command {
        Commands::Check { fixtures } => Ok(check(&fixtures)),
        Commands::Demo {
            fixtures,
            operator,
            speed,
        } => {
            let log_dir = cli.log_dir.unwrap_or_else(logging::default_dir);
            let _guard = logging::init(&log_dir)?;
            let fixtures = if fixtures.is_empty() {
                Fixture::bundled()?
            } else {
                fixtures
                    .iter()
                    .map(|path| Fixture::load(path))
                    .collect::<Result<_, _>>()?
            };
            let operator = operator.unwrap_or_else(|| config.operator_name());
            let source = format!("demo: {} recorded debates", fixtures.len());
            let mut model = Model::new(source, operator, config.controller.clone());
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
            runtime.block_on(async {
                let (events, receiver) = unbounded_channel();
                let commands = demo::start(fixtures, Arc::new(config), events.clone());
                model.playback = Playback {
                    paused: false,
                    speed,
                };
                let _ = commands.send(Command::SetPlayback(model.playback));
                tui::run(model, Theme::dark(), (events, receiver), commands).await
            })?;
            runtime.shutdown_background();
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn check(paths: &[std::path::PathBuf]) -> ExitCode {
    let mut failed = false;
    for path in paths {
        match Fixture::load(path) {
            Ok(fixture) => println!(
                "{}: ok ({} turns, {} rounds)",
                path.display(),
                fixture.turns.len(),
                fixture.last_round()
            ),
            Err(errors) => {
                failed = true;
                eprintln!("{errors}");
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
