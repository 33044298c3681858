//! One setting of the controller's thresholds replayed over one recorded debate: where it would
//! have stopped, what that saves, and whether the verdict would have changed.
//!
//! The replay asks the controller after every round the debate actually ran. The first stop is
//! where the debate would have ended; a debate the setting never stops ends where it really
//! ended (a replay cannot invent rounds nobody ran). An escalation brings its persona in for the
//! rounds after it. Operator labels are compared with what the setting says at their round.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::record::{Class, RecordedDebate};
use crate::domain::Decision;
use crate::policy::{self, ControllerConfig, ControllerState};

/// One point of a calibration grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub similarity_threshold: f64,
    pub novelty_threshold: u32,
    /// `None`: each debate's own `min_rounds`, floored by the configuration's.
    pub min_rounds: Option<u32>,
    /// `None`: each debate's own `max_rounds`.
    pub max_rounds: Option<u32>,
    pub budget_fraction: f64,
}

impl Setting {
    /// The setting in force: the configured thresholds, each debate's own round bounds.
    pub fn current(config: &ControllerConfig) -> Setting {
        Setting {
            similarity_threshold: config.similarity_threshold,
            novelty_threshold: config.novelty_threshold,
            min_rounds: None,
            max_rounds: None,
            budget_fraction: config.budget_fraction,
        }
    }

    /// The controller configuration this setting amounts to over `base`.
    pub fn config(&self, base: &ControllerConfig) -> ControllerConfig {
        ControllerConfig {
            similarity_threshold: self.similarity_threshold,
            novelty_threshold: self.novelty_threshold,
            min_rounds: self.min_rounds.unwrap_or(base.min_rounds),
            budget_fraction: self.budget_fraction,
            ..base.clone()
        }
    }

    /// Equal up to float noise from stepping a range.
    pub fn same_as(&self, other: &Setting) -> bool {
        (self.similarity_threshold - other.similarity_threshold).abs() < 1e-9
            && (self.budget_fraction - other.budget_fraction).abs() < 1e-9
            && self.novelty_threshold == other.novelty_threshold
            && self.min_rounds == other.min_rounds
            && self.max_rounds == other.max_rounds
    }
}

/// What one setting would have done with one debate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DebateOutcome {
    pub session_id: String,
    pub rounds_run: u32,
    /// The round the setting stops at, or the real end when it never stops.
    pub rounds_used: u32,
    /// The stop, `None` when the debate ran to its real end first.
    pub stop: Option<Decision>,
    pub tokens_run: u64,
    pub tokens_saved: u64,
    pub verdict_at_stop: Option<String>,
    pub verdict_at_end: Option<String>,
    pub verdict_flip: bool,
    /// Escalations up to the stop.
    pub escalations: u32,
    pub labels: u32,
    /// Labels whose kind (stop, continue, escalate) the setting's decision shares.
    pub agreed: u32,
    /// Rounds with a recorded controller decision.
    pub decisions_recorded: u32,
    /// Of those, rounds where the setting decides the same (stop, continue or escalate).
    pub decisions_agreed: u32,
}

/// Replays `setting` (already turned into `config`) over `debate`.
pub fn replay(
    debate: &RecordedDebate,
    setting: &Setting,
    config: &ControllerConfig,
) -> DebateOutcome {
    let run = debate.rounds_run();
    let limits = (
        setting.min_rounds.unwrap_or(debate.min_rounds),
        setting.max_rounds.unwrap_or(debate.max_rounds),
    );
    let mut brought_in: Vec<String> = Vec::new();
    let mut stop = None;
    let mut escalations = 0;
    let mut agreed = 0;
    let (mut decisions_recorded, mut decisions_agreed) = (0, 0);
    for (index, facts) in debate.rounds.iter().enumerate() {
        let round = index as u32 + 1;
        let (decision, persona) = decide_after(debate, index, &brought_in, limits, config);
        if let Some(recorded) = facts.recorded {
            decisions_recorded += 1;
            decisions_agreed += u32::from(recorded == Class::of(decision));
        }
        agreed += debate
            .labels
            .iter()
            .filter(|l| l.round == round && l.class == Class::of(decision))
            .count() as u32;
        if stop.is_some() {
            continue;
        }
        if decision.stops() {
            stop = Some((round, decision));
        } else if let Some(persona) = persona {
            escalations += 1;
            brought_in.push(persona);
        }
    }

    let rounds_used = stop.map_or(run, |(round, _)| round);
    let verdict_at_stop = debate.verdict_after(rounds_used).map(str::to_owned);
    let verdict_at_end = debate.verdict_after(run).map(str::to_owned);
    DebateOutcome {
        session_id: debate.id.clone(),
        rounds_run: run,
        rounds_used,
        stop: stop.map(|(_, decision)| decision),
        tokens_run: debate.tokens_after(run),
        tokens_saved: debate.tokens_after(run) - debate.tokens_after(rounds_used),
        verdict_flip: verdict_at_stop != verdict_at_end,
        verdict_at_stop,
        verdict_at_end,
        escalations,
        labels: debate.labels.len() as u32,
        agreed,
        decisions_recorded,
        decisions_agreed,
    }
}

/// What the controller decides after round `index + 1` of `debate`, with `brought_in` the
/// personas its replay escalated to so far and `(min_rounds, max_rounds)` in force.
fn decide_after(
    debate: &RecordedDebate,
    index: usize,
    brought_in: &[String],
    (min_rounds, max_rounds): (u32, u32),
    config: &ControllerConfig,
) -> (Decision, Option<String>) {
    let facts = &debate.rounds[index];
    let used_personas: Cow<'_, [String]> = if brought_in.is_empty() {
        Cow::Borrowed(&facts.spoken)
    } else {
        let unspoken = brought_in.iter().filter(|p| !facts.spoken.contains(p));
        Cow::Owned(facts.spoken.iter().chain(unspoken).cloned().collect())
    };
    let previous = match index {
        0 => debate.prior.as_ref(),
        i => Some(&debate.rounds[i - 1].signals),
    };
    let (decision, persona) = policy::decide(
        &ControllerState {
            round: index as u32 + 1,
            current: &facts.signals,
            previous,
            format_check: facts.format_check.as_ref(),
            min_rounds,
            max_rounds,
            tokens_used: facts.tokens_after,
            token_budget: debate.token_budget,
            roster: &debate.roster,
            used_personas: &used_personas,
        },
        config,
    );
    (decision, persona.cloned())
}
