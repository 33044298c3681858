//! Presence on a channel of gavel's own, `gavel_presence`: each console NOTIFYs what it says of
//! itself once per [`HEARTBEAT`] on a connection of its own (apart from the live feed), and
//! hears the others' on the feed's connection, which LISTENs on both channels (see
//! [`hearing`]): a console has one listening backend, which every commit wakes, not two.
//! Nothing is written to a table. Who sent a message is the
//! database's word: the sending backend's pid (carried by every notification) looked up in
//! `pg_stat_activity`, never the payload's claim. A console not heard from for [`LINGER`] is
//! gone (a killed one too: its heartbeats stop). What others send is bounded in size
//! ([`Status::parse`]), number ([`MAX_PEERS`]) and rate ([`BURST`] per sender, then one per
//! [`REFILL`]; a bounded queue).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use super::connect::Target;
use super::error::{Doing, Error, Result, answered};
use super::notifications::Beside;
use crate::domain::{MAX_PEERS, Peer, Status};
use crate::store::Feed;

/// The channel presence travels on.
pub const CHANNEL: &str = "gavel_presence";
/// How often a console says it is here.
pub const HEARTBEAT: Duration = Duration::from_secs(3);
/// How long a console not heard from stays listed: two heartbeats.
pub const LINGER: Duration = Duration::from_secs(6);
/// Messages one sender may send in a burst; beyond it, one per [`REFILL`] (an honest console
/// sends one per heartbeat plus one per claim change).
pub const BURST: u32 = 4;
pub const REFILL: Duration = Duration::from_secs(1);
/// Messages from others queued at most; more are dropped until the queue drains.
const QUEUED: usize = 1_024;
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// What the others send, as the feed's connection hears it: hand the [`Beside`] to the feed
/// (`listen`) and the queue to [`present`]. The queue holds at most [`QUEUED`] messages; more
/// are dropped until it drains.
pub fn hearing() -> (Beside, mpsc::Receiver<(i32, String)>) {
    let (queue, heard) = mpsc::channel(QUEUED);
    (
        Beside {
            channel: CHANNEL,
            queue,
        },
        heard,
    )
}

/// Keeps this console's presence on `target` and tells `events` who else is there (what the
/// feed hears, from `heard`: see [`hearing`]), until the console is gone (`status` closed, or
/// `heard` with the feed). Nothing is sent before the console says what it is. While the feed's
/// connection is down nobody is heard, and the others go from the list as their time is up.
pub async fn present<E: From<Feed>>(
    target: Target,
    mut status: watch::Receiver<Option<Status>>,
    events: UnboundedSender<E>,
    mut heard: mpsc::Receiver<(i32, String)>,
) {
    let mut failures: u32 = 0;
    loop {
        match attend(&target, &mut status, &events, &mut failures, &mut heard).await {
            Ok(()) | Err(Error::ConsoleGone) => return,
            Err(e) => {
                failures += 1;
                let wait =
                    (Duration::from_millis(250) * 2u32.pow(failures.min(6))).min(MAX_BACKOFF);
                tracing::warn!("presence lost: {e}; retrying in {wait:?}");
                if events.send(Feed::Presence(Vec::new()).into()).is_err() {
                    return;
                }
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// One connection's life: `Ok` when the console is gone.
async fn attend<E: From<Feed>>(
    target: &Target,
    status: &mut watch::Receiver<Option<Status>>,
    events: &UnboundedSender<E>,
    failures: &mut u32,
    heard: &mut mpsc::Receiver<(i32, String)>,
) -> Result<()> {
    let client = target.connect_driven().await?;
    // What was heard while this connection was down is old news: the next heartbeats tell.
    while heard.try_recv().is_ok() {}
    follow(&client, status, events, failures, heard).await
}

/// Another console as last heard.
struct Heard {
    peer: Peer,
    last: Instant,
    /// Messages it may still send now, and when that was last topped up.
    budget: u32,
    topped: Instant,
}

impl Heard {
    /// Whether one more message from it is within its rate: [`BURST`], topped up one per
    /// [`REFILL`].
    fn spend(&mut self) -> bool {
        let refills = (self.topped.elapsed().as_millis() / REFILL.as_millis()) as u32;
        if refills > 0 {
            self.budget = (self.budget + refills).min(BURST);
            self.topped = Instant::now();
        }
        let within = self.budget > 0;
        self.budget = self.budget.saturating_sub(1);
        within
    }
}

async fn follow<E: From<Feed>>(
    client: &Client,
    status: &mut watch::Receiver<Option<Status>>,
    events: &UnboundedSender<E>,
    failures: &mut u32,
    heard: &mut mpsc::Receiver<(i32, String)>,
) -> Result<()> {
    // Named apart from the feed's connection, so that whoever reads pg_stat_activity can tell
    // the two (`gavel presence` beside `gavel`).
    let own: i32 = client
        .query_one(
            "SELECT pg_backend_pid(), set_config('application_name', \
                 left(current_setting('application_name'), 54) || ' presence', false)",
            &[],
        )
        .await
        .doing("naming the presence connection")?
        .get(0);
    *failures = 0;
    let mut peers: BTreeMap<i32, Heard> = BTreeMap::new();
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    // What was said last that the others hear of at once when it changes: the claim, and the
    // rollout being edited.
    let mut claimed = (None, None);
    loop {
        let changed = tokio::select! {
            _ = heartbeat.tick() => {
                let said = status.borrow().clone();
                if let Some(said) = said {
                    claimed = (said.claim.clone(), said.editing.clone());
                    announce(client, &said).await?;
                }
                false
            }
            // The first console to fall silent goes when its time is up, to the moment.
            _ = tokio::time::sleep_until(expiry(&peers)) => {
                let before = peers.len();
                peers.retain(|_, h| h.last.elapsed() < LINGER);
                peers.len() != before
            }
            gone = status.changed() => {
                if gone.is_err() {
                    return Ok(());
                }
                // A claim taken or let go, or a rollout's editing begun or ended, is said at
                // once; the rest waits for the heartbeat.
                let said = status.borrow_and_update().clone();
                if let Some(said) = said.filter(|s| (&s.claim, &s.editing) != (&claimed.0, &claimed.1)) {
                    claimed = (said.claim.clone(), said.editing.clone());
                    announce(client, &said).await?;
                }
                false
            }
            message = heard.recv() => {
                // The feed is gone only with the console.
                let Some((pid, payload)) = message else {
                    return Ok(());
                };
                pid != own && hear(client, &mut peers, pid, &payload).await?
            }
        };
        if changed {
            let mut list: Vec<Peer> = peers.values().map(|h| h.peer.clone()).collect();
            list.sort_by(|a, b| (&a.status.operator, a.pid).cmp(&(&b.status.operator, b.pid)));
            events
                .send(Feed::Presence(list).into())
                .map_err(|_| Error::ConsoleGone)?;
        }
    }
}

/// When the console heard from least recently is to go: [`LINGER`] after it was last heard
/// (an hour from now when there is none).
fn expiry(peers: &BTreeMap<i32, Heard>) -> Instant {
    peers
        .values()
        .map(|h| h.last + LINGER)
        .min()
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(3_600))
}

/// Says `status` on the channel.
async fn announce(client: &Client, status: &Status) -> Result<()> {
    let payload = serde_json::to_string(status).unwrap_or_default();
    let params: [&(dyn ToSql + Sync); 2] = [&CHANNEL, &payload];
    let notify = client.execute("SELECT pg_notify($1, $2)", &params);
    // Within a heartbeat, or the connection is taken for lost: it listens for nothing, so
    // nothing else would tell.
    answered("this console's presence", HEARTBEAT, notify)
        .await?
        .doing("announcing this console's presence")?;
    Ok(())
}

/// Files a message from backend `pid`: whether the list changed. Dropped when too soon after
/// the sender's last, unreadable, from a backend already gone, or from one sender too many.
async fn hear(
    client: &Client,
    peers: &mut BTreeMap<i32, Heard>,
    pid: i32,
    payload: &str,
) -> Result<bool> {
    if peers.get_mut(&pid).is_some_and(|h| !h.spend()) {
        return Ok(false);
    }
    let Some(status) = Status::parse(payload) else {
        tracing::debug!("ignoring a presence message from backend {pid}: {payload:.120}");
        return Ok(false);
    };
    if let Some(known) = peers.get_mut(&pid) {
        known.last = Instant::now();
        let changed = known.peer.status != status;
        if known.peer.status.claim != status.claim {
            known.peer.claimed_at = status.claim.as_ref().map(|_| Utc::now());
        }
        known.peer.status = status;
        return Ok(changed);
    }
    if peers.len() >= MAX_PEERS {
        return Ok(false);
    }
    let params: [&(dyn ToSql + Sync); 1] = [&pid];
    let lookup = client.query_opt(
        "SELECT usename::text, backend_start FROM pg_stat_activity WHERE pid = $1",
        &params,
    );
    let row = answered(
        "the lookup of a presence message's sender",
        HEARTBEAT,
        lookup,
    )
    .await?
    .doing("reading who sent a presence message")?;
    let Some(row) = row else {
        return Ok(false);
    };
    let role: Option<String> = row.get(0);
    // Another role's backend_start is hidden from a role without pg_read_all_stats: then
    // since when this console has heard it.
    let since: Option<DateTime<Utc>> = row.get::<_, Option<_>>(1).or_else(|| Some(Utc::now()));
    let peer = Peer {
        pid,
        role: role.unwrap_or_else(|| "?".to_owned()),
        claimed_at: status.claim.as_ref().map(|_| Utc::now()),
        status,
        since,
    };
    peers.insert(
        pid,
        Heard {
            peer,
            last: Instant::now(),
            budget: BURST - 1,
            topped: Instant::now(),
        },
    );
    Ok(true)
}
