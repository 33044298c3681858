//! A console that reads a subscriber and writes its primary (`gavel watch --read-from`): where
//! it reads, and how that database stands with the primary, as the feed's presence side reports
//! it (`store::Replica`), for the header to say, so that a stale screen is never a silent one.

use std::time::Duration;

use crate::store::{Link, Replica, Subscription};

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
        }
    }

    /// Files what the feed's presence side reported.
    pub fn apply(&mut self, replica: Replica) {
        match replica {
            Replica::Behind(behind) => self.behind = behind,
            Replica::Subscriptions(subscriptions) => self.subscriptions = Some(subscriptions),
            Replica::Primary(link) => self.primary = link,
        }
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
