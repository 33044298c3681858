//! The operator's habits in the console: filter, sort, `:` jumps, read-only with its unlock,
//! pause keeping filter and scroll, the mouse, remapped keys, theme edits; and the values the
//! detail views and the shadow week show.

use crate::common;

use std::sync::mpsc;
use std::time::Duration;

use common::{char, demo_model, demo_model_with, held_debates, key, select};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use gavel::audit::ShadowWeek;
use gavel::config::Config;
use gavel::config::theme::{self, Theme};
use gavel::console::app::{Command, DetailView, Event, Focus, Model, Overlay, SortOrder, update};
use gavel::domain::{Change, Decision};

fn ids(model: &Model) -> Vec<&str> {
    let all = model.debates.window(None, usize::MAX);
    all.rows
        .iter()
        .map(|&seq| &*model.debates.get(seq).unwrap().id)
        .collect()
}

fn selected_id(model: &Model) -> &str {
    &model.debates.get(model.nav.selected.unwrap()).unwrap().id
}

fn type_text(model: &mut Model, text: &str) -> Vec<Command> {
    text.chars().flat_map(|c| update(model, char(c))).collect()
}

#[test]
fn the_filter_matches_topic_id_persona_and_status() {
    let (mut model, _) = demo_model();
    let mut filtered = |text: &str| {
        update(&mut model, char('/'));
        type_text(&mut model, text);
        update(&mut model, key(KeyCode::Enter));
        let shown: Vec<String> = ids(&model).into_iter().map(str::to_owned).collect();
        update(&mut model, char('/'));
        update(&mut model, key(KeyCode::Esc));
        shown
    };
    assert_eq!(
        filtered("WASTEWATER"),
        ["wastewater-panel-city"],
        "topic, any case"
    );
    assert_eq!(filtered("vitd"), ["vitd-fracture-followup"], "id");
    assert_eq!(
        filtered("oncologist"),
        ["fmt-melanoma-pd1"],
        "a persona who spoke (the roster's replacement)"
    );
    assert_eq!(
        filtered("biostatistician"),
        ["als-phase3-subgroup"],
        "a roster persona"
    );
    assert_eq!(
        filtered("running"),
        ["fasting-insulin-0412", "review-pdac-methylation"],
        "status"
    );
    assert_eq!(filtered("no such thing"), Vec::<String>::new());
    assert_eq!(ids(&model).len(), 9, "Esc clears the filter");
}

#[test]
fn filtering_keeps_a_shown_selection_and_moves_a_hidden_one() {
    let (mut model, _) = demo_model();
    select(&mut model, "salt-substitutes-shadow");
    update(&mut model, char('/'));
    type_text(&mut model, "shadow");
    assert_eq!(selected_id(&model), "salt-substitutes-shadow");
    update(&mut model, key(KeyCode::Enter));
    assert!(
        model.desk.overlay.is_none(),
        "Enter keeps the filter and closes the prompt"
    );
    assert_eq!(model.filter(), "shadow");
    update(&mut model, char('/'));
    type_text(&mut model, "x");
    update(&mut model, key(KeyCode::Backspace));
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, char('/'));
    type_text(&mut model, "-never-matches");
    assert_eq!(ids(&model), Vec::<&str>::new());
    assert!(
        model.selected_debate().is_none(),
        "nothing shown, nothing acted on"
    );
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('/'));
    type_text(&mut model, "gated");
    assert_eq!(
        selected_id(&model),
        "fasting-insulin-0412",
        "a hidden selection moves to the first debate shown"
    );
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Down));
    assert_eq!(
        selected_id(&model),
        "review-pdac-methylation",
        "arrows move among the debates shown"
    );
}

#[test]
fn sorting_reorders_the_list_but_not_the_selection() {
    let (mut model, _) = demo_model();
    select(&mut model, "vitd-fracture-followup");
    update(&mut model, char('s'));
    assert_eq!(model.sort(), SortOrder::PendingFirst);
    let order = ids(&model);
    assert_eq!(
        &order[..2],
        ["fasting-insulin-0412", "review-pdac-methylation"]
    );
    assert_eq!(selected_id(&model), "vitd-fracture-followup");
    update(&mut model, char('s'));
    assert_eq!(model.sort(), SortOrder::Id);
    let order = ids(&model);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    update(&mut model, key(KeyCode::Down));
    assert_eq!(
        selected_id(&model),
        "wastewater-panel-city",
        "down moves to the next id in the shown order"
    );
    update(&mut model, char('s'));
    assert_eq!(model.sort(), SortOrder::Arrival);
}

#[test]
fn live_rows_never_move_the_selection_of_a_sorted_filtered_list() {
    let (mut model, runs) = demo_model();
    update(&mut model, char('s'));
    update(&mut model, char('s'));
    update(&mut model, char('/'));
    type_text(&mut model, "s");
    update(&mut model, key(KeyCode::Enter));
    select(&mut model, "sepsis-ml-replacement");
    let mut late = runs[0].session().clone();
    late.id = "aaa-late-shadow".into();
    update(&mut model, Event::Store(Box::new(Change::Session(late))));
    assert_eq!(selected_id(&model), "sepsis-ml-replacement");
    assert_eq!(
        ids(&model)[0],
        "aaa-late-shadow",
        "the newcomer sorts first"
    );
}

#[test]
fn colon_jumps_to_a_debate_by_id() {
    let (mut model, _) = demo_model();
    update(&mut model, char(':'));
    type_text(&mut model, "vitd-fracture-followup");
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(selected_id(&model), "vitd-fracture-followup");

    update(&mut model, char(':'));
    type_text(&mut model, "panel");
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(
        selected_id(&model),
        "wastewater-panel-city",
        "a unique part of an id"
    );

    update(&mut model, char('/'));
    type_text(&mut model, "gated");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, char(':'));
    type_text(&mut model, "salt-substitutes-shadow");
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(selected_id(&model), "salt-substitutes-shadow");
    assert!(
        model.filter().is_empty(),
        "a filter hiding the debate is cleared"
    );
    assert!(common::flash(&model).contains("filter cleared"));

    update(&mut model, char(':'));
    type_text(&mut model, "nope");
    update(&mut model, key(KeyCode::Enter));
    let flash = model.desk.flash.clone().unwrap();
    assert!(
        flash.error
            && flash
                .text
                .starts_with("no debate nope and no command :nope")
    );
    assert_eq!(selected_id(&model), "salt-substitutes-shadow");

    update(&mut model, char(':'));
    type_text(&mut model, "-");
    update(&mut model, key(KeyCode::Enter));
    let flash = model.desk.flash.clone().unwrap();
    assert!(
        flash.error && flash.text.contains("9 debates match -"),
        "{flash:?}"
    );

    update(&mut model, char(':'));
    type_text(&mut model, "q");
    update(&mut model, key(KeyCode::Enter));
    assert!(model.quit);
}

#[test]
fn colon_asks_a_live_database_for_a_debate_not_on_screen() {
    let mut model = Model::live("watch".into(), "carol".into(), &Config::default());
    update(&mut model, char(':'));
    let commands = [
        type_text(&mut model, "old-debate"),
        update(&mut model, key(KeyCode::Enter)),
    ]
    .concat();
    assert_eq!(commands, [Command::LoadHistory("old-debate".into())]);
    let (_, runs) = demo_model();
    let mut other = runs[1].session().clone();
    other.id = "another".into();
    update(&mut model, Event::Store(Box::new(Change::Session(other))));
    let mut old = runs[0].session().clone();
    old.id = "old-debate".into();
    update(&mut model, Event::Store(Box::new(Change::Session(old))));
    assert_eq!(selected_id(&model), "old-debate", "selected once it lands");
}

#[test]
fn colon_says_what_a_live_database_answered_of_a_debate_not_on_screen() {
    let mut model = Model::live("watch".into(), "carol".into(), &Config::default());
    update(&mut model, char(':'));
    type_text(&mut model, "frob");
    update(&mut model, key(KeyCode::Enter));
    assert_eq!(common::flash(&model), "looking up frob in the database ...");
    // The history of another debate (one selected again) is not the one looked up.
    update(
        &mut model,
        Event::History {
            id: "other".into(),
            found: false,
        },
    );
    assert_eq!(common::flash(&model), "looking up frob in the database ...");
    update(
        &mut model,
        Event::History {
            id: "frob".into(),
            found: false,
        },
    );
    let flash = model.desk.flash.clone().unwrap();
    assert!(flash.error, "{flash:?}");
    assert_eq!(
        flash.text,
        "no debate frob in the database, and no command :frob — :help lists the commands"
    );
    assert_eq!(model.nav.jump_to, None, "nothing is waited for");

    // Found while the feed is paused: its rows are held back, and so is the jump.
    update(&mut model, char(' '));
    update(&mut model, char(':'));
    type_text(&mut model, "old-debate");
    update(&mut model, key(KeyCode::Enter));
    let (_, runs) = demo_model();
    let mut old = runs[0].session().clone();
    old.id = "old-debate".into();
    update(&mut model, Event::Store(Box::new(Change::Session(old))));
    update(
        &mut model,
        Event::History {
            id: "old-debate".into(),
            found: true,
        },
    );
    assert_eq!(
        common::flash(&model),
        "found old-debate: paused, it shows when space plays on"
    );
    update(&mut model, char(' '));
    assert_eq!(selected_id(&model), "old-debate", "selected once it lands");
}

#[test]
fn read_only_refuses_every_action_until_unlocked() {
    let (mut model, _) = demo_model();
    model.settings.read_only = true;
    model.desk.retry = Some(model.held(0).unwrap().pending().map(|d| {
        common::rows::action(
            &d.session_id,
            d.round_index,
            gavel::domain::ActionKind::Accept,
            d.decision.clone(),
        )
    }))
    .flatten();
    for refused in ['a', 'o', 'e', 'r'] {
        assert!(update(&mut model, char(refused)).is_empty(), "{refused}");
        assert!(
            model.desk.overlay.is_none(),
            "{refused} opened {:?}",
            model.desk.overlay
        );
        let flash = model.desk.flash.clone().unwrap();
        assert!(
            flash.error && flash.text.starts_with("read-only"),
            "{flash:?}"
        );
    }
    assert!(common::screen(&model).contains("read-only: [U] unlocks actions"));

    update(&mut model, char('U'));
    assert_eq!(model.desk.overlay, Some(Overlay::Unlock));
    update(&mut model, char('n'));
    assert!(
        model.settings.read_only,
        "anything but y keeps it read-only"
    );
    update(&mut model, char('U'));
    update(&mut model, char('y'));
    assert!(!model.settings.read_only);
    update(&mut model, char('a'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    let commands = update(&mut model, char('y'));
    assert!(matches!(commands.as_slice(), [Command::Resolve(_)]));
}

#[test]
fn pause_and_play_keep_the_filter_view_and_scroll() {
    let mut model = Model::live("watch".into(), "carol".into(), &Config::default());
    let (demo, runs) = demo_model();
    for debate in held_debates(&demo) {
        update(
            &mut model,
            Event::Store(Box::new(Change::Session(debate.session.clone()))),
        );
        for turn in &debate.turns {
            update(
                &mut model,
                Event::Store(Box::new(Change::Turn(turn.clone()))),
            );
        }
    }
    update(&mut model, char('/'));
    type_text(&mut model, "fmt");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, char('2'));
    update(&mut model, key(KeyCode::Down));
    update(&mut model, key(KeyCode::Down));
    let before = (
        model.filter().to_owned(),
        model.nav.view,
        model.nav.detail_scroll,
        model.nav.selected,
    );
    assert_eq!(before.2, 2);

    update(&mut model, char(' '));
    assert!(model.time.playback.paused);
    let mut held = runs[0].session().clone();
    held.id = "arrived-while-paused".into();
    update(&mut model, Event::Store(Box::new(Change::Session(held))));
    assert_eq!(model.live.held_back.len(), 1);
    assert!(model.debate("arrived-while-paused").is_none(), "held back");
    update(&mut model, char(' '));
    assert!(
        model.debate("arrived-while-paused").is_some(),
        "applied on resume"
    );
    let after = (
        model.filter().to_owned(),
        model.nav.view,
        model.nav.detail_scroll,
        model.nav.selected,
    );
    assert_eq!(before, after);
}

#[test]
fn views_switch_by_number_and_cycle() {
    let (mut model, _) = demo_model();
    for (key_char, view) in [
        ('2', DetailView::Transcript),
        ('3', DetailView::Judge),
        ('4', DetailView::Trace),
        ('5', DetailView::Format),
        ('1', DetailView::Rounds),
    ] {
        update(&mut model, char(key_char));
        assert_eq!(model.nav.view, view);
        assert_eq!(model.nav.focus, Focus::Detail);
    }
    update(&mut model, char('V'));
    assert_eq!(
        model.nav.view,
        DetailView::Format,
        "previous view wraps around"
    );
    update(&mut model, char('v'));
    assert_eq!(model.nav.view, DetailView::Rounds);
}

#[test]
fn remapped_keys_drive_the_console() {
    let config = Config::parse(
        "[keys]\naccept = \"A\"\ndown = [\"n\", \"down\"]\nshadow_week = \"ctrl-w\"",
        "test",
    )
    .unwrap();
    let (mut model, _) = demo_model_with(&config);
    update(&mut model, char('a'));
    assert!(model.desk.overlay.is_none(), "a no longer accepts");
    update(&mut model, char('A'));
    assert!(matches!(model.desk.overlay, Some(Overlay::Confirm(_))));
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('n'));
    assert_eq!(model.nav.selected, Some(1));
    update(
        &mut model,
        Event::Key(crossterm::event::KeyEvent::new(
            KeyCode::Char('w'),
            KeyModifiers::CONTROL,
        )),
    );
    assert_eq!(model.desk.overlay, Some(Overlay::ShadowWeek { scroll: 0 }));
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

#[test]
fn the_mouse_selects_and_scrolls_only_when_on() {
    let (mut model, _) = demo_model();
    update(&mut model, Event::Resize(160, 48));
    common::record_frame(&mut model);
    // The list starts at row 1: border, header, then the first debate on row 3.
    let click = |row| mouse(MouseEventKind::Down(MouseButton::Left), 10, row);
    update(&mut model, click(6));
    assert_eq!(
        model.nav.selected,
        Some(0),
        "mouse support is off by default"
    );

    model.settings.mouse = true;
    update(&mut model, click(6));
    assert_eq!(selected_id(&model), "sepsis-ml-replacement");
    update(&mut model, mouse(MouseEventKind::ScrollDown, 10, 6));
    assert_eq!(
        selected_id(&model),
        "replication-crisis-causes",
        "the wheel moves 3"
    );
    // The rounds table: tabs on row 13, its border on 14, header on 15, round 1 on 16.
    select(&mut model, "als-phase3-subgroup");
    common::record_frame(&mut model);
    update(&mut model, click(17));
    assert_eq!(model.nav.focus, Focus::Detail);
    assert_eq!(model.selected_round(), Some(2));
    update(&mut model, char('c'));
    update(&mut model, mouse(MouseEventKind::ScrollDown, 10, 20));
    assert_eq!(
        model.desk.overlay,
        Some(Overlay::Calibration {
            scroll: 3,
            cursor: 0,
            table: false
        })
    );
}

#[test]
fn a_theme_event_applies_and_a_broken_one_keeps_the_previous_theme() {
    let (mut model, _) = demo_model();
    let light = Theme::bundled("light").unwrap();
    update(&mut model, Event::Theme(Ok(Box::new(light.clone()))));
    assert_eq!(model.settings.theme, light);
    update(
        &mut model,
        Event::Theme(Err("mine.toml: invalid theme: no".into())),
    );
    assert_eq!(model.settings.theme, light);
    let flash = model.desk.flash.clone().unwrap();
    assert!(flash.error);
    assert_eq!(
        flash.text,
        "theme not applied, keeping light: mine.toml: invalid theme: no"
    );
}

#[test]
fn an_edited_theme_file_is_read_again() {
    let dir = std::env::temp_dir().join(format!("gavel-theme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.toml");
    let dark = std::fs::read_to_string("themes/dark.toml").unwrap();
    std::fs::write(&path, &dark).unwrap();
    let (sender, received) = mpsc::channel();
    let _watcher = theme::watch(&path, move |theme| {
        let _ = sender.send(theme);
    })
    .unwrap();
    let next = || {
        received
            .recv_timeout(Duration::from_secs(10))
            .expect("an event")
    };
    // Saved as editors save: a new file renamed over the old, so that no read (however late
    // a loaded machine runs it) sees a half-written file.
    let save = |text: String| {
        let new = dir.join(".mine.toml.new");
        std::fs::write(&new, text).unwrap();
        std::fs::rename(&new, &path).unwrap();
    };

    save(dark.replace("name = \"dark\"", "name = \"edited\""));
    assert_eq!(next().unwrap().name, "edited");
    save(dark.replace("#bf616a", "blood"));
    assert_eq!(
        next().unwrap_err(),
        format!(
            "{}:14: invalid theme: \"blood\" is not a colour (a name, #rrggbb or 0-255)",
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_shadow_week_adds_up_the_shadow_debates() {
    let (model, _) = demo_model();
    let week = ShadowWeek::of(held_debates(&model));
    let row = |id: &str| week.rows.iter().find(|r| r.session_id == id).unwrap();
    assert_eq!(week.rows.len(), 3);
    let salt = row("salt-substitutes-shadow");
    assert_eq!(salt.would_stop, Some((3, Decision::StopConverged)));
    assert_eq!(salt.rounds_run, 6);
    assert_eq!(salt.tokens_saved, 2 * (400 + 500 + 600));
    assert_eq!((salt.agreed, salt.labels), (1, 2));
    let panel = row("wastewater-panel-city");
    assert_eq!((panel.would_stop, panel.tokens_saved), (None, 0));
    let replication = row("replication-crisis-causes");
    assert_eq!(replication.would_stop, Some((8, Decision::StopMaxRounds)));
    assert_eq!(
        replication.tokens_saved, 0,
        "stopping at the last round saves nothing"
    );
    assert_eq!(week.tokens_saved, 3000);
    assert_eq!(week.tokens, week.rows.iter().map(|r| r.tokens).sum::<u64>());
    assert_eq!(week.agreement(), Some(0.5));
    assert_eq!(
        week.stopped_early(),
        1,
        "a stop at the last round is not early"
    );
}

#[test]
fn the_detail_views_show_the_rows_values() {
    let (mut model, _) = demo_model();
    select(&mut model, "fmt-melanoma-pd1");
    update(&mut model, char('3'));
    update(&mut model, key(KeyCode::Home));
    let judge = common::screen(&model);
    assert!(judge.contains("3 PMIDs cited, 1 not verified"), "{judge}");
    assert!(judge.contains("33303685 ✓ verified"));

    update(&mut model, char('1'));
    update(&mut model, key(KeyCode::Down));
    assert_eq!(model.selected_round(), Some(2));
    update(&mut model, key(KeyCode::Enter));
    let transcript = common::screen(&model);
    assert!(
        transcript.contains("superseded, replaced by oncologist"),
        "{transcript}"
    );
    assert!(transcript.contains("replaces domain_expert"));

    select(&mut model, "sepsis-ml-replacement");
    update(&mut model, char('4'));
    let trace = common::screen(&model);
    let ending = gavel::audit::Trace::of(model.selected_debate().unwrap()).ending;
    assert!(trace.contains(&ending), "{ending}\n{trace}");

    select(&mut model, "wastewater-panel-city");
    update(&mut model, char('5'));
    for _ in 0..10 {
        update(&mut model, key(KeyCode::Down));
    }
    let panel = common::screen(&model);
    assert!(panel.contains(" empirical "), "{panel}");
    assert!(panel.contains(" values "));
    assert!(panel.contains(" definition "));
    for _ in 0..5 {
        update(&mut model, key(KeyCode::Down));
    }
    let shifts = common::screen(&model);
    assert!(
        shifts.contains(
            "civil_libertarian     treatment plants only → deploy with safeguards  shifted"
        ),
        "{shifts}"
    );
    assert!(
        shifts.contains(
            "ethicist              deploy with safeguards → deploy with safeguards  held"
        )
    );

    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('5'));
    let extended = common::screen(&model);
    assert!(
        extended.contains("complexity 0.72 · agents 5 · cost $0.29 of $3.00 (10%)"),
        "{extended}"
    );
}

/// Whether `text` shows persona `p<n>` (marked `+` as one who joined after round 1).
fn shows_persona(text: &str, n: u32) -> bool {
    text.contains(&format!(" p{n} ")) || text.contains(&format!("+p{n} "))
}

/// The screen row showing persona `p<n>`, if any.
fn row_of(screen: &str, n: u32) -> Option<u16> {
    screen
        .lines()
        .position(|line| shows_persona(line, n))
        .map(|at| at as u16)
}

/// The lowest round whose persona `p<n>` is on screen.
fn first_round_shown(screen: &str) -> u32 {
    (1..=200)
        .find(|&n| shows_persona(screen, n))
        .expect("a round on screen")
}

#[test]
fn a_long_debate_moves_its_rounds_table_half_a_table_at_a_time_and_clicks_follow() {
    use gavel::domain::{Session, Turn};
    let mut model = Model::new("demo".into(), "alice".into(), &Config::default());
    model.settings.mouse = true;
    update(&mut model, Event::Resize(160, 48));
    update(
        &mut model,
        Event::Store(Box::new(Change::Session(Session::placeholder("long")))),
    );
    let land = |model: &mut Model, round: u32| {
        let turn = Turn {
            id: u64::from(round),
            session_id: "long".into(),
            round_number: round,
            agent_persona: format!("p{round}"),
            content: "VERDICT: yes".into(),
            tokens_used: 10,
            superseded: false,
            metadata: Default::default(),
            created_at: None,
            issues: Vec::new(),
        };
        update(model, Event::Store(Box::new(Change::Turn(turn))));
    };
    let table = gavel::console::ui::areas(&model, ratatui::layout::Rect::new(0, 0, 160, 48)).detail;
    let shown = u32::from(table.height - 3);
    let step = shown / 2;
    let mut firsts = Vec::new();
    for round in 1..=3 * shown {
        land(&mut model, round);
        let screen = common::screen(&model);
        assert!(shows_persona(&screen, round), "the latest round is shown");
        firsts.push(first_round_shown(&screen));
    }
    // The first round shown starts at 1, then moves by half a table, only when it must.
    assert!(
        firsts.iter().all(|first| (first - 1) % step == 0),
        "{firsts:?}"
    );
    let moves = firsts.windows(2).filter(|w| w[0] != w[1]).count() as u32;
    assert_eq!(moves, (3 * shown - shown).div_ceil(step), "{firsts:?}");

    // A click lands on the round drawn in that row.
    let screen = common::screen(&model);
    let first = first_round_shown(&screen);
    let row = row_of(&screen, first + 1).unwrap();
    common::record_frame(&mut model);
    update(
        &mut model,
        mouse(MouseEventKind::Down(MouseButton::Left), 10, row),
    );
    assert_eq!(model.selected_round(), Some(first + 1));
    assert_eq!(
        first_round_shown(&common::screen(&model)),
        first,
        "the table stays put"
    );
}
