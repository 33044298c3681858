//! Faults between a console reading a subscriber and the primary it writes, on servers the
//! tests start, stop and restart themselves (no mock): the subscriber restarted while rows are
//! written on the primary (the feed reconnects and catches up on the subscriber's own
//! transactions, every row shown once); the subscription disabled (the header says so and how
//! far behind, and clears once it is enabled and the rows have come); the primary stopped
//! (reads go on, an action says why it was not written and lands once on retry after the
//! primary is back); the subscription's slot on the primary, read as a viewer, inactive and
//! keeping more and more WAL, streamed again and cleared, then lost past
//! `max_slot_wal_keep_size`.

use std::time::Duration;

use gavel::console::app::{Command, Event, KEPT_SHOWN_MIB, Link, Model, SlotTrouble, Stall};
use gavel::store::postgres::{LocalServer, Target};

use crate::common;
use crate::postgres::pair::{Pair, Side, migrated_pair, subscribed};
use crate::read_apart::switch_subscription;
use common::pg::{
    Console, SESSION, action_count, decide, resumed, stopped, target_as, write_turns,
};

/// A primary and a subscriber of the test's own, database `name` on each, migrated, the
/// subscriber subscribed and done copying.
async fn own_pair(name: &str) -> (LocalServer, LocalServer, Pair) {
    let start = || LocalServer::start_replicating().expect("a throwaway PostgreSQL");
    let (primary, subscriber) = (start(), start());
    let side = async |server: &LocalServer| {
        let (target, client) = common::pg::database(server, name).await;
        Side {
            name: name.to_owned(),
            url: server.url(name),
            target,
            client,
        }
    };
    let pair = Pair {
        primary: side(&primary).await,
        subscriber: side(&subscriber).await,
    };
    (primary, subscriber, subscribed(pair).await)
}

/// A console reading `pair`'s subscriber, writing its primary, its connections named `console`.
async fn reading(pair: &Pair) -> Console {
    let named =
        |side: &Side| Target::exact(&format!("{} application_name=console", side.url)).unwrap();
    Console::reading(&named(&pair.primary), &named(&pair.subscriber), "alice").await
}

/// What stalls the subscriber, as `model`'s header has it.
fn stall(model: &Model) -> Option<Stall<'_>> {
    model.live.reading.as_ref().and_then(|r| r.stall())
}

fn lagging(model: &Model) -> Option<Duration> {
    model.live.reading.as_ref().and_then(|r| r.lagging())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_restarted_while_rows_are_written_is_caught_up_every_row_once() {
    let (primary_server, subscriber_server, pair) = own_pair("restarted").await;
    pair.primary
        .client
        .execute(SESSION, &[&"long"])
        .await
        .unwrap();
    let mut console = reading(&pair).await;
    const TURNS: i64 = 40;
    let writing = pair.primary.target.clone();
    write_turns(writing.clone(), "long", 1..=TURNS / 2, Duration::ZERO).await;
    console
        .until("the first half", |m| {
            m.debate("long")
                .is_some_and(|d| d.turns.len() as i64 == TURNS / 2)
        })
        .await;

    let subscriber_server = stopped(subscriber_server).await;
    console
        .until("the feed to notice", |m| m.live.link != Some(Link::Live))
        .await;
    // The primary goes on taking rows; its slot keeps them for the subscriber.
    write_turns(writing, "long", TURNS / 2 + 1..=TURNS, Duration::ZERO).await;
    let subscriber_server = resumed(subscriber_server).await;
    console.each_turn_once("long", TURNS as u64).await;
    console
        .until("live again, nothing stalled", |m| {
            m.live.link == Some(Link::Live)
                && m.live.reading.as_ref().is_some_and(|r| {
                    matches!(&r.subscriptions, Some(Ok(s)) if s.len() == 1) && r.stall().is_none()
                })
        })
        .await;
    drop((pair, subscriber_server, primary_server));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_subscription_is_said_with_the_lag_growing_and_cleared_once_enabled() {
    let pair = migrated_pair("disabled").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"long"]).await.unwrap();
    let mut console = reading(&pair).await;
    let writing = pair.primary.target.clone();
    write_turns(writing.clone(), "long", 1..=5, Duration::ZERO).await;
    console
        .until("the first turns", |m| {
            m.debate("long").is_some_and(|d| d.turns.len() == 5)
        })
        .await;

    let name = switch_subscription(&pair.subscriber.client, "DISABLE").await;
    console
        .until("the subscription said disabled", |m| {
            stall(m) == Some(Stall::Disabled(&name))
        })
        .await;
    let header = common::screen_at(&console.model, 200, 10);
    assert!(
        header.contains(&format!("│ ✗ subscription {name} disabled")),
        "{header}"
    );
    write_turns(writing, "long", 6..=10, Duration::ZERO).await;
    // Behind: this console's heartbeats written on the primary do not come back.
    console
        .until("the lag said, growing", |m| {
            lagging(m).is_some_and(|b| b >= Duration::from_secs(3))
        })
        .await;
    assert_eq!(
        console.model.debate("long").unwrap().turns.len(),
        5,
        "nothing arrives while disabled"
    );

    switch_subscription(&pair.subscriber.client, "ENABLE").await;
    console.each_turn_once("long", 10).await;
    console
        .until("the header cleared", |m| {
            stall(m).is_none() && lagging(m).is_none()
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_primary_stopped_reads_go_on_and_a_write_says_why_then_lands_once_on_retry() {
    let (primary_server, subscriber_server, pair) = own_pair("primary_down").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"gated"]).await.unwrap();
    decide(primary, "gated", 1, Some("continue_baseline")).await;
    let mut console = reading(&pair).await;
    console
        .until("the pending decision", |m| {
            m.debate("gated").is_some_and(|d| d.pending().is_some())
        })
        .await;
    console.select("gated");

    let primary_server = stopped(primary_server).await;
    console
        .until("the primary said down", |m| {
            m.live
                .reading
                .as_ref()
                .is_some_and(|r| matches!(r.primary, Link::Down { .. }))
        })
        .await;
    // Reads go on: the feed on the subscriber is live and answers a history asked for.
    assert_eq!(console.model.live.link, Some(Link::Live));
    console
        .commands
        .send(Command::LoadHistory("gated".into()))
        .unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match console.events.recv().await {
                Some(Event::History { id, found }) => return (id, found),
                Some(event) => console.handle(event),
                None => panic!("the console is gone"),
            }
        }
    })
    .await
    .expect("the history within 10 s");
    assert_eq!(answered, ("gated".to_owned(), true));
    assert_eq!(console.model.live.link, Some(Link::Live));
    let header = common::screen_at(&console.model, 240, 10);
    assert!(header.contains("│ ✗ primary: "), "{header}");
    assert!(header.contains("(writes fail)"), "{header}");

    // A write says why it was not written, and offers the retry.
    console.press("ay");
    console
        .until("the write to fail", |m| m.desk.retry.is_some())
        .await;
    let flash = console.flash();
    assert!(
        flash.starts_with("not recorded: accept continue_baseline on gated round 1: ")
            && flash.ends_with("press r to retry"),
        "{flash}"
    );

    let primary_server = resumed(primary_server).await;
    console
        .until("the primary back", |m| {
            m.live
                .reading
                .as_ref()
                .is_some_and(|r| r.primary == Link::Live)
        })
        .await;
    console.press("r");
    console
        .until("the retried action back through the subscriber", |m| {
            m.debate("gated")
                .is_some_and(|d| d.actions.contains_key(&1))
        })
        .await;
    let own = pair.primary.target.connect_driven().await.unwrap();
    assert_eq!(action_count(&own).await, 1, "landed once");
    drop((pair, subscriber_server, primary_server));
}

/// What the primary says of the subscription's slot, as `model`'s header has it.
fn slot_trouble(model: &Model) -> Option<SlotTrouble<'_>> {
    model.live.reading.as_ref().and_then(|r| r.slot_trouble())
}

/// Whether the primary reported the subscription's slot, streamed and keeping little WAL.
fn slot_well(model: &Model) -> bool {
    model.live.reading.as_ref().is_some_and(|r| {
        matches!(&r.slots, Some(Ok(slots)) if slots.len() == 1) && r.slot_trouble().is_none()
    })
}

/// Writes `segments` WAL segments' worth of position on `primary` (a row of a table nobody
/// publishes, then a switch to the next segment, each time).
async fn grow_wal(primary: &tokio_postgres::Client, segments: usize) {
    primary
        .batch_execute("CREATE TABLE IF NOT EXISTS wal_filler (n int)")
        .await
        .unwrap();
    for _ in 0..segments {
        primary
            .batch_execute("INSERT INTO wal_filler VALUES (1); SELECT pg_switch_wal();")
            .await
            .unwrap();
    }
}

/// A console of login role `watcher` (a viewer, made so on both servers) reading `pair`'s
/// subscriber and writing its primary.
async fn watching(servers: [&LocalServer; 2], pair: &Pair) -> Console {
    for side in [&pair.primary, &pair.subscriber] {
        side.client
            .batch_execute("CREATE ROLE watcher LOGIN")
            .await
            .unwrap();
        gavel::store::postgres::grant(&side.client, &["watcher".to_owned()], &[])
            .await
            .unwrap();
    }
    let [primary, subscriber] = servers;
    Console::reading(
        &target_as(primary, &pair.primary.name, "watcher", "console"),
        &target_as(subscriber, &pair.subscriber.name, "watcher", "console"),
        "alice",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_inactive_keeping_wal_then_lost_is_said_as_a_viewer_reads_it_and_clears_when_back() {
    let (primary_server, subscriber_server, pair) = own_pair("slots").await;
    let mut console = watching([&primary_server, &subscriber_server], &pair).await;
    // Read as a viewer: the slot is there, streamed, keeping little.
    console.until("the slot streamed", slot_well).await;

    // The subscription disabled: no WAL sender streams the slot, and the WAL it keeps grows
    // with every write on the primary.
    let name = switch_subscription(&pair.subscriber.client, "DISABLE").await;
    console
        .until("the slot inactive", |m| {
            matches!(slot_trouble(m), Some(SlotTrouble::Inactive(..)))
        })
        .await;
    grow_wal(&pair.primary.client, 5).await;
    console
        .until("the WAL it keeps said", |m| {
            matches!(slot_trouble(m), Some(SlotTrouble::Inactive(_, kept)) if kept >= KEPT_SHOWN_MIB)
        })
        .await;
    let header = common::screen_at(&console.model, 240, 10);
    assert!(header.contains("│ ⚠ slot inactive, keeps "), "{header}");

    // Enabled again: streamed, and what it kept is let go once the subscriber confirms it (a
    // checkpoint logs where decoding may restart): cleared.
    switch_subscription(&pair.subscriber.client, "ENABLE").await;
    let nudging = {
        let primary = pair.primary.target.connect_driven().await.unwrap();
        tokio::spawn(async move {
            loop {
                let _ = primary.batch_execute("CHECKPOINT").await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    };
    console.until("the slot well again", slot_well).await;
    nudging.abort();

    // Past max_slot_wal_keep_size while the subscriber is away: the primary gives the WAL up at
    // its next checkpoint, and the slot is lost for good.
    for sql in [
        "ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'",
        "SELECT pg_reload_conf()",
    ] {
        pair.primary.client.batch_execute(sql).await.unwrap();
    }
    switch_subscription(&pair.subscriber.client, "DISABLE").await;
    console
        .until("the slot inactive again", |m| {
            matches!(slot_trouble(m), Some(SlotTrouble::Inactive(..)))
        })
        .await;
    grow_wal(&pair.primary.client, 3).await;
    pair.primary
        .client
        .batch_execute("CHECKPOINT")
        .await
        .unwrap();
    console
        .until("the slot lost", |m| {
            slot_trouble(m) == Some(SlotTrouble::Lost(&name))
        })
        .await;
    let header = common::screen_at(&console.model, 240, 10);
    assert!(
        header.contains("│ ✗ slot lost: rebuild the subscriber │"),
        "{header}"
    );

    // The subscription dropped (its lost slot with it): no slot to say, and the header says
    // the subscriber subscribes to nothing instead.
    pair.subscriber
        .client
        .batch_execute(&format!("DROP SUBSCRIPTION {name}"))
        .await
        .unwrap();
    console
        .until("the lost slot gone with its subscription", |m| {
            slot_trouble(m).is_none() && stall(m) == Some(Stall::Unsubscribed)
        })
        .await;
    drop((pair, subscriber_server, primary_server));
}
