//! The PostgreSQL backend's one error type, [`Error`]: what went wrong, in words an operator
//! can act on, and of a kind a caller can tell apart (a setting to fix, no server to reach, a
//! statement that failed, a console that has gone).
//!
//! A wrapped cause is part of the message (`doing: cause`) and is not also returned by
//! `source()`, so that the whole story is the `Display` of an [`Error`], once.

use std::fmt::Display;
use std::time::Duration;

/// The backend's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in the PostgreSQL backend.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A connection setting is wrong or cannot be used: the connection string, a service
    /// file, the environment, a certificate or key file. The message names the setting and
    /// where its value came from.
    #[error("{0}")]
    Setting(String),
    /// One server could not be used: it refused, timed out, or does not suit
    /// `target_session_attrs`.
    #[error("{0}")]
    Rejected(String),
    /// No server of the target could be used; `reasons` says why, server by server.
    #[error("cannot connect to {target}: {reasons}")]
    Unreachable { target: String, reasons: String },
    /// A statement or the connection failed while `doing`; the message carries the server's
    /// own words (see [`Told`]).
    #[error("{doing}: {}", Told(cause))]
    Database {
        doing: String,
        cause: tokio_postgres::Error,
    },
    /// The schema could not be brought up to date.
    #[error("migrating: {0}")]
    Migration(refinery::Error),
    /// A value does not fit the column it is compared with or written to.
    #[error("{what} {value} is out of range")]
    OutOfRange { what: &'static str, value: u64 },
    /// The database answered what cannot be: a conflict without a row, a decision that kept
    /// changing under every attempt, a snapshot without an xmin.
    #[error("{0}")]
    Inconsistent(String),
    /// A `gavel_events` notification that is not what the contract says; the text says what
    /// was wrong and where in it.
    #[error("not a gavel_events payload: {0}")]
    Payload(String),
    /// The feed's connection closed.
    #[error("the connection closed")]
    Closed,
    /// A query that tells whether the connection lives (the feed's keepalive, presence's
    /// heartbeat and lookups) was not answered in time.
    #[error("no answer to {asked} within {within:?}")]
    Unanswered {
        asked: &'static str,
        within: Duration,
    },
    /// The console the feed reports to has gone: nobody is left to tell.
    #[error("the console is gone")]
    ConsoleGone,
    /// A file or process of a local server (`gavel demo --postgres`, the tests) failed while
    /// `doing`.
    #[error("{doing}: {cause}")]
    Io {
        doing: String,
        cause: std::io::Error,
    },
    /// A primary cannot publish to a subscriber, or a subscriber cannot subscribe, as asked:
    /// a server setting, a privilege or a subscription in the way; the text says which and
    /// what to do.
    #[error("{0}")]
    Replication(String),
    /// A local server could not be set up or did not start.
    #[error("{0}")]
    LocalServer(String),
}

impl Error {
    /// The database's own error, when a statement failed.
    pub fn database(&self) -> Option<&tokio_postgres::Error> {
        match self {
            Error::Database { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

/// A driver's error as an operator reads it, on one line: the server's own message, detail and
/// hint for an error the server sent (the driver's `Display` says only "db error"), else the
/// driver's words followed by each cause (the I/O error under "error communicating with the
/// server").
pub(super) struct Told<'a>(pub(super) &'a tokio_postgres::Error);

impl Display for Told<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(server) = self.0.as_db_error() {
            write!(f, "{}", server.message())?;
            if let Some(detail) = server.detail() {
                write!(f, " ({})", detail.replace('\n', " "))?;
            }
            if let Some(hint) = server.hint() {
                write!(f, "; hint: {}", hint.replace('\n', " "))?;
            }
            return Ok(());
        }
        write!(f, "{}", self.0)?;
        let mut cause = std::error::Error::source(self.0);
        while let Some(below) = cause {
            write!(f, ": {below}")?;
            cause = below.source();
        }
        Ok(())
    }
}

/// `query`'s outcome, or [`Error::Unanswered`] (`asked`) when the server has not answered it
/// within `within`: the connection is then taken for lost.
pub(super) async fn answered<T>(
    asked: &'static str,
    within: Duration,
    query: impl Future<Output = T>,
) -> Result<T> {
    tokio::time::timeout(within, query)
        .await
        .map_err(|_| Error::Unanswered { asked, within })
}

/// Names what was being done when a database or file operation failed.
pub(crate) trait Doing<T> {
    /// The error as an [`Error`], with `what` was being done.
    fn doing(self, what: impl Display) -> Result<T>;
}

impl<T> Doing<T> for std::result::Result<T, tokio_postgres::Error> {
    fn doing(self, what: impl Display) -> Result<T> {
        self.map_err(|cause| Error::Database {
            doing: what.to_string(),
            cause,
        })
    }
}

impl<T> Doing<T> for std::result::Result<T, std::io::Error> {
    fn doing(self, what: impl Display) -> Result<T> {
        self.map_err(|cause| Error::Io {
            doing: what.to_string(),
            cause,
        })
    }
}
