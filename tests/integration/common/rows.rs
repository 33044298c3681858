//! Rows built by hand for the console tests: a session, a decision, an action, a turn, a
//! ruling, with what the test does not care about left empty.

use gavel::domain::{
    ActionKind, ControllerDecision, Decision, JudgeDecision, Judgment, OperatorAction, Reported,
    Session, SessionStatus, Signals, Turn, TurnMetadata,
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
