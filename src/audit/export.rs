//! `gavel export`: decisions, judgments, operator actions and notes of a time range, one row per line,
//! as CSV (one flat table, a `table` column saying which) or JSON Lines (structured fields).
//! Either is safe to open: no CSV cell is a formula to a spreadsheet, and nothing in either can
//! act on a terminal. An export is an audit record: the round and `signal_json` are written as
//! stored even where a reader flagged them, and each row carries the flags read on it. An export
//! of several databases names each row's context (a first `context` column or field); one of a
//! single database has no such column, as before contexts.

use std::io::{self, Write};

use serde::Serialize;

use crate::domain::{Change, PmidCheck, Stored};
use crate::text::stand_in;

/// How rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Csv,
    Jsonl,
}

/// One exported row, whichever table it came from; fields that do not apply are empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRow {
    /// The context (database) the row was read from, when several were exported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub table: &'static str,
    pub session_id: String,
    /// As stored, even outside `[limits]` (`None`: NULL).
    pub round_index: Option<i64>,
    /// decided_at or created_at, RFC 3339.
    pub at: Option<String>,
    /// The controller's decision, the judge's ruling, or the decision an action made stand;
    /// `None` for a note, which decides nothing.
    pub decision: Option<String>,
    pub agent_persona: Option<String>,
    pub score: Option<f64>,
    pub judge_model: Option<String>,
    pub pmids: Vec<PmidCheck>,
    pub action: Option<String>,
    pub persona: Option<String>,
    /// The display name the operator gave.
    pub operator: Option<String>,
    /// The database role that wrote the action or note, as the database stamped it.
    pub operator_role: Option<String>,
    pub note: Option<String>,
    pub reasons: Vec<String>,
    /// A decision's `signal_json` as stored.
    pub signals: Option<serde_json::Value>,
    /// What was wrong with the row as read: `table (key): column: problem`.
    pub issues: Vec<String>,
}

/// The same row flattened for CSV: lists joined, signals as JSON text. Without a context the
/// column is left out, header and all (every row of an export has one, or none does).
#[derive(Debug, Serialize)]
struct FlatRow {
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    table: &'static str,
    session_id: String,
    round_index: Option<i64>,
    at: Option<String>,
    decision: Option<String>,
    agent_persona: Option<String>,
    /// See [`number`].
    score: Option<String>,
    judge_model: Option<String>,
    /// `pmid:verified` pairs, space-separated.
    pmids: String,
    action: Option<String>,
    persona: Option<String>,
    operator: Option<String>,
    operator_role: Option<String>,
    note: Option<String>,
    /// Joined with " | ".
    reasons: String,
    signal_json: Option<String>,
    /// Joined with " | ".
    issues: String,
}

impl ExportRow {
    /// The row a decision, judgment, action or note becomes (a note with no round and no
    /// decision), its round and `signal_json` as stored; sessions and turns are not exported.
    pub fn of(stored: Stored) -> Option<ExportRow> {
        let Stored {
            change,
            round_index,
            signal_json,
        } = stored;
        let issues = change.issues().to_vec();
        let blank =
            |table, session_id, at: Option<chrono::DateTime<chrono::Utc>>, decision| ExportRow {
                context: None,
                table,
                session_id,
                round_index,
                at: at.map(|t| t.to_rfc3339()),
                decision,
                agent_persona: None,
                score: None,
                judge_model: None,
                pmids: Vec::new(),
                action: None,
                persona: None,
                operator: None,
                operator_role: None,
                note: None,
                reasons: Vec::new(),
                signals: None,
                issues,
            };
        match change {
            Change::Decision(d) => Some(ExportRow {
                reasons: d.signals.reasons,
                signals: signal_json,
                ..blank(
                    "debate_round_decisions",
                    d.session_id,
                    d.decided_at,
                    Some(d.decision.to_wire()),
                )
            }),
            Change::Judgment(j) => Some(ExportRow {
                agent_persona: Some(j.agent_persona),
                score: j.score,
                judge_model: j.judge_model,
                pmids: j.pmids,
                reasons: j.reasons,
                ..blank(
                    "debate_round_judgments",
                    j.session_id,
                    j.created_at,
                    Some(j.decision.to_wire()),
                )
            }),
            Change::Action(a) => Some(ExportRow {
                action: Some(a.action.to_wire()),
                persona: a.persona,
                operator: Some(a.operator),
                operator_role: a.role,
                note: a.note,
                ..blank(
                    "debate_operator_actions",
                    a.session_id,
                    a.created_at,
                    Some(a.decision.to_wire()),
                )
            }),
            Change::Note(n) => Some(ExportRow {
                operator: Some(n.operator),
                operator_role: n.role,
                note: Some(n.text),
                ..blank("gavel_debate_notes", n.session_id, n.created_at, None)
            }),
            Change::Session(_) | Change::Turn(_) => None,
        }
    }

    fn flat(self) -> io::Result<FlatRow> {
        let text = |t: Option<String>| t.as_deref().map(cell);
        Ok(FlatRow {
            context: self.context.as_deref().map(cell),
            table: self.table,
            session_id: cell(&self.session_id),
            round_index: self.round_index,
            at: text(self.at),
            decision: text(self.decision),
            agent_persona: text(self.agent_persona),
            score: self.score.map(number),
            judge_model: text(self.judge_model),
            pmids: cell(
                &self
                    .pmids
                    .iter()
                    .map(|p| format!("{}:{}", p.pmid, p.verified))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            action: text(self.action),
            persona: text(self.persona),
            operator: text(self.operator),
            operator_role: text(self.operator_role),
            note: text(self.note),
            reasons: cell(&self.reasons.join(" | ")),
            signal_json: self.signals.map(|s| json(&s)).transpose()?,
            issues: cell(&self.issues.join(" | ")),
        })
    }
}

/// A text cell safe to open: one a spreadsheet would run as a formula (starting with `=`, `+`,
/// `-` or `@`, after any whitespace a spreadsheet may trim on import, or with tab or carriage
/// return: the OWASP rule) gets a leading `'`, and every control or invisible character but
/// newline and tab is shown as [`crate::text::inert`] shows it. Numbers (round, score) are
/// written as numbers and need neither.
pub fn cell(text: &str) -> String {
    let formula =
        text.starts_with(['\t', '\r']) || text.trim_start().starts_with(['=', '+', '-', '@']);
    let shown = text.chars().map(|c| match c {
        '\n' | '\t' => c,
        c => stand_in(c).unwrap_or(c),
    });
    if formula {
        std::iter::once('\'').chain(shown).collect()
    } else {
        shown.collect()
    }
}

/// A number's CSV cell: as a number when finite; else (`NaN`, `inf`, `-inf`, which a spreadsheet
/// reads as a name, an error or a formula) as text, behind a leading `'`.
fn number(value: f64) -> String {
    if value.is_finite() {
        value.to_string()
    } else {
        format!("'{value}")
    }
}

/// serde_json's compact output with every character [`stand_in`] would replace (DEL, C1,
/// bidirectional and zero-width characters, separators: serde_json escapes C0 itself) written
/// as a `\uXXXX` escape: the data stays exact and none of it can act on a terminal.
struct InertJson;

impl serde_json::ser::Formatter for InertJson {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if stand_in(c).is_some() {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// `value` as one line of JSON, escaped as `InertJson` escapes.
pub fn json(value: &impl Serialize) -> io::Result<String> {
    let mut out = Vec::new();
    value
        .serialize(&mut serde_json::Serializer::with_formatter(
            &mut out, InertJson,
        ))
        .map_err(io::Error::from)?;
    String::from_utf8(out).map_err(io::Error::other)
}

/// Writes `rows` to `out`; returns how many. A failed write (a closed pipe, a full disk) is
/// the [`io::Error`] itself, so that a caller can tell a reader that went away.
pub fn write(rows: Vec<ExportRow>, format: Format, out: impl Write) -> io::Result<usize> {
    let count = rows.len();
    let mut out = io::BufWriter::new(out);
    match format {
        Format::Jsonl => {
            for row in rows {
                out.write_all(json(&row)?.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        Format::Csv => {
            let mut table = csv::Writer::from_writer(Vec::new());
            for row in rows {
                table.serialize(row.flat()?).map_err(io::Error::from)?;
            }
            out.write_all(&table.into_inner().map_err(|e| e.into_error())?)?;
        }
    }
    out.flush()?;
    Ok(count)
}
