//! Logs go to a file, never to the screen: `<state dir>/gavel/gavel.log` unless `--log-dir`
//! says otherwise. The level comes from `GAVEL_LOG` (error, warn, info, debug, trace; default
//! info). Every line is made inert as it is written, so row content (session ids, notes,
//! errors quoting them) cannot put escape sequences or line breaks in the log.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::filter::LevelFilter;

use crate::text::inert;

/// The default log directory.
pub fn default_dir() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::cache_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("gavel")
}

/// Why logging could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The log directory could not be made.
    #[error("cannot create log directory {}: {cause}", dir.display())]
    Directory { dir: PathBuf, cause: io::Error },
    /// `GAVEL_LOG` names no level.
    #[error("GAVEL_LOG={0:?} is not a level (error, warn, info, debug, trace)")]
    Level(String),
}

/// Starts logging to `dir/gavel.log`. Keep the guard alive until exit: dropping it flushes.
pub fn init(dir: &Path) -> Result<WorkerGuard, Error> {
    std::fs::create_dir_all(dir).map_err(|cause| Error::Directory {
        dir: dir.to_owned(),
        cause,
    })?;
    let level = match std::env::var("GAVEL_LOG") {
        Ok(raw) => match raw.parse::<LevelFilter>() {
            Ok(level) => level,
            Err(_) => return Err(Error::Level(raw)),
        },
        Err(_) => LevelFilter::INFO,
    };
    let (writer, guard) =
        tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "gavel.log"));
    tracing_subscriber::fmt()
        .with_writer(move || Inert(writer.clone()))
        .with_ansi(false)
        .with_max_level(level)
        .init();
    Ok(guard)
}

/// A writer that makes each event it is given [`inert`], all but the line end: tracing's
/// formatter writes one whole event per call and escapes only the message, not the fields.
struct Inert<W>(W);

impl<W: Write> Write for Inert<W> {
    fn write(&mut self, event: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(event);
        let (line, end) = match text.strip_suffix('\n') {
            Some(line) => (line, "\n"),
            None => (&*text, ""),
        };
        self.0
            .write_all(format!("{}{end}", inert(line)).as_bytes())?;
        Ok(event.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
