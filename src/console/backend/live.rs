//! The live backend: the console attached to a database, or to a subscriber read and its
//! primary written (`Sides`). Rows arrive from the listener on the database read; the console's
//! commands (actions, notes, settings) are carried out on a connection of their own to the
//! database written, so a slow or failed write never holds up the feed, and a write is checked
//! there, against what the primary has on record. Presence (who else is here) says this
//! console's part on a connection of its own to the database written, and hears the others'
//! on the feed's. What the role may write is asked of the database written: by the feed on one
//! database, before it is live; by presence's connection to the primary when reading apart.

use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::{oneshot, watch};
use tokio_postgres::Client;

use crate::console::app::{Command, Event, Publishing, SettingsChange};
use crate::console::backend::{Backend, execute};
use crate::domain::{DebateNote, Limits, OperatorAction, SettingsVersion, Status};
use crate::simulate::Playback;
use crate::store::postgres::{self, Publication, Sides, Target, Wanted, hearing, listen, present};
use crate::store::{NoteFailed, ResolveError};

const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts following the database `sides` reads; returns the sender for the console's commands,
/// which are carried out on the database it writes. `playback`, when given, is the clock of an
/// in-process simulator (`gavel demo --postgres`) that pause and speed also steer. Rows are
/// read, and actions checked, within `limits`.
pub fn start(
    sides: Sides,
    events: UnboundedSender<Event>,
    playback: Option<watch::Sender<Playback>>,
    limits: Limits,
) -> UnboundedSender<Command> {
    let (wants, wanted) = unbounded_channel();
    let (beside, heard) = hearing();
    tokio::spawn(listen(
        sides.read().clone(),
        events.clone(),
        wanted,
        limits,
        beside,
        !sides.reads_elsewhere(),
    ));
    let (presence, said) = watch::channel(None);
    let (gone, left) = oneshot::channel();
    let target = sides.write().clone();
    tokio::spawn(present(sides, said, events.clone(), heard, gone));
    let (commands, receiver) = unbounded_channel();
    let database = Database {
        target,
        writer: None,
        wants,
        presence,
        left,
        limits,
    };
    tokio::spawn(execute(receiver, database, playback, events));
    commands
}

/// The live backend: actions written on a connection of their own to the database written
/// (made again when it fails), history and searches asked of the listener, whose rows come with
/// the feed.
struct Database {
    /// Where the console writes.
    target: Target,
    writer: Option<Client>,
    wants: UnboundedSender<Wanted>,
    /// What this console says to the others (on presence's own connection).
    presence: watch::Sender<Option<Status>>,
    /// Closed once presence has deleted this console's row, after `presence` closed.
    left: oneshot::Receiver<()>,
    limits: Limits,
}

impl Backend for Database {
    async fn resolve(&mut self, action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        write_action(&self.target, &mut self.writer, action, &self.limits).await
    }

    async fn note(&mut self, note: DebateNote) -> Result<DebateNote, NoteFailed> {
        write_note(&self.target, &mut self.writer, note).await
    }

    async fn publish(&mut self, publishing: Publishing) -> Result<SettingsVersion, String> {
        write_settings(&self.target, &mut self.writer, &publishing).await
    }

    fn present(&mut self, status: Status) {
        self.presence.send_replace(Some(status));
    }

    fn load_history(&mut self, id: String, _events: &UnboundedSender<Event>) -> bool {
        let _ = self.wants.send(Wanted::History(id));
        true
    }

    fn search(&mut self, text: String) {
        let _ = self.wants.send(Wanted::Search(text));
    }

    /// Closes what this console says: presence deletes its row ([`postgres::LEAVE`] at most),
    /// and the others drop it at once.
    async fn leave(self) {
        let Database { presence, left, .. } = self;
        drop(presence);
        let _ = tokio::time::timeout(postgres::LEAVE, left).await;
    }
}

/// Records one action if its decision is still open, (re)connecting the writer as needed; a
/// failed connection leaves the action in hand for a retry, a refusal does not.
async fn write_action(
    target: &Target,
    writer: &mut Option<Client>,
    action: OperatorAction,
    limits: &Limits,
) -> Result<OperatorAction, ResolveError> {
    let failed = |error: Unwritten| ResolveError::Failed {
        action: Box::new(action.clone()),
        error: error.to_string(),
    };
    let client = connected(target, writer).await.map_err(failed)?;
    let answer = within(postgres::resolve(client, &action, limits)).await;
    if answer.is_err() {
        *writer = None;
    }
    answer.map_err(failed)?
}

/// Pins one note, (re)connecting the writer as needed; the note comes back with why when it
/// was not written.
async fn write_note(
    target: &Target,
    writer: &mut Option<Client>,
    note: DebateNote,
) -> Result<DebateNote, NoteFailed> {
    let failed = |reason: String| NoteFailed {
        note: Box::new(note.clone()),
        reason,
    };
    let client = connected(target, writer)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let answer = within(postgres::pin(client, &note)).await;
    if answer.is_err() {
        *writer = None;
    }
    answer.map_err(|e| failed(e.to_string()))?.map_err(failed)
}

/// Writes one settings version, (re)connecting the writer as needed: the version written, the
/// database's reason when it refused it, or why it could not be asked.
async fn write_settings(
    target: &Target,
    writer: &mut Option<Client>,
    publishing: &Publishing,
) -> Result<SettingsVersion, String> {
    let change = match &publishing.change {
        SettingsChange::Publish {
            values,
            share_bp,
            evidence,
        } => Publication::Publish {
            values,
            share_bp: *share_bp,
            evidence: Some(evidence),
        },
        SettingsChange::Promote { version } => Publication::Promote { version: *version },
        SettingsChange::Rollback { version } => Publication::Rollback { version: *version },
    };
    let client = connected(target, writer).await.map_err(|e| e.to_string())?;
    let answer = within(postgres::publish(
        client,
        &publishing.debate_type,
        &change,
        &publishing.reason,
    ))
    .await;
    if answer.is_err() {
        *writer = None;
    }
    answer.map_err(|e| e.to_string())?
}

/// The writer's connection, made again when there is none or it closed.
async fn connected<'w>(
    target: &Target,
    writer: &'w mut Option<Client>,
) -> Result<&'w Client, Unwritten> {
    if writer.as_ref().is_none_or(Client::is_closed) {
        let connected = tokio::time::timeout(WRITE_TIMEOUT, target.connect_driven())
            .await
            .map_err(|_| Unwritten::NoConnection)?
            .map_err(Unwritten::Database)?;
        *writer = Some(connected);
    }
    Ok(writer.as_ref().expect("connected above"))
}

/// Why a write has no answer.
#[derive(Debug, thiserror::Error)]
enum Unwritten {
    /// No connection was made within [`WRITE_TIMEOUT`].
    #[error("the database did not answer")]
    NoConnection,
    /// The write was not answered within [`WRITE_TIMEOUT`].
    #[error("the database did not answer within {} s", WRITE_TIMEOUT.as_secs())]
    NoAnswer,
    /// The connection or the statement failed.
    #[error("{0}")]
    Database(postgres::Error),
}

/// A write's answer, or why there is none: the connection failed or the database did not
/// answer within [`WRITE_TIMEOUT`].
async fn within<T>(write: impl Future<Output = postgres::Result<T>>) -> Result<T, Unwritten> {
    match tokio::time::timeout(WRITE_TIMEOUT, write).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(Unwritten::Database(e)),
        Err(_) => Err(Unwritten::NoAnswer),
    }
}
