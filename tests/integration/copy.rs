//! Getting text out: `y` copies (the debate id, a round's turns, the trace) as an OSC 52
//! command, made inert and capped; `P` asks for the pager with a round's turns or the trace;
//! the OSC 52 sequence exactly; and, in tmux, the real binary's copy landing in tmux's paste
//! buffer and its pager receiving the turns (a `$PAGER` script that writes its input to a file).

use crate::common;

use common::tmux::Tmux;
use common::{char, demo_model, key, select};
use crossterm::event::KeyCode;
use gavel::console::app::{COPY_LIMIT, Command, Event, capped, update};
use gavel::console::terminal::clipboard;
use gavel::domain::Change;

#[test]
fn the_osc_52_sequence_is_base64_between_its_markers() {
    assert_eq!(clipboard("hello"), "\u{1b}]52;c;aGVsbG8=\u{7}");
    assert_eq!(clipboard(""), "\u{1b}]52;c;\u{7}");
    assert_eq!(clipboard("é\n"), "\u{1b}]52;c;w6kK\u{7}");
}

#[test]
fn text_is_capped_at_a_character_boundary() {
    assert_eq!(capped("abc".into(), 5), ("abc".into(), false));
    assert_eq!(capped("ééé".into(), 5), ("éé".into(), true));
    assert_eq!(
        capped("x".repeat(COPY_LIMIT + 1), COPY_LIMIT).0.len(),
        COPY_LIMIT
    );
}

#[test]
fn y_copies_the_id_in_the_list_and_the_round_in_the_detail() {
    let (mut model, _) = demo_model();
    select(&mut model, "fmt-melanoma-pd1");
    let commands = update(&mut model, char('y'));
    assert_eq!(commands, [Command::Copy("fmt-melanoma-pd1".into())]);
    assert!(common::flash(&model).starts_with("copied the id of fmt-melanoma-pd1"));

    update(&mut model, char('2'));
    let commands = update(&mut model, char('y'));
    let [Command::Copy(text)] = commands.as_slice() else {
        panic!("one copy: {commands:?}");
    };
    let round = model.selected_round().unwrap();
    let debate = model.selected_debate().unwrap();
    let turns = debate.round(round).turns;
    assert!(!turns.is_empty());
    for turn in &turns {
        assert!(text.contains(turn.agent_persona.as_str()), "{text}");
    }
    assert!(text.starts_with(turns[0].agent_persona.as_str()));
    assert!(text.contains(": "));

    update(&mut model, char('4'));
    let commands = update(&mut model, char('y'));
    let [Command::Copy(trace)] = commands.as_slice() else {
        panic!("one copy: {commands:?}");
    };
    assert!(trace.starts_with("fmt-melanoma-pd1 · "), "{trace}");
}

#[test]
fn copied_and_paged_text_is_inert_and_the_copy_capped() {
    let (mut model, _) = demo_model();
    select(&mut model, "fasting-insulin-0412");
    let round = model.selected_round().unwrap();
    let mut turn = model.selected_debate().unwrap().round(round).turns[0].clone();
    turn.content = format!(
        "\u{1b}]52;c;ZXZpbA==\u{7}line one\r\nline\ttwo\u{9b}{}",
        "x".repeat(150_000)
    );
    update(&mut model, Event::Store(Box::new(Change::Turn(turn))));
    update(&mut model, key(KeyCode::Enter));
    let commands = update(&mut model, char('y'));
    let [Command::Copy(text)] = commands.as_slice() else {
        panic!("one copy: {commands:?}");
    };
    assert_eq!(text.len(), COPY_LIMIT);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "only line breaks stay"
    );
    assert!(text.contains("␛]52;c;ZXZpbA==␇line one\nline    two�"));
    let flash = &model.desk.flash.as_ref().unwrap().text;
    assert!(flash.contains("copied the first 100,000 of"), "{flash}");
    assert!(flash.contains("the clipboard takes 100,000 at most"));

    let commands = update(&mut model, char('P'));
    let [Command::Page { title, text }] = commands.as_slice() else {
        panic!("one page: {commands:?}");
    };
    assert_eq!(title, &format!("fasting-insulin-0412 · round {round}"));
    assert!(text.len() > 150_000, "the pager gets it whole");
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
}

#[test]
fn p_pages_the_trace_in_the_trace_view_and_says_why_not_without_turns() {
    let (mut model, _) = demo_model();
    select(&mut model, "sepsis-ml-replacement");
    update(&mut model, char('4'));
    let commands = update(&mut model, char('P'));
    let [Command::Page { title, text }] = commands.as_slice() else {
        panic!("one page: {commands:?}");
    };
    assert_eq!(title, "trace · sepsis-ml-replacement");
    assert!(text.contains("stop_safety"), "{text}");
    update(
        &mut model,
        Event::Paged(Err(gavel::console::pager::Error::Failed {
            pager: "less".to_owned(),
            status: "exit status: 2".to_owned(),
        })),
    );
    let flash = model.desk.flash.clone().unwrap();
    assert!(flash.error);
    assert_eq!(
        flash.text,
        "the pager did not run: less ended with exit status: 2"
    );
}

/// The real binary in tmux: `y` reaches tmux's paste buffer through OSC 52 (with tmux's
/// `set-clipboard on`), and `P` hands the selected round's turns to `$PAGER`, then the console
/// comes back.
#[test]
fn copy_and_pager_in_tmux() {
    let binary = env!("CARGO_BIN_EXE_gavel");
    let tmux = Tmux::new();
    let out = tmux.dir.join("paged.txt");
    let pager = tmux.file(
        "pager.sh",
        &format!(
            "#!/bin/sh\ncat > {}.part && mv {0}.part {0}\n",
            out.display()
        ),
    );
    std::process::Command::new("chmod")
        .args(["+x", &pager.display().to_string()])
        .status()
        .unwrap();
    let config = tmux.file(
        "config.toml",
        "operator = \"smoke\"\n[simulator]\ngated_timeout_secs = 3600\n",
    );
    tmux.start(&format!(
        "PAGER={} {binary} demo --config {} --log-dir {}; sleep 30",
        pager.display(),
        config.display(),
        tmux.dir.join("logs").display()
    ));
    tmux.run(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.wait_for("the first gated decision", |s| {
        s.contains("decision waiting for you")
    });
    tmux.keys("y");
    tmux.wait_for("the copy's message", |s| {
        s.contains("copied the id of fasting-insulin-0412")
    });
    let start = std::time::Instant::now();
    loop {
        let buffer = std::process::Command::new("tmux")
            .args(["-L", &tmux_socket(&tmux), "show-buffer"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&buffer.stdout) == "fasting-insulin-0412" {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 10,
            "tmux's buffer: {:?}",
            String::from_utf8_lossy(&buffer.stdout)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    tmux.keys("P");
    let start = std::time::Instant::now();
    while !out.exists() {
        assert!(
            start.elapsed().as_secs() < 10,
            "the pager never wrote its input"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let paged = std::fs::read_to_string(&out).unwrap();
    assert!(
        paged.starts_with("fasting-insulin-0412 · round 1\n\ntheorist"),
        "{paged}"
    );
    tmux.wait_for("the console back after the pager", |s| {
        s.contains("decision waiting for you") && s.contains("fasting-insulin-0412")
    });
    tmux.keys("q");
}

/// The socket name of a [`Tmux`] (its scratch directory is named after it).
fn tmux_socket(tmux: &Tmux) -> String {
    tmux.dir.file_name().unwrap().to_string_lossy().into_owned()
}
