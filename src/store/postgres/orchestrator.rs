//! The orchestrator's side of the contract, for the simulator that stands in for one (`gavel
//! simulate`, `gavel demo --postgres`): each row written as an orchestrator writes it (a
//! session upserted, a turn inserted and then updated in place, a decision upserted, a
//! judgment inserted), and the rounds whose operator action was recorded learnt from
//! `gavel_events` notifications, debate by debate.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_postgres::Client;
use tokio_postgres::types::Json;

use super::connect::Target;
use super::error::{Doing, Result};
use super::notifications::Notifications;
use super::payload::Notice;
use crate::domain::{ControllerDecision, Judgment, Session, Turn};

/// One connection that writes for every debate, and one that listens for operator actions and
/// hands each debate the rounds resolved.
#[derive(Clone)]
pub struct Orchestrator {
    client: Arc<Client>,
    subscribe: UnboundedSender<(String, UnboundedSender<i32>)>,
}

impl Orchestrator {
    pub async fn connect(target: &Target) -> Result<Orchestrator> {
        let client = Arc::new(target.connect_driven().await?);
        let mut listening = Notifications::open(target, Vec::new()).await?;
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

    /// The connection every debate's rows are written on.
    pub fn client(&self) -> Arc<Client> {
        self.client.clone()
    }

    /// The rounds of debate `session_id` whose operator action is recorded from now on, as
    /// their notifications arrive; `None` when the task that hands them out is gone.
    pub fn resolved(&self, session_id: &str) -> Option<UnboundedReceiver<i32>> {
        let (sender, resolved) = unbounded_channel();
        self.subscribe
            .send((session_id.to_owned(), sender))
            .ok()
            .map(|()| resolved)
    }
}

fn int(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes session `s`, or brings the one written up to date.
pub async fn write_session(client: &Client, s: &Session) -> Result<()> {
    client
        .execute(
            "INSERT INTO debate_sessions (id, question, debate_type, status, controller_mode, \
             num_rounds, min_rounds, max_rounds, token_budget, tokens_used, personas, metadata, \
             created_at, finished_at, settings_version, settings_arm, gated_timeout_secs) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13, now()), $14, \
             $15, $16, $17) \
             ON CONFLICT (id) DO UPDATE SET question = EXCLUDED.question, \
             debate_type = EXCLUDED.debate_type, status = EXCLUDED.status, \
             controller_mode = EXCLUDED.controller_mode, num_rounds = EXCLUDED.num_rounds, \
             min_rounds = EXCLUDED.min_rounds, max_rounds = EXCLUDED.max_rounds, \
             token_budget = EXCLUDED.token_budget, tokens_used = EXCLUDED.tokens_used, \
             personas = EXCLUDED.personas, metadata = EXCLUDED.metadata, \
             finished_at = EXCLUDED.finished_at, settings_version = EXCLUDED.settings_version, \
             settings_arm = EXCLUDED.settings_arm, \
             gated_timeout_secs = EXCLUDED.gated_timeout_secs",
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
                &Json(&s.personas),
                &Json(&s.metadata),
                &s.created_at,
                &s.finished_at,
                &s.settings.map(|(version, _)| version),
                &s.settings.map(|(_, arm)| arm.as_str()),
                &s.gated_timeout.map(|wait| wait.as_secs_f64()),
            ],
        )
        .await
        .doing(format_args!("writing debate_sessions ({})", s.id))?;
    Ok(())
}

/// Inserts turn `t` (returning the database's id), or updates the one written as `existing`.
pub async fn write_turn(client: &Client, t: &Turn, existing: Option<i64>) -> Result<i64> {
    let metadata = Json(&t.metadata);
    match existing {
        Some(id) => {
            client
                .execute(
                    "UPDATE debate_rounds SET superseded = $2, content = $3, metadata = $4 WHERE id = $1",
                    &[&id, &t.superseded, &t.content, &metadata],
                )
                .await
                .doing(format_args!("updating debate_rounds (id {id})"))?;
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
                .doing(format_args!(
                    "writing debate_rounds ({} round {})",
                    t.session_id, t.round_number
                ))?;
            Ok(row.get(0))
        }
    }
}

/// Writes decision `d`, or replaces the one written for its round.
pub async fn write_decision(client: &Client, d: &ControllerDecision) -> Result<()> {
    client
        .execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, round_index) DO UPDATE \
             SET decision = EXCLUDED.decision, signal_json = EXCLUDED.signal_json",
            &[
                &d.session_id,
                &int(d.round_index),
                &d.decision.to_wire(),
                &Json(&d.signals),
            ],
        )
        .await
        .doing(format_args!(
            "writing debate_round_decisions ({}, {})",
            d.session_id, d.round_index
        ))?;
    Ok(())
}

/// Writes judgment `j`.
pub async fn write_judgment(client: &Client, j: &Judgment) -> Result<()> {
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
                &Json(&j.reasons),
                &j.judge_model,
                &Json(&j.pmids),
            ],
        )
        .await
        .doing(format_args!(
            "writing debate_round_judgments ({} round {})",
            j.session_id, j.round_index
        ))?;
    Ok(())
}
