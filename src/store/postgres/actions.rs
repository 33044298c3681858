//! Operator actions, recorded exactly once: the insert that loses a race on
//! `(session_id, round_index)` does nothing, and the winner's row is returned instead.

use anyhow::{Context, Result};
use tokio_postgres::Client;

use super::rows::{self, ACTION_COLUMNS};
use crate::domain::{Limits, OperatorAction};

/// Records `action`; `Ok(Err(existing))` when the decision was already resolved.
pub async fn record(
    client: &Client,
    action: &OperatorAction,
) -> Result<Result<OperatorAction, OperatorAction>> {
    let round = i32::try_from(action.round_index).context("round_index out of range")?;
    let inserted = client
        .query_opt(
            &format!(
                "INSERT INTO debate_operator_actions \
                 (session_id, round_index, action, decision, persona, operator, note) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (session_id, round_index) DO NOTHING \
                 RETURNING {ACTION_COLUMNS}"
            ),
            &[
                &action.session_id,
                &round,
                &action.action.to_wire(),
                &action.decision.to_wire(),
                &action.persona,
                &action.operator,
                &action.note,
            ],
        )
        .await
        .context("recording the operator action")?;
    if let Some(row) = inserted {
        return Ok(Ok(rows::action(&row, &Limits::WIDEST)));
    }
    let existing = client
        .query_one(
            &format!(
                "SELECT {ACTION_COLUMNS} FROM debate_operator_actions \
                 WHERE session_id = $1 AND round_index = $2"
            ),
            &[&action.session_id, &round],
        )
        .await
        .context("reading the action that resolved the decision first")?;
    Ok(Err(rows::action(&existing, &Limits::WIDEST)))
}
