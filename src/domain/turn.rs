//! `debate_rounds`: one row per persona turn. Several turns share a round in panel debates.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::reported::{Reported, vocabulary};

vocabulary! {
    /// Where a panel turn sits in the panel's arc.
    Phase { Opening = "opening", Themed = "themed", Closing = "closing" }
}

vocabulary! {
    /// What a panel's crux turns on.
    Disagreement {
        Empirical = "empirical",
        Values = "values",
        Definition = "definition" | "definitional",
    }
}

/// A crux a panel turn names: the claim the disagreement turns on, its kind, and who is on
/// either side of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crux {
    pub claim: String,
    #[serde(rename = "type")]
    pub kind: Reported<Disagreement>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub between: Vec<String>,
}

/// Format-specific facts about a turn (`debate_rounds.metadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Reported<Phase>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect: Option<String>,
    /// The warning preamble this turn carried because the judge warned its persona.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_warning: Option<String>,
    /// The persona whose halted turn this turn re-runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// The cruxes a panel turn (usually a synthesis) names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cruxes: Vec<Crux>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// One persona's turn. `content` is untrusted model output.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub id: u64,
    pub session_id: String,
    pub round_number: u32,
    pub agent_persona: String,
    pub content: String,
    pub tokens_used: u32,
    /// Set when the judge halted the turn and it was re-run.
    pub superseded: bool,
    pub metadata: TurnMetadata,
    pub created_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read.
    pub issues: Vec<String>,
}
