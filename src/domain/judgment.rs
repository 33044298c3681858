//! `debate_round_judgments`: the cheap judge's ruling on one turn.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::reported::{Reported, vocabulary};

vocabulary! {
    /// The judge's ruling; the contract's long forms are accepted as aliases.
    JudgeDecision {
        Continue = "continue",
        Warn = "warn" | "warn_persona",
        HaltReplace = "halt_replace" | "halt_and_replace_persona",
        Abort = "abort" | "abort_debate",
    }
}

/// A cited PubMed id and whether it was found to exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmidCheck {
    pub pmid: String,
    pub verified: bool,
}

/// The judge's ruling on one persona's turn in one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    pub id: u64,
    pub session_id: String,
    pub round_index: u32,
    pub agent_persona: String,
    pub decision: Reported<JudgeDecision>,
    pub score: Option<f64>,
    pub reasons: Vec<String>,
    pub judge_model: Option<String>,
    pub pmids: Vec<PmidCheck>,
    pub created_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read.
    pub issues: Vec<String>,
}
