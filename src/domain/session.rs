//! `debate_sessions`: one row per debate.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::limits::{Outside, dollars, share};
use super::reported::{Reported, vocabulary};

vocabulary! {
    /// Where a debate is in its life.
    SessionStatus { Running = "running", Completed = "completed", Aborted = "aborted" }
}

vocabulary! {
    /// How the orchestrator treats the round controller's decisions (docs/database-contract.md, "Modes").
    ControllerMode { Off = "off", Shadow = "shadow", Enabled = "enabled", Gated = "gated" }
}

impl SessionStatus {
    /// The word the console's status badge shows (`done` for completed), which the filter
    /// matches as well as the stored word.
    pub fn shown(self) -> &'static str {
        match self {
            SessionStatus::Running => "running",
            SessionStatus::Completed => "done",
            SessionStatus::Aborted => "aborted",
        }
    }
}

/// Format-specific facts about a debate. Known keys are typed; anything else is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMetadata {
    /// `sequential`, `panel`, `review`, ... (free text: formats grow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The aspects a panel debate works through, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aspects: Vec<String>,
    /// The conclusion a follow-up debate starts from (an earlier debate's final position, with
    /// its `VERDICT:` line). Round 1 is measured against it as if it were round 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<String>,
    /// An extended debate's complexity score (0..1), which chose its agent count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<f64>,
    /// How many agents an extended debate runs with (3 or 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_count: Option<u32>,
    /// What the debate has cost so far, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// What it may cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// The price per thousand tokens; the simulator keeps `cost_usd` current with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_1k_tokens: Option<f64>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl SessionMetadata {
    /// Leaves out every number outside its bounds (a complexity outside `0..=1`, a cost, budget
    /// or price outside `0..=MAX_USD`) and says, for each, which key and why.
    pub(crate) fn leave_out_of_bounds(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        type Check = fn(f64) -> Result<f64, Outside>;
        let checks: [(&str, &mut Option<f64>, Check); 4] = [
            ("complexity", &mut self.complexity, share),
            ("cost_usd", &mut self.cost_usd, dollars),
            ("budget_usd", &mut self.budget_usd, dollars),
            ("usd_per_1k_tokens", &mut self.usd_per_1k_tokens, dollars),
        ];
        for (key, value, check) in checks {
            if let Some(Err(outside)) = value.map(check) {
                problems.push(format!("{key}: {outside}"));
                *value = None;
            }
        }
        problems
    }
}

/// One debate.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub question: String,
    pub debate_type: String,
    pub status: Reported<SessionStatus>,
    pub controller_mode: Reported<ControllerMode>,
    /// The final round count, written when the debate finishes.
    pub num_rounds: Option<u32>,
    pub min_rounds: u32,
    pub max_rounds: u32,
    pub token_budget: u64,
    pub tokens_used: u64,
    /// The roster: every persona the debate may call on, used or not.
    pub personas: Vec<String>,
    pub metadata: SessionMetadata,
    pub created_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The controller settings' version the orchestrator was given at the start
    /// (`gavel_settings_for`), and the arm of the rollout it fell in; `None` when it asked for
    /// none (or nothing was published).
    pub settings: Option<(i64, super::Arm)>,
    /// How long a gated decision of this debate waits for an operator before the controller's
    /// decision stands (`gated_timeout_secs`); `None` when the row does not say.
    pub gated_timeout: Option<std::time::Duration>,
    /// What was wrong with the row as read (unparseable JSON, a value out of range, ...).
    pub issues: Vec<String>,
}

impl Session {
    pub fn is_running(&self) -> bool {
        self.status == Reported::Known(SessionStatus::Running)
    }

    /// Share of the token budget spent, 0 when there is no budget.
    pub(crate) fn budget_spent(&self) -> f64 {
        if self.token_budget == 0 {
            0.0
        } else {
            self.tokens_used as f64 / self.token_budget as f64
        }
    }
}

impl Session {
    /// A session known only by its id, until its row arrives: rows of one debate may land
    /// before the session row itself.
    pub fn placeholder(id: &str) -> Session {
        Session {
            id: id.to_owned(),
            question: String::new(),
            debate_type: String::new(),
            status: SessionStatus::Running.into(),
            controller_mode: Reported::Unknown(Box::default()),
            num_rounds: None,
            min_rounds: 0,
            max_rounds: 0,
            token_budget: 0,
            tokens_used: 0,
            personas: Vec::new(),
            metadata: SessionMetadata::default(),
            created_at: None,
            finished_at: None,
            settings: None,
            gated_timeout: None,
            issues: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_out_of_bounds_are_left_out_and_named_the_rest_kept() {
        let mut metadata = SessionMetadata {
            complexity: Some(1.5),
            cost_usd: Some(-2.0),
            budget_usd: Some(1e300),
            usd_per_1k_tokens: Some(0.01),
            agent_count: Some(3),
            ..SessionMetadata::default()
        };
        assert_eq!(
            metadata.leave_out_of_bounds(),
            [
                "complexity: 1.5 is outside 0..=1",
                "cost_usd: -2 is outside 0..=1000000000",
                "budget_usd: 1e300 is outside 0..=1000000000",
            ]
        );
        assert_eq!(
            (metadata.complexity, metadata.cost_usd, metadata.budget_usd),
            (None, None, None)
        );
        assert_eq!(
            (metadata.usd_per_1k_tokens, metadata.agent_count),
            (Some(0.01), Some(3))
        );
        assert_eq!(metadata.leave_out_of_bounds(), Vec::<String>::new());
    }
}
