//! Notes that hand a debate over: pinned with `N` without taking an action, append-only in
//! gavel_debate_notes with the writing role stamped by the database, shown on every console
//! watching (the list's `✎`, the trace view), in `gavel trace` and in `gavel export`; a viewer
//! cannot pin one, neither through the console nor past it.
//!
//! Against a real PostgreSQL started by the test (login roles are the cluster's); without a
//! database: the demo's memory backend and the screen.

use crossterm::event::KeyCode;
use gavel::audit::{ExportRow, Trace};
use gavel::config::Config;
use gavel::console::app::{Command, Event, Model, Overlay, update};
use gavel::domain::{Change, DebateNote, Debates, Limits, MAX_NOTE, SessionStatus};
use gavel::store::MemoryStore;
use gavel::store::postgres::{audit_rows, history};

use crate::common;
use common::pg::{Console, SESSION, server, target_as, texts, with_logins};
use common::rows::session;
use common::{char, demo_model, key, select};

/// Types `text` into the open prompt of `console` and presses Enter.
fn type_and_enter(console: &mut Console, text: &str) {
    console.press(text);
    console.handle(key(KeyCode::Enter));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_pinned_on_one_console_shows_on_another_under_the_writers_role() {
    let server = server();
    let mut owner = with_logins(&server, "notes", &["carol"], &["bob"]).await;
    owner.execute(SESSION, &[&"s"]).await.unwrap();

    // bob (an operator, calling himself alice) pins a note from his console.
    let mut bob = Console::live(target_as(&server, "notes", "bob", "bob")).await;
    bob.until("debate s", |m| m.debate("s").is_some()).await;
    bob.select("s");
    bob.press("N");
    assert!(matches!(bob.model.desk.overlay, Some(Overlay::Pin(ref id)) if id == "s"));
    type_and_enter(
        &mut bob,
        "the skeptic keeps citing retracted papers; I'm on it",
    );
    bob.until("the note pinned", |m| {
        m.debate("s").is_some_and(|d| !d.notes.is_empty())
            && m.desk
                .flash
                .as_ref()
                .is_some_and(|f| f.text == "note pinned to s")
    })
    .await;

    // carol (a viewer) sees it under bob's role, marked in the list, in the trace view.
    let mut carol = Console::live(target_as(&server, "notes", "carol", "carol")).await;
    carol
        .until("the note", |m| {
            m.debate("s").is_some_and(|d| !d.notes.is_empty())
        })
        .await;
    let note = carol.model.debate("s").unwrap().notes[0].clone();
    assert_eq!(
        (note.operator.as_str(), note.role.as_deref(), note.who()),
        ("alice", Some("bob"), "alice (role bob)".to_owned())
    );
    let seq = carol.model.debates.seq("s").unwrap();
    assert!(carol.model.debates.get(seq).unwrap().noted);

    // carol cannot pin one: the console refuses, saying what the notes' table lacks (not the
    // actions'), and so does the database.
    carol.select("s");
    carol.press("N");
    assert!(carol.model.desk.overlay.is_none());
    assert_eq!(
        carol.flash(),
        "cannot pin a note: role carol cannot insert into gavel_debate_notes, nor use the \
         sequence public.gavel_debate_notes_id_seq"
    );
    let as_carol = target_as(&server, "notes", "carol", "sql")
        .connect_driven()
        .await
        .unwrap();
    let refused =
        gavel::store::postgres::pin(&as_carol, &DebateNote::draft("s", "carol", "mine").unwrap())
            .await
            .unwrap()
            .unwrap_err();
    assert!(refused.contains("permission denied"), "{refused}");

    // The role is the database's to stamp; the table is append-only, for the owner too; an
    // over-long note is refused by the table itself.
    owner
        .batch_execute(
            "INSERT INTO gavel_debate_notes (session_id, operator, note, operator_role) \
             VALUES ('s', 'orchestrator', 'forged', 'alice')",
        )
        .await
        .unwrap();
    let roles = texts(
        &owner,
        "SELECT operator_role FROM gavel_debate_notes ORDER BY id",
    )
    .await;
    assert_eq!(roles, ["bob", "postgres"]);
    for sql in [
        "UPDATE gavel_debate_notes SET note = 'x'",
        "DELETE FROM gavel_debate_notes",
        "TRUNCATE gavel_debate_notes",
    ] {
        let error = owner.batch_execute(sql).await.expect_err(sql);
        let message = error.as_db_error().unwrap().message().to_owned();
        assert_eq!(
            message,
            format!(
                "gavel_debate_notes is an append-only audit trail: {} refused",
                sql.split(' ').next().unwrap()
            )
        );
    }
    let long = format!(
        "INSERT INTO gavel_debate_notes (session_id, operator, note) VALUES ('s', 'x', '{}')",
        "n".repeat(MAX_NOTE + 1)
    );
    assert!(owner.batch_execute(&long).await.is_err());

    // `gavel trace` and `gavel export` carry the notes.
    let debates: Debates = history(&owner, "s", &Limits::default())
        .await
        .unwrap()
        .into_iter()
        .collect();
    let trace = Trace::of(debates.get_by_id("s").unwrap()).text();
    assert!(
        trace.contains("alice (role bob): the skeptic keeps citing retracted papers; I'm on it"),
        "{trace}"
    );
    let exported: Vec<ExportRow> = audit_rows(&mut owner, None, None, &Limits::default())
        .await
        .unwrap()
        .into_iter()
        .filter_map(ExportRow::of)
        .filter(|row| row.table == "gavel_debate_notes")
        .collect();
    assert_eq!(exported.len(), 2);
    assert_eq!(
        (
            exported[0].operator.as_deref(),
            exported[0].operator_role.as_deref(),
            exported[0].round_index
        ),
        (Some("alice"), Some("bob"), None)
    );
}

#[test]
fn n_goes_through_the_commands_and_the_memory_store_files_the_note() {
    let mut model = Model::new("test".into(), "alice".into(), &Config::default());
    let store = MemoryStore::new();
    store.write(Change::Session(session("s", SessionStatus::Running)));
    for row in store.history("s") {
        update(&mut model, Event::Store(Box::new(row)));
    }
    select(&mut model, "s");
    update(&mut model, char('N'));
    // Controls typed or pasted never reach the note.
    for c in "on it\u{1b}[2J".chars() {
        update(&mut model, char(c));
    }
    let commands = update(&mut model, key(KeyCode::Enter));
    let [Command::Note(note)] = commands.as_slice() else {
        panic!("one note sent: {commands:?}");
    };
    assert_eq!(note.text, "on it[2J");
    let pinned = store.note(note.clone());
    update(
        &mut model,
        Event::Store(Box::new(Change::Note(pinned.clone()))),
    );
    update(&mut model, Event::Noted(Ok(pinned)));
    assert_eq!(model.debate("s").unwrap().notes.len(), 1);

    // An empty note sends nothing; Esc drops the line.
    update(&mut model, char('N'));
    assert!(update(&mut model, key(KeyCode::Enter)).is_empty());
    update(&mut model, char('N'));
    update(&mut model, key(KeyCode::Esc));
    assert!(model.desk.overlay.is_none());
}

#[test]
fn the_note_line_and_the_list_marker() {
    let (mut model, _) = demo_model();
    select(&mut model, "sepsis-ml-replacement");
    let note = DebateNote {
        id: 1,
        role: Some("bob".into()),
        created_at: Some("2026-11-25T21:40:00Z".parse().unwrap()),
        ..DebateNote::draft(
            "sepsis-ml-replacement",
            "alice",
            "handing over: judge flags \u{1b}[31m PMIDs",
        )
        .unwrap()
    };
    update(&mut model, Event::Store(Box::new(Change::Note(note))));
    update(&mut model, char('N'));
    for c in "the skeptic keeps citing retracted papers".chars() {
        update(&mut model, char(c));
    }
    insta::assert_snapshot!("note_line", common::screen_at(&model, 120, 30));
    update(&mut model, key(KeyCode::Esc));
    update(&mut model, char('4'));
    update(&mut model, key(KeyCode::End));
    insta::assert_snapshot!("trace_with_notes", common::screen_at(&model, 120, 30));
}
