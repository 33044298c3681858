//! `gavel_debate_notes`: a short note an operator pins to a debate without taking an action
//! ("the skeptic keeps citing retracted papers; I'm on it"), for whoever watches it next.
//! Append-only like the operator actions; the database stamps the role that wrote it.

use chrono::{DateTime, Utc};

use super::action::who;

/// The longest note, in characters (the table refuses longer ones too).
pub const MAX_NOTE: usize = 500;
/// The notes a debate keeps in memory at most: the latest ones.
pub const KEPT_NOTES: usize = 50;

/// Why a draft cannot be written as a note.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    /// Nothing but white space.
    #[error("the note is empty")]
    Empty,
    /// Longer than [`MAX_NOTE`] characters.
    #[error("the note is {chars} characters long, at most {MAX_NOTE} are kept")]
    TooLong { chars: usize },
}

/// One note on a debate.
#[derive(Debug, Clone, PartialEq)]
pub struct DebateNote {
    /// The row's id (0 for a note not yet written); notes are shown in id order.
    pub id: u64,
    pub session_id: String,
    /// The display name the client gave (`--operator`): free text.
    pub operator: String,
    /// The database role that wrote the row (`operator_role`, stamped by the database); `None`
    /// where no database vouches for it (the demo).
    pub role: Option<String>,
    /// The note as written: untrusted text, shown through the console's escaping.
    pub text: String,
    pub created_at: Option<DateTime<Utc>>,
    /// What was wrong with the row as read.
    pub issues: Vec<String>,
}

impl DebateNote {
    /// A note to write: `text` trimmed; `Err` says why it cannot be written (empty, too long).
    pub fn draft(session_id: &str, operator: &str, text: &str) -> Result<DebateNote, DraftError> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 {
            return Err(DraftError::Empty);
        }
        if chars > MAX_NOTE {
            return Err(DraftError::TooLong { chars });
        }
        Ok(DebateNote {
            id: 0,
            session_id: session_id.to_owned(),
            operator: operator.to_owned(),
            role: None,
            text: text.to_owned(),
            created_at: None,
            issues: Vec::new(),
        })
    }

    /// Who wrote it, as shown: the display name, and the database role when it differs.
    pub fn who(&self) -> String {
        who(&self.operator, self.role.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_is_trimmed_and_bounded() {
        let note = DebateNote::draft("s1", "alice", "  on it  ").unwrap();
        assert_eq!(note.text, "on it");
        assert_eq!(
            DebateNote::draft("s1", "alice", "   ").unwrap_err(),
            DraftError::Empty
        );
        let long = "x".repeat(MAX_NOTE + 1);
        assert_eq!(
            DebateNote::draft("s1", "alice", &long)
                .unwrap_err()
                .to_string(),
            "the note is 501 characters long, at most 500 are kept"
        );
        assert!(DebateNote::draft("s1", "alice", &"é".repeat(MAX_NOTE)).is_ok());
    }
}
