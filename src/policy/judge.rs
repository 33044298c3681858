//! The judge policy: from a judged score and flags to continue, warn, halt_replace or abort.
//!
//! - abort: a cited PMID is not verified, or a second halt_replace in a row;
//! - halt_replace: the turn is off topic, or scored below `warn_min_score`; the turn is
//!   superseded and re-run by a replacement persona;
//! - warn: the score is in `warn_min_score..continue_min_score`, or the turn is redundant; the
//!   persona's next turn carries a warning preamble;
//! - continue: the score is at least `continue_min_score` with no failure.

use serde::Deserialize;

use crate::domain::{JudgeDecision, PmidCheck};

/// The judge's score bands.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JudgeConfig {
    pub continue_min_score: f64,
    pub warn_min_score: f64,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            continue_min_score: 0.6,
            warn_min_score: 0.4,
        }
    }
}

impl JudgeConfig {
    /// Checks the bands are ordered inside 0..1.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0 <= self.warn_min_score
            && self.warn_min_score <= self.continue_min_score
            && self.continue_min_score <= 1.0)
        {
            return Err(format!(
                "judge bands must satisfy 0 <= warn_min_score ({}) <= continue_min_score ({}) <= 1",
                self.warn_min_score, self.continue_min_score
            ));
        }
        Ok(())
    }
}

crate::domain::vocabulary! {
    /// A failure the judge flagged on a turn.
    JudgeFlag { OffTopic = "off_topic", Redundant = "redundant" }
}

/// What the judge model reported about one turn.
#[derive(Debug, Clone, Copy)]
pub struct JudgeInput<'a> {
    pub score: f64,
    pub flags: &'a [JudgeFlag],
    pub pmids: &'a [PmidCheck],
}

/// The ruling and why.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeOutcome {
    pub decision: JudgeDecision,
    pub reasons: Vec<String>,
}

/// Rules on one turn; `previous` is the debate's previous ruling.
pub fn judge(
    input: &JudgeInput<'_>,
    previous: Option<JudgeDecision>,
    config: &JudgeConfig,
) -> JudgeOutcome {
    let unverified: Vec<&str> = input
        .pmids
        .iter()
        .filter(|p| !p.verified)
        .map(|p| p.pmid.as_str())
        .collect();
    let off_topic = input.flags.contains(&JudgeFlag::OffTopic);
    let redundant = input.flags.contains(&JudgeFlag::Redundant);
    let score = input.score;

    let (decision, reason) = if !unverified.is_empty() {
        (
            JudgeDecision::Abort,
            format!("cited PMID not verified: {}", unverified.join(", ")),
        )
    } else if off_topic || score < config.warn_min_score {
        let why = if off_topic {
            "off topic".to_owned()
        } else {
            format!("score {score:.2} < {:.2}", config.warn_min_score)
        };
        if previous == Some(JudgeDecision::HaltReplace) {
            (
                JudgeDecision::Abort,
                format!("{why}: second halt_replace in a row"),
            )
        } else {
            (
                JudgeDecision::HaltReplace,
                format!("{why}: turn superseded, persona replaced"),
            )
        }
    } else if redundant {
        (
            JudgeDecision::Warn,
            "redundant with earlier turns".to_owned(),
        )
    } else if score < config.continue_min_score {
        (
            JudgeDecision::Warn,
            format!(
                "score {score:.2} in {:.2}..{:.2}",
                config.warn_min_score, config.continue_min_score
            ),
        )
    } else {
        (
            JudgeDecision::Continue,
            format!("score {score:.2} >= {:.2}", config.continue_min_score),
        )
    };
    JudgeOutcome {
        decision,
        reasons: vec![reason],
    }
}
