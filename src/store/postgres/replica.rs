//! How a subscriber that a console reads stands with the primary it writes: the subscriptions
//! the subscriber reports ([`subscriptions`]), their replication slots as the primary reports
//! them ([`slots`]: what the primary keeps for them, and whether it still can), and how far
//! behind the primary the subscriber is ([`Echoes`]).
//!
//! The lag is timed on the console's own clock: each heartbeat presence writes on the primary
//! (its `said_at` as the primary stamped it) is timed from its sending until its row is read
//! back on the subscriber, and one still unread counts as it ages. Neither server's clock is
//! compared with the other's, so clocks that disagree between hosts do not show as lag; and it
//! is the lag of the rows themselves, through whatever stalls them (a disabled subscription,
//! an apply worker failing, a slot the walsender is behind on, a subscriber restarting). The
//! subscription's own statistics cannot say as much: `pg_stat_subscription`'s
//! `last_msg_receipt_time` and `latest_end_time` move with the walsender's keepalives on an
//! idle primary too, and set against the subscriber's `now()` they take in the difference of
//! the two hosts' clocks; they serve to tell *why* (disabled, no worker, errors), which
//! [`subscriptions`] reads.

use std::collections::VecDeque;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;
use tokio_postgres::Client;

use super::error::{Doing, Result};
use super::replication::PUBLICATION;
use crate::store::{Slot, SlotStanding, Subscription};

/// Heartbeats written and not yet read back that are timed, at most: beyond them (over three
/// minutes of a stall) the oldest, which says how far behind, is kept, and newer ones are not
/// timed.
const TIMED: usize = 64;
/// Subscriptions of one database reported, at most.
const LISTED: i64 = 16;

/// This console's heartbeats, written on the primary, until they are read back from the
/// subscriber.
#[derive(Debug, Default)]
pub(super) struct Echoes {
    /// Written and not yet read back, oldest first: `said_at` as the primary stamped it, and
    /// when it was sent.
    unseen: VecDeque<(DateTime<Utc>, Instant)>,
    /// How long the newest heartbeat read back took.
    last: Option<Duration>,
}

impl Echoes {
    /// A heartbeat sent at `at` was written, stamped `said_at`.
    pub(super) fn sent(&mut self, said_at: DateTime<Utc>, at: Instant) {
        if self.unseen.len() < TIMED {
            self.unseen.push_back((said_at, at));
        }
    }

    /// This console's row was read back at `now`, stamped `seen`: every heartbeat up to it has
    /// arrived, and the newest of them says how long a write takes to arrive now.
    pub(super) fn seen(&mut self, seen: DateTime<Utc>, now: Instant) {
        let mut arrived = None;
        while let Some(&(said_at, at)) = self.unseen.front() {
            if said_at > seen {
                break;
            }
            arrived = Some(at);
            self.unseen.pop_front();
        }
        if let Some(at) = arrived {
            self.last = Some(now.saturating_duration_since(at));
        }
    }

    /// The primary was lost: what was written may never arrive, and nothing measures now.
    pub(super) fn lost(&mut self) {
        *self = Echoes::default();
    }

    /// How far behind the primary the subscriber is at `now`: the longer of the newest
    /// heartbeat's time to arrive and the age of the oldest still unread; `None` before any was
    /// written.
    pub(super) fn behind(&self, now: Instant) -> Option<Duration> {
        let waiting = self
            .unseen
            .front()
            .map(|&(_, at)| now.saturating_duration_since(at));
        match (self.last, waiting) {
            (None, None) => None,
            (last, waiting) => Some(last.unwrap_or_default().max(waiting.unwrap_or_default())),
        }
    }
}

/// The subscriptions to gavel's publication of the database `client` is connected to, as it
/// reports them (at most
/// [`LISTED`], by name); `Ok(Err(why))` when it refused to say (the server's words), `Err` when
/// the connection failed.
pub(super) async fn subscriptions(
    client: &Client,
) -> Result<std::result::Result<Vec<Subscription>, String>> {
    // The error counts came with PostgreSQL 15.
    let version: i32 = client
        .query_one("SELECT current_setting('server_version_num')::int4", &[])
        .await
        .doing("reading the server's version")?
        .get(0);
    let errors = if version >= 150_000 {
        "(SELECT t.apply_error_count + t.sync_error_count FROM pg_stat_subscription_stats t \
             WHERE t.subid = s.oid)"
    } else {
        "NULL::int8"
    };
    let query = format!(
        "SELECT s.subname::text, s.subenabled, \
                EXISTS (SELECT FROM pg_stat_subscription w \
                        WHERE w.subid = s.oid AND w.relid IS NULL AND w.pid IS NOT NULL), \
                {errors}, s.subslotname::text \
         FROM pg_subscription s \
         WHERE s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
           AND $1 = ANY (s.subpublications) \
         ORDER BY s.subname LIMIT {LISTED}"
    );
    match client
        .query(&query, &[&PUBLICATION])
        .await
        .doing("reading the subscriptions")
    {
        Ok(rows) => Ok(Ok(rows
            .iter()
            .map(|row| Subscription {
                name: row.get(0),
                enabled: row.get(1),
                applying: row.get(2),
                errors: row.get(3),
                slot: row.get(4),
            })
            .collect())),
        Err(e) => match e.database().and_then(|d| d.as_db_error()) {
            Some(db) => Ok(Err(db.message().to_owned())),
            None => Err(e),
        },
    }
}

/// The replication slots `names` on the primary `client` is connected to, in that order, as it
/// reports them; `Ok(Err(why))` when it refused to say (the server's words), `Err` when the
/// connection failed. Any role may read `pg_replication_slots` and the primary's WAL position.
pub(super) async fn slots(
    client: &Client,
    names: &[String],
) -> Result<std::result::Result<Vec<Slot>, String>> {
    // `wal_status` came with PostgreSQL 13: read through the row as JSON, it is NULL before.
    let query = "SELECT n.name, s.slot_name IS NOT NULL, coalesce(s.active, false), \
                greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn), 0)::int8 \
                    / 1048576, \
                to_jsonb(s) ->> 'wal_status' \
         FROM unnest($1::text[]) WITH ORDINALITY AS n(name, at) \
         LEFT JOIN pg_replication_slots s ON s.slot_name = n.name \
         ORDER BY n.at";
    match client
        .query(query, &[&names])
        .await
        .doing("reading the subscriptions' slots on the primary")
    {
        Ok(rows) => Ok(Ok(rows
            .iter()
            .map(|row| {
                let (found, active): (bool, bool) = (row.get(1), row.get(2));
                let (kept, wal): (Option<i64>, Option<String>) = (row.get(3), row.get(4));
                let standing = match (found, wal.as_deref()) {
                    (false, _) => SlotStanding::Missing,
                    (true, Some("lost")) => SlotStanding::Lost,
                    (true, wal) => SlotStanding::Held {
                        active,
                        kept_mib: kept.map_or(0, |k| k.unsigned_abs()),
                        unreserved: wal == Some("unreserved"),
                    },
                };
                Slot {
                    name: row.get(0),
                    standing,
                }
            })
            .collect())),
        Err(e) => match e.database().and_then(|d| d.as_db_error()) {
            Some(db) => Ok(Err(db.message().to_owned())),
            None => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(second: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + second, 0).unwrap()
    }

    #[test]
    fn the_lag_is_the_newest_heartbeat_read_back_or_the_oldest_still_unread() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut echoes = Echoes::default();
        assert_eq!(echoes.behind(at(0)), None, "nothing written yet");

        echoes.sent(stamp(0), at(0));
        assert_eq!(echoes.behind(at(400)), Some(Duration::from_millis(400)));
        echoes.seen(stamp(0), at(5));
        assert_eq!(echoes.behind(at(2_000)), Some(Duration::from_millis(5)));

        // A stall: three heartbeats unread, the oldest's age grows.
        echoes.sent(stamp(3), at(3_000));
        echoes.sent(stamp(6), at(6_000));
        echoes.sent(stamp(9), at(9_000));
        assert_eq!(
            echoes.behind(at(10_500)),
            Some(Duration::from_millis(7_500))
        );
        // The first two arrive together: the newer of them is timed; the third still waits.
        echoes.seen(stamp(6), at(10_600));
        assert_eq!(
            echoes.behind(at(10_600)),
            Some(Duration::from_millis(4_600))
        );
        echoes.seen(stamp(9), at(10_600));
        assert_eq!(
            echoes.behind(at(20_000)),
            Some(Duration::from_millis(1_600))
        );
        // A row read again without a newer stamp changes nothing.
        echoes.seen(stamp(9), at(20_000));
        assert_eq!(
            echoes.behind(at(20_000)),
            Some(Duration::from_millis(1_600))
        );

        echoes.sent(stamp(30), at(30_000));
        echoes.lost();
        assert_eq!(echoes.behind(at(40_000)), None, "nothing measures now");
    }

    #[test]
    fn a_long_stall_keeps_its_oldest_heartbeat_and_stays_bounded() {
        let start = Instant::now();
        let mut echoes = Echoes::default();
        for i in 0..(TIMED as i64 * 3) {
            echoes.sent(stamp(i * 3), start + Duration::from_secs(i as u64 * 3));
        }
        assert_eq!(echoes.unseen.len(), TIMED);
        let now = start + Duration::from_secs(1_000);
        assert_eq!(echoes.behind(now), Some(Duration::from_secs(1_000)));
    }
}
