//! The simulator honours each controller mode, the judge's rulings and operator actions.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{decisions, known, last_session, play, run, turns};
use gavel::config::{Config, SimulatorConfig};
use gavel::domain::{
    ActionKind, Change, ControllerMode, Decision, JudgeDecision, OperatorAction, Reported,
    SessionStatus, TIMEOUT_OPERATOR,
};
use gavel::simulate::{DebateRun, Ids, MemoryStage, Playback};
use gavel::store::MemoryStore;
use tokio::sync::watch;

fn action(
    run: &DebateRun,
    round: u32,
    kind: ActionKind,
    decision: Decision,
    persona: Option<&str>,
) -> OperatorAction {
    action_on(&run.session().id, round, kind, decision, persona)
}

fn action_on(
    session_id: &str,
    round: u32,
    kind: ActionKind,
    decision: Decision,
    persona: Option<&str>,
) -> OperatorAction {
    OperatorAction {
        session_id: session_id.to_owned(),
        round_index: round,
        action: kind.into(),
        decision: decision.into(),
        persona: persona.map(str::to_owned),
        operator: "alice".into(),
        role: None,
        note: None,
        created_at: None,
        issues: Vec::new(),
    }
}

#[test]
fn gated_waits_for_the_operator_after_every_decision() {
    let mut debate = run("gated_converges_round3", ControllerMode::Gated);
    let changes = play(&mut debate, 5);
    assert_eq!(decisions(&changes).len(), 1);
    assert_eq!(debate.awaiting(), Some(1));
    assert!(
        debate.play_round().is_empty(),
        "no round plays while waiting"
    );

    let accept = action(
        &debate,
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline,
        None,
    );
    assert!(debate.resolve(&accept).is_empty());
    assert_eq!(debate.awaiting(), None);
    assert!(debate.resolve(&accept).is_empty(), "a round resolves once");
    let round2 = debate.play_round();
    assert_eq!(decisions(&round2)[0].round_index, 2);
    assert_eq!(debate.awaiting(), Some(2));
}

#[test]
fn a_gated_override_to_stop_ends_the_debate_at_once() {
    let mut debate = run("gated_converges_round3", ControllerMode::Gated);
    play(&mut debate, 1);
    let stop = action(&debate, 1, ActionKind::Override, Decision::StopSafety, None);
    let changes = debate.resolve(&stop);
    let session = last_session(&changes);
    assert_eq!(session.status.known(), Some(SessionStatus::Completed));
    assert_eq!(session.num_rounds, Some(1));
    assert!(debate.is_finished());
}

#[test]
fn the_gated_timeout_records_the_controllers_decision_by_operator_timeout() {
    let mut debate = run("gated_converges_round3", ControllerMode::Gated);
    play(&mut debate, 1);
    let timeout = debate.timeout_action().expect("waiting");
    assert_eq!(timeout.operator, TIMEOUT_OPERATOR);
    assert_eq!(timeout.action, Reported::Known(ActionKind::Accept));
    assert_eq!(
        timeout.decision,
        Reported::Known(Decision::ContinueBaseline)
    );
    debate.resolve(&timeout);
    assert!(debate.timeout_action().is_none());
}

#[test]
fn shadow_records_counterfactuals_while_the_fixed_loop_runs_on() {
    let mut debate = run("gated_converges_round3", ControllerMode::Shadow);
    let changes = play(&mut debate, 20);
    let kinds: Vec<Decision> = decisions(&changes).iter().map(known).collect();
    assert_eq!(kinds.len(), 5, "all recorded rounds are played");
    assert_eq!(
        kinds[2],
        Decision::StopConverged,
        "the controller would have stopped at 3"
    );
    assert_eq!(last_session(&changes).num_rounds, Some(5));
}

#[test]
fn a_shadow_override_applies_at_the_next_round_boundary() {
    let mut debate = run("never_converges", ControllerMode::Shadow);
    play(&mut debate, 3);
    let stop = action(
        &debate,
        3,
        ActionKind::Override,
        Decision::StopConverged,
        None,
    );
    assert!(
        debate.resolve(&stop).is_empty(),
        "nothing happens until the boundary"
    );
    let changes = debate.play_round();
    assert_eq!(
        changes.len(),
        1,
        "the boundary stops the debate before round 4"
    );
    assert_eq!(last_session(&changes).num_rounds, Some(3));
}

#[test]
fn a_shadow_accept_is_only_a_label() {
    let mut debate = run("never_converges", ControllerMode::Shadow);
    play(&mut debate, 2);
    let accept = action(
        &debate,
        2,
        ActionKind::Accept,
        Decision::ContinueBaseline,
        None,
    );
    debate.resolve(&accept);
    let changes = debate.play_round();
    assert_eq!(decisions(&changes)[0].round_index, 3);
}

#[test]
fn an_operator_escalation_brings_the_chosen_persona_in_at_the_next_round() {
    let mut debate = run("escalation_new_persona", ControllerMode::Shadow);
    let changes = play(&mut debate, 3);
    assert!(
        turns(&changes)
            .iter()
            .all(|t| t.agent_persona != "biostatistician")
    );
    let escalate = action(
        &debate,
        3,
        ActionKind::Escalate,
        Decision::EscalateNewPersona,
        Some("biostatistician"),
    );
    debate.resolve(&escalate);
    let round4 = turns(&debate.play_round());
    assert!(round4.iter().any(|t| t.agent_persona == "biostatistician"));
}

#[test]
fn a_persona_without_recorded_turns_joins_silently() {
    let mut debate = run("escalation_new_persona", ControllerMode::Gated);
    play(&mut debate, 1);
    let escalate = action(
        &debate,
        1,
        ActionKind::Escalate,
        Decision::EscalateNewPersona,
        Some("ethicist"),
    );
    debate.resolve(&escalate);
    let round2 = turns(&debate.play_round());
    assert_eq!(
        round2.len(),
        4,
        "the recording has no ethicist turn; the others speak"
    );
    assert_eq!(debate.awaiting(), Some(2));
}

#[test]
fn actions_for_other_rounds_or_debates_are_ignored() {
    let mut debate = run("gated_converges_round3", ControllerMode::Gated);
    play(&mut debate, 1);
    let mut stale = action(&debate, 7, ActionKind::Override, Decision::StopSafety, None);
    assert!(debate.resolve(&stale).is_empty());
    stale.round_index = 1;
    stale.session_id = "another-debate".into();
    assert!(debate.resolve(&stale).is_empty());
    assert_eq!(debate.awaiting(), Some(1));
}

#[test]
fn off_mode_plays_the_fixed_loop_without_decisions() {
    let mut debate = run("gated_converges_round3", ControllerMode::Off);
    let changes = play(&mut debate, 20);
    assert!(decisions(&changes).is_empty());
    assert_eq!(last_session(&changes).num_rounds, Some(5));
}

fn rulings(changes: &[Change]) -> Vec<(u32, String, JudgeDecision)> {
    changes
        .iter()
        .filter_map(|c| match c {
            Change::Judgment(j) => {
                Some((j.round_index, j.agent_persona.clone(), j.decision.known()?))
            }
            _ => None,
        })
        .filter(|(_, _, d)| *d != JudgeDecision::Continue)
        .collect()
}

#[test]
fn judge_warn_then_halt_replace_then_abort_on_an_unverified_pmid() {
    let mut debate = run("judge_interventions", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    assert_eq!(
        rulings(&changes),
        [
            (1, "skeptic".to_owned(), JudgeDecision::Warn),
            (2, "domain_expert".to_owned(), JudgeDecision::HaltReplace),
            (3, "theorist".to_owned(), JudgeDecision::Abort),
        ]
    );
    let turns = turns(&changes);
    let skeptic2 = turns
        .iter()
        .find(|t| t.round_number == 2 && t.agent_persona == "skeptic")
        .unwrap();
    assert!(
        skeptic2
            .metadata
            .judge_warning
            .as_deref()
            .unwrap()
            .contains("judge warned")
    );
    let skeptic3 = turns
        .iter()
        .find(|t| t.round_number == 3 && t.agent_persona == "skeptic");
    assert!(
        skeptic3.is_none(),
        "the debate aborted at the theorist's turn"
    );
    let halted = turns
        .iter()
        .find(|t| t.round_number == 2 && t.agent_persona == "domain_expert")
        .unwrap();
    assert!(halted.superseded);
    let replacement = turns
        .iter()
        .find(|t| t.round_number == 2 && t.agent_persona == "oncologist")
        .unwrap();
    assert_eq!(
        replacement.metadata.replaces.as_deref(),
        Some("domain_expert")
    );
    assert!(!replacement.superseded);
    let session = last_session(&changes);
    assert_eq!(session.status.known(), Some(SessionStatus::Aborted));
    assert_eq!(session.num_rounds, Some(3));
    let round2 = decisions(&changes)
        .into_iter()
        .find(|d| d.round_index == 2)
        .unwrap();
    assert!(
        round2.signals.verdict.unwrap().contains("uncertain"),
        "signals skip the superseded turn"
    );
}

#[test]
fn the_panel_debate_plays_parallel_takes_by_aspect() {
    let mut debate = run("panel_wastewater", ControllerMode::Shadow);
    let changes = play(&mut debate, 20);
    let turns = turns(&changes);
    assert_eq!(
        turns.iter().filter(|t| t.round_number == 2).count(),
        4,
        "four parallel takes"
    );
    let aspects: Vec<_> = (2..=4)
        .map(|r| {
            turns
                .iter()
                .find(|t| t.round_number == r)
                .unwrap()
                .metadata
                .aspect
                .clone()
                .unwrap()
        })
        .collect();
    assert_eq!(aspects, ["privacy", "efficacy", "equity"]);
    let first = turns.first().unwrap().metadata.phase.clone();
    let last = turns.last().unwrap().metadata.phase.clone();
    assert_eq!(first.unwrap().to_string(), "opening");
    assert_eq!(last.unwrap().to_string(), "closing");
}

#[test]
fn the_review_debate_converges_once_disputes_close() {
    let mut debate = run("review_disputes", ControllerMode::Enabled);
    let changes = play(&mut debate, 20);
    let decisions = decisions(&changes);
    let disputes: Vec<_> = decisions.iter().map(|d| d.signals.open_disputes).collect();
    assert_eq!(disputes, [Some(8), Some(2), Some(1), Some(0)]);
    assert_eq!(known(&decisions[3]), Decision::StopConverged);
}

#[test]
fn the_memory_store_resolves_a_decision_once_and_catches_subscribers_up() {
    let store = MemoryStore::new();
    let debate = run("gated_converges_round3", ControllerMode::Gated);
    let first = action(
        &debate,
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline,
        None,
    );
    let mut second = action(&debate, 1, ActionKind::Override, Decision::StopSafety, None);
    second.operator = "bob".into();
    assert!(store.resolve(first).is_ok());
    let lost = store.resolve(second).unwrap_err();
    let gavel::store::ResolveError::AlreadyResolved(existing) = &lost else {
        panic!("expected a lost race, got {lost:?}");
    };
    assert_eq!(existing.operator, "alice");
    assert!(lost.to_string().contains("already resolved by alice"));
    let mut late = store.subscribe();
    match late.try_recv().unwrap() {
        Change::Action(a) => assert_eq!(a.operator, "alice"),
        other => panic!("expected the recorded action, got {other:?}"),
    }
}

fn fast_pace(timeout: f64) -> SimulatorConfig {
    SimulatorConfig {
        round_interval_secs: 1.0,
        turn_interval_secs: 0.1,
        gated_timeout_secs: timeout,
    }
}

#[tokio::test(start_paused = true)]
async fn a_driven_gated_debate_times_out_to_the_controllers_decisions() {
    let store = MemoryStore::new();
    let mut rows = store.subscribe();
    let (_playback, clock) = watch::channel(Playback::default());
    let fixture = common::fixture("gated_converges_round3");
    let debate = DebateRun::new(fixture, Arc::new(Config::default()), Ids::default());
    let stage = MemoryStage::new(store.clone(), &debate.session().id);
    gavel::simulate::play(
        vec![(debate, stage)],
        clock,
        fast_pace(5.0),
        gavel::progress::Progress::none(),
    )
    .await
    .unwrap();
    let mut changes = Vec::new();
    while let Ok(change) = rows.try_recv() {
        changes.push(change);
    }
    let timeouts: Vec<_> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Action(a) => Some((a.round_index, a.operator.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        timeouts,
        [
            (1, "timeout".into()),
            (2, "timeout".into()),
            (3, "timeout".into())
        ]
    );
    assert_eq!(last_session(&changes).num_rounds, Some(3));
}

#[tokio::test(start_paused = true)]
async fn a_driven_gated_debate_follows_the_operator_and_pauses() {
    let store = MemoryStore::new();
    let (playback, clock) = watch::channel(Playback::default());
    let fixture = common::fixture("gated_converges_round3");
    let id = fixture.session.id.clone();
    let debate = DebateRun::new(fixture, Arc::new(Config::default()), Ids::default());
    let stage = MemoryStage::new(store.clone(), &debate.session().id);
    let task = tokio::spawn(gavel::simulate::play(
        vec![(debate, stage)],
        clock,
        fast_pace(3600.0),
        gavel::progress::Progress::none(),
    ));

    let mut rows = store.subscribe();
    let waiting_on = |rows: &mut tokio::sync::mpsc::UnboundedReceiver<Change>| {
        let mut last = None;
        while let Ok(change) = rows.try_recv() {
            if let Change::Decision(d) = change {
                last = Some(d.round_index);
            }
        }
        last
    };
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(waiting_on(&mut rows), Some(1));

    playback.send_replace(Playback {
        paused: true,
        speed: 1.0,
    });
    let accept = action_on(&id, 1, ActionKind::Accept, Decision::ContinueBaseline, None);
    store.resolve(accept).unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(waiting_on(&mut rows), None, "paused: round 2 does not play");

    playback.send_replace(Playback {
        paused: false,
        speed: 4.0,
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(waiting_on(&mut rows), Some(2));

    let stop = action_on(&id, 2, ActionKind::Override, Decision::StopConverged, None);
    store.resolve(stop).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the debate ends after the stop")
        .unwrap()
        .expect("the stage never failed");
}

/// On a multi-threaded runtime, where drivers race each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_lists_debates_in_the_order_given() {
    let fixtures = gavel::simulate::Fixture::bundled().unwrap();
    let expected: Vec<String> = fixtures.iter().map(|f| f.session.id.clone()).collect();
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let _commands = gavel::console::backend::demo::start(
        fixtures,
        Arc::new(Config::default()),
        events,
        gavel::simulate::TimeSource::system(),
    );
    let mut seen: Vec<String> = Vec::new();
    while seen.len() < expected.len() {
        let event = tokio::time::timeout(Duration::from_secs(5), received.recv())
            .await
            .expect("every session row arrives");
        if let Some(gavel::console::app::Event::Store(change)) = event
            && let Change::Session(s) = *change
            && !seen.contains(&s.id)
        {
            seen.push(s.id);
        }
    }
    assert_eq!(seen, expected);
}

#[test]
fn a_run_stamps_its_rows_with_the_time_source_it_is_given() {
    let start = chrono::DateTime::parse_from_rfc3339("2026-01-05T09:00:00Z")
        .unwrap()
        .to_utc();
    let ticks = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let time = gavel::simulate::TimeSource::new(move || {
        start + chrono::Duration::seconds(ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    });
    let mut run = run("judge_interventions", ControllerMode::Enabled).with_time(time);
    let changes = play(&mut run, 20);
    assert!(run.is_finished());
    // Each row is stamped once, when first written; a row written again keeps its stamp.
    let mut stamps = vec![run.session().created_at];
    for change in &changes {
        let stamp = match change {
            Change::Session(_) => continue,
            Change::Turn(t) => t.created_at,
            Change::Decision(d) => d.decided_at,
            Change::Judgment(j) => j.created_at,
            Change::Action(a) => a.created_at,
            Change::Note(n) => n.created_at,
        };
        if !stamps.contains(&stamp) {
            stamps.push(stamp);
        }
    }
    stamps.push(run.session().finished_at);
    let expected: Vec<_> = (0..stamps.len() as i64)
        .map(|n| Some(start + chrono::Duration::seconds(n)))
        .collect();
    assert_eq!(stamps, expected);
}
