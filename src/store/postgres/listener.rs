//! The live feed: a dedicated connection that LISTENs on `gavel_events` and turns what changed
//! into [`Event`]s (and hears presence on `gavel_presence` for `presence`, see
//! `notifications::Beside`, and new settings versions on `gavel_settings`). Its messages are driven through `poll_message` on a task of their
//! own, so notifications are never dropped and the console never awaits the database.
//!
//! It reads whichever database the console reads: the one it writes, or a subscriber of it
//! (`Sides`), where the rows applied are stamped and notified as on the primary.
//!
//! On every (re)connect: LISTEN, tell the console whether its role may record actions and pin
//! notes (where it writes this database too), read the controller settings' history (read again whenever a version is published),
//! then load what changed since the watermark (everything in the start window on the first
//! connect), then consume notifications: a row a notification carries (where the database
//! carries rows, an opt-in: see `payload`) goes to the console at once; the rows the others
//! name are fetched in batches, a batch at most every [`pace::READ`] on average (see
//! [`Pace`]): a row that lands alone is read at once, a stream's rows are read together,
//! instead of a round trip each. Rows are keyed, so a row read twice is filed once. A keepalive
//! query with a timeout finds a dead connection; reconnection backs off up to 10 s.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio_postgres::Client;

use super::access::access;
use super::connect::{Target, retry_in};
use super::error::{Error, Result, answered};
use super::notifications::{Beside, Notifications};
use super::payload::Notice;
use super::queries::{self, Named, Watermark};
use super::settings::{self, SETTINGS_CHANNEL};
use crate::domain::{Change, Limits};
use crate::pace::{self, Pace};
use crate::store::{Feed, Link};

/// Debates loaded at start besides the running ones: the most recent this many.
pub const START_WINDOW: i64 = 200;
/// How often the feed checks its connection, moves its watermark on and looks at the tables'
/// sizes for the reads' plans.
pub const KEEPALIVE: Duration = Duration::from_secs(5);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(3);
/// Notifications whose rows are read in one round trip, at most.
const BATCH: usize = 2_000;
/// New settings versions heard and not yet read: one read takes them all in, so a few are
/// plenty.
const PUBLISHED: usize = 8;

/// What the console asks the feed to read besides what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Every row of this debate.
    History(String),
    /// The debates a filter finds (see `queries::search`).
    Search(String),
}

/// Feeds `events` until the console is gone. `wanted` carries what else the console wants
/// read; rows are read within `limits`. What presence hears goes to `presence`. `writes_here`:
/// the console writes this database too, and is told what its role may write on every connect,
/// before the feed is live (reading a subscriber, it is told by its connection to the primary:
/// see `heartbeat`).
pub async fn listen<E: From<Feed>>(
    target: Target,
    events: UnboundedSender<E>,
    mut wanted: UnboundedReceiver<Wanted>,
    limits: Limits,
    presence: Beside,
    writes_here: bool,
) {
    let reading = Reading {
        limits: &limits,
        writes_here,
    };
    let mut watermark: Option<Watermark> = None;
    let mut failures: u32 = 0;
    loop {
        if events.send(Feed::Link(Link::Connecting).into()).is_err() {
            return;
        }
        match follow(
            &target,
            &mut watermark,
            &events,
            &mut wanted,
            &mut failures,
            &reading,
            &presence,
        )
        .await
        {
            Ok(()) | Err(Error::ConsoleGone) => return,
            Err(e) => {
                failures += 1;
                let wait = retry_in(failures);
                tracing::warn!("database feed lost: {e}; retrying in {wait:?}");
                let down = Link::Down {
                    error: e.to_string(),
                    retry_in: wait,
                };
                if events.send(Feed::Link(down).into()).is_err() {
                    return;
                }
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// How a feed reads: rows within `limits`, and whether it tells the console what its role may
/// write (`writes_here`, see [`listen`]).
struct Reading<'a> {
    limits: &'a Limits,
    writes_here: bool,
}

/// One connection's life. `Ok` when the console stopped asking, [`Error::ConsoleGone`] when it is
/// gone, another `Err` when the connection is.
async fn follow<E: From<Feed>>(
    target: &Target,
    watermark: &mut Option<Watermark>,
    events: &UnboundedSender<E>,
    wanted: &mut UnboundedReceiver<Wanted>,
    failures: &mut u32,
    reading: &Reading<'_>,
    presence: &Beside,
) -> Result<()> {
    let limits = reading.limits;
    let (heard, mut published) = mpsc::channel(PUBLISHED);
    let settings_channel = Beside {
        channel: SETTINGS_CHANNEL,
        queue: heard,
    };
    let mut listening =
        Notifications::open(target, vec![presence.clone(), settings_channel]).await?;
    let (client, notes) = (&mut listening.client, &mut listening.payloads);
    // The feed's reads keep their plans where that is safe (see `plans`); PostgreSQL plans every
    // other statement for its parameters, as a statement run once always is.
    if let Err(e) = client.batch_execute("SET plan_cache_mode = auto").await {
        tracing::debug!("keeping the default plan cache mode: {e}");
    }
    let mut named = Named::prepare(client).await?;
    look_at_plans(&mut named, client).await?;
    if reading.writes_here {
        let access = access(client).await?;
        events
            .send(Feed::Access(access).into())
            .map_err(|_| Error::ConsoleGone)?;
    }
    forward_settings(client, events).await?;
    let (rows, mark) = match *watermark {
        None => queries::initial(client, START_WINDOW, limits).await?,
        Some(since) => queries::changed_since(client, since, limits).await?,
    };
    *watermark = Some(mark);
    forward(events, rows)?;
    events
        .send(Feed::Link(Link::Live).into())
        .map_err(|_| Error::ConsoleGone)?;
    *failures = 0;

    let carrying = carrying(client).await;
    let mut keepalive = tokio::time::interval(KEEPALIVE);
    let mut previous_mark = mark;
    let mut reads = Pace::new(pace::READ, Instant::now());
    let mut named_rows = Unread::default();
    loop {
        // A read already due goes out at once, without a round of the select and a timer: a
        // row that lands alone after a quiet spell is read as its notification is taken.
        let now = Instant::now();
        if named_rows.waiting() && reads.next() <= now {
            reads.went(now);
            let since = watermark.unwrap_or(previous_mark);
            let (rows, mark) = named_rows.read(client, &mut named, since, limits).await?;
            *watermark = mark.or(*watermark);
            forward(events, rows)?;
            continue;
        }
        tokio::select! {
            note = notes.recv() => {
                let first = note.ok_or(Error::Closed)?;
                let carried = named_rows.take(first, notes, carrying, limits);
                forward(events, carried)?;
            }
            // The read is due later: the loop reads once it is.
            _ = tokio::time::sleep_until(reads.next().into()), if named_rows.waiting() => {}
            Some(_) = published.recv() => {
                while published.try_recv().is_ok() {}
                forward_settings(client, events).await?;
            }
            _ = keepalive.tick() => {
                let mark =
                    answered("the keepalive", KEEPALIVE_TIMEOUT, queries::watermark(&*client))
                        .await??;
                // Advance by one interval behind: the notifications of transactions that
                // ended before the previous tick have arrived and been handled by now.
                *watermark = Some(previous_mark);
                previous_mark = mark;
                look_at_plans(&mut named, client).await?;
            }
            want = wanted.recv() => match want {
                Some(Wanted::History(id)) => {
                    let rows = queries::history(client, &id, limits).await?;
                    let found = !rows.is_empty();
                    forward(events, rows)?;
                    events
                        .send(Feed::History { id, found }.into())
                        .map_err(|_| Error::ConsoleGone)?;
                }
                Some(Wanted::Search(text)) => {
                    forward(events, queries::search(client, &text, limits).await?)?;
                }
                None => return Ok(()),
            },
        }
    }
}

/// Looks at which of the feed's reads may keep their plans (see `plans`): one that fails
/// leaves the reads as they were, a server that does not answer is a connection gone.
async fn look_at_plans(named: &mut Named, client: &mut tokio_postgres::Client) -> Result<()> {
    let looked = answered(
        "the look at the reads' plans",
        KEEPALIVE_TIMEOUT,
        named.look_at_plans(client),
    )
    .await?;
    if let Err(e) = looked {
        tracing::debug!("the feed's reads keep the plans they had: {e}");
    }
    Ok(())
}

/// Whether the database carries rows in notifications (`gavel.notify_rows`, the opt-in the
/// migration's `gavel_notify_rows()` reads, as this connection sees it). Unless it does, a
/// payload's row is never taken: any role that can connect can send one.
async fn carrying(client: &tokio_postgres::Client) -> bool {
    match client.query_one("SELECT gavel_notify_rows()", &[]).await {
        Ok(row) => row.try_get::<_, bool>(0).unwrap_or(false),
        Err(e) => {
            tracing::debug!("rows in notifications are off: {e}");
            false
        }
    }
}

/// The rows notifications named that wait for the next read, and whether one asked for a
/// resync.
#[derive(Default)]
struct Unread {
    notices: BTreeSet<Notice>,
    resync: bool,
}

impl Unread {
    /// Takes `first` and the notifications queued behind it (at most [`BATCH`]): the rows they
    /// carry, when `carrying`, in the order they came; the others wait to be read. A carried row
    /// that cannot be taken is read instead.
    fn take(
        &mut self,
        first: String,
        notes: &mut UnboundedReceiver<String>,
        carrying: bool,
        limits: &Limits,
    ) -> Vec<Change> {
        let mut carried = Vec::new();
        let queued = std::iter::from_fn(|| notes.try_recv().ok()).take(BATCH - 1);
        for payload in std::iter::once(first).chain(queued) {
            // A row carried where rows are not is never built: any role may send one.
            let read = if carrying {
                Notice::with_row(&payload)
            } else {
                Notice::parse(&payload).map(|notice| (notice, None))
            };
            match read {
                Ok((notice, _)) if notice.resync => self.resync = true,
                Ok((notice, Some(row))) => match notice.carried(&row, limits) {
                    Ok(change) => carried.push(change),
                    Err(e) => {
                        tracing::warn!("reading the row instead: {e}");
                        self.notices.insert(notice);
                    }
                },
                Ok((notice, _)) => {
                    self.notices.insert(notice);
                }
                Err(e) => tracing::warn!("ignoring a notification: {e}: {payload:.200}"),
            }
        }
        carried
    }

    /// Reads what waits: everything changed `since` (a watermark) where a notification asked
    /// for a resync, with the watermark it reaches, else the next batch of rows named.
    async fn read(
        &mut self,
        client: &mut Client,
        named: &mut Named,
        since: Watermark,
        limits: &Limits,
    ) -> Result<(Vec<Change>, Option<Watermark>)> {
        if std::mem::take(&mut self.resync) {
            self.notices.clear();
            let (rows, mark) = queries::changed_since(client, since, limits).await?;
            return Ok((rows, Some(mark)));
        }
        let batch = self.batch();
        Ok((named.read(&*client, &batch, limits).await?, None))
    }

    /// Rows wait to be read.
    fn waiting(&self) -> bool {
        self.resync || !self.notices.is_empty()
    }

    /// The next batch to read: at most [`BATCH`], so that a console far behind holds few rows
    /// at once.
    fn batch(&mut self) -> BTreeSet<Notice> {
        match self.notices.iter().nth(BATCH).cloned() {
            Some(beyond) => {
                let rest = self.notices.split_off(&beyond);
                std::mem::replace(&mut self.notices, rest)
            }
            None => std::mem::take(&mut self.notices),
        }
    }
}

/// Reads the settings history and hands it to the console. A refusal (a role granted before
/// the history existed may not read it) is handed on as the database's reason; a failed
/// connection is the feed's failure.
async fn forward_settings<E: From<Feed>>(
    client: &Client,
    events: &UnboundedSender<E>,
) -> Result<()> {
    let history = match settings::settings_history(client, None).await {
        Ok(history) => Ok(history),
        Err(e) if e.database().and_then(|d| d.as_db_error()).is_some() => {
            tracing::warn!("{e}");
            Err(e.to_string())
        }
        Err(e) => return Err(e),
    };
    events
        .send(Feed::Settings(history).into())
        .map_err(|_| Error::ConsoleGone)
}

fn forward<E: From<Feed>>(events: &UnboundedSender<E>, rows: Vec<Change>) -> Result<()> {
    for row in rows {
        events
            .send(Feed::Row(Box::new(row)).into())
            .map_err(|_| Error::ConsoleGone)?;
    }
    Ok(())
}
