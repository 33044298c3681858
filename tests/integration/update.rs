//! `update()`: the operator's flows through accept, override, escalate and cancel, playback,
//! navigation, and the round trip through the store back into the simulator.

use crate::common;

use common::{char, demo_model, key, select};
use crossterm::event::KeyCode;
use gavel::console::app::{Command, DetailView, Event, Focus, Overlay, update};
use gavel::domain::{ActionKind, Change, Decision, Reported};
use gavel::store::MemoryStore;

fn resolve_command(commands: &[Command]) -> gavel::domain::OperatorAction {
    match commands {
        [Command::Resolve(action)] => action.clone(),
        other => panic!("expected one Resolve, got {other:?}"),
    }
}

#[test]
fn accept_then_y_records_the_controllers_decision() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    assert!(update(&mut model, char('a')).is_empty());
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    let action = resolve_command(&update(&mut model, char('y')));
    assert_eq!(action.session_id, "fasting-insulin-0412");
    assert_eq!(action.round_index, 1);
    assert_eq!(action.action, Reported::Known(ActionKind::Accept));
    assert_eq!(action.decision, Reported::Known(Decision::ContinueBaseline));
    assert_eq!(action.operator, "alice");
    assert!(model.desk.overlay.is_none());
}

#[test]
fn any_key_but_y_cancels_a_confirmation() {
    let (mut model, _) = demo_model();
    for cancel in [char('x'), char('q'), key(KeyCode::Esc), char('a')] {
        update(&mut model, char('a'));
        assert!(update(&mut model, cancel).is_empty());
        assert!(model.desk.overlay.is_none());
        assert!(!model.quit, "q cancels the confirmation, it does not quit");
        assert!(common::flash(&model).contains("cancelled"));
    }
}

#[test]
fn override_chooses_among_the_other_decisions() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('o'));
    let Some(Overlay::Choose(chooser)) = &model.desk.overlay else {
        panic!("expected the decision list, got {:?}", model.desk.overlay);
    };
    assert_eq!(
        chooser.options,
        ["stop_converged", "stop_max_rounds", "stop_safety"]
    );
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Enter));
    let action = resolve_command(&update(&mut model, char('y')));
    assert_eq!(action.action, Reported::Known(ActionKind::Override));
    assert_eq!(action.decision, Reported::Known(Decision::StopSafety));
    assert_eq!(action.persona, None);
}

#[test]
fn escalation_chooses_an_unused_persona() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('e'));
    let Some(Overlay::Choose(chooser)) = &model.desk.overlay else {
        panic!("expected the persona list");
    };
    assert_eq!(chooser.options, ["clinician"]);
    update(&mut model, key(KeyCode::Enter));
    let action = resolve_command(&update(&mut model, char('y')));
    assert_eq!(action.action, Reported::Known(ActionKind::Escalate));
    assert_eq!(
        action.decision,
        Reported::Known(Decision::EscalateNewPersona)
    );
    assert_eq!(action.persona.as_deref(), Some("clinician"));
}

#[test]
fn esc_in_a_chooser_cancels() {
    let (mut model, _) = demo_model();
    update(&mut model, char('o'));
    assert!(update(&mut model, key(KeyCode::Esc)).is_empty());
    assert!(model.desk.overlay.is_none());
}

#[test]
fn actions_need_a_pending_decision() {
    let (mut model, _) = demo_model();
    select(&mut model, "sepsis-ml-replacement");
    for c in ['a', 'o', 'e'] {
        update(&mut model, char(c));
        assert!(model.desk.overlay.is_none());
        let flash = model.desk.flash.clone().unwrap();
        assert!(
            flash.error
                && flash
                    .text
                    .contains("no pending decision on sepsis-ml-replacement")
        );
    }
}

#[test]
fn losing_a_race_tells_who_won() {
    let (mut model, runs) = demo_model();
    let store = MemoryStore::new();
    let winner = gavel::domain::OperatorAction {
        session_id: runs[0].session().id.clone(),
        round_index: 1,
        action: ActionKind::Override.into(),
        decision: Decision::StopSafety.into(),
        persona: None,
        operator: "bob".into(),
        role: None,
        note: None,
        created_at: None,
        issues: Vec::new(),
    };
    store.resolve(winner.clone()).unwrap();
    update(&mut model, char('a'));
    let mine = resolve_command(&update(&mut model, char('y')));
    update(&mut model, Event::Resolved(store.resolve(mine)));
    let flash = model.desk.flash.clone().unwrap();
    assert!(flash.error);
    assert!(
        flash
            .text
            .contains("already resolved by bob: override -> stop_safety"),
        "{}",
        flash.text
    );
}

#[test]
fn the_round_trip_resolves_the_pending_decision_and_the_debate_moves_on() {
    let (mut model, mut runs) = demo_model();
    let store = MemoryStore::new();
    let mut rows = store.subscribe();
    assert!(model.held(0).unwrap().pending().is_some());
    update(&mut model, char('a'));
    let action = resolve_command(&update(&mut model, char('y')));
    update(&mut model, Event::Resolved(store.resolve(action)));
    while let Ok(change) = rows.try_recv() {
        if let Change::Action(action) = &change {
            runs[0].resolve(action);
        }
        update(&mut model, Event::Store(Box::new(change)));
    }
    assert!(model.held(0).unwrap().pending().is_none());
    assert!(common::flash(&model).starts_with("recorded: alice accept"));
    for change in runs[0].play_round() {
        update(&mut model, Event::Store(Box::new(change)));
    }
    assert_eq!(model.held(0).unwrap().latest_round(), 2);
    assert_eq!(model.held(0).unwrap().pending().unwrap().round_index, 2);
}

#[test]
fn playback_keys() {
    let (mut model, _) = demo_model();
    let commands = update(&mut model, char(' '));
    assert!(matches!(commands[..], [Command::SetPlayback(p)] if p.paused));
    update(&mut model, char('+'));
    assert_eq!(model.time.playback.speed, 2.0);
    assert_eq!(
        common::flash(&model),
        "speed 2x (paused: space plays on)",
        "a speed key while paused says the speed and the pause"
    );
    for _ in 0..10 {
        update(&mut model, char('-'));
    }
    assert_eq!(model.time.playback.speed, 0.25, "speed bottoms out");
    assert_eq!(
        common::flash(&model),
        "speed 0.25x, the slowest (paused: space plays on)"
    );
    assert!(model.time.playback.paused, "speed changes keep the pause");
    update(&mut model, char(' '));
    update(&mut model, char('+'));
    assert_eq!(common::flash(&model), "speed 0.5x");
    for _ in 0..10 {
        update(&mut model, char('+'));
    }
    assert_eq!(common::flash(&model), "speed 16x, the fastest");
}

#[test]
fn help_scrolls_with_j_k_and_closes_with_esc_q_or_question_mark() {
    let (mut model, _) = demo_model();
    update(&mut model, char('?'));
    assert_eq!(model.desk.overlay, Some(Overlay::Help { scroll: 0 }));
    update(&mut model, key(KeyCode::Down));
    update(&mut model, char('j'));
    assert_eq!(
        model.desk.overlay,
        Some(Overlay::Help { scroll: 2 }),
        "the arrows and j scroll a help longer than the screen"
    );
    update(&mut model, char('k'));
    update(&mut model, key(KeyCode::PageDown));
    update(&mut model, key(KeyCode::Home));
    assert_eq!(model.desk.overlay, Some(Overlay::Help { scroll: 0 }));
    update(&mut model, char('x'));
    update(&mut model, char('a'));
    assert_eq!(
        model.desk.overlay,
        Some(Overlay::Help { scroll: 0 }),
        "other keys leave it open and do nothing"
    );
    assert!(model.desk.flash.is_none(), "the accept key did not act");
    update(&mut model, key(KeyCode::Esc));
    for close in [key(KeyCode::Esc), char('q'), char('?')] {
        update(&mut model, char('?'));
        assert!(model.desk.overlay.is_some());
        update(&mut model, close);
        assert!(model.desk.overlay.is_none());
        assert!(!model.quit, "q closes the help, it does not quit");
    }
    update(&mut model, char('q'));
    assert!(model.quit, "q quits from the console itself");
}

#[test]
fn the_calibration_and_shadow_week_windows_close_with_esc_q_or_their_own_key() {
    let (mut model, _) = demo_model();
    for (open, overlay) in [
        (
            'c',
            Overlay::Calibration {
                scroll: 0,
                cursor: 0,
                table: false,
            },
        ),
        ('w', Overlay::ShadowWeek { scroll: 0 }),
    ] {
        for close in [key(KeyCode::Esc), char('q'), char(open)] {
            update(&mut model, char(open));
            assert_eq!(model.desk.overlay, Some(overlay.clone()));
            update(&mut model, char('x'));
            assert_eq!(model.desk.overlay, Some(overlay.clone()), "x does nothing");
            update(&mut model, close);
            assert!(model.desk.overlay.is_none());
        }
    }
    assert!(!model.quit);
}

#[test]
fn arrows_move_and_enter_drills_into_a_rounds_transcript() {
    let (mut model, _) = demo_model();
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Down));
    assert_eq!(model.nav.selected, Some(2));
    update(&mut model, key(KeyCode::Up));
    assert_eq!(model.nav.selected, Some(1));
    select(&mut model, "als-phase3-subgroup");
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(model.nav.focus, Focus::Detail);
    assert_eq!(model.nav.view, DetailView::Rounds);
    assert_eq!(
        model.selected_round(),
        Some(5),
        "the rounds table follows the latest round"
    );
    update(&mut model, key(KeyCode::Up));
    update(&mut model, key(KeyCode::Up));
    assert_eq!(model.selected_round(), Some(3));
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(
        model.nav.view,
        DetailView::Transcript,
        "a round opens its transcript"
    );
    assert_eq!(model.selected_round(), Some(3));
    update(&mut model, key(KeyCode::Down));
    assert_eq!(model.nav.detail_scroll, 1);
    update(&mut model, key(KeyCode::Up));
    update(&mut model, key(KeyCode::Up));
    assert_eq!(
        (model.selected_round(), model.nav.detail_scroll),
        (Some(2), 0),
        "scrolling up past a round's start goes to the round before"
    );
    update(&mut model, key(KeyCode::Esc));
    assert_eq!(model.nav.focus, Focus::Debates);
    assert!(model.desk.overlay.is_none());
}

#[test]
fn new_debates_never_move_the_selection() {
    let (mut model, runs) = demo_model();
    select(&mut model, "als-phase3-subgroup");
    let mut late = runs[0].session().clone();
    late.id = "late-arrival".into();
    update(&mut model, Event::Store(Box::new(Change::Session(late))));
    assert_eq!(
        model.selected_debate().unwrap().session.id,
        "als-phase3-subgroup"
    );
    let last = model.debates.len() as u64 - 1;
    assert_eq!(&*model.debates.get(last).unwrap().id, "late-arrival");
}

#[test]
fn rows_before_their_session_are_kept() {
    let (mut model, runs) = demo_model();
    let orphan = gavel::domain::ControllerDecision {
        session_id: "not-yet-seen".into(),
        round_index: 1,
        decision: Reported::Unknown("pause_for_coffee".into()),
        signals: Default::default(),
        decided_at: None,
        issues: Vec::new(),
    };
    update(&mut model, Event::Store(Box::new(Change::Decision(orphan))));
    let debate = model.debate("not-yet-seen").unwrap();
    assert_eq!(
        debate.latest_decision().unwrap().decision.to_string(),
        "unknown(pause_for_coffee)"
    );
    let mut session = runs[0].session().clone();
    session.id = "not-yet-seen".into();
    update(&mut model, Event::Store(Box::new(Change::Session(session))));
    assert_eq!(model.debate("not-yet-seen").unwrap().decisions.len(), 1);
}

#[test]
fn a_note_can_be_added_before_confirming() {
    let (mut model, _) = demo_model();
    update(&mut model, char('a'));
    update(&mut model, char('n'));
    for c in "agree, tokens low".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Backspace));
    update(&mut model, key(KeyCode::Enter));
    assert!(
        matches!(model.desk.overlay, Some(Overlay::Confirm(_))),
        "back to the confirmation"
    );
    let action = resolve_command(&update(&mut model, char('y')));
    assert_eq!(action.note.as_deref(), Some("agree, tokens lo"));

    update(&mut model, char('a'));
    update(&mut model, char('n'));
    update(&mut model, char('x'));
    update(&mut model, key(KeyCode::Esc));
    let action = resolve_command(&update(&mut model, char('y')));
    assert_eq!(action.note, None, "Esc drops the note");
}

#[test]
fn a_failed_write_is_shown_and_r_retries_it() {
    let (mut model, _) = demo_model();
    update(&mut model, char('a'));
    let action = resolve_command(&update(&mut model, char('y')));
    let failed = gavel::store::ResolveError::Failed {
        action: Box::new(action.clone()),
        error: "connection refused".into(),
    };
    update(&mut model, Event::Resolved(Err(failed)));
    let flash = model.desk.flash.clone().unwrap();
    assert!(flash.error);
    assert!(
        flash.text.contains("not recorded")
            && flash.text.contains("connection refused")
            && flash.text.contains("press r"),
        "{}",
        flash.text
    );
    let retried = resolve_command(&update(&mut model, char('r')));
    assert_eq!(retried, action, "the same action, nothing lost");
    assert!(
        update(&mut model, char('r')).is_empty(),
        "nothing left to retry"
    );
}

/// A console on a live feed, paused, and a session row to feed it.
fn paused_live() -> (gavel::console::app::Model, gavel::domain::Session) {
    let (_, runs) = demo_model();
    let mut model = gavel::console::app::Model::live(
        "live".into(),
        "alice".into(),
        &gavel::config::Config::default(),
    );
    update(&mut model, char(' '));
    (model, runs[0].session().clone())
}

#[test]
fn a_paused_live_feed_holds_rows_until_resumed() {
    let (mut model, session) = paused_live();
    update(&mut model, Event::Store(Box::new(Change::Session(session))));
    assert!(model.debates.is_empty(), "held while paused");
    assert_eq!(model.live.held_back.len(), 1);
    update(&mut model, char(' '));
    assert_eq!(model.debates.len(), 1);
    assert!(model.live.held_back.is_empty());
}

#[test]
fn a_pause_holds_a_bounded_number_of_rows_then_plays_on() {
    let (mut model, session) = paused_live();
    for n in 0..gavel::console::app::HELD_BACK - 1 {
        let mut held = session.clone();
        held.id = format!("held-{n}");
        update(&mut model, Event::Store(Box::new(Change::Session(held))));
    }
    assert!(model.time.playback.paused);
    assert_eq!(
        model.live.held_back.len(),
        gavel::console::app::HELD_BACK - 1
    );
    let commands = update(&mut model, Event::Store(Box::new(Change::Session(session))));
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::SetPlayback(p) if !p.paused))
    );
    assert!(!model.time.playback.paused, "played on");
    assert!(model.live.held_back.is_empty());
    assert_eq!(
        model.debates.len(),
        gavel::console::app::HELD_BACK,
        "every row held is applied"
    );
    let flash = model.desk.flash.as_ref().unwrap();
    assert!(
        flash.error && flash.text.starts_with("resumed"),
        "{}",
        flash.text
    );
}
