//! What a `gavel_events` payload says: the row it names ([`Notice`]) and, where the database
//! carries rows in notifications (an opt-in, off by default: `gavel.notify_rows`, see the
//! migration `V4`), the row itself as its columns' texts, read as strictly as a row read from its
//! table. A payload is untrusted (any role that can connect may send one): what is wrong with it
//! is an error naming the table and key, never a panic.

use serde::Deserialize;
use serde_json::Value;

use super::error::{Error, Result};
use super::tables::{Key, Table};
use crate::domain::limits::clip;
use crate::domain::{Change, Limits};

/// The row a notification names (see the migrations for the payload).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub struct Notice {
    pub table: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub round_index: Option<i32>,
    /// The key did not fit in a payload: read everything since the watermark instead.
    #[serde(default)]
    pub resync: bool,
}

impl Notice {
    /// Reads a `gavel_events` payload (a JSON object; a row it carries is passed over, not
    /// built); the error names what was wrong and where in it.
    pub fn parse(payload: &str) -> Result<Notice> {
        object(payload)
    }

    /// As [`Notice::parse`], with the payload's `row` as sent, if it has one.
    pub fn with_row(payload: &str) -> Result<(Notice, Option<Value>)> {
        /// A payload's row alone.
        #[derive(Deserialize)]
        struct Carrying {
            #[serde(default)]
            row: Option<Value>,
        }
        let notice = Notice::parse(payload)?;
        let carrying: Carrying = object(payload)?;
        Ok((notice, carrying.row))
    }

    /// The row this notice names, as `row` carries it: an array of the texts of the columns
    /// its table's reads select, in their order (`NULL` as `null`), read within `limits` as a
    /// row read from the table is (what cannot be read is kept as an issue of the row). An
    /// error, naming the table and key, when `row` is not such an array or holds another row.
    pub fn carried(&self, row: &Value, limits: &Limits) -> Result<Change> {
        let wrong = |what: String| {
            Error::Payload(format!(
                "{} ({}): row: {what}",
                clip(&self.table),
                self.key()
            ))
        };
        let table = Table::named(&self.table).ok_or_else(|| wrong("no such table".into()))?;
        let texts = row
            .as_array()
            .filter(|texts| texts.len() == table.width())
            .and_then(|texts| {
                texts
                    .iter()
                    .map(|text| match text {
                        Value::String(text) => Some(Some(text.as_str())),
                        Value::Null => Some(None),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                wrong(format!(
                    "expected {} columns, each text or null; found {}",
                    table.width(),
                    clip(&row.to_string())
                ))
            })?;
        let change = (table.from)(&texts, limits);
        if self.names(table, &change) {
            Ok(change)
        } else {
            Err(wrong(format!(
                "holds another row ({})",
                clip(&row.to_string())
            )))
        }
    }

    /// The key as the payload gives it.
    fn key(&self) -> String {
        let session = self.session_id.as_deref().map(clip).unwrap_or_default();
        match (self.id, self.round_index) {
            (Some(id), _) => format!("{session}, id {id}"),
            (None, Some(round)) => format!("{session}, round {round}"),
            (None, None) => session,
        }
    }

    /// Whether `change`, a row of `table`, is the row this notice names.
    fn names(&self, table: &Table, change: &Change) -> bool {
        let id = match change {
            Change::Turn(t) => Some(t.id),
            Change::Judgment(j) => Some(j.id),
            Change::Note(n) => Some(n.id),
            _ => None,
        }
        .and_then(|id| i64::try_from(id).ok());
        let round = match change {
            Change::Decision(d) => Some(d.round_index),
            Change::Action(a) => Some(a.round_index),
            _ => None,
        };
        let same_round = round
            .zip(self.round_index)
            .is_some_and(|(carried, named)| i64::from(carried) == i64::from(named));
        self.session_id.as_deref() == Some(change.session_id())
            && match table.key {
                Key::Debate => true,
                Key::Id => id.is_some() && id == self.id,
                Key::Round => same_round,
            }
    }
}

/// A payload read as `T`, which must be a JSON object (serde would also take an array for a
/// struct).
fn object<'a, T: Deserialize<'a>>(payload: &'a str) -> Result<T> {
    if !payload.trim_start().starts_with('{') {
        return Err(Error::Payload(format!(
            "expected a JSON object, found {}",
            clip(payload)
        )));
    }
    serde_json::from_str(payload).map_err(|e| Error::Payload(e.to_string()))
}
