//! Operator actions against the database: racing operators resolve each decision exactly once,
//! and the simulator, as an orchestrator, honours the actions recorded.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_operators_resolve_each_decision_exactly_once() {
    let Database { target, client, .. } = migrated_database("race").await;
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
async fn simulate_plays_into_the_database_and_honours_operator_actions() {
    use gavel::config::{Config, SimulatorConfig};
    use gavel::simulate::{Fixture, Playback};
    use std::sync::Arc;

    let Database { target, client, .. } = migrated_database("simulated").await;
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
            gavel::simulate::postgres::simulate(
                &target,
                vec![timing_out],
                config,
                clock,
                false,
                &gavel::progress::Progress::none(),
            )
            .await
        })
    };
    let waiting = {
        let target = target.clone();
        let clock = clock.clone();
        tokio::spawn(async move {
            gavel::simulate::postgres::simulate(
                &target,
                vec![gated_long],
                slow,
                clock,
                false,
                &gavel::progress::Progress::none(),
            )
            .await
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
async fn any_decision_without_an_action_is_pending_while_the_debate_runs() {
    let Database { target, client, .. } = migrated_database("any_pending").await;
    client.execute(SESSION, &[&"d1"]).await.unwrap();
    for round in [1, 2, 3] {
        common::pg::decide(&client, "d1", round, Some("continue_baseline")).await;
    }
    // An orchestrator resolved the latest round (and another one) but not round 2.
    client
        .batch_execute(
            "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                 VALUES ('d1', 3, 'accept', 'continue_baseline', 'bob'), \
                        ('d1', 1, 'accept', 'continue_baseline', 'bob')",
        )
        .await
        .unwrap();
    let pending_round = |console: &Console| {
        let debate = console
            .model
            .debate("d1")
            .map(|d| d.pending().map(|p| p.round_index));
        let seq = console.model.debates.seq("d1");
        let listed = seq
            .and_then(|s| console.model.debates.get(s))
            .map(|s| s.pending());
        (debate.flatten(), listed.flatten())
    };
    let mut console = Console::live(target).await;
    console
        .until("round 2 pending", |m| {
            m.debate("d1")
                .is_some_and(|d| d.pending().map(|p| p.round_index) == Some(2))
        })
        .await;
    assert_eq!(
        pending_round(&console),
        (Some(2), Some(2)),
        "the debate and its line in the list both say round 2 is pending"
    );
    client
        .batch_execute(
            "INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                 VALUES ('d1', 2, 'accept', 'continue_baseline', 'bob')",
        )
        .await
        .unwrap();
    console
        .until("nothing pending", |m| {
            m.debate("d1").is_some_and(|d| d.pending().is_none())
        })
        .await;
    assert_eq!(pending_round(&console), (None, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_countdown_counts_the_gated_wait_the_database_gives_each_debate() {
    let Database { target, client, .. } = migrated_database("gated_wait").await;
    for id in ["long", "default", "nonsense"] {
        client.execute(SESSION, &[&id]).await.unwrap();
        common::pg::decide(&client, id, 1, Some("continue_baseline")).await;
    }
    client
        .batch_execute(
            "UPDATE debate_sessions SET gated_timeout_secs = 600 WHERE id = 'long';
             UPDATE debate_sessions SET gated_timeout_secs = -5 WHERE id = 'nonsense';",
        )
        .await
        .unwrap();
    let mut console = Console::live(target).await;
    console
        .until("the three waiting", |m| m.debates.waiting() == 3)
        .await;
    let left = |console: &Console, id: &str| {
        let seq = console.model.debates.seq(id).unwrap();
        let summary = console.model.debates.get(seq).unwrap();
        console.model.time_left(summary).unwrap()
    };
    let long = left(&console, "long");
    assert!(
        long > Duration::from_secs(500) && long <= Duration::from_secs(600),
        "{long:?} left of the debate's own 600 s"
    );
    let default = left(&console, "default");
    assert!(
        default > Duration::from_secs(60) && default <= Duration::from_secs(90),
        "{default:?} left of the column's default 90 s"
    );
    // A wait out of bounds is flagged on the row and the console's own wait counts instead.
    let nonsense = console.model.debate("nonsense").unwrap();
    assert!(
        nonsense
            .session
            .issues
            .iter()
            .any(|i| i.contains("gated_timeout_secs")),
        "{:?}",
        nonsense.session.issues
    );
    assert_eq!(nonsense.session.gated_timeout, None);
    console.model.about.gated_timeout = Duration::from_secs(30);
    assert!(left(&console, "nonsense") <= Duration::from_secs(30));
    assert!(
        left(&console, "default") > Duration::from_secs(60),
        "a debate whose row says counts its own"
    );
}
