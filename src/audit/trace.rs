//! The controller trace of one debate — "why did this debate stop at round X?": every decision
//! with its three signals against the thresholds the controller used (as recorded in
//! `signal_json`), the operator actions and who took them, how the debate ended, and the notes
//! operators pinned to it.

use serde::Serialize;

use crate::domain::{
    ActionKind, ControllerMode, Debate, JudgeDecision, OperatorAction, Reported, TIMEOUT_OPERATOR,
    who,
};
use crate::text::{against, columns, inert, one_line, thousands, under};

/// An operator's action on a decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceAction {
    pub action: String,
    pub decision: String,
    pub persona: Option<String>,
    /// The display name the operator gave.
    pub operator: String,
    /// The database role that wrote the action, as the database stamped it.
    pub operator_role: Option<String>,
    pub note: Option<String>,
    pub at: Option<String>,
}

/// A note pinned to the debate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceNote {
    /// The display name the operator gave.
    pub operator: String,
    /// The database role that wrote the note, as the database stamped it.
    pub operator_role: Option<String>,
    pub note: String,
    pub at: Option<String>,
}

impl TraceNote {
    /// When it was pinned, to the minute (`2026-11-25 21:40`; `-` when not known).
    pub fn minute(&self) -> String {
        self.at
            .as_deref()
            .and_then(|at| at.get(..16))
            .map_or_else(|| "-".to_owned(), |at| one_line(&at.replace('T', " ")))
    }
}

/// One round's decision and what it rested on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRound {
    pub round: u32,
    /// `None` when the controller recorded nothing for the round (mode off).
    pub decision: Option<String>,
    pub similarity: Option<f64>,
    pub similarity_threshold: Option<f64>,
    pub verdict: Option<String>,
    pub previous_verdict: Option<String>,
    pub verdict_stable: Option<bool>,
    pub new_claims: Option<u32>,
    pub novelty_threshold: Option<u32>,
    pub tokens_used: Option<u64>,
    pub token_budget: Option<u64>,
    pub reasons: Vec<String>,
    pub action: Option<TraceAction>,
    /// The judge's abort of a turn in this round, as `persona: reasons`.
    pub judge_abort: Option<String>,
}

/// A debate's trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    pub session_id: String,
    pub question: String,
    pub controller_mode: String,
    pub status: String,
    pub rounds_run: u32,
    pub max_rounds: u32,
    pub tokens_used: u64,
    pub token_budget: u64,
    pub rounds: Vec<TraceRound>,
    /// Why the debate stopped where it did (or that it is still running).
    pub ending: String,
    /// The notes operators pinned to the debate, oldest first.
    pub notes: Vec<TraceNote>,
    /// What could not be read from the rows.
    pub issues: Vec<String>,
}

impl Trace {
    pub fn of(debate: &Debate) -> Trace {
        let session = &debate.session;
        let run = debate.latest_round();
        let rounds: Vec<TraceRound> = debate
            .rounds()
            .iter()
            .map(|row| {
                let decision = row.decision;
                let s = decision.map(|d| &d.signals);
                let judge_abort = row
                    .judgments
                    .iter()
                    .find(|j| j.decision == Reported::Known(JudgeDecision::Abort))
                    .map(|j| format!("{}: {}", j.agent_persona, j.reasons.join("; ")));
                TraceRound {
                    round: row.number,
                    decision: decision.map(|d| d.decision.to_string()),
                    similarity: s.and_then(|s| s.similarity),
                    similarity_threshold: s.and_then(|s| s.similarity_threshold),
                    verdict: s.and_then(|s| s.verdict.clone()),
                    previous_verdict: s.and_then(|s| s.previous_verdict.clone()),
                    verdict_stable: s.and_then(|s| s.verdict_stable),
                    new_claims: s.and_then(|s| s.new_claims),
                    novelty_threshold: s.and_then(|s| s.novelty_threshold),
                    tokens_used: s.and_then(|s| s.tokens_used),
                    token_budget: s.and_then(|s| s.token_budget),
                    reasons: s.map(|s| s.reasons.clone()).unwrap_or_default(),
                    action: row.action.map(trace_action),
                    judge_abort,
                }
            })
            .collect();
        Trace {
            session_id: session.id.clone(),
            question: session.question.clone(),
            controller_mode: session.controller_mode.to_string(),
            status: session.status.to_string(),
            rounds_run: run,
            max_rounds: session.max_rounds,
            tokens_used: session.tokens_used,
            token_budget: session.token_budget,
            ending: ending(debate, &rounds),
            rounds,
            notes: debate
                .notes
                .iter()
                .map(|n| TraceNote {
                    operator: n.operator.clone(),
                    operator_role: n.role.clone(),
                    note: n.text.clone(),
                    at: n.created_at.map(|t| t.to_rfc3339()),
                })
                .collect(),
            issues: debate.issues().map(str::to_owned).collect(),
        }
    }

    /// The trace as text for a terminal: every string from the debate made inert.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} · {} · {} · {} rounds of max {} · {} of {} tokens\n{}\n\n{}\n\n",
            inert(&self.session_id),
            inert(&self.controller_mode),
            inert(&self.status),
            self.rounds_run,
            self.max_rounds,
            thousands(self.tokens_used),
            thousands(self.token_budget),
            one_line(&self.question),
            one_line(&self.ending),
        );
        const HEADER: [&str; 6] = [
            "round",
            "decision",
            "similarity",
            "verdict",
            "new claims",
            "operator",
        ];
        let rows: Vec<Vec<String>> = self.rounds.iter().map(TraceRound::cells).collect();
        out.push_str(&columns(&HEADER, &rows));
        for round in &self.rounds {
            if round.reasons.is_empty() && round.judge_abort.is_none() {
                continue;
            }
            out.push_str(&format!("\nround {}:\n", round.round));
            for reason in &round.reasons {
                out.push_str(&format!("  - {}\n", one_line(reason)));
            }
            if let Some(abort) = &round.judge_abort {
                out.push_str(&format!(
                    "  - judge aborted the debate: {}\n",
                    one_line(abort)
                ));
            }
            if let Some(note) = round.action.as_ref().and_then(|a| a.note.as_deref()) {
                out.push_str(&format!("  - operator note: {}\n", one_line(note)));
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\nnotes:\n");
        }
        for note in &self.notes {
            out.push_str(&format!(
                "  - {} {}: {}\n",
                note.minute(),
                one_line(&who(&note.operator, note.operator_role.as_deref())),
                one_line(&note.note)
            ));
        }
        for issue in &self.issues {
            out.push_str(&format!("⚠ {}\n", one_line(issue)));
        }
        out
    }
}

impl TraceRound {
    /// The round's row of the trace table: round, decision, similarity, verdict, new claims,
    /// operator.
    pub fn cells(&self) -> Vec<String> {
        let mark = |ok: Option<bool>| match ok {
            Some(true) => " ✓",
            Some(false) => " ✗",
            None => "",
        };
        let similarity = match (self.similarity, self.similarity_threshold) {
            (Some(s), Some(t)) => format!("{}{}", against(s, t), mark(Some(s >= t))),
            (Some(s), None) => format!("{s:.2}"),
            (None, _) => "-".to_owned(),
        };
        let verdict = match (&self.verdict, &self.previous_verdict) {
            (Some(v), Some(p)) if v == p => {
                format!("{} (unchanged){}", one_line(v), mark(self.verdict_stable))
            }
            (Some(v), Some(p)) => format!(
                "{} (was {}){}",
                one_line(v),
                one_line(p),
                mark(self.verdict_stable)
            ),
            (Some(v), None) => format!("{}{}", one_line(v), mark(self.verdict_stable)),
            (None, _) => "-".to_owned(),
        };
        let claims = match (self.new_claims, self.novelty_threshold) {
            (Some(n), Some(t)) => format!("{}{}", under(n, t), mark(Some(n < t))),
            (Some(n), None) => n.to_string(),
            (None, _) => "-".to_owned(),
        };
        let operator = self.action.as_ref().map_or_else(String::new, |a| {
            let persona = a
                .persona
                .as_deref()
                .map(|p| format!(" {}", one_line(p)))
                .unwrap_or_default();
            format!(
                "{} {}{persona} by {}",
                one_line(&a.action),
                one_line(&a.decision),
                one_line(&who(&a.operator, a.operator_role.as_deref()))
            )
        });
        vec![
            self.round.to_string(),
            self.decision
                .as_deref()
                .map_or_else(|| "-".to_owned(), one_line),
            similarity,
            verdict,
            claims,
            operator,
        ]
    }
}

fn trace_action(action: &OperatorAction) -> TraceAction {
    TraceAction {
        action: action.action.to_string(),
        decision: action.decision.to_string(),
        persona: action.persona.clone(),
        operator: action.operator.clone(),
        operator_role: action.role.clone(),
        note: action.note.clone(),
        at: action.created_at.map(|t| t.to_rfc3339()),
    }
}

/// Why the debate ended at its last round, from the rows of that round.
fn ending(debate: &Debate, rounds: &[TraceRound]) -> String {
    let session = &debate.session;
    let Some(last) = rounds.last() else {
        return format!("no rounds yet ({})", session.status);
    };
    let round = last.round;
    if session.is_running() {
        return format!("still running at round {round}");
    }
    if let Some(abort) = &last.judge_abort {
        return format!("stopped at round {round}: the judge aborted the debate ({abort})");
    }
    let decision = debate.decisions.get(&round);
    let action = debate.actions.get(&round);
    let standing = action
        .map(|a| a.decision.clone())
        .or_else(|| decision.map(|d| d.decision.clone()));
    let who = match (decision, action) {
        (_, Some(a)) if a.operator == TIMEOUT_OPERATOR => {
            "decided by the controller; the gated timeout let it stand".to_owned()
        }
        (_, Some(a)) if a.action == Reported::Known(ActionKind::Accept) => {
            format!("decided by the controller, accepted by {}", a.who())
        }
        (Some(d), Some(a)) => format!(
            "{} by {} (the controller said {})",
            a.action,
            a.who(),
            d.decision
        ),
        (None, Some(a)) => format!("{} by {}", a.action, a.who()),
        (Some(_), None) => "decided by the controller".to_owned(),
        (None, None) => String::new(),
    };
    // In shadow mode the controller's stop is a counterfactual; an operator's override is not.
    let by_operator = action.is_some_and(|a| {
        a.operator != TIMEOUT_OPERATOR && a.action != Reported::Known(ActionKind::Accept)
    });
    let shadow = session.controller_mode == Reported::Known(ControllerMode::Shadow);
    match standing.as_ref().and_then(Reported::known) {
        Some(d) if d.stops() && (!shadow || by_operator) => {
            format!("stopped at round {round}: {d}, {who}")
        }
        _ => {
            let counterfactual = standing
                .map(|s| format!(" (the last decision, {s}, was {who})"))
                .unwrap_or_default();
            if round >= session.max_rounds {
                format!(
                    "stopped at round {round}: the fixed loop reached max_rounds {}{counterfactual}",
                    session.max_rounds
                )
            } else {
                format!(
                    "stopped at round {round}: the orchestrator ended the fixed loop{counterfactual}"
                )
            }
        }
    }
}
