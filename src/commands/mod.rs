//! The subcommands' bodies, one module each; `main` parses the command line and dispatches to
//! them. What several share lives here: printing, the database target, the runtime, loading
//! fixtures and the console's starting model.

pub mod calibrate;
pub mod check;
pub mod contexts;
pub mod demo;
pub mod export;
pub mod grant;
pub mod migrate;
pub mod models;
pub mod settings;
pub mod simulate;
pub mod trace;
pub mod watch;

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};

use gavel::cli;
use gavel::config::Config;
use gavel::config::theme::Theme;
use gavel::console::app::Model;
use gavel::domain::Limits;
use gavel::simulate::{Fixture, FixtureErrors};
use gavel::store::postgres::Target;

/// Writes `text` to standard output; a closed pipe is an error `main` recognises.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Prints each of `warnings` on stderr.
pub fn warn_all(warnings: &[String]) {
    for warning in warnings {
        eprintln!("gavel: warning: {warning}");
    }
}

/// Ctrl-C (or SIGTERM) ends a command doing long work at once, with the signal's status:
/// the stage in hand says how far it got (its half-written files removed), and what was
/// embedded is said as at a normal end. Called by each such command before its work starts.
pub fn stop_on_interrupt() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).context("cannot catch Ctrl-C")?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let how_far = gavel::progress::interrupted()
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            eprintln!("gavel: interrupted{how_far}");
            note_embedding();
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

/// What each model embedded and read back in this process, a note each on stderr (nothing
/// when nothing was embedded or read back).
pub fn note_embedding() {
    for tally in gavel::embed::tallies() {
        eprintln!("gavel: note: {tally}");
    }
}

/// A multi-threaded async runtime.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("cannot start the async runtime")
}

/// The database to use, from `--db` or the environment; warnings (a password file that may not
/// be used) are printed before anything starts.
pub fn target(db: Option<&str>) -> Result<Target> {
    let target = Target::from_env(db)?;
    warn_all(&target.warnings());
    Ok(target)
}

/// The console's starting model, from the command line and the config, and the theme file to
/// watch for edits.
pub fn console_model(
    source: String,
    console: &cli::Console,
    config: &Config,
    live: bool,
) -> Result<(Model, Option<PathBuf>)> {
    let operator = console
        .operator
        .clone()
        .unwrap_or_else(|| config.operator_name());
    let (theme, theme_file) = Theme::load(console.theme.as_deref().unwrap_or(&config.ui.theme))?;
    let mut model = if live {
        Model::live(source, operator, config)
    } else {
        Model::new(source, operator, config)
    };
    model.settings.theme = theme;
    model.settings.read_only = console.read_only;
    Ok((model, theme_file))
}

/// The recordings `paths` name (files, or folders of `*.jsonl` files), or the bundled ones when
/// none are named; every problem in every file is reported at once.
pub fn load_fixtures(paths: &[PathBuf], limits: &Limits) -> Result<Vec<Fixture>> {
    if paths.is_empty() {
        return Ok(Fixture::bundled()?);
    }
    let mut fixtures = Vec::new();
    let mut problems = Vec::new();
    for loaded in Fixture::load_each(paths, limits) {
        match loaded {
            Ok(fixture) => fixtures.push(fixture),
            Err(errors) => problems.extend(errors.0),
        }
    }
    if problems.is_empty() {
        Ok(fixtures)
    } else {
        Err(FixtureErrors(problems).into())
    }
}
