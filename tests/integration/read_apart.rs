//! Consoles off the primary (`gavel watch --db PRIMARY --read-from SUBSCRIBER`), on a primary
//! and subscribers started by the tests and fed by PostgreSQL's own logical replication
//! (`postgres::pair`): every row written on the primary reaches a console reading a subscriber,
//! whose feed listens there and not on the primary; an accept from it lands on the primary once
//! while another console races it, and is checked against the decision the primary has on
//! record, not the subscriber's; consoles on two subscribers see each other, and each other's
//! claims, within 2 s. And the built binary in tmux, `gavel watch --read-from`, saying where it
//! reads and when the subscription stops. The faults are in `read_apart_faults`.

use std::time::{Duration, Instant};

use gavel::console::app::{Link, Model, Stall};
use gavel::store::postgres::{Sides, Target, check_publisher, migrate, subscribe};

use crate::common;
use crate::postgres::pair::{Pair, Side, migrated_pair};
use common::pg::{Console, SESSION, action_count, decide, table_count, write_turns};
use common::tmux::Tmux;

/// The tests' consoles' feeds (their listening connections) on a database: their connections
/// are named `console` (presence's, `console presence`).
const FEEDS: &str = "SELECT count(*) FROM pg_stat_activity \
    WHERE datname = current_database() AND application_name = 'console'";

/// The target of `side`'s database for a console: its connections named `console`.
fn console_target(side: &Side) -> Target {
    Target::exact(&format!("{} application_name=console", side.url)).unwrap()
}

/// A console of `operator`'s reading `pair`'s subscriber and writing its primary.
async fn reading(pair: &Pair, operator: &str) -> Console {
    let (write, read) = (
        console_target(&pair.primary),
        console_target(&pair.subscriber),
    );
    Console::reading(&write, &read, operator).await
}

/// Whether debate `session`'s round `round` waits for an operator on `model`'s screen.
fn waits(model: &Model, session: &str, round: u32) -> bool {
    model
        .debate(session)
        .and_then(|d| d.pending())
        .is_some_and(|p| p.round_index == round)
}

/// A second subscriber of `pair`'s primary: a database of its own on the subscriber's server,
/// migrated and subscribed to the same publication, done copying (its subscription dropped with
/// it, as the pair's is).
async fn beside(pair: &Pair) -> Pair {
    let name = format!("{}_b", pair.subscriber.name);
    let ours = format!("dbname={}", pair.subscriber.name);
    let admin = pair.subscriber.url.replace(&ours, "dbname=postgres");
    let url = pair
        .subscriber
        .url
        .replace(&ours, &format!("dbname={name}"));
    let (target, mut client) = common::pg::create(&admin, &name, &url).await;
    migrate(&mut client).await.unwrap();
    let publisher = check_publisher(&pair.primary.client).await.unwrap();
    subscribe(&client, &pair.primary.url, &publisher)
        .await
        .unwrap();
    let primary = Side {
        name: pair.primary.name.clone(),
        url: pair.primary.url.clone(),
        target: pair.primary.target.clone(),
        client: pair.primary.target.connect_driven().await.unwrap(),
    };
    let second = Pair {
        primary,
        subscriber: Side {
            name,
            url,
            target,
            client,
        },
    };
    second.copied().await;
    second
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_written_on_the_primary_reaches_a_console_reading_a_subscriber() {
    let pair = migrated_pair("apart_rows").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"long"]).await.unwrap();
    let mut console = reading(&pair, "alice").await;
    // Its feed listens on the subscriber; on the primary it has presence's connection only.
    assert_eq!(table_count(&pair.subscriber.client, FEEDS).await, 1);
    assert_eq!(table_count(primary, FEEDS).await, 0);

    const TURNS: i64 = 60;
    write_turns(
        pair.primary.target.clone(),
        "long",
        1..=TURNS,
        Duration::from_millis(5),
    )
    .await;
    decide(primary, "long", 1, Some("continue_baseline")).await;
    primary
        .execute(
            "INSERT INTO gavel_debate_notes (session_id, operator, note) \
             VALUES ('long', 'carol', 'over to you')",
            &[],
        )
        .await
        .unwrap();
    console.each_turn_once("long", TURNS as u64).await;
    console
        .until("the decision and the note", |m| {
            waits(m, "long", 1) && m.debate("long").is_some_and(|d| d.notes.len() == 1)
        })
        .await;
    // The header: the subscriber's subscription applying, its lag measured and under a second.
    console
        .until("the subscription applying, not behind", |m| {
            let reading = m.live.reading.as_ref().unwrap();
            reading.primary == Link::Live
                && matches!(&reading.subscriptions, Some(Ok(s)) if s.len() == 1 && s[0].applying)
                && reading.stall().is_none()
                && reading.behind.is_some_and(|b| b < Duration::from_secs(1))
        })
        .await;
    assert!(
        console
            .model
            .live
            .reading
            .as_ref()
            .unwrap()
            .lagging()
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_from_a_subscriber_lands_on_the_primary_once_while_a_console_there_races_it() {
    let pair = migrated_pair("apart_race").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"gated"]).await.unwrap();
    decide(primary, "gated", 1, Some("stop_converged")).await;
    let mut alice = reading(&pair, "alice").await;
    let mut bob = Console::attach_to(Sides::one(console_target(&pair.primary)), "bob");
    for console in [&mut alice, &mut bob] {
        console
            .until("the pending decision and the role's rights", |m| {
                waits(m, "gated", 1) && m.live.role.is_some()
            })
            .await;
        console.select("gated");
    }

    // Both confirm at once: the database takes one.
    alice.press("ay");
    bob.press("ay");
    let answers = [alice.answer().await, bob.answer().await];
    assert_eq!(action_count(primary).await, 1, "{answers:?}");
    let recorded = answers
        .iter()
        .filter(|a| a.starts_with("recorded:"))
        .count();
    let lost = answers
        .iter()
        .filter(|a| a.contains("was already resolved by"))
        .count();
    assert_eq!((recorded, lost), (1, 1), "{answers:?}");
    // The row the primary took reaches alice's subscriber as the primary stamped it.
    alice
        .until("the action on the subscriber", |m| {
            m.debate("gated")
                .is_some_and(|d| d.actions.contains_key(&1))
        })
        .await;
    let on_primary = stamped(primary).await;
    assert_eq!(stamped(&pair.subscriber.client).await, on_primary);
    assert_eq!(on_primary.1, "postgres");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_is_checked_against_the_decision_the_primary_has_not_the_subscribers() {
    let pair = migrated_pair("apart_checked").await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"gated"]).await.unwrap();
    decide(primary, "gated", 1, Some("continue_baseline")).await;
    let mut alice = reading(&pair, "alice").await;
    alice
        .until("the pending decision", |m| waits(m, "gated", 1))
        .await;
    alice.select("gated");

    // The subscriber stops applying; the decision changes on the primary meanwhile.
    switch_subscription(&pair.subscriber.client, "DISABLE").await;
    alice
        .until("the subscription disabled", |m| {
            matches!(
                m.live.reading.as_ref().and_then(|r| r.stall()),
                Some(Stall::Disabled(_))
            )
        })
        .await;
    primary
        .execute(
            "UPDATE debate_round_decisions SET decision = 'stop_converged' \
             WHERE session_id = 'gated' AND round_index = 1",
            &[],
        )
        .await
        .unwrap();

    // alice still sees the decision she confirms; the primary refuses it, saying what it has.
    alice.press("ay");
    let answer = alice.answer().await;
    assert!(
        answer.contains("is now \"stop_converged\", not what was confirmed"),
        "{answer}"
    );
    assert_eq!(action_count(primary).await, 0);

    // Enabled again, the change reaches her.
    switch_subscription(&pair.subscriber.client, "ENABLE").await;
    alice
        .until("the changed decision", |m| {
            m.debate("gated").is_some_and(|d| {
                d.pending()
                    .is_some_and(|p| p.decision.to_wire() == "stop_converged")
            })
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consoles_on_two_subscribers_see_each_other_and_their_claims_within_two_seconds() {
    let pair = migrated_pair("apart_presence").await;
    let second = beside(&pair).await;
    let primary = &pair.primary.client;
    primary.execute(SESSION, &[&"gated"]).await.unwrap();
    decide(primary, "gated", 1, Some("continue_baseline")).await;
    let mut alice = reading(&pair, "alice").await;
    let mut bob = reading(&second, "bob").await;
    // Neither listens on the primary.
    assert_eq!(table_count(primary, FEEDS).await, 0);

    let met = Instant::now();
    bob.until("alice", |m| {
        m.live.peers.iter().any(|p| p.status.operator == "alice")
    })
    .await;
    alice
        .until("bob", |m| {
            m.live.peers.iter().any(|p| p.status.operator == "bob")
        })
        .await;
    assert!(
        met.elapsed() < Duration::from_secs(2),
        "{:?}",
        met.elapsed()
    );
    let peer = &alice.model.live.peers[0];
    assert_eq!(
        (peer.role.as_str(), alice.model.live.peers.len()),
        ("postgres", 1)
    );

    for console in [&mut alice, &mut bob] {
        console
            .until("the pending decision", |m| waits(m, "gated", 1))
            .await;
        console.select("gated");
    }
    // alice opens the confirmation: bob, on the other subscriber, sees her deciding.
    alice.press("a");
    let claimed = Instant::now();
    bob.until("alice's claim", |m| m.deciding("gated", 1).is_some())
        .await;
    assert!(
        claimed.elapsed() < Duration::from_secs(2),
        "{:?}",
        claimed.elapsed()
    );
    assert_eq!(
        bob.model.deciding("gated", 1).unwrap().0,
        "alice (role postgres)"
    );
    // She lets go (any key but y and n cancels): bob sees that too.
    alice.press("x");
    let released = Instant::now();
    bob.until("the claim let go", |m| m.deciding("gated", 1).is_none())
        .await;
    assert!(
        released.elapsed() < Duration::from_secs(2),
        "{:?}",
        released.elapsed()
    );
}

/// Who wrote the one operator action on `client`'s database: the display name, and the role
/// stamped.
async fn stamped(client: &tokio_postgres::Client) -> (String, String) {
    let row = client
        .query_one(
            "SELECT operator, operator_role FROM debate_operator_actions",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// `ENABLE`s or `DISABLE`s (`how`) the subscription of `client`'s database (the catalog is the
/// server's: other tests' databases have theirs); its name.
pub async fn switch_subscription(client: &tokio_postgres::Client, how: &str) -> String {
    let name: String = client
        .query_one(
            "SELECT subname::text FROM pg_subscription \
             WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    client
        .batch_execute(&format!("ALTER SUBSCRIPTION {name} {how}"))
        .await
        .unwrap();
    name
}

#[test]
fn gavel_watch_read_from_in_tmux_says_where_it_reads_and_when_the_subscription_stops() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pair = runtime.block_on(migrated_pair("apart_tmux"));
    let tmux = Tmux::new();
    tmux.start(&format!(
        "exec {} watch --db '{}' --read-from '{}' --operator alice --log-dir {}",
        env!("CARGO_BIN_EXE_gavel"),
        pair.primary.url,
        pair.subscriber.url,
        tmux.dir.join("logs").display()
    ));
    // Wide enough for the whole header.
    tmux.resize(240, 48);
    let reading = format!(":5432/{} │", pair.subscriber.name);
    tmux.wait_for("live, reading the subscriber", |s| {
        s.contains("● live │ reading ") && s.contains(&reading)
    });
    runtime
        .block_on(pair.primary.client.execute(SESSION, &[&"ward"]))
        .unwrap();
    tmux.wait_for("the debate written on the primary", |s| s.contains("ward"));

    let name = runtime.block_on(switch_subscription(&pair.subscriber.client, "DISABLE"));
    let disabled = format!("│ ✗ subscription {name} disabled │");
    tmux.wait_for("the subscription said disabled, and the lag", |s| {
        s.contains(&disabled) && s.contains("│ behind 0:0")
    });
    runtime.block_on(switch_subscription(&pair.subscriber.client, "ENABLE"));
    tmux.wait_for("the header cleared", |s| {
        let header = s.lines().next().unwrap_or_default();
        header.contains(&reading) && !header.contains('✗') && !header.contains("behind")
    });
}
