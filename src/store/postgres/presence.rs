//! Presence: who else is here, across every server a team's consoles read. Each console keeps
//! a row of `gavel_presence` (migration V6) on the database it writes, the primary (see
//! `heartbeat`); the row's every write is notified on channel `gavel_presence` wherever it
//! lands: on the primary, and on each subscriber as it is applied there (the notify trigger is
//! ENABLE ALWAYS). A console hears the channel on its feed's connection to the database it
//! reads (see [`hearing`]: one listening backend, which every commit wakes, not two) and reads
//! the rows named there on a connection of its own: presence needs no LISTEN on the primary
//! from a console that reads a subscriber.
//!
//! On each connect the rows written within [`LINGER`] are read, so that a console is seen at
//! once by one that comes after it. A notification only names a row (its key); who wrote it is the row's `role`, stamped from
//! `session_user` by the database that took the write, never a payload's or a client's word.
//! A console not heard from for [`LINGER`] is gone (a killed one too: its heartbeats stop); one
//! whose row is deleted goes at once. What others say is bounded in size ([`Status::parse`]),
//! number ([`MAX_PEERS`]) and rate ([`BURST`] per console, then one per [`REFILL`]; a bounded
//! queue), and a row read again without a newer write keeps nobody listed. A message over its
//! console's rate is not lost: the row it names is read once the rate allows (see [`Rate`]).
//!
//! Reading a subscriber, this console's own row read back times how far behind the primary the
//! subscriber is, and its subscriptions are read once a second (see `replica`); their slots'
//! names go to the speaking side, which reads the slots on the primary (see `heartbeat`).
//! A console that quits deletes its row: the others hear of it, find no row, and drop it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;
use tokio_postgres::{Client, Row};

use super::connect::{Target, retry_in};
use super::error::{Doing, Error, Result, answered};
use super::heartbeat::{self, Spoken, draw, name_presence};
use super::notifications::Beside;
use super::replica::{Echoes, subscriptions};
use super::sides::Sides;
use crate::domain::{MAX_PEERS, Peer, Status};
use crate::store::{Feed, Replica, Subscription};

pub use super::heartbeat::{HEARTBEAT, LEAVE};

/// The channel presence travels on.
pub const CHANNEL: &str = "gavel_presence";
/// How long a console not heard from stays listed: two heartbeats.
pub const LINGER: Duration = Duration::from_secs(6);
/// Reads of one console's row in a burst; beyond it, one per [`REFILL`] (an honest console
/// writes it once a heartbeat plus once a claim change, and the messages heard together are
/// read once).
pub const BURST: u32 = 4;
pub const REFILL: Duration = Duration::from_secs(1);
/// Messages from others queued at most; more are dropped until the queue drains.
const QUEUED: usize = 1_024;
/// This console's writes told to the hearing side and not yet taken, at most.
const SPOKEN: usize = 64;
/// How often a console reading a subscriber reads its subscriptions and says how far behind it
/// is.
const WATCH: Duration = Duration::from_secs(1);
/// The longest key a notification may name: an `int8` in decimal.
const KEY_CHARS: usize = 20;

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

/// Keeps this console's presence on the database `sides` writes and tells `events` who else is
/// there (what the feed hears, from `heard`: see [`hearing`], read on the database `sides`
/// reads), until the console is gone (`status` closed, or `heard` with the feed). Nothing is
/// said before the console says what it is. While either connection is down the others go from
/// the list as their time is up. Reading apart from the primary, also tells `events` how the
/// subscriber stands with it ([`Feed::Replica`]) and what the role may write there. `gone`
/// closes once the console is gone and its row deleted (see `heartbeat::LEAVE`).
pub async fn present<E: From<Feed>>(
    sides: Sides,
    status: watch::Receiver<Option<Status>>,
    events: UnboundedSender<E>,
    heard: mpsc::Receiver<(i32, String)>,
    gone: oneshot::Sender<()>,
) {
    let console = draw();
    let apart = sides.reads_elsewhere();
    let (spoken, said) = mpsc::channel(SPOKEN);
    let (slot_names, slots) = watch::channel(Vec::new());
    let (write, told) = (sides.write().clone(), events.clone());
    let speaking = async move {
        heartbeat::speak(write, apart, status, told, spoken, slots, console).await;
        drop(gone);
    };
    let listening = Hearing {
        apart,
        own: console,
        peers: BTreeMap::new(),
        echoes: Echoes::default(),
        shown: Shown::default(),
        slot_names,
    }
    .hear(sides.read().clone(), events, heard, said);
    tokio::join!(speaking, listening);
}

/// Another console as last heard.
struct Heard {
    peer: Peer,
    /// When its row was last read with a newer write, and that write's stamp.
    last: Instant,
    said_at: Option<DateTime<Utc>>,
    rate: Rate,
}

/// How often one console's row is read: [`BURST`] times at once, then once per [`REFILL`]. A
/// message over the rate is not dropped: its console's row is owed a read, made at the next
/// top-up (the row read then is the newest, so one read settles every message owed). A claim
/// let go just after a burst shows within a second, not at the console's next heartbeat.
struct Rate {
    /// Messages that may be read now.
    budget: u32,
    /// When the budget was last topped up, to the refill (what is left of one carries over).
    topped: Instant,
    /// A message came over the rate: the row is to be read at the next top-up.
    owed: bool,
}

impl Rate {
    /// A console first heard at `now`, that message spent.
    fn new(now: Instant) -> Rate {
        Rate {
            budget: BURST - 1,
            topped: now,
            owed: false,
        }
    }

    /// Adds the refills due by `now` to the budget, up to [`BURST`].
    fn top_up(&mut self, now: Instant) {
        let due = now.saturating_duration_since(self.topped).as_millis() / REFILL.as_millis();
        match u32::try_from(due) {
            Ok(due) if due < BURST => {
                self.budget = (self.budget + due).min(BURST);
                self.topped += REFILL * due;
            }
            _ => {
                self.budget = BURST;
                self.topped = now;
            }
        }
    }

    /// Whether the rate allows a read at `now` (then spent).
    fn take(&mut self, now: Instant) -> bool {
        self.top_up(now);
        let within = self.budget > 0;
        self.budget -= u32::from(within);
        within
    }

    /// Whether a message heard at `now` is read at once; if not, its row is owed a read.
    fn spend(&mut self, now: Instant) -> bool {
        let within = self.take(now);
        self.owed |= !within;
        within
    }

    /// When the read owed (if any) may be made.
    fn owed_at(&self) -> Option<Instant> {
        self.owed.then_some(self.topped + REFILL)
    }

    /// Whether the read owed is made at `now` (the rate spent for it).
    fn settle(&mut self, now: Instant) -> bool {
        let settled = self.owed && self.take(now);
        self.owed &= !settled;
        settled
    }
}

/// What was last told of the replica, so that only changes are told.
#[derive(Default)]
struct Shown {
    /// Whole seconds behind, as last told (`Some(None)`: told that nothing measures it).
    behind: Option<Option<u64>>,
    subscriptions: Option<std::result::Result<Vec<Subscription>, String>>,
}

/// The hearing side: the others as heard, and this console's own row coming back.
struct Hearing {
    apart: bool,
    /// This console's own key (its rows are its own heartbeats coming back, not another
    /// console).
    own: i64,
    peers: BTreeMap<i64, Heard>,
    echoes: Echoes,
    shown: Shown,
    /// The subscriptions' slots, named for the speaking side, which reads them on the primary.
    slot_names: watch::Sender<Vec<String>>,
}

impl Hearing {
    /// Hears the others on `target` until the console is gone, connecting again when the
    /// connection fails.
    async fn hear<E: From<Feed>>(
        mut self,
        target: Target,
        events: UnboundedSender<E>,
        mut heard: mpsc::Receiver<(i32, String)>,
        mut said: mpsc::Receiver<Spoken>,
    ) {
        let mut failures: u32 = 0;
        loop {
            match self
                .attend(&target, &events, &mut heard, &mut said, &mut failures)
                .await
            {
                Ok(()) | Err(Error::ConsoleGone) => return,
                Err(e) => {
                    failures += 1;
                    let wait = retry_in(failures);
                    tracing::warn!("presence lost: {e}; retrying in {wait:?}");
                    self.peers.clear();
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
        &mut self,
        target: &Target,
        events: &UnboundedSender<E>,
        heard: &mut mpsc::Receiver<(i32, String)>,
        said: &mut mpsc::Receiver<Spoken>,
        failures: &mut u32,
    ) -> Result<()> {
        let client = target.connect_driven().await?;
        name_presence(&client).await?;
        // What was heard while this connection was down is old news: the rows say who is here.
        while heard.try_recv().is_ok() {}
        let here = self.read_present(&client).await?;
        *failures = 0;
        if here {
            self.tell_peers(events)?;
        }
        let mut watch = tokio::time::interval(WATCH);
        loop {
            let owed_at = self.owed_at();
            let changed = tokio::select! {
                // This console's own writes first, so that its row is known as its own.
                biased;
                spoken = said.recv() => {
                    let Some(spoken) = spoken else {
                        return Ok(());
                    };
                    self.spoke(spoken);
                    false
                }
                message = heard.recv() => {
                    // The feed is gone only with the console.
                    let Some((_, first)) = message else {
                        return Ok(());
                    };
                    while let Ok(spoken) = said.try_recv() {
                        self.spoke(spoken);
                    }
                    let named = self.named(first, heard);
                    let changed = self.read(&client, named).await?;
                    if self.apart {
                        self.tell_behind(events)?;
                    }
                    changed
                }
                // Consoles heard over their rate are read once it allows.
                _ = tokio::time::sleep_until(owed_at.unwrap_or_else(Instant::now)),
                    if owed_at.is_some() =>
                {
                    let owed = self.settle(Instant::now());
                    self.read(&client, owed).await?
                }
                // The first console to fall silent goes when its time is up, to the moment.
                _ = tokio::time::sleep_until(self.expiry()) => {
                    let before = self.peers.len();
                    self.peers.retain(|_, h| h.last.elapsed() < LINGER);
                    self.peers.len() != before
                }
                _ = watch.tick(), if self.apart => {
                    self.tell_behind(events)?;
                    self.tell_subscriptions(&client, events).await?;
                    false
                }
            };
            if changed {
                self.tell_peers(events)?;
            }
        }
    }

    /// Tells who is here, by operator.
    fn tell_peers<E: From<Feed>>(&self, events: &UnboundedSender<E>) -> Result<()> {
        let mut list: Vec<Peer> = self.peers.values().map(|h| h.peer.clone()).collect();
        list.sort_by(|a, b| (&a.status.operator, a.console).cmp(&(&b.status.operator, b.console)));
        events
            .send(Feed::Presence(list).into())
            .map_err(|_| Error::ConsoleGone)
    }

    /// Takes what the speaking side wrote.
    fn spoke(&mut self, spoken: Spoken) {
        match spoken {
            Spoken::Said {
                console,
                said_at,
                at,
            } => {
                self.own = console;
                self.echoes.sent(said_at, at);
            }
            Spoken::Lost => self.echoes.lost(),
        }
    }

    /// The keys named by `first` and the messages queued behind it, each once, that are within
    /// their console's rate (this console's own always are; the others' rows are owed a read);
    /// a message that names no key is dropped.
    fn named(&mut self, first: String, heard: &mut mpsc::Receiver<(i32, String)>) -> Vec<i64> {
        let now = Instant::now();
        let queued = std::iter::from_fn(|| heard.try_recv().ok().map(|(_, payload)| payload));
        let mut keys = BTreeSet::new();
        for payload in std::iter::once(first).chain(queued.take(QUEUED)) {
            let key = (payload.len() <= KEY_CHARS)
                .then(|| payload.parse::<i64>().ok())
                .flatten();
            let Some(key) = key else {
                tracing::debug!("ignoring a presence message: {payload:.120}");
                continue;
            };
            keys.insert(key);
        }
        // One read a console, whatever it said in the meantime: its rate counts reads.
        keys.into_iter()
            .filter(|&key| {
                key == self.own || self.peers.get_mut(&key).is_none_or(|h| h.rate.spend(now))
            })
            .collect()
    }

    /// When the first read owed to a console heard over its rate may be made.
    fn owed_at(&self) -> Option<Instant> {
        self.peers.values().filter_map(|h| h.rate.owed_at()).min()
    }

    /// The consoles whose rows are owed a read that their rate allows at `now`.
    fn settle(&mut self, now: Instant) -> Vec<i64> {
        self.peers
            .iter_mut()
            .filter_map(|(&key, heard)| heard.rate.settle(now).then_some(key))
            .collect()
    }

    /// Reads the rows written within [`LINGER`] (by the clock of the database read: a
    /// subscriber's may differ a little from the primary's that stamped them, and the next
    /// heartbeats set that right), so that a console is seen at once by one that comes after it;
    /// whether any was filed.
    async fn read_present(&mut self, client: &Client) -> Result<bool> {
        let rows = answered(
            "the read of who is here",
            HEARTBEAT,
            client.query(
                &format!(
                    "SELECT console, role, status, since, said_at FROM gavel_presence \
                     WHERE said_at > now() - make_interval(secs => $1) \
                     ORDER BY said_at DESC LIMIT {}",
                    MAX_PEERS + 1
                ),
                &[&LINGER.as_secs_f64()],
            ),
        )
        .await?
        .doing("reading who is here")?;
        Ok(self.file_all(&rows, &[]))
    }

    /// Reads the rows `keys` name and files them: whether the list changed. A key whose row is
    /// gone is a console that left.
    async fn read(&mut self, client: &Client, keys: Vec<i64>) -> Result<bool> {
        if keys.is_empty() {
            return Ok(false);
        }
        let rows = answered(
            "the read of who is here",
            HEARTBEAT,
            client.query(
                "SELECT console, role, status, since, said_at FROM gavel_presence \
                 WHERE console = ANY($1)",
                &[&keys],
            ),
        )
        .await?
        .doing("reading who is here")?;
        Ok(self.file_all(&rows, &keys))
    }

    /// Files `rows`, read for `keys` (whose consoles without a row left): whether the list
    /// changed.
    fn file_all(&mut self, rows: &[Row], keys: &[i64]) -> bool {
        let mut changed = false;
        let mut found = BTreeSet::new();
        for row in rows {
            match self.file(row) {
                Ok(Some((key, filed))) => {
                    found.insert(key);
                    changed |= filed;
                }
                Ok(None) => {}
                Err(e) => tracing::debug!("ignoring a presence row: {e}"),
            }
        }
        for key in keys {
            if !found.contains(key) {
                changed |= self.peers.remove(key).is_some();
            }
        }
        changed
    }

    /// Files one row: its key, and whether the list changed (`None` for this console's own
    /// row, which times the way back instead, and for a console one too many).
    fn file(&mut self, row: &Row) -> std::result::Result<Option<(i64, bool)>, String> {
        let column = |e: tokio_postgres::Error| format!("gavel_presence: {e}");
        let key: i64 = row.try_get(0).map_err(column)?;
        let said_at: Option<DateTime<Utc>> = row.try_get(4).map_err(column)?;
        if key == self.own {
            if let Some(said_at) = said_at {
                self.echoes.seen(said_at, Instant::now());
            }
            return Ok(None);
        }
        let text: Option<String> = row.try_get(2).map_err(column)?;
        let Some(status) = text.as_deref().and_then(Status::parse) else {
            return Err(format!("gavel_presence ({key}): status: not a status"));
        };
        if let Some(known) = self.peers.get_mut(&key) {
            if known.said_at != said_at {
                known.last = Instant::now();
                known.said_at = said_at;
            }
            let changed = known.peer.status != status;
            if known.peer.status.claim != status.claim {
                known.peer.claimed_at = status.claim.as_ref().map(|_| Utc::now());
            }
            known.peer.status = status;
            return Ok(Some((key, changed)));
        }
        if self.peers.len() >= MAX_PEERS {
            return Ok(None);
        }
        let role: Option<String> = row.try_get(1).map_err(column)?;
        let since: Option<DateTime<Utc>> = row.try_get(3).map_err(column)?;
        let peer = Peer {
            console: key,
            role: role.unwrap_or_else(|| "?".to_owned()),
            claimed_at: status.claim.as_ref().map(|_| Utc::now()),
            status,
            since,
        };
        self.peers.insert(
            key,
            Heard {
                peer,
                last: Instant::now(),
                said_at,
                rate: Rate::new(Instant::now()),
            },
        );
        Ok(Some((key, true)))
    }

    /// When the console heard from least recently is to go: [`LINGER`] after it was last heard
    /// (an hour from now when there is none).
    fn expiry(&self) -> Instant {
        self.peers
            .values()
            .map(|h| h.last + LINGER)
            .min()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(3_600))
    }

    /// Tells how far behind the primary the subscriber is, in whole seconds, when that changed.
    fn tell_behind<E: From<Feed>>(&mut self, events: &UnboundedSender<E>) -> Result<()> {
        let behind = self.echoes.behind(Instant::now());
        let seconds = behind.map(|d| d.as_secs());
        if self.shown.behind == Some(seconds) {
            return Ok(());
        }
        self.shown.behind = Some(seconds);
        events
            .send(Feed::Replica(Replica::Behind(behind)).into())
            .map_err(|_| Error::ConsoleGone)
    }

    /// Reads the subscriptions and tells them when they changed.
    async fn tell_subscriptions<E: From<Feed>>(
        &mut self,
        client: &Client,
        events: &UnboundedSender<E>,
    ) -> Result<()> {
        let now = answered(
            "the read of the subscriptions",
            WATCH * 3,
            subscriptions(client),
        )
        .await??;
        if self.shown.subscriptions.as_ref() == Some(&now) {
            return Ok(());
        }
        if let Ok(subscriptions) = &now {
            let names: Vec<String> = subscriptions
                .iter()
                .filter_map(|s| s.slot.clone())
                .collect();
            self.slot_names.send_if_modified(|named| {
                let changed = *named != names;
                *named = names;
                changed
            });
        }
        self.shown.subscriptions = Some(now.clone());
        events
            .send(Feed::Replica(Replica::Subscriptions(now)).into())
            .map_err(|_| Error::ConsoleGone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_over_the_rate_is_owed_a_read_at_the_next_top_up_and_fractions_carry_over() {
        let start = Instant::now();
        let mut rate = Rate::new(start);
        // The first message was spent when the console was first heard: three more at once.
        for _ in 1..BURST {
            assert!(rate.spend(start));
        }
        assert_eq!(rate.owed_at(), None);
        assert!(!rate.spend(start));
        assert!(!rate.spend(start + REFILL / 2));
        // One read owed, whatever the messages over the rate, at the next top-up.
        assert_eq!(rate.owed_at(), Some(start + REFILL));
        assert!(!rate.settle(start + REFILL / 2));
        assert!(rate.settle(start + REFILL));
        assert_eq!(rate.owed_at(), None);
        assert!(!rate.settle(start + REFILL));
        // A top-up 1.9 refills after the last keeps the 0.9: the next refill comes 0.1 later.
        assert!(rate.spend(start + REFILL * 29 / 10));
        assert!(!rate.spend(start + REFILL * 29 / 10));
        assert_eq!(rate.owed_at(), Some(start + REFILL * 3));
        assert!(rate.settle(start + REFILL * 3));
        // A long silence tops the budget up to the burst, no more.
        let later = start + REFILL * 1_000;
        for _ in 0..BURST {
            assert!(rate.spend(later));
        }
        assert!(!rate.spend(later));
    }
}
