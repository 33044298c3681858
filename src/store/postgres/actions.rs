//! Operator actions, recorded exactly once: the insert that loses a race on
//! `(session_id, round_index)` does nothing, and the winner's row is returned instead.
//! [`record`] is an orchestrator's write (the simulator's timeouts and recorded actions);
//! [`resolve`] is the console's, which first checks that the decision is still open, and
//! [`access`] tells a console whether its role may write at all.

use anyhow::{Context, Result};
use tokio_postgres::Client;

use super::rows::{self, ACTION_COLUMNS};
use crate::domain::{DecisionState, Limits, OperatorAction, Reported};
use crate::store::ResolveError;

/// The columns gavel inserts, which a role needs INSERT on to act.
const INSERTED: [&str; 7] = [
    "session_id",
    "round_index",
    "action",
    "decision",
    "persona",
    "operator",
    "note",
];

/// Records `action`; `Ok(Err(existing))` when the decision was already resolved.
pub async fn record(
    client: &Client,
    action: &OperatorAction,
) -> Result<Result<OperatorAction, OperatorAction>> {
    let round = i32::try_from(action.round_index).context("round_index out of range")?;
    let inserted = client
        .query_opt(
            &format!(
                "INSERT INTO debate_operator_actions ({}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (session_id, round_index) DO NOTHING \
                 RETURNING {ACTION_COLUMNS}",
                INSERTED.join(", ")
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
    match existing(client, &action.session_id, round).await? {
        Some(winner) => Ok(Err(winner)),
        None => anyhow::bail!(
            "debate_operator_actions ({}, {round}): the insert conflicted, yet no row is there",
            action.session_id
        ),
    }
}

async fn existing(client: &Client, session_id: &str, round: i32) -> Result<Option<OperatorAction>> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {ACTION_COLUMNS} FROM debate_operator_actions \
                 WHERE session_id = $1 AND round_index = $2"
            ),
            &[&session_id, &round],
        )
        .await
        .context("reading the action that resolved the decision first")?;
    Ok(row.as_ref().map(|row| rows::action(row, &Limits::WIDEST)))
}

/// The console's write: records `action` if its decision is still open (see
/// [`OperatorAction::check_open`]), else says why. A retry of an action that an earlier,
/// unanswered attempt did record is answered with that row. `Err` only when the connection
/// failed, and nothing is known to be written; a refusal by the database (no privilege, ...)
/// is a [`ResolveError::Refused`], which a retry cannot change.
pub async fn resolve(
    client: &Client,
    action: &OperatorAction,
) -> Result<Result<OperatorAction, ResolveError>> {
    let Ok(round) = i32::try_from(action.round_index) else {
        let why = format!("round {} is out of range", action.round_index);
        return Ok(Err(ResolveError::refused(action, why)));
    };
    match attempt(client, action, round).await {
        Ok(answer) => Ok(answer),
        Err(e) => match refusal(&e) {
            Some(reason) => Ok(Err(ResolveError::refused(action, reason))),
            None => Err(e),
        },
    }
}

async fn attempt(
    client: &Client,
    action: &OperatorAction,
    round: i32,
) -> Result<Result<OperatorAction, ResolveError>> {
    if let Some(winner) = existing(client, &action.session_id, round).await? {
        return Ok(if same_resolution(&winner, action) {
            Ok(winner)
        } else {
            Err(ResolveError::AlreadyResolved(Box::new(winner)))
        });
    }
    let state = decision_state(client, &action.session_id, round).await?;
    if let Err(why) = action.check_open(&state) {
        return Ok(Err(ResolveError::refused(action, why)));
    }
    Ok(record(client, action)
        .await?
        .map_err(|winner| ResolveError::AlreadyResolved(Box::new(winner))))
}

/// Whether `recorded` is `action` itself, written by an earlier attempt.
fn same_resolution(recorded: &OperatorAction, action: &OperatorAction) -> bool {
    recorded.action == action.action
        && recorded.decision == action.decision
        && recorded.persona == action.persona
        && recorded.operator == action.operator
        && recorded.note == action.note
}

async fn decision_state(client: &Client, session_id: &str, round: i32) -> Result<DecisionState> {
    let row = client
        .query_one(
            "SELECT (SELECT coalesce(status, '') FROM debate_sessions WHERE id = $1), \
                    (SELECT coalesce(decision, '') FROM debate_round_decisions \
                     WHERE session_id = $1 AND round_index = $2), \
                    (SELECT max(round_index) FROM debate_round_decisions WHERE session_id = $1)",
            &[&session_id, &round],
        )
        .await
        .context("reading the decision acted on")?;
    let status: Option<String> = row.get(0);
    let latest: Option<i32> = row.get(2);
    Ok(DecisionState {
        status: status.as_deref().map(Reported::parse),
        decision: row.get(1),
        latest: latest.and_then(|l| u32::try_from(l).ok()),
    })
}

/// Why the database refused a statement, when it answered with a refusal that asking again
/// cannot change; `None` for a failed connection, a deadlock, a shutdown, ...
fn refusal(error: &anyhow::Error) -> Option<String> {
    let db = error
        .chain()
        .find_map(|cause| cause.downcast_ref::<tokio_postgres::Error>())?
        .as_db_error()?;
    let code = db.code().code();
    let transient = ["08", "40", "53", "57", "58"];
    if transient.iter().any(|class| code.starts_with(class)) {
        return None;
    }
    let mut reason = format!(
        "the database refused it: {} (SQLSTATE {code})",
        db.message()
    );
    if *db.code() == tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE {
        reason.push_str(
            "; this role may only watch: `gavel grant --operator ROLE` makes it an operator",
        );
    }
    Some(reason)
}

/// Whether this connection's role may record operator actions: `None` when it may, else why
/// not (the console then starts read-only).
pub async fn access(client: &Client) -> Result<Option<String>> {
    let row = client
        .query_one(
            "SELECT session_user::text, \
                    bool_and(has_column_privilege('debate_operator_actions', c, 'INSERT')), \
                    coalesce(has_sequence_privilege( \
                        pg_get_serial_sequence('debate_operator_actions', 'id'), 'USAGE'), true) \
             FROM unnest($1::text[]) AS c",
            &[&INSERTED.as_slice()],
        )
        .await
        .context("checking the privileges on debate_operator_actions")?;
    let role: String = row.get(0);
    let insert: bool = row.get(1);
    let sequence: bool = row.get(2);
    Ok(match (insert, sequence) {
        (true, true) => None,
        (false, _) => Some(format!(
            "role {role} cannot insert into debate_operator_actions"
        )),
        (true, false) => Some(format!(
            "role {role} cannot use the sequence of debate_operator_actions.id"
        )),
    })
}
