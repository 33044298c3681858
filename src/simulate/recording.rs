//! A debate's rows written back as a recording in the fixture format (`gavel export --format
//! recording`): the session, the turns round by round (each with its judge's ruling as
//! recorded), the similarity each decision recorded, the controller's decisions with their
//! signals, and the operator actions (timeouts among them) as action lines. The simulator plays
//! it to the same decisions, calibration reads the same signals and labels from it, and `gavel
//! check` accepts it.
//!
//! Debate content is untrusted: it is written exactly (JSON escapes every character that could
//! act on a terminal), and what the format cannot hold is left out and said, table and key.

use std::collections::BTreeSet;

use super::error::{Error, Result};
use super::fixture::{
    ActionSpec, DecisionSpec, Fixture, FixtureErrors, JudgeSpec, Record, RoundSpec, SessionSpec,
    TurnSpec,
};
use crate::audit::export::json;
use crate::domain::limits::clip;
use crate::domain::{ActionKind, Change, Debate, Judgment, OperatorAction, Reported, Turn};

/// A debate written as a recording.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The JSON Lines text.
    pub text: String,
    /// What was left out, with table and key.
    pub notes: Vec<String>,
    /// Why `gavel check` would refuse the text (rows that break the format's rules: a persona
    /// outside the roster, a round skipped), when it would.
    pub problems: Option<FixtureErrors>,
}

/// Writes `debate` as a recording; `source` names it in the problems `gavel check` would find.
/// A debate whose controller mode gavel does not know cannot be played, and is refused.
pub fn recording(debate: &Debate, source: &str) -> Result<Recording> {
    let mut writer = Writer {
        id: clip(&format!("{:?}", debate.session.id)),
        lines: Vec::new(),
        notes: Vec::new(),
    };
    writer.session(debate)?;
    for row in debate.rounds() {
        writer.round(debate, row.number, &row.turns, &row.judgments);
    }
    for change in &debate.unplaced {
        writer.note(format!(
            "a {} row in no round: left out ({})",
            change_kind(change),
            change.issues().join("; ")
        ));
    }
    let lines: Result<Vec<String>, _> = writer.lines.iter().map(json).collect();
    let text = lines.map_err(|cause| Error::Unwritable {
        debate: writer.id.clone(),
        cause,
    })?;
    let text = text
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
    let problems = Fixture::parse(source, &text).err();
    Ok(Recording {
        text,
        notes: writer.notes,
        problems,
    })
}

/// The table a row came from.
fn change_kind(change: &Change) -> &'static str {
    match change {
        Change::Session(_) => "debate_sessions",
        Change::Turn(_) => "debate_rounds",
        Change::Decision(_) => "debate_round_decisions",
        Change::Judgment(_) => "debate_round_judgments",
        Change::Action(_) => "debate_operator_actions",
        Change::Note(_) => "gavel_debate_notes",
    }
}

/// The records written so far, and what was left out.
struct Writer {
    /// The debate's id, quoted and clipped, for notes.
    id: String,
    lines: Vec<Record>,
    notes: Vec<String>,
}

impl Writer {
    fn note(&mut self, note: String) {
        self.notes.push(format!("debate {}: {note}", self.id));
    }

    fn session(&mut self, debate: &Debate) -> Result<()> {
        let session = &debate.session;
        let Some(controller_mode) = session.controller_mode.known() else {
            return Err(Error::UnknownMode {
                debate: self.id.clone(),
                mode: clip(&format!("{:?}", session.controller_mode.to_wire())),
            });
        };
        self.lines.push(Record::Session(SessionSpec {
            id: session.id.clone(),
            question: session.question.clone(),
            debate_type: session.debate_type.clone(),
            controller_mode,
            personas: session.personas.clone(),
            min_rounds: Some(session.min_rounds),
            max_rounds: Some(session.max_rounds).filter(|&n| n > 0),
            token_budget: session.token_budget,
            metadata: session.metadata.clone(),
        }));
        Ok(())
    }

    /// Round `number`'s lines: its turns with their judges, then its decision (and the
    /// similarity it recorded), then the action on it.
    fn round(&mut self, debate: &Debate, number: u32, turns: &[&Turn], judgments: &[&Judgment]) {
        let judges = self.judges(number, turns, judgments);
        for (turn, judge) in turns.iter().zip(judges) {
            self.lines.push(Record::Turn(turn_spec(turn, judge)));
        }
        let prior = debate.session.metadata.prior.is_some();
        if let Some(decision) = debate.decisions.get(&number) {
            let similarity = decision.signals.similarity;
            match (decision.decision.known(), turns.is_empty()) {
                (_, true) => self.note(format!(
                    "debate_round_decisions (round {number}): a decision of a round with no \
                     turns: left out"
                )),
                (None, _) => self.note(format!(
                    "debate_round_decisions (round {number}): decision {} is not one gavel \
                     knows: left out",
                    clip(&format!("{:?}", decision.decision.to_wire()))
                )),
                (Some(known), false) => {
                    if let Some(similarity) =
                        similarity.filter(|s| (0.0..=1.0).contains(s) && (number > 1 || prior))
                    {
                        self.lines.push(Record::Round(RoundSpec {
                            round: number,
                            similarity,
                        }));
                    }
                    self.lines.push(Record::Decision(DecisionSpec {
                        round: number,
                        decision: known,
                        signals: decision.signals.clone(),
                    }));
                }
            }
        }
        if let Some(action) = debate.actions.get(&number) {
            self.action(debate, number, action, turns.is_empty());
        }
    }

    fn action(&mut self, debate: &Debate, number: u32, action: &OperatorAction, no_turns: bool) {
        let key = format!("debate_operator_actions (round {number})");
        let Some(kind) = action.action.known().filter(|_| !no_turns) else {
            let why = if no_turns {
                "an action on a round with no turns".to_owned()
            } else {
                format!(
                    "action {} is not one gavel knows",
                    clip(&format!("{:?}", action.action.to_wire()))
                )
            };
            self.note(format!("{key}: {why}: left out"));
            return;
        };
        let decided = debate.decisions.get(&number).map(|d| &d.decision);
        let decision = match (kind, &action.decision) {
            (ActionKind::Escalate, _) => None,
            // The controller's own, as the format says it (an escalation among them).
            (ActionKind::Accept, standing) if Some(standing) == decided => None,
            (_, Reported::Known(decision)) => Some(*decision),
            (ActionKind::Accept, Reported::Unknown(_)) => None,
            (ActionKind::Override, Reported::Unknown(raw)) => {
                self.note(format!(
                    "{key}: an override to {} (not a decision gavel knows): left out",
                    clip(&format!("{raw:?}"))
                ));
                return;
            }
        };
        self.lines.push(Record::Action(ActionSpec {
            round: number,
            action: kind,
            decision,
            persona: action.persona.clone(),
            operator: action.operator.clone(),
            note: action.note.clone(),
        }));
    }

    /// The judge of each of a round's turns (in the turns' order): a persona's judgments go to
    /// its turns in the round in order, each table in its own row id order (the tables number
    /// their rows apart, so one's ids say nothing of the other's).
    fn judges(
        &mut self,
        number: u32,
        turns: &[&Turn],
        judgments: &[&Judgment],
    ) -> Vec<Option<JudgeSpec>> {
        let mut judges: Vec<Option<JudgeSpec>> = vec![None; turns.len()];
        let mut judged = BTreeSet::new();
        for judgment in judgments {
            let key = format!("debate_round_judgments (id {})", judgment.id);
            let turn = turns
                .iter()
                .enumerate()
                .find(|(at, t)| t.agent_persona == judgment.agent_persona && !judged.contains(at));
            let Some((at, _)) = turn else {
                self.note(format!(
                    "{key}: no turn of {} in round {number} left to judge: left out",
                    clip(&format!("{:?}", judgment.agent_persona))
                ));
                continue;
            };
            let score = judgment
                .score
                .filter(|s| s.is_finite() && (0.0..=1.0).contains(s));
            if let Some(raw) = judgment.score.filter(|_| score.is_none()) {
                self.note(format!("{key}: score {raw} is outside 0..1: left out"));
            }
            let ruling = judgment.decision.known();
            if ruling.is_none() {
                self.note(format!(
                    "{key}: ruling {} is not one gavel knows: left out",
                    clip(&format!("{:?}", judgment.decision.to_wire()))
                ));
                if score.is_none() {
                    continue;
                }
            }
            judged.insert(at);
            judges[at] = Some(JudgeSpec {
                score,
                flags: Vec::new(),
                reasons: judgment.reasons.clone(),
                model: judgment.judge_model.clone(),
                pmids: judgment.pmids.clone(),
                ruling,
            });
        }
        judges
    }
}

/// A turn's line, with its judge.
fn turn_spec(turn: &Turn, judge: Option<JudgeSpec>) -> TurnSpec {
    TurnSpec {
        round: turn.round_number,
        persona: turn.agent_persona.clone(),
        tokens: turn.tokens_used,
        content: turn.content.clone(),
        phase: turn.metadata.phase.as_ref().and_then(Reported::known),
        aspect: turn.metadata.aspect.clone(),
        replaces: turn.metadata.replaces.clone(),
        cruxes: turn.metadata.cruxes.clone(),
        judge,
        line: 0,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::Config;
    use crate::simulate::play_in_shadow;

    fn hostile() -> Debate {
        let fixture = Fixture::bundled().unwrap().remove(0);
        let mut debate = play_in_shadow(&fixture, Arc::new(Config::default()));
        debate.session.question = "clear\u{1b}[2J\u{202e}".to_owned();
        debate.turns[0].content = "\u{1b}]0;pwned\u{7}".to_owned();
        debate.judgments[0].score = Some(f64::NAN);
        debate.judgments[1].decision = Reported::parse("banish");
        debate.judgments[2].agent_persona = "nobody".to_owned();
        debate
    }

    #[test]
    fn hostile_rows_are_written_exactly_or_left_out_and_said() {
        let written = recording(&hostile(), "hostile.jsonl").unwrap();
        assert!(!written.text.contains('\u{1b}') && !written.text.contains('\u{202e}'));
        let fixture = Fixture::parse("hostile.jsonl", &written.text).unwrap();
        assert_eq!(fixture.session.question, "clear\u{1b}[2J\u{202e}");
        assert_eq!(fixture.turns[0].content, "\u{1b}]0;pwned\u{7}");
        assert!(written.problems.is_none());
        let notes = written.notes.join("\n");
        assert!(notes.contains("score NaN is outside 0..1"), "{notes}");
        assert!(
            notes.contains("ruling \"banish\" is not one gavel knows"),
            "{notes}"
        );
        assert!(notes.contains("no turn of \"nobody\""), "{notes}");
    }

    #[test]
    fn an_unknown_controller_mode_is_refused_by_name() {
        let mut debate = hostile();
        debate.session.controller_mode = Reported::parse("turbo\u{1b}");
        let refused = recording(&debate, "x").unwrap_err().to_string();
        assert!(
            refused.contains("controller_mode \"turbo\\u{1b}\""),
            "{refused}"
        );
    }

    #[test]
    fn rows_the_format_cannot_take_are_written_and_the_problems_said() {
        let mut debate = hostile();
        debate.turns[0].agent_persona = "stranger".to_owned();
        let written = recording(&debate, "odd.jsonl").unwrap();
        let problems = written.problems.unwrap().to_string();
        assert!(
            problems.contains("odd.jsonl:2: persona \"stranger\""),
            "{problems}"
        );
    }
}
