//! Logs go to a file, never to the screen: `<state dir>/gavel/gavel.log` unless `--log-dir`
//! says otherwise. The level comes from `GAVEL_LOG` (error, warn, info, debug, trace; default
//! info).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::filter::LevelFilter;

/// The default log directory.
pub fn default_dir() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::cache_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("gavel")
}

/// Starts logging to `dir/gavel.log`. Keep the guard alive until exit: dropping it flushes.
pub fn init(dir: &Path) -> Result<WorkerGuard> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create log directory {}", dir.display()))?;
    let level = match std::env::var("GAVEL_LOG") {
        Ok(raw) => raw.parse::<LevelFilter>().map_err(|_| {
            anyhow::anyhow!("GAVEL_LOG={raw:?} is not a level (error, warn, info, debug, trace)")
        })?,
        Err(_) => LevelFilter::INFO,
    };
    let (writer, guard) =
        tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "gavel.log"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(level)
        .init();
    Ok(guard)
}
