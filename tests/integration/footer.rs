//! k9s habits beside the `:` line: `G` and End go to the bottom of the list, the rounds table
//! and a text view; the footer's hints come from the keymap in force and fit the width; a
//! console on a live database shows no playback speed and says so when asked for one.

use crate::common;

use common::{char, demo_model, demo_model_with, key, select};
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Command, DetailView, Event, Focus, Model, update};

fn footer(model: &Model, width: u16) -> String {
    let screen = common::screen_at(model, width, 24);
    screen.lines().last().unwrap().trim_matches('"').to_owned()
}

#[test]
fn g_and_end_go_to_the_bottom_as_home_goes_to_the_top() {
    let (mut model, _) = demo_model();
    update(&mut model, Event::Resize(160, 48));
    update(&mut model, char('G'));
    let last = model.selected_summary().unwrap().id.to_string();
    assert_eq!(
        last, "salt-substitutes-shadow",
        "the last debate of the list"
    );
    update(&mut model, key(KeyCode::Home));
    update(&mut model, key(KeyCode::End));
    assert_eq!(model.selected_summary().unwrap().id.as_ref(), last);

    select(&mut model, "replication-crisis-causes");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Home));
    assert_eq!(model.selected_round(), Some(1));
    update(&mut model, char('G'));
    assert_eq!(model.selected_round(), Some(8), "the latest round");
    assert_eq!(model.nav.round_cursor(), None, "and following it again");

    update(&mut model, key(KeyCode::Home));
    update(&mut model, char('2'));
    assert_eq!(
        (model.nav.focus, model.nav.view),
        (Focus::Detail, DetailView::Transcript)
    );
    common::record_frame(&mut model);
    update(&mut model, key(KeyCode::End));
    let bottom = model.nav.detail_scroll;
    assert!(bottom > 20, "the transcript from round 1 is long: {bottom}");
    update(&mut model, key(KeyCode::Down));
    assert!(model.nav.detail_scroll <= bottom + 1);
    update(&mut model, key(KeyCode::End));
    let screen = common::screen(&model);
    assert!(screen.contains("round 8"), "the last round's text shows");
}

#[test]
fn hints_follow_the_keymap_and_fit_the_width() {
    let (model, _) = demo_model();
    let wide = footer(&model, 200);
    for hint in [
        "↑↓ move",
        "/ filter",
        ": command",
        "a accept",
        "y copy",
        "P pager",
        "+- speed",
        "? help",
    ] {
        assert!(wide.contains(hint), "{hint} in {wide}");
    }
    let narrow = footer(&model, 50);
    assert!(
        narrow.contains("↑↓ move") && narrow.contains("a accept"),
        "{narrow}"
    );
    assert!(
        !narrow.contains("speed"),
        "the least important go first: {narrow}"
    );
    for hint in narrow.split("  ").map(str::trim).filter(|h| !h.is_empty()) {
        assert!(wide.contains(hint), "{hint:?} is a whole hint");
    }

    let config = Config::parse(
        "[keys]\naccept = \"A\"\nfilter = \"f\"\ncopy = \"ctrl-y\"\n",
        "test",
    )
    .unwrap();
    let (model, _) = demo_model_with(&config);
    let remapped = footer(&model, 200);
    assert!(remapped.contains("A accept"), "{remapped}");
    assert!(remapped.contains("f filter"));
    assert!(remapped.contains("ctrl-y copy"));
    assert!(!remapped.contains("a accept"));
}

#[test]
fn a_live_console_has_no_playback_speed() {
    let mut model = Model::live("watch".into(), "carol".into(), &Config::default());
    let hints = footer(&model, 200);
    assert!(hints.contains("space pause"), "{hints}");
    assert!(!hints.contains("speed"), "{hints}");
    let speed = model.time.playback.speed;
    for c in ['+', '-'] {
        // A live console says it is here (presence); it asks nothing of the playback.
        let commands = update(&mut model, char(c));
        assert!(
            commands.iter().all(|c| matches!(c, Command::Present(_))),
            "{commands:?}"
        );
        assert_eq!(model.time.playback.speed, speed);
        assert_eq!(
            model.desk.flash.as_ref().unwrap().text,
            "playback speed is the demo's only: a live feed plays as it comes"
        );
    }
    let paused = update(&mut model, char(' '));
    assert!(
        matches!(paused[..], [Command::SetPlayback(p)] if p.paused),
        "space still pauses"
    );
}
