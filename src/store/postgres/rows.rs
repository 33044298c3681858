//! Rows as a foreign writer left them, turned into the domain's types without ever failing:
//! every column is selected as text and parsed here; what cannot be parsed, and every number
//! outside its bounds ([`Limits`]), is kept as an issue naming the table, the row's key and the
//! column (`debate_round_decisions (s1, 3): signal_json: not JSON ...`), and the console shows
//! it. A round outside `1..=max_round` is read as 0: the row is placed in no round.
//!
//! The readers work on plain column texts (`*_from`); the `&Row` functions are thin wrappers,
//! so the lenient reading can be tested without a database.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_postgres::Row;

use crate::domain::limits::{self, MAX_AGENTS, OutOfBounds, clip, flag};
use crate::domain::{
    Arm, Change, ControllerDecision, DebateNote, Judgment, Limits, OperatorAction, PmidCheck,
    Reported, Session, Signals, Stored, Turn,
};

/// The columns read from each table, all as text, in the order the readers below expect.
pub(crate) const SESSION_COLUMNS: &str = "id::text, question::text, debate_type::text, status::text, \
    controller_mode::text, num_rounds::text, min_rounds::text, max_rounds::text, \
    token_budget::text, tokens_used::text, personas::text, metadata::text, \
    extract(epoch from created_at)::text, extract(epoch from finished_at)::text, \
    settings_version::text, settings_arm::text, gated_timeout_secs::text";
pub const TURN_COLUMNS: &str = "id::text, session_id::text, round_number::text, \
    agent_persona::text, content::text, tokens_used::text, superseded::text, metadata::text, \
    extract(epoch from created_at)::text";
pub(crate) const DECISION_COLUMNS: &str = "session_id::text, round_index::text, decision::text, \
    signal_json::text, extract(epoch from decided_at)::text";
pub(crate) const JUDGMENT_COLUMNS: &str = "id::text, session_id::text, round_index::text, \
    agent_persona::text, decision::text, score::text, reasons::text, judge_model::text, \
    pmids::text, extract(epoch from created_at)::text";
pub(crate) const ACTION_COLUMNS: &str = "session_id::text, round_index::text, action::text, \
    decision::text, persona::text, operator::text, note::text, \
    extract(epoch from created_at)::text, operator_role::text";
pub(crate) const NOTE_COLUMNS: &str = "id::text, session_id::text, operator::text, note::text, \
    extract(epoch from created_at)::text, operator_role::text";

/// One row's columns as text (`NULL` as `None`), in the order of its table's `*_COLUMNS`; a
/// column past the end reads as `NULL`.
pub(crate) type Columns<'a> = [Option<&'a str>];

/// A database row's columns as text.
pub(super) fn texts(row: &Row) -> Vec<Option<&str>> {
    (0..row.len())
        .map(|i| row.try_get::<_, Option<&str>>(i).ok().flatten())
        .collect()
}

pub fn session(row: &Row, limits: &Limits) -> Session {
    session_from(&texts(row), limits)
}
pub fn turn(row: &Row, limits: &Limits) -> Turn {
    turn_from(&texts(row), limits)
}
pub fn decision(row: &Row, limits: &Limits) -> ControllerDecision {
    decision_from(&texts(row), limits)
}
pub fn judgment(row: &Row, limits: &Limits) -> Judgment {
    judgment_from(&texts(row), limits)
}
pub fn action(row: &Row, limits: &Limits) -> OperatorAction {
    action_from(&texts(row), limits)
}
pub fn note(row: &Row, limits: &Limits) -> DebateNote {
    note_from(&texts(row), limits)
}

/// `change`, read from `row`, with its round (column `round`, if it has one) and `signal_json`
/// (column `signals`) as stored: a `signal_json` that is not JSON (never, from a `JSONB` column) is kept
/// as a JSON string.
pub fn stored(change: Change, row: &Row, round: Option<usize>, signals: Option<usize>) -> Stored {
    let columns = texts(row);
    let raw = |at: usize| columns.get(at).copied().flatten();
    Stored {
        change,
        round_index: round.and_then(raw).and_then(|r| r.trim().parse().ok()),
        signal_json: signals
            .and_then(raw)
            .map(|s| serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))),
    }
}

/// Reads one row column by column, collecting what is wrong.
struct Reader<'a> {
    columns: &'a Columns<'a>,
    limits: Limits,
    table: &'static str,
    key: Keyed,
    issues: Vec<String>,
}

/// Which of a row's columns are its key, as its issues name it (written out only for an issue:
/// most rows have none).
#[derive(Clone, Copy)]
enum Keyed {
    /// Column 0, as it is: a session's id.
    Session,
    /// Column 0, an `id`.
    Id,
    /// Columns 0 and 1: a session and a round.
    Round,
}

impl<'a> Reader<'a> {
    fn new(columns: &'a Columns<'a>, limits: &Limits, table: &'static str, key: Keyed) -> Self {
        Reader {
            columns,
            limits: *limits,
            table,
            key,
            issues: Vec::new(),
        }
    }

    /// A row keyed by its `id` (column 0).
    fn by_id(columns: &'a Columns<'a>, limits: &Limits, table: &'static str) -> Self {
        Reader::new(columns, limits, table, Keyed::Id)
    }

    /// A row keyed by its session and round (columns 0 and 1).
    fn by_round(columns: &'a Columns<'a>, limits: &Limits, table: &'static str) -> Self {
        Reader::new(columns, limits, table, Keyed::Round)
    }

    fn issue(&mut self, column: &str, problem: impl std::fmt::Display) {
        let columns = self.columns;
        let key = match self.key {
            Keyed::Session => key(columns, 0),
            Keyed::Id => format!("id {}", key(columns, 0)),
            Keyed::Round => format!("{}, {}", key(columns, 0), key(columns, 1)),
        };
        self.issues.push(flag(self.table, &key, column, problem));
    }

    fn raw(&self, index: usize) -> Option<&'a str> {
        self.columns.get(index).copied().flatten()
    }

    fn text(&self, index: usize) -> Option<String> {
        self.raw(index).map(str::to_owned)
    }

    fn number<T: FromStr>(&mut self, index: usize, column: &str) -> Option<T> {
        let raw = self.raw(index)?;
        match raw.trim().parse() {
            Ok(value) => Some(value),
            Err(_) => {
                self.issue(
                    column,
                    format!("{:?} is not a number of the expected kind", clip(raw)),
                );
                None
            }
        }
    }

    /// A whole number that `check` bounds; `None` (flagged) when absent from the bounds.
    fn bounded<T>(
        &mut self,
        index: usize,
        column: &str,
        check: impl Fn(i64) -> Result<T, OutOfBounds>,
    ) -> Option<T> {
        let value: i64 = self.number(index, column)?;
        check(value).map_err(|e| self.issue(column, e)).ok()
    }

    /// A round number or index; 0 (placed in no round) when missing or out of bounds.
    fn round(&mut self, index: usize, column: &str) -> u32 {
        if self.raw(index).is_none() {
            self.issue(column, "missing (NULL)");
            return 0;
        }
        let limits = self.limits;
        self.bounded(index, column, |v| limits.round(v))
            .unwrap_or(0)
    }

    /// A count of rounds (`0..=max_round`).
    fn rounds(&mut self, index: usize, column: &str) -> Option<u32> {
        let limits = self.limits;
        self.bounded(index, column, |v| limits.rounds(v))
    }

    /// A float, kept even when not finite (the console shows it as such), but flagged then.
    fn float(&mut self, index: usize, column: &str) -> Option<f64> {
        let value: f64 = self.number(index, column)?;
        if !value.is_finite() {
            self.issue(column, format!("{value} is not a finite number"));
        }
        Some(value)
    }

    fn json<T: DeserializeOwned + Default>(&mut self, index: usize, column: &str) -> T {
        let Some(raw) = self.raw(index) else {
            return T::default();
        };
        match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(e) => {
                self.issue(column, format!("unreadable ({e})"));
                T::default()
            }
        }
    }

    fn time(&mut self, index: usize, column: &str) -> Option<DateTime<Utc>> {
        let seconds: f64 = self.number(index, column)?;
        let time = Some(seconds * 1e6)
            .filter(|micros| micros.is_finite() && micros.abs() < i64::MAX as f64)
            .and_then(|micros| DateTime::from_timestamp_micros(micros as i64));
        if time.is_none() {
            self.issue(column, format!("{seconds} seconds is not a time"));
        }
        time
    }
}

/// A key column as shown in issues.
fn key(columns: &Columns<'_>, index: usize) -> String {
    columns
        .get(index)
        .copied()
        .flatten()
        .unwrap_or("NULL")
        .to_owned()
}

/// `debate_sessions` in `SESSION_COLUMNS` order.
pub fn session_from(columns: &Columns<'_>, limits: &Limits) -> Session {
    let id = key(columns, 0);
    let mut r = Reader::new(columns, limits, "debate_sessions", Keyed::Session);
    let personas: Value = r.json(10, "personas");
    let mut personas: Vec<String> = match personas {
        Value::Array(items) => items
            .into_iter()
            .map(|p| match p {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        Value::Null => Vec::new(),
        other => {
            r.issue(
                "personas",
                format!("expected an array, found {}", clip(&other.to_string())),
            );
            Vec::new()
        }
    };
    if personas.len() > MAX_AGENTS as usize {
        r.issue(
            "personas",
            format!(
                "{} personas, more than {MAX_AGENTS}: the rest are left out",
                personas.len()
            ),
        );
        personas.truncate(MAX_AGENTS as usize);
    }
    let metadata: Value = r.json(11, "metadata");
    Session {
        id,
        question: r.text(1).unwrap_or_default(),
        debate_type: r.text(2).unwrap_or_else(|| "standard".to_owned()),
        status: Reported::parse(r.raw(3).unwrap_or("running")),
        controller_mode: Reported::parse(r.raw(4).unwrap_or("shadow")),
        num_rounds: r.rounds(5, "num_rounds"),
        min_rounds: r.rounds(6, "min_rounds").unwrap_or(2),
        max_rounds: r.rounds(7, "max_rounds").unwrap_or(8),
        token_budget: r.bounded(8, "token_budget", limits::tokens).unwrap_or(0),
        tokens_used: r.bounded(9, "tokens_used", limits::tokens).unwrap_or(0),
        personas,
        metadata: session_metadata(metadata, &mut r),
        created_at: r.time(12, "created_at"),
        finished_at: r.time(13, "finished_at"),
        settings: session_settings(&mut r),
        gated_timeout: gated_timeout(&mut r),
        issues: r.issues,
    }
}

/// `debate_sessions.settings_version` and `settings_arm`, together or not at all (an arm left
/// out is the stable one); what cannot be read is flagged.
fn session_settings(r: &mut Reader<'_>) -> Option<(i64, Arm)> {
    let version = r.number(14, "settings_version")?;
    let arm = match r.raw(15).map(str::parse::<Arm>) {
        None => Arm::Stable,
        Some(Ok(arm)) => arm,
        Some(Err(why)) => {
            r.issue("settings_arm", clip(&why));
            Arm::Stable
        }
    };
    Some((version, arm))
}

/// The longest gated wait a row may give: a day, as the config allows.
const MAX_GATED_WAIT_SECS: f64 = 86_400.0;

/// `debate_sessions.gated_timeout_secs`: a wait of 0 to a day; anything else is flagged and
/// left out.
fn gated_timeout(r: &mut Reader<'_>) -> Option<std::time::Duration> {
    let secs = r.float(16, "gated_timeout_secs")?;
    if (0.0..=MAX_GATED_WAIT_SECS).contains(&secs) {
        Some(std::time::Duration::from_secs_f64(secs))
    } else {
        if secs.is_finite() {
            r.issue(
                "gated_timeout_secs",
                format!("{secs} is not a wait of 0 to {MAX_GATED_WAIT_SECS} seconds"),
            );
        }
        None
    }
}

/// Why a number that should be a count is not one.
#[derive(Debug, thiserror::Error)]
enum NotACount {
    #[error("{0} is not a whole number")]
    Fraction(String),
    #[error("{0} is beyond any count")]
    Huge(f64),
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
}

/// `debate_sessions.metadata`: an `agent_count`, complexity, cost, budget or price out of bounds
/// is flagged and left out, so the rest still reads.
fn session_metadata(mut metadata: Value, r: &mut Reader<'_>) -> crate::domain::SessionMetadata {
    if let Value::Object(map) = &mut metadata
        && let Some(count) = map.get("agent_count").filter(|v| !v.is_null())
    {
        let checked = match count.as_i64() {
            Some(whole) => limits::agents(whole).map_err(NotACount::from),
            None => Err(NotACount::Fraction(clip(&count.to_string()))),
        };
        if let Err(e) = checked {
            r.issue("metadata", format!("agent_count: {e}"));
            map.remove("agent_count");
        }
    }
    let mut metadata: crate::domain::SessionMetadata = match metadata {
        Value::Null => Default::default(),
        value => serde_json::from_value(value).unwrap_or_else(|e| {
            r.issue("metadata", format!("unreadable ({e})"));
            Default::default()
        }),
    };
    for problem in metadata.leave_out_of_bounds() {
        r.issue("metadata", problem);
    }
    metadata
}

/// `debate_rounds` in [`TURN_COLUMNS`] order.
pub fn turn_from(columns: &Columns<'_>, limits: &Limits) -> Turn {
    let mut r = Reader::by_id(columns, limits, "debate_rounds");
    Turn {
        id: r.number(0, "id").unwrap_or(0),
        session_id: r.text(1).unwrap_or_default(),
        round_number: r.round(2, "round_number"),
        agent_persona: r.text(3).unwrap_or_default(),
        content: r.text(4).unwrap_or_default(),
        tokens_used: r.bounded(5, "tokens_used", limits::tokens).unwrap_or(0),
        superseded: r.raw(6) == Some("true"),
        metadata: r.json(7, "metadata"),
        created_at: r.time(8, "created_at"),
        issues: r.issues,
    }
}

/// `debate_round_decisions` in `DECISION_COLUMNS` order.
pub fn decision_from(columns: &Columns<'_>, limits: &Limits) -> ControllerDecision {
    let mut r = Reader::by_round(columns, limits, "debate_round_decisions");
    let signals = match r.raw(3) {
        None => Signals::default(),
        Some(raw) => {
            let (signals, problems) = signal_json(raw);
            for problem in problems {
                r.issue("signal_json", problem);
            }
            signals
        }
    };
    ControllerDecision {
        session_id: key(columns, 0),
        round_index: r.round(1, "round_index"),
        decision: Reported::parse(r.raw(2).unwrap_or_default()),
        signals,
        decided_at: r.time(4, "decided_at"),
        issues: r.issues,
    }
}

/// `signal_json` key by key: numbers may arrive as strings ("NaN" included); a wrong type, a
/// float that is not finite or a count out of bounds is a problem for that key only. Returns
/// what could be read and the problems, each naming its key.
pub fn signal_json(raw: &str) -> (Signals, Vec<String>) {
    let map = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            let problem = format!("expected an object, found {}", clip(&other.to_string()));
            return (Signals::default(), vec![problem]);
        }
        Err(e) => return (Signals::default(), vec![format!("not JSON ({e})")]),
    };
    let mut keys = SignalKeys {
        map: &map,
        problems: Vec::new(),
    };
    let signals = Signals {
        similarity: keys.float("similarity"),
        similarity_model: keys.text("similarity_model"),
        similarity_threshold: keys.float("similarity_threshold"),
        verdict: keys.text("verdict"),
        previous_verdict: keys.text("previous_verdict"),
        verdict_stable: keys.flag("verdict_stable"),
        verdict_split: keys.flag("verdict_split"),
        new_claims: keys.count("new_claims", limits::count),
        novelty_threshold: keys.count("novelty_threshold", limits::count),
        open_disputes: keys.count("open_disputes", limits::count),
        tokens_used: keys.count("tokens_used", limits::tokens),
        token_budget: keys.count("token_budget", limits::tokens),
        escalate_persona: keys.text("escalate_persona"),
        reasons: map.get("reasons").map(strings).unwrap_or_default(),
    };
    (signals, keys.problems)
}

/// The keys of one `signal_json` object, read leniently.
struct SignalKeys<'a> {
    map: &'a serde_json::Map<String, Value>,
    problems: Vec<String>,
}

impl SignalKeys<'_> {
    fn float(&mut self, key: &str) -> Option<f64> {
        let value = match self.map.get(key)? {
            Value::Null => return None,
            Value::Number(n) => n.as_f64()?,
            Value::String(s) => match s.trim().parse::<f64>() {
                Ok(value) => value,
                Err(_) => {
                    self.problems
                        .push(format!("{key}: {:?} is not a number", clip(s)));
                    return None;
                }
            },
            other => {
                let shown = clip(&other.to_string());
                self.problems
                    .push(format!("{key}: {shown} is not a number"));
                return None;
            }
        };
        if !value.is_finite() {
            self.problems
                .push(format!("{key}: {value} is not a finite number"));
        }
        Some(value)
    }

    /// A whole number that `check` bounds; a fraction, a float that is not finite or a value
    /// out of bounds is left out.
    fn count<T>(&mut self, key: &str, check: fn(i64) -> Result<T, OutOfBounds>) -> Option<T> {
        let whole = match self.map.get(key)?.as_i64() {
            Some(exact) => Ok(exact),
            None => {
                let value = self.float(key).filter(|v| v.is_finite())?;
                if value.fract() != 0.0 {
                    Err(NotACount::Fraction(value.to_string()))
                } else if value.abs() >= 9.0e18 {
                    Err(NotACount::Huge(value))
                } else {
                    Ok(value as i64)
                }
            }
        };
        whole
            .and_then(|whole| Ok(check(whole)?))
            .map_err(|e| self.problems.push(format!("{key}: {e}")))
            .ok()
    }

    fn text(&self, key: &str) -> Option<String> {
        match self.map.get(key)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    fn flag(&self, key: &str) -> Option<bool> {
        match self.map.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
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

/// `debate_round_judgments` in `JUDGMENT_COLUMNS` order.
pub fn judgment_from(columns: &Columns<'_>, limits: &Limits) -> Judgment {
    let mut r = Reader::by_id(columns, limits, "debate_round_judgments");
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
    let score = r.float(5, "score");
    if let Some(s) = score.filter(|s| s.is_finite() && !(0.0..=1.0).contains(s)) {
        r.issue("score", format!("{s} is outside 0..=1"));
    }
    Judgment {
        id: r.number(0, "id").unwrap_or(0),
        session_id: r.text(1).unwrap_or_default(),
        round_index: r.round(2, "round_index"),
        agent_persona: r.text(3).unwrap_or_default(),
        decision: Reported::parse(r.raw(4).unwrap_or_default()),
        score,
        reasons,
        judge_model: r.text(7),
        pmids,
        created_at: r.time(9, "created_at"),
        issues: r.issues,
    }
}

/// `debate_operator_actions` in `ACTION_COLUMNS` order.
pub fn action_from(columns: &Columns<'_>, limits: &Limits) -> OperatorAction {
    let mut r = Reader::by_round(columns, limits, "debate_operator_actions");
    OperatorAction {
        session_id: key(columns, 0),
        round_index: r.round(1, "round_index"),
        action: Reported::parse(r.raw(2).unwrap_or_default()),
        decision: Reported::parse(r.raw(3).unwrap_or_default()),
        persona: r.text(4),
        operator: r.text(5).unwrap_or_default(),
        role: r.text(8),
        note: r.text(6),
        created_at: r.time(7, "created_at"),
        issues: r.issues,
    }
}

/// `gavel_debate_notes` in [`NOTE_COLUMNS`] order.
pub(crate) fn note_from(columns: &Columns<'_>, limits: &Limits) -> DebateNote {
    let mut r = Reader::by_id(columns, limits, "gavel_debate_notes");
    DebateNote {
        id: r.number(0, "id").unwrap_or(0),
        session_id: r.text(1).unwrap_or_default(),
        operator: r.text(2).unwrap_or_default(),
        text: r.text(3).unwrap_or_default(),
        created_at: r.time(4, "created_at"),
        role: r.text(5),
        issues: r.issues,
    }
}
