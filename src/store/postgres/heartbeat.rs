//! This console's part of presence: its row of `gavel_presence` (migration V6) on the database
//! it writes, written once per [`HEARTBEAT`] and at once when its claim or the rollout it edits
//! changes, on a connection of its own. The row's key is drawn by the console before its first
//! write, so that it knows its own row before any notification of it can come back; who wrote
//! the row, and since when, the database stamps. Each write is handed to whoever hears presence
//! ([`Spoken`]), which times its way back to the database read (see `replica::Echoes`).
//!
//! When the console reads another database (a subscriber), this connection is also its link
//! to the primary: what the role may write is asked on it at every connect (`access`), its
//! state is the primary's as the console shows it, and the subscriptions' replication slots
//! (their names as the subscriber reports them) are read there once per [`SLOT_WATCH`], what
//! the primary keeps for the subscriber and whether it still can (`replica::slots`). (A
//! console on one database is told its rights by its feed, before the feed is live.)
//!
//! A console that quits deletes its row ([`LEAVE`] at most), so that the others drop it at once
//! rather than when its time is up.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_postgres::Client;

use super::access::access;
use super::actions::refusal;
use super::connect::{Target, retry_in};
use super::error::{Doing, Error, Result, answered};
use super::replica::slots;
use crate::domain::Status;
use crate::store::{Feed, Link, Replica, Slot};

/// How often a console says it is here.
pub const HEARTBEAT: Duration = Duration::from_secs(3);
/// How often a console reading a subscriber reads its subscriptions' slots on the primary.
pub(super) const SLOT_WATCH: Duration = Duration::from_secs(2);
/// How long a console that quits waits for its row's deletion, at most.
pub const LEAVE: Duration = Duration::from_secs(1);

/// A write of this console's row, as the hearing side is told of it.
#[derive(Debug)]
pub(super) enum Spoken {
    /// A heartbeat sent at `at` was written as row `console`, stamped `said_at`.
    Said {
        console: i64,
        said_at: DateTime<Utc>,
        at: Instant,
    },
    /// The connection to the database written was lost: what was written may never be read.
    Lost,
}

/// A new key for this console's row: 63 random bits, never 0.
pub(super) fn draw() -> i64 {
    let mut bytes = [0u8; 8];
    // The system's random source failing leaves the key to the clock: still unlikely to meet
    // another console's, and the conflict is handled (a new key is drawn).
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_err() {
        bytes = Utc::now()
            .timestamp_nanos_opt()
            .unwrap_or_default()
            .to_le_bytes();
    }
    (i64::from_le_bytes(bytes) & i64::MAX).max(1)
}

/// Where a console reading a subscriber looks on the primary: the subscriptions' slots, named
/// as the subscriber reports them (by the hearing side).
pub(super) type SlotNames = watch::Receiver<Vec<String>>;

/// Keeps this console's row on `target` as `status` says, from key `console` on, until the
/// console is gone (`status` closed: then its row is deleted). Nothing is written before the
/// console says what it is. `apart`: the console reads another database, and this is its link
/// to the primary (what the role may write there, this connection's state, and the slots
/// `slots` names, go to `events`).
pub(super) async fn speak<E: From<Feed>>(
    target: Target,
    apart: bool,
    mut status: watch::Receiver<Option<Status>>,
    events: UnboundedSender<E>,
    spoken: mpsc::Sender<Spoken>,
    slots: SlotNames,
    mut console: i64,
) {
    let mut failures: u32 = 0;
    loop {
        let outcome = speaking(
            &target,
            (apart, &slots),
            &mut status,
            &events,
            &spoken,
            &mut console,
            &mut failures,
        )
        .await;
        let e = match outcome {
            Ok(()) | Err(Error::ConsoleGone) => return,
            Err(e) => e,
        };
        failures += 1;
        let wait = retry_in(failures);
        tracing::warn!(
            "presence lost on {}: {e}; retrying in {wait:?}",
            target.describe()
        );
        let _ = spoken.try_send(Spoken::Lost);
        if apart {
            let down = Link::Down {
                error: e.to_string(),
                retry_in: wait,
            };
            if events
                .send(Feed::Replica(Replica::Primary(down)).into())
                .is_err()
            {
                return;
            }
        }
        // A console that quits meanwhile has no row it could delete: it goes at once. (What
        // it says meanwhile is said on the next connection's first heartbeat.)
        let retry = tokio::time::sleep(wait);
        tokio::pin!(retry);
        loop {
            tokio::select! {
                () = &mut retry => break,
                gone = status.changed() => if gone.is_err() {
                    return;
                },
            }
        }
    }
}

/// One connection's life: `Ok` when the console is gone.
async fn speaking<E: From<Feed>>(
    target: &Target,
    (apart, slot_names): (bool, &SlotNames),
    status: &mut watch::Receiver<Option<Status>>,
    events: &UnboundedSender<E>,
    spoken: &mpsc::Sender<Spoken>,
    console: &mut i64,
    failures: &mut u32,
) -> Result<()> {
    let client = target.connect_driven().await?;
    name_presence(&client).await?;
    if apart {
        let rights = access(&client).await?;
        for feed in [
            Feed::Access(rights),
            Feed::Replica(Replica::Primary(Link::Live)),
        ] {
            events.send(feed.into()).map_err(|_| Error::ConsoleGone)?;
        }
    }
    *failures = 0;
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    // What was said last that the others hear of at once when it changes: the claim, and the
    // rollout being edited; `None` until something was said on this connection, which the
    // others hear of at once too.
    let mut claimed = None;
    // Why the database last refused this console's row, said once until it changes.
    let mut refused = None;
    let mut slot_watch = tokio::time::interval(SLOT_WATCH);
    // The slots as last told on this connection.
    let mut told = None;
    loop {
        tokio::select! {
            _ = heartbeat.tick() => {
                let said = status.borrow().clone();
                if let Some(said) = said {
                    claimed = Some((said.claim.clone(), said.editing.clone()));
                    said_or_refused(&client, console, &said, spoken, &mut refused).await?;
                }
            }
            gone = status.changed() => {
                if gone.is_err() {
                    leave(&client, *console).await;
                    return Ok(());
                }
                // A console's first word, a claim taken or let go, or a rollout's editing
                // begun or ended, is said at once; the rest waits for the heartbeat.
                let said = status.borrow_and_update().clone();
                let news = |s: &Status| {
                    claimed.as_ref().is_none_or(|(claim, editing)| {
                        (&s.claim, &s.editing) != (claim, editing)
                    })
                };
                if let Some(said) = said.filter(news) {
                    claimed = Some((said.claim.clone(), said.editing.clone()));
                    said_or_refused(&client, console, &said, spoken, &mut refused).await?;
                }
            }
            _ = slot_watch.tick(), if apart => {
                tell_slots(&client, slot_names, events, &mut told).await?;
            }
        }
    }
}

/// Reads the slots `names` names on the primary, and tells them when they changed since `told`.
async fn tell_slots<E: From<Feed>>(
    client: &Client,
    names: &SlotNames,
    events: &UnboundedSender<E>,
    told: &mut Option<std::result::Result<Vec<Slot>, String>>,
) -> Result<()> {
    let names = names.borrow().clone();
    let now = if names.is_empty() {
        Ok(Vec::new())
    } else {
        answered("the read of the slots", HEARTBEAT, slots(client, &names)).await??
    };
    if told.as_ref() == Some(&now) {
        return Ok(());
    }
    *told = Some(now.clone());
    events
        .send(Feed::Replica(Replica::Slots(now)).into())
        .map_err(|_| Error::ConsoleGone)
}

/// Deletes this console's row (`console`), within [`LEAVE`]: the others drop it at once
/// (a failure only leaves it to expire).
async fn leave(client: &Client, console: i64) {
    let deleted = answered(
        "the deletion of this console's presence",
        LEAVE,
        client.execute("DELETE FROM gavel_presence WHERE console = $1", &[&console]),
    )
    .await
    .and_then(|deleted| deleted.doing("deleting this console's presence"));
    if let Err(e) = deleted {
        tracing::debug!("this console's presence row stays until it expires: {e}");
    }
}

/// Names a presence connection apart from the feed's, so that whoever reads
/// `pg_stat_activity` can tell them (`gavel presence` beside `gavel`).
pub(super) async fn name_presence(client: &Client) -> Result<()> {
    client
        .execute(
            "SELECT set_config('application_name', \
                 left(current_setting('application_name'), 54) || ' presence', false)",
            &[],
        )
        .await
        .doing("naming the presence connection")?;
    Ok(())
}

/// [`say`], where a refusal by the database (a role without the privilege on
/// `gavel_presence`, a key another role holds) is no failure of the connection: it is logged
/// once (until the reason changes), another key is drawn, and the console stays connected, its
/// row unwritten, the others not seeing it; the connection's own failures are returned.
async fn said_or_refused(
    client: &Client,
    console: &mut i64,
    status: &Status,
    spoken: &mpsc::Sender<Spoken>,
    refused: &mut Option<String>,
) -> Result<()> {
    match say(client, console, status, spoken).await {
        Ok(()) => {
            *refused = None;
            Ok(())
        }
        Err(e) => {
            if refusal(&e).is_none() {
                return Err(e);
            }
            let why = e.to_string();
            if refused.as_deref() != Some(&why) {
                tracing::warn!("the other consoles cannot see this one: {why}");
            }
            *refused = Some(why);
            *console = draw();
            Ok(())
        }
    }
}

/// Writes `status` as row `console` (inserted when it is not there: the first time, or after it
/// was cleared away), within a heartbeat, or the connection is taken for lost; a key another
/// console holds is given up for a new one, written at the next heartbeat.
async fn say(
    client: &Client,
    console: &mut i64,
    status: &Status,
    spoken: &mpsc::Sender<Spoken>,
) -> Result<()> {
    let payload = status.to_payload();
    let at = Instant::now();
    let key = *console;
    let write = async {
        let updated = client
            .query_opt(
                "UPDATE gavel_presence SET status = $2 WHERE console = $1 RETURNING said_at",
                &[&key, &payload],
            )
            .await?;
        match updated {
            Some(row) => Ok(Some(row)),
            None => {
                client
                    .query_opt(
                        "INSERT INTO gavel_presence (console, status) VALUES ($1, $2) \
                         ON CONFLICT (console) DO NOTHING RETURNING said_at",
                        &[&key, &payload],
                    )
                    .await
            }
        }
    };
    let written = answered("this console's presence", HEARTBEAT, write)
        .await?
        .doing("saying this console is here")?;
    let Some(row) = written else {
        tracing::warn!("presence key {key} is another console's: drawing a new one");
        *console = draw();
        return Ok(());
    };
    let said_at: Option<DateTime<Utc>> = row
        .try_get(0)
        .map_err(|e| Error::Inconsistent(format!("gavel_presence ({key}): said_at: {e}")))?;
    if let Some(said_at) = said_at {
        // Dropped when the hearing side is behind: a later heartbeat is timed instead.
        let _ = spoken.try_send(Spoken::Said {
            console: key,
            said_at,
            at,
        });
    }
    Ok(())
}
