//! `gavel simulate`: plays recordings into a database, as an orchestrator would write them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use tokio::sync::watch;

use gavel::config::Config;
use gavel::logging;
use gavel::progress::Stage;
use gavel::simulate::Playback;
use gavel::simulate::postgres::simulate;

use super::{load_fixtures, runtime, stop_on_interrupt, target};

/// Plays `fixtures` (the bundled ones when none) at `speed`, the debates that have ended
/// counted on stderr.
pub fn run(
    db: Option<&str>,
    fixtures: &[PathBuf],
    speed: f64,
    config: Config,
    log_dir: &Path,
) -> Result<ExitCode> {
    let _guard = logging::init(log_dir)?;
    stop_on_interrupt()?;
    let target = target(db)?;
    let fixtures = load_fixtures(fixtures, &config.limits)?;
    let stage = Stage::count("playing", fixtures.len() as u64, "debates ended");
    runtime()?.block_on(async {
        let (_playback, clock) = watch::channel(Playback {
            paused: false,
            speed,
        });
        simulate(&target, fixtures, Arc::new(config), clock, true, &stage).await
    })?;
    Ok(ExitCode::SUCCESS)
}
