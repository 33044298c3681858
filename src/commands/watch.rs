//! `gavel watch`: the console on a database an orchestrator writes to, or on a subscriber of
//! it (`--read-from`), writing the database itself.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use tokio::sync::mpsc::unbounded_channel;

use gavel::cli::Console;
use gavel::config::Config;
use gavel::console::app::Reading;
use gavel::console::backend::live;
use gavel::console::terminal;
use gavel::logging;
use gavel::store::postgres::{Sides, Target};

use super::{console_model, target, warn_all};

/// Runs the console on the database `db` names until it ends, reading from the one `read_from`
/// names when given (a subscriber of it).
pub fn run(
    db: Option<&str>,
    read_from: Option<&str>,
    console: &Console,
    config: Config,
    log_dir: &Path,
) -> Result<ExitCode> {
    terminal::require()?;
    let _guard = logging::init(log_dir)?;
    let written = target(db)?;
    let source = format!("watch: {}", written.describe());
    let sides = match read_from {
        None => Sides::one(written),
        Some(raw) => {
            let read = Target::parse(raw).context("--read-from")?;
            warn_all(&read.warnings());
            Sides::split(written, read)
        }
    };
    let (mut model, theme_file) = console_model(source, console, &config, true)?;
    if sides.reads_elsewhere() {
        model.live.reading = Some(Reading::new(sides.read().describe()));
    }
    // One thread: a row hops from the connection to the feed to the draw loop without
    // waking another (the reports and the key reader have threads of their own).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ended = rt.block_on(async {
        let (events, receiver) = unbounded_channel();
        let commands = live::start(sides, events.clone(), None, config.limits);
        gavel::console::run(
            model,
            &config,
            theme_file.as_deref(),
            (events, receiver),
            commands,
        )
        .await
    });
    // Not waiting on the backend's blocking tasks: after a signal, tokio's handlers
    // would swallow a second SIGTERM or SIGINT while a drop waited on them.
    rt.shutdown_background();
    Ok(ended?.exit_code())
}
