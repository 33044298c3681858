//! Consoles off the primary: a primary and a subscriber started by the tests, the subscriber
//! fed by PostgreSQL's own logical replication of gavel's publication.

use std::time::{Duration, Instant};

use gavel::store::postgres::{LOCAL_ONLY, Pump, sync};

use super::pair::{Pair, fresh_pair, migrated_pair};
use super::*;

/// Waits up to 30 s for `sql` (one bigint) to return `expected` on `client`.
async fn until_count(client: &Client, sql: &str, expected: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let count = table_count(client, sql).await;
        if count == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{sql}` gave {count}, not {expected}, within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pair_replicates_a_published_table() {
    let Pair {
        ref primary,
        ref subscriber,
    } = fresh_pair("raw").await;
    let wal_level: String = primary
        .client
        .query_one("SHOW wal_level", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(wal_level, "logical");
    for side in [primary, subscriber] {
        side.client
            .batch_execute("CREATE TABLE t (id INT PRIMARY KEY)")
            .await
            .unwrap();
    }
    primary
        .client
        .batch_execute("CREATE PUBLICATION p FOR TABLE t; INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    subscriber
        .client
        .batch_execute(&format!(
            "CREATE SUBSCRIPTION s_{} CONNECTION '{}' PUBLICATION p",
            subscriber.name, primary.url
        ))
        .await
        .unwrap();
    let writer = primary.target.connect_driven().await.unwrap();
    writer
        .batch_execute("INSERT INTO t VALUES (2)")
        .await
        .unwrap();
    until_count(&subscriber.client, "SELECT count(*) FROM t", 2).await;
}

/// The subscriber's oldest running transaction: a console's catch-up watermark there.
async fn watermark(client: &Client) -> String {
    client
        .query_one("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", &[])
        .await
        .unwrap()
        .get(0)
}

/// Every (channel, payload) heard on the subscriber's gavel channels.
async fn listen_on(
    target: &gavel::store::postgres::Target,
) -> (
    Client,
    Pump,
    tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) {
    let (sender, heard) = tokio::sync::mpsc::unbounded_channel();
    let (client, pump) = Pump::listen(
        target,
        &["gavel_events", "gavel_settings", "gavel_presence"],
        move |n| {
            sender
                .send((n.channel().to_owned(), n.payload().to_owned()))
                .is_ok()
        },
    )
    .await
    .unwrap();
    (client, pump, heard)
}

/// Waits for a notification on `channel` whose payload contains `part`.
async fn heard(
    heard: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
    channel: &str,
    part: &str,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, heard.recv()).await {
            Ok(Some((on, payload))) if on == channel && payload.contains(part) => return,
            Ok(Some(_)) => {}
            _ => panic!("nothing on {channel} with {part} within 30 s"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_written_on_the_primary_is_notified_on_the_subscriber_stamped_with_its_own_xid() {
    let pair = migrated_pair("notified").await;
    let (_listening, _pump, mut notifications) = listen_on(&pair.subscriber.target).await;
    // The primary's transaction ids run well ahead of the subscriber's (which serves other
    // tests' subscribers too), so that a stamp tells them apart.
    let next_xid = "SELECT pg_current_xact_id()::text::bigint";
    let ahead = table_count(&pair.subscriber.client, next_xid).await
        - table_count(&pair.primary.client, next_xid).await;
    pair.primary
        .client
        .batch_execute(&format!(
            "DO $$ BEGIN FOR i IN 1..{} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$",
            ahead.max(0) + 1000
        ))
        .await
        .unwrap();
    let mark = watermark(&pair.subscriber.client).await;
    pair.primary
        .client
        .execute(SESSION, &[&"s1"])
        .await
        .unwrap();
    heard(&mut notifications, "gavel_events", "\"s1\"").await;

    let since = format!("SELECT count(*) FROM debate_sessions WHERE gavel_xid >= '{mark}'::xid8");
    assert_eq!(
        table_count(&pair.subscriber.client, &since).await,
        1,
        "the row is stamped at or after the subscriber's watermark, so a console's catch-up \
         there finds it"
    );
    let xid = "SELECT gavel_xid::text::bigint FROM debate_sessions WHERE id = 's1'";
    let (on_primary, on_subscriber) = (
        table_count(&pair.primary.client, xid).await,
        table_count(&pair.subscriber.client, xid).await,
    );
    let next = table_count(&pair.subscriber.client, next_xid).await;
    assert!(
        on_subscriber < next && on_primary > next,
        "stamped with the subscriber's transaction ({on_subscriber}, next {next}), not the \
         primary's ({on_primary})"
    );
}

/// Each table of the publication as text, gavel_xid left out (each server stamps its own).
async fn contents(client: &Client) -> Vec<String> {
    let mut all = Vec::new();
    for table in [
        "debate_sessions",
        "debate_rounds",
        "debate_round_decisions",
        "debate_round_judgments",
        "debate_operator_actions",
        "gavel_debate_notes",
        "gavel_controller_settings",
        "gavel_presence",
    ] {
        all.extend(
            texts(
                client,
                &format!(
                    "SELECT '{table}: ' || coalesce(string_agg(r, ' | ' ORDER BY r), 'none') \
                     FROM (SELECT (to_jsonb(t) - 'gavel_xid')::text AS r FROM {table} t) rows"
                ),
            )
            .await,
        );
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_written_on_the_primary_arrives_on_the_subscriber_as_written() {
    let pair = migrated_pair("every_table").await;
    let (_listening, _pump, mut notifications) = listen_on(&pair.subscriber.target).await;
    // Written as a role of its own: a trigger that fired again in the apply worker would stamp
    // the subscription's owner instead.
    let writer = format!("writer_{}", pair.primary.name);
    pair.primary
        .client
        .batch_execute(&format!("CREATE ROLE {writer} LOGIN SUPERUSER"))
        .await
        .unwrap();
    let primary = &gavel::store::postgres::Target::exact(
        &pair
            .primary
            .url
            .replace("user=postgres", &format!("user={writer}")),
    )
    .unwrap()
    .connect_driven()
    .await
    .unwrap();
    super::notify_rows::write_one_of_each(primary, "s1").await;
    // A settings rollout: a canary, then its promotion (the database numbers and fills both).
    primary
        .batch_execute(
            "INSERT INTO gavel_controller_settings (debate_type, kind, share_bp, mode, \
                 similarity_threshold, similarity_measure, novelty_floor, min_rounds, max_rounds, \
                 budget_fraction, reason) VALUES ('standard', 'publish', 2500, 'enabled', 0.9, \
                 'lexical', 1, 2, 8, 0.8, 'canary');
             INSERT INTO gavel_controller_settings (debate_type, kind, target, reason) \
                 SELECT 'standard', 'promote', max(version), 'promoted' FROM gavel_controller_settings;",
        )
        .await
        .unwrap();
    // Presence: a console's row, said again, and another's gone.
    primary
        .batch_execute(
            "INSERT INTO gavel_presence (status) VALUES ('{\"operator\": \"alice\"}'), ('{}');
             UPDATE gavel_presence SET status = '{\"operator\": \"alice\", \"claim\": 1}' \
                 WHERE console = 1;
             DELETE FROM gavel_presence WHERE console = 2;",
        )
        .await
        .unwrap();
    // A deliberate correction of the audit trail, the documented way.
    primary
        .batch_execute(
            "BEGIN;
             ALTER TABLE debate_operator_actions DISABLE TRIGGER gavel_append_only;
             UPDATE debate_operator_actions SET note = 'corrected';
             ALTER TABLE debate_operator_actions ENABLE ALWAYS TRIGGER gavel_append_only;
             COMMIT;",
        )
        .await
        .unwrap();
    primary.execute(SESSION, &[&"last"]).await.unwrap();

    heard(&mut notifications, "gavel_settings", "\"version\"").await;
    heard(&mut notifications, "gavel_presence", "1").await;
    heard(&mut notifications, "gavel_events", "\"last\"").await;
    let on_primary = contents(primary).await;
    assert_eq!(
        contents(&pair.subscriber.client).await,
        on_primary,
        "the subscriber holds the primary's rows as written there (the role stamped, a \
         version's number and state, the correction)"
    );
    assert!(on_primary.iter().any(|t| t.contains("corrected")));
    assert!(
        on_primary
            .iter()
            .any(|t| t.contains("\"kind\": \"promote\""))
    );
    assert_eq!(
        table_count(
            &pair.subscriber.client,
            "SELECT count(*) FROM debate_sessions WHERE gavel_xid IS NULL"
        )
        .await,
        0,
        "every applied row stamped"
    );
    let stats = sync(&pair.subscriber.client).await.unwrap();
    assert_eq!(stats.errors, 0, "the apply worker never failed: {stats:?}");
}

/// Runs `gavel migrate --db db [--subscribe-to primary]`.
fn migrate_command(db: &str, primary: Option<&str>) -> common::Ran {
    let mut command = common::gavel();
    command.args(["migrate", "--db", db]);
    if let Some(primary) = primary {
        command.args(["--subscribe-to", primary]);
    }
    common::run_to_end(&mut command)
}

/// The triggers, gavel's functions' settings and the subscriptions, each with the
/// transaction that last wrote its catalog row: equal before and after a run that changes
/// nothing.
async fn catalog(client: &Client) -> Vec<String> {
    texts(
        client,
        "SELECT tgrelid::regclass || '.' || tgname || ' ' || tgenabled::text || ' ' || xmin \
             FROM pg_trigger WHERE NOT tgisinternal \
         UNION ALL SELECT proname || ' ' || coalesce(array_to_string(proconfig, ','), '') \
             || ' ' || xmin FROM pg_proc WHERE proname LIKE 'gavel%' \
         UNION ALL SELECT subname || ' ' || xmin FROM pg_subscription WHERE subdbid = \
             (SELECT oid FROM pg_database WHERE datname = current_database()) \
         UNION ALL SELECT pubname || ' ' || xmin FROM pg_publication \
         ORDER BY 1",
    )
    .await
}

/// How `table`'s `trigger` fires: `O` for local writes only, `A` always.
async fn fires(client: &Client, table: &str, trigger: &str) -> String {
    texts(
        client,
        &format!(
            "SELECT tgenabled::text FROM pg_trigger \
             WHERE tgrelid = '{table}'::regclass AND tgname = '{trigger}'"
        ),
    )
    .await
    .concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_subscribe_to_makes_a_subscriber_and_a_second_run_changes_nothing() {
    let pair = fresh_pair("subscribe_twice").await;
    let (primary, subscriber) = (&pair.primary, &pair.subscriber);
    let ran = migrate_command(&primary.url, None);
    assert!(ran.ok, "{}", ran.stderr);
    let ran = migrate_command(&subscriber.url, Some(&primary.url));
    assert!(ran.ok, "{}", ran.stderr);
    assert!(
        ran.stdout.contains("subscribed to the primary (gavel_")
            && ran.stdout.contains("8 of 8 tables copied"),
        "{}",
        ran.stdout
    );
    for (table, trigger) in LOCAL_ONLY {
        assert_eq!(
            fires(&subscriber.client, table, trigger).await,
            "O",
            "{table}.{trigger} on the subscriber"
        );
    }
    for (table, trigger) in [
        ("debate_operator_actions", "gavel_operator_role"),
        ("gavel_controller_settings", "gavel_settings_version"),
        ("debate_operator_actions", "gavel_append_only"),
    ] {
        assert_eq!(
            fires(&primary.client, table, trigger).await,
            "A",
            "{table}.{trigger} on the primary"
        );
    }
    for side in [primary, subscriber] {
        for table in ["debate_rounds", "gavel_controller_settings"] {
            assert_eq!(fires(&side.client, table, "gavel_stamp").await, "A");
        }
        assert_eq!(
            fires(&side.client, "debate_rounds", "gavel_notify").await,
            "A"
        );
    }

    let (before_primary, before_subscriber) = (
        catalog(&primary.client).await,
        catalog(&subscriber.client).await,
    );
    let ran = migrate_command(&subscriber.url, Some(&primary.url));
    assert!(ran.ok, "{}", ran.stderr);
    assert!(
        ran.stdout.contains("up to date") && ran.stdout.contains("subscribed already"),
        "{}",
        ran.stdout
    );
    let ran = migrate_command(&subscriber.url, None);
    assert!(ran.ok, "{}", ran.stderr);
    assert_eq!(catalog(&subscriber.client).await, before_subscriber);
    assert_eq!(catalog(&primary.client).await, before_primary);
    let slots = format!(
        "SELECT count(*) FROM pg_replication_slots WHERE database = '{}'",
        primary.name
    );
    assert_eq!(table_count(&primary.client, &slots).await, 1, "one slot");
}

/// Runs `gavel migrate --db subscriber --subscribe-to primary`, which must fail saying `why`.
fn refused(subscriber: &str, primary: &str, why: &str) {
    let ran = migrate_command(subscriber, Some(primary));
    assert!(!ran.ok, "migrating succeeded: {}", ran.stdout);
    assert!(ran.stderr.contains(why), "{why:?} not in: {}", ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_subscribe_to_says_what_stands_in_the_way() {
    let pair = fresh_pair("refusals").await;
    let (primary, subscriber) = (&pair.primary, &pair.subscriber);
    let subscriber_url = subscriber.url.as_str();

    refused(
        subscriber_url,
        "host=/nonexistent port=5432 user=postgres dbname=none",
        "connecting to the primary (--subscribe-to): cannot connect to",
    );
    refused(
        subscriber_url,
        &primary.url,
        "the primary has no publication gavel: run `gavel migrate --db PRIMARY` first",
    );
    let plain = migrated_database("not_logical").await;
    refused(
        subscriber_url,
        &plain.url,
        "the primary's wal_level is replica, not logical",
    );

    assert!(migrate_command(&primary.url, None).ok);
    let watcher = format!("watcher_{}", primary.name);
    primary
        .client
        .batch_execute(&format!(
            "CREATE ROLE {watcher} LOGIN; GRANT gavel_viewer TO {watcher}"
        ))
        .await
        .unwrap();
    refused(
        subscriber_url,
        &primary
            .url
            .replace("user=postgres", &format!("user={watcher}")),
        &format!("role {watcher} may not replicate from the primary"),
    );

    // The subscriber's database owned by a role that may migrate it but not subscribe.
    let owner = format!("owner_{}", subscriber.name);
    subscriber
        .client
        .batch_execute(&format!(
            "CREATE ROLE {owner} LOGIN; ALTER DATABASE {} OWNER TO {owner}",
            subscriber.name
        ))
        .await
        .unwrap();
    refused(
        &subscriber
            .url
            .replace("user=postgres", &format!("user={owner}")),
        &primary.url,
        &format!("role {owner} may not create a subscription on the subscriber"),
    );

    // A database on the primary's own server (its subscription would wait for itself).
    let same = format!("{}_same", primary.name);
    primary
        .client
        .batch_execute(&format!("CREATE DATABASE {same}"))
        .await
        .unwrap();
    refused(
        &primary.url.replace(
            &format!("dbname={}", primary.name),
            &format!("dbname={same}"),
        ),
        &primary.url,
        "the subscriber is on the primary's own server",
    );

    subscriber
        .client
        .execute(SESSION, &[&"already-here"])
        .await
        .unwrap();
    refused(
        subscriber_url,
        &primary.url,
        "debate_sessions here has rows already",
    );
    let slots = format!(
        "SELECT count(*) FROM pg_replication_slots WHERE database = '{}'",
        primary.name
    );
    assert_eq!(
        table_count(&primary.client, &slots).await,
        0,
        "no slot left"
    );
}
