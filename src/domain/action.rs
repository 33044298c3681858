//! `debate_operator_actions`: an operator's resolution of a controller decision.

use chrono::{DateTime, Utc};

use super::decision::Decision;
use super::reported::{Reported, vocabulary};

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
    pub operator: String,
    pub note: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read.
    pub issues: Vec<String>,
}
