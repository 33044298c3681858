//! `cargo bench --bench frame`: what one frame of the console costs at 200x60 with 10 debates
//! held (the baseline), with 100,000, and with two databases of 50,000 each (the same ids in
//! both, every one shown: the list's context column), drawn on the console's own screen (crossterm)
//! into a sink: the whole screen anew in the views an operator uses most, and the frame after a
//! round lands in the selected debate (the table scrolls), and after one lands in another debate
//! listed (its row alone changes: what a live marker's frame costs); and what filing a row costs. Prints
//! a table of medians and p99s and the ratio to the baseline; nothing is asserted (a bench, not
//! a timed test). With `GAVEL_BENCH_COLD=1`, the caches are flushed before each frame timed (64
//! MiB written over): a frame as a live console meets it, a row landing long after the last.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use gavel::config::Config;
use gavel::console::app::{Context, Contexts, Event, Link, Model, SortOrder, update};
use gavel::console::reports::ReportsWorker;
use gavel::console::screen::Screen;
use gavel::domain::{
    Change, ControllerDecision, ControllerMode, Decision, Reported, Session, SessionStatus,
    Signals, Turn,
};

const FRAMES: usize = 400;

fn main() {
    // Each size is a count of debates held, or CxN: C databases of N debates each.
    let sizes: Vec<String> = std::env::var("GAVEL_BENCH_HELD")
        .map(|raw| raw.split(',').map(|n| n.trim().to_owned()).collect())
        .unwrap_or_else(|_| vec!["10".into(), "100000".into(), "2x50000".into()]);
    println!("frame cost at 200x60 ({FRAMES} frames each; median / p99)");
    println!(
        "{:<34} {:>9} {:>16} {:>16} {:>8}",
        "view", "held", "median", "p99", "ratio"
    );
    let mut baseline: Vec<Duration> = Vec::new();
    for (n, held) in sizes.iter().enumerate() {
        let (contexts, each) = match held.split_once('x') {
            Some((contexts, each)) => (contexts.parse().expect("a count"), each),
            None => (1, held.as_str()),
        };
        let (mut model, filing) = fleet(contexts, each.parse().expect("a count"));
        for (i, (name, setup)) in views().into_iter().enumerate() {
            setup(&mut model);
            let (median, p99) = match name {
                SELECTED => landing(&mut model, Landing::Selected),
                ANOTHER => landing(&mut model, Landing::Another),
                _ => frames(&mut model),
            };
            if n == 0 {
                baseline.push(median);
            }
            let ratio = median.as_secs_f64() / baseline[i].as_secs_f64();
            println!(
                "{name:<34} {held:>9} {:>16} {:>16} {ratio:>7.2}x",
                format!("{median:.1?}"),
                format!("{p99:.1?}")
            );
        }
        println!(
            "{:<34} {held:>9} {:>16}",
            "filing one row (update)",
            format!("{filing:.2?}")
        );
    }
}

type Setup = fn(&mut Model);

/// The views timed, each set up from the previous one.
fn views() -> Vec<(&'static str, Setup)> {
    vec![
        ("debates + rounds (arrival order)", |_| {}),
        ("debates + rounds (pending first)", |m| {
            m.set_sort(SortOrder::PendingFirst)
        }),
        ("debates filtered (/running)", |m| {
            m.set_sort(SortOrder::Arrival);
            m.set_filter("running".to_owned());
        }),
        ("transcript", |m| {
            m.set_filter(String::new());
            update(m, Event::Key(crossterm::event::KeyCode::Char('2').into()));
        }),
        (SELECTED, |m| {
            update(m, Event::Key(crossterm::event::KeyCode::Char('1').into()));
        }),
        (ANOTHER, |_| {}),
    ]
}

const SELECTED: &str = "a round lands in the selected one";
const ANOTHER: &str = "a round lands in another listed";

/// Where the rounds land.
enum Landing {
    /// In the selected debate: its rounds table follows them.
    Selected,
    /// In the first debate listed, not the selected one.
    Another,
}

/// The area frames are drawn in.
const AREA: ratatui::layout::Rect = ratatui::layout::Rect::new(0, 0, 200, 60);

fn screen() -> Screen<std::io::Sink> {
    Screen::of(std::io::sink(), AREA).unwrap()
}

/// The median and p99 of the frame after each of `FRAMES` rounds lands in a debate, one turn
/// each, as a live debate's do: in the selected debate, the rounds table follows the latest.
fn landing(model: &mut Model, into: Landing) -> (Duration, Duration) {
    let id = match into {
        Landing::Selected => model.selected_debate().unwrap().session.id.clone(),
        Landing::Another => {
            let first = model.debates.window(None, 1).rows[0];
            model.debates.get(first).unwrap().id.to_string()
        }
    };
    let ids = match into {
        Landing::Selected => 900_000_000,
        Landing::Another => 950_000_000,
    };
    let mut n = 0u32;
    timed(model, |model, _| {
        let seq = model.debates.seq(&id).unwrap();
        let first = model.debates.get(seq).unwrap().latest_round + 1;
        let mut turn = turn(&id, ids + u64::from(n), first, "theorist");
        turn.content = "VERDICT: yes".into();
        update(model, Event::Store(Box::new(Change::Turn(turn))));
        n += 1;
    })
}

/// The median and p99 of drawing the whole screen anew (after a blank one), `FRAMES` times.
fn frames(model: &mut Model) -> (Duration, Duration) {
    timed(model, |_, screen| {
        screen.draw(AREA, |_, _| None).unwrap();
    })
}

/// The median and p99 of `FRAMES` frames, each drawn after `before` (not timed).
fn timed(
    model: &mut Model,
    mut before: impl FnMut(&mut Model, &mut Screen<std::io::Sink>),
) -> (Duration, Duration) {
    let mut screen = screen();
    screen
        .draw(AREA, |frame, kept| {
            gavel::console::ui::view(model, frame, kept)
        })
        .unwrap();
    let mut flush = std::env::var_os("GAVEL_BENCH_COLD").map(|_| vec![0u8; 64 << 20]);
    let mut times: Vec<Duration> = (0..FRAMES)
        .map(|_| {
            before(model, &mut screen);
            model.prepare_frame();
            if let Some(flush) = &mut flush {
                // Every cache line written, so that what the frame reads comes from memory.
                for line in flush.chunks_mut(64) {
                    line[0] = line[0].wrapping_add(1);
                }
                black_box(&flush);
            }
            let started = Instant::now();
            screen
                .draw(AREA, |frame, kept| {
                    gavel::console::ui::view(black_box(model), frame, kept)
                })
                .unwrap();
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// A console holding `held` debates in each of `contexts` databases (the same ids in each;
/// one database: no contexts), most finished, a tenth running with a decision pending, the one
/// in the middle selected; and the mean cost of filing one of their rows.
fn fleet(contexts: u16, held: usize) -> (Model, Duration) {
    let config = Config::default();
    let mut model = Model::new("bench".into(), "alice".into(), &config);
    if contexts > 1 {
        model.live.contexts = Contexts::new(
            (0..contexts)
                .map(|c| Context::new(format!("db-{c}"), false, None))
                .collect(),
        );
        for ctx in 0..contexts {
            update(
                &mut model,
                Event::In(ctx, Box::new(Event::Link(Link::Live))),
            );
        }
    }
    let mut reports = ReportsWorker::of(&config);
    update(&mut model, Event::Resize(200, 60));
    let started = Instant::now();
    let mut rows = 0u32;
    for n in 0..held {
        for ctx in 0..contexts {
            for change in debate(n, n % 10 == 0) {
                let row = Event::Store(Box::new(change));
                let event = match contexts {
                    1 => row,
                    _ => Event::In(ctx, Box::new(row)),
                };
                update(&mut model, event);
                reports.relieve(&mut model);
                rows += 1;
            }
        }
    }
    let filing = started.elapsed() / rows.max(1);
    // The reports' worker catches up first, so that it does not share the cores with frames.
    reports.catch_up(&mut model);
    let middle = model
        .debates
        .seq(&format!("debate-{:06}", held / 2))
        .unwrap();
    model.select(middle);
    (model, filing)
}

/// One debate's rows: its session, 3 rounds of 2 turns and a decision each.
fn debate(n: usize, running: bool) -> Vec<Change> {
    let id = format!("debate-{n:06}");
    let status = if running {
        SessionStatus::Running
    } else {
        SessionStatus::Completed
    };
    let mut session = Session::placeholder(&id);
    session.question = format!("Does intervention {n} change the outcome at twelve months?");
    session.controller_mode = Reported::Known(ControllerMode::Gated);
    session.max_rounds = 8;
    session.personas = vec!["theorist".into(), "skeptic".into()];
    let mut rows = vec![Change::Session(session.clone())];
    for round in 1..=3u32 {
        for (k, persona) in ["theorist", "skeptic"].iter().enumerate() {
            let mut turn = turn(
                &id,
                (n * 10 + round as usize * 2 + k) as u64,
                round,
                persona,
            );
            turn.content = format!("Round {round}: the evidence on {n} says... VERDICT: yes");
            rows.push(Change::Turn(turn));
        }
        rows.push(Change::Decision(ControllerDecision {
            session_id: id.clone(),
            round_index: round,
            decision: Reported::Known(Decision::ContinueBaseline),
            signals: Signals::default(),
            decided_at: Some(Utc::now()),
            issues: Vec::new(),
        }));
    }
    session.status = Reported::Known(status);
    rows.push(Change::Session(session));
    rows
}

fn turn(session_id: &str, id: u64, round_number: u32, persona: &str) -> Turn {
    Turn {
        id,
        session_id: session_id.to_owned(),
        round_number,
        agent_persona: persona.to_owned(),
        content: String::new(),
        tokens_used: 400,
        superseded: false,
        metadata: Default::default(),
        created_at: Some(Utc::now()),
        issues: Vec::new(),
    }
}
