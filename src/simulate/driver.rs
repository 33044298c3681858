//! Paces one [`DebateRun`] in simulated time on a [`Stage`]: the store it writes its rows to and
//! reads its operator actions from (the in-memory store for the demo, PostgreSQL for
//! `gavel simulate`).

use std::future::Future;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

use super::error::{Error, Result};
use super::playback::{Playback, PlaybackClock};
use super::run::DebateRun;
use crate::config::SimulatorConfig;
use crate::domain::{Change, OperatorAction};
use crate::progress::Progress;
use crate::store::{MemoryStore, ResolveError};

/// What a simulated orchestrator needs from the store it plays into.
pub trait Stage {
    /// Writes rows, in order.
    fn write(&mut self, changes: Vec<Change>) -> impl Future<Output = Result<()>> + Send;
    /// Records `action` unless its decision is already resolved; returns the action that
    /// stands.
    fn record_unless_resolved(
        &mut self,
        action: OperatorAction,
    ) -> impl Future<Output = Result<OperatorAction>> + Send;
    /// The next operator action recorded for this stage's debate; an error when the store is
    /// gone. Must be cancel-safe: nothing is lost if the future is dropped.
    fn next_action(&mut self) -> impl Future<Output = Result<OperatorAction>> + Send;
}

/// One debate's view of a [`MemoryStore`].
pub struct MemoryStage {
    store: MemoryStore,
    feed: UnboundedReceiver<Change>,
    session_id: String,
}

impl MemoryStage {
    pub fn new(store: MemoryStore, session_id: &str) -> MemoryStage {
        MemoryStage {
            feed: store.subscribe(),
            store,
            session_id: session_id.to_owned(),
        }
    }
}

impl Stage for MemoryStage {
    async fn write(&mut self, changes: Vec<Change>) -> Result<()> {
        for change in changes {
            log(&change);
            match change {
                // A recorded operator action, like any other, resolves its decision once.
                Change::Action(action) => match self.store.resolve(action) {
                    Ok(_) | Err(ResolveError::AlreadyResolved(_)) => {}
                    Err(e) => return Err(Error::Memory(e)),
                },
                change => self.store.write(change),
            }
        }
        Ok(())
    }

    async fn record_unless_resolved(&mut self, action: OperatorAction) -> Result<OperatorAction> {
        match self.store.resolve(action) {
            Ok(action) => Ok(action),
            Err(ResolveError::AlreadyResolved(existing)) => Ok(*existing),
            Err(e) => Err(Error::Memory(e)),
        }
    }

    async fn next_action(&mut self) -> Result<OperatorAction> {
        loop {
            match self.feed.recv().await.ok_or(Error::StoreClosed)? {
                Change::Action(action) if action.session_id == self.session_id => {
                    return Ok(action);
                }
                _ => {}
            }
        }
    }
}

/// Opens every run in the order given, then drives them all at once, counting each debate on
/// `progress` as it finishes; returns when every debate has finished. When a stage fails (its store is gone) the other debates are stopped too and
/// the error names every debate left unfinished, in the order given.
pub async fn play<S: Stage + Send + 'static>(
    runs: Vec<(DebateRun, S)>,
    playback: watch::Receiver<Playback>,
    pace: SimulatorConfig,
    progress: Progress,
) -> Result<()> {
    let mut opened = Vec::new();
    let mut unfinished: Vec<String> = Vec::new();
    for (mut run, mut stage) in runs {
        unfinished.push(run.session().id.clone());
        if let Err(e) = stage.write(run.start()).await {
            return Err(left_unfinished(e, &unfinished));
        }
        opened.push((run, stage));
    }
    let mut debates = tokio::task::JoinSet::new();
    let mut ids = std::collections::HashMap::new();
    for (run, stage) in opened {
        let id = run.session().id.clone();
        let clock = PlaybackClock::new(playback.clone());
        ids.insert(
            debates.spawn(drive(run, stage, clock, pace.clone())).id(),
            id,
        );
    }
    while let Some(done) = debates.join_next_with_id().await {
        let error = match done {
            Ok((task, Ok(()))) => {
                unfinished.retain(|id| Some(id) != ids.get(&task));
                progress.inc(1);
                continue;
            }
            Ok((_, Err(e))) => e,
            Err(e) => Error::Panicked(e),
        };
        debates.shutdown().await;
        return Err(left_unfinished(error, &unfinished));
    }
    Ok(())
}

/// `error` saying which debates it left unfinished (still `running` in the store).
fn left_unfinished(error: Error, debates: &[String]) -> Error {
    Error::Unfinished {
        debates: debates.iter().map(|id| crate::text::inert(id)).collect(),
        cause: Box::new(error),
    }
}

/// Plays an opened `run` to its end; an error is the stage's (the store is unreachable).
pub async fn drive<S: Stage>(
    mut run: DebateRun,
    mut stage: S,
    mut clock: PlaybackClock,
    pace: SimulatorConfig,
) -> Result<()> {
    while !run.is_finished() {
        if run.awaiting().is_some() {
            tokio::select! {
                action = stage.next_action() => stage.write(run.resolve(&action?)).await?,
                () = clock.sleep(pace.gated_timeout()) => {
                    if let Some(timeout) = run.timeout_action() {
                        let standing = stage.record_unless_resolved(timeout).await?;
                        stage.write(run.resolve(&standing)).await?;
                    }
                }
            }
            continue;
        }
        {
            let boundary = clock.sleep(pace.round_interval());
            tokio::pin!(boundary);
            loop {
                tokio::select! {
                    () = &mut boundary => break,
                    action = stage.next_action() => stage.write(run.resolve(&action?)).await?,
                }
            }
        }
        // A round's signals may embed its text with a model: off the async threads (the
        // console's draw loop shares the runtime).
        let (returned, changes) = tokio::task::spawn_blocking(move || {
            let changes = run.play_round();
            (run, changes)
        })
        .await
        .map_err(Error::Round)?;
        run = returned;
        for change in changes {
            let landed_turn = matches!(&change, Change::Turn(t) if !t.superseded);
            stage.write(vec![change]).await?;
            if landed_turn {
                clock.sleep(pace.turn_interval()).await;
            }
        }
    }
    Ok(())
}

/// Logs what an operator would look for afterwards: decisions and how each debate ended.
pub fn log(change: &Change) {
    match change {
        Change::Decision(d) => tracing::info!(
            session = %d.session_id,
            round = d.round_index,
            decision = %d.decision,
            "controller decision"
        ),
        Change::Session(s) if !s.is_running() => tracing::info!(
            session = %s.id,
            status = %s.status,
            rounds = ?s.num_rounds,
            tokens = s.tokens_used,
            "debate finished"
        ),
        _ => {}
    }
}
