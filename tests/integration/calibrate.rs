//! Calibration on debates whose answer is known by construction: tests/data/calibration holds a
//! debate whose round 3 repeats round 2 (it converges at round 3 of 6, turns cost 100 x round
//! tokens each) and one that also changes its verdict in round 5. Also grids, labels, the
//! frontier, recorded signals against recomputed ones, and unreadable rows.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use gavel::calibrate::{
    self, AxisSpec, Class, DebateOutcome, RecordedDebate, Report, Row, Setting,
};
use gavel::config::Config;
use gavel::console::app::{Event, Watched};
use gavel::console::reports::ReportsWorker;
use gavel::domain::{
    ControllerDecision, Debate, Decision, Reported, SessionStatus, Signals, Turn, TurnMetadata,
};
use gavel::policy::ControllerConfig;
use gavel::simulate::{Fixture, play_in_shadow};

fn recorded(names: &[&str]) -> Vec<RecordedDebate> {
    let fixtures: Vec<Fixture> = names
        .iter()
        .map(|n| Fixture::load(Path::new(&format!("tests/data/calibration/{n}.jsonl"))).unwrap())
        .collect();
    calibrate::from_recordings(
        &fixtures,
        |f| play_in_shadow(f, Arc::new(Config::default())),
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
        &gavel::progress::Progress::none(),
    )
}

fn grid(specs: &[&str]) -> Vec<AxisSpec> {
    specs.iter().map(|s| s.parse().unwrap()).collect()
}

fn report(records: &[RecordedDebate], specs: &[&str]) -> Report {
    let base = ControllerConfig::default();
    let current = Setting::current(&base);
    let (settings, skipped) = calibrate::settings(&grid(specs), &current).unwrap();
    Report::run(records, settings, skipped, &current, &base, true)
}

fn row(report: &Report, similarity: f64, novelty: u32) -> &Row {
    report
        .rows
        .iter()
        .find(|r| {
            (r.setting.similarity_threshold - similarity).abs() < 1e-9
                && r.setting.novelty_threshold == novelty
        })
        .unwrap_or_else(|| panic!("no row for {similarity}/{novelty}"))
}

fn outcome<'a>(row: &'a Row, id: &str) -> &'a DebateOutcome {
    row.outcomes
        .as_ref()
        .unwrap()
        .iter()
        .find(|o| o.session_id == id)
        .unwrap()
}

/// Tokens of rounds `from..` of a fixture, counted from its turn lines.
fn tokens_from(name: &str, from: u32) -> u64 {
    let fixture =
        Fixture::load(Path::new(&format!("tests/data/calibration/{name}.jsonl"))).unwrap();
    fixture
        .turns
        .iter()
        .filter(|t| t.round >= from)
        .map(|t| u64::from(t.tokens))
        .sum()
}

#[test]
fn a_debate_converging_at_round_3_saves_exactly_rounds_4_to_n_and_flips_nothing() {
    let report = report(&recorded(&["converges_round3"]), &["similarity=0.9"]);
    let row = row(&report, 0.9, 1);
    let o = outcome(row, "salt-converges-r3");
    assert_eq!((o.rounds_used, o.rounds_run), (3, 6));
    assert_eq!(o.stop, Some(Decision::StopConverged));
    assert_eq!(o.tokens_saved, tokens_from("converges_round3", 4));
    assert_eq!(o.tokens_saved, 2 * (400 + 500 + 600));
    assert_eq!(o.tokens_run, 2 * (100 + 200 + 300 + 400 + 500 + 600));
    assert!(!o.verdict_flip);
    assert_eq!(row.verdict_flips, 0);
    assert_eq!(row.stops.converged, 1);
    assert!((row.tokens_saved_share - 3000.0 / 4200.0).abs() < 1e-9);
}

#[test]
fn a_verdict_that_changes_in_round_5_flips_when_the_controller_stops_at_3() {
    let report = report(&recorded(&["verdict_changes_round5"]), &["similarity=0.9"]);
    let o = outcome(row(&report, 0.9, 1), "salt-verdict-r5");
    assert_eq!(o.rounds_used, 3);
    assert!(o.verdict_flip);
    assert_eq!(
        o.verdict_at_stop.as_deref(),
        Some("clear benefit for hypertensives")
    );
    assert_eq!(
        o.verdict_at_end.as_deref(),
        Some("benefit only without kidney disease")
    );
}

#[test]
fn a_setting_that_never_stops_saves_nothing_and_flips_nothing() {
    // Fewer than 0 new claims never holds: nothing converges, both debates run to their end.
    let records = recorded(&["converges_round3", "verdict_changes_round5"]);
    let report = report(&records, &["similarity=0.9", "novelty=0,1"]);
    let never = row(&report, 0.9, 0);
    assert_eq!(never.tokens_saved, 0);
    assert_eq!(never.verdict_flips, 0);
    assert_eq!(never.stops.none, 2);
    assert!((never.mean_rounds_used - 6.0).abs() < 1e-9);
    let current = row(&report, 0.9, 1);
    assert_eq!(current.tokens_saved, 6000);
    assert_eq!(current.verdict_flips, 1);
    assert!((current.verdict_flip_share - 0.5).abs() < 1e-9);
    // Neither dominates the other: more saved costs a flip.
    assert!(never.frontier && current.frontier);
    assert!(current.current && !never.current);
}

#[test]
fn operator_labels_count_agreement_by_kind_of_decision() {
    // Round 2 accepted (the controller continued), round 3's stop overridden to continue.
    let records = recorded(&["converges_round3"]);
    assert_eq!(records[0].labels.len(), 2);
    assert!(records[0].labels.iter().all(|l| l.class == Class::Continue));
    let report = report(&records, &["similarity=0.9", "novelty=0,1"]);
    let stops_at_3 = row(&report, 0.9, 1);
    assert_eq!((stops_at_3.labels_agreed, stops_at_3.labels), (1, 2));
    assert_eq!(stops_at_3.agreement, Some(0.5));
    let never = row(&report, 0.9, 0);
    assert_eq!(never.agreement, Some(1.0));
    assert!(report.table().contains("1/2 (50%)"));
}

#[test]
fn the_bundled_gated_debate_saves_its_rounds_after_3_at_the_setting_in_force() {
    let fixture = common::fixture("gated_converges_round3");
    let records = calibrate::from_recordings(
        std::slice::from_ref(&fixture),
        |f| play_in_shadow(f, Arc::new(Config::default())),
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
        &gavel::progress::Progress::none(),
    );
    let report = report(&records, &["similarity=0.9"]);
    let o = outcome(row(&report, 0.9, 1), "fasting-insulin-0412");
    let after_3: u64 = fixture
        .turns
        .iter()
        .filter(|t| t.round > 3)
        .map(|t| u64::from(t.tokens))
        .sum();
    assert_eq!(o.rounds_used, 3);
    assert_eq!(o.tokens_saved, after_3);
    assert!(!o.verdict_flip);
}

#[test]
fn grids_expand_to_every_combination_and_leave_out_impossible_bounds() {
    let spec: AxisSpec = "similarity=0.80:0.95:0.05".parse().unwrap();
    assert_eq!(spec.values, vec![0.8, 0.85, 0.9, 0.95]);
    let current = Setting::current(&ControllerConfig::default());
    let (settings, skipped) = calibrate::settings(
        &grid(&["similarity=0.80:0.95:0.05", "novelty=0,1,2"]),
        &current,
    )
    .unwrap();
    assert_eq!((settings.len(), skipped), (12, 0));
    assert!(
        settings
            .iter()
            .all(|s| s.budget_fraction == 0.8 && s.max_rounds.is_none())
    );
    let (settings, skipped) =
        calibrate::settings(&grid(&["min_rounds=2:5:1", "max_rounds=3,4"]), &current).unwrap();
    assert_eq!((settings.len(), skipped), (5, 3));
    assert!(settings.iter().all(|s| s.min_rounds <= s.max_rounds));
    // The long configuration names are accepted too.
    assert_eq!(
        "budget_fraction=0.5".parse::<AxisSpec>().unwrap().values,
        vec![0.5]
    );
}

#[test]
fn bad_grids_say_what_is_wrong() {
    for (spec, why) in [
        (
            "simlarity=0.9",
            "unknown axis \"simlarity\" (one of similarity, novelty, min_rounds, max_rounds, \
             budget)",
        ),
        (
            "similarity",
            "expected axis=values, e.g. similarity=0.80:0.95:0.05",
        ),
        ("similarity=0.9:0.8:0.05", "the range ends before it starts"),
        ("similarity=0.8:0.9:0", "the step must be positive"),
        ("similarity=1.5", "similarity 1.5 is outside 0..1"),
        ("novelty=1.5", "novelty 1.5 must be a whole number 0..1000"),
        ("max_rounds=0", "max_rounds must be at least 1"),
        ("budget=x", "\"x\" is not a number"),
    ] {
        assert_eq!(
            spec.parse::<AxisSpec>().unwrap_err(),
            format!("{spec:?}: {why}")
        );
    }
    let current = Setting::current(&ControllerConfig::default());
    let twice = calibrate::settings(&grid(&["novelty=1", "novelty=2"]), &current).unwrap_err();
    assert!(twice.contains("novelty twice"));
    let huge = calibrate::settings(&grid(&["similarity=0:1:0.001", "novelty=0:20:1"]), &current)
        .unwrap_err();
    assert!(huge.contains("21021 settings"), "{huge}");
}

#[test]
fn the_setting_in_force_is_added_when_the_grid_lacks_it() {
    let records = recorded(&["converges_round3"]);
    let report = report(&records, &["similarity=0.8,0.85"]);
    assert_eq!(report.rows.len(), 3);
    let current: Vec<&Row> = report.rows.iter().filter(|r| r.current).collect();
    assert_eq!(current.len(), 1);
    assert!(
        current[0]
            .setting
            .same_as(&Setting::current(&ControllerConfig::default()))
    );
}

/// A finished two-round debate whose decisions carry recorded signals.
fn with_recorded_signals(similarity: f64) -> Debate {
    let mut debate = Debate::new("recorded");
    let mut session = gavel::domain::Session::placeholder("recorded");
    session.status = SessionStatus::Completed.into();
    session.min_rounds = 1;
    session.max_rounds = 8;
    session.token_budget = 100_000;
    session.personas = vec!["a".into(), "b".into()];
    debate.apply(gavel::domain::Change::Session(session));
    for round in 1..=3u32 {
        debate.apply(gavel::domain::Change::Turn(Turn {
            id: u64::from(round),
            session_id: "recorded".into(),
            round_number: round,
            agent_persona: "a".into(),
            // Different every round: measured from text, nothing converges.
            content: format!("Round {round} brings claim number {round} about topic {round}.\n\nVERDICT: v{round}"),
            tokens_used: 1000,
            superseded: false,
            metadata: TurnMetadata::default(),
            created_at: None,
            issues: Vec::new(),
        }));
        debate.apply(gavel::domain::Change::Decision(ControllerDecision {
            session_id: "recorded".into(),
            round_index: round,
            decision: Reported::Known(Decision::ContinueBaseline),
            signals: Signals {
                similarity: (round > 1).then_some(similarity),
                verdict: Some("same".into()),
                verdict_split: Some(false),
                new_claims: Some(0),
                ..Signals::default()
            },
            decided_at: None,
            issues: Vec::new(),
        }));
    }
    debate
}

#[test]
fn recorded_signals_win_over_the_text() {
    let debate = with_recorded_signals(0.97);
    let record = RecordedDebate::from_debate(
        &debate,
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    );
    assert_eq!(record.rounds[1].signals.similarity, Some(0.97));
    assert_eq!(record.rounds[1].signals.verdict.as_deref(), Some("same"));
    let report = report(&[record], &["similarity=0.95,0.99"]);
    assert_eq!(outcome(row(&report, 0.95, 1), "recorded").rounds_used, 2);
    assert_eq!(outcome(row(&report, 0.99, 1), "recorded").rounds_used, 3);
}

#[test]
fn without_recorded_signals_the_text_is_measured() {
    let mut debate = with_recorded_signals(0.97);
    debate.decisions.clear();
    let record = RecordedDebate::from_debate(
        &debate,
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    );
    assert_eq!(record.rounds[2].signals.verdict.as_deref(), Some("v3"));
    assert!(record.rounds[1].signals.similarity.unwrap() < 0.9);
    assert!(record.issues.is_empty());
}

#[test]
fn a_round_with_neither_signals_nor_turns_is_reported_and_never_converges() {
    let mut debate = with_recorded_signals(0.97);
    debate.turns.clear();
    debate.decisions.get_mut(&2).unwrap().signals = Signals::default();
    let record = RecordedDebate::from_debate(
        &debate,
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    );
    assert_eq!(record.issues.len(), 1);
    assert!(
        record.issues[0].starts_with("debate_round_decisions (recorded, round 2)"),
        "{}",
        record.issues[0]
    );
    let report = report(&[record], &["similarity=0.9"]);
    // Round 2 cannot converge; round 3 (recorded, 0.97) can.
    assert_eq!(outcome(row(&report, 0.9, 1), "recorded").rounds_used, 3);
}

#[test]
fn the_console_reports_follow_debates_as_they_finish() {
    let reports = ReportsWorker::of(&Config::default());
    let mut debate = with_recorded_signals(0.97);
    debate.session.status = SessionStatus::Running.into();
    reports.hand_over(debate_rows(&debate));
    let figures = reports.caught_up();
    assert!(figures.problem.is_none());
    assert_eq!(
        figures.calibration.debates, 0,
        "a running debate is not calibrated"
    );
    debate.session.status = SessionStatus::Completed.into();
    reports.hand_over(vec![gavel::domain::Change::Session(debate.session.clone())]);
    let figures = reports.caught_up();
    assert_eq!(figures.calibration.debates, 1);
    assert_eq!(figures.calibration.rows.len(), 12);
    assert!(!figures.refreshing);
}

#[test]
fn the_console_reports_refresh_only_the_report_watched() {
    let mut reports = ReportsWorker::of(&Config::default());
    let (events, mut woken) = tokio::sync::mpsc::unbounded_channel();
    reports.wake(events);
    reports.watch(Some(Watched::Calibration));
    let debate = with_recorded_signals(0.97);
    reports.hand_over(debate_rows(&debate));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // The console is woken with the figures, as they change, until the debate is in them.
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no refresh within 10 s"
        );
        match woken.try_recv() {
            Ok(Event::Reports(figures)) if figures.calibration.debates == 1 => break,
            Ok(_) => {}
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
}

fn debate_rows(debate: &Debate) -> Vec<gavel::domain::Change> {
    use gavel::domain::Change;
    std::iter::once(Change::Session(debate.session.clone()))
        .chain(debate.turns.iter().cloned().map(Change::Turn))
        .chain(debate.decisions.values().cloned().map(Change::Decision))
        .collect()
}

#[test]
fn the_console_reports_hold_the_rows_of_the_most_active_running_debates_only() {
    use gavel::console::app::RUNNING_ROWS;
    use gavel::domain::Change;
    let config = Config::default();
    let reports = ReportsWorker::of(&config);
    let template = with_recorded_signals(0.97);
    let rows_of = |id: &str, status: SessionStatus| -> Vec<Change> {
        let mut debate = template.clone();
        debate.session.id = id.to_owned();
        debate.session.status = status.into();
        for turn in &mut debate.turns {
            turn.session_id = id.to_owned();
        }
        for decision in debate.decisions.values_mut() {
            decision.session_id = id.to_owned();
        }
        debate_rows(&debate)
    };
    // One more running debate than are held: the first, least active since, is let go.
    for n in 0..=RUNNING_ROWS {
        reports.hand_over(rows_of(&format!("r{n}"), SessionStatus::Running));
        reports.caught_up();
    }
    for n in [0, RUNNING_ROWS] {
        reports.hand_over(rows_of(&format!("r{n}"), SessionStatus::Completed));
    }
    let figures = reports.caught_up();
    assert_eq!(figures.untracked, 1);
    assert_eq!(
        figures.calibration.debates, 1,
        "the debate let go is left out, not calibrated from part of its rows"
    );
}
