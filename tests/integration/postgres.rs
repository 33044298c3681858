//! Against a real PostgreSQL started from the system's server binaries (no mock), each test in
//! a database of its own on the binary's shared server (the restart test on a server of its
//! own): migrations on empty and pre-populated databases, rows written by plain SQL reaching
//! the model, the feed surviving a server restart, racing operators, and a foreign writer's
//! garbage shown as such. Fails loudly when no server can be started.

use std::time::{Duration, Instant};

use gavel::app::{Command, Event, Link, update};
use gavel::domain::{ActionKind, Decision, OperatorAction, Reported};
use gavel::policy::ControllerConfig;
use gavel::store::postgres::{Target, migrate, record};
use tokio_postgres::Client;

use crate::common;
use common::pg::{
    Console, Database, SESSION, database, fresh_database, server, table_count, texts, write_turns,
};
use common::screen;

/// Every session row as one string, to compare before and after.
async fn session_rows(client: &Client) -> Vec<String> {
    texts(
        client,
        "SELECT id || question || status || coalesce(num_rounds::text, '-') FROM debate_sessions ORDER BY id",
    )
    .await
}

/// Plays `fixtures` into a migrated database at once, as an orchestrator with no pauses would.
async fn play_into(target: &Target, fixtures: Vec<gavel::simulate::Fixture>) {
    use gavel::config::{Config, SimulatorConfig};
    let config = std::sync::Arc::new(Config {
        simulator: SimulatorConfig {
            round_interval_secs: 0.0,
            turn_interval_secs: 0.0,
            gated_timeout_secs: 0.0,
        },
        ..Config::default()
    });
    let (_playback, clock) = tokio::sync::watch::channel(gavel::simulate::Playback::default());
    gavel::orchestrator::simulate(target, fixtures, config, clock, false)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_creates_the_contract_and_a_second_run_changes_nothing() {
    let Database { mut client, .. } = fresh_database("fresh").await;
    let applied = migrate(&mut client).await.unwrap();
    assert_eq!(applied.len(), 2, "{applied:?}");
    assert!(
        migrate(&mut client).await.unwrap().is_empty(),
        "the second run applies nothing"
    );
    let tables = table_count(
        &client,
        "SELECT count(*) FROM information_schema.tables WHERE table_name IN \
         ('debate_sessions','debate_rounds','debate_round_decisions','debate_round_judgments','debate_operator_actions')",
    )
    .await;
    assert_eq!(tables, 5);
    let triggers = table_count(
        &client,
        "SELECT count(*) FROM pg_trigger WHERE tgname IN ('gavel_notify','gavel_stamp')",
    )
    .await;
    assert_eq!(
        triggers, 10,
        "a stamp and a notification trigger on each of the five tables"
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_written_by_plain_sql_reach_the_model() {
    let Database {
        target, mut client, ..
    } = fresh_database("plain").await;
    migrate(&mut client).await.unwrap();
    client.execute(SESSION, &[&"before-start"]).await.unwrap();
    let mut console = Console::attach(target);
    console
        .until("the existing debate", |m| {
            m.debate("before-start").is_some()
        })
        .await;
    console
        .until("the live link", |m| m.link == Some(Link::Live))
        .await;

    client.execute(SESSION, &[&"s1"]).await.unwrap();
    client
        .batch_execute(
            "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 VALUES ('s1', 1, 'theorist', 'Opening. VERDICT: yes', 900), ('s1', 1, 'skeptic', 'No. VERDICT: no', 800);
             INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, reasons, pmids) \
                 VALUES ('s1', 1, 'skeptic', 'warn_persona', 0.5, '[\"thin\"]', '[{\"pmid\": \"1\", \"verified\": true}]');
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                 VALUES ('s1', 1, 'continue_baseline', '{\"similarity\": null, \"verdict\": \"no | yes\", \"verdict_split\": true, \"reasons\": [\"round 1 < min_rounds 2\"]}');",
        )
        .await
        .unwrap();
    console
        .until("the debate's rows", |m| {
            m.debate("s1").is_some_and(|d| {
                d.turns.len() == 2 && d.pending().is_some() && d.judgments.len() == 1
            })
        })
        .await;
    let debate = console.model.debate("s1").unwrap();
    assert_eq!(debate.session.personas, ["theorist", "skeptic"]);
    assert_eq!(
        debate.judgments[0].decision.to_string(),
        "warn",
        "the long form is understood"
    );
    let pending = debate.pending().unwrap();
    assert_eq!(pending.signals.verdict_split, Some(true));
    assert!(pending.issues.is_empty());

    let selected = console.model.selected_debate().unwrap().session.id.clone();
    assert_eq!(
        selected, "before-start",
        "selection did not move when s1 arrived"
    );

    // The console resolves it; the row lands once and comes back through the feed.
    console.select("s1");
    for key in ['a', 'y'] {
        let event = Event::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char(key),
        ));
        for command in update(&mut console.model, event) {
            console.commands.send(command).unwrap();
        }
    }
    console
        .until("the action to come back", |m| {
            m.debate("s1").is_some_and(|d| d.actions.contains_key(&1))
        })
        .await;
    let row = client
        .query_one("SELECT operator, action, decision FROM debate_operator_actions WHERE session_id = 's1'", &[])
        .await
        .unwrap();
    let (operator, action, decision): (String, String, String) =
        (row.get(0), row.get(1), row.get(2));
    assert_eq!(
        (operator.as_str(), action.as_str(), decision.as_str()),
        ("alice", "accept", "continue_baseline")
    );
    assert!(console.model.debate("s1").unwrap().pending().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_keep_flowing_through_a_server_restart_with_none_missed() {
    let mut server = server();
    let (target, mut client) = database(&server, "restart").await;
    migrate(&mut client).await.unwrap();
    client.execute(SESSION, &[&"long"]).await.unwrap();
    drop(client);
    let mut console = Console::attach(target.clone());
    console
        .until("the live link", |m| m.link == Some(Link::Live))
        .await;

    const ROUNDS: i64 = 60;
    let writer = tokio::spawn(write_turns(
        target,
        "long",
        1..=ROUNDS,
        Duration::from_millis(30),
    ));
    console
        .until("the first rounds", |m| {
            m.debate("long").is_some_and(|d| d.turns.len() >= 15)
        })
        .await;
    let server = tokio::task::spawn_blocking(move || {
        server.stop().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        server.resume().unwrap();
        server
    })
    .await
    .unwrap();
    writer.await.unwrap();
    console.each_turn_once("long", ROUNDS as u64).await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_operators_resolve_each_decision_exactly_once() {
    let Database {
        target, mut client, ..
    } = fresh_database("race").await;
    migrate(&mut client).await.unwrap();
    client.execute(SESSION, &[&"raced"]).await.unwrap();
    let alice = target.connect_driven().await.unwrap();
    let bob = target.connect_driven().await.unwrap();
    const TRIALS: u32 = 100;
    let action = |round: u32, operator: &str, decision: Decision| OperatorAction {
        session_id: "raced".into(),
        round_index: round,
        action: ActionKind::Override.into(),
        decision: decision.into(),
        persona: None,
        operator: operator.into(),
        role: None,
        note: Some(format!("{operator}'s call")),
        created_at: None,
        issues: Vec::new(),
    };
    for round in 1..=TRIALS {
        let a = action(round, "alice", Decision::StopConverged);
        let b = action(round, "bob", Decision::StopSafety);
        let (ra, rb) = tokio::join!(record(&alice, &a), record(&bob, &b));
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        let (winner, loser_saw) = match (ra, rb) {
            (Ok(w), Err(seen)) | (Err(seen), Ok(w)) => (w, seen),
            other => panic!("round {round}: expected one winner, got {other:?}"),
        };
        assert_eq!(
            loser_saw, winner,
            "round {round}: the loser is told who won and how"
        );
    }
    let rows = table_count(&client, "SELECT count(*) FROM debate_operator_actions").await;
    assert_eq!(rows, i64::from(TRIALS));
    let distinct = table_count(
        &client,
        "SELECT count(DISTINCT round_index) FROM debate_operator_actions",
    )
    .await;
    assert_eq!(distinct, i64::from(TRIALS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_writers_garbage_is_shown_as_such() {
    let Database {
        target, mut client, ..
    } = fresh_database("garbage").await;
    // This orchestrator keeps signal_json as TEXT, so it can hold anything.
    client
        .batch_execute(
            "CREATE TABLE debate_round_decisions (session_id TEXT, round_index INT, decision TEXT, \
             signal_json TEXT, decided_at TIMESTAMPTZ DEFAULT now(), PRIMARY KEY (session_id, round_index))",
        )
        .await
        .unwrap();
    migrate(&mut client).await.unwrap();
    let mut console = Console::attach(target);
    console
        .until("the live link", |m| m.link == Some(Link::Live))
        .await;
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, controller_mode, personas, metadata, token_budget) \
                 VALUES ('g', E'Topic \\x1b[2J', 'turbo', '{\"not\": \"a list\"}', '[1, 2]', 100);
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) VALUES \
                 ('g', 1, 'pause_for_coffee', '{\"similarity\": \"NaN\", \"new_claims\": \"many\"}'), \
                 ('g', 2, 'stop_converged', '{oops');
             INSERT INTO debate_round_judgments (session_id, round_index, agent_persona, decision, score, pmids) \
                 VALUES ('g', 1, 'theorist', 'shrug', 'NaN', '\"12345\"');",
        )
        .await
        .unwrap();
    console
        .until("the garbage", |m| {
            m.debate("g")
                .is_some_and(|d| d.decisions.len() == 2 && d.judgments.len() == 1)
        })
        .await;
    let debate = console.model.debate("g").unwrap();
    assert_eq!(
        debate.session.controller_mode,
        Reported::Unknown("turbo".into())
    );
    assert!(
        debate
            .session
            .issues
            .iter()
            .any(|i| i.starts_with("debate_sessions (g): personas: expected an array")),
        "{:?}",
        debate.session.issues
    );
    assert!(
        debate
            .session
            .issues
            .iter()
            .any(|i| i.starts_with("debate_sessions (g): metadata: unreadable")),
        "{:?}",
        debate.session.issues
    );
    let first = &debate.decisions[&1];
    assert_eq!(first.decision, Reported::Unknown("pause_for_coffee".into()));
    assert!(first.signals.similarity.unwrap().is_nan());
    assert!(
        first
            .issues
            .iter()
            .any(|i| i.contains("new_claims: \"many\" is not a number")),
        "{:?}",
        first.issues
    );
    let second = &debate.decisions[&2];
    assert!(
        second.issues[0].starts_with("debate_round_decisions (g, 2): signal_json: not JSON"),
        "{:?}",
        second.issues
    );
    let judgment = &debate.judgments[0];
    assert_eq!(judgment.decision, Reported::Unknown("shrug".into()));
    assert!(judgment.score.unwrap().is_nan());
    assert!(
        judgment.issues.iter().any(|i| i.contains("pmids")),
        "{:?}",
        judgment.issues
    );

    let mut model = console.model.clone();
    model.select(model.debates.seq("g").unwrap());
    let screen = screen(&model);
    assert!(
        screen.contains("unknown mode \"turbo\"") && screen.contains("Topic ␛[2J"),
        "{screen}"
    );
    assert!(
        screen.contains("signal_json: not JSON"),
        "the issue is on screen:\n{screen}"
    );
}

/// A console live on a database holding 400 finished debates `old-1` (the most recent) to
/// `old-400`, and the rows of `more`.
async fn live_over_old_debates(name: &str, more: &str) -> Console {
    let Database {
        target, mut client, ..
    } = fresh_database(name).await;
    migrate(&mut client).await.unwrap();
    client
        .batch_execute(&format!(
            "INSERT INTO debate_sessions (id, question, status, created_at) \
                 SELECT 'old-' || n, 'q', 'completed', now() - n * interval '1 minute' \
                 FROM generate_series(1, 400) n;
             {more}"
        ))
        .await
        .unwrap();
    let mut console = Console::attach(target);
    console
        .until("the live link", |m| m.link == Some(Link::Live))
        .await;
    console
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_loads_lazily() {
    let mut console = live_over_old_debates(
        "history",
        "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             SELECT 'old-' || n, r, 'theorist', 'text', 10 FROM generate_series(1, 400) n, generate_series(1, 25) r;
         INSERT INTO debate_sessions (id, question) VALUES ('now-running', 'q');
         INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
             VALUES ('now-running', 1, 'theorist', 'live', 10);",
    )
    .await;
    let model = &console.model;
    assert_eq!(
        model.debates.len(),
        gavel::store::postgres::START_WINDOW as usize,
        "the most recent debates (the running one among them), not all 401"
    );
    let with_rounds: Vec<&str> = model
        .debates
        .summaries()
        .filter(|s| s.latest_round > 0)
        .map(|s| &*s.id)
        .collect();
    assert_eq!(
        with_rounds,
        ["now-running"],
        "only the running debate's turns load at start"
    );
    console
        .until("the selected debate's history", |m| {
            m.selected_debate().is_some_and(|d| d.turns.len() == 25)
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_confirmed_finds_debates_beyond_those_loaded() {
    let mut console = live_over_old_debates(
        "search",
        "INSERT INTO debate_round_decisions (session_id, round_index, decision) \
             VALUES ('old-377', 1, 'stop_converged');
         INSERT INTO debate_sessions (id, question, status) VALUES ('50%_off', 'q', 'completed');",
    )
    .await;
    assert!(
        console.model.debates.seq("old-377").is_none(),
        "beyond the start window"
    );
    console.press("/old-37");
    let commands = update(
        &mut console.model,
        Event::Key(crossterm::event::KeyCode::Enter.into()),
    );
    assert_eq!(commands, [Command::Search("old-37".into())]);
    for command in commands {
        console.commands.send(command).unwrap();
    }
    console
        .until("old-377 found with its decision", |m| {
            let summary = m.debates.seq("old-377").and_then(|seq| m.debates.get(seq));
            summary.is_some_and(|s| s.last_decision.is_some())
        })
        .await;
    let found = console.model.debates.seq("old-377").unwrap();
    let summary = console.model.debates.get(found).unwrap();
    assert_eq!(
        summary.last_decision,
        Some(Reported::Known(Decision::StopConverged))
    );
    assert_eq!(
        console.model.debates.listed(),
        11,
        "old-37 and old-370 to old-379"
    );

    // LIKE's wildcards are taken literally: "50%_" finds 50%_off, not old-350.
    console.press("/");
    update(
        &mut console.model,
        Event::Key(crossterm::event::KeyCode::Esc.into()),
    );
    console.press("/50%_");
    for command in update(
        &mut console.model,
        Event::Key(crossterm::event::KeyCode::Enter.into()),
    ) {
        console.commands.send(command).unwrap();
    }
    console
        .until("50%_off", |m| m.debates.seq("50%_off").is_some())
        .await;
    assert!(console.model.debates.seq("old-350").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_plays_into_the_database_and_honours_operator_actions() {
    use gavel::config::{Config, SimulatorConfig};
    use gavel::simulate::{Fixture, Playback};
    use std::sync::Arc;

    let Database {
        target, mut client, ..
    } = fresh_database("simulated").await;
    migrate(&mut client).await.unwrap();
    let config = Arc::new(Config {
        simulator: SimulatorConfig {
            round_interval_secs: 0.05,
            turn_interval_secs: 0.0,
            gated_timeout_secs: 0.5,
        },
        ..Config::default()
    });
    let bundled = Fixture::bundled().unwrap();
    let gated = bundled
        .iter()
        .find(|f| f.session.id == "fasting-insulin-0412")
        .unwrap();
    let timing_out = bundled
        .iter()
        .find(|f| f.session.id == "review-pdac-methylation")
        .unwrap()
        .clone();
    let mut gated_long = gated.clone();
    gated_long.session.id = "waits-for-alice".into();
    let (_playback, clock) = tokio::sync::watch::channel(Playback::default());

    // One debate left to its timeouts, one whose first decision an operator overrides.
    let slow = Arc::new(Config {
        simulator: SimulatorConfig {
            gated_timeout_secs: 3600.0,
            ..config.simulator.clone()
        },
        ..(*config).clone()
    });
    let fast_run = {
        let (target, config, clock) = (target.clone(), config.clone(), clock.clone());
        tokio::spawn(async move {
            gavel::orchestrator::simulate(&target, vec![timing_out], config, clock, false).await
        })
    };
    let waiting = {
        let target = target.clone();
        let clock = clock.clone();
        tokio::spawn(async move {
            gavel::orchestrator::simulate(&target, vec![gated_long], slow, clock, false).await
        })
    };

    // Wait for the first decision of the waiting debate, then override it to stop.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = table_count(
            &client,
            "SELECT count(*) FROM debate_round_decisions WHERE session_id = 'waits-for-alice'",
        )
        .await;
        if n == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "no decision written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stop = common::rows::action(
        "waits-for-alice",
        1,
        ActionKind::Override,
        Decision::StopSafety.into(),
    );
    record(&client, &stop).await.unwrap().unwrap();
    tokio::time::timeout(Duration::from_secs(20), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(60), fast_run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();

    let row = client
        .query_one(
            "SELECT status, num_rounds FROM debate_sessions WHERE id = 'waits-for-alice'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, String>(0), row.get::<_, i32>(1)),
        ("completed".into(), 1),
        "the override stopped it after round 1"
    );
    let review = client
        .query_one(
            "SELECT status, num_rounds FROM debate_sessions WHERE id = 'review-pdac-methylation'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (review.get::<_, String>(0), review.get::<_, i32>(1)),
        ("completed".into(), 4)
    );
    let timeouts = table_count(
        &client,
        "SELECT count(*) FROM debate_operator_actions WHERE session_id = 'review-pdac-methylation' AND operator = 'timeout'",
    )
    .await;
    assert_eq!(
        timeouts, 4,
        "every gated decision timed out to the controller's"
    );
    let rounds = table_count(
        &client,
        "SELECT count(*) FROM debate_rounds WHERE session_id = 'review-pdac-methylation'",
    )
    .await;
    assert_eq!(rounds, 12);
    let signals: serde_json::Value = client
        .query_one(
            "SELECT signal_json FROM debate_round_decisions WHERE session_id = 'review-pdac-methylation' AND round_index = 4",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(signals["open_disputes"], 0);
    assert!(
        signals.get("escalate_persona").is_some(),
        "every signal key is written: {signals}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibration_from_the_database_matches_the_recordings_it_was_played_from() {
    use gavel::calibrate::{self, RecordedDebate};
    use gavel::simulate::Fixture;

    let Database {
        target, mut client, ..
    } = fresh_database("calibrated").await;
    migrate(&mut client).await.unwrap();
    let fixtures: Vec<Fixture> = ["converges_round3", "verdict_changes_round5"]
        .iter()
        .map(|n| {
            Fixture::load(std::path::Path::new(&format!(
                "tests/data/calibration/{n}.jsonl"
            )))
            .unwrap()
        })
        .collect();
    play_into(&target, fixtures.clone()).await;
    // A running debate is not calibrated; an `off` debate written by plain SQL has no
    // decisions, so its signals are measured from its turns; a debate whose decisions hold
    // their signals needs no turns.
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, status, controller_mode, token_budget, personas) \
             VALUES ('still-going', 'q', 'running', 'shadow', 1000, '[\"a\"]'), \
                    ('fixed-loop', 'q', 'completed', 'off', 1000, '[\"a\"]'), \
                    ('decisions-only', 'q', 'completed', 'shadow', 1000, '[\"a\"]'); \
             INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) VALUES \
             ('decisions-only', 1, 'continue_baseline', '{\"new_claims\": 4, \"verdict_split\": false, \"tokens_used\": 50}'); \
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) VALUES \
             ('still-going', 1, 'a', 'Not yet.', 5), \
             ('fixed-loop', 1, 'a', 'Cats sleep a lot.\n\nVERDICT: yes', 10), \
             ('fixed-loop', 2, 'a', 'Dogs bark at night.\n\nVERDICT: yes', 20), \
             ('fixed-loop', 3, 'a', 'Dogs bark at night.\n\nVERDICT: yes', 30);",
        )
        .await
        .unwrap();

    let mut from_db = calibrate::from_database(
        &mut client,
        &Default::default(),
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    )
    .await
    .unwrap();
    let in_session_order = texts(
        &client,
        "SELECT id FROM debate_sessions WHERE status <> 'running'",
    )
    .await;
    let ids: Vec<&str> = from_db.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids, in_session_order,
        "records come in the session rows' order"
    );
    from_db.sort_by(|a, b| a.id.cmp(&b.id));
    let ids: Vec<&str> = from_db.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "decisions-only",
            "fixed-loop",
            "salt-converges-r3",
            "salt-verdict-r5"
        ]
    );
    let from_files = calibrate::from_recordings(
        &fixtures,
        |f| {
            let config = std::sync::Arc::new(gavel::config::Config::default());
            gavel::simulate::play_in_shadow(f, config)
        },
        &gavel::calibrate::Measuring::recorded(gavel::config::Config::default().signals.measure()),
    );
    assert_eq!(from_db[2..], from_files[..]);
    assert_eq!(from_db[2].labels.len(), 2, "the recorded labels came back");
    assert_eq!(from_db[0].rounds[0].signals.new_claims, 4);
    assert_eq!(from_db[0].tokens_after(1), 50);

    let fixed: &RecordedDebate = &from_db[1];
    assert_eq!(fixed.rounds.len(), 3);
    assert_eq!(fixed.rounds[2].signals.similarity, Some(1.0));
    assert_eq!(fixed.tokens_after(3), 60);
    let base = ControllerConfig::default();
    let current = calibrate::Setting::current(&base);
    let (settings, skipped) = calibrate::settings(&[], &current).unwrap();
    let report = calibrate::Report::run(&from_db, settings, skipped, &current, &base, true);
    let outcomes = report.rows[0].outcomes.as_ref().unwrap();
    let fixed_loop = outcomes
        .iter()
        .find(|o| o.session_id == "fixed-loop")
        .unwrap();
    assert_eq!((fixed_loop.rounds_used, fixed_loop.tokens_saved), (3, 0));
    assert_eq!(report.rows[0].tokens_saved, 6000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gavel_trace_agrees_with_the_database() {
    use gavel::simulate::Fixture;

    let Database {
        target,
        mut client,
        url,
        ..
    } = fresh_database("traced").await;
    migrate(&mut client).await.unwrap();
    let fixture = Fixture::bundled()
        .unwrap()
        .into_iter()
        .find(|f| f.session.id == "salt-substitutes-shadow")
        .unwrap();
    play_into(&target, vec![fixture]).await;

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["trace", "salt-substitutes-shadow", "--json", "--db", &url])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();

    let rows = client
        .query(
            "SELECT d.round_index, d.decision, (d.signal_json->>'similarity')::float8, \
                    a.operator, a.action \
             FROM debate_round_decisions d LEFT JOIN debate_operator_actions a \
               USING (session_id, round_index) \
             WHERE session_id = 'salt-substitutes-shadow' ORDER BY round_index",
            &[],
        )
        .await
        .unwrap();
    let rounds = trace["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), rows.len());
    for (round, row) in rounds.iter().zip(&rows) {
        assert_eq!(round["round"], row.get::<_, i32>(0));
        assert_eq!(round["decision"], row.get::<_, String>(1));
        assert_eq!(round["similarity"].as_f64(), row.get::<_, Option<f64>>(2));
        assert_eq!(
            round["action"]["operator"].as_str(),
            row.get::<_, Option<String>>(3).as_deref()
        );
        assert_eq!(
            round["action"]["action"].as_str(),
            row.get::<_, Option<String>>(4).as_deref()
        );
    }
    assert_eq!(rounds[2]["action"]["operator"], "ben");
    assert!(
        trace["ending"]
            .as_str()
            .unwrap()
            .starts_with("stopped at round 6: the orchestrator ended the fixed loop"),
        "{}",
        trace["ending"]
    );

    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["trace", "no-such-debate", "--db", &url])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no debate \"no-such-debate\""),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gavel_export_writes_a_time_range_as_csv_and_jsonl() {
    use gavel::simulate::Fixture;

    let Database {
        target,
        mut client,
        url,
        ..
    } = fresh_database("exported").await;
    migrate(&mut client).await.unwrap();
    let fixtures: Vec<Fixture> = Fixture::bundled()
        .unwrap()
        .into_iter()
        .filter(|f| {
            ["salt-substitutes-shadow", "fmt-melanoma-pd1"].contains(&f.session.id.as_str())
        })
        .collect();
    play_into(&target, fixtures).await;
    // Last year's rows, outside the range exported below.
    client
        .batch_execute(
            "INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json, decided_at) \
             VALUES ('old', 1, 'continue_baseline', '{}', now() - interval '1 year'); \
             INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator, note, created_at) \
             VALUES ('old', 1, 'accept', 'continue_baseline', 'zed', E'a\\x1b[2Jb', now() - interval '1 year');",
        )
        .await
        .unwrap();
    let count = |sql: &'static str| table_count(&client, sql);
    let recent = count(
        "SELECT (SELECT count(*) FROM debate_round_decisions WHERE decided_at > now() - interval '1 day') \
              + (SELECT count(*) FROM debate_round_judgments) \
              + (SELECT count(*) FROM debate_operator_actions WHERE created_at > now() - interval '1 day')",
    )
    .await;
    let all = count(
        "SELECT (SELECT count(*) FROM debate_round_decisions) + (SELECT count(*) FROM debate_round_judgments) \
              + (SELECT count(*) FROM debate_operator_actions)",
    )
    .await;
    assert_eq!(all, recent + 2);

    let since = (chrono::Utc::now() - chrono::Duration::days(1)).to_rfc3339();
    let dir = std::env::temp_dir().join(format!("gavel-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("audit.csv");
    let gavel = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_gavel"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    };
    gavel(&[
        "export",
        "--db",
        &url,
        "--format",
        "csv",
        "--since",
        &since,
        "-o",
        csv_path.to_str().unwrap(),
    ]);
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        &header[..5],
        ["table", "session_id", "round_index", "at", "decision"]
    );
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len() as i64, recent);
    assert!(records.iter().all(|r| &r[1] != "old"));
    let ben = records
        .iter()
        .find(|r| &r[0] == "debate_operator_actions" && &r[2] == "3")
        .expect("ben's override of round 3");
    assert_eq!(&ben[11], "ben");
    assert_eq!(&ben[4], "continue_baseline");
    let abort = records
        .iter()
        .find(|r| &r[0] == "debate_round_judgments" && &r[4] == "abort")
        .expect("the judge's abort");
    assert!(
        abort[8].contains(":false"),
        "an unverified PMID: {:?}",
        &abort[8]
    );

    // Everything, as JSON Lines on stdout: control characters escaped by JSON.
    let output = gavel(&["export", "--db", &url]);
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as i64, all);
    let old = lines.iter().find(|l| l["operator"] == "zed").unwrap();
    assert_eq!(old["note"], "a\u{1b}[2Jb");
    assert!(
        lines
            .iter()
            .any(|l| l["signals"]["similarity_threshold"] == 0.9)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panel_and_extended_metadata_written_by_sql_reach_the_format_view() {
    let Database {
        target, mut client, ..
    } = fresh_database("formats").await;
    migrate(&mut client).await.unwrap();
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, controller_mode, personas, token_budget, tokens_used, metadata) \
                 VALUES ('p', 'Panel?', 'shadow', '[\"a\", \"b\"]', 10000, 2000, \
                 '{\"format\": \"panel\", \"aspects\": [\"cost\"], \"complexity\": 0.4, \"agent_count\": 4, \"cost_usd\": 1.5, \"budget_usd\": 1.0}');
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used, metadata) VALUES \
                 ('p', 1, 'a', E'Yes.\\nVERDICT: build it', 1000, '{\"phase\": \"opening\"}'), \
                 ('p', 1, 'b', E'No.\\nVERDICT: wait', 1000, '{\"phase\": \"opening\"}'), \
                 ('p', 2, 'a', E'Fine.\\nVERDICT: wait', 500, \
                   '{\"aspect\": \"cost\", \"cruxes\": [{\"claim\": \"Is the price falling?\", \"type\": \"empirical\", \"between\": [\"a\", \"b\"]}, \
                                                      {\"claim\": \"Who pays?\", \"type\": \"moral\"}]}');",
        )
        .await
        .unwrap();
    let mut console = Console::attach(target);
    console
        .until("the panel's rows", |m| {
            m.debate("p").is_some_and(|d| d.turns.len() == 3)
        })
        .await;
    let mut model = console.model.clone();
    model.select(model.debates.seq("p").unwrap());
    update(
        &mut model,
        Event::Key(crossterm::event::KeyCode::Char('5').into()),
    );
    let screen = screen(&model);
    for shown in [
        "complexity 0.40 · agents 4 (expected 3 or 5) · cost $1.50 of $1.00 (150%)",
        "cost                round 2",
        "opening             round 1",
        "r1  build it: a  ✕  wait: b",
        " empirical   Is the price falling?",
        "unknown type \"moral\"",
        "a                     build it → wait  shifted",
    ] {
        assert!(screen.contains(shown), "{shown:?} missing:\n{screen}");
    }
}
