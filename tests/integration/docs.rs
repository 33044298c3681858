//! The documentation's examples run as tests: every ```` ```console ```` block of README.md
//! and of docs/**/*.md (each `$ gavel ...` line and the output under it, standard error
//! included, `? N` for a status other than 0) is run by trycmd against the gavel binary, so
//! an example that stops being true fails. The commands run from the checkout (paths are the
//! repository's: `fixtures/`, `tests/data/`), at home in a scratch directory of their own (no
//! config, no kept vectors, as a new user), with `DATABASE_URL` naming a throwaway database
//! into which the bundled recordings were played (`gavel trace`, `export`, `calibrate --db`).
//! Times and scratch paths in the output are written `[..]` in the docs.
//! README's screen is the demo's as its label says, and so are the times README gives before it.

use crate::common;

use common::pg::{migrated_database, play_into};
use gavel::simulate::Fixture;

#[test]
fn the_documentations_examples_hold() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let database = runtime.block_on(async {
        let database = migrated_database("docs").await;
        play_into(&database.target, Fixture::bundled().unwrap()).await;
        database
    });
    let home = common::scratch_home().join("docs");
    std::fs::create_dir_all(&home).unwrap();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("gavel", std::path::Path::new(env!("CARGO_BIN_EXE_gavel")))
        .env("HOME", home.display().to_string())
        .env("XDG_CONFIG_HOME", home.join("config").display().to_string())
        .env("XDG_DATA_HOME", home.join("data").display().to_string())
        .env("XDG_STATE_HOME", home.join("state").display().to_string())
        .env("DATABASE_URL", &database.url)
        .timeout(std::time::Duration::from_secs(120))
        .case("README.md")
        .case("docs/**/*.md");
    cases.run();
    drop(database);
}

/// How far into the demo README's screen is, in seconds at 1x; its label says so.
const README_SCREEN_AT: u64 = 60;

/// README's screen ("A screen of it") is `gavel demo --operator alice` at 80x24 as it stands
/// [`README_SCREEN_AT`] seconds in, and what README says of the seconds before it holds. The
/// demo's own backend plays the bundled recordings in tokio's paused time, its rows stamped by
/// that clock (the simulator's pauses are the demo's time; a round's arithmetic takes none of
/// it), and the console's once-a-second tick moves the countdowns, as under `gavel demo`.
#[tokio::test(start_paused = true)]
async fn the_readme_screen_is_the_demo_when_its_label_says() {
    use gavel::console::app::{Event, Model, update};
    use std::time::Duration;

    let config = std::sync::Arc::new(gavel::config::Config::default());
    let mut model = Model::new("demo: 9 recorded debates".into(), "alice".into(), &config);
    let origin = tokio::time::Instant::now();
    let wall: chrono::DateTime<chrono::Utc> = "2026-11-24T09:00:00Z".parse().unwrap();
    let now = move || wall + chrono::TimeDelta::from_std(origin.elapsed()).unwrap();
    let (events, mut rows) = tokio::sync::mpsc::unbounded_channel();
    let _commands = gavel::console::backend::demo::start(
        Fixture::bundled().unwrap(),
        config.clone(),
        events,
        gavel::simulate::TimeSource::new(now),
    );
    let lines = |model: &mut Model| -> Vec<String> {
        model.prepare_frame();
        common::screen_at(model, 80, 24)
            .lines()
            .map(|line| line.trim_matches('"').trim_end().to_owned())
            .collect()
    };
    // After each second: the header's counts (waiting, advisory) and the debates running.
    let mut seconds = Vec::new();
    let mut at_five = Vec::new();
    for second in 0..=README_SCREEN_AT {
        // A millisecond past the second, so that what the demo does at that instant has
        // landed (its pauses end on whole 50 ms).
        let at = origin + Duration::from_secs(second) + Duration::from_millis(1);
        tokio::time::sleep_until(at).await;
        while let Ok(event) = rows.try_recv() {
            update(&mut model, event);
        }
        update(&mut model, Event::Tick(now()));
        let debates = &model.debates;
        let running = (0..debates.len() as u64)
            .filter(|&seq| debates.get(seq).is_some_and(|s| s.is_running()))
            .count();
        seconds.push((debates.waiting(), debates.advisory(), running));
        if second == 5 {
            at_five = lines(&mut model);
        }
    }
    assert_eq!(
        seconds[0],
        (0, 0, 9),
        "at first nine debates run, none waits"
    );
    // The gated two start waiting at 5 s, on their first round's decision, and wait on.
    assert_eq!(
        seconds.iter().position(|s| s.0 == 2),
        Some(5),
        "{seconds:?}"
    );
    assert!(seconds[5..].iter().all(|s| s.0 == 2), "{seconds:?}");
    assert!(
        at_five[3].starts_with("│● 1:27  fasting-insulin-"),
        "{at_five:#?}"
    );
    assert!(
        at_five[4].starts_with("│● 1:27  review-pdac-meth"),
        "{at_five:#?}"
    );
    let seven_done = seconds.iter().position(|s| s.2 == 2);
    assert_eq!(seven_done, Some(33), "{seconds:?}");
    assert!(seconds[33..].iter().all(|s| *s == (2, 0, 2)), "{seconds:?}");

    let screen = lines(&mut model);
    let readme = std::fs::read_to_string("README.md").unwrap();
    let shown: Vec<&str> = readme
        .split_once("## A screen of it")
        .and_then(|(_, after)| after.split_once("```text\n"))
        .and_then(|(_, block)| block.split_once("```"))
        .expect("README's screen, in a ```text block under \"A screen of it\"")
        .0
        .lines()
        .map(str::trim_end)
        .collect();
    assert_eq!(
        shown,
        screen,
        "README's screen is not the demo's at {README_SCREEN_AT} s, which is:\n{}",
        screen.join("\n")
    );
}
