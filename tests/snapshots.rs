//! Whole-screen snapshots of the console at 160x48, and a check that hostile debate content
//! cannot reach the terminal as control sequences.

mod common;

use common::{char, demo_model, key, select};
use crossterm::event::KeyCode;
use gavel::app::{Event, Model, update};
use gavel::domain::{Change, Reported};
use gavel::theme::Theme;
use gavel::ui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn screen(model: &Model) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal
        .draw(|frame| view(model, &Theme::dark(), frame))
        .unwrap();
    terminal
}

#[test]
fn main_screen_with_a_pending_gated_decision() {
    let (model, _) = demo_model();
    insta::assert_snapshot!("main_pending", screen(&model).backend());
}

#[test]
fn rounds_of_an_escalated_debate() {
    let (mut model, _) = demo_model();
    select(&mut model, "als-phase3-subgroup");
    update(&mut model, key(KeyCode::Enter));
    insta::assert_snapshot!("rounds_escalation", screen(&model).backend());
}

#[test]
fn help_overlay() {
    let (mut model, _) = demo_model();
    update(&mut model, char('?'));
    insta::assert_snapshot!("help", screen(&model).backend());
}

#[test]
fn calibration_over_the_finished_demo_debates() {
    let (mut model, _) = demo_model();
    update(&mut model, char('c'));
    let report = model.calibration.report();
    // Seven demo debates finish without an operator; the two gated ones wait.
    assert_eq!(report.debates, 7);
    // The shadow-week debate: the setting in force would stop it at round 3 and save rounds
    // 4..6, flipping its verdict; its two operator labels both said continue.
    let current = report.rows.iter().find(|r| r.current).unwrap();
    assert_eq!(current.verdict_flips, 1);
    assert_eq!(current.tokens_saved, 2 * (400 + 500 + 600));
    assert_eq!((current.labels_agreed, current.labels), (1, 2));
    assert_eq!(report.rows.iter().filter(|r| r.current).count(), 1);
    insta::assert_snapshot!("calibration", screen(&model).backend());
}

#[test]
fn override_chooser_and_confirmation() {
    let (mut model, _) = demo_model();
    update(&mut model, char('o'));
    insta::assert_snapshot!("override_chooser", screen(&model).backend());
    update(&mut model, key(KeyCode::Enter));
    insta::assert_snapshot!("override_confirm", screen(&model).backend());
}

#[test]
fn round_detail_with_a_superseded_turn_and_a_warning() {
    let (mut model, _) = demo_model();
    select(&mut model, "fmt-melanoma-pd1");
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Up));
    update(&mut model, key(KeyCode::Enter));
    insta::assert_snapshot!("round_detail_judge", screen(&model).backend());
}

#[test]
fn hostile_content_is_rendered_inert() {
    let (mut model, runs) = demo_model();
    let mut session = runs[0].session().clone();
    session.id = "evil\u{1b}[2J".into();
    session.question = "Topic\u{1b}]0;owned\u{7} with \u{9b}31m C1 and \u{202e}reversed".into();
    session.status = Reported::Unknown("exploded".into());
    update(&mut model, Event::Store(Change::Session(session.clone())));
    let mut decision = model.debates[0].latest_decision().unwrap().clone();
    decision.session_id = session.id.clone();
    decision.decision = Reported::Unknown("stop_\u{1b}[31mnow".into());
    decision.signals.similarity = Some(f64::NAN);
    decision.signals.reasons = vec!["line\nbreak\rreturn\u{7f}".into()];
    update(&mut model, Event::Store(Change::Decision(decision)));
    let mut turn = model.debates[0].turns[0].clone();
    turn.id = 999_999;
    turn.session_id = session.id.clone();
    turn.content = format!("\u{1b}[1;1H\u{1b}[2Jcleared?\t{}", "x".repeat(50_000));
    update(&mut model, Event::Store(Change::Turn(turn)));
    select(&mut model, &session.id);
    let main = screen(&model);
    update(&mut model, key(KeyCode::Enter));
    update(&mut model, key(KeyCode::Enter));
    let detail = screen(&model);
    let Some(gavel::app::Overlay::Round { number, .. }) = model.overlay else {
        panic!("the round detail is open");
    };
    model.overlay = Some(gavel::app::Overlay::Round {
        number,
        scroll: 130,
    });
    let tail = screen(&model);
    for terminal in [&main, &detail, &tail] {
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
