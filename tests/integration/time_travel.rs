//! The time cursor: the strongest oracle. A debate is played into the console row by row and the
//! screen captured live right after each decision (and the action on it) landed; at the end,
//! the time cursor stepped to each decision must show the same screen below the header and the
//! debates list (those say where the cursor is and how the debate stands live). Some of the
//! cursor's screens are kept as snapshots at 80x24 and 160x48.

use crate::common;

use common::{char, key, screen_at};
use crossterm::event::KeyCode;
use gavel::app::{DetailView, Event, Focus, Model, update};
use gavel::config::Config;
use gavel::domain::{Change, ControllerMode, Moment};

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
    model.flash = None;
    for view in DetailView::ALL {
        model.view = view;
        for (width, height) in [(160, 48), (80, 24)] {
            shown.push(below_list(&screen_at(model, width, height)));
        }
    }
    model.view = DetailView::Rounds;
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
        model.focus = Focus::Detail;
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
            let round = model.past.as_ref().expect("in the past").moment.round;
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
        assert!(model.past.is_none(), "{name}: past the latest is live");
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
    assert!(model.overlay.is_none());
    assert!(
        model
            .flash
            .as_ref()
            .unwrap()
            .text
            .starts_with("in the past")
    );
    update(&mut model, key(KeyCode::Esc));
    assert!(model.past.is_none());
    update(&mut model, char('a'));
    assert!(
        model.overlay.is_some(),
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
    model.flash = None;
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
        !model.playback.paused,
        "the demo's feed is not paused by it"
    );
    let start = chrono::Utc::now();
    let mut rounds = Vec::new();
    for second in 0..60 {
        update(
            &mut model,
            Event::Tick(start + chrono::Duration::seconds(second)),
        );
        match &model.past {
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
    assert!(model.past.is_none(), "after the latest decision, live");
}
