//! The debate model: the rows of the database contract (`docs/database-contract.md`) as Rust types.
//!
//! Every other part of gavel speaks in these types: the policies read them, the simulator and
//! the stores write them, the console renders them. Strings that arrive from a foreign writer
//! (decision names, modes, statuses) are kept as [`Reported`] so that an unknown value is shown
//! as such instead of being rejected or guessed.

mod action;
mod debate;
mod decision;
mod ending;
mod judgment;
pub mod limits;
mod note;
mod presence;
mod reported;
mod session;
mod settings;
mod turn;

pub use action::{
    Access, ActionKind, DecisionState, NotOpen, OperatorAction, TIMEOUT_OPERATOR, who,
};
pub use debate::{Debate, Debates, Moment, RoundRow};
pub use decision::{ControllerDecision, Decision, Signals};
pub use ending::{Ending, Resolution};
pub use judgment::{JudgeDecision, Judgment, PmidCheck};
pub use limits::Limits;
pub use note::{DebateNote, DraftError, KEPT_NOTES, MAX_NOTE};
pub use presence::{Claim, MAX_PEERS, MAX_STATUS_BYTES, MAX_STATUS_CHARS, Peer, Status};
pub use reported::Reported;
pub(crate) use reported::vocabulary;
pub use session::{ControllerMode, Session, SessionMetadata, SessionStatus};
pub use settings::{
    Arm, Assigned, DEFAULTS_VERSION, MAX_REASON, MAX_ROUNDS_BOUND, MeasureKind, SettingsValues,
    SettingsVersion, VersionKind, WHOLE_SHARE, arm_of, bucket, check_reason, percent,
    share_from_percent,
};
pub use turn::{Crux, Disagreement, Phase, Turn, TurnMetadata};

/// One row written to, or read from, a store: the unit that travels from an orchestrator (or the
/// simulator) to the console.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Session(Session),
    Turn(Turn),
    Decision(ControllerDecision),
    Judgment(Judgment),
    Action(OperatorAction),
    /// A note pinned to a debate (gavel's own table, not the contract's).
    Note(DebateNote),
}

/// A row read for the audit trail: the row as every reader reads it, and the values a reader
/// replaces when it flags them as the database stores them, since an export writes what is
/// stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub change: Change,
    /// The row's `round_index` as stored (an `INT`; `None` when NULL).
    pub round_index: Option<i64>,
    /// A decision's `signal_json` as stored (`JSONB`; `None` when NULL or not a decision).
    pub signal_json: Option<serde_json::Value>,
}

impl Change {
    /// The debate this row belongs to.
    pub fn session_id(&self) -> &str {
        match self {
            Change::Session(s) => &s.id,
            Change::Turn(t) => &t.session_id,
            Change::Decision(d) => &d.session_id,
            Change::Judgment(j) => &j.session_id,
            Change::Action(a) => &a.session_id,
            Change::Note(n) => &n.session_id,
        }
    }

    /// The id of the debate this row belongs to, to be renamed (a console on several
    /// databases tells the same id in two of them apart in its reports).
    pub fn session_id_mut(&mut self) -> &mut String {
        match self {
            Change::Session(s) => &mut s.id,
            Change::Turn(t) => &mut t.session_id,
            Change::Decision(d) => &mut d.session_id,
            Change::Judgment(j) => &mut j.session_id,
            Change::Action(a) => &mut a.session_id,
            Change::Note(n) => &mut n.session_id,
        }
    }

    /// The round this row belongs to, for a row of a round (a turn, a decision, a judgment, an
    /// action).
    pub fn round(&self) -> Option<u32> {
        match self {
            Change::Session(_) | Change::Note(_) => None,
            Change::Turn(t) => Some(t.round_number),
            Change::Decision(d) => Some(d.round_index),
            Change::Judgment(j) => Some(j.round_index),
            Change::Action(a) => Some(a.round_index),
        }
    }

    /// What was wrong with the row as read.
    pub fn issues(&self) -> &[String] {
        match self {
            Change::Session(s) => &s.issues,
            Change::Turn(t) => &t.issues,
            Change::Decision(d) => &d.issues,
            Change::Judgment(j) => &j.issues,
            Change::Action(a) => &a.issues,
            Change::Note(n) => &n.issues,
        }
    }
}
