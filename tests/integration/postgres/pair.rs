//! A primary and a subscriber for the tests of logical replication: the test binary's one pair
//! of servers started with [`REPLICATION`]'s settings (by the first test that asks), a database
//! of each test's own on each, and the subscription between them dropped when the test ends
//! (so that no replication slot outlives its test); [`migrated_pair`] migrates both and
//! subscribes the subscriber to the primary's publication as `gavel migrate --subscribe-to`
//! does.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use std::time::{Duration, Instant};

use gavel::store::postgres::{LocalServer, Target, check_publisher, migrate, subscribe, sync};
use tokio_postgres::Client;

use crate::common;

/// One side of a pair: a database of the test's own.
pub struct Side {
    /// The database's name, the same on both sides.
    pub name: String,
    /// Its connection string, as `postgres` (the subscriber's server can use the primary's).
    pub url: String,
    pub target: Target,
    /// A connection to it, as `postgres`.
    pub client: Client,
}

/// A database on the primary and one of the same name on the subscriber.
pub struct Pair {
    pub primary: Side,
    pub subscriber: Side,
}

/// The binary's pair of servers: the primary, then the subscriber.
static SERVERS: Mutex<Option<(LocalServer, LocalServer)>> = Mutex::new(None);

extern "C" fn stop_servers() {
    drop(
        SERVERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(),
    );
}

fn start() -> LocalServer {
    LocalServer::start_replicating().expect(
        "a throwaway PostgreSQL with wal_level=logical must start for these tests \
         (install the server package)",
    )
}

/// The connection strings of the `postgres` database and of database `name` on the binary's
/// primary and subscriber (started now if they are not yet).
fn urls(name: &str) -> [(String, String); 2] {
    let mut servers = SERVERS.lock().unwrap_or_else(PoisonError::into_inner);
    if servers.is_none() {
        *servers = Some((start(), start()));
        common::on_exit(stop_servers);
    }
    let (primary, subscriber) = servers.as_ref().expect("started above");
    [primary, subscriber].map(|server| (server.url("postgres"), server.url(name)))
}

/// Creates database `name` (numbered, so that it is unique in the binary) on the primary and on
/// the subscriber, both empty.
pub async fn fresh_pair(name: &str) -> Pair {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let name = format!("{name}_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let [primary, subscriber] = urls(&name);
    Pair {
        primary: side(&name, primary).await,
        subscriber: side(&name, subscriber).await,
    }
}

/// [`fresh_pair`], both migrated, the subscriber subscribed to the primary's publication and
/// done copying its tables.
pub async fn migrated_pair(name: &str) -> Pair {
    subscribed(fresh_pair(name).await).await
}

/// `pair` (two empty databases, on servers of the binary's or of a test's own), both migrated,
/// the subscriber subscribed to the primary's publication and done copying its tables.
pub async fn subscribed(mut pair: Pair) -> Pair {
    migrate(&mut pair.primary.client).await.unwrap();
    let publisher = check_publisher(&pair.primary.client).await.unwrap();
    migrate(&mut pair.subscriber.client).await.unwrap();
    subscribe(&pair.subscriber.client, &pair.primary.url, &publisher)
        .await
        .unwrap();
    pair.copied().await;
    pair
}

impl Pair {
    /// Waits until the subscription has copied every table of the publication (30 s at most).
    pub async fn copied(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = sync(&self.subscriber.client).await.unwrap();
            assert_eq!(now.errors, 0, "the subscription failed: {now:?}");
            if now.tables > 0 && now.ready == now.tables {
                return;
            }
            assert!(Instant::now() < deadline, "not copied within 30 s: {now:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn side(name: &str, (admin, url): (String, String)) -> Side {
    let (target, client) = common::pg::create(&admin, name, &url).await;
    Side {
        name: name.to_owned(),
        url,
        target,
        client,
    }
}

impl Drop for Pair {
    /// Drops the subscriber's subscriptions, and with them their slots on the primary.
    fn drop(&mut self) {
        let url = self.subscriber.url.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let Ok(client) = Target::exact(&url).unwrap().connect_driven().await else {
                    return;
                };
                let Ok(rows) = client
                    .query(
                        "SELECT subname FROM pg_subscription \
                         WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
                        &[],
                    )
                    .await
                else {
                    return;
                };
                for row in rows {
                    let name: String = row.get(0);
                    let _ = client
                        .batch_execute(&format!("DROP SUBSCRIPTION \"{name}\""))
                        .await;
                }
            });
        });
        let _ = dropped.join();
    }
}
