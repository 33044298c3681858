//! The live backend: the console attached to a database. Rows arrive from the listener; the
//! console's commands are carried out on a connection of their own, so a slow or failed write
//! never holds up the feed.

use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tokio_postgres::Client;

use crate::app::{Command, Event};
use crate::domain::{Limits, OperatorAction};
use crate::executor::{Backend, execute};
use crate::simulate::Playback;
use crate::store::ResolveError;
use crate::store::postgres::{self, Target, Wanted, listen};

const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts following `target`; returns the sender for the console's commands. `playback`, when
/// given, is the clock of an in-process simulator (`gavel demo --postgres`) that pause and speed
/// also steer. Rows are read, and actions checked, within `limits`.
pub fn start(
    target: Target,
    events: UnboundedSender<Event>,
    playback: Option<watch::Sender<Playback>>,
    limits: Limits,
) -> UnboundedSender<Command> {
    let (wants, wanted) = unbounded_channel();
    tokio::spawn(listen(target.clone(), events.clone(), wanted, limits));
    let (commands, receiver) = unbounded_channel();
    let database = Database {
        target,
        writer: None,
        wants,
        limits,
    };
    tokio::spawn(execute(receiver, database, playback, events));
    commands
}

/// The live backend: actions written on a connection of their own (made again when it fails),
/// history and searches asked of the listener, whose rows come with the feed.
struct Database {
    target: Target,
    writer: Option<Client>,
    wants: UnboundedSender<Wanted>,
    limits: Limits,
}

impl Backend for Database {
    async fn resolve(&mut self, action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        write_action(&self.target, &mut self.writer, action, &self.limits).await
    }

    fn load_history(&mut self, id: String, _events: &UnboundedSender<Event>) -> bool {
        let _ = self.wants.send(Wanted::History(id));
        true
    }

    fn search(&mut self, text: String) {
        let _ = self.wants.send(Wanted::Search(text));
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
    let failed = |error: String| ResolveError::Failed {
        action: Box::new(action.clone()),
        error,
    };
    if writer.as_ref().is_none_or(Client::is_closed) {
        let connected = tokio::time::timeout(WRITE_TIMEOUT, target.connect_driven())
            .await
            .map_err(|_| failed("the database did not answer".to_owned()))?
            .map_err(|e| failed(format!("{e:#}")))?;
        *writer = Some(connected);
    }
    let client = writer.as_ref().expect("connected above");
    match tokio::time::timeout(WRITE_TIMEOUT, postgres::resolve(client, &action, limits)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => {
            *writer = None;
            Err(failed(format!("{e:#}")))
        }
        Err(_) => {
            *writer = None;
            Err(failed("the database did not answer within 10 s".to_owned()))
        }
    }
}
