//! `debate_round_decisions`: the round controller's decision after each round, with its signals.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::reported::{Reported, vocabulary};

vocabulary! {
    /// What the round controller decides after a round.
    Decision {
        StopConverged = "stop_converged",
        ContinueBaseline = "continue_baseline",
        EscalateNewPersona = "escalate_new_persona",
        StopMaxRounds = "stop_max_rounds",
        StopSafety = "stop_safety",
    }
}

impl Decision {
    /// Whether the debate ends when this decision stands.
    pub fn stops(self) -> bool {
        matches!(
            self,
            Decision::StopConverged | Decision::StopMaxRounds | Decision::StopSafety
        )
    }
}

/// `signal_json`: what the controller saw. Every key is optional because foreign writers may
/// omit any of them; gavel writes them all, `null` where a signal does not apply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    #[serde(default)]
    pub similarity: Option<f64>,
    /// What measured `similarity`: gavel writes its measure's name (`tfidf`, the embedding
    /// model's), or `precomputed` for an orchestrator's figure; absent from older rows.
    #[serde(default)]
    pub similarity_model: Option<String>,
    #[serde(default)]
    pub similarity_threshold: Option<f64>,
    #[serde(default)]
    pub verdict: Option<String>,
    #[serde(default)]
    pub previous_verdict: Option<String>,
    #[serde(default)]
    pub verdict_stable: Option<bool>,
    #[serde(default)]
    pub verdict_split: Option<bool>,
    #[serde(default)]
    pub new_claims: Option<u32>,
    #[serde(default)]
    pub novelty_threshold: Option<u32>,
    #[serde(default)]
    pub open_disputes: Option<u32>,
    #[serde(default)]
    pub tokens_used: Option<u64>,
    #[serde(default)]
    pub token_budget: Option<u64>,
    #[serde(default)]
    pub escalate_persona: Option<String>,
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// The controller's decision after round `round_index`.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerDecision {
    pub session_id: String,
    pub round_index: u32,
    pub decision: Reported<Decision>,
    pub signals: Signals,
    pub decided_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read (for example a malformed `signal_json`).
    pub issues: Vec<String>,
}
