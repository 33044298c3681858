//! Frames drawn over the ones before, their panels and their tables' rows kept where they show
//! what they did, leave the terminal as the same frames drawn whole: over turns landing,
//! debates playing on (decisions, judgments, actions, endings), the clock ticking, the
//! selection moving, views and overlays opening and closing, resizes, other consoles claiming
//! decisions, themes changing and the time cursor moving.

use crossterm::event::KeyCode;
use gavel::config::theme::Theme;
use gavel::console::app::{Event, Model, update};
use gavel::console::kept::{Drawn, Kept};
use gavel::console::screen::Screen;
use gavel::domain::{Change, Claim, Peer, Status, Turn};
use gavel::simulate::DebateRun;
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use crate::common::{char, demo_model, key, record_frame};

#[derive(Debug, Clone)]
enum Step {
    /// A turn lands in the bundled debate `n` (of the nine), in its latest round or the next,
    /// or `back` rounds before its latest (a persona may then have spoken earlier than it had).
    Lands {
        debate: usize,
        next_round: bool,
        back: u32,
    },
    /// The bundled debate `n`'s last turn is written again in its first round.
    Moves(usize),
    /// The bundled debate `n` plays on: its waiting decision resolved as its wait running out
    /// would, else its next round played.
    Plays(usize),
    /// The clock moves on by so many seconds.
    Tick(i64),
    Key(KeyCode),
    Resize(u16, u16),
    /// Another console claims the bundled debate `n`'s pending decision, or lets go of every
    /// claim.
    Claims(Option<usize>),
    /// A bundled theme applies.
    Theme(&'static str),
}

fn step() -> impl Strategy<Value = Step> {
    let keys = prop::sample::select(vec![
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::Down,
        KeyCode::Up,
        KeyCode::Tab,
        KeyCode::Char('1'),
        KeyCode::Char('2'),
        KeyCode::Char('5'),
        KeyCode::Char('s'),
        KeyCode::Char('/'),
        KeyCode::Char('?'),
        KeyCode::Char(':'),
        KeyCode::Esc,
        KeyCode::Enter,
        KeyCode::PageDown,
        KeyCode::End,
        KeyCode::Char('['),
        KeyCode::Char(']'),
    ]);
    prop_oneof![
        6 => (0..9usize, any::<bool>(), prop_oneof![3 => Just(0u32), 1 => 1..4u32])
            .prop_map(|(debate, next_round, back)| Step::Lands { debate, next_round, back }),
        1 => (0..9usize).prop_map(Step::Moves),
        4 => (0..9usize).prop_map(Step::Plays),
        2 => (1..90i64).prop_map(Step::Tick),
        6 => keys.prop_map(Step::Key),
        1 => prop::sample::select(vec![(160, 48), (100, 30), (80, 24)])
            .prop_map(|(width, height)| Step::Resize(width, height)),
        2 => prop::option::of(0..9usize).prop_map(Step::Claims),
        1 => prop::sample::select(vec!["dark", "light", "high-contrast"]).prop_map(Step::Theme),
    ]
}

/// The events `step` makes of the console `model` and the bundled debates' `runs`; `next_id`
/// numbers the turns landing, `now` is the clock.
fn events(
    model: &Model,
    runs: &mut [DebateRun],
    step: &Step,
    next_id: &mut u64,
    now: &mut chrono::DateTime<chrono::Utc>,
) -> Vec<Event> {
    let event = match *step {
        Step::Plays(debate) => {
            let run = &mut runs[debate % runs.len()];
            let changes = match run.timeout_action() {
                Some(action) => run.resolve(&action),
                None if run.is_finished() => Vec::new(),
                None => run.play_round(),
            };
            return changes
                .into_iter()
                .map(|change| Event::Store(Box::new(change)))
                .collect();
        }
        Step::Tick(seconds) => {
            *now += chrono::Duration::seconds(seconds);
            Event::Tick(*now)
        }
        Step::Moves(debate) => {
            let seq = debate.min(model.debates.len().saturating_sub(1)) as u64;
            let held = model.held(seq).expect("a bundled debate");
            let Some(last) = held.turns.iter().max_by_key(|t| t.id) else {
                return Vec::new();
            };
            let mut moved = last.clone();
            moved.round_number = 1;
            moved.content.push_str(" (moved)");
            Event::Store(Box::new(Change::Turn(moved)))
        }
        Step::Lands {
            debate,
            next_round,
            back,
        } => {
            let seq = debate.min(model.debates.len().saturating_sub(1)) as u64;
            let held = model.held(seq).expect("a bundled debate");
            *next_id += 1;
            let round = (held.latest_round() + u32::from(next_round))
                .saturating_sub(back)
                .max(1);
            Event::Store(Box::new(Change::Turn(Turn {
                id: *next_id,
                session_id: held.session.id.clone(),
                round_number: round,
                agent_persona: format!("persona{}", *next_id % 3),
                content: "Landing now. VERDICT: yes".into(),
                tokens_used: 120,
                superseded: false,
                metadata: Default::default(),
                created_at: Some(chrono::Utc::now()),
                issues: Vec::new(),
            })))
        }
        Step::Key(KeyCode::Char(c)) => char(c),
        Step::Key(code) => key(code),
        Step::Resize(width, height) => Event::Resize(width, height),
        Step::Claims(debate) => {
            let claimed = debate.and_then(|n| {
                let summary = model.debates.get(n.min(model.debates.len() - 1) as u64)?;
                Some(Claim {
                    session_id: summary.id.to_string(),
                    round: summary.pending()?,
                })
            });
            Event::Presence(vec![Peer {
                console: 7,
                role: "bob".into(),
                status: Status {
                    operator: "alice".into(),
                    looking: claimed.as_ref().map(|c| c.session_id.clone()),
                    claim: claimed,
                    editing: None,
                },
                since: Some(*now),
                claimed_at: Some(*now),
            }])
        }
        Step::Theme(name) => Event::Theme(Ok(Box::new(Theme::bundled(name).unwrap()))),
    };
    vec![event]
}

/// `model` drawn on `screen` (as the draw loop draws a frame).
fn draw(screen: &mut Screen<std::io::Sink>, model: &mut Model) {
    record_frame(model);
    let (width, height) = model.screen.size;
    screen
        .draw(Rect::new(0, 0, width, height), |frame, kept| {
            gavel::console::ui::view(model, frame, kept)
        })
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn frames_drawn_over_the_ones_before_show_what_frames_drawn_whole_show(
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let (mut model, mut runs) = demo_model();
        let mut now = chrono::Utc::now();
        update(&mut model, Event::Resize(160, 48));
        let area = Rect::new(0, 0, 160, 48);
        let mut kept = Screen::of(std::io::sink(), area).unwrap();
        let mut next_id = 1_000_000;
        for step in &steps {
            for event in events(&model, &mut runs, step, &mut next_id, &mut now) {
                update(&mut model, event);
            }
            model.prepare_frame();
            draw(&mut kept, &mut model);
            let (width, height) = model.screen.size;
            let mut whole = Screen::of(std::io::sink(), Rect::new(0, 0, width, height)).unwrap();
            draw(&mut whole, &mut model);
            prop_assert_eq!(kept.shown(), whole.shown(), "after {:?}", step);
        }
    }
}

/// What a frame of `model` draws anew over the frame before, `kept` holding that frame's
/// regions.
fn drawn_anew(model: &mut Model, kept: &mut Kept) -> Drawn {
    model.prepare_frame();
    record_frame(model);
    let (width, height) = model.screen.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| {
            gavel::console::ui::view(model, frame, kept);
        })
        .unwrap();
    kept.finish()
}

#[test]
fn a_frame_draws_only_what_changed() {
    let (mut model, mut runs) = demo_model();
    update(&mut model, Event::Resize(160, 48));
    let mut kept = Kept::default();
    drawn_anew(&mut model, &mut kept);
    assert_eq!(
        drawn_anew(&mut model, &mut kept),
        Drawn::Within(Vec::new()),
        "nothing changed, nothing drawn"
    );

    // A turn opens the next round of a debate that is not the one selected: its row in the
    // list says so, and nothing else changes.
    let selected = model.nav.selected.unwrap();
    let elsewhere = (0..9).find(|&n| n != selected as usize).unwrap();
    let lands = Step::Lands {
        debate: elsewhere,
        next_round: true,
        back: 0,
    };
    let (mut next_id, mut now) = (2_000_000, chrono::Utc::now());
    for event in events(&model, &mut runs, &lands, &mut next_id, &mut now) {
        update(&mut model, event);
    }
    let list = gavel::console::ui::areas(&model, Rect::new(0, 0, 160, 48)).list;
    match drawn_anew(&mut model, &mut kept) {
        Drawn::Within(anew) => {
            assert_eq!(anew.len(), 1, "{anew:?}");
            assert!(
                anew[0].height == 1 && list.union(anew[0]) == list,
                "{anew:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}
