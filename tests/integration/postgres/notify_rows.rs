//! Rows in notifications, the opt-in (`gavel.notify_rows`): off by default, a payload then
//! names its row only and a row a payload carries is never taken; on, every row small enough
//! comes in its notification as a read would give it, a row too big for a payload is named and
//! read, and a hostile payload is an error naming table and key, its row read instead.

use gavel::domain::{Change, Limits};
use gavel::store::postgres::{Notice, Notifications, history};

use super::*;

/// The rows of every table of debate `id`, small enough for a payload, and one turn of 10,000
/// bytes that is not.
pub(super) async fn write_one_of_each(client: &Client, id: &str) {
    client.execute(SESSION, &[&id]).await.unwrap();
    client
        .batch_execute(&format!(
            "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, metadata) \
                 VALUES ('{id}', 1, 'theorist', E'Opening, \"quoted\", \\\\ and \\t. VERDICT: yes', 900, '{{\"phase\": \"themed\"}}');
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 VALUES ('{id}', 1, 'skeptic', repeat('x', 10000), 800);
             INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, reasons, pmids) \
                 VALUES ('{id}', 1, 'skeptic', 'warn_persona', 0.5, '[\"thin\"]', '[{{\"pmid\": \"1\", \"verified\": true}}]');
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                 VALUES ('{id}', 1, 'continue_baseline', '{{\"similarity\": 0.25, \"verdict\": \"no | yes\", \"verdict_split\": true}}');
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, note) \
                 VALUES ('{id}', 1, 'accept', 'continue_baseline', 'alice', 'fine');
             INSERT INTO gavel_debate_notes (session_id, operator, note) VALUES ('{id}', 'alice', 'over to bob');
             UPDATE debate_sessions SET status = 'completed', num_rounds = 1, finished_at = now() WHERE id = '{id}';"
        ))
        .await
        .unwrap();
}

/// The payloads `listening` received, waiting until `count` have come.
async fn payloads(listening: &mut Notifications, count: usize) -> Vec<String> {
    let mut got = Vec::new();
    while got.len() < count {
        let payload = tokio::time::timeout(Duration::from_secs(10), listening.payloads.recv())
            .await
            .expect("a notification within 10 s")
            .expect("the listening connection open");
        got.push(payload);
    }
    got
}

/// A migrated database named after `name` with the opt-in on: its target, and a connection
/// opened after the opt-in (which sees it).
async fn opted_in(name: &str) -> (gavel::store::postgres::Target, Client) {
    let Database {
        target,
        client: owner,
        name,
        ..
    } = migrated_database(name).await;
    owner
        .batch_execute(&format!("ALTER DATABASE {name} SET gavel.notify_rows = on"))
        .await
        .unwrap();
    let client = target.connect_driven().await.unwrap();
    (target, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_not_in_notifications_by_default_and_a_forged_one_is_not_taken() {
    let Database { target, client, .. } = migrated_database("rows_off").await;
    let mut listening = Notifications::open(&target, Vec::new()).await.unwrap();
    write_one_of_each(&client, "s1").await;
    for payload in payloads(&mut listening, 8).await {
        let (_, row) = Notice::with_row(&payload).unwrap();
        assert_eq!(row, None, "a row in {payload}");
    }

    let mut console = Console::live(target).await;
    // Anyone who can connect can send this; with the opt-in off its row is never taken.
    let forged = r#"{"table": "debate_sessions", "session_id": "s1", "row": ["s1", "FORGED",
        "standard", "running", "gated", null, "2", "8", "0", "0", "[]", "{}", null, null, null, null, null]}"#;
    client
        .execute("SELECT pg_notify('gavel_events', $1)", &[&forged])
        .await
        .unwrap();
    console
        .until("the debate as read", |m| {
            m.debate("s1")
                .is_some_and(|d| d.session.question == "Is the test debate real?")
        })
        .await;
    client.execute(SESSION, &[&"after"]).await.unwrap();
    console
        .until("a row written after the forgery", |m| {
            m.debate("after").is_some()
        })
        .await;
    let question = &console.model.debate("s1").unwrap().session.question;
    assert_eq!(question, "Is the test debate real?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_opt_in_each_row_comes_in_its_notification_as_a_read_gives_it() {
    let (target, client) = opted_in("rows_on").await;
    let mut listening = Notifications::open(&target, Vec::new()).await.unwrap();
    let mut console = Console::live(target).await;
    write_one_of_each(&client, "s1").await;

    let limits = Limits::default();
    let read = history(&client, "s1", &limits).await.unwrap();
    let mut carried = 0;
    for payload in payloads(&mut listening, 8).await {
        let (notice, row) = Notice::with_row(&payload).unwrap();
        let big = notice.table == "debate_rounds" && notice.id == Some(2);
        let Some(row) = row else {
            assert!(big, "no row in {payload}");
            continue;
        };
        assert!(!big, "a payload over 8000 bytes: {payload:.100}");
        carried += 1;
        let change = notice.carried(&row, &limits).unwrap();
        // The session's first payload carries it as it was inserted, running.
        let inserted = matches!(&change, Change::Session(s) if s.is_running());
        assert!(
            inserted || read.contains(&change),
            "{change:?} is not as read"
        );
    }
    assert_eq!(
        carried, 7,
        "every row but the big turn's, the session's twice"
    );

    console
        .until("every row, the big turn read", |m| {
            m.debate("s1").is_some_and(|d| {
                !d.session.is_running()
                    && d.turns.len() == 2
                    && d.turns[1].content.len() == 10_000
                    && d.decisions.len() == 1
                    && d.judgments.len() == 1
                    && d.actions.len() == 1
                    && d.notes.len() == 1
            })
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_opt_in_a_hostile_payload_is_an_error_naming_table_and_key_and_its_row_is_read() {
    let (target, client) = opted_in("rows_hostile").await;
    let mut console = Console::live(target).await;
    write_one_of_each(&client, "s1").await;
    console
        .until("the debate", |m| {
            m.debate("s1").is_some_and(|d| d.notes.len() == 1)
        })
        .await;

    let limits = Limits::default();
    let hostile = [
        // Not JSON; the wrong number of columns; a column not text; another row than named.
        ("{oops", None),
        (
            r#"{"table": "debate_sessions", "session_id": "s1", "row": ["s1", "FORGED"]}"#,
            Some("debate_sessions (s1): row: expected 17 columns"),
        ),
        (
            r#"{"table": "debate_round_decisions", "session_id": "s1", "round_index": 1,
                "row": ["s1", 1, "stop_safety", "{}", null]}"#,
            Some("debate_round_decisions (s1, round 1): row: expected 5 columns"),
        ),
        (
            r#"{"table": "debate_rounds", "session_id": "s1", "id": 1,
                "row": ["2", "s1", "1", "theorist", "FORGED", "1", "false", "{}", null]}"#,
            Some("debate_rounds (s1, id 1): row: holds another row"),
        ),
        (
            r#"{"table": "no_such_table", "session_id": "s1", "row": []}"#,
            Some("no_such_table (s1): row: no such table"),
        ),
    ];
    for (payload, error) in hostile {
        let parsed = Notice::with_row(payload);
        match (error, parsed) {
            (None, Err(e)) => assert!(e.to_string().starts_with("not a gavel_events payload")),
            (Some(error), Ok((notice, Some(row)))) => {
                let e = notice.carried(&row, &limits).unwrap_err().to_string();
                assert!(e.contains(error), "{e}");
            }
            (_, other) => panic!("{payload}: {other:?}"),
        }
        client
            .execute("SELECT pg_notify('gavel_events', $1)", &[&payload])
            .await
            .unwrap();
    }
    // Values out of bounds are read as a read would: kept as issues naming table, key, column.
    let bad_values = r#"{"table": "debate_rounds", "session_id": "s1", "id": 99,
        "row": ["99", "s1", "NaN", "theorist", "\u001b[2J", "-5", "maybe", "{oops", "1e400"]}"#;
    client
        .execute("SELECT pg_notify('gavel_events', $1)", &[&bad_values])
        .await
        .unwrap();
    console
        .until("the carried row with its issues", |m| {
            m.debate("s1")
                .is_some_and(|d| d.issues().any(|i| i.contains("debate_rounds (id 99)")))
        })
        .await;
    let debate = console.model.debate("s1").unwrap();
    assert_eq!(debate.session.question, "Is the test debate real?");
    assert_eq!(
        debate.turns[0].content,
        "Opening, \"quoted\", \\ and \t. VERDICT: yes"
    );
    assert!(
        debate
            .decisions
            .values()
            .all(|d| d.decision.to_wire() == "continue_baseline")
    );
}
