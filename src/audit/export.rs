//! `gavel export`: decisions, judgments and operator actions of a time range, one row per line,
//! as CSV (one flat table, a `table` column saying which) or JSON Lines (structured fields).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::domain::{Change, PmidCheck, Signals};
use crate::text::inert;

/// How rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Csv,
    Jsonl,
}

/// One exported row, whichever table it came from; fields that do not apply are empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRow {
    pub table: &'static str,
    pub session_id: String,
    pub round_index: u32,
    /// decided_at or created_at, RFC 3339.
    pub at: Option<String>,
    /// The controller's decision, the judge's ruling, or the decision an action made stand.
    pub decision: String,
    pub agent_persona: Option<String>,
    pub score: Option<f64>,
    pub judge_model: Option<String>,
    pub pmids: Vec<PmidCheck>,
    pub action: Option<String>,
    pub persona: Option<String>,
    /// The display name the operator gave.
    pub operator: Option<String>,
    /// The database role that wrote the action, as the database stamped it.
    pub operator_role: Option<String>,
    pub note: Option<String>,
    pub reasons: Vec<String>,
    pub signals: Option<Signals>,
}

/// The same row flattened for CSV: lists joined, signals as JSON text.
#[derive(Debug, Serialize)]
struct FlatRow {
    table: &'static str,
    session_id: String,
    round_index: u32,
    at: Option<String>,
    decision: String,
    agent_persona: Option<String>,
    score: Option<f64>,
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
}

impl ExportRow {
    /// The row a decision, judgment or action becomes; sessions and turns are not exported.
    pub fn of(change: Change) -> Option<ExportRow> {
        let blank = |table,
                     session_id,
                     round_index,
                     at: Option<chrono::DateTime<chrono::Utc>>,
                     decision| ExportRow {
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
        };
        match change {
            Change::Decision(d) => Some(ExportRow {
                reasons: d.signals.reasons.clone(),
                signals: Some(d.signals),
                ..blank(
                    "debate_round_decisions",
                    d.session_id,
                    d.round_index,
                    d.decided_at,
                    d.decision.to_wire(),
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
                    j.round_index,
                    j.created_at,
                    j.decision.to_wire(),
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
                    a.round_index,
                    a.created_at,
                    a.decision.to_wire(),
                )
            }),
            Change::Session(_) | Change::Turn(_) => None,
        }
    }

    fn flat(self) -> Result<FlatRow> {
        Ok(FlatRow {
            table: self.table,
            session_id: self.session_id,
            round_index: self.round_index,
            at: self.at,
            decision: self.decision,
            agent_persona: self.agent_persona,
            score: self.score,
            judge_model: self.judge_model,
            pmids: self
                .pmids
                .iter()
                .map(|p| format!("{}:{}", p.pmid, p.verified))
                .collect::<Vec<_>>()
                .join(" "),
            action: self.action,
            persona: self.persona,
            operator: self.operator,
            operator_role: self.operator_role,
            note: self.note,
            reasons: self.reasons.join(" | "),
            signal_json: self
                .signals
                .map(|s| serde_json::to_string(&s))
                .transpose()?,
        })
    }
}

/// Writes `rows` to `out`; returns how many. CSV bound for a terminal has its control
/// characters made visible (JSON escapes them anyway); a file or a pipe gets the data as stored.
pub fn write(
    rows: Vec<ExportRow>,
    format: Format,
    out: impl Write,
    terminal: bool,
) -> Result<usize> {
    let count = rows.len();
    match format {
        Format::Jsonl => {
            let mut out = std::io::BufWriter::new(out);
            for row in rows {
                serde_json::to_writer(&mut out, &row)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
        }
        Format::Csv => {
            let mut table = csv::Writer::from_writer(Vec::new());
            for row in rows {
                table.serialize(row.flat()?)?;
            }
            let table = table.into_inner().map_err(|e| e.into_error())?;
            let mut out = std::io::BufWriter::new(out);
            if terminal {
                for line in String::from_utf8_lossy(&table).lines() {
                    writeln!(out, "{}", inert(line))?;
                }
            } else {
                out.write_all(&table)?;
            }
            out.flush()?;
        }
    }
    Ok(count)
}
