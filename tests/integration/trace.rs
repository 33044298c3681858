//! The controller trace: why each debate stopped where it did, from its rows, for debates played
//! to their end through the simulator with recorded operator actions.

use crate::common;

use std::sync::Arc;

use gavel::audit::Trace;
use gavel::config::Config;
use gavel::domain::{ActionKind, Debates, Decision};
use gavel::simulate::{ActionSpec, DebateRun, Fixture, Ids};

/// Plays `fixture` to its end in its own mode; its action lines resolve gated waits.
fn trace(fixture: Fixture) -> Trace {
    let id = fixture.session.id.clone();
    let mut run = DebateRun::new(fixture, Arc::new(Config::default()), Ids::default());
    let mut rows = run.start();
    for _ in 0..20 {
        if run.is_finished() {
            break;
        }
        rows.extend(run.play_round());
    }
    assert!(run.is_finished(), "{id} did not finish");
    let debates: Debates = rows.into_iter().collect();
    Trace::of(debates.get_by_id(&id).unwrap())
}

fn action(
    round: u32,
    action: ActionKind,
    decision: Option<Decision>,
    operator: &str,
) -> ActionSpec {
    ActionSpec {
        round,
        action,
        decision,
        persona: None,
        operator: operator.into(),
        note: Some(format!("{operator}'s call")),
    }
}

#[test]
fn a_gated_debate_stops_where_the_operator_accepted_the_controllers_stop() {
    let mut fixture = common::fixture("gated_converges_round3");
    for round in 1..=5 {
        fixture
            .actions
            .insert(round, action(round, ActionKind::Accept, None, "alice"));
    }
    let trace = trace(fixture);
    assert_eq!(trace.rounds_run, 3);
    assert_eq!(
        trace.ending,
        "stopped at round 3: stop_converged, decided by the controller, accepted by alice"
    );
    let last = &trace.rounds[2];
    assert_eq!(last.decision.as_deref(), Some("stop_converged"));
    assert_eq!(last.similarity_threshold, Some(0.9));
    assert!(last.similarity.unwrap() >= 0.9);
    assert_eq!(last.verdict_stable, Some(true));
    assert_eq!(last.action.as_ref().unwrap().operator, "alice");
    let text = trace.text();
    assert!(text.contains("accept stop_converged by alice"), "{text}");
    assert!(text.contains("operator note: alice's call"), "{text}");
}

#[test]
fn a_shadow_debate_runs_its_fixed_loop_whatever_the_controller_says() {
    let trace = trace(common::fixture("never_converges"));
    assert_eq!(trace.rounds_run, 8);
    assert!(
        trace
            .ending
            .starts_with("stopped at round 8: the fixed loop reached max_rounds 8"),
        "{}",
        trace.ending
    );
}

#[test]
fn a_shadow_debate_stops_when_an_operator_overrides_to_stop() {
    let mut fixture = common::fixture("shadow_week_salt");
    fixture.actions.insert(
        4,
        action(
            4,
            ActionKind::Override,
            Some(Decision::StopConverged),
            "ben",
        ),
    );
    let trace = trace(fixture);
    assert_eq!(trace.rounds_run, 4);
    assert_eq!(
        trace.ending,
        "stopped at round 4: stop_converged, override by ben (the controller said stop_converged)"
    );
}

#[test]
fn an_aborted_debate_names_the_judges_ruling() {
    let trace = trace(common::fixture("judge_interventions"));
    assert_eq!(trace.status, "aborted");
    assert!(
        trace.ending.starts_with(&format!(
            "stopped at round {}: the judge aborted the debate (",
            trace.rounds_run
        )),
        "{}",
        trace.ending
    );
}

#[test]
fn an_enabled_debate_stops_on_the_controllers_own_decision() {
    let trace = trace(common::fixture("budget_safety"));
    assert!(
        trace
            .ending
            .ends_with("stop_safety, decided by the controller"),
        "{}",
        trace.ending
    );
    let json = serde_json::to_value(&trace).unwrap();
    assert_eq!(json["rounds"][0]["round"], 1);
    assert!(json["rounds"][0]["reasons"].as_array().unwrap().len() >= 3);
}

#[test]
fn a_mark_states_how_the_figure_stands_never_the_test() {
    use gavel::text::{against, under};
    assert_eq!(against(0.97, 0.9), "0.97 ≥ 0.90");
    assert_eq!(against(0.64, 0.9), "0.64 < 0.90");
    assert_eq!(against(0.9, 0.9), "0.90 ≥ 0.90");
    assert_eq!(
        against(0.8999, 0.9),
        "0.8999 < 0.9000",
        "more decimals where two would show them alike"
    );
    assert_eq!(against(0.9 - 1e-12, 0.9), "0.899999999999 < 0.9");
    assert_eq!(against(f64::NAN, 0.9), "NaN vs 0.90");
    assert_eq!(under(0, 1), "0 < 1");
    assert_eq!(under(8, 1), "8 ≥ 1");
    assert_eq!(under(1, 1), "1 ≥ 1");
}
