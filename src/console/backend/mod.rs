//! The console's commands carried out against a backend, in one loop for every backend (the
//! demo's memory store, a live database): an operator's action recorded once and its outcome
//! sent back, a note pinned, a settings version written, a debate's rows brought back, a
//! search, playback steered, leave taken of the other consoles on quitting. Copy and page are
//! the draw loop's business, never a backend's.

pub mod demo;
pub mod fleets;
pub mod live;

use std::future::Future;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::watch;

use crate::console::app::{Command, Event, Publishing};
use crate::domain::{DebateNote, OperatorAction, SettingsVersion, Status};
use crate::simulate::Playback;
use crate::store::{NoteFailed, ResolveError};

/// What differs between backends.
pub trait Backend: Send {
    /// Records `action` once, if its decision is still open.
    fn resolve(
        &mut self,
        action: OperatorAction,
    ) -> impl Future<Output = Result<OperatorAction, ResolveError>> + Send;

    /// Pins `note` to its debate; the note as written (its id, time and role filled in).
    fn note(
        &mut self,
        note: DebateNote,
    ) -> impl Future<Output = Result<DebateNote, NoteFailed>> + Send;

    /// Writes a new version of a debate type's controller settings; the version as the
    /// database numbered and stamped it, or why not (its reason when it refused).
    fn publish(
        &mut self,
        publishing: Publishing,
    ) -> impl Future<Output = Result<SettingsVersion, String>> + Send;

    /// Says `status` to the other consoles from now on (a backend without others ignores it).
    fn present(&mut self, status: Status);

    /// Brings every row of debate `id` back to `events`, then [`Event::History`] (which may come
    /// from the feed, after its rows); false when the console is gone.
    fn load_history(&mut self, id: String, events: &UnboundedSender<Event>) -> bool;

    /// Brings back the debates that match `text`, as the console's filter confirmed it.
    fn search(&mut self, text: String);

    /// Takes leave of the other consoles as this one quits (a backend without others has
    /// nothing to do).
    fn leave(self) -> impl Future<Output = ()> + Send
    where
        Self: Sized,
    {
        async {}
    }
}

/// Carries out `commands` against `backend` until the console is gone; `playback`, when
/// given, is the clock of the simulated debates that pause and speed steer.
pub async fn execute(
    mut commands: UnboundedReceiver<Command>,
    mut backend: impl Backend,
    playback: Option<watch::Sender<Playback>>,
    events: UnboundedSender<Event>,
) {
    while let Some(command) = commands.recv().await {
        // On one database, a command addressed to a context is that database's.
        let command = match command {
            Command::In(_, command) => *command,
            command => command,
        };
        match command {
            Command::Resolve(action) => {
                let outcome = backend.resolve(action).await;
                match &outcome {
                    Ok(a) => tracing::info!(
                        session = %a.session_id,
                        round = a.round_index,
                        operator = %a.operator,
                        action = %a.action,
                        decision = %a.decision,
                        "operator action recorded"
                    ),
                    Err(e) => tracing::warn!("operator action not recorded: {e}"),
                }
                if events.send(Event::Resolved(outcome)).is_err() {
                    return;
                }
            }
            Command::Note(note) => {
                let outcome = backend.note(note).await;
                match &outcome {
                    Ok(n) => tracing::info!(
                        session = %n.session_id,
                        operator = %n.operator,
                        "note pinned"
                    ),
                    Err(e) => tracing::warn!("{e}"),
                }
                if events.send(Event::Noted(outcome)).is_err() {
                    return;
                }
            }
            Command::Publish(publishing) => {
                let what = publishing.what();
                let outcome = backend.publish(*publishing).await;
                match &outcome {
                    Ok(v) => tracing::info!(
                        version = v.version,
                        by = %crate::text::inert(&v.published_by),
                        "settings written: {}",
                        crate::text::inert(&what)
                    ),
                    Err(why) => tracing::warn!(
                        "settings not written ({}): {}",
                        crate::text::inert(&what),
                        crate::text::inert(why)
                    ),
                }
                if events.send(Event::Published(outcome)).is_err() {
                    return;
                }
            }
            Command::Present(status) => backend.present(status),
            Command::LoadHistory(id) => {
                if !backend.load_history(id, &events) {
                    return;
                }
            }
            Command::Search(text) => backend.search(text),
            Command::SetPlayback(setting) => {
                if let Some(playback) = &playback {
                    playback.send_replace(setting);
                }
            }
            Command::Leave => {
                backend.leave().await;
                return;
            }
            // The console's draw loop carries these out on its terminal; an addressed command
            // was unwrapped above.
            Command::Copy(_) | Command::Page { .. } | Command::In(..) => {}
        }
    }
}
