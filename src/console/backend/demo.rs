//! The demo backend: recorded debates played by the simulator into the in-memory store, with
//! the console's commands carried out against them. No database.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use crate::config::Config;
use crate::console::app::{Command, Event, Publishing};
use crate::console::backend::{Backend, execute};
use crate::domain::{DebateNote, OperatorAction, SettingsVersion, Status};
use crate::progress::Progress;
use crate::simulate::{DebateRun, Fixture, Ids, MemoryStage, Playback, TimeSource, play};
use crate::store::{MemoryStore, NoteFailed, ResolveError};

/// Starts playing `fixtures` at once, their rows stamped by `time` (the system clock, or a test's
/// clock that runs with tokio's); every row reaches `events`. Returns the sender for the
/// console's commands. Must be called inside a tokio runtime.
pub fn start(
    fixtures: Vec<Fixture>,
    config: Arc<Config>,
    events: UnboundedSender<Event>,
    time: TimeSource,
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
            let run = DebateRun::new(fixture, config.clone(), ids.clone()).with_time(time.clone());
            let stage = MemoryStage::new(store.clone(), &run.session().id);
            (run, stage)
        })
        .collect();
    let pace = config.simulator.clone();
    tokio::spawn(async move {
        if let Err(e) = play(runs, clock, pace, Progress::none()).await {
            tracing::error!("the simulator stopped: {e:#}");
        }
    });

    let (commands, receiver) = unbounded_channel();
    tokio::spawn(execute(receiver, Demo(store), Some(playback), events));
    commands
}

/// The demo's backend: the memory store the simulator plays into.
struct Demo(MemoryStore);

impl Backend for Demo {
    async fn resolve(&mut self, action: OperatorAction) -> Result<OperatorAction, ResolveError> {
        self.0.resolve_open(action)
    }

    async fn note(&mut self, note: DebateNote) -> Result<DebateNote, NoteFailed> {
        Ok(self.0.note(note))
    }

    // The console asks only a database (it says so itself), but a demo has none.
    async fn publish(&mut self, _publishing: Publishing) -> Result<SettingsVersion, String> {
        Err("rollouts live in a database: `gavel demo --postgres`".to_owned())
    }

    // The demo has no other consoles.
    fn present(&mut self, _status: Status) {}

    // The console lets go of the rows of debates off screen; here they are again.
    fn load_history(&mut self, id: String, events: &UnboundedSender<Event>) -> bool {
        let rows = self.0.history(&id);
        let found = !rows.is_empty();
        rows.into_iter()
            .all(|row| events.send(Event::Store(Box::new(row))).is_ok())
            && events.send(Event::History { id, found }).is_ok()
    }

    // The demo's debates are few: the console holds every one it was shown.
    fn search(&mut self, _text: String) {}
}
