//! A console that reads a subscriber and writes its primary (`gavel watch --read-from`): where
//! it reads, and how that database stands with the primary, as the feed's presence side reports
//! it (`store::Replica`), for the header to say, so that a stale screen is never a silent one:
//! behind, a subscription stalled, and what the primary keeps for the subscriber (its slot).

use std::time::Duration;

use crate::store::{Link, Replica, Slot, SlotStanding, Subscription};

/// WAL a slot keeps on the primary that is worth an operator's eye, in MiB: a subscriber that
/// far behind fills the primary's disk as long as it stays so.
pub const KEPT_SHOWN_MIB: u64 = 64;

/// Where the console reads, and what it last heard of the replication that feeds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The database read, as the header names it (`host:port/dbname`).
    pub from: String,
    /// How far behind the primary it is, when something measures it.
    pub behind: Option<Duration>,
    /// Its subscriptions as it last reported them (`None` until it has), or why it would not.
    pub subscriptions: Option<Result<Vec<Subscription>, String>>,
    /// The primary, where the console writes.
    pub primary: Link,
    /// The subscriptions' slots on the primary as it last reported them (`None` until it has,
    /// and while it is out of reach), or why it would not.
    pub slots: Option<Result<Vec<Slot>, String>>,
}

/// What the primary says of a subscription's slot that an operator should know (the worst of
/// them): the slot's name, and the WAL it keeps in MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotTrouble<'a> {
    /// The primary would not say (the server's words).
    Unknown(&'a str),
    /// The WAL the slot needed is gone: the subscriber can never catch up, and must be built
    /// again.
    Lost(&'a str),
    /// The primary has no such slot: nothing reaches the subscriber.
    Missing(&'a str),
    /// Past `max_slot_wal_keep_size`: lost at the primary's next checkpoint unless the
    /// subscriber catches up first.
    Unreserved(&'a str, u64),
    /// No WAL sender streams it (its subscriber is not connected): the WAL it keeps grows with
    /// every write on the primary.
    Inactive(&'a str, u64),
    /// Streamed, and keeping at least [`KEPT_SHOWN_MIB`].
    Keeping(&'a str, u64),
}

/// `mib` MiB of WAL as the header says it: `80 MB`, `1.2 GB` (PostgreSQL's units of 1024).
pub fn wal_size(mib: u64) -> String {
    if mib < 1024 {
        format!("{mib} MB")
    } else {
        format!("{:.1} GB", mib as f64 / 1024.0)
    }
}

impl SlotTrouble<'_> {
    /// What `slot` gives an operator to know, if anything, ranked (0 the worst).
    fn of(slot: &Slot) -> Option<(u8, SlotTrouble<'_>)> {
        let name = slot.name.as_str();
        match slot.standing {
            SlotStanding::Lost => Some((0, SlotTrouble::Lost(name))),
            SlotStanding::Missing => Some((1, SlotTrouble::Missing(name))),
            SlotStanding::Held {
                unreserved: true,
                kept_mib,
                ..
            } => Some((2, SlotTrouble::Unreserved(name, kept_mib))),
            SlotStanding::Held {
                active: false,
                kept_mib,
                ..
            } => Some((3, SlotTrouble::Inactive(name, kept_mib))),
            SlotStanding::Held { kept_mib, .. } if kept_mib >= KEPT_SHOWN_MIB => {
                Some((4, SlotTrouble::Keeping(name, kept_mib)))
            }
            SlotStanding::Held { .. } => None,
        }
    }
}

/// Why the database read may be stale, as the subscriptions say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stall<'a> {
    /// The database read would not say (the server's words).
    Unknown(&'a str),
    /// The database read subscribes to nothing: nothing written on the primary arrives.
    Unsubscribed,
    /// The subscription is disabled.
    Disabled(&'a str),
    /// The subscription is enabled and no worker applies it (failing, or starting): its errors
    /// counted, where the server counts them.
    NotApplying(&'a str, Option<i64>),
}

impl Reading {
    /// Reading `from`, nothing heard of it yet.
    pub fn new(from: String) -> Reading {
        Reading {
            from,
            behind: None,
            subscriptions: None,
            primary: Link::Connecting,
            slots: None,
        }
    }

    /// Files what the feed's presence side reported.
    pub fn apply(&mut self, replica: Replica) {
        match replica {
            Replica::Behind(behind) => self.behind = behind,
            Replica::Subscriptions(subscriptions) => self.subscriptions = Some(subscriptions),
            Replica::Primary(link) => {
                // Out of reach, the primary says nothing of its slots.
                if link != Link::Live {
                    self.slots = None;
                }
                self.primary = link;
            }
            Replica::Slots(slots) => self.slots = Some(slots),
        }
    }

    /// What the primary says of the subscriptions' slots that an operator should know: the
    /// worst of them (lost, missing, about to be lost, inactive, keeping much WAL).
    pub fn slot_trouble(&self) -> Option<SlotTrouble<'_>> {
        let slots = match self.slots.as_ref()? {
            Err(why) => return Some(SlotTrouble::Unknown(why)),
            Ok(slots) => slots,
        };
        slots
            .iter()
            .filter_map(SlotTrouble::of)
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, trouble)| trouble)
    }

    /// Whether the subscriber has several slots, which the header then names.
    pub fn several_slots(&self) -> bool {
        matches!(&self.slots, Some(Ok(slots)) if slots.len() > 1)
    }

    /// What stops rows from arriving, as the subscriptions last said (the first such one).
    pub fn stall(&self) -> Option<Stall<'_>> {
        match self.subscriptions.as_ref()? {
            Err(why) => Some(Stall::Unknown(why)),
            Ok(subscriptions) if subscriptions.is_empty() => Some(Stall::Unsubscribed),
            Ok(subscriptions) => subscriptions.iter().find_map(|s| {
                if !s.enabled {
                    Some(Stall::Disabled(&s.name))
                } else if !s.applying {
                    Some(Stall::NotApplying(&s.name, s.errors))
                } else {
                    None
                }
            }),
        }
    }

    /// How far behind the primary, once that passes a second (while the primary answers:
    /// nothing measures it otherwise).
    pub fn lagging(&self) -> Option<Duration> {
        self.behind
            .filter(|b| *b >= Duration::from_secs(1) && self.primary == Link::Live)
    }
}
