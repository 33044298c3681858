//! Consoles off the primary: a primary and a subscriber started by the tests, the subscriber
//! fed by PostgreSQL's own logical replication of gavel's publication.

use std::time::{Duration, Instant};

use super::pair::{Pair, fresh_pair};
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
