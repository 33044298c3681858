//! Notes pinned to debates (`gavel_debate_notes`, added by migration V3): written once, never
//! changed, the writing role stamped by the database. A role without INSERT on the table (a
//! viewer) is refused by the database itself, whatever the console lets it try.

use tokio_postgres::Client;

use super::actions::refusal;
use super::error::{Doing, Result};
use super::rows::{self, NOTE_COLUMNS};
use crate::domain::{DebateNote, Limits};

/// The columns gavel inserts, which a role needs INSERT on to pin notes.
pub(super) const INSERTED: [&str; 3] = ["session_id", "operator", "note"];

/// Pins `note`: `Ok(Ok(row))` as written, `Ok(Err(why))` when the database refused it (no
/// privilege, too long, ...: asking again cannot help), `Err` when the connection failed.
pub async fn pin(
    client: &Client,
    note: &DebateNote,
) -> Result<std::result::Result<DebateNote, String>> {
    let written = client
        .query_one(
            &format!(
                "INSERT INTO gavel_debate_notes ({}) VALUES ($1, $2, $3) RETURNING {NOTE_COLUMNS}",
                INSERTED.join(", ")
            ),
            &[&note.session_id, &note.operator, &note.text],
        )
        .await
        .doing("pinning the note");
    match written {
        Ok(row) => Ok(Ok(rows::note(&row, &Limits::WIDEST))),
        Err(e) => match refusal(&e) {
            Some(why) => Ok(Err(why)),
            None => Err(e),
        },
    }
}
