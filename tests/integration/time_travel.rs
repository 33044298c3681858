//! The time cursor: the strongest oracle. A debate is played into the console row by row and the
//! screen captured live right after each decision (and the action on it) landed; at the end,
//! the time cursor stepped to each decision must show the same screen below the header and the
//! debates list (those say where the cursor is and how the debate stands live). Some of the
//! cursor's screens are kept as snapshots at 80x24 and 160x48.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, TimeZone, Utc};
use common::{char, key, screen_at};
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{DetailView, Event, Focus, Model, update};
use gavel::domain::{
    ActionKind, Change, ControllerMode, Decision, Moment, OperatorAction, Reported,
};
use gavel::simulate::{DebateRun, TimeSource};

/// The screen from the view tabs down: what the time cursor must reproduce.
fn below_list(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let tabs = lines
        .iter()
        .position(|l| l.contains("transcript") && l.contains("judge"))
        .expect("the view tabs are drawn");
    lines[tabs..].join("\n")
}

/// Screens of `model` in every view, at 160x48 and 80x24.
fn screens(model: &mut Model) -> Vec<String> {
    let mut shown = Vec::new();
    model.desk.flash = None;
    for view in DetailView::ALL {
        model.nav.view = view;
        for (width, height) in [(160, 48), (80, 24)] {
            shown.push(below_list(&screen_at(model, width, height)));
        }
    }
    model.nav.view = DetailView::Rounds;
    shown
}

#[test]
fn the_time_cursor_shows_each_decision_as_the_console_showed_it_live() {
    for (name, mode) in [
        ("shadow_week_salt", ControllerMode::Shadow),
        ("escalation_new_persona", ControllerMode::Enabled),
        ("gated_converges_round3", ControllerMode::Enabled),
    ] {
        let mut model = Model::new("demo".into(), "alice".into(), &Config::default());
        model.nav.focus = Focus::Detail;
        let mut run = common::run(name, mode);
        let mut live = Vec::new();
        for change in run.start() {
            update(&mut model, Event::Store(Box::new(change)));
        }
        while !run.is_finished() {
            let changes = run.play_round();
            let decided = changes.iter().any(|c| matches!(c, Change::Decision(_)));
            for change in changes {
                update(&mut model, Event::Store(Box::new(change)));
            }
            if decided {
                live.push(screens(&mut model));
            }
        }
        assert!(live.len() >= 3, "{name}: {} decisions", live.len());

        update(&mut model, char('{'));
        for (at, screens_then) in live.iter().enumerate() {
            let round = model.nav.past.as_ref().expect("in the past").moment.round;
            assert_eq!(round as usize, at + 1, "{name}");
            let header = screen_at(&model, 160, 48);
            assert!(
                header.contains(&format!("as of round {round} ·")),
                "{name}: {header}"
            );
            let past = screens(&mut model);
            for (i, (then, now)) in screens_then.iter().zip(&past).enumerate() {
                assert_eq!(then, now, "{name}: round {round}, screen {i}");
            }
            update(&mut model, char(']'));
        }
        assert!(model.nav.past.is_none(), "{name}: past the latest is live");
    }
}

#[test]
fn in_the_past_actions_are_off_and_esc_returns_to_live() {
    let (mut model, _) = common::demo_model();
    common::select(&mut model, "fasting-insulin-0412");
    assert!(model.selected_debate().unwrap().pending().is_some());
    update(&mut model, char('['));
    let header = screen_at(&model, 160, 48);
    assert!(header.contains("as of round 1 · "), "{header}");
    assert!(header.contains("live: round 1"), "{header}");
    update(&mut model, char('a'));
    assert!(model.desk.overlay.is_none());
    assert!(common::flash(&model).starts_with("in the past"));
    update(&mut model, key(KeyCode::Esc));
    assert!(model.nav.past.is_none());
    update(&mut model, char('a'));
    assert!(
        model.desk.overlay.is_some(),
        "live again, accept opens its dialog"
    );
}

#[test]
fn snapshots_of_a_debate_as_of_its_second_decision() {
    let (mut model, _) = common::demo_model();
    common::select(&mut model, "als-phase3-subgroup");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, char('{'));
    update(&mut model, char(']'));
    model.desk.flash = None;
    insta::assert_snapshot!("as_of_round_2", timeless(&screen_at(&model, 160, 48)));
    insta::assert_snapshot!("as_of_round_2_small", timeless(&screen_at(&model, 80, 24)));
}

/// `screen` with the decision's time in the header (the demo's rows carry the wall clock's)
/// written `HH:MM:SS`.
fn timeless(screen: &str) -> String {
    let at = "as of round 2 · ";
    let start = screen
        .find(at)
        .expect("the header says where the cursor is")
        + at.len();
    let mut shown = screen.to_owned();
    shown.replace_range(start..start + 8, "HH:MM:SS");
    shown
}

#[test]
fn space_plays_history_forward_from_the_cursor_then_live() {
    let (mut model, _) = common::demo_model();
    common::select(&mut model, "als-phase3-subgroup");
    update(&mut model, char('{'));
    update(&mut model, char(' '));
    assert!(
        !model.time.playback.paused,
        "the demo's feed is not paused by it"
    );
    let start = chrono::Utc::now();
    let mut rounds = Vec::new();
    for second in 0..60 {
        update(
            &mut model,
            Event::Tick(start + chrono::Duration::seconds(second)),
        );
        match &model.nav.past {
            Some(past) if rounds.last() != Some(&past.moment) => rounds.push(past.moment),
            Some(_) => {}
            None => break,
        }
    }
    let decided: Vec<Moment> = (1..=5).map(Moment::decided).collect();
    assert_eq!(
        rounds, decided,
        "a debate no operator resolved plays decision by decision"
    );
    assert!(model.nav.past.is_none(), "after the latest decision, live");
}

/// A clock for a run's rows that starts at 14:00:00 and moves `step` seconds at each reading,
/// so that every row has a time of its own and the screens do not depend on the wall clock;
/// and a way to let `n` seconds pass on it and read it then.
fn stepping_clock(step: i64) -> (TimeSource, impl Fn(i64) -> DateTime<Utc>) {
    let start = Utc.with_ymd_and_hms(2026, 11, 25, 14, 0, 0).unwrap();
    let seconds = Arc::new(AtomicI64::new(0));
    let read = Arc::clone(&seconds);
    let now = move || start + chrono::Duration::seconds(read.fetch_add(step, Ordering::Relaxed));
    let after = move |n: i64| {
        start + chrono::Duration::seconds(seconds.fetch_add(n + 1, Ordering::Relaxed) + n)
    };
    (TimeSource::new(now), after)
}

/// What the operators did on the gated debate's decisions, one a round: an accept with a note,
/// an escalation bringing in a persona who has not spoken, an override, then the gated wait
/// running out (the action the timeout records); `at` is when.
fn operator_action(
    run: &DebateRun,
    model: &Model,
    round: u32,
    at: DateTime<Utc>,
) -> OperatorAction {
    let debate = model.debate(&run.session().id).expect("held");
    let controller = debate.decisions[&round].decision.clone();
    let mut action = run.timeout_action().expect("the run waits on a decision");
    action.created_at = Some(at);
    let (kind, decision, persona, operator, note) = match round {
        1 => (
            ActionKind::Accept,
            controller,
            None,
            "ana",
            Some("signals agree; go on"),
        ),
        2 => (
            ActionKind::Escalate,
            Reported::Known(Decision::EscalateNewPersona),
            debate.unused_personas().into_iter().next(),
            "ben",
            Some("the clinician should weigh in"),
        ),
        3 => (
            ActionKind::Override,
            Reported::Known(Decision::ContinueBaseline),
            None,
            "ana",
            Some("one more round: the dosing question is open"),
        ),
        _ => return action,
    };
    action.action = Reported::Known(kind);
    action.decision = decision;
    action.persona = persona;
    action.operator = operator.to_owned();
    action.note = note.map(str::to_owned);
    action
}

/// A gated debate played with its operators' actions: its rows and the screens captured live
/// when each decision landed and when the action on it landed, by moment.
fn played_gated() -> (Model, Vec<(Moment, Vec<String>)>) {
    let (time, after) = stepping_clock(7);
    let mut model = Model::new("demo".into(), "alice".into(), &Config::default());
    model.nav.focus = Focus::Detail;
    let mut run = common::run("gated_converges_round3", ControllerMode::Gated).with_time(time);
    let mut live = Vec::new();
    let feed = |model: &mut Model, changes: Vec<Change>| {
        for change in changes {
            update(model, Event::Store(Box::new(change)));
        }
    };
    feed(&mut model, run.start());
    while !run.is_finished() {
        feed(&mut model, run.play_round());
        let Some(round) = run.awaiting() else {
            continue;
        };
        live.push((Moment::decided(round), screens(&mut model)));
        let action = operator_action(&run, &model, round, after(40));
        feed(&mut model, vec![Change::Action(action.clone())]);
        feed(&mut model, run.resolve(&action));
        let acted = Moment { round, acted: true };
        live.push((acted, screens(&mut model)));
    }
    (model, live)
}

#[test]
fn a_gated_debate_shows_each_decision_and_each_operator_action_as_they_landed() {
    let (mut model, live) = played_gated();
    let acted = live.iter().filter(|(m, _)| m.acted).count();
    assert!(
        acted >= 4,
        "an accept, an escalation, an override, a timeout: {acted}"
    );
    for (moment, screens_then) in &live {
        model.travel(Some(*moment));
        let past = screens(&mut model);
        for (i, (then, now)) in screens_then.iter().zip(&past).enumerate() {
            assert_eq!(then, now, "{moment:?}, screen {i}");
        }
    }
    // `[` and `]` stop at each decision as the operator settled it.
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('{'));
    let mut stops = Vec::new();
    while let Some(past) = &model.nav.past {
        stops.push(past.moment);
        update(&mut model, char(']'));
    }
    let settled: Vec<Moment> = live.iter().map(|(m, _)| *m).filter(|m| m.acted).collect();
    assert_eq!(stops, settled);
}

#[test]
fn in_the_past_the_decision_panel_shows_the_action_only_once_it_landed() {
    let (mut model, _) = played_gated();
    model.travel(Some(Moment::decided(3)));
    model.desk.flash = None;
    let waiting = screen_at(&model, 160, 48);
    assert!(waiting.contains("decision waiting for you"), "{waiting}");
    assert!(!waiting.contains("one more round"), "{waiting}");
    insta::assert_snapshot!("gated_round_3_decided", waiting);
    insta::assert_snapshot!("gated_round_3_decided_small", screen_at(&model, 80, 24));
    update(&mut model, char(']'));
    assert_eq!(
        model.nav.past.as_ref().map(|p| p.moment),
        Some(Moment {
            round: 3,
            acted: true
        })
    );
    model.desk.flash = None;
    let acted = screen_at(&model, 160, 48);
    assert!(acted.contains("override by ana at 14:"), "{acted}");
    assert!(acted.contains("note: one more round"), "{acted}");
    insta::assert_snapshot!("gated_round_3_acted", acted);
    insta::assert_snapshot!("gated_round_3_acted_small", screen_at(&model, 80, 24));
}

/// History played forward from the cursor as the draw loop plays it: the wall clock's tick once
/// a second (0.3 s after `start`, when `space` was pressed, and each second after), and a tick
/// whenever the model says a step is due. The moments shown, each with the wall time it
/// landed at (the first, `start`), until live (or 10 minutes).
fn played_forward(model: &mut Model, start: DateTime<Utc>) -> Vec<(Moment, DateTime<Utc>)> {
    let second = chrono::Duration::seconds(1);
    let mut tick = start + chrono::Duration::milliseconds(300);
    let mut now = start;
    let mut landed: Vec<_> = model.nav.past.iter().map(|p| (p.moment, start)).collect();
    while now < start + chrono::Duration::minutes(10) {
        now = match model.history_due() {
            Some(due) if due < tick => due.max(now),
            _ => {
                tick += second;
                tick - second
            }
        };
        update(model, Event::Tick(now));
        let Some(past) = &model.nav.past else {
            break;
        };
        if landed.last().map(|(m, _)| m) != Some(&past.moment) {
            landed.push((past.moment, now));
        }
    }
    landed
}

#[test]
fn space_lands_each_moment_at_its_recorded_gap_not_on_the_clocks_second() {
    let (mut model, live) = played_gated();
    update(&mut model, char('{'));
    update(&mut model, char('['));
    let first = model.nav.past.as_ref().unwrap().moment;
    assert_eq!(first, live[1].0, "the first stop");
    // At 5x the 47 s each operator took play in 9.4 s, and the 57 s from an action to the next
    // decision are cut to 10 s.
    model.time.playback.speed = 5.0;
    update(&mut model, char(' '));
    let debate = model.debate("fasting-insulin-0412").expect("held").clone();
    let start = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
    let landed = played_forward(&mut model, start);
    assert!(model.nav.past.is_none(), "after the latest moment, live");
    let moments: Vec<Moment> = live.iter().skip(1).map(|(m, _)| *m).collect();
    let shown: Vec<Moment> = landed.iter().map(|(m, _)| *m).collect();
    assert_eq!(shown, moments, "each decision, then the action on it");
    let (mut capped, mut between_seconds) = (0, 0);
    for pair in landed.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let gap = debate.time_of(after.0).unwrap() - debate.time_of(before.0).unwrap();
        let recorded = (gap.num_milliseconds() / 5).clamp(200, 10_000);
        capped += usize::from(recorded == 10_000);
        between_seconds += usize::from(recorded % 1000 != 0);
        let played = (after.1 - before.1).num_milliseconds();
        assert!(
            (recorded - 1..=recorded + 1).contains(&played),
            "{:?} to {:?}: recorded {recorded} ms at 5x, played {played} ms",
            before.0,
            after.0
        );
    }
    assert!(capped >= 3, "57 s are cut to 10 s: {capped}");
    assert!(between_seconds >= 3, "9.4 s end between two ticks");
}

/// Two debates' rows as an orchestrator commits them, one statement each, their times
/// recorded: out of round order (debate a's ruling on round 1 after round 2's turns, the action
/// on its round 1 after round 2's turns too, its ruling on round 2 after its decision and round
/// 3's first turn) and interleaved with debate b's.
const ORDERED_ROWS: &[&str] = &[
    "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget, created_at) \
     VALUES ('order-a', 'Does order hold?', 'shadow', '[\"theorist\", \"skeptic\"]', 10000, '2026-11-25 10:00:00+00')",
    "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget, created_at) \
     VALUES ('order-b', 'Do two debates interleave?', 'shadow', '[\"theorist\", \"skeptic\"]', 10000, '2026-11-25 10:00:00.5+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-a', 1, 'theorist', 'Opening. VERDICT: yes', 900, '2026-11-25 10:00:01+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-b', 1, 'theorist', 'Other. VERDICT: maybe', 700, '2026-11-25 10:00:01.5+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-a', 1, 'skeptic', 'No. VERDICT: no', 800, '2026-11-25 10:00:02+00')",
    "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
     VALUES ('order-a', 1, 'continue_baseline', '{\"reasons\": [\"round 1 < min_rounds 2\"]}', '2026-11-25 10:00:04+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-a', 2, 'theorist', 'Still yes. VERDICT: yes', 600, '2026-11-25 10:00:05+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-a', 2, 'skeptic', 'Now yes. VERDICT: yes', 500, '2026-11-25 10:00:06+00')",
    "INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, reasons, created_at) \
     VALUES ('order-a', 1, 'skeptic', 'warn_persona', 0.4, '[\"late ruling on round 1\"]', '2026-11-25 10:00:07+00')",
    "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
     VALUES ('order-b', 1, 'continue_baseline', '{}', '2026-11-25 10:00:08+00')",
    "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, note, created_at) \
     VALUES ('order-a', 1, 'override', 'stop_converged', 'ana', 'they agree now', '2026-11-25 10:00:10+00')",
    "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
     VALUES ('order-a', 2, 'continue_baseline', '{}', '2026-11-25 10:00:11+00')",
    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, created_at) \
     VALUES ('order-a', 3, 'theorist', 'Yes, finally. VERDICT: yes', 400, '2026-11-25 10:00:12+00')",
    "INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, reasons, created_at) \
     VALUES ('order-a', 2, 'theorist', 'continue', 0.9, '[\"late ruling on round 2\"]', '2026-11-25 10:00:13+00')",
    "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
     VALUES ('order-a', 3, 'stop_converged', '{}', '2026-11-25 10:00:14+00')",
    "UPDATE debate_sessions SET status = 'completed', num_rounds = 3, tokens_used = 3200, \
     finished_at = '2026-11-25 10:00:15+00' WHERE id = 'order-a'",
];

/// Debate a's screens at each stop of the time cursor, from the first to the latest, in every
/// view (below the list); stepping reads nothing: no key gives a command.
fn stepped(console: &mut common::pg::Console) -> Vec<Vec<String>> {
    console.model.nav.focus = Focus::Detail;
    let mut shown = Vec::new();
    let key = |model: &mut Model, c: char| {
        let commands = update(model, char(c));
        assert!(commands.is_empty(), "a step reads nothing: {commands:?}");
    };
    key(&mut console.model, '{');
    while console.model.nav.past.is_some() {
        shown.push(screens(&mut console.model));
        key(&mut console.model, ']');
    }
    shown
}

/// The rows of debate a that `console` shows at `moment`: its turns' and rulings' ids.
fn rows_at(console: &mut common::pg::Console, moment: Moment) -> (Vec<u32>, Vec<String>) {
    console.model.travel(Some(moment));
    let past = &console.model.nav.past.as_ref().expect("in the past").debate;
    let turns = past.turns.iter().map(|t| t.round_number).collect();
    let rulings = past
        .judgments
        .iter()
        .flat_map(|j| j.reasons.clone())
        .collect();
    (turns, rulings)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_and_a_restart_step_in_the_databases_order() {
    use common::pg::{Console, migrated_database};
    let db = migrated_database("time_travel_order").await;
    let mut watching = Console::live(db.target.clone()).await;
    for row in ORDERED_ROWS {
        db.client.batch_execute(row).await.unwrap();
    }
    let complete = |m: &Model| {
        m.debate("order-a").is_some_and(|d| {
            (
                d.turns.len(),
                d.judgments.len(),
                d.decisions.len(),
                d.actions.len(),
            ) == (5, 2, 3, 1)
                && !d.session.is_running()
        })
    };
    watching.until("every row, as it landed", complete).await;
    // A console started after every row landed: what a restart sees.
    let restarted = Console::live(db.target.clone()).await;
    let [mut watching, mut restarted] = [watching, restarted].map(|mut console| {
        console.select("order-a");
        console.press("\u{0}");
        console
    });
    restarted.until("debate a's history", complete).await;
    watching.until("debate a's history again", complete).await;

    let seen = stepped(&mut watching);
    assert_eq!(seen.len(), 3, "a stop a decision");
    assert_eq!(
        seen,
        stepped(&mut restarted),
        "the same steps after a restart"
    );

    // What had landed follows the rows' times, not their rounds.
    let decided_1 = rows_at(&mut restarted, Moment::decided(1));
    assert_eq!(decided_1, (vec![1, 1], vec![]));
    let acted_1 = rows_at(
        &mut restarted,
        Moment {
            round: 1,
            acted: true,
        },
    );
    assert_eq!(
        acted_1,
        (vec![1, 1, 2, 2], vec!["late ruling on round 1".to_owned()]),
        "the operator acted on round 1 after round 2's turns and the late ruling"
    );
    let settled_2 = rows_at(&mut restarted, Moment::decided(2));
    assert_eq!(
        settled_2.1,
        ["late ruling on round 1"],
        "round 2's ruling came after its decision"
    );
    let settled_3 = rows_at(&mut restarted, Moment::decided(3));
    assert_eq!(settled_3.0, [1, 1, 2, 2, 3]);
    assert_eq!(settled_3.1.len(), 2);
    for moment in watching.model.debate("order-a").unwrap().clone().moments() {
        assert_eq!(
            rows_at(&mut watching, moment),
            rows_at(&mut restarted, moment),
            "{moment:?}"
        );
    }
}
