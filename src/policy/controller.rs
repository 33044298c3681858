//! The round controller: after each round, stop (converged, max rounds, budget safety),
//! continue, or escalate to a persona not yet used.
//!
//! Rules, in order:
//! 1. `stop_safety` when more than `budget_fraction` of the token budget is spent before
//!    `max_rounds` (it overrides `min_rounds`: the budget is a hard limit).
//! 2. `stop_max_rounds` when the round reached `max_rounds`.
//! 3. `continue_baseline` before `min_rounds` (never fewer than the configured floor, 2).
//! 4. `stop_converged` when all three hold: similarity to the previous round is at least
//!    `similarity_threshold`, the verdict is the previous round's, and fewer than
//!    `novelty_threshold` new claims; and the format's own check (open DISPUTE/MISSED items,
//!    review findings) agrees when the format has one.
//! 5. `escalate_new_persona` on stable disagreement: the last two rounds are highly similar and
//!    both split on the verdict. The first roster persona not yet used is brought in; with none
//!    left the debate continues.
//! 6. `continue_baseline` otherwise.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::convergence::Convergence;
use crate::domain::{Decision, Limits, Signals};
use crate::signals::RoundSignals;

/// The controller's thresholds. `Default` is the configuration in force unless a config file
/// says otherwise.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControllerConfig {
    /// Similarity to the previous round at or above which rounds count as repeating.
    pub similarity_threshold: f64,
    /// A round converges only with fewer new claims than this.
    pub novelty_threshold: u32,
    /// No debate stops for convergence before this round, whatever the session says.
    pub min_rounds: u32,
    /// Round bound for debate types without their own entry.
    pub max_rounds: u32,
    /// Round bound per debate type.
    pub max_rounds_by_type: BTreeMap<String, u32>,
    /// Share of the token budget past which the debate stops for safety.
    pub budget_fraction: f64,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            similarity_threshold: 0.9,
            novelty_threshold: 1,
            min_rounds: 2,
            max_rounds: 8,
            max_rounds_by_type: BTreeMap::new(),
            budget_fraction: 0.8,
        }
    }
}

impl ControllerConfig {
    /// The round bound for a debate type.
    pub fn max_rounds_for(&self, debate_type: &str) -> u32 {
        self.max_rounds_by_type
            .get(debate_type)
            .copied()
            .unwrap_or(self.max_rounds)
    }

    /// Checks the values make sense together.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.similarity_threshold) {
            return Err(format!(
                "similarity_threshold {} is outside 0..1",
                self.similarity_threshold
            ));
        }
        if !(0.0..=1.0).contains(&self.budget_fraction) {
            return Err(format!(
                "budget_fraction {} is outside 0..1",
                self.budget_fraction
            ));
        }
        for (name, max) in self.bounds() {
            if max < self.min_rounds {
                return Err(format!(
                    "{name} {max} is below min_rounds {}",
                    self.min_rounds
                ));
            }
        }
        Ok(())
    }

    /// Checks every round bound lies within the rounds a row may carry.
    pub fn within(&self, limits: &Limits) -> Result<(), String> {
        match self.bounds().find(|(_, max)| *max > limits.max_round) {
            Some((name, max)) => Err(format!(
                "{name} {max} is above [limits] max_round {}",
                limits.max_round
            )),
            None => Ok(()),
        }
    }

    /// `max_rounds` and each `max_rounds_by_type`, by name.
    fn bounds(&self) -> impl Iterator<Item = (String, u32)> + '_ {
        std::iter::once(("max_rounds".to_owned(), self.max_rounds)).chain(
            self.max_rounds_by_type
                .iter()
                .map(|(t, m)| (format!("max_rounds_by_type.{t}"), *m)),
        )
    }
}

/// What the controller sees after a round.
#[derive(Debug, Clone)]
pub struct ControllerState<'a> {
    /// The round just finished, 1-based.
    pub round: u32,
    /// Its signals.
    pub current: &'a RoundSignals,
    /// The signals of the round before it (for round 1 of a follow-up debate: its prior).
    pub previous: Option<&'a RoundSignals>,
    /// The format's own convergence check on the round, when the format has one.
    pub format_check: Option<&'a Convergence>,
    pub min_rounds: u32,
    pub max_rounds: u32,
    pub tokens_used: u64,
    pub token_budget: u64,
    /// Every persona the debate may call on.
    pub roster: &'a [String],
    /// Personas that have spoken or been brought in.
    pub used_personas: &'a [String],
}

/// A decision and the signals behind it, as written to `signal_json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub decision: Decision,
    pub signals: Signals,
}

/// What the controller reads off a state before it rules.
struct Checks<'a> {
    similar: bool,
    stable: bool,
    settled: bool,
    format_ok: bool,
    min_rounds: u32,
    /// Share of the token budget spent.
    spent: f64,
    disagreement: bool,
    unused: Option<&'a String>,
}

impl<'a> Checks<'a> {
    fn of(state: &ControllerState<'a>, config: &ControllerConfig) -> Checks<'a> {
        let current = state.current;
        let previous = state.previous;
        let similar = current
            .similarity
            .is_some_and(|s| s >= config.similarity_threshold);
        Checks {
            similar,
            stable: !current.verdict_split
                && current.verdict.is_some()
                && previous.is_some_and(|p| !p.verdict_split && p.verdict == current.verdict),
            settled: current.new_claims < config.novelty_threshold,
            format_ok: state.format_check.is_none_or(|c| c.converged),
            min_rounds: state.min_rounds.max(config.min_rounds),
            spent: if state.token_budget == 0 {
                0.0
            } else {
                state.tokens_used as f64 / state.token_budget as f64
            },
            disagreement: similar
                && current.verdict_split
                && previous.is_some_and(|p| p.verdict_split),
            unused: state
                .roster
                .iter()
                .find(|p| !state.used_personas.contains(p)),
        }
    }

    fn converged(&self) -> bool {
        self.similar && self.stable && self.settled && self.format_ok
    }

    /// The rules in order; an escalation names the persona it brings in.
    fn rule(
        &self,
        state: &ControllerState<'_>,
        config: &ControllerConfig,
    ) -> (Decision, Option<&'a String>) {
        if self.spent > config.budget_fraction && state.round < state.max_rounds {
            (Decision::StopSafety, None)
        } else if state.round >= state.max_rounds {
            (Decision::StopMaxRounds, None)
        } else if state.round < self.min_rounds {
            (Decision::ContinueBaseline, None)
        } else if self.converged() {
            (Decision::StopConverged, None)
        } else if self.disagreement && self.unused.is_some() {
            (Decision::EscalateNewPersona, self.unused)
        } else {
            (Decision::ContinueBaseline, None)
        }
    }
}

/// The decision after the last round in `state`, and the persona an escalation brings in;
/// [`should_continue`] without the explanation, for replaying many settings quickly.
pub fn decide<'a>(
    state: &ControllerState<'a>,
    config: &ControllerConfig,
) -> (Decision, Option<&'a String>) {
    Checks::of(state, config).rule(state, config)
}

/// Decides what happens after the last round in `state`, with the signals and reasons behind it.
pub fn should_continue(state: &ControllerState<'_>, config: &ControllerConfig) -> Outcome {
    let round = state.round;
    let current = state.current;
    let previous = state.previous;
    let checks = Checks::of(state, config);
    let (decision, escalate_persona) = checks.rule(state, config);

    let mut reasons = vec![
        match current.similarity {
            Some(s) if checks.similar => {
                format!("similarity {s:.2} >= {:.2}", config.similarity_threshold)
            }
            Some(s) => format!("similarity {s:.2} < {:.2}", config.similarity_threshold),
            None => "no similarity: first round".to_owned(),
        },
        verdict_reason(current, previous, checks.stable),
        format!(
            "{} new claims {} {}",
            current.new_claims,
            if checks.settled { "<" } else { ">=" },
            config.novelty_threshold
        ),
    ];
    if let Some(check) = state.format_check {
        reasons.push(check.reason.clone());
    }
    reasons.push(match decision {
        Decision::StopSafety => format!(
            "tokens {:.0}% of budget > {:.0}% before max_rounds {}",
            checks.spent * 100.0,
            config.budget_fraction * 100.0,
            state.max_rounds
        ),
        Decision::StopMaxRounds => {
            format!("round {round} reached max_rounds {}", state.max_rounds)
        }
        Decision::ContinueBaseline if round < checks.min_rounds => format!(
            "round {round} < min_rounds {}{}",
            checks.min_rounds,
            if checks.converged() {
                ": convergence signals met, but too early"
            } else {
                ""
            }
        ),
        Decision::StopConverged => "converged: similar, stable verdict, no new claims".to_owned(),
        Decision::EscalateNewPersona => format!(
            "stable disagreement for 2 rounds: bring in {}",
            escalate_persona.map_or("", String::as_str)
        ),
        Decision::ContinueBaseline if checks.disagreement => {
            "stable disagreement, but every roster persona is already used".to_owned()
        }
        Decision::ContinueBaseline => "not converged".to_owned(),
    });

    Outcome {
        decision,
        signals: Signals {
            similarity: current.similarity,
            similarity_model: current.similarity_model.clone(),
            similarity_threshold: Some(config.similarity_threshold),
            verdict: current.verdict.clone(),
            previous_verdict: previous.and_then(|p| p.verdict.clone()),
            verdict_stable: Some(checks.stable),
            verdict_split: Some(current.verdict_split),
            new_claims: Some(current.new_claims),
            novelty_threshold: Some(config.novelty_threshold),
            open_disputes: current.open_disputes,
            tokens_used: Some(state.tokens_used),
            token_budget: Some(state.token_budget),
            escalate_persona: escalate_persona.cloned(),
            reasons,
        },
    }
}

fn verdict_reason(current: &RoundSignals, previous: Option<&RoundSignals>, stable: bool) -> String {
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
    match previous {
        _ if current.verdict_split => format!("verdict split: {}", shown(&current.verdict)),
        None => format!(
            "verdict {}: nothing earlier to compare",
            shown(&current.verdict)
        ),
        Some(_) if stable => format!("verdict {} unchanged", shown(&current.verdict)),
        Some(p) => format!(
            "verdict {} differs from previous {}",
            shown(&current.verdict),
            shown(&p.verdict)
        ),
    }
}
