//! A finished debate reduced to what a replay of the controller needs, round by round: the
//! signals (recorded where a decision row holds them, measured from the turns where not), the
//! format's own check, tokens spent, who had spoken, the verdict standing, and the operators'
//! labels. Nothing here depends on a threshold, so one record serves every setting of a grid.
//! Which similarity a record holds is chosen per record ([`Measuring`]): the recorded one, or
//! every round measured again (lexical or semantic), so one grid can be read under each.

use crate::domain::{ActionKind, Debate, Decision, Reported, RoundRow, TIMEOUT_OPERATOR, Turn};
use crate::policy::{self, Convergence};
use crate::signals::{self, DebateSignals, Measure, RoundSignals, RoundText};

/// Where a replay's similarity comes from: `gavel calibrate --similarity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SimilaritySource {
    /// What each decision row recorded; measured with the configured measure where nothing is.
    Recorded,
    /// Every round with turns measured again with the TF-IDF cosine.
    Lexical,
    /// Every round with turns measured again with sentence embeddings.
    Semantic,
}

impl SimilaritySource {
    pub const ALL: [SimilaritySource; 3] = [
        SimilaritySource::Recorded,
        SimilaritySource::Lexical,
        SimilaritySource::Semantic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SimilaritySource::Recorded => "recorded",
            SimilaritySource::Lexical => "lexical",
            SimilaritySource::Semantic => "semantic",
        }
    }
}

impl std::str::FromStr for SimilaritySource {
    type Err = String;
    fn from_str(raw: &str) -> Result<Self, String> {
        SimilaritySource::ALL
            .into_iter()
            .find(|s| s.name() == raw.trim())
            .ok_or_else(|| format!("{raw:?}: expected recorded, lexical or semantic"))
    }
}

/// How a record's similarities are found: the measure for rounds measured from their turns,
/// and whether a similarity a decision row recorded is used instead.
#[derive(Debug, Clone)]
pub struct Measuring {
    pub measure: Measure,
    pub recorded_first: bool,
}

impl Measuring {
    /// Recorded similarities where present, `measure` elsewhere.
    pub fn recorded(measure: Measure) -> Measuring {
        Measuring {
            measure,
            recorded_first: true,
        }
    }

    /// Every round with turns measured with `measure`.
    pub fn remeasured(measure: Measure) -> Measuring {
        Measuring {
            measure,
            recorded_first: false,
        }
    }
}

/// What a replay needs of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundFacts {
    pub signals: RoundSignals,
    pub format_check: Option<Convergence>,
    /// Tokens spent by the end of this round, superseded turns included.
    pub tokens_after: u64,
    /// Personas who had spoken by the end of this round.
    pub spoken: Vec<String>,
    /// The latest verdict any round up to this one stated.
    pub standing_verdict: Option<String>,
    /// What the controller recorded for this round, by class.
    pub recorded: Option<Class>,
}

/// What an operator's action says the decision should have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Stop,
    Continue,
    Escalate,
}

impl Class {
    pub fn of(decision: Decision) -> Class {
        match decision {
            Decision::EscalateNewPersona => Class::Escalate,
            Decision::ContinueBaseline => Class::Continue,
            Decision::StopConverged | Decision::StopMaxRounds | Decision::StopSafety => Class::Stop,
        }
    }
}

/// An operator's accept or override of the decision after `round`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub round: u32,
    pub class: Class,
}

/// One finished debate, ready to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedDebate {
    pub id: String,
    pub min_rounds: u32,
    pub max_rounds: u32,
    pub token_budget: u64,
    pub roster: Vec<String>,
    /// A follow-up debate's prior conclusion, which round 1 is compared with.
    pub prior: Option<RoundSignals>,
    /// Round `r` at index `r - 1`: every round the debate actually ran.
    pub rounds: Vec<RoundFacts>,
    pub labels: Vec<Label>,
    /// What could not be read or used from the rows, with table and key.
    pub issues: Vec<String>,
}

impl RecordedDebate {
    /// The record as one of the debates of several databases: its id `CONTEXT:ID` (a context's
    /// name has no `:`, so the same id in two databases stays two debates) and each issue
    /// saying its context.
    pub fn in_context(self, context: &str) -> RecordedDebate {
        RecordedDebate {
            id: format!("{context}:{}", self.id),
            issues: self
                .issues
                .into_iter()
                .map(|issue| format!("context {context}: {issue}"))
                .collect(),
            ..self
        }
    }

    /// Reduces a debate's rows. Rounds run are the highest round any turn or decision names.
    pub fn from_debate(debate: &Debate, measuring: &Measuring) -> RecordedDebate {
        let session = &debate.session;
        let run = debate.latest_round();
        let mut issues: Vec<String> = debate.issues().map(str::to_owned).collect();
        let by_round = debate.rounds();
        let prior_text = session.metadata.prior.as_deref();
        let mut measured = Measured::new(prior_text, &by_round, measuring);
        let mut so_far = SoFar {
            tokens_from_turns: !debate.turns.is_empty(),
            ..SoFar::default()
        };
        let rounds = by_round
            .iter()
            .map(|row| {
                let turns = live_turns(row);
                let signals = measured.signals_of(row, &turns, &session.id, &mut issues);
                so_far.facts(row, &turns, signals)
            })
            .collect();
        RecordedDebate {
            id: session.id.clone(),
            min_rounds: session.min_rounds,
            max_rounds: session.max_rounds,
            token_budget: session.token_budget,
            roster: session.personas.clone(),
            prior: prior_text.map(|text| RoundSignals {
                verdict: signals::verdict(text),
                ..RoundSignals::default()
            }),
            rounds,
            labels: labels(debate, run, &mut issues),
            issues,
        }
    }

    /// Rounds the debate actually ran.
    pub fn rounds_run(&self) -> u32 {
        self.rounds.len() as u32
    }

    /// Tokens spent by the end of `round` (0 before round 1).
    pub fn tokens_after(&self, round: u32) -> u64 {
        match round {
            0 => 0,
            r => self.rounds[r as usize - 1].tokens_after,
        }
    }

    /// The verdict standing at the end of `round`.
    pub(crate) fn verdict_after(&self, round: u32) -> Option<&str> {
        match round {
            0 => None,
            r => self.rounds[r as usize - 1].standing_verdict.as_deref(),
        }
    }
}

/// A round's turns that still stand (a superseded turn was replaced).
fn live_turns<'a>(row: &RoundRow<'a>) -> Vec<&'a Turn> {
    row.turns
        .iter()
        .copied()
        .filter(|t| !t.superseded)
        .collect()
}

/// A debate's rounds, fed to its signals only as far as a round without recorded signals needs:
/// a debate whose decisions hold their signals is never read again (unless its similarities
/// are measured again).
struct Measured<'a> {
    /// The prior conclusion first, when there is one, then round 1, 2, ...
    rounds: Vec<RoundText<'a>>,
    /// 1 when the rounds start with a prior conclusion.
    offset: usize,
    recorded_first: bool,
    fed: usize,
    signals: DebateSignals,
    latest: RoundSignals,
}

impl<'a> Measured<'a> {
    fn new(prior: Option<&'a str>, by_round: &[RoundRow<'a>], measuring: &Measuring) -> Self {
        let prior = prior.map(|text| RoundText {
            turns: vec![text],
            precomputed_similarity: None,
        });
        let rounds = by_round.iter().map(|row| RoundText {
            turns: live_turns(row).iter().map(|t| t.content.as_str()).collect(),
            precomputed_similarity: row
                .decision
                .and_then(|d| d.signals.similarity)
                .filter(|_| measuring.recorded_first),
        });
        Measured {
            offset: usize::from(prior.is_some()),
            rounds: prior.into_iter().chain(rounds).collect(),
            recorded_first: measuring.recorded_first,
            fed: 0,
            signals: DebateSignals::new(measuring.measure.similarity()),
            latest: RoundSignals::default(),
        }
    }

    /// The signals of round `number`, feeding the rounds before it first; rounds are asked for
    /// in order.
    fn upto(&mut self, number: u32) -> RoundSignals {
        let index = self.offset + number as usize - 1;
        while self.fed <= index {
            self.latest = self.signals.push(&self.rounds[self.fed]);
            self.fed += 1;
        }
        self.latest.clone()
    }

    /// The signals of `row`, whose standing turns are `turns`: those its decision recorded,
    /// else measured from its turns; its similarity measured again unless recorded ones come
    /// first. What cannot be had is said in `issues`.
    fn signals_of(
        &mut self,
        row: &RoundRow,
        turns: &[&Turn],
        session_id: &str,
        issues: &mut Vec<String>,
    ) -> RoundSignals {
        let round = row.number;
        let recorded = row.decision.map(|d| &d.signals);
        let mut signals = match recorded {
            Some(s) if s.new_claims.is_some() && s.verdict_split.is_some() => RoundSignals {
                similarity: s.similarity,
                similarity_model: s.similarity_model.clone(),
                verdict: s.verdict.clone(),
                verdict_split: s.verdict_split.unwrap_or_default(),
                new_claims: s.new_claims.unwrap_or_default(),
                open_disputes: s.open_disputes,
            },
            _ if !turns.is_empty() => self.upto(round),
            _ => {
                issues.push(format!(
                    "debate_round_decisions ({session_id}, round {round}): no signals recorded \
                     and no turns to measure them from; the round counts as not converging"
                ));
                RoundSignals {
                    similarity: recorded.and_then(|s| s.similarity),
                    similarity_model: recorded.and_then(|s| s.similarity_model.clone()),
                    ..RoundSignals::default()
                }
            }
        };
        if !self.recorded_first && !turns.is_empty() {
            let measured = self.upto(round);
            signals.similarity = measured.similarity;
            signals.similarity_model = measured.similarity_model;
        }
        signals
    }
}

/// What a debate's rounds add up to, as they are reduced in order.
#[derive(Default)]
struct SoFar {
    /// Tokens are counted from the turns when the debate has any, else from what decisions
    /// recorded.
    tokens_from_turns: bool,
    spoken: Vec<String>,
    standing_verdict: Option<String>,
    recorded_tokens: u64,
    spent: u64,
}

impl SoFar {
    /// The facts of `row`, whose standing turns are `turns` and signals `signals`.
    fn facts(&mut self, row: &RoundRow, turns: &[&Turn], signals: RoundSignals) -> RoundFacts {
        let format_check = if turns.is_empty() {
            signals.open_disputes.map(|open| Convergence {
                converged: open == 0,
                reason: format!("{open} open DISPUTE/MISSED items recorded"),
            })
        } else {
            let latest: Vec<(&str, &str)> = turns
                .iter()
                .map(|t| (t.agent_persona.as_str(), t.content.as_str()))
                .collect();
            policy::format_check(&latest)
        };
        for turn in &row.turns {
            if !self.spoken.contains(&turn.agent_persona) {
                self.spoken.push(turn.agent_persona.clone());
            }
            self.spent += u64::from(turn.tokens_used);
        }
        // Spent tokens never go down, whatever a writer recorded.
        if let Some(tokens) = row.decision.and_then(|d| d.signals.tokens_used) {
            self.recorded_tokens = self.recorded_tokens.max(tokens);
        }
        if signals.verdict.is_some() {
            self.standing_verdict = signals.verdict.clone();
        }
        RoundFacts {
            signals,
            format_check,
            tokens_after: if self.tokens_from_turns {
                self.spent
            } else {
                self.recorded_tokens
            },
            spoken: self.spoken.clone(),
            standing_verdict: self.standing_verdict.clone(),
            recorded: row.decision.and_then(|d| d.decision.known()).map(Class::of),
        }
    }
}

/// The operators' accepts, overrides and escalations of rounds the debate ran; gated timeouts
/// are the controller's own decision standing, not a label.
pub fn labels(debate: &Debate, run: u32, issues: &mut Vec<String>) -> Vec<Label> {
    let mut labels = Vec::new();
    for action in debate.actions.values() {
        if action.operator == TIMEOUT_OPERATOR || action.round_index > run {
            continue;
        }
        let decision = match (&action.action, &action.decision) {
            (Reported::Known(ActionKind::Escalate), _) => Some(Decision::EscalateNewPersona),
            (Reported::Known(_), Reported::Known(decision)) => Some(*decision),
            (Reported::Known(ActionKind::Accept), Reported::Unknown(_)) => debate
                .decisions
                .get(&action.round_index)
                .and_then(|d| d.decision.known()),
            _ => None,
        };
        match decision {
            Some(decision) => labels.push(Label {
                round: action.round_index,
                class: Class::of(decision),
            }),
            None => issues.push(format!(
                "debate_operator_actions ({}, round {}): action {} with decision {} is not a \
                 label gavel can read; not counted",
                action.session_id, action.round_index, action.action, action.decision
            )),
        }
    }
    labels
}
