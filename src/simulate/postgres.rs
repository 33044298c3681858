//! The simulator as an orchestrator against a real database (`gavel simulate`, `gavel demo
//! --postgres`): each debate asks the controller settings it plays under at its start
//! (`gavel_settings_for`) and is stamped with the version it got; its rows are written through
//! the store's [`Orchestrator`], the operator actions it must heed read back as their
//! notifications arrive.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_postgres::Client;

use super::{DebateRun, Error, Fixture, Ids, Playback, Result, Stage, log, play};
use crate::config::Config;
use crate::domain::{Change, OperatorAction};
use crate::progress::Progress;
use crate::store::postgres::{self, Orchestrator, Target};

/// `gavel simulate`: plays `fixtures` into the database at `target` as an orchestrator would,
/// each under the settings `gavel_settings_for` gives it (the recording's mode and `config`
/// where nothing is published), until every debate has ended, each counted on `progress` as it ends. `echo` prints each
/// decision and ending.
pub async fn simulate(
    target: &Target,
    fixtures: Vec<Fixture>,
    config: Arc<Config>,
    clock: tokio::sync::watch::Receiver<Playback>,
    echo: bool,
    progress: &Progress,
) -> Result<()> {
    let orchestrator = Orchestrator::connect(target).await?;
    let ids = Ids::default();
    let mut runs = Vec::new();
    for fixture in fixtures {
        let spec = &fixture.session;
        let assigned =
            postgres::settings_for(&orchestrator.client(), &spec.id, &spec.debate_type).await?;
        if let Some(values) = &assigned.values {
            tracing::info!(
                "debate {}: settings version {} ({}): {}",
                crate::text::inert(&spec.id),
                assigned.version.unwrap_or_default(),
                assigned.arm,
                crate::text::inert(&values.summary())
            );
        }
        let (fixture, config) = super::settings::under(fixture, &config, &assigned);
        let run = DebateRun::new(fixture, config, ids.clone())
            .given(assigned.version.map(|version| (version, assigned.arm)));
        let stage = PgStage::new(&orchestrator, &run.session().id, echo)?;
        runs.push((run, stage));
    }
    play(runs, clock, config.simulator.clone(), progress.clone()).await
}

/// One simulated debate's writes and actions.
pub struct PgStage {
    client: Arc<Client>,
    session_id: String,
    resolved: UnboundedReceiver<i32>,
    /// Rounds whose action is still to be read (kept across cancellation).
    pending: VecDeque<i32>,
    /// The simulator's turn ids and the database's.
    turn_ids: HashMap<u64, i64>,
    /// Print decisions and endings to standard output.
    echo: bool,
}

impl PgStage {
    /// The stage for debate `session_id`, written through `orchestrator`.
    pub fn new(orchestrator: &Orchestrator, session_id: &str, echo: bool) -> Result<PgStage> {
        let resolved = orchestrator
            .resolved(session_id)
            .ok_or(Error::DispatcherGone)?;
        Ok(PgStage {
            client: orchestrator.client(),
            session_id: session_id.to_owned(),
            resolved,
            pending: VecDeque::new(),
            turn_ids: HashMap::new(),
            echo,
        })
    }

    async fn write_one(&mut self, change: &Change) -> Result<()> {
        let client = &*self.client;
        match change {
            Change::Session(s) => Ok(postgres::write_session(client, s).await?),
            Change::Turn(t) => {
                let existing = self.turn_ids.get(&t.id).copied();
                let id = postgres::write_turn(client, t, existing).await?;
                self.turn_ids.insert(t.id, id);
                Ok(())
            }
            Change::Decision(d) => Ok(postgres::write_decision(client, d).await?),
            Change::Judgment(j) => Ok(postgres::write_judgment(client, j).await?),
            Change::Action(a) => Ok(postgres::record(client, a).await.map(drop)?),
            // The simulator pins none; a recording's notes are pinned as any console's.
            Change::Note(n) => postgres::pin(client, n)
                .await?
                .map(drop)
                .map_err(Error::Refused),
        }
    }
}

impl Stage for PgStage {
    async fn write(&mut self, changes: Vec<Change>) -> Result<()> {
        for change in changes {
            log(&change);
            if self.echo {
                echo(&change);
            }
            self.write_one(&change).await?;
        }
        Ok(())
    }

    async fn record_unless_resolved(&mut self, action: OperatorAction) -> Result<OperatorAction> {
        Ok(postgres::record(&self.client, &action)
            .await?
            .unwrap_or_else(|existing| existing))
    }

    async fn next_action(&mut self) -> Result<OperatorAction> {
        loop {
            if let Some(&round) = self.pending.front() {
                let found = postgres::existing(&self.client, &self.session_id, round).await?;
                self.pending.pop_front();
                match found {
                    Some(action) => return Ok(action),
                    None => continue,
                }
            }
            let round = self.resolved.recv().await.ok_or(Error::ListenerClosed)?;
            self.pending.push_back(round);
        }
    }
}

/// Prints decisions and endings, made inert (a progress bar on the same terminal steps aside
/// for each line). A reader that went away (`| head`) does not stop
/// the simulation: the rows in the database are what counts.
fn echo(change: &Change) {
    use std::io::Write;
    let line = match change {
        Change::Decision(d) => format!("{} round {}: {}", d.session_id, d.round_index, d.decision),
        Change::Session(s) if !s.is_running() => format!(
            "{}: {} after {} rounds, {} tokens",
            s.id,
            s.status,
            s.num_rounds.unwrap_or(0),
            s.tokens_used
        ),
        _ => return,
    };
    crate::progress::suspend(|| {
        let _ = writeln!(std::io::stdout().lock(), "{}", crate::text::inert(&line));
    });
}
