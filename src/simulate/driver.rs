//! Paces one [`DebateRun`] in simulated time, writing its rows to the store and feeding it the
//! operator actions the store records for its debate.

use tokio::sync::mpsc::UnboundedReceiver;

use super::clock::Clock;
use super::run::DebateRun;
use crate::config::SimulatorConfig;
use crate::domain::{Change, OperatorAction};
use crate::store::MemoryStore;

/// Opens `run` (writes its session row) and returns it ready for [`drive`]. Opening every
/// debate before driving any keeps the order in which they appear the order they were given.
pub fn open(mut run: DebateRun, store: &MemoryStore) -> DebateRun {
    write(store, run.start());
    run
}

/// Plays an opened `run` to its end. Returns when the debate finishes or the store closes.
pub async fn drive(
    mut run: DebateRun,
    store: MemoryStore,
    mut clock: Clock,
    pace: SimulatorConfig,
) {
    let id = run.session().id.clone();
    let mut feed = store.subscribe();
    while !run.is_finished() {
        if run.awaiting().is_some() {
            tokio::select! {
                action = next_action(&mut feed, &id) => match action {
                    Some(action) => write(&store, run.resolve(&action)),
                    None => return,
                },
                () = clock.sleep(pace.gated_timeout()) => {
                    if let Some(timeout) = run.timeout_action() {
                        let standing = store.resolve(timeout).unwrap_or_else(|taken| *taken.existing);
                        write(&store, run.resolve(&standing));
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
                    action = next_action(&mut feed, &id) => match action {
                        Some(action) => write(&store, run.resolve(&action)),
                        None => return,
                    },
                }
            }
        }
        for change in run.play_round() {
            let landed_turn = matches!(&change, Change::Turn(t) if !t.superseded);
            log(&change);
            store.write(change);
            if landed_turn {
                clock.sleep(pace.turn_interval()).await;
            }
        }
    }
}

fn write(store: &MemoryStore, changes: Vec<Change>) {
    for change in changes {
        log(&change);
        store.write(change);
    }
}

/// Logs what an operator would look for afterwards: decisions and how each debate ended.
fn log(change: &Change) {
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

/// The next operator action recorded for debate `id`; `None` when the store is gone.
async fn next_action(feed: &mut UnboundedReceiver<Change>, id: &str) -> Option<OperatorAction> {
    loop {
        match feed.recv().await? {
            Change::Action(action) if action.session_id == id => return Some(action),
            _ => {}
        }
    }
}
