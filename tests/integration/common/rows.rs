//! Rows built by hand for the console tests: a session, a decision, an action, a turn, a
//! ruling, a settings version's values, with what the test does not care about left empty.

use gavel::domain::{
    ActionKind, ControllerDecision, ControllerMode, Decision, JudgeDecision, Judgment, MeasureKind,
    OperatorAction, Reported, Session, SessionStatus, SettingsValues, Signals, Turn, TurnMetadata,
};

pub fn session(id: &str, status: SessionStatus) -> Session {
    Session {
        status: status.into(),
        ..Session::placeholder(id)
    }
}

pub fn decision(id: &str, round: u32, decision: Reported<Decision>) -> ControllerDecision {
    ControllerDecision {
        session_id: id.into(),
        round_index: round,
        decision,
        signals: Signals::default(),
        decided_at: None,
        issues: Vec::new(),
    }
}

pub fn action(
    id: &str,
    round: u32,
    kind: ActionKind,
    decision: Reported<Decision>,
) -> OperatorAction {
    OperatorAction {
        session_id: id.into(),
        round_index: round,
        action: kind.into(),
        decision,
        persona: None,
        operator: "alice".into(),
        role: None,
        note: None,
        created_at: None,
        issues: Vec::new(),
    }
}

/// Turn `row` of debate `id`: `persona` speaking in `round`.
pub fn turn(id: &str, row: u64, round: u32, persona: &str) -> Turn {
    Turn {
        id: row,
        session_id: id.into(),
        round_number: round,
        agent_persona: persona.into(),
        content: format!("{persona} speaks"),
        tokens_used: 0,
        superseded: false,
        metadata: TurnMetadata::default(),
        created_at: None,
        issues: Vec::new(),
    }
}

/// Ruling `row` of debate `id` on `persona`'s turn in `round`.
pub fn ruling(
    id: &str,
    row: u64,
    round: u32,
    persona: &str,
    decision: JudgeDecision,
    score: f64,
) -> Judgment {
    Judgment {
        id: row,
        session_id: id.into(),
        round_index: round,
        agent_persona: persona.into(),
        decision: decision.into(),
        score: Some(score),
        reasons: Vec::new(),
        judge_model: None,
        pmids: Vec::new(),
        created_at: None,
        issues: Vec::new(),
    }
}

/// A settings version's values, told apart by their similarity threshold: enabled, lexical,
/// novelty 1, rounds 2-8, budget 0.8.
pub fn settings_values(similarity: f64) -> SettingsValues {
    SettingsValues {
        mode: ControllerMode::Enabled,
        similarity_threshold: similarity,
        similarity_measure: MeasureKind::Lexical,
        similarity_model: None,
        novelty_floor: 1,
        min_rounds: 2,
        max_rounds: 8,
        budget_fraction: 0.8,
    }
}
