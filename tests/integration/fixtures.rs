//! Fixture files: every bundled recording is valid, and docs/fixture-format.md names those that
//! carry the orchestrator's similarity; each invalid file is refused with the file, the line and
//! what is wrong.

use std::path::Path;

use gavel::simulate::Fixture;

#[test]
fn every_bundled_fixture_is_valid_and_embedded() {
    let embedded = Fixture::bundled().expect("bundled fixtures are valid");
    let on_disk: Vec<_> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(
        embedded.len(),
        on_disk.len(),
        "every file in fixtures/ is embedded"
    );
    for path in on_disk {
        let fixture = Fixture::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(embedded.iter().any(|b| b.session.id == fixture.session.id));
    }
    let ids: std::collections::BTreeSet<_> =
        embedded.iter().map(|f| f.session.id.clone()).collect();
    assert_eq!(ids.len(), embedded.len(), "session ids are unique");
}

/// The bundled recordings (file names without `.jsonl`) with a round line: a similarity computed
/// by the orchestrator.
fn carrying_a_similarity() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("fixtures")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| {
            let fixture = Fixture::load(p).unwrap_or_else(|e| panic!("{e}"));
            !fixture.similarity.is_empty()
        })
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_fixture_format_names_the_recordings_that_carry_the_orchestrators_similarity() {
    let doc = std::fs::read_to_string("docs/fixture-format.md").unwrap();
    let lead = "Fixture outcomes under the semantic measure:";
    let from = doc.find(lead).expect("the paragraph on fixture outcomes");
    let paragraph = doc[from..].replace('\n', " ");
    let sentence = &paragraph[..paragraph.find(". ").unwrap()];
    let mut named: Vec<String> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    named.sort();
    assert_eq!(named, carrying_a_similarity(), "{sentence}");
}

/// Every error `tests/data/invalid/{name}.jsonl` is refused with, each without the file's path
/// (checked once here: every error starts with it).
fn errors(name: &str) -> Vec<String> {
    let path = format!("tests/data/invalid/{name}.jsonl");
    match Fixture::load(Path::new(&path)) {
        Ok(_) => panic!("{path} was accepted"),
        Err(errors) => errors
            .0
            .iter()
            .map(|e| {
                let e = e.to_string();
                e.strip_prefix(&path)
                    .unwrap_or_else(|| panic!("{e} names {path}"))
                    .to_owned()
            })
            .collect(),
    }
}

#[test]
fn broken_json_names_file_line_and_column() {
    assert_eq!(
        errors("broken_json"),
        [":3: column 79: EOF while parsing a string"]
    );
}

#[test]
fn an_unknown_mode_is_refused_with_the_choices() {
    assert_eq!(
        errors("unknown_mode"),
        [
            ":1: column 71: unknown ControllerMode \"sometimes\" (expected one of: off, shadow, \
             enabled, gated)"
        ]
    );
}

#[test]
fn every_turn_problem_is_reported_at_its_line() {
    assert_eq!(
        errors("bad_turns"),
        [
            ":3: persona \"ghost\" is not in the session's personas",
            ":4: round 3 skips round 2",
            ":5: skeptic speaks twice in round 3",
            ":6: judge score 1.5 is outside 0..1",
        ]
    );
}

#[test]
fn a_file_without_a_session_is_refused() {
    assert_eq!(
        errors("no_session"),
        [":1: no session record: the first line must be {\"session\": {...}}"]
    );
}

#[test]
fn unknown_fields_bad_replacements_and_bad_round_records() {
    assert_eq!(
        errors("bad_fields"),
        [
            ":2: column 82: unknown field `mood`, expected one of `round`, `persona`, `tokens`, \
             `content`, `phase`, `aspect`, `replaces`, `cruxes`, `judge`",
            ":3: replaces \"synthesizer\", who has not spoken earlier in round 1",
            ":3: round 1 has no opening turn",
            ":4: round 1 has no previous round (nor a prior) to be similar to",
            ":5: round 2 has no turns",
        ]
    );
}

#[test]
fn operator_action_records_are_checked_line_by_line() {
    assert_eq!(
        errors("bad_actions"),
        [
            ":5: a second action for round 1",
            ":6: an override needs the decision that stands",
            ":7: round 3 has no turns",
            ":8: operator must be non-empty printable text",
            ":8: persona \"zed\" is not in the session's personas",
            ":9: column 41: unknown ActionKind \"shrug\" (expected one of: accept, override, \
             escalate)",
        ]
    );
}

#[test]
fn unreadable_files_say_so() {
    let error = Fixture::load(Path::new("tests/data/invalid/missing.jsonl")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tests/data/invalid/missing.jsonl: cannot read (No such file or directory (os error 2))"
    );
}

#[test]
fn hostile_content_is_kept_verbatim_for_display_to_neutralise() {
    let text = concat!(
        r#"{"session": {"id": "x", "question": "q", "controller_mode": "off", "personas": ["a"], "token_budget": 10}}"#,
        "\n",
        r#"{"turn": {"round": 1, "persona": "a", "tokens": 1, "content": "\u001b[2J\u001b]0;pwned\u0007 hi"}}"#
    );
    let fixture = Fixture::parse("inline", text).unwrap();
    assert_eq!(fixture.turns[0].content, "\u{1b}[2J\u{1b}]0;pwned\u{7} hi");
}

#[test]
fn a_recording_named_twice_is_read_once_and_a_debate_twice_is_refused() {
    let dir = std::env::temp_dir().join(format!("gavel-fixtures-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string("fixtures/gated_converges_round3.jsonl").unwrap();
    let (first, copy) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&first, &text).unwrap();
    std::fs::write(&copy, &text).unwrap();
    let loaded = Fixture::load_each(&[dir.clone(), first.clone()], &Default::default());
    let outcome: Vec<Result<String, String>> = loaded
        .into_iter()
        .map(|l| l.map(|f| f.session.id).map_err(|e| e.to_string()))
        .collect();
    let id = Fixture::load(&first).unwrap().session.id;
    assert_eq!(
        outcome,
        [
            Ok(id.clone()),
            Err(format!(
                "{}:1: debate {id:?} is also {}'s: each debate plays once",
                copy.display(),
                first.display()
            )),
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
