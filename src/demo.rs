//! The demo backend: recorded debates played by the simulator into the in-memory store, with
//! the console's commands carried out against them. No database.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use crate::app::{Command, Event};
use crate::config::Config;
use crate::simulate::{DebateRun, Fixture, Ids, MemoryStage, Playback, play};
use crate::store::MemoryStore;

/// Starts playing `fixtures` at once; every row reaches `events`. Returns the sender for the
/// console's commands. Must be called inside a tokio runtime.
pub fn start(
    fixtures: Vec<Fixture>,
    config: Arc<Config>,
    events: UnboundedSender<Event>,
) -> UnboundedSender<Command> {
    let store = MemoryStore::with_limits(config.limits);
    let (playback, clock) = watch::channel(Playback::default());
    let ids = Ids::default();

    let mut rows = store.subscribe();
    let forward = events.clone();
    tokio::spawn(async move {
        while let Some(change) = rows.recv().await {
            if forward.send(Event::Store(Box::new(change))).is_err() {
                return;
            }
        }
    });

    let runs: Vec<(DebateRun, MemoryStage)> = fixtures
        .into_iter()
        .map(|fixture| {
            let run = DebateRun::new(fixture, config.clone(), ids.clone());
            let stage = MemoryStage::new(store.clone(), &run.session().id);
            (run, stage)
        })
        .collect();
    let pace = config.simulator.clone();
    tokio::spawn(async move {
        if let Err(e) = play(runs, clock, pace).await {
            tracing::error!("the simulator stopped: {e:#}");
        }
    });

    let (commands, receiver) = unbounded_channel();
    tokio::spawn(execute(receiver, store, playback, events));
    commands
}

async fn execute(
    mut commands: UnboundedReceiver<Command>,
    store: MemoryStore,
    playback: watch::Sender<Playback>,
    events: UnboundedSender<Event>,
) {
    while let Some(command) = commands.recv().await {
        match command {
            Command::Resolve(action) => {
                let outcome = store.resolve_open(action);
                match &outcome {
                    Ok(a) => tracing::info!(
                        session = %a.session_id,
                        round = a.round_index,
                        operator = %a.operator,
                        action = %a.action,
                        decision = %a.decision,
                        "operator action recorded"
                    ),
                    Err(refused) => tracing::warn!("operator action refused: {refused}"),
                }
                if events.send(Event::Resolved(outcome)).is_err() {
                    return;
                }
            }
            Command::SetPlayback(setting) => {
                playback.send_replace(setting);
            }
            // The demo's debates are few: the console holds every one it was shown.
            Command::Search(_) => {}
            // The console's draw loop carries these out on its terminal.
            Command::Copy(_) | Command::Page { .. } => {}
            // The console lets go of the rows of debates off screen; here they are again.
            Command::LoadHistory(id) => {
                for row in store.history(&id) {
                    if events.send(Event::Store(Box::new(row))).is_err() {
                        return;
                    }
                }
            }
        }
    }
}
