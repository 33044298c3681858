//! Rows as a foreign writer left them, turned into the domain's types without ever failing:
//! every column is selected as text and parsed here; what cannot be parsed is kept as an issue
//! naming the table, the row's key and the column (`debate_round_decisions (s1, 3):
//! signal_json: not JSON ...`), and the console shows it.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_postgres::Row;

use crate::domain::{
    ControllerDecision, Judgment, OperatorAction, PmidCheck, Reported, Session, Signals, Turn,
};

/// The columns read from each table, all as text, in the order the readers below expect.
pub const SESSION_COLUMNS: &str = "id::text, question::text, debate_type::text, status::text, \
    controller_mode::text, num_rounds::text, min_rounds::text, max_rounds::text, \
    token_budget::text, tokens_used::text, personas::text, metadata::text, \
    extract(epoch from created_at)::text, extract(epoch from finished_at)::text";
pub const TURN_COLUMNS: &str = "id::text, session_id::text, round_number::text, \
    agent_persona::text, content::text, tokens_used::text, superseded::text, metadata::text, \
    extract(epoch from created_at)::text";
pub const DECISION_COLUMNS: &str = "session_id::text, round_index::text, decision::text, \
    signal_json::text, extract(epoch from decided_at)::text";
pub const JUDGMENT_COLUMNS: &str = "id::text, session_id::text, round_index::text, \
    agent_persona::text, decision::text, score::text, reasons::text, judge_model::text, \
    pmids::text, extract(epoch from created_at)::text";
pub const ACTION_COLUMNS: &str = "session_id::text, round_index::text, action::text, \
    decision::text, persona::text, operator::text, note::text, \
    extract(epoch from created_at)::text, operator_role::text";

/// Reads one row column by column, collecting what is wrong.
struct Reader<'a> {
    row: &'a Row,
    place: String,
    issues: Vec<String>,
}

impl<'a> Reader<'a> {
    fn new(row: &'a Row, table: &str, key: String) -> Reader<'a> {
        Reader {
            row,
            place: format!("{table} ({key})"),
            issues: Vec::new(),
        }
    }

    fn issue(&mut self, column: &str, problem: impl std::fmt::Display) {
        self.issues
            .push(format!("{}: {column}: {problem}", self.place));
    }

    fn text(&self, index: usize) -> Option<String> {
        self.row.try_get::<_, Option<String>>(index).ok().flatten()
    }

    fn number<T: FromStr>(&mut self, index: usize, column: &str) -> Option<T> {
        let raw = self.text(index)?;
        match raw.trim().parse() {
            Ok(value) => Some(value),
            Err(_) => {
                self.issue(
                    column,
                    format!("{raw:?} is not a number of the expected kind"),
                );
                None
            }
        }
    }

    fn json<T: DeserializeOwned + Default>(&mut self, index: usize, column: &str) -> T {
        let Some(raw) = self.text(index) else {
            return T::default();
        };
        match serde_json::from_str(&raw) {
            Ok(value) => value,
            Err(e) => {
                self.issue(column, format!("unreadable ({e})"));
                T::default()
            }
        }
    }

    fn time(&mut self, index: usize, column: &str) -> Option<DateTime<Utc>> {
        let seconds: f64 = self.number(index, column)?;
        DateTime::from_timestamp_micros((seconds * 1e6) as i64)
    }
}

fn key(row: &Row, index: usize) -> String {
    row.try_get::<_, Option<String>>(index)
        .ok()
        .flatten()
        .unwrap_or_else(|| "NULL".to_owned())
}

pub fn session(row: &Row) -> Session {
    let id = key(row, 0);
    let mut r = Reader::new(row, "debate_sessions", id.clone());
    let personas: Value = r.json(10, "personas");
    let personas = match personas {
        Value::Array(items) => items
            .into_iter()
            .map(|p| match p {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        Value::Null => Vec::new(),
        other => {
            r.issue("personas", format!("expected an array, found {other}"));
            Vec::new()
        }
    };
    Session {
        id,
        question: r.text(1).unwrap_or_default(),
        debate_type: r.text(2).unwrap_or_else(|| "standard".to_owned()),
        status: Reported::parse(&r.text(3).unwrap_or_else(|| "running".to_owned())),
        controller_mode: Reported::parse(&r.text(4).unwrap_or_else(|| "shadow".to_owned())),
        num_rounds: r.number(5, "num_rounds"),
        min_rounds: r.number(6, "min_rounds").unwrap_or(2),
        max_rounds: r.number(7, "max_rounds").unwrap_or(8),
        token_budget: r.number(8, "token_budget").unwrap_or(0),
        tokens_used: r.number(9, "tokens_used").unwrap_or(0),
        personas,
        metadata: r.json(11, "metadata"),
        created_at: r.time(12, "created_at"),
        finished_at: r.time(13, "finished_at"),
        issues: r.issues,
    }
}

pub fn turn(row: &Row) -> Turn {
    let id = key(row, 0);
    let mut r = Reader::new(row, "debate_rounds", format!("id {id}"));
    let id = r.number(0, "id").unwrap_or(0);
    Turn {
        id,
        session_id: r.text(1).unwrap_or_default(),
        round_number: r.number(2, "round_number").unwrap_or(0),
        agent_persona: r.text(3).unwrap_or_default(),
        content: r.text(4).unwrap_or_default(),
        tokens_used: r.number(5, "tokens_used").unwrap_or(0),
        superseded: r.text(6).is_some_and(|s| s == "true"),
        metadata: r.json(7, "metadata"),
        created_at: r.time(8, "created_at"),
        issues: r.issues,
    }
}

pub fn decision(row: &Row) -> ControllerDecision {
    let session_id = key(row, 0);
    let round = key(row, 1);
    let mut r = Reader::new(
        row,
        "debate_round_decisions",
        format!("{session_id}, {round}"),
    );
    let signals = match r.text(3) {
        None => Signals::default(),
        Some(raw) => match serde_json::from_str::<Value>(&raw) {
            Ok(Value::Object(map)) => lenient_signals(&map, &mut r),
            Ok(other) => {
                r.issue("signal_json", format!("expected an object, found {other}"));
                Signals::default()
            }
            Err(e) => {
                r.issue("signal_json", format!("not JSON ({e})"));
                Signals::default()
            }
        },
    };
    ControllerDecision {
        session_id,
        round_index: r.number(1, "round_index").unwrap_or(0),
        decision: Reported::parse(&r.text(2).unwrap_or_default()),
        signals,
        decided_at: r.time(4, "decided_at"),
        issues: r.issues,
    }
}

/// `signal_json` key by key: numbers may arrive as strings ("NaN" included), a wrong type is an
/// issue for that key only.
fn lenient_signals(map: &serde_json::Map<String, Value>, r: &mut Reader<'_>) -> Signals {
    let mut float = |key: &str| -> Option<f64> {
        match map.get(key)? {
            Value::Null => None,
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok().or_else(|| {
                r.issue("signal_json", format!("{key}: {s:?} is not a number"));
                None
            }),
            other => {
                r.issue("signal_json", format!("{key}: {other} is not a number"));
                None
            }
        }
    };
    let similarity = float("similarity");
    let similarity_threshold = float("similarity_threshold");
    let new_claims = float("new_claims").map(|n| n as u32);
    let novelty_threshold = float("novelty_threshold").map(|n| n as u32);
    let open_disputes = float("open_disputes").map(|n| n as u32);
    let tokens_used = float("tokens_used").map(|n| n as u64);
    let token_budget = float("token_budget").map(|n| n as u64);
    let text = |key: &str| match map.get(key)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let flag = |key: &str| match map.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    let reasons = map.get("reasons").map(strings).unwrap_or_default();
    Signals {
        similarity,
        similarity_threshold,
        verdict: text("verdict"),
        previous_verdict: text("previous_verdict"),
        verdict_stable: flag("verdict_stable"),
        verdict_split: flag("verdict_split"),
        new_claims,
        novelty_threshold,
        open_disputes,
        tokens_used,
        token_budget,
        escalate_persona: text("escalate_persona"),
        reasons,
    }
}

/// A list of strings as a writer may have meant it: an array (other values shown as JSON), or
/// one string.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

pub fn judgment(row: &Row) -> Judgment {
    let id = key(row, 0);
    let mut r = Reader::new(row, "debate_round_judgments", format!("id {id}"));
    let reasons = strings(&r.json(6, "reasons"));
    let pmids: Value = r.json(8, "pmids");
    let pmids = match pmids {
        Value::Null => Vec::new(),
        value => serde_json::from_value::<Vec<PmidCheck>>(value).unwrap_or_else(|e| {
            r.issue(
                "pmids",
                format!("expected [{{\"pmid\", \"verified\"}}] ({e})"),
            );
            Vec::new()
        }),
    };
    Judgment {
        id: r.number(0, "id").unwrap_or(0),
        session_id: r.text(1).unwrap_or_default(),
        round_index: r.number(2, "round_index").unwrap_or(0),
        agent_persona: r.text(3).unwrap_or_default(),
        decision: Reported::parse(&r.text(4).unwrap_or_default()),
        score: r.number(5, "score"),
        reasons,
        judge_model: r.text(7),
        pmids,
        created_at: r.time(9, "created_at"),
        issues: r.issues,
    }
}

pub fn action(row: &Row) -> OperatorAction {
    let session_id = key(row, 0);
    let round = key(row, 1);
    let mut r = Reader::new(
        row,
        "debate_operator_actions",
        format!("{session_id}, {round}"),
    );
    OperatorAction {
        session_id,
        round_index: r.number(1, "round_index").unwrap_or(0),
        action: Reported::parse(&r.text(2).unwrap_or_default()),
        decision: Reported::parse(&r.text(3).unwrap_or_default()),
        persona: r.text(4),
        operator: r.text(5).unwrap_or_default(),
        role: r.text(8),
        note: r.text(6),
        created_at: r.time(7, "created_at"),
    }
}
