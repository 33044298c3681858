//! `debate_operator_actions`: an operator's resolution of a controller decision, and the rule
//! for when a decision may still be resolved.

use chrono::{DateTime, Utc};

use super::decision::Decision;
use super::reported::{Reported, vocabulary};
use super::session::SessionStatus;

vocabulary! {
    /// How an operator resolved a decision.
    ActionKind { Accept = "accept", Override = "override", Escalate = "escalate" }
}

/// The operator name recorded when a gated decision's wait ran out.
pub const TIMEOUT_OPERATOR: &str = "timeout";

/// One resolution. `(session_id, round_index)` is resolved at most once.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorAction {
    pub session_id: String,
    pub round_index: u32,
    pub action: Reported<ActionKind>,
    /// The decision that now stands (for accept: the controller's own).
    pub decision: Reported<Decision>,
    /// For escalate: the persona to bring in.
    pub persona: Option<String>,
    /// The display name the client gave (`--operator`): free text.
    pub operator: String,
    /// The database role that wrote the row (`operator_role`, stamped by the database); `None`
    /// where no database vouches for it (the demo, rows from before the column existed).
    pub role: Option<String>,
    pub note: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read.
    pub issues: Vec<String>,
}

impl OperatorAction {
    /// Who acted, as shown: the display name, and the database role when it differs.
    pub fn who(&self) -> String {
        who(&self.operator, self.role.as_deref())
    }

    /// Whether this action may be recorded on a decision in `state`: the debate still runs, the
    /// decision is on record (any decision of a running debate without an action is pending,
    /// the contract says, not only the latest), and there is a decision to let stand (for
    /// accept: the one still on record). Who resolved it first is the store's to say.
    pub fn check_open(&self, state: &DecisionState) -> Result<(), NotOpen> {
        let round = self.round_index;
        match &state.status {
            None => return Err(NotOpen::NoSession),
            Some(Reported::Known(SessionStatus::Running)) => {}
            Some(other) => {
                return Err(NotOpen::Finished {
                    status: other.to_wire(),
                });
            }
        }
        let Some(controller) = state.decision.as_deref() else {
            return Err(NotOpen::Missing { round });
        };
        let accept = self.action == Reported::Known(ActionKind::Accept);
        if self.decision.to_wire().trim().is_empty() || (accept && controller.trim().is_empty()) {
            return Err(NotOpen::Empty { round });
        }
        if accept && controller != self.decision.to_wire() {
            return Err(NotOpen::Changed {
                round,
                now: controller.to_owned(),
            });
        }
        Ok(())
    }
}

impl OperatorAction {
    /// Whether `recorded` is this action itself, written by an earlier attempt of a console
    /// connected as `role` (the same action, decision, persona, display name, note and role).
    pub(crate) fn is_recorded_as(&self, recorded: &OperatorAction, role: Option<&str>) -> bool {
        recorded.action == self.action
            && recorded.decision == self.decision
            && recorded.persona == self.persona
            && recorded.operator == self.operator
            && recorded.note == self.note
            && recorded.role.as_deref() == role
    }
}

/// What the database lets a console write, as its role's privileges say: each kind of row
/// with the reason of its own table when it may not.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    /// The role its writes are stamped with (`session_user`).
    pub role: String,
    /// Why the role may not record operator actions (it may only watch them); `None` when it may.
    pub actions: Option<String>,
    /// Why the role may not pin notes; `None` when it may.
    pub notes: Option<String>,
}

/// An operator as shown: the display name `operator`, and the database `role` that wrote the
/// action when it differs ("alice (role bob)").
pub fn who(operator: &str, role: Option<&str>) -> String {
    match role {
        Some(role) if role != operator => format!("{operator} (role {role})"),
        _ => operator.to_owned(),
    }
}

/// What a store knows of a decision when an operator acts on it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecisionState {
    /// The debate's status; `None` when it has no session row.
    pub status: Option<Reported<SessionStatus>>,
    /// The controller's decision for the round as written (`""` for NULL); `None` without a row.
    pub decision: Option<String>,
}

/// Why a decision cannot be resolved now; nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOpen {
    #[error("the debate has no row in debate_sessions")]
    NoSession,
    #[error("the debate's status is {status:?}, not running")]
    Finished { status: String },
    #[error("there is no controller decision for round {round}")]
    Missing { round: u32 },
    #[error("the controller's decision for round {round} is empty: nothing to accept")]
    Empty { round: u32 },
    #[error("the controller's decision for round {round} is now {now:?}, not what was confirmed")]
    Changed { round: u32, now: String },
}
