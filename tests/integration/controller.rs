//! The round controller, on recorded debates (cases a-e of the foundation issue) and on
//! hand-made signals at the edges of each threshold.

use crate::common;

use common::{decisions, known, last_session, play, run, turns};
use gavel::domain::{ControllerMode, Decision, SessionStatus};
use gavel::policy::{ControllerConfig, ControllerState, Convergence, should_continue};
use gavel::signals::RoundSignals;

#[test]
fn a_all_three_signals_at_round_3_stop_converged_with_3_rounds() {
    let mut debate = run("gated_converges_round3", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let decisions = decisions(&changes);
    let kinds: Vec<Decision> = decisions.iter().map(known).collect();
    assert_eq!(
        kinds,
        [
            Decision::ContinueBaseline,
            Decision::ContinueBaseline,
            Decision::StopConverged
        ]
    );
    let signals = &decisions[2].signals;
    assert!(signals.similarity.unwrap() >= 0.9);
    assert_eq!(signals.verdict_stable, Some(true));
    assert_eq!(signals.new_claims, Some(0));
    let session = last_session(&changes);
    assert_eq!(session.status.known(), Some(SessionStatus::Completed));
    assert_eq!(session.num_rounds, Some(3));
}

#[test]
fn b_signals_met_at_round_1_still_run_to_round_2() {
    let mut debate = run("followup_min_rounds", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let decisions = decisions(&changes);
    let first = &decisions[0].signals;
    assert!(
        first.similarity.unwrap() >= 0.9,
        "round 1 is measured against the prior"
    );
    assert_eq!(first.verdict_stable, Some(true));
    assert_eq!(first.new_claims, Some(0));
    assert_eq!(known(&decisions[0]), Decision::ContinueBaseline);
    assert!(first.reasons.iter().any(|r| r.contains("min_rounds 2")));
    assert_eq!(known(&decisions[1]), Decision::StopConverged);
    assert_eq!(last_session(&changes).num_rounds, Some(2));
}

#[test]
fn c_stable_disagreement_escalates_and_the_new_persona_joins() {
    let mut debate = run("escalation_new_persona", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let decisions = decisions(&changes);
    let escalation = decisions
        .iter()
        .find(|d| known(d) == Decision::EscalateNewPersona)
        .expect("an escalation");
    assert_eq!(escalation.round_index, 3);
    assert_eq!(escalation.signals.verdict_split, Some(true));
    assert_eq!(
        escalation.signals.escalate_persona.as_deref(),
        Some("biostatistician")
    );
    let joined: Vec<u32> = turns(&changes)
        .iter()
        .filter(|t| t.agent_persona == "biostatistician")
        .map(|t| t.round_number)
        .collect();
    assert_eq!(
        joined,
        [4, 5],
        "the new persona speaks from the next round on"
    );
    assert_eq!(known(decisions.last().unwrap()), Decision::StopConverged);
}

#[test]
fn without_escalation_the_reserve_persona_never_speaks() {
    let mut debate = run("escalation_new_persona", ControllerMode::Shadow);
    let changes = play(&mut debate, 20);
    assert!(
        turns(&changes)
            .iter()
            .all(|t| t.agent_persona != "biostatistician")
    );
}

#[test]
fn d_never_converging_stops_at_max_rounds_8() {
    let mut debate = run("never_converges", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let decisions = decisions(&changes);
    assert_eq!(decisions.len(), 8);
    assert!(
        decisions[..7]
            .iter()
            .all(|d| known(d) == Decision::ContinueBaseline)
    );
    assert_eq!(known(&decisions[7]), Decision::StopMaxRounds);
    assert_eq!(last_session(&changes).num_rounds, Some(8));
}

#[test]
fn e_token_budget_fires_before_max_rounds() {
    let mut debate = run("budget_safety", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let last = decisions(&changes).pop().unwrap();
    assert_eq!(known(&last), Decision::StopSafety);
    assert!(last.round_index < 8);
    let (used, budget) = (
        last.signals.tokens_used.unwrap(),
        last.signals.token_budget.unwrap(),
    );
    assert!(used as f64 > 0.8 * budget as f64);
    let session = last_session(&changes);
    assert_eq!(session.num_rounds, Some(last.round_index));
    assert!(session.tokens_used == used);
}

fn signals(similarity: Option<f64>, verdict: &str, split: bool, new_claims: u32) -> RoundSignals {
    RoundSignals {
        similarity,
        verdict: Some(verdict.to_owned()),
        verdict_split: split,
        new_claims,
        open_disputes: None,
        ..RoundSignals::default()
    }
}

struct Case {
    round: u32,
    current: RoundSignals,
    previous: Option<RoundSignals>,
    tokens_used: u64,
    format_check: Option<Convergence>,
    used: Vec<String>,
}

impl Case {
    fn at(round: u32, current: RoundSignals, previous: RoundSignals) -> Case {
        Case {
            round,
            current,
            previous: Some(previous),
            tokens_used: 1_000,
            format_check: None,
            used: vec!["theorist".into(), "skeptic".into()],
        }
    }

    fn decide(&self, config: &ControllerConfig) -> (Decision, gavel::domain::Signals) {
        let roster: Vec<String> = ["theorist", "skeptic", "ethicist"]
            .map(String::from)
            .to_vec();
        let outcome = should_continue(
            &ControllerState {
                round: self.round,
                current: &self.current,
                previous: self.previous.as_ref(),
                format_check: self.format_check.as_ref(),
                min_rounds: 2,
                max_rounds: 8,
                tokens_used: self.tokens_used,
                token_budget: 10_000,
                roster: &roster,
                used_personas: &self.used,
            },
            config,
        );
        (outcome.decision, outcome.signals)
    }
}

#[test]
fn convergence_needs_all_three_signals_at_their_thresholds() {
    let config = ControllerConfig::default();
    let prev = signals(Some(0.5), "approve", false, 3);
    let converged = Case::at(3, signals(Some(0.9), "approve", false, 0), prev.clone());
    assert_eq!(converged.decide(&config).0, Decision::StopConverged);

    let dissimilar = Case::at(3, signals(Some(0.899), "approve", false, 0), prev.clone());
    assert_eq!(dissimilar.decide(&config).0, Decision::ContinueBaseline);

    let verdict_moved = Case::at(3, signals(Some(0.95), "reject", false, 0), prev.clone());
    assert_eq!(verdict_moved.decide(&config).0, Decision::ContinueBaseline);

    let one_new_claim = Case::at(3, signals(Some(0.95), "approve", false, 1), prev);
    assert_eq!(one_new_claim.decide(&config).0, Decision::ContinueBaseline);
}

#[test]
fn thresholds_come_from_configuration() {
    let config = ControllerConfig {
        similarity_threshold: 0.8,
        novelty_threshold: 2,
        ..ControllerConfig::default()
    };
    let case = Case::at(
        3,
        signals(Some(0.85), "approve", false, 1),
        signals(Some(0.5), "approve", false, 4),
    );
    let (decision, signals) = case.decide(&config);
    assert_eq!(decision, Decision::StopConverged);
    assert_eq!(signals.similarity_threshold, Some(0.8));
    assert_eq!(signals.novelty_threshold, Some(2));
}

#[test]
fn min_rounds_floor_is_two_even_if_a_session_asks_for_one() {
    let config = ControllerConfig::default();
    let mut case = Case::at(
        1,
        signals(Some(0.99), "approve", false, 0),
        signals(None, "approve", false, 0),
    );
    case.round = 1;
    let (decision, signals) = case.decide(&config);
    assert_eq!(decision, Decision::ContinueBaseline);
    assert!(
        signals
            .reasons
            .last()
            .unwrap()
            .contains("convergence signals met, but too early")
    );
}

#[test]
fn safety_fires_above_the_budget_fraction_only() {
    let config = ControllerConfig::default();
    let mut case = Case::at(
        2,
        signals(Some(0.2), "a", false, 5),
        signals(None, "b", false, 5),
    );
    case.tokens_used = 8_000;
    assert_eq!(
        case.decide(&config).0,
        Decision::ContinueBaseline,
        "exactly 80% is not more than 80%"
    );
    case.tokens_used = 8_001;
    assert_eq!(case.decide(&config).0, Decision::StopSafety);
    case.round = 1;
    assert_eq!(
        case.decide(&config).0,
        Decision::StopSafety,
        "the budget overrides min_rounds"
    );
    case.round = 8;
    assert_eq!(
        case.decide(&config).0,
        Decision::StopMaxRounds,
        "at max_rounds the bound is the reason"
    );
}

#[test]
fn stable_disagreement_picks_an_unused_persona_or_continues() {
    let config = ControllerConfig::default();
    let mut case = Case::at(
        3,
        signals(Some(0.93), "approve | reject", true, 0),
        signals(Some(0.4), "approve | reject", true, 2),
    );
    let (decision, signals) = case.decide(&config);
    assert_eq!(decision, Decision::EscalateNewPersona);
    assert_eq!(signals.escalate_persona.as_deref(), Some("ethicist"));

    case.used.push("ethicist".into());
    let (decision, signals) = case.decide(&config);
    assert_eq!(decision, Decision::ContinueBaseline);
    assert!(signals.reasons.last().unwrap().contains("already used"));

    case.used.pop();
    case.previous = Some(self::signals(Some(0.4), "approve", false, 2));
    assert_eq!(
        case.decide(&config).0,
        Decision::ContinueBaseline,
        "one split round is not stable disagreement"
    );
}

#[test]
fn an_open_dispute_blocks_convergence() {
    let config = ControllerConfig::default();
    let mut case = Case::at(
        3,
        signals(Some(0.95), "minor revisions", false, 0),
        signals(Some(0.7), "minor revisions", false, 2),
    );
    case.format_check = Some(Convergence {
        converged: false,
        reason: "open DISPUTE/MISSED items: stats_reviewer (1)".into(),
    });
    let (decision, signals) = case.decide(&config);
    assert_eq!(decision, Decision::ContinueBaseline);
    assert!(signals.reasons.iter().any(|r| r.contains("stats_reviewer")));
}

#[test]
fn max_rounds_per_debate_type() {
    let mut config = ControllerConfig::default();
    config.max_rounds_by_type.insert("panel".into(), 6);
    assert_eq!(config.max_rounds_for("panel"), 6);
    assert_eq!(config.max_rounds_for("standard"), 8);
    config.max_rounds_by_type.insert("quick".into(), 1);
    assert!(
        config
            .validate()
            .unwrap_err()
            .contains("max_rounds_by_type.quick")
    );
}

#[test]
fn every_signal_key_is_written() {
    let case = Case::at(
        3,
        signals(Some(0.5), "a", false, 2),
        signals(Some(0.4), "a", false, 2),
    );
    let (_, signals) = case.decide(&ControllerConfig::default());
    let json = serde_json::to_value(&signals).unwrap();
    for key in [
        "similarity",
        "similarity_threshold",
        "verdict",
        "previous_verdict",
        "verdict_stable",
        "verdict_split",
        "new_claims",
        "novelty_threshold",
        "open_disputes",
        "tokens_used",
        "token_budget",
        "escalate_persona",
        "reasons",
    ] {
        assert!(json.get(key).is_some(), "signal_json lacks {key}: {json}");
    }
}
