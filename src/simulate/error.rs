//! The simulation's one error type, [`Error`]: why a simulated orchestrator stopped, in the
//! store it plays into (the in-memory one, PostgreSQL) or in its own tasks, or why a debate
//! cannot be written as a recording.
//!
//! A wrapped cause is part of the message and is not also returned by `source()`, so that the
//! whole story is the `Display` of an [`Error`], once.

use tokio::task::JoinError;

use crate::store::ResolveError;
use crate::store::postgres;

/// The simulation's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a simulated orchestrator stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The in-memory store refused an operator action.
    #[error("{0}")]
    Memory(ResolveError),
    /// The in-memory store closed.
    #[error("the store closed")]
    StoreClosed,
    /// The database failed: a row not written, an action not read, no connection.
    #[error("{0}")]
    Database(postgres::Error),
    /// The database refused a note; the text says why.
    #[error("{0}")]
    Refused(String),
    /// The connection listening for operator actions closed.
    #[error("the connection listening for operator actions closed")]
    ListenerClosed,
    /// The task that hands each debate its operator actions is gone.
    #[error("the notification dispatcher is gone")]
    DispatcherGone,
    /// A debate's task panicked.
    #[error("a simulated debate panicked: {0}")]
    Panicked(JoinError),
    /// A round's play, off the async threads, did not come back.
    #[error("a round of the simulation failed: {0}")]
    Round(JoinError),
    /// A debate whose controller mode gavel does not know cannot be written as a recording;
    /// `debate` is its quoted, clipped id.
    #[error(
        "debate {debate}: controller_mode {mode} is not one gavel plays (off, shadow, enabled, \
         gated)"
    )]
    UnknownMode { debate: String, mode: String },
    /// A debate's recording could not be written as JSON lines.
    #[error("debate {debate}: cannot write ({cause})")]
    Unwritable {
        debate: String,
        cause: std::io::Error,
    },
    /// `cause` stopped the simulation with `debates` (inert ids) still running in the store.
    #[error(
        "the simulation stopped; debate{} left unfinished: {}: {cause}",
        if .debates.len() == 1 { "" } else { "s" },
        .debates.join(", ")
    )]
    Unfinished {
        debates: Vec<String>,
        cause: Box<Error>,
    },
}

impl From<postgres::Error> for Error {
    fn from(cause: postgres::Error) -> Error {
        Error::Database(cause)
    }
}
