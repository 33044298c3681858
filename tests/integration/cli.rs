//! The command line, through the gavel binary where it can be:
//! a folder stands for its `*.jsonl` recordings in `check`, `calibrate` and `demo` (in name
//! order; an empty folder is an error naming it); `check` refuses unknown crux types, crux sides
//! and aspects the session does not list; an unreadable file is `file: cannot read (why)`; a bad
//! `[keys]` entry is reported at its own line; without $USER the operator is the OS user; and
//! `demo --postgres` shows its database in the header and prints it on exit.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tmux::Tmux;
use common::{Ran, run_to_end};
use gavel::config::Config;
use gavel::simulate::Fixture;
use proptest::prelude::*;

/// Runs gavel with `args`, away from any config file of the user running the tests.
fn gavel(scratch: &Path, args: &[&str]) -> Ran {
    run_to_end(
        crate::common::gavel()
            .args(args)
            .env("XDG_CONFIG_HOME", scratch),
    )
}

/// The bundled recordings on disk, in name order.
fn bundled_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// `check`'s line for a valid recording at `shown` whose content is the bundled `file`.
fn ok_line(shown: &str, file: &Path) -> String {
    let fixture = Fixture::load(file).unwrap();
    format!(
        "{shown}: ok ({} turns, {} rounds)\n",
        fixture.turns.len(),
        fixture.last_round()
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn check_takes_a_folder_as_the_recordings_directly_in_it_in_name_order() {
    let scratch = Tmux::new();
    let folder = scratch.dir.join("week");
    std::fs::create_dir_all(folder.join("older")).unwrap();
    let (first, second) = (
        Path::new("fixtures/followup_min_rounds.jsonl"),
        Path::new("fixtures/budget_safety.jsonl"),
    );
    std::fs::copy(second, folder.join("b.jsonl")).unwrap();
    std::fs::copy(first, folder.join("a.jsonl")).unwrap();
    // Not recordings of the folder: hidden, another extension, in a subfolder.
    for other in [".a.jsonl.swp.jsonl", "notes.txt", "older/c.jsonl"] {
        std::fs::write(folder.join(other), "not json").unwrap();
    }
    // As typed with a trailing slash, as a shell completes a folder.
    let typed = format!("{}/", path(&folder));
    let ran = gavel(&scratch.dir, &["check", &typed]);
    assert_eq!(ran.stderr, "");
    assert!(ran.ok);
    let week = path(&folder);
    assert_eq!(
        ran.stdout,
        ok_line(&format!("{week}/a.jsonl"), first) + &ok_line(&format!("{week}/b.jsonl"), second)
    );

    let ran = gavel(&scratch.dir, &["check", "fixtures"]);
    let expected: String = bundled_files()
        .iter()
        .map(|file| ok_line(path(file), file))
        .collect();
    assert_eq!(
        (ran.ok, ran.stdout, ran.stderr),
        (true, expected, String::new())
    );
}

#[test]
fn an_empty_folder_and_a_missing_file_are_named_and_the_rest_still_checked() {
    let scratch = Tmux::new();
    let empty = scratch.dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("readme.txt"), "no recordings here").unwrap();
    let missing = scratch.dir.join("missing.jsonl");
    let good = Path::new("fixtures/shadow_week_salt.jsonl");
    let ran = gavel(
        &scratch.dir,
        &["check", path(&empty), path(&missing), path(good)],
    );
    assert!(!ran.ok);
    assert_eq!(
        ran.stderr,
        format!(
            "{}: a folder with no recordings (no *.jsonl files in it)\n\
             {}: cannot read (No such file or directory (os error 2))\n",
            path(&empty),
            path(&missing)
        )
    );
    assert_eq!(ran.stdout, ok_line(path(good), good));
}

#[test]
fn calibrate_and_demo_take_folders_and_name_what_they_cannot_read() {
    let scratch = Tmux::new();
    let files: Vec<String> = bundled_files().iter().map(|f| path(f).to_owned()).collect();
    let by_file = gavel(
        &scratch.dir,
        &[
            &["calibrate", "--json"],
            &files.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ]
        .concat(),
    );
    let by_folder = gavel(&scratch.dir, &["calibrate", "--json", "fixtures/"]);
    assert!(by_folder.ok, "{}", by_folder.stderr);
    assert!(
        by_folder.stdout.contains("\"debates\": 9"),
        "{}",
        by_folder.stdout
    );
    assert_eq!(
        by_folder.stdout, by_file.stdout,
        "a folder is its files in name order"
    );

    let empty = scratch.dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let missing = scratch.dir.join("missing.jsonl");
    let no_recordings = format!(
        "gavel: {}: a folder with no recordings (no *.jsonl files in it)\n",
        path(&empty)
    );
    let cannot_read = format!(
        "gavel: {}: cannot read (No such file or directory (os error 2))\n",
        path(&missing)
    );
    for command in ["calibrate", "demo", "check"] {
        let ran = gavel(&scratch.dir, &[command, path(&empty)]);
        assert!(!ran.ok);
        let expected = no_recordings.replace("gavel: ", "");
        let expected = if command == "check" {
            &expected
        } else {
            &no_recordings
        };
        assert_eq!(&ran.stderr, expected, "{command}");
    }
    for command in ["calibrate", "demo"] {
        let ran = gavel(&scratch.dir, &[command, path(&missing)]);
        assert_eq!(
            (ran.ok, ran.stderr),
            (false, cannot_read.clone()),
            "{command}"
        );
    }
}

/// A panel recording with the problems `check` looks for in cruxes and aspects.
const BAD_PANEL: &str = r#"{"session": {"id": "p", "question": "q", "controller_mode": "shadow", "personas": ["ana", "ben"], "token_budget": 1000, "metadata": {"format": "panel", "aspects": ["privacy", "cost"]}}}
{"turn": {"round": 1, "persona": "ana", "tokens": 10, "content": "x", "phase": "themed", "aspect": "privacy"}}
{"turn": {"round": 1, "persona": "ben", "tokens": 10, "content": "y", "aspect": "equity", "cruxes": [{"claim": "Is it right?", "type": "moral", "between": ["ana", "zed"]}]}}
{"turn": {"round": 2, "persona": "ana", "tokens": 10, "content": "z", "cruxes": [{"claim": " ", "type": "definitional", "between": ["ana", "ben"]}, {"claim": "Does it work?", "type": "empirical", "between": ["ben", "ana"]}]}}
"#;

#[test]
fn check_refuses_unknown_crux_types_off_roster_sides_and_unlisted_aspects() {
    let scratch = Tmux::new();
    let file = scratch.file("panel.jsonl", BAD_PANEL);
    let ran = gavel(&scratch.dir, &["check", path(&file)]);
    assert!(!ran.ok);
    let at = path(&file);
    assert_eq!(
        ran.stderr,
        format!(
            "{at}:3: unknown crux type \"moral\" (expected one of: empirical, values, definition)\n\
             {at}:3: crux between persona \"zed\", who is not in the session's personas\n\
             {at}:3: aspect \"equity\" is not in the session's metadata.aspects (privacy, cost)\n\
             {at}:4: a crux with an empty claim\n"
        )
    );
    assert_eq!(ran.stdout, "");

    let fixed = BAD_PANEL
        .replace("moral", "values")
        .replace("zed", "ben")
        .replace("equity", "cost")
        .replace("\" \"", "\"Is a statute a safeguard?\"");
    let fixture = Fixture::parse("fixed.jsonl", &fixed).unwrap();
    assert_eq!(fixture.turns[2].cruxes.len(), 2, "definitional is accepted");
}

/// A recording of one turn naming one crux of type `kind` between `sides`.
fn crux_recording(kind: &str, sides: &[String]) -> String {
    let session = r#"{"session": {"id": "p", "question": "q", "controller_mode": "shadow", "personas": ["ana", "ben"], "token_budget": 1000}}"#;
    let turn = serde_json::json!({"turn": {"round": 1, "persona": "ana", "tokens": 1, "content": "c",
        "cruxes": [{"claim": "c?", "type": kind, "between": sides}]}});
    format!("{session}\n{turn}\n")
}

proptest! {
    #[test]
    fn a_crux_is_refused_exactly_when_its_type_or_a_side_is_unknown(
        kind in "empirical|values|definition|definitional|moral|[a-z]{0,6}",
        sides in prop::collection::vec("ana|ben|zed|[a-z]{0,3}", 0..4),
    ) {
        let known_kind = ["empirical", "values", "definition", "definitional"].contains(&kind.as_str());
        let strangers: Vec<&String> = sides.iter().filter(|s| *s != "ana" && *s != "ben").collect();
        let mut expected = Vec::new();
        if !known_kind {
            expected.push(format!(
                "r.jsonl:2: unknown crux type {kind:?} (expected one of: empirical, values, definition)"
            ));
        }
        for stranger in strangers {
            expected.push(format!(
                "r.jsonl:2: crux between persona {stranger:?}, who is not in the session's personas"
            ));
        }
        let found: Vec<String> = match Fixture::parse("r.jsonl", &crux_recording(&kind, &sides)) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
        };
        prop_assert_eq!(found, expected);
    }
}

#[test]
fn a_bad_keys_entry_is_reported_at_its_own_line() {
    let cases = [
        (
            "[ui]\nmouse = true\n\n[keys]\naccept = \"A\"\nacept = \"x\"\n",
            "k.toml:6: [keys] unknown action \"acept\"",
        ),
        (
            "[keys]\naccept = \"A\"\ndown = [\n  \"n\",\n  \"hyper-x\",\n]\n",
            "k.toml:3: [keys] down: \"hyper-x\" is not a key",
        ),
        (
            "[keys]\n\naccept = []\n",
            "k.toml:3: [keys] accept has no key: every action needs one",
        ),
        // "o" is override's default; override is not rebound.
        (
            "[keys]\nup = \"k\"\naccept = \"o\"\n",
            "k.toml:3: [keys] key o is bound to both accept and override",
        ),
        // Two entries binding one key: the later one is at fault, whatever the action order.
        (
            "[keys]\nquit = \"x\"\n# accept takes x too\naccept = \"x\"\n",
            "k.toml:4: [keys] key x is bound to both accept and quit",
        ),
        (
            "[keys]\naccept = \"x\"\nquit = \"x\"\n",
            "k.toml:3: [keys] key x is bound to both accept and quit",
        ),
        // Keys of a dotted table elsewhere in the file.
        (
            "operator = \"ana\"\nkeys.accept = \"A\"\nkeys.filter = \"A\"\n",
            "k.toml:3: [keys] key A is bound to both accept and filter",
        ),
    ];
    for (text, expected) in cases {
        let error = format!("{:#}", Config::parse(text, "k.toml").unwrap_err());
        assert!(error.starts_with(expected), "{text}\n{error}");
        assert_eq!(error.lines().count(), 1, "{error}");
    }
}

/// Starts `env ENV gavel demo ARGS` in tmux with a config file holding `config`; when it ends,
/// the pane says `gavel-exited-<status>`.
fn start_demo(tmux: &Tmux, env: &str, args: &str, config: &str) {
    let config = tmux.file("config.toml", config);
    tmux.start(&format!(
        "env {env} {} demo {args} --config {} --log-dir {}; echo gavel-exited-$?; sleep 30",
        env!("CARGO_BIN_EXE_gavel"),
        path(&config),
        path(&tmux.dir.join("logs"))
    ));
}

/// The operator shown in a demo's header, when its config names none and $USER is unset.
#[test]
fn without_user_the_demo_runs_as_the_os_user_and_takes_a_folder() {
    let id = Command::new("id").arg("-un").output().unwrap();
    let os_user = String::from_utf8(id.stdout).unwrap().trim().to_owned();
    assert!(!os_user.is_empty());
    let tmux = Tmux::new();
    start_demo(
        &tmux,
        "-u USER",
        "fixtures/",
        "[simulator]\ngated_timeout_secs = 3600\n",
    );
    let screen = tmux.wait_for("the header", |s| s.contains("pending"));
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("demo: 9 recorded debates")
            && header.contains(&format!("operator {os_user} ")),
        "{header}"
    );
    tmux.keys("q");
    tmux.wait_for("the exit", |s| s.contains("gavel-exited-0"));
}

#[test]
fn demo_postgres_shows_its_database_in_the_header_and_prints_it_on_exit() {
    let tmux = Tmux::new();
    start_demo(
        &tmux,
        "",
        "--postgres fixtures/never_converges.jsonl",
        "operator = \"smoke\"\n",
    );
    let screen = tmux.wait_for("the live header", |s| {
        s.contains("● live") && s.contains("replication-crisis-causes")
    });
    let header = screen.lines().next().unwrap();
    let start = header.find("demo --postgres: host=").expect(header);
    let end = header[start..].find(" dbname=gavel").expect(header) + start;
    let shown = &header[start..end + " dbname=gavel".len()];
    assert!(shown.contains(" port=5432 user=postgres"), "{shown}");
    tmux.keys("q");
    let after = tmux.wait_for("the exit", |s| s.contains("gavel-exited-"));
    assert!(
        after.contains(&format!("{shown} (removed on exit)\ngavel-exited-0")),
        "{after}"
    );
    let socket_dir = shown["demo --postgres: host=".len()..]
        .split(' ')
        .next()
        .unwrap();
    assert!(
        !Path::new(socket_dir).exists(),
        "the server's files are gone"
    );
}
