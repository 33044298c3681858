//! `cargo bench --bench time_travel`: what one step of the time cursor costs on a 500-round
//! debate (5 turns of ~1.5 kB a round, a judgment per turn, a decision a round), against the
//! baseline of one frame of the same console drawn whole, after a blank one (rounds view,
//! 200x60, drawn by crossterm into a sink). A step is `[` or `]` through `update` (the debate as it stood, moved along from the
//! rows held; the first step from live copies them) plus the frame after it: the console's
//! first step, the first step from live 20 times more (Esc between), then 499 steps back and
//! 499 forward. Prints medians and p99s and the ratio to the frame; nothing is
//! asserted.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use crossterm::event::KeyCode;
use gavel::config::Config;
use gavel::console::app::{Event, Model, update};
use gavel::console::reports::ReportsWorker;
use gavel::console::screen::Screen;
use gavel::domain::{
    Change, ControllerDecision, ControllerMode, Decision, JudgeDecision, Judgment, Reported,
    Session, SessionStatus, Signals, Turn,
};

const ROUNDS: u32 = 500;
/// How many times the first step from live (a copy of the debate) is measured.
const FROM_LIVE: usize = 20;
const PERSONAS: [&str; 5] = ["theorist", "skeptic", "expert", "synthesizer", "clinician"];

fn main() {
    let config = Config::default();
    let mut model = Model::new("bench".into(), "alice".into(), &config);
    let mut reports = ReportsWorker::of(&config);
    update(&mut model, Event::Resize(200, 60));
    for change in debate() {
        update(&mut model, Event::Store(Box::new(change)));
    }
    reports.catch_up(&mut model);
    let area = ratatui::layout::Rect::new(0, 0, 200, 60);
    let mut screen = Screen::of(std::io::sink(), area).unwrap();
    // A frame's time, drawn whole (after a blank frame, not timed) or over the one before.
    let mut draw = |model: &mut Model, whole: bool| {
        if whole {
            screen.draw(area, |_, _| None).unwrap();
        }
        model.prepare_frame();
        let started = Instant::now();
        screen
            .draw(area, |frame, kept| {
                gavel::console::ui::view(black_box(model), frame, kept)
            })
            .unwrap();
        started.elapsed()
    };
    draw(&mut model, true);
    let frames: Vec<Duration> = (0..ROUNDS).map(|_| draw(&mut model, true)).collect();
    let mut steps = Vec::new();
    let mut stepped_frames = Vec::new();
    let mut step = |model: &mut Model, key: char, steps: &mut Vec<Duration>| {
        let started = Instant::now();
        update(model, Event::Key(KeyCode::Char(key).into()));
        steps.push(started.elapsed());
        stepped_frames.push(draw(model, false));
    };
    let (mut very_first, mut first) = (Vec::new(), Vec::new());
    step(&mut model, '[', &mut very_first);
    for _ in 0..FROM_LIVE {
        update(&mut model, Event::Key(KeyCode::Esc.into()));
        step(&mut model, '[', &mut first);
    }
    for _ in 1..ROUNDS {
        step(&mut model, '[', &mut steps);
    }
    assert_eq!(model.nav.past.as_ref().map(|p| p.moment.round), Some(1));
    let mut forward = Vec::new();
    for _ in 1..ROUNDS {
        step(&mut model, ']', &mut forward);
    }
    assert_eq!(
        model.nav.past.as_ref().map(|p| p.moment.round),
        Some(ROUNDS)
    );
    println!(
        "time cursor on a {ROUNDS}-round debate ({} turns held), 200x60; median / p99",
        ROUNDS as usize * PERSONAS.len()
    );
    println!("{:<40} {:>12} {:>12} {:>8}", "", "median", "p99", "ratio");
    let live = median_p99(frames);
    let baseline = live.0;
    for (name, times) in [
        ("frame drawn whole (baseline)", live),
        (
            "the console's first step `[` (update)",
            median_p99(very_first),
        ),
        ("first step `[` from live (update)", median_p99(first)),
        ("step `[` (update)", median_p99(steps)),
        ("step `]` (update)", median_p99(forward)),
        ("frame after a step", median_p99(stepped_frames)),
    ] {
        println!(
            "{name:<40} {:>12} {:>12} {:>7.2}x",
            format!("{:.1?}", times.0),
            format!("{:.1?}", times.1),
            times.0.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}

fn median_p99(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

fn debate() -> Vec<Change> {
    let id = "long-debate";
    let mut session = Session::placeholder(id);
    session.question = "Does a 500-round debate step back as fast as it draws?".into();
    session.controller_mode = Reported::Known(ControllerMode::Shadow);
    session.max_rounds = ROUNDS;
    session.personas = PERSONAS.iter().map(|p| p.to_string()).collect();
    session.token_budget = 100_000_000;
    let mut rows = vec![Change::Session(session.clone())];
    let mut next_id = 0;
    for round in 1..=ROUNDS {
        for persona in PERSONAS {
            next_id += 1;
            rows.push(Change::Turn(Turn {
                id: next_id,
                session_id: id.into(),
                round_number: round,
                agent_persona: persona.into(),
                content: format!(
                    "Round {round}: {} VERDICT: yes",
                    "the evidence says. ".repeat(80)
                ),
                tokens_used: 400,
                superseded: false,
                metadata: Default::default(),
                created_at: Some(Utc::now()),
                issues: Vec::new(),
            }));
            rows.push(Change::Judgment(Judgment {
                id: next_id,
                session_id: id.into(),
                round_index: round,
                agent_persona: persona.into(),
                decision: JudgeDecision::Continue.into(),
                score: Some(0.8),
                reasons: Vec::new(),
                judge_model: None,
                pmids: Vec::new(),
                created_at: Some(Utc::now()),
                issues: Vec::new(),
            }));
        }
        rows.push(Change::Decision(ControllerDecision {
            session_id: id.into(),
            round_index: round,
            decision: Reported::Known(Decision::ContinueBaseline),
            signals: Signals::default(),
            decided_at: Some(Utc::now()),
            issues: Vec::new(),
        }));
    }
    session.status = Reported::Known(SessionStatus::Completed);
    rows.push(Change::Session(session));
    rows
}
