//! Whole-screen snapshots of every view of the console at 160x48 and at a small 80x24, and a
//! check that hostile debate content cannot reach the terminal as control sequences.

use crate::common;

use common::{char, demo_model, demo_reporting, key, select};
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Event, Model, update};
use gavel::console::reports::ReportsWorker;
use gavel::domain::{Change, Reported};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::draw as screen_at;

fn screen(model: &Model) -> Terminal<TestBackend> {
    screen_at(model, 160, 48)
}

/// Snapshots `model` as `name` at 160x48 and as `name_small` at 80x24.
fn snapshot_both(name: &str, model: &Model) {
    insta::assert_snapshot!(name, screen_at(model, 160, 48).backend());
    insta::assert_snapshot!(format!("{name}_small"), screen_at(model, 80, 24).backend());
}

#[test]
fn main_screen_with_a_pending_gated_decision() {
    let (model, _) = demo_model();
    snapshot_both("main_pending", &model);
}

#[test]
fn rounds_of_an_escalated_debate() {
    let (mut model, _) = demo_model();
    select(&mut model, "als-phase3-subgroup");
    update(&mut model, key(KeyCode::Enter));
    snapshot_both("rounds_escalation", &model);
}

#[test]
fn help_overlay() {
    let (mut model, _) = demo_model();
    update(&mut model, char('?'));
    snapshot_both("help", &model);
}

/// The demo's model and the reports worker that saw its rows, the calibration window open and
/// its figures and the cursor's debates in, as the run loop would bring them.
fn open_calibration() -> (Model, ReportsWorker) {
    let (mut model, _, mut reports) = demo_reporting(&Config::default());
    update(&mut model, char('c'));
    reports.catch_up(&mut model);
    (model, reports)
}

#[test]
fn calibration_over_the_finished_demo_debates() {
    let (model, _) = open_calibration();
    let figures = model.reports.figures();
    let report = &figures.calibration;
    // Seven demo debates finish without an operator; the two gated ones wait.
    assert_eq!(report.debates, 7);
    // The shadow-week debate: the setting in force would stop it at round 3 and save rounds
    // 4..6, flipping its verdict; its two operator labels both said continue.
    let current = report.rows.iter().find(|r| r.current).unwrap();
    assert_eq!(current.verdict_flips, 1);
    assert_eq!(current.tokens_saved, 2 * (400 + 500 + 600));
    assert_eq!((current.labels_agreed, current.labels), (1, 2));
    assert_eq!(report.rows.iter().filter(|r| r.current).count(), 1);
    snapshot_both("calibration", &model);
}

#[test]
fn calibration_cursor_walks_the_frontier_and_lists_its_debates() {
    let (mut model, mut reports) = open_calibration();
    let figures = model.reports.figures();
    let frontier: Vec<_> = figures
        .calibration
        .frontier()
        .into_iter()
        .map(|r| r.setting.clone())
        .collect();
    assert_eq!(frontier.len(), 12, "every demo setting is on the frontier");
    let selected = figures
        .selected
        .clone()
        .expect("the cursor's setting replayed");
    assert_eq!(selected.setting, frontier[0]);
    assert_eq!(
        selected.verdict_flips, 0,
        "the frontier starts at the fewest flips"
    );
    assert_eq!(selected.outcomes.as_ref().unwrap().len(), 7);

    // To the frontier's end: the most tokens saved; past it, the cursor stays.
    for _ in 0..20 {
        update(&mut model, char('>'));
    }
    reports.catch_up(&mut model);
    let selected = model.reports.figures().selected.clone().unwrap();
    assert_eq!(selected.setting, frontier[11]);
    let outcomes = selected.outcomes.as_ref().unwrap();
    let salt = outcomes
        .iter()
        .find(|o| o.session_id == "salt-substitutes-shadow")
        .unwrap();
    assert_eq!((salt.rounds_used, salt.tokens_saved), (3, 3_000));
    assert!(salt.verdict_flip);
    snapshot_both("calibration_cursor", &model);

    update(&mut model, char('<'));
    reports.catch_up(&mut model);
    assert_eq!(
        model.reports.figures().selected.clone().unwrap().setting,
        frontier[10]
    );
    update(&mut model, key(KeyCode::Tab));
    snapshot_both("calibration_settings", &model);
}

#[test]
fn the_calibration_charts_marks_differ_by_symbol_and_by_colour_in_every_theme() {
    let (mut model, _) = open_calibration();
    for name in gavel::config::theme::bundled_names() {
        let theme = gavel::config::theme::Theme::bundled(name).unwrap();
        update(&mut model, Event::Theme(Ok(Box::new(theme.clone()))));
        let terminal = screen_at(&model, 80, 24);
        let buffer = terminal.backend().buffer();
        let cells: Vec<_> = buffer.content().iter().collect();
        let colour_of = |symbol: &str| {
            cells
                .iter()
                .find(|c| c.symbol() == symbol)
                .unwrap_or_else(|| panic!("{name}: no {symbol} on screen"))
                .fg
        };
        // The setting in force on the chart; the legend's symbols in their series' colours.
        assert_eq!(colour_of("█"), theme.roles.in_force.unwrap().0, "{name}");
        assert_eq!(colour_of("▄"), theme.roles.closest.unwrap().0, "{name}");
        assert_eq!(colour_of("•"), theme.roles.muted.0, "{name}");
        assert_eq!(colour_of("┼"), theme.roles.text.0, "{name}");
    }
}

#[test]
fn shadow_week_rollup() {
    let (mut model, _, mut reports) = demo_reporting(&Config::default());
    update(&mut model, char('w'));
    reports.catch_up(&mut model);
    snapshot_both("shadow_week", &model);
}

#[test]
fn override_chooser_and_confirmation() {
    let (mut model, _) = demo_model();
    update(&mut model, char('o'));
    snapshot_both("override_chooser", &model);
    update(&mut model, key(KeyCode::Enter));
    snapshot_both("override_confirm", &model);
}

#[test]
fn transcript_with_a_superseded_turn_and_a_warning() {
    let (mut model, _) = demo_model();
    select(&mut model, "fmt-melanoma-pd1");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Up));
    update(&mut model, key(KeyCode::Enter));
    snapshot_both("transcript", &model);
}

#[test]
fn judge_view_with_unverified_pmids() {
    let (mut model, _) = demo_model();
    select(&mut model, "fmt-melanoma-pd1");
    update(&mut model, char('3'));
    update(&mut model, key(KeyCode::Home));
    snapshot_both("judge", &model);
}

#[test]
fn trace_view_of_a_debate_stopped_for_safety() {
    let (mut model, _) = demo_model();
    select(&mut model, "sepsis-ml-replacement");
    update(&mut model, char('4'));
    update(&mut model, key(KeyCode::Home));
    snapshot_both("trace", &model);
}

#[test]
fn format_view_of_a_panel() {
    let (mut model, _) = demo_model();
    select(&mut model, "wastewater-panel-city");
    update(&mut model, char('5'));
    snapshot_both("format_panel", &model);
}

#[test]
fn format_view_of_an_extended_debate() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    update(&mut model, char('5'));
    snapshot_both("format_extended", &model);
}

#[test]
fn filtered_list_and_the_filter_prompt() {
    let (mut model, _) = demo_model();
    update(&mut model, char('/'));
    for c in "shadow".chars() {
        update(&mut model, char(c));
    }
    snapshot_both("filter", &model);
}

#[test]
fn command_prompt() {
    let (mut model, _) = demo_model();
    update(&mut model, char(':'));
    for c in "salt".chars() {
        update(&mut model, char(c));
    }
    snapshot_both("command", &model);
}

#[test]
fn read_only_console_and_its_unlock() {
    let (mut model, _) = demo_model();
    model.settings.read_only = true;
    snapshot_both("read_only", &model);
    update(&mut model, char('U'));
    snapshot_both("unlock", &model);
}

#[test]
fn hostile_content_is_rendered_inert() {
    let (mut model, runs) = demo_model();
    let mut session = runs[0].session().clone();
    session.id = "evil\u{1b}[2J".into();
    session.question = "Topic\u{1b}]0;owned\u{7} with \u{9b}31m C1 and \u{202e}reversed".into();
    session.status = Reported::Unknown("exploded".into());
    update(
        &mut model,
        Event::Store(Box::new(Change::Session(session.clone()))),
    );
    let mut decision = model.held(0).unwrap().latest_decision().unwrap().clone();
    decision.session_id = session.id.clone();
    decision.decision = Reported::Unknown("stop_\u{1b}[31mnow".into());
    decision.signals.similarity = Some(f64::NAN);
    decision.signals.reasons = vec!["line\nbreak\rreturn\u{7f}".into()];
    update(
        &mut model,
        Event::Store(Box::new(Change::Decision(decision))),
    );
    let mut turn = model.held(0).unwrap().turns[0].clone();
    turn.id = 999_999;
    turn.session_id = session.id.clone();
    turn.content = format!("\u{1b}[1;1H\u{1b}[2Jcleared?\t{}", "x".repeat(50_000));
    update(&mut model, Event::Store(Box::new(Change::Turn(turn))));
    select(&mut model, &session.id);
    let main = screen(&model);
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Enter));
    let detail = screen(&model);
    model.nav.detail_scroll = 130;
    let tail = screen(&model);
    update(&mut model, char('3'));
    let judge = screen(&model);
    update(&mut model, char('4'));
    let trace = screen(&model);
    update(&mut model, char('5'));
    let format = screen(&model);
    for terminal in [&main, &detail, &tail, &judge, &trace, &format] {
        let buffer = terminal.backend().buffer();
        for cell in buffer.content() {
            assert!(
                !cell.symbol().chars().any(|c| c.is_control()),
                "a control character reached the screen: {:?}",
                cell.symbol()
            );
        }
    }
    let text = main.backend().to_string();
    assert!(text.contains("evil␛[2J"), "escape shown as a picture");
    assert!(text.contains("unknown(exploded)"));
    assert!(text.contains("unknown(stop_␛[31mnow)"));
    assert!(text.contains("NaN"));
    assert!(detail.backend().to_string().contains("␛[1;1H␛[2Jcleared?"));
    assert!(
        tail.backend()
            .to_string()
            .contains("more characters not shown")
    );
}

#[test]
fn a_gated_decision_counting_down_and_its_confirmation_with_a_long_note() {
    let (mut model, _) = demo_model();
    let start = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    update(&mut model, Event::Tick(start));
    update(
        &mut model,
        Event::Tick(start + chrono::Duration::seconds(18)),
    );
    snapshot_both("countdown", &model);
    update(&mut model, char('a'));
    update(&mut model, char('n'));
    let note = "Checked the cited trials by hand: the two PMIDs the skeptic flagged are real, \
                the effect sizes match the abstracts, and the synthesizer's summary is fair. \
                Stopping here saves two rounds.";
    for c in note.chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Enter));
    snapshot_both("confirm_long_note", &model);
}

#[test]
fn a_confirmation_closed_because_another_operator_resolved_its_decision() {
    let (mut model, _) = demo_model();
    update(&mut model, char('a'));
    let pending = model.selected_debate().unwrap().pending().unwrap().clone();
    let theirs = gavel::domain::OperatorAction {
        operator: "bob".into(),
        ..common::rows::action(
            &pending.session_id,
            pending.round_index,
            gavel::domain::ActionKind::Override,
            gavel::domain::Decision::StopConverged.into(),
        )
    };
    update(&mut model, Event::Store(Box::new(Change::Action(theirs))));
    snapshot_both("closed_elsewhere", &model);
}

#[test]
fn command_prompt_with_its_completions() {
    let (mut model, _) = demo_model();
    update(&mut model, char(':'));
    for c in "mode ".chars() {
        update(&mut model, char(c));
    }
    update(&mut model, key(KeyCode::Tab));
    update(&mut model, key(KeyCode::Tab));
    update(&mut model, key(KeyCode::Tab));
    insta::assert_snapshot!(
        "command_completion_small",
        screen_at(&model, 80, 24).backend()
    );
}

#[test]
fn note_editor_with_a_long_note() {
    let (mut model, _) = demo_model();
    update(&mut model, char('a'));
    update(&mut model, char('n'));
    let note = "The skeptic's objection about the insulin clamp protocol was answered in round 1 \
                by the domain expert; the synthesizer already folds it in. Continuing costs another \
                round of tokens for no new claim, but the theorist asked for one more look at the \
                fasting window, so accept and let the next round decide. Checked with ana.";
    for c in note.chars() {
        update(&mut model, char(c));
    }
    for _ in 0..30 {
        update(&mut model, key(KeyCode::Left));
    }
    insta::assert_snapshot!("note_editor_small", screen_at(&model, 80, 24).backend());
}

#[test]
fn list_markers_late_and_advisory() {
    use gavel::domain::ControllerMode;
    let (mut model, _) = demo_model();
    let mut fixture = common::fixture("never_converges");
    fixture.session.id = "replication-enabled".into();
    fixture.session.controller_mode = ControllerMode::Enabled;
    let mut run = gavel::simulate::DebateRun::new(
        fixture,
        std::sync::Arc::new(gavel::config::Config::default()),
        gavel::simulate::Ids::default(),
    );
    for change in common::play(&mut run, 2) {
        update(&mut model, Event::Store(Box::new(change)));
    }
    // The gated waits ran out and the orchestrator's timeout has not landed yet.
    let at = |s: i64| chrono::DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
    update(&mut model, Event::Tick(at(0)));
    update(&mut model, Event::Tick(at(120)));
    snapshot_both("markers", &model);
}
