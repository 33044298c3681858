//! Presence: who else watches the same database, and what they look at. Ephemeral: one row a
//! console, kept while it is here. What a console says of itself ([`Status`]) is untrusted
//! text when it comes from another console: [`Status::parse`] bounds it; the role shown
//! ([`Peer::role`]) is the database's word for who sent it, never the message's.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The longest presence message read from another console, in bytes; longer ones are dropped.
pub const MAX_STATUS_BYTES: usize = 1_024;
/// The longest operator name and debate id kept from another console, in characters.
pub const MAX_STATUS_CHARS: usize = 64;
/// Other consoles kept at most; more are not shown.
pub const MAX_PEERS: usize = 256;

/// A waiting decision a console has a confirmation open on: advice to the others ("alice
/// deciding"), said again with every heartbeat while the dialog stays open. The database's
/// exactly-once rule for actions still decides every race.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub session_id: String,
    pub round: u32,
}

/// What a console says of itself, once per heartbeat and at once when its claim changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The display name the operator gave (`--operator`).
    pub operator: String,
    /// The debate selected, if any.
    #[serde(default)]
    pub looking: Option<String>,
    /// The decision it is deciding, if any.
    #[serde(default)]
    pub claim: Option<Claim>,
    /// The debate type whose settings rollout it has a publish, promote or roll back open on
    /// (advice, as a claim is: the database numbers each version once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editing: Option<String>,
}

impl Status {
    /// Reads another console's message: `None` when it is too long or not a status; its texts
    /// cut to [`MAX_STATUS_CHARS`] (the screen escapes them when it shows them).
    pub fn parse(payload: &str) -> Option<Status> {
        if payload.len() > MAX_STATUS_BYTES {
            return None;
        }
        let status: Status = serde_json::from_str(payload).ok()?;
        let cut = |text: &str| text.chars().take(MAX_STATUS_CHARS).collect::<String>();
        Some(Status {
            operator: cut(&status.operator),
            looking: status.looking.as_deref().map(cut),
            claim: status.claim.map(|c| Claim {
                session_id: cut(&c.session_id),
                round: c.round,
            }),
            editing: status.editing.as_deref().map(cut),
        })
    }

    /// What this console says of itself, within the bounds the others read it in (see
    /// [`Status::parse`]): its texts cut to [`MAX_STATUS_CHARS`], and shorter still while the
    /// whole would pass [`MAX_STATUS_BYTES`] (texts of escaped characters).
    pub fn to_payload(&self) -> String {
        let mut chars = MAX_STATUS_CHARS;
        loop {
            let cut = |text: &str| text.chars().take(chars).collect::<String>();
            let bounded = Status {
                operator: cut(&self.operator),
                looking: self.looking.as_deref().map(cut),
                claim: self.claim.as_ref().map(|c| Claim {
                    session_id: cut(&c.session_id),
                    round: c.round,
                }),
                editing: self.editing.as_deref().map(cut),
            };
            let payload = serde_json::to_string(&bounded).unwrap_or_default();
            if payload.len() <= MAX_STATUS_BYTES || chars == 0 {
                return payload;
            }
            chars /= 2;
        }
    }
}

/// Another console, as the database vouches for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its key: the presence row it writes.
    pub console: i64,
    /// The database role that writes its row, as the database stamped it: who it really is.
    pub role: String,
    /// What it says of itself (untrusted, bounded).
    pub status: Status,
    /// Since when it is here: its row's first write, as the database stamped it.
    pub since: Option<DateTime<Utc>>,
    /// When its current claim was first heard.
    pub claimed_at: Option<DateTime<Utc>>,
}

impl Peer {
    /// Whether it claims round `round` of debate `session_id`.
    pub fn claims(&self, session_id: &str, round: u32) -> bool {
        self.status
            .claim
            .as_ref()
            .is_some_and(|c| c.session_id == session_id && c.round == round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_from_another_console_is_bounded() {
        let long = "a".repeat(500);
        let editing = "b".repeat(100);
        let payload =
            format!(r#"{{"operator": "{long}", "looking": "s1", "editing": "{editing}"}}"#);
        let status = Status::parse(&payload).unwrap();
        assert_eq!(status.operator.chars().count(), MAX_STATUS_CHARS);
        assert_eq!(status.looking.as_deref(), Some("s1"));
        assert_eq!(
            status.editing.map(|t| t.chars().count()),
            Some(MAX_STATUS_CHARS)
        );
        let huge = format!(r#"{{"operator": "{}"}}"#, "a".repeat(MAX_STATUS_BYTES));
        assert_eq!(Status::parse(&huge), None);
        assert_eq!(Status::parse("[1, 2]"), None);
        assert_eq!(Status::parse(r#"{"looking": "s"}"#), None);
    }

    #[test]
    fn what_a_console_says_of_itself_is_within_what_the_others_read() {
        let escaped = "\u{1}".repeat(200);
        let status = Status {
            operator: escaped.clone(),
            looking: Some(escaped.clone()),
            claim: Some(Claim {
                session_id: escaped.clone(),
                round: 3,
            }),
            editing: Some("é".repeat(300)),
        };
        let payload = status.to_payload();
        assert!(payload.len() <= MAX_STATUS_BYTES, "{}", payload.len());
        let read = Status::parse(&payload).expect("read back");
        assert_eq!(read.claim.map(|c| c.round), Some(3));
        assert!(!read.operator.is_empty());
        let plain = Status {
            operator: "alice".into(),
            ..Status::default()
        };
        assert_eq!(Status::parse(&plain.to_payload()), Some(plain));
    }
}
