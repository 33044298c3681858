//! Faults injected into a real PostgreSQL (started by the tests, no mock) while a console follows
//! it: the listener's backend terminated mid-stream, again and again; the listener's backend
//! frozen (SIGSTOP) past its keepalive while the turns it misses are committed, then caught up;
//! a restart with an operator action written while the server was down and then retried. Every
//! round is shown exactly once, and every action is recorded once or reported; a retry of one
//! that landed unanswered is told it was recorded.

use std::time::Duration;

use gavel::console::app::{Event, Link, update};
use gavel::domain::{ActionKind, Decision, OperatorAction};
use gavel::store::ResolveError;
use gavel::store::postgres::{Target, migrate, resolve};
use tokio_postgres::Client;

use crate::common;
use common::pg::{
    Console, Frozen, SESSION, action_count, assert_each_turn_once, database, decide, server,
    table_count, target_as, write_turns,
};

/// A migrated database `name` holding the gated debate `session`; its target as the console
/// uses it (application_name `gavel`), and the same as `application` for the test's own work.
async fn debate(
    server: &gavel::store::postgres::LocalServer,
    name: &str,
    session: &str,
    application: &str,
) -> (Target, Target) {
    let (target, mut client) = database(server, name).await;
    migrate(&mut client).await.unwrap();
    client.execute(SESSION, &[&session]).await.unwrap();
    (target, target_as(server, name, "postgres", application))
}

/// [`debate`] `gated` in database `name`, with round 1's decision `stop_converged` pending: the
/// console's target, and the test's own connection.
async fn decided(server: &gavel::store::postgres::LocalServer, name: &str) -> (Target, Client) {
    let (target, own) = debate(server, name, "gated", "faults").await;
    let client = connect(&own).await;
    decide(&client, "gated", 1, Some("stop_converged")).await;
    (target, client)
}

async fn connect(target: &Target) -> Client {
    target.connect_driven().await.unwrap()
}

fn downs(console: &Console) -> usize {
    console
        .links
        .iter()
        .filter(|l| matches!(l, Link::Down { .. }))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_survives_its_backend_being_terminated_mid_stream() {
    let server = server();
    let (target, own) = debate(&server, "terminated", "long", "faults").await;
    let mut console = Console::live(target).await;

    const TURNS: i64 = 80;
    let writer = tokio::spawn(write_turns(
        own.clone(),
        "long",
        1..=TURNS,
        Duration::from_millis(50),
    ));
    let killer = tokio::spawn(async move {
        let admin = connect(&own).await;
        let mut killed = 0;
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(700)).await;
            // The console's backends are the ones named `gavel`; the writer and this
            // connection are named `faults`.
            killed += table_count(
                &admin,
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = 'gavel' AND datname = current_database()",
            )
            .await;
        }
        killed
    });
    let killed = killer.await.unwrap();
    writer.await.unwrap();
    console.each_turn_once("long", TURNS as u64).await;
    assert!(
        killed >= 3,
        "the listener's backend was terminated {killed} times"
    );
    assert!(
        downs(&console) as i64 >= killed,
        "each termination was noticed: {:?}",
        console.links
    );
    console
        .until("the live link again", |m| m.live.link == Some(Link::Live))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_catches_up_after_its_backend_was_frozen_past_the_keepalive() {
    let server = server();
    let (target, own) = debate(&server, "frozen", "long", "faults").await;
    let mut console = Console::live(target).await;

    // Half the turns first, all of them shown: the listener idles on its keepalive.
    const TURNS: i64 = 40;
    write_turns(
        own.clone(),
        "long",
        1..=TURNS / 2,
        Duration::from_millis(20),
    )
    .await;
    console
        .until("the first turns", |m| {
            m.debate("long")
                .is_some_and(|d| d.turns.len() as i64 == TURNS / 2)
        })
        .await;
    // Only the listener's backend is frozen, longer than the keepalive's interval (5 s) and its
    // timeout (3 s) together; the other half is written and committed meanwhile through a
    // backend that runs, so the feed can only learn of it by catching up after it reconnects.
    let admin = connect(&own).await;
    let listener = admin
        .query_one(
            "SELECT pid FROM pg_stat_activity \
             WHERE application_name = 'gavel' AND datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    let frozen = Frozen::backend(listener.get::<_, i32>(0) as u32);
    write_turns(own, "long", TURNS / 2 + 1..=TURNS, Duration::ZERO).await;
    assert_eq!(
        table_count(&admin, "SELECT count(*) FROM debate_rounds").await,
        TURNS,
        "every turn committed while the listener was frozen"
    );
    let unanswered = "no answer to the keepalive within 3s";
    console
        .until(
            "the keepalive to find the frozen backend",
            |m| matches!(&m.live.link, Some(Link::Down { error, .. }) if error == unanswered),
        )
        .await;
    assert_eq!(
        console.model.debate("long").unwrap().turns.len() as i64,
        TURNS / 2,
        "the second half had not reached the console before the reconnect"
    );
    console.each_turn_once("long", TURNS as u64).await;
    drop(frozen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_written_while_the_server_is_down_is_reported_then_lands_once_on_retry() {
    let server = server();
    let (target, own) = debate(&server, "restarted", "gated", "faults").await;
    let client = connect(&own).await;
    write_turns(own.clone(), "gated", 1..=2, Duration::ZERO).await;
    decide(&client, "gated", 2, Some("continue_baseline")).await;
    drop(client);
    let mut console = Console::at_pending(target, "gated").await;

    let server = console.act_while_down(server, "ay").await;
    assert!(
        console
            .flash()
            .starts_with("not recorded: accept continue_baseline on gated round 2")
            && console.flash().ends_with("press r to retry"),
        "{}",
        console.flash()
    );
    console
        .until("the live link after the restart", |m| {
            m.live.link == Some(Link::Live)
        })
        .await;
    let client = connect(&own).await;
    let count = "SELECT count(*) FROM debate_operator_actions";
    assert_eq!(
        table_count(&client, count).await,
        0,
        "nothing landed while down"
    );
    write_turns(own.clone(), "gated", 3..=4, Duration::ZERO).await;

    console.press("r");
    console
        .until("the retried action to come back", |m| {
            m.debate("gated")
                .is_some_and(|d| d.actions.contains_key(&2) && d.turns.len() == 4)
        })
        .await;
    let row = client
        .query_one(
            "SELECT operator, operator_role, action, decision FROM debate_operator_actions",
            &[],
        )
        .await
        .unwrap();
    let landed: (String, String, String, String) = (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!(
        landed,
        (
            "alice".into(),
            "postgres".into(),
            "accept".into(),
            "continue_baseline".into()
        )
    );
    assert_eq!(table_count(&client, count).await, 1, "landed once");
    assert!(console.model.desk.retry.is_none());
    console.press("r");
    assert_eq!(console.flash(), "nothing to retry");
    assert_each_turn_once(&console.model, "gated", 4);
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_of_an_action_that_landed_unanswered_is_answered_with_it_not_doubled() {
    let server = server();
    let (_, client) = decided(&server, "unanswered").await;
    let action = |operator: &str| OperatorAction {
        session_id: "gated".into(),
        round_index: 1,
        action: ActionKind::Override.into(),
        decision: Decision::ContinueBaseline.into(),
        persona: None,
        operator: operator.into(),
        role: None,
        note: Some("keep going".into()),
        created_at: None,
        issues: Vec::new(),
    };
    let first = resolve(&client, &action("alice"), &Default::default())
        .await
        .unwrap()
        .unwrap();
    // The answer to the first attempt was lost: the console tries again.
    let again = resolve(&client, &action("alice"), &Default::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        again, first,
        "the retry is answered with the row that landed"
    );
    let other = resolve(&client, &action("bob"), &Default::default())
        .await
        .unwrap();
    assert_eq!(other, Err(ResolveError::AlreadyResolved(Box::new(first))));
    assert_eq!(action_count(&client).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_after_a_write_that_landed_but_went_unanswered_says_it_was_recorded_after_all() {
    let server = server();
    let (target, client) = decided(&server, "landed").await;
    let mut console = Console::at_pending(target, "gated").await;
    console.press("ay");
    console
        .until("the action recorded and answered", |m| {
            m.debate("gated")
                .is_some_and(|d| d.actions.contains_key(&1))
                && m.desk
                    .flash
                    .as_ref()
                    .is_some_and(|f| f.text.starts_with("recorded:"))
        })
        .await;
    // As if the answer had been lost after the insert committed (the write timed out).
    let sent = console.model.debate("gated").unwrap().actions[&1].clone();
    let lost = ResolveError::Failed {
        action: Box::new(sent),
        error: "the database did not answer within 10 s".into(),
    };
    update(&mut console.model, Event::Resolved(Err(lost)));
    assert!(
        console.flash().ends_with("press r to retry"),
        "{}",
        console.flash()
    );
    console.press("r");
    assert_eq!(
        console.flash(),
        "recorded after all: alice accept stop_converged on gated round 1"
    );
    assert!(console.model.desk.retry.is_none());
    assert_eq!(action_count(&client).await, 1);
}
