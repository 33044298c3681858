//! The live feed: rows written by plain SQL reaching the model, through a server restart with
//! none missed, a foreign writer's garbage shown as such, history loaded lazily, a filter finding
//! debates beyond those loaded, and metadata reaching the format view.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_written_by_plain_sql_reach_the_model() {
    let Database { target, client, .. } = migrated_database("plain").await;
    client.execute(SESSION, &[&"before-start"]).await.unwrap();
    let mut console = Console::attach(target);
    console
        .until("the existing debate", |m| {
            m.debate("before-start").is_some()
        })
        .await;
    console
        .until("the live link", |m| m.live.link == Some(Link::Live))
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

/// A key too long for a notification's payload: the trigger says "resync" instead, and the feed
/// reads everything changed since its watermark, the row among it, while rows named as usual
/// keep coming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_whose_key_is_too_long_for_a_notification_is_read_all_the_same() {
    let Database { target, client, .. } = migrated_database("resync").await;
    let mut console = Console::attach(target);
    console
        .until("the live link", |m| m.live.link == Some(Link::Live))
        .await;
    let long = format!("long-{}", "k".repeat(8_000));
    let payload = client
        .query_one(
            "SELECT octet_length(json_build_object('table', 'debate_sessions', 'session_id', $1::text)::text)",
            &[&long],
        )
        .await
        .unwrap();
    assert!(
        payload.get::<_, i32>(0) > 7_900,
        "the trigger names this key by a resync"
    );
    client.execute(SESSION, &[&long.as_str()]).await.unwrap();
    client.execute(SESSION, &[&"short"]).await.unwrap();
    console
        .until("both debates", |m| {
            m.debate(&long).is_some() && m.debate("short").is_some()
        })
        .await;
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
        .until("the live link", |m| m.live.link == Some(Link::Live))
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
        .until("the live link", |m| m.live.link == Some(Link::Live))
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
    let Database { target, client, .. } = migrated_database(name).await;
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
        .until("the live link", |m| m.live.link == Some(Link::Live))
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
async fn colon_says_whether_the_database_has_a_debate_not_loaded() {
    let mut console = live_over_old_debates("lookup", "").await;
    assert!(console.model.debates.seq("old-377").is_none(), "not loaded");
    console.press(":old-377");
    console.handle(Event::Key(crossterm::event::KeyCode::Enter.into()));
    console
        .until("old-377 selected", |m| {
            m.selected_summary().is_some_and(|s| &*s.id == "old-377")
        })
        .await;
    assert_eq!(console.flash(), "at old-377");
    console.press(":frob");
    console.handle(Event::Key(crossterm::event::KeyCode::Enter.into()));
    assert_eq!(console.flash(), "looking up frob in the database ...");
    console
        .until("the database's answer", |m| m.nav.jump_to.is_none())
        .await;
    assert_eq!(
        console.flash(),
        "no debate frob in the database, and no command :frob — :help lists the commands"
    );
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
async fn panel_and_extended_metadata_written_by_sql_reach_the_format_view() {
    let Database { target, client, .. } = migrated_database("formats").await;
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

/// The debates list's row of `id`, as drawn at 160x48.
fn list_row(console: &Console, id: &str) -> String {
    screen(&console.model)
        .lines()
        .find(|line| line.contains(id))
        .unwrap_or_else(|| panic!("{id} is not on screen"))
        .split('│')
        .nth(1)
        .expect("the list's column")
        .trim_end()
        .to_owned()
}

/// Opens debate `id` and waits for its turns to load.
async fn open(console: &mut Console, id: &str) {
    console.select(id);
    console.press("1");
    console
        .until("the debate's history", |m| {
            m.selected_debate().is_some_and(|d| !d.turns.is_empty())
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_debates_row_in_the_list_is_the_same_before_and_after_it_is_opened() {
    let Database { target, client, .. } = migrated_database("ending").await;
    // Selected at start (the oldest), so that the others' history is not loaded.
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, status, created_at) \
                 VALUES ('opened-first', 'q', 'completed', now() - interval '1 day')",
        )
        .await
        .unwrap();
    play_into(&target, vec![common::fixture("judge_interventions")]).await;
    // As a public corpus loaded with SQL: the final count, three rounds of turns, no decisions.
    client
        .batch_execute(
            "INSERT INTO debate_sessions (id, question, status, num_rounds) \
                 VALUES ('corpus-1', 'q', 'completed', 3);
             INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 SELECT 'corpus-1', r, p, 'text', 10 \
                 FROM generate_series(1, 3) r, unnest(ARRAY['theorist', 'skeptic']) p;",
        )
        .await
        .unwrap();
    let mut console = Console::live(target).await;
    console
        .until("every debate", |m| m.debates.len() == 3)
        .await;
    let aborted = list_row(&console, "fmt-melanoma-pd1");
    let corpus = list_row(&console, "corpus-1");
    assert!(
        aborted.contains("aborted") && aborted.contains("3/8") && aborted.contains("judge abort"),
        "the judge's abort and the three rounds the database holds, before the turns load: {aborted}"
    );
    assert!(corpus.contains("3/8"), "the final count: {corpus}");
    open(&mut console, "fmt-melanoma-pd1").await;
    assert_eq!(list_row(&console, "fmt-melanoma-pd1"), aborted);
    open(&mut console, "corpus-1").await;
    assert_eq!(list_row(&console, "corpus-1"), corpus);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_for_the_status_badges_word_finds_the_stored_word() {
    let mut console = live_over_old_debates(
        "done",
        "UPDATE debate_sessions SET status = 'aborted';
         INSERT INTO debate_sessions (id, question, status, created_at) \
             VALUES ('ancient', 'q', 'completed', now() - interval '1 year');",
    )
    .await;
    assert!(
        console.model.debates.seq("ancient").is_none(),
        "beyond the start window"
    );
    console.press("/status:done");
    let commands = update(
        &mut console.model,
        Event::Key(crossterm::event::KeyCode::Enter.into()),
    );
    assert_eq!(commands, [Command::Search("done".into())]);
    for command in commands {
        console.commands.send(command).unwrap();
    }
    console
        .until("the completed debate the badge calls done", |m| {
            m.debates.seq("ancient").is_some()
        })
        .await;
    assert_eq!(console.model.debates.listed(), 1, "only it is done");
}
