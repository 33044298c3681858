//! Where a console reads and where it writes: one database for both, or a subscriber read (its
//! feed, catch-up, histories, searches, presence heard) and its primary written (actions,
//! notes, settings, presence said, and the role's rights asked), as `gavel watch --db PRIMARY
//! --read-from SUBSCRIBER` asks.

use super::connect::Target;

/// The databases a console reads and writes.
#[derive(Debug, Clone)]
pub struct Sides {
    write: Target,
    read: Option<Target>,
}

impl Sides {
    /// One database, read and written.
    pub fn one(target: Target) -> Sides {
        Sides {
            write: target,
            read: None,
        }
    }

    /// `read` read (a subscriber), `write` written (its primary).
    pub fn split(write: Target, read: Target) -> Sides {
        Sides {
            write,
            read: Some(read),
        }
    }

    /// Where actions, notes, settings and presence are written.
    pub fn write(&self) -> &Target {
        &self.write
    }

    /// Where the feed, histories, searches and presence are read.
    pub fn read(&self) -> &Target {
        self.read.as_ref().unwrap_or(&self.write)
    }

    /// Whether reads go to another database than writes.
    pub fn reads_elsewhere(&self) -> bool {
        self.read.is_some()
    }
}
