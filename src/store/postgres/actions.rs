//! Operator actions, recorded exactly once: the insert that loses a race on
//! `(session_id, round_index)` does nothing, and the winner's row is returned instead.
//! [`record`] is an orchestrator's write (the simulator's timeouts and recorded actions);
//! [`resolve`] is the console's, which checks that the decision is still open in the statement
//! that writes; whether its role may write at all is the `access` module's to tell.

use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use super::error::{Doing, Error, Result};
use super::rows::{self, ACTION_COLUMNS};
use crate::domain::{DecisionState, Limits, OperatorAction, Reported};
use crate::store::ResolveError;

/// The columns gavel inserts, which a role needs INSERT on to act.
pub(super) const INSERTED: [&str; 7] = [
    "session_id",
    "round_index",
    "action",
    "decision",
    "persona",
    "operator",
    "note",
];

/// `value` as the `int4` of column `what`.
fn column(what: &'static str, value: u32) -> Result<i32> {
    i32::try_from(value).map_err(|_| Error::OutOfRange {
        what,
        value: value.into(),
    })
}

/// Records `action`; `Ok(Err(existing))` when the decision was already resolved.
pub async fn record(
    client: &Client,
    action: &OperatorAction,
) -> Result<Result<OperatorAction, OperatorAction>> {
    let round = column("round_index", action.round_index)?;
    let values = "VALUES ($1, $2, $3, $4, $5, $6, $7)";
    if let Some(recorded) = insert(client, action, "", values, &[]).await? {
        return Ok(Ok(recorded));
    }
    match existing(client, &action.session_id, round).await? {
        Some(winner) => Ok(Err(winner)),
        None => Err(Error::Inconsistent(format!(
            "debate_operator_actions ({}, {round}): the insert conflicted, yet no row is there",
            action.session_id
        ))),
    }
}

/// Runs `{with} INSERT INTO debate_operator_actions (INSERTED) {source} ON CONFLICT DO
/// NOTHING`, where `$1..$7` are `action`'s values of [`INSERTED`] and `$8...` are `more`: the
/// row written, if one was.
async fn insert(
    client: &Client,
    action: &OperatorAction,
    with: &str,
    source: &str,
    more: &[&(dyn ToSql + Sync)],
) -> Result<Option<OperatorAction>> {
    let round = column("round_index", action.round_index)?;
    let (kind, decision) = (action.action.to_wire(), action.decision.to_wire());
    let values: [&(dyn ToSql + Sync); 7] = [
        &action.session_id,
        &round,
        &kind,
        &decision,
        &action.persona,
        &action.operator,
        &action.note,
    ];
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().chain(more).copied().collect();
    let row = client
        .query_opt(
            &format!(
                "{with} INSERT INTO debate_operator_actions ({}) {source} \
                 ON CONFLICT (session_id, round_index) DO NOTHING \
                 RETURNING {ACTION_COLUMNS}",
                INSERTED.join(", ")
            ),
            &params,
        )
        .await
        .doing("recording the operator action")?;
    Ok(row.map(|row| rows::action(&row, &Limits::WIDEST)))
}

/// The action that resolved round `round` of `session_id`, if any.
pub async fn existing(
    client: &Client,
    session_id: &str,
    round: i32,
) -> Result<Option<OperatorAction>> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {ACTION_COLUMNS} FROM debate_operator_actions \
                 WHERE session_id = $1 AND round_index = $2"
            ),
            &[&session_id, &round],
        )
        .await
        .doing(format_args!(
            "reading debate_operator_actions ({session_id}, {round})"
        ))?;
    Ok(row.as_ref().map(|row| rows::action(row, &Limits::WIDEST)))
}

/// What one snapshot of the database says of the decision an action resolves: the state the
/// action is checked against, the raw values the write compares with, and this connection's
/// role.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub state: DecisionState,
    /// `(status, decision)` as read, compared again by [`write_if_unchanged`].
    raw: (Option<String>, Option<String>),
    /// The role an action written on this connection is stamped with (`session_user`).
    pub role: String,
}

/// The decision's state, as one query with `$1` the session and `$2` the round: the debate's
/// status, the round's decision, and this connection's role. Any decision of a running debate
/// without an action is pending (the contract), so no other round is read.
const STATE_QUERY: &str = "SELECT \
        (SELECT coalesce(status, '') FROM debate_sessions WHERE id = $1::text) AS status, \
        (SELECT coalesce(decision, '') FROM debate_round_decisions \
            WHERE session_id = $1::text AND round_index = $2::int4) AS decision, \
        session_user::text AS role";

/// Reads what the database says now of the decision `action` resolves.
pub async fn observe(client: &Client, action: &OperatorAction) -> Result<Observed> {
    let round = column("round_index", action.round_index)?;
    let row = client
        .query_one(STATE_QUERY, &[&action.session_id, &round])
        .await
        .doing("reading the decision acted on")?;
    let raw: (Option<String>, Option<String>) = (row.get(0), row.get(1));
    Ok(Observed {
        state: DecisionState {
            status: raw.0.as_deref().map(Reported::parse),
            decision: raw.1.clone(),
        },
        raw,
        role: row.get(2),
    })
}

/// Records `action` in one statement if, in that statement's snapshot, the decision's state is
/// still what `observed` saw: `Some(row)` when written, `None` when nothing was (the state
/// changed, or the decision was resolved meanwhile). A decision that commits while the
/// statement runs is not seen by it, and counts as later than the action.
pub async fn write_if_unchanged(
    client: &Client,
    action: &OperatorAction,
    observed: &Observed,
) -> Result<Option<OperatorAction>> {
    let (status, decision) = &observed.raw;
    let with = format!("WITH state AS ({STATE_QUERY})");
    let source = "SELECT $1::text, $2::int4, $3::text, $4::text, $5::text, $6::text, $7::text \
        FROM state \
        WHERE (state.status, state.decision) IS NOT DISTINCT FROM ($8::text, $9::text)";
    insert(client, action, &with, source, &[status, decision]).await
}

/// How often a write whose decision changed under it is checked again before giving up.
const ATTEMPTS: usize = 3;

/// The console's write: records `action` if its decision is still open (see
/// [`OperatorAction::check_open`]) within `limits`, else says why: already resolved (by whom)
/// or no longer open. The check and the insert are one statement ([`write_if_unchanged`]). A
/// retry of an action that an earlier, unanswered attempt of this role did record is answered
/// with that row. `Err` when the connection failed or the state kept changing, and nothing is
/// known to be written; a refusal by the database (no privilege, ...) is a
/// [`ResolveError::Refused`], which a retry cannot change.
pub async fn resolve(
    client: &Client,
    action: &OperatorAction,
    limits: &Limits,
) -> Result<Result<OperatorAction, ResolveError>> {
    // A decision row outside the readers' rounds is in no round, for the store as for the
    // console.
    if !(1..=limits.max_round).contains(&action.round_index)
        || i32::try_from(action.round_index).is_err()
    {
        let why = format!("round {} is out of range", action.round_index);
        return Ok(Err(ResolveError::refused(action, why)));
    }
    match attempt(client, action).await {
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
) -> Result<Result<OperatorAction, ResolveError>> {
    let round = column("round_index", action.round_index)?;
    for _ in 0..ATTEMPTS {
        let observed = observe(client, action).await?;
        if let Some(winner) = existing(client, &action.session_id, round).await? {
            return Ok(if action.is_recorded_as(&winner, Some(&observed.role)) {
                Ok(winner)
            } else {
                Err(ResolveError::AlreadyResolved(Box::new(winner)))
            });
        }
        if let Err(why) = action.check_open(&observed.state) {
            return Ok(Err(ResolveError::refused(action, why)));
        }
        if let Some(recorded) = write_if_unchanged(client, action, &observed).await? {
            return Ok(Ok(recorded));
        }
    }
    Err(Error::Inconsistent(format!(
        "the decision on {} round {round} changed under each of {ATTEMPTS} attempts",
        action.session_id
    )))
}

/// Why the database refused a statement, when it answered with a refusal that asking again
/// cannot change; `None` for a failed connection, a deadlock, a shutdown, a canceled query, a
/// read-only transaction (a standby after failover), a lock not available, ...
pub(super) fn refusal(error: &Error) -> Option<String> {
    let db = error.database()?.as_db_error()?;
    let code = db.code().code();
    let transient_classes = ["08", "40", "53", "57", "58"];
    let transient_codes = ["25006", "55P03", "55006"];
    if transient_classes
        .iter()
        .any(|class| code.starts_with(class))
        || transient_codes.contains(&code)
    {
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
