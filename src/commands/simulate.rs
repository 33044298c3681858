//! `gavel simulate`: plays recordings into a database, as an orchestrator would write them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use tokio::sync::watch;

use gavel::config::Config;
use gavel::logging;
use gavel::orchestrator::simulate;
use gavel::simulate::Playback;

use super::{load_fixtures, runtime, target};

/// Plays `fixtures` (the bundled ones when none) at `speed`.
pub fn run(
    db: Option<&str>,
    fixtures: &[PathBuf],
    speed: f64,
    config: Config,
    log_dir: &Path,
) -> Result<ExitCode> {
    let _guard = logging::init(log_dir)?;
    let target = target(db)?;
    let fixtures = load_fixtures(fixtures, &config.limits)?;
    runtime()?.block_on(async {
        let (_playback, clock) = watch::channel(Playback {
            paused: false,
            speed,
        });
        simulate(&target, fixtures, Arc::new(config), clock, true).await
    })?;
    Ok(ExitCode::SUCCESS)
}
