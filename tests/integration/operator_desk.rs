//! The operator's desk: what waits for the operator against what is advisory, how long a gated
//! decision has left (on the demo's clock and a database's), jumping to the next decision
//! waiting, announcing one, dialogs that close when their decision is settled elsewhere, and
//! columns that tell the truth (spoken order, the worst ruling's lowest score, how a debate
//! ended).

use crate::common;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::rows::{action, decision, ruling, session, turn};
use common::{char, demo_model, flash, screen_at, select};
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Command, Event, Model, Overlay, update, worst_ruling};
use gavel::domain::{
    ActionKind, Change, ControllerMode, Decision, Ending, JudgeDecision, SessionStatus,
    TIMEOUT_OPERATOR,
};

fn store(model: &mut Model, change: Change) -> Vec<Command> {
    update(model, Event::Store(Box::new(change)))
}

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
}

/// A running debate `id` in `mode` with the controller's decision of round 1 pending.
fn pending_in(model: &mut Model, id: &str, mode: ControllerMode) {
    let mut running = session(id, SessionStatus::Running);
    running.controller_mode = mode.into();
    store(model, Change::Session(running));
    store(
        model,
        Change::Decision(decision(id, 1, Decision::ContinueBaseline.into())),
    );
}

fn time_left(model: &Model, id: &str) -> Option<Duration> {
    let summary = model.debates.get(model.debates.seq(id)?)?;
    model.time_left(summary)
}

#[test]
fn the_header_counts_decisions_waiting_apart_from_advisory_ones_and_only_the_latest() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    pending_in(&mut model, "gated-1", ControllerMode::Gated);
    pending_in(&mut model, "shadow-1", ControllerMode::Shadow);
    pending_in(&mut model, "enabled-1", ControllerMode::Enabled);
    // Older unresolved decisions of a shadow debate cannot be acted on: not counted.
    for round in 2..=4 {
        store(
            &mut model,
            Change::Decision(decision(
                "shadow-1",
                round,
                Decision::ContinueBaseline.into(),
            )),
        );
    }
    assert_eq!((model.debates.waiting(), model.debates.advisory()), (1, 2));
    assert!(screen_at(&model, 120, 30).contains(" gavel │ 1 waiting · 2 advisory │ test │"));
    store(
        &mut model,
        Change::Action(action(
            "gated-1",
            1,
            ActionKind::Accept,
            Decision::ContinueBaseline.into(),
        )),
    );
    assert_eq!((model.debates.waiting(), model.debates.advisory()), (0, 2));
}

#[test]
fn a_gated_countdown_runs_on_the_demo_clock_at_the_playback_speed_and_stops_while_paused() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    update(&mut model, Event::Tick(at(0)));
    pending_in(&mut model, "g", ControllerMode::Gated);
    assert_eq!(time_left(&model, "g"), Some(Duration::from_secs(90)));
    update(&mut model, Event::Tick(at(10)));
    assert_eq!(time_left(&model, "g"), Some(Duration::from_secs(80)));
    update(&mut model, char('+'));
    update(&mut model, Event::Tick(at(20)));
    assert_eq!(time_left(&model, "g"), Some(Duration::from_secs(60)), "2x");
    update(&mut model, char(' '));
    update(&mut model, Event::Tick(at(50)));
    assert_eq!(
        time_left(&model, "g"),
        Some(Duration::from_secs(60)),
        "paused"
    );
    update(&mut model, char(' '));
    update(&mut model, Event::Tick(at(80)));
    assert_eq!(time_left(&model, "g"), Some(Duration::ZERO), "ran out");
    assert!(screen_at(&model, 120, 30).contains("● late"));
    // An advisory decision has no countdown.
    pending_in(&mut model, "s", ControllerMode::Shadow);
    assert_eq!(time_left(&model, "s"), None);
}

#[test]
fn a_live_countdown_starts_from_when_the_decision_was_made() {
    let config = Config::parse("[ui]\ngated_timeout_secs = 120", "test").unwrap();
    let mut model = Model::live("live".into(), "alice".into(), &config);
    update(&mut model, Event::Tick(at(1_000)));
    let mut running = session("g", SessionStatus::Running);
    running.controller_mode = ControllerMode::Gated.into();
    store(&mut model, Change::Session(running.clone()));
    let mut made = decision("g", 1, Decision::StopConverged.into());
    made.decided_at = Some(at(970));
    store(&mut model, Change::Decision(made.clone()));
    assert_eq!(time_left(&model, "g"), Some(Duration::from_secs(90)));
    // Pausing a live feed holds rows; the orchestrator's wait runs on.
    update(&mut model, char(' '));
    update(&mut model, Event::Tick(at(1_030)));
    assert_eq!(time_left(&model, "g"), Some(Duration::from_secs(60)));
    // A decision made long before the console started has run out.
    running.id = "old".into();
    made.session_id = "old".into();
    made.decided_at = Some(at(0));
    update(&mut model, char(' '));
    store(&mut model, Change::Session(running));
    store(&mut model, Change::Decision(made));
    assert_eq!(time_left(&model, "old"), Some(Duration::ZERO));
}

#[test]
fn a_tick_draws_only_when_a_countdown_is_on_screen() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    update(&mut model, Event::Resize(120, 30));
    common::record_frame(&mut model);
    pending_in(&mut model, "s", ControllerMode::Shadow);
    model.prepare_frame();
    model.take_dirty();
    update(&mut model, Event::Tick(at(1)));
    assert!(!model.take_dirty(), "nothing counts down");
    pending_in(&mut model, "g", ControllerMode::Gated);
    model.prepare_frame();
    model.take_dirty();
    update(&mut model, Event::Tick(at(2)));
    assert!(model.take_dirty(), "the list shows g's countdown");
}

#[test]
fn p_jumps_to_the_decisions_waiting_oldest_first_and_round_again() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    assert!(update(&mut model, char('p')).is_empty());
    assert_eq!(flash(&model), "no decision waits for you");
    for (second, id) in [(0, "first"), (5, "second"), (9, "third")] {
        update(&mut model, Event::Tick(at(second)));
        pending_in(&mut model, id, ControllerMode::Gated);
    }
    pending_in(&mut model, "advisory", ControllerMode::Shadow);
    // Renew the second's decision: it is now the newest.
    update(&mut model, Event::Tick(at(20)));
    store(
        &mut model,
        Change::Decision(decision("second", 2, Decision::StopConverged.into())),
    );
    select(&mut model, "advisory");
    let mut visited = Vec::new();
    for _ in 0..4 {
        update(&mut model, char('p'));
        let summary = model.selected_summary().unwrap();
        visited.push(summary.id.to_string());
    }
    assert_eq!(visited, ["first", "third", "second", "first"]);
    assert_eq!(
        flash(&model),
        "first round 1 waits for you: 1:10 left (3 waiting)"
    );
}

#[test]
fn decisions_that_start_waiting_are_announced_once_a_frame_only_when_asked() {
    let mut quiet = Model::new("test".into(), "alice".into(), &Config::default());
    pending_in(&mut quiet, "g", ControllerMode::Gated);
    assert_eq!(quiet.announcement(), None);

    let config = Config::parse("[ui]\nnotify = \"osc9\"", "test").unwrap();
    let mut model = Model::new("test".into(), "alice".into(), &config);
    pending_in(&mut model, "g", ControllerMode::Gated);
    assert_eq!(
        model.announcement().as_deref(),
        Some("gavel: a decision waiting for you (1 in all)")
    );
    assert_eq!(model.announcement(), None, "announced once");
    pending_in(&mut model, "s", ControllerMode::Shadow);
    assert_eq!(model.announcement(), None, "advisory");
    pending_in(&mut model, "h", ControllerMode::Gated);
    pending_in(&mut model, "i", ControllerMode::Gated);
    assert_eq!(
        model.announcement().as_deref(),
        Some("gavel: 2 decisions waiting for you (3 in all)")
    );
    assert!(Config::parse("[ui]\nnotify = \"siren\"", "test").is_err());
}

/// A console at the confirmation of an accept of `g`'s round 1, with `note` typed.
fn confirming_with_note(note: &str) -> Model {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    pending_in(&mut model, "g", ControllerMode::Gated);
    select(&mut model, "g");
    update(&mut model, char('a'));
    update(&mut model, char('n'));
    for c in note.chars() {
        update(&mut model, char(c));
    }
    update(&mut model, common::key(KeyCode::Enter));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    model
}

#[test]
fn a_dialog_on_a_decision_resolved_elsewhere_closes_says_by_whom_and_keeps_the_note() {
    let mut model = confirming_with_note("checked the PMIDs");
    let mut theirs = action("g", 1, ActionKind::Override, Decision::StopConverged.into());
    theirs.operator = "bob".into();
    store(&mut model, Change::Action(theirs));
    assert_eq!(model.desk.overlay, None);
    assert_eq!(
        flash(&model),
        "closed g round 1: resolved by bob: override stop_converged — your note is kept for your next action"
    );
    // The next decision's note starts from the kept one.
    store(
        &mut model,
        Change::Decision(decision("g", 2, Decision::ContinueBaseline.into())),
    );
    update(&mut model, char('a'));
    assert!(screen_at(&model, 160, 48).contains("n offers the note kept"));
    update(&mut model, char('n'));
    match &model.desk.overlay {
        Some(Overlay::Note(intent)) => {
            assert_eq!(intent.note.as_deref(), Some("checked the PMIDs"));
            assert_eq!(intent.round_index, 2);
        }
        other => panic!("expected the note editor, got {other:?}"),
    }
}

#[test]
fn a_dialog_whose_wait_ran_out_closes_and_says_so() {
    let mut model = confirming_with_note("");
    let mut timeout = action(
        "g",
        1,
        ActionKind::Accept,
        Decision::ContinueBaseline.into(),
    );
    timeout.operator = TIMEOUT_OPERATOR.into();
    store(&mut model, Change::Action(timeout));
    assert_eq!(model.desk.overlay, None);
    assert_eq!(
        flash(&model),
        "closed g round 1: resolved by timeout: accept continue_baseline"
    );
    assert_eq!(model.desk.kept_note, None);
}

#[test]
fn turns_and_rulings_are_in_spoken_order_whatever_order_they_land_in() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    store(
        &mut model,
        Change::Session(session("d", SessionStatus::Running)),
    );
    for (row, persona) in [(12, "synthesizer"), (10, "theorist"), (11, "skeptic")] {
        store(&mut model, Change::Turn(turn("d", row, 1, persona)));
        store(
            &mut model,
            Change::Judgment(ruling("d", row, 1, persona, JudgeDecision::Continue, 0.9)),
        );
    }
    let debate = model.debate("d").unwrap();
    let spoken: Vec<&str> = debate
        .turns
        .iter()
        .map(|t| t.agent_persona.as_str())
        .collect();
    assert_eq!(spoken, ["theorist", "skeptic", "synthesizer"]);
    let judged: Vec<u64> = debate.judgments.iter().map(|j| j.id).collect();
    assert_eq!(judged, [10, 11, 12]);
    let round = &debate.rounds()[0];
    let in_round: Vec<&str> = round
        .turns
        .iter()
        .map(|t| t.agent_persona.as_str())
        .collect();
    assert_eq!(in_round, spoken);
}

#[test]
fn the_judge_column_shows_the_worst_ruling_with_its_lowest_score() {
    let rulings = [
        ruling("d", 1, 1, "a", JudgeDecision::Continue, 0.61),
        ruling("d", 2, 1, "b", JudgeDecision::Continue, 0.95),
    ];
    let worst = worst_ruling(&rulings.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(worst.score, Some(0.61));
    let rulings = [
        ruling("d", 1, 1, "a", JudgeDecision::Warn, 0.82),
        ruling("d", 2, 1, "b", JudgeDecision::Continue, 0.30),
        ruling("d", 3, 1, "c", JudgeDecision::Warn, 0.76),
    ];
    let worst = worst_ruling(&rulings.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!((worst.id, worst.score), (3, Some(0.76)));
}

#[test]
fn the_list_says_how_each_finished_demo_debate_ended() {
    let (mut model, _) = demo_model();
    let ending = |model: &Model, id: &str| {
        let summary = model.debates.get(model.debates.seq(id).unwrap()).unwrap();
        summary.ending()
    };
    assert_eq!(ending(&model, "fmt-melanoma-pd1"), Some(Ending::JudgeAbort));
    assert_eq!(
        ending(&model, "replication-crisis-causes"),
        Some(Ending::FixedLoop)
    );
    assert_eq!(
        ending(&model, "als-phase3-subgroup"),
        Some(Ending::Controller(Decision::StopConverged.into()))
    );
    assert_eq!(
        ending(&model, "fasting-insulin-0412"),
        None,
        "still running"
    );
    // An operator's override that stops a running debate is how it ended.
    select(&mut model, "fasting-insulin-0412");
    let stop = action(
        "fasting-insulin-0412",
        1,
        ActionKind::Override,
        Decision::StopConverged.into(),
    );
    store(&mut model, Change::Action(stop));
    let mut done = model
        .debate("fasting-insulin-0412")
        .unwrap()
        .session
        .clone();
    done.status = SessionStatus::Completed.into();
    store(&mut model, Change::Session(done));
    assert_eq!(
        ending(&model, "fasting-insulin-0412"),
        Some(Ending::Operator(Decision::StopConverged.into()))
    );
    assert!(screen_at(&model, 160, 48).contains("override stop_converged"));
}

#[test]
fn numbers_are_shortened_never_cut() {
    use gavel::text::{compact, countdown};
    let shown: Vec<String> = [
        0, 950, 999, 1_000, 5_700, 9_949, 9_950, 60_000, 999_499, 999_500,
    ]
    .into_iter()
    .map(compact)
    .collect();
    assert_eq!(
        shown,
        [
            "0", "950", "999", "1k", "5.7k", "9.9k", "10k", "60k", "999k", "1M"
        ]
    );
    assert_eq!(compact(u64::MAX), "18E");
    // Whole numbers of a unit, as the arithmetic for the others rounds them.
    let whole: Vec<String> = [
        10_000,
        8_000_000,
        250_000_000_000,
        3_000_000_000_000_000_000,
    ]
    .into_iter()
    .map(compact)
    .collect();
    assert_eq!(whole, ["10k", "8M", "250G", "3E"]);
    let waits: Vec<String> = [0, 400, 5_000, 83_000, 3_599_000, 3_600_000, 86_399_000]
        .into_iter()
        .map(|ms| countdown(Duration::from_millis(ms)))
        .collect();
    assert_eq!(
        waits,
        ["0:00", "0:01", "0:05", "1:23", "59:59", "1h00m", "23h59m"]
    );
}

proptest::proptest! {
    /// Cut text fits its width, keeps its start and says it was cut with `…`; wrapped text
    /// keeps to its lines and width and loses no word unless it says so.
    #[test]
    fn cut_and_wrapped_text_fits_and_says_when_it_was_cut(
        words in proptest::collection::vec("[a-zé日]{1,12}", 0..30),
        width in 1..40usize,
        lines in 1..5usize,
    ) {
        use gavel::text::{fit, wrap};
        use unicode_width::UnicodeWidthStr;
        let text = words.join(" ");
        let cut = fit(&text, width);
        proptest::prop_assert!(cut.width() <= width);
        if text.width() <= width {
            proptest::prop_assert_eq!(&cut, &text);
        } else {
            proptest::prop_assert!(cut.ends_with('…'));
            proptest::prop_assert!(text.starts_with(cut.trim_end_matches('…')));
        }
        let wrapped = wrap(&text, width, lines);
        proptest::prop_assert!(wrapped.len() <= lines);
        proptest::prop_assert!(wrapped.iter().all(|line| line.width() <= width));
        let cut_somewhere = wrapped.iter().any(|line| line.contains('…'));
        if !cut_somewhere {
            proptest::prop_assert_eq!(wrapped.join(" "), text);
        }
    }
}
