//! Where debate rows live: [`MemoryStore`], the embedded backend behind the demo, and
//! [`postgres`], the database an orchestrator writes. Either way rows reach the console as
//! [`crate::domain::Change`]s and operator actions are recorded exactly once.

mod memory;
pub mod postgres;

pub use memory::MemoryStore;

use std::time::Duration;

use crate::domain::{Access, Change, DebateNote, OperatorAction, Peer, SettingsVersion};

/// What a backend's feed says, in the store's own terms (the console turns it into its events):
/// a row, and for a database the connection's state, what its role may do, and the answer to a
/// debate's history asked for.
#[derive(Debug, Clone)]
pub enum Feed {
    /// A row landed.
    Row(Box<Change>),
    /// The connection to the database changed state.
    Link(Link),
    /// What the database lets this role do, checked on every connect.
    Access(Access),
    /// The other consoles on the database now (empty while presence is down).
    Presence(Vec<Peer>),
    /// Every row of debate `id`, asked for, was sent (before this); `found`: the database
    /// has the debate.
    History { id: String, found: bool },
    /// The controller settings' history as the database has it now (the newest
    /// [`postgres::MAX_HISTORY`] versions, oldest first), read on every connect and again when
    /// a version is published; or why the database would not give it.
    Settings(Result<Vec<SettingsVersion>, String>),
    /// How the database read stands with the primary, for a console that reads a subscriber
    /// and writes the primary (`postgres::Sides`).
    Replica(Replica),
}

/// What a console reading a subscriber learns of its replication, each part as it changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Replica {
    /// How far the database read is behind the primary, as this console's own heartbeats
    /// measure it (written on the primary, read back on the subscriber, both timed on this
    /// console's clock); `None` while nothing measures it (the primary is out of reach).
    Behind(Option<Duration>),
    /// The subscriptions of the database read, as it reports them.
    Subscriptions(Result<Vec<Subscription>, String>),
    /// The primary, where actions, notes, claims and settings are written.
    Primary(Link),
    /// The replication slots of those subscriptions on the primary, as the primary reports them
    /// (what it keeps for each subscriber), or why it would not say.
    Slots(Result<Vec<Slot>, String>),
}

/// A subscription of the database a console reads, as that database reports it
/// (`pg_subscription`, `pg_stat_subscription`, `pg_stat_subscription_stats`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub name: String,
    /// `ALTER SUBSCRIPTION ... ENABLE` has it applying; disabled, nothing arrives.
    pub enabled: bool,
    /// Its apply worker runs now (an enabled subscription without one is failing, or starting).
    pub applying: bool,
    /// Errors its apply and table synchronisation workers met since its statistics were reset
    /// (`None` where the server does not count them: before PostgreSQL 15).
    pub errors: Option<i64>,
    /// The name of its replication slot on the primary (`None`: it has none, `slot_name =
    /// NONE`).
    pub slot: Option<String>,
}

/// A subscription's replication slot on the primary, as the primary reports it
/// (`pg_replication_slots`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub standing: SlotStanding,
}

/// How a replication slot stands on the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotStanding {
    /// The primary has no slot of that name: dropped there, or the subscriber subscribes to
    /// another server than the one the console writes.
    Missing,
    /// The WAL the slot needed was removed (`wal_status = 'lost'`, past
    /// `max_slot_wal_keep_size`): its subscriber can never catch up.
    Lost,
    /// The slot holds WAL for its subscriber.
    Held {
        /// A WAL sender streams it now (its subscriber is connected).
        active: bool,
        /// WAL the primary keeps for it, in whole MiB: from its `restart_lsn` to the primary's
        /// current position.
        kept_mib: u64,
        /// It keeps more than `max_slot_wal_keep_size` allows (`wal_status = 'unreserved'`):
        /// lost at the next checkpoint unless its subscriber catches up first.
        unreserved: bool,
    },
}

/// The state of the connection to a live database.
#[derive(Debug, Clone, PartialEq)]
pub enum Link {
    Connecting,
    Live,
    Down { error: String, retry_in: Duration },
}

/// Why an operator action was not recorded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    /// Lost a race: the decision was already resolved, by this action.
    #[error(
        "round {} of {} was already resolved by {}: {} -> {}",
        .0.round_index, .0.session_id, .0.who(), .0.action, .0.decision
    )]
    AlreadyResolved(Box<OperatorAction>),
    /// Refused, and asking again will not change that: the decision is no longer open, or the
    /// database refused the write (no INSERT privilege, ...). Nothing was recorded.
    #[error("not recorded: {} {} on {} round {}: {reason}", action.action, action.decision, action.session_id, action.round_index)]
    Refused {
        action: Box<OperatorAction>,
        reason: String,
    },
    /// The write failed (the connection is down, ...); nothing was recorded.
    #[error("could not record {} {} on {} round {}: {error}", action.action, action.decision, action.session_id, action.round_index)]
    Failed {
        action: Box<OperatorAction>,
        error: String,
    },
}

impl ResolveError {
    /// A refusal of `action`, for `reason`.
    pub fn refused(action: &OperatorAction, reason: impl std::fmt::Display) -> ResolveError {
        ResolveError::Refused {
            action: Box::new(action.clone()),
            reason: reason.to_string(),
        }
    }
}

/// Why a note was not pinned: nothing was written, and the note is handed back so that it is
/// not lost.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("note on {} not pinned: {reason}", .note.session_id)]
pub struct NoteFailed {
    pub note: Box<DebateNote>,
    pub reason: String,
}
