//! Helpers shared by the integration tests: load a bundled fixture and play it to the end.
#![allow(dead_code)]

pub mod hostile;
pub mod pg;
pub mod rows;
pub mod tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use gavel::config::Config;
use gavel::domain::{
    Change, ControllerDecision, ControllerMode, Decision, Reported, Session, Turn,
};
use gavel::simulate::{DebateRun, Fixture, Ids};

pub fn fixture(name: &str) -> Fixture {
    Fixture::load(std::path::Path::new(&format!("fixtures/{name}.jsonl")))
        .expect("bundled fixture is valid")
}

/// A run of fixture `name` with its mode replaced by `mode`.
pub fn run(name: &str, mode: ControllerMode) -> DebateRun {
    let mut fixture = fixture(name);
    fixture.session.controller_mode = mode;
    DebateRun::new(fixture, Arc::new(Config::default()), Ids::default())
}

/// Every row a run writes until it finishes or `rounds` rounds have been played.
pub fn play(run: &mut DebateRun, rounds: usize) -> Vec<Change> {
    let mut changes = run.start();
    for _ in 0..rounds {
        if run.is_finished() || run.awaiting().is_some() {
            break;
        }
        changes.extend(run.play_round());
    }
    changes
}

pub fn decisions(changes: &[Change]) -> Vec<ControllerDecision> {
    changes
        .iter()
        .filter_map(|c| match c {
            Change::Decision(d) => Some(d.clone()),
            _ => None,
        })
        .collect()
}

pub fn turns(changes: &[Change]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for change in changes {
        if let Change::Turn(turn) = change {
            match turns.iter_mut().find(|t| t.id == turn.id) {
                Some(existing) => *existing = turn.clone(),
                None => turns.push(turn.clone()),
            }
        }
    }
    turns
}

pub fn last_session(changes: &[Change]) -> Session {
    changes
        .iter()
        .rev()
        .find_map(|c| match c {
            Change::Session(s) => Some(s.clone()),
            _ => None,
        })
        .expect("a session row")
}

pub fn known(decision: &ControllerDecision) -> Decision {
    match decision.decision {
        Reported::Known(d) => d,
        Reported::Unknown(ref raw) => panic!("unknown decision {raw}"),
    }
}

use gavel::console::app::{Event, Model, update};
use gavel::console::reports::ReportsWorker;

/// The footer's flash message, or nothing.
pub fn flash(model: &Model) -> String {
    model
        .desk
        .flash
        .as_ref()
        .map_or_else(String::new, |f| f.text.clone())
}

/// The console as the demo shows it once every bundled debate has played as far as it can
/// without an operator: gated debates wait on their first decision, the rest have finished.
pub fn demo_model() -> (Model, Vec<DebateRun>) {
    demo_model_with(&Config::default())
}

/// [`demo_model`] under `config`.
pub fn demo_model_with(config: &Config) -> (Model, Vec<DebateRun>) {
    let (model, runs, _) = demo_reporting(config);
    (model, runs)
}

/// [`demo_model_with`], with the reports worker that saw its rows (as the run loop owns one),
/// for the figures of what happens next.
pub fn demo_reporting(config: &Config) -> (Model, Vec<DebateRun>, ReportsWorker) {
    let mut model = Model::new("demo: 9 recorded debates".into(), "alice".into(), config);
    let mut reports = ReportsWorker::of(config);
    let ids = Ids::default();
    let mut runs = Vec::new();
    for fixture in Fixture::bundled().unwrap() {
        let mut run = DebateRun::new(fixture, Arc::new(Config::default()), ids.clone());
        for change in play(&mut run, 20) {
            update(&mut model, Event::Store(Box::new(change)));
            reports.relieve(&mut model);
        }
        runs.push(run);
    }
    model.prepare_frame();
    reports.catch_up(&mut model);
    (model, runs, reports)
}

/// The full rows of every debate the console holds, in arrival order.
pub fn held_debates(model: &Model) -> Vec<&gavel::domain::Debate> {
    (0..model.debates.len() as u64)
        .filter_map(|seq| model.held(seq))
        .collect()
}

pub fn key(code: crossterm::event::KeyCode) -> Event {
    Event::Key(crossterm::event::KeyEvent::new(
        code,
        crossterm::event::KeyModifiers::NONE,
    ))
}

pub fn char(c: char) -> Event {
    key(crossterm::event::KeyCode::Char(c))
}

pub fn select(model: &mut Model, id: &str) {
    let seq = model.debates.seq(id).expect("debate on screen");
    model.select(seq);
}

/// Runs `handler` when the test binary exits (after the last test, whether they passed or not).
pub fn on_exit(handler: extern "C" fn()) {
    // SAFETY: `handler` is a plain function that neither unwinds nor registers another; the
    // C library runs it once, at exit.
    let registered = unsafe { libc::atexit(handler) };
    assert_eq!(registered, 0, "an exit handler must be registered");
}

/// The test binary's scratch home: the data and config directories of every gavel the tests
/// run ([`gavel`]), so that no test reads the user's config or writes to the user's data
/// (round vectors, models). Removed when the binary exits.
pub fn scratch_home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    extern "C" fn remove() {
        if let Some(home) = HOME.get() {
            let _ = std::fs::remove_dir_all(home);
        }
    }
    HOME.get_or_init(|| {
        let home = std::env::temp_dir().join(format!("gavel-tests-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        on_exit(remove);
        home
    })
}

/// The gavel binary as the tests run it: at home in [`scratch_home`] (`XDG_DATA_HOME`,
/// `XDG_CONFIG_HOME`, and `XDG_STATE_HOME`, where its log goes).
pub fn gavel() -> Command {
    let home = scratch_home();
    let mut command = Command::new(env!("CARGO_BIN_EXE_gavel"));
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"));
    command
}

/// What a run of the binary did: whether it succeeded, its standard output and error.
pub struct Ran {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` to its end; what it printed, lossily decoded.
pub fn run_to_end(command: &mut Command) -> Ran {
    let output = command.output().unwrap();
    Ran {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs the real `gavel migrate --db url`; its standard output, or the test fails with its
/// errors.
pub fn migrate_with_the_binary(url: &str) -> String {
    let migrate = gavel().args(["migrate", "--db", url]).output().unwrap();
    assert!(
        migrate.status.success(),
        "{}",
        String::from_utf8_lossy(&migrate.stderr)
    );
    String::from_utf8_lossy(&migrate.stdout).into_owned()
}

/// Records the layout of a frame of `model`, as the draw loop does before each frame, for
/// `update` to read (mouse clicks, scrolling to the bottom).
pub fn record_frame(model: &mut Model) {
    model.record_frame(gavel::console::ui::geometry(model));
}

/// The console drawn at `width` x `height` on a test terminal (its cells, styles and cursor).
pub fn draw(
    model: &Model,
    width: u16,
    height: u16,
) -> ratatui::Terminal<ratatui::backend::TestBackend> {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            let mut kept = gavel::console::kept::Kept::default();
            if let Some(cursor) = gavel::console::ui::view(model, f, &mut kept) {
                f.set_cursor_position(cursor);
            }
        })
        .unwrap();
    terminal
}

/// The console drawn at `width` x `height`, as text.
pub fn screen_at(model: &Model, width: u16, height: u16) -> String {
    draw(model, width, height).backend().to_string()
}

/// The console drawn at 160x48, as text.
pub fn screen(model: &Model) -> String {
    screen_at(model, 160, 48)
}
