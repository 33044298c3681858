//! The contract's five tables and gavel's notes as gavel reads them, a descriptor each: the name, the columns read
//! (as text, read leniently by `rows`), how a notification names a row, the order a debate's
//! rows are read in, whether a list of debates needs them or only an opened one, and where the
//! audit trail finds a ruling's time and stored values. Every read in `queries` (the start
//! window, a search, a debate's history, a batch of notifications, everything since a
//! watermark, the finished debates, the audit trail) is built from these descriptors.

use tokio_postgres::Row;

use super::rows::{
    self, ACTION_COLUMNS, Columns, DECISION_COLUMNS, JUDGMENT_COLUMNS, NOTE_COLUMNS,
    SESSION_COLUMNS, TURN_COLUMNS,
};
use crate::domain::{Change, Limits, Stored};

/// How a notification names a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    /// By the debate's id (`id`).
    Debate,
    /// By the row's own `id`.
    Id,
    /// By its debate and round (`session_id`, `round_index`).
    Round,
}

/// Where the audit trail finds what a ruling's row holds as stored.
#[derive(Debug)]
pub(crate) struct Audit {
    /// The column of when the row was written.
    pub written_at: &'static str,
    /// The positions, among the columns read, of its round (none for a note) and of its
    /// `signal_json` if any.
    pub round: Option<usize>,
    pub signals: Option<usize>,
}

/// One table.
#[derive(Debug)]
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static str,
    pub key: Key,
    /// The columns a debate's rows are ordered by (none: any order).
    pub order: &'static [&'static str],
    /// The rows a list's summary needs, read for every debate a window or a search loads (a
    /// condition on the table's columns: `TRUE` for every row); `None`: read only for the
    /// debates running or opened.
    pub listed: Option<&'static str>,
    /// Reads a row from its columns as text (see [`Table::read`]).
    pub from: fn(&Columns<'_>, &Limits) -> Change,
    /// For the rulings: what the audit trail keeps.
    pub audit: Option<Audit>,
}

impl Table {
    /// The table named `name`.
    pub(super) fn named(name: &str) -> Option<&'static Table> {
        ALL.into_iter().find(|table| table.name == name)
    }

    /// How many columns are read (each `columns` entry ends `::text`).
    pub(super) fn width(&self) -> usize {
        self.columns.matches("::text").count()
    }

    /// A row of this table as read by [`Table::select`], leniently (see `rows`).
    pub(super) fn read(&self, row: &Row, limits: &Limits) -> Change {
        (self.from)(&rows::texts(row), limits)
    }

    /// Reads this table's columns of the rows matching `filter`, in the table's order.
    pub(super) fn select(&self, filter: &str) -> String {
        self.select_ordered(filter, self.order)
    }

    /// Reads this table's columns of the rows matching `filter`, ordered by the columns `order`
    /// (ascending; none: any order). Each is qualified with the table's name: most columns are
    /// read cast to text under their own names, and an `ORDER BY` column left unqualified names
    /// the text read, which sorts round 10 before round 9.
    pub(crate) fn select_ordered(&self, filter: &str, order: &[&str]) -> String {
        let (name, columns) = (self.name, self.columns);
        let select = format!("SELECT {columns} FROM {name} WHERE {filter}");
        if order.is_empty() {
            return select;
        }
        let order: Vec<String> = order.iter().map(|c| format!("{name}.{c}")).collect();
        format!("{select} ORDER BY {}", order.join(", "))
    }

    /// A ruling's row as the audit trail keeps it; `None` for the other tables.
    pub(super) fn stored(&self, row: &Row, limits: &Limits) -> Option<Stored> {
        let audit = self.audit.as_ref()?;
        Some(rows::stored(
            self.read(row, limits),
            row,
            audit.round,
            audit.signals,
        ))
    }
}

pub(super) const SESSIONS: Table = Table {
    name: "debate_sessions",
    columns: SESSION_COLUMNS,
    key: Key::Debate,
    order: &[],
    listed: Some("TRUE"),
    from: session,
    audit: None,
};

pub(super) const TURNS: Table = Table {
    name: "debate_rounds",
    columns: TURN_COLUMNS,
    key: Key::Id,
    order: &["id"],
    listed: None,
    from: turn,
    audit: None,
};

pub(crate) const DECISIONS: Table = Table {
    name: "debate_round_decisions",
    columns: DECISION_COLUMNS,
    key: Key::Round,
    order: &[],
    listed: Some("TRUE"),
    from: decision,
    audit: Some(Audit {
        written_at: "decided_at",
        round: Some(1),
        signals: Some(3),
    }),
};

pub(crate) const JUDGMENTS: Table = Table {
    name: "debate_round_judgments",
    columns: JUDGMENT_COLUMNS,
    key: Key::Id,
    order: &["id"],
    // A judge's abort ends a debate: the list says so of a finished one whose turns it never
    // loaded.
    listed: Some("decision IN ('abort', 'abort_debate')"),
    from: judgment,
    audit: Some(Audit {
        written_at: "created_at",
        round: Some(2),
        signals: None,
    }),
};

pub(crate) const ACTIONS: Table = Table {
    name: "debate_operator_actions",
    columns: ACTION_COLUMNS,
    key: Key::Round,
    order: &[],
    listed: Some("TRUE"),
    from: action,
    audit: Some(Audit {
        written_at: "created_at",
        round: Some(1),
        signals: None,
    }),
};

/// gavel's own table of the notes pinned to debates (not the contract's).
pub(crate) const NOTES: Table = Table {
    name: "gavel_debate_notes",
    columns: NOTE_COLUMNS,
    key: Key::Id,
    order: &["id"],
    // The list marks a debate that has notes.
    listed: Some("TRUE"),
    from: note,
    audit: Some(Audit {
        written_at: "created_at",
        round: None,
        signals: None,
    }),
};

/// Every table, the sessions first (a debate's session row comes before its other rows).
pub(super) const ALL: [&Table; 6] = [&SESSIONS, &TURNS, &DECISIONS, &JUDGMENTS, &ACTIONS, &NOTES];
/// The tables of a debate's rows besides its session: its rounds' and its notes.
pub(super) const ROUNDS: [&Table; 5] = [&TURNS, &DECISIONS, &JUDGMENTS, &ACTIONS, &NOTES];
/// The tables of what was ruled on the rounds: decisions, judgments, operator actions.
pub(crate) const RULINGS: [&Table; 3] = [&DECISIONS, &JUDGMENTS, &ACTIONS];
/// The tables of the audit trail an export writes: the rulings and the notes.
pub(crate) const AUDITED: [&Table; 4] = [&DECISIONS, &JUDGMENTS, &ACTIONS, &NOTES];

fn session(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Session(rows::session_from(columns, limits))
}
fn turn(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Turn(rows::turn_from(columns, limits))
}
fn decision(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Decision(rows::decision_from(columns, limits))
}
fn judgment(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Judgment(rows::judgment_from(columns, limits))
}
fn action(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Action(rows::action_from(columns, limits))
}
fn note(columns: &Columns<'_>, limits: &Limits) -> Change {
    Change::Note(rows::note_from(columns, limits))
}
