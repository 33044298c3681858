//! The simulator as an orchestrator against a real database: each debate's rows written as the
//! contract says, operator actions learnt from `gavel_events` notifications.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_postgres::Client;

use crate::config::Config;
use crate::domain::{Change, ControllerDecision, Judgment, OperatorAction, Session, Turn};
use crate::progress::Progress;
use crate::simulate::{DebateRun, Error, Fixture, Ids, Playback, Result, Stage, log, play};
use crate::store::postgres::{self, Notice, Notifications, Target};

/// `gavel simulate`: plays `fixtures` into the database at `target` as an orchestrator would,
/// until every debate has ended, each counted on `progress` as it ends. `echo` prints each
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
        let run = DebateRun::new(fixture, config.clone(), ids.clone());
        let stage = orchestrator.stage(&run.session().id, echo)?;
        runs.push((run, stage));
    }
    play(runs, clock, config.simulator.clone(), progress.clone()).await
}

/// One connection that writes for every simulated debate, and one that listens for operator
/// actions and hands each debate the rounds resolved.
#[derive(Clone)]
pub struct Orchestrator {
    client: Arc<Client>,
    subscribe: UnboundedSender<(String, UnboundedSender<i32>)>,
}

impl Orchestrator {
    pub async fn connect(target: &Target) -> Result<Orchestrator> {
        let client = Arc::new(target.connect_driven().await?);
        let mut listening = Notifications::open(target).await?;
        let (subscribe, mut subscriptions) = unbounded_channel::<(String, UnboundedSender<i32>)>();
        tokio::spawn(async move {
            let mut debates: HashMap<String, UnboundedSender<i32>> = HashMap::new();
            loop {
                tokio::select! {
                    Some((id, sender)) = subscriptions.recv() => {
                        debates.insert(id, sender);
                    }
                    note = listening.payloads.recv() => {
                        let Some(payload) = note else {
                            tracing::warn!("the simulator's notification connection closed");
                            return;
                        };
                        let Ok(notice) = Notice::parse(&payload) else { continue };
                        if notice.table != "debate_operator_actions" {
                            continue;
                        }
                        if let (Some(id), Some(round)) = (notice.session_id, notice.round_index)
                            && let Some(debate) = debates.get(&id)
                        {
                            let _ = debate.send(round);
                        }
                    }
                }
            }
        });
        Ok(Orchestrator { client, subscribe })
    }

    /// The stage for debate `session_id`.
    pub fn stage(&self, session_id: &str, echo: bool) -> Result<PgStage> {
        let (sender, resolved) = unbounded_channel();
        self.subscribe
            .send((session_id.to_owned(), sender))
            .map_err(|_| Error::DispatcherGone)?;
        Ok(PgStage {
            client: self.client.clone(),
            session_id: session_id.to_owned(),
            resolved,
            pending: VecDeque::new(),
            turn_ids: HashMap::new(),
            echo,
        })
    }
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
    async fn write_one(&mut self, change: &Change) -> Result<()> {
        match change {
            Change::Session(s) => write_session(&self.client, s).await,
            Change::Turn(t) => {
                let id = write_turn(&self.client, t, self.turn_ids.get(&t.id).copied()).await?;
                self.turn_ids.insert(t.id, id);
                Ok(())
            }
            Change::Decision(d) => write_decision(&self.client, d).await,
            Change::Judgment(j) => write_judgment(&self.client, j).await,
            Change::Action(a) => Ok(postgres::record(&self.client, a).await.map(drop)?),
            // The simulator pins none; a recording's notes are pinned as any console's.
            Change::Note(n) => postgres::pin(&self.client, n)
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

/// A failed statement as the store's error, saying what was being written.
fn doing(cause: tokio_postgres::Error, what: String) -> Error {
    Error::Database(postgres::Error::Database { doing: what, cause })
}

fn int(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

async fn write_session(client: &Client, s: &Session) -> Result<()> {
    let personas = serde_json::to_value(&s.personas)?;
    let metadata = serde_json::to_value(&s.metadata)?;
    client
        .execute(
            "INSERT INTO debate_sessions (id, question, debate_type, status, controller_mode, \
             num_rounds, min_rounds, max_rounds, token_budget, tokens_used, personas, metadata, \
             created_at, finished_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13, now()), $14) \
             ON CONFLICT (id) DO UPDATE SET question = EXCLUDED.question, \
             debate_type = EXCLUDED.debate_type, status = EXCLUDED.status, \
             controller_mode = EXCLUDED.controller_mode, num_rounds = EXCLUDED.num_rounds, \
             min_rounds = EXCLUDED.min_rounds, max_rounds = EXCLUDED.max_rounds, \
             token_budget = EXCLUDED.token_budget, tokens_used = EXCLUDED.tokens_used, \
             personas = EXCLUDED.personas, metadata = EXCLUDED.metadata, \
             finished_at = EXCLUDED.finished_at",
            &[
                &s.id,
                &s.question,
                &s.debate_type,
                &s.status.to_wire(),
                &s.controller_mode.to_wire(),
                &s.num_rounds.map(int),
                &int(s.min_rounds),
                &int(s.max_rounds),
                &big(s.token_budget),
                &big(s.tokens_used),
                &personas,
                &metadata,
                &s.created_at,
                &s.finished_at,
            ],
        )
        .await
        .map_err(|cause| doing(cause, format!("writing debate_sessions ({})", s.id)))?;
    Ok(())
}

/// Inserts a new turn (returning the database's id) or updates the one already written.
async fn write_turn(client: &Client, t: &Turn, existing: Option<i64>) -> Result<i64> {
    let metadata = serde_json::to_value(&t.metadata)?;
    match existing {
        Some(id) => {
            client
                .execute(
                    "UPDATE debate_rounds SET superseded = $2, content = $3, metadata = $4 WHERE id = $1",
                    &[&id, &t.superseded, &t.content, &metadata],
                )
                .await
                .map_err(|cause| doing(cause, format!("updating debate_rounds (id {id})")))?;
            Ok(id)
        }
        None => {
            let row = client
                .query_one(
                    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
                     tokens_used, superseded, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     RETURNING id",
                    &[
                        &t.session_id,
                        &int(t.round_number),
                        &t.agent_persona,
                        &t.content,
                        &int(t.tokens_used),
                        &t.superseded,
                        &metadata,
                    ],
                )
                .await
                .map_err(|cause| {
                    doing(
                        cause,
                        format!(
                            "writing debate_rounds ({} round {})",
                            t.session_id, t.round_number
                        ),
                    )
                })?;
            Ok(row.get(0))
        }
    }
}

async fn write_decision(client: &Client, d: &ControllerDecision) -> Result<()> {
    let signals = serde_json::to_value(&d.signals)?;
    client
        .execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, round_index) DO UPDATE \
             SET decision = EXCLUDED.decision, signal_json = EXCLUDED.signal_json",
            &[
                &d.session_id,
                &int(d.round_index),
                &d.decision.to_wire(),
                &signals,
            ],
        )
        .await
        .map_err(|cause| {
            doing(
                cause,
                format!(
                    "writing debate_round_decisions ({}, {})",
                    d.session_id, d.round_index
                ),
            )
        })?;
    Ok(())
}

async fn write_judgment(client: &Client, j: &Judgment) -> Result<()> {
    let reasons = serde_json::to_value(&j.reasons)?;
    let pmids = serde_json::to_value(&j.pmids)?;
    let score = j.score.map(|s| s as f32);
    client
        .execute(
            "INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, \
             score, reasons, judge_model, pmids) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &j.session_id,
                &int(j.round_index),
                &j.agent_persona,
                &j.decision.to_wire(),
                &score,
                &reasons,
                &j.judge_model,
                &pmids,
            ],
        )
        .await
        .map_err(|cause| {
            doing(
                cause,
                format!(
                    "writing debate_round_judgments ({} round {})",
                    j.session_id, j.round_index
                ),
            )
        })?;
    Ok(())
}
