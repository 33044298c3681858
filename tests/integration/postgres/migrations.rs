//! `gavel migrate` on empty databases and on an orchestrator's: the contract created, a second
//! run changing nothing, the orchestrator's tables and rows kept.

use super::*;

/// Every session row as one string, to compare before and after.
async fn session_rows(client: &Client) -> Vec<String> {
    texts(
        client,
        "SELECT id || question || status || coalesce(num_rounds::text, '-') FROM debate_sessions ORDER BY id",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_creates_the_contract_and_a_second_run_changes_nothing() {
    let Database { mut client, .. } = fresh_database("fresh").await;
    let applied = migrate(&mut client).await.unwrap();
    assert_eq!(applied.len(), 6, "{applied:?}");
    assert!(
        migrate(&mut client).await.unwrap().is_empty(),
        "the second run applies nothing"
    );
    let tables = table_count(
        &client,
        "SELECT count(*) FROM information_schema.tables WHERE table_name IN \
         ('debate_sessions','debate_rounds','debate_round_decisions','debate_round_judgments','debate_operator_actions','gavel_debate_notes')",
    )
    .await;
    assert_eq!(tables, 6);
    let triggers = table_count(
        &client,
        "SELECT count(*) FROM pg_trigger WHERE tgname IN ('gavel_notify','gavel_stamp')",
    )
    .await;
    assert_eq!(
        triggers, 13,
        "a stamp and a notification trigger on each of the five tables and the notes, and a \
         stamp on the settings' history"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_keeps_an_orchestrators_tables_and_rows() {
    let Database { mut client, .. } = fresh_database("orchestrated").await;
    client
        .batch_execute(
            "CREATE TABLE debate_sessions (id TEXT PRIMARY KEY, question TEXT, status TEXT DEFAULT 'running', \
                 num_rounds INT, created_at TIMESTAMPTZ DEFAULT now());
             CREATE TABLE debate_rounds (id BIGSERIAL PRIMARY KEY, session_id TEXT, round_number INT, \
                 agent_persona TEXT, content TEXT, tokens_used INT);
             CREATE TABLE debate_round_decisions (session_id TEXT, round_index INT, decision TEXT, \
                 signal_json JSONB, decided_at TIMESTAMPTZ DEFAULT now(), PRIMARY KEY (session_id, round_index));
             INSERT INTO debate_sessions (id, question, status, num_rounds) VALUES \
                 ('old-1', 'Kept?', 'completed', 3), ('old-2', 'Also kept?', 'running', NULL);
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 SELECT 'old-1', r, 'theorist', 'round ' || r, 100 FROM generate_series(1, 3) r;
             INSERT INTO debate_round_decisions VALUES ('old-1', 3, 'stop_converged', '{\"similarity\": 0.95}', now());",
        )
        .await
        .unwrap();
    let before = session_rows(&client).await;
    let rounds_before = table_count(
        &client,
        "SELECT sum(id * round_number)::bigint FROM debate_rounds",
    )
    .await;

    migrate(&mut client).await.unwrap();
    assert!(migrate(&mut client).await.unwrap().is_empty());

    let after = session_rows(&client).await;
    assert_eq!(before, after, "existing sessions untouched");
    assert_eq!(
        table_count(
            &client,
            "SELECT sum(id * round_number)::bigint FROM debate_rounds"
        )
        .await,
        rounds_before
    );
    assert_eq!(
        table_count(&client, "SELECT count(*) FROM debate_round_decisions").await,
        1
    );
    let mode: String = client
        .query_one(
            "SELECT controller_mode FROM debate_sessions WHERE id = 'old-1'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        mode, "shadow",
        "a missing column arrives with the contract's default"
    );
    let superseded: bool = client
        .query_one("SELECT superseded FROM debate_rounds LIMIT 1", &[])
        .await
        .unwrap()
        .get(0);
    assert!(!superseded);
}

/// Every column of each table after `gavel migrate`: the contract's and gavel's own.
const COLUMNS: [(&str, &str); 5] = [
    (
        "debate_sessions",
        "id question debate_type status controller_mode num_rounds min_rounds max_rounds \
         token_budget tokens_used personas metadata created_at finished_at gavel_xid \
         settings_version settings_arm gated_timeout_secs",
    ),
    (
        "debate_rounds",
        "id session_id round_number agent_persona content tokens_used superseded metadata \
         created_at gavel_xid",
    ),
    (
        "debate_round_decisions",
        "session_id round_index decision signal_json decided_at gavel_xid",
    ),
    (
        "debate_round_judgments",
        "id session_id round_index agent_persona decision score reasons judge_model pmids \
         created_at gavel_xid",
    ),
    (
        "debate_operator_actions",
        "id session_id round_index action decision persona operator note created_at gavel_xid \
         operator_role",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_adds_every_missing_column_to_an_orchestrators_tables() {
    let Database {
        mut client, target, ..
    } = fresh_database("bare_orchestrator").await;
    // Tables as an orchestrator created them: their keys and a few columns each.
    client
        .batch_execute(
            "CREATE TABLE debate_sessions (id TEXT PRIMARY KEY, question TEXT, status TEXT);
             CREATE TABLE debate_rounds (id BIGSERIAL PRIMARY KEY, session_id TEXT, content TEXT);
             CREATE TABLE debate_round_decisions (session_id TEXT, round_index INT, decision TEXT, \
                 PRIMARY KEY (session_id, round_index));
             CREATE TABLE debate_round_judgments (id BIGSERIAL PRIMARY KEY, session_id TEXT, \
                 round_index INT, score REAL);
             CREATE TABLE debate_operator_actions (id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL, \
                 round_index INT NOT NULL, action TEXT NOT NULL, operator TEXT NOT NULL);
             INSERT INTO debate_sessions VALUES ('bare', 'Columns added?', 'running');
             INSERT INTO debate_rounds (session_id, content) VALUES ('bare', 'A turn.');
             INSERT INTO debate_round_decisions VALUES ('bare', 1, 'stop_converged'), \
                 ('bare', 2, 'continue_baseline');
             INSERT INTO debate_round_judgments (session_id, round_index, score) VALUES ('bare', 1, 0.5);
             INSERT INTO debate_operator_actions (session_id, round_index, action, operator) \
                 VALUES ('bare', 1, 'accept', 'bob');",
        )
        .await
        .unwrap();
    migrate(&mut client).await.unwrap();
    assert!(migrate(&mut client).await.unwrap().is_empty());

    for (table, expected) in COLUMNS {
        let mut columns = texts(
            &client,
            &format!(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_name = '{table}' ORDER BY column_name"
            ),
        )
        .await;
        let mut wanted: Vec<String> = expected.split_whitespace().map(str::to_owned).collect();
        wanted.sort();
        columns.sort();
        assert_eq!(columns, wanted, "the columns of {table}");
    }
    let wait: f64 = client
        .query_one(
            "SELECT gated_timeout_secs FROM debate_sessions WHERE id = 'bare'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(wait, 90.0, "an existing debate gets the default wait");

    // A console reads the old rows with the columns gavel added: round 2 is pending.
    let mut console = Console::live(target).await;
    console
        .until("the pending decision", |m| {
            m.debate("bare")
                .is_some_and(|d| d.pending().map(|p| p.round_index) == Some(2))
        })
        .await;
    let debate = console.model.debate("bare").unwrap();
    assert_eq!(debate.session.question, "Columns added?");
    assert_eq!(debate.session.gated_timeout, Some(Duration::from_secs(90)));
    assert!(
        debate.session.issues.is_empty(),
        "{:?}",
        debate.session.issues
    );
}
