//! One recorded debate played through the controller and the judge, as a state machine.
//!
//! Mode rules (docs/database-contract.md, "Modes"): `off` plays the fixed loop with no
//! decisions; `enabled` applies each decision at once; `shadow` records decisions as
//! counterfactuals while the fixed loop runs on; `gated` waits after each decision for an
//! operator (or the timeout). In every mode an operator override or escalation of the latest
//! decision applies at the next round boundary, and each decision is resolved at most once.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};

use super::fixture::{Fixture, TurnSpec};
use crate::config::Config;
use crate::domain::{
    ActionKind, Arm, Change, ControllerDecision, ControllerMode, Debate, Decision, JudgeDecision,
    Judgment, OperatorAction, Reported, Session, SessionStatus, TIMEOUT_OPERATOR, Turn,
    TurnMetadata,
};
use crate::policy::{self, ControllerState, JudgeInput, JudgeOutcome};
use crate::signals::{self, DebateSignals, RoundSignals, RoundText};

/// Row ids shared by every run writing to one store, as a database sequence would hand out.
#[derive(Debug, Clone, Default)]
pub struct Ids(Arc<AtomicU64>);

impl Ids {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Where a run's timestamps come from: the system clock unless [`DebateRun::with_time`] gives
/// another (a test's fixed or stepping instants), so the state machine itself reads no time.
#[derive(Clone)]
pub struct TimeSource(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl TimeSource {
    /// Each call answers `now`.
    pub fn new(now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> TimeSource {
        TimeSource(Arc::new(now))
    }

    /// The system clock.
    pub fn system() -> TimeSource {
        TimeSource::new(Utc::now)
    }

    fn now(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl std::fmt::Debug for TimeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TimeSource")
    }
}

/// How a round's turns went.
enum Turns {
    Played,
    /// No persona at the table had a turn in the recording.
    NonePlayed,
    /// The judge aborted the debate (its session row is among the changes).
    Aborted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ready,
    Awaiting(u32),
    Finished,
}

/// A recorded debate in play.
#[derive(Debug)]
pub struct DebateRun {
    fixture: Fixture,
    config: Arc<Config>,
    ids: Ids,
    time: TimeSource,
    session: Session,
    phase: Phase,
    round: u32,
    turns: Vec<Turn>,
    /// Signals per round; index 0 holds the prior's (empty without one).
    signals: Vec<RoundSignals>,
    /// The debate so far as the signals read it, one round at a time.
    measures: DebateSignals,
    latest: Option<ControllerDecision>,
    /// Personas who speak each round.
    joined: Vec<String>,
    /// Personas who have spoken or been brought in.
    used: Vec<String>,
    /// Warning preambles waiting for each warned persona's next turn.
    warnings: HashMap<String, String>,
    last_ruling: Option<JudgeDecision>,
    resolved: BTreeSet<u32>,
    /// An operator's override or escalation, applied at the next round boundary.
    at_boundary: Option<OperatorAction>,
}

impl DebateRun {
    /// Prepares a run stamping rows with the system clock; nothing is written until
    /// [`DebateRun::start`].
    pub fn new(fixture: Fixture, config: Arc<Config>, ids: Ids) -> DebateRun {
        let spec = &fixture.session;
        let joined: Vec<String> = fixture
            .round(1)
            .filter(|t| t.replaces.is_none())
            .map(|t| t.persona.clone())
            .collect();
        let prior = spec.metadata.prior.as_deref().map(|text| RoundSignals {
            verdict: signals::verdict(text),
            ..RoundSignals::default()
        });
        let mut measures = DebateSignals::new(config.signals.measure().similarity());
        if let Some(text) = spec.metadata.prior.as_deref() {
            measures.push(&RoundText {
                turns: vec![text],
                precomputed_similarity: None,
            });
        }
        let session = Session {
            id: spec.id.clone(),
            question: spec.question.clone(),
            debate_type: spec.debate_type.clone(),
            status: SessionStatus::Running.into(),
            controller_mode: spec.controller_mode.into(),
            num_rounds: None,
            min_rounds: spec.min_rounds.unwrap_or(config.controller.min_rounds),
            max_rounds: spec
                .max_rounds
                .unwrap_or_else(|| config.controller.max_rounds_for(&spec.debate_type)),
            token_budget: spec.token_budget,
            tokens_used: 0,
            personas: spec.personas.clone(),
            metadata: spec.metadata.clone(),
            created_at: None,
            finished_at: None,
            settings: None,
            gated_timeout: Some(config.simulator.gated_timeout()),
            issues: Vec::new(),
        };
        DebateRun {
            used: joined.clone(),
            joined,
            fixture,
            config,
            ids,
            time: TimeSource::system(),
            session,
            phase: Phase::Ready,
            round: 0,
            turns: Vec::new(),
            signals: vec![prior.unwrap_or_default()],
            measures,
            latest: None,
            warnings: HashMap::new(),
            last_ruling: None,
            resolved: BTreeSet::new(),
            at_boundary: None,
        }
    }

    /// The run with its rows stamped by `time` instead of the system clock.
    pub fn with_time(mut self, time: TimeSource) -> DebateRun {
        self.time = time;
        self
    }

    /// The run stamped with the controller settings' version it was given at its start and
    /// the arm of the rollout it fell in (`debate_sessions.settings_version`, `settings_arm`).
    pub fn given(mut self, settings: Option<(i64, Arm)>) -> DebateRun {
        self.session.settings = settings;
        self
    }

    /// Opens the debate: its session row.
    pub fn start(&mut self) -> Vec<Change> {
        self.session.created_at = Some(self.time.now());
        vec![Change::Session(self.session.clone())]
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    fn mode(&self) -> ControllerMode {
        self.fixture.session.controller_mode
    }

    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// The round whose decision a gated debate is waiting on.
    pub fn awaiting(&self) -> Option<u32> {
        match self.phase {
            Phase::Awaiting(round) => Some(round),
            _ => None,
        }
    }

    /// The action recorded when a gated wait runs out: the controller's decision stands.
    pub fn timeout_action(&self) -> Option<OperatorAction> {
        let round = self.awaiting()?;
        let latest = self.latest.as_ref()?;
        Some(OperatorAction {
            session_id: self.session.id.clone(),
            round_index: round,
            action: ActionKind::Accept.into(),
            decision: latest.decision.clone(),
            persona: latest.signals.escalate_persona.clone(),
            operator: TIMEOUT_OPERATOR.to_owned(),
            role: None,
            note: Some("no operator resolution before the gated timeout".to_owned()),
            created_at: None,
            issues: Vec::new(),
        })
    }

    /// Takes an operator action (or a timeout) that a store has recorded. Actions for other
    /// debates, for rounds already resolved, or for anything but the latest decision are ignored.
    pub fn resolve(&mut self, action: &OperatorAction) -> Vec<Change> {
        let latest_round = self.latest.as_ref().map(|d| d.round_index);
        if action.session_id != self.session.id
            || Some(action.round_index) != latest_round
            || !self.resolved.insert(action.round_index)
        {
            return Vec::new();
        }
        match self.phase {
            Phase::Awaiting(_) => {
                self.phase = Phase::Ready;
                let decision = self.standing_decision(action);
                self.carry_out(decision, action.persona.clone())
            }
            Phase::Ready if action.action != Reported::Known(ActionKind::Accept) => {
                self.at_boundary = Some(action.clone());
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn standing_decision(&self, action: &OperatorAction) -> Decision {
        action
            .decision
            .known()
            .or_else(|| self.latest.as_ref().and_then(|d| d.decision.known()))
            .unwrap_or(Decision::ContinueBaseline)
    }

    /// Plays the next round: its turns and rulings, then the controller's decision.
    pub fn play_round(&mut self) -> Vec<Change> {
        if self.phase != Phase::Ready {
            return Vec::new();
        }
        if let Some(action) = self.at_boundary.take() {
            let decision = self.standing_decision(&action);
            let changes = self.carry_out(decision, action.persona.clone());
            if self.is_finished() {
                return changes;
            }
        }
        let round = self.round + 1;
        if round > self.session.max_rounds || round > self.fixture.last_round() {
            return vec![self.finish(SessionStatus::Completed)];
        }
        self.round = round;

        let mut changes = Vec::new();
        match self.play_turns(round, &mut changes) {
            Turns::Aborted => return changes,
            Turns::NonePlayed => {
                self.round -= 1;
                changes.push(self.finish(SessionStatus::Completed));
                return changes;
            }
            Turns::Played => {}
        }
        let signals = self.measure_round(round);
        self.signals.push(signals);
        self.conclude(round, &mut changes);
        changes
    }

    /// Plays round `round`'s turns of the personas at the table, each judged; a turn the judge
    /// halts is superseded and its replacement (if the recording has one) plays.
    fn play_turns(&mut self, round: u32, changes: &mut Vec<Change>) -> Turns {
        let specs: Vec<TurnSpec> = self.fixture.round(round).cloned().collect();
        let mut halted: Vec<String> = Vec::new();
        let mut played = Turns::NonePlayed;
        for spec in &specs {
            let plays = match &spec.replaces {
                Some(replaced) => halted.contains(replaced),
                None => self.joined.contains(&spec.persona),
            };
            if !plays {
                continue;
            }
            played = Turns::Played;
            halted.retain(|p| Some(p) != spec.replaces.as_ref());
            self.play_turn(spec, changes);
            match self.judge_turn(spec, changes) {
                Some(JudgeDecision::Abort) => {
                    changes.push(self.finish(SessionStatus::Aborted));
                    return Turns::Aborted;
                }
                Some(JudgeDecision::HaltReplace) => {
                    let turn = self.turns.last_mut().expect("a turn was just played");
                    turn.superseded = true;
                    changes.push(Change::Turn(turn.clone()));
                    halted.push(spec.persona.clone());
                }
                Some(JudgeDecision::Warn | JudgeDecision::Continue) | None => {}
            }
        }
        played
    }

    /// After round `round` was played and measured: the controller's decision, carried out as
    /// the mode says, and the operator's recorded action on it.
    fn conclude(&mut self, round: u32, changes: &mut Vec<Change>) {
        let last = round >= self.session.max_rounds || round >= self.fixture.last_round();
        if self.mode() == ControllerMode::Off {
            if last {
                changes.push(self.finish(SessionStatus::Completed));
            }
            return;
        }
        let decision = self.decide(round);
        changes.push(Change::Decision(decision.clone()));
        let outcome = decision
            .decision
            .known()
            .unwrap_or(Decision::ContinueBaseline);
        let persona = decision.signals.escalate_persona.clone();
        self.latest = Some(decision);
        match self.mode() {
            ControllerMode::Gated => self.phase = Phase::Awaiting(round),
            ControllerMode::Enabled => changes.extend(self.carry_out(outcome, persona)),
            ControllerMode::Shadow | ControllerMode::Off => {
                if last {
                    changes.push(self.finish(SessionStatus::Completed));
                }
            }
        }
        if let Some(action) = self.recorded_action(round) {
            changes.push(Change::Action(action.clone()));
            changes.extend(self.resolve(&action));
        }
    }

    /// The operator action the recording holds for this round's decision.
    fn recorded_action(&self, round: u32) -> Option<OperatorAction> {
        let spec = self.fixture.actions.get(&round)?;
        let latest = self.latest.as_ref()?;
        Some(OperatorAction {
            session_id: self.session.id.clone(),
            round_index: round,
            action: spec.action.into(),
            decision: match spec.action {
                ActionKind::Escalate => Decision::EscalateNewPersona.into(),
                _ => spec
                    .decision
                    .map_or_else(|| latest.decision.clone(), Reported::Known),
            },
            persona: spec.persona.clone(),
            operator: spec.operator.clone(),
            role: None,
            note: spec.note.clone(),
            created_at: Some(self.time.now()),
            issues: Vec::new(),
        })
    }

    fn play_turn(&mut self, spec: &TurnSpec, changes: &mut Vec<Change>) {
        let turn = Turn {
            id: self.ids.next(),
            session_id: self.session.id.clone(),
            round_number: spec.round,
            agent_persona: spec.persona.clone(),
            content: spec.content.clone(),
            tokens_used: spec.tokens,
            superseded: false,
            metadata: TurnMetadata {
                phase: spec.phase.map(Reported::Known),
                aspect: spec.aspect.clone(),
                judge_warning: self.warnings.remove(&spec.persona),
                replaces: spec.replaces.clone(),
                cruxes: spec.cruxes.clone(),
                other: Default::default(),
            },
            created_at: Some(self.time.now()),
            issues: Vec::new(),
        };
        if !self.used.contains(&spec.persona) {
            self.used.push(spec.persona.clone());
        }
        self.session.tokens_used += u64::from(spec.tokens);
        let metadata = &mut self.session.metadata;
        if let Some(price) = metadata.usd_per_1k_tokens {
            metadata.cost_usd = Some(self.session.tokens_used as f64 / 1000.0 * price);
        }
        self.turns.push(turn.clone());
        changes.push(Change::Turn(turn));
        changes.push(Change::Session(self.session.clone()));
    }

    fn judge_turn(&mut self, spec: &TurnSpec, changes: &mut Vec<Change>) -> Option<JudgeDecision> {
        let judged = spec.judge.as_ref()?;
        let outcome = match (judged.ruling, judged.score) {
            (Some(decision), _) => JudgeOutcome {
                decision,
                reasons: Vec::new(),
            },
            (None, score) => policy::judge(
                &JudgeInput {
                    // A recording without a ruling has a score (checked on reading).
                    score: score.unwrap_or_default(),
                    flags: &judged.flags,
                    pmids: &judged.pmids,
                },
                self.last_ruling,
                &self.config.judge,
            ),
        };
        self.last_ruling = Some(outcome.decision);
        if outcome.decision == JudgeDecision::Warn {
            self.warnings.insert(
                spec.persona.clone(),
                format!(
                    "The judge warned your round {} turn: {}. Stay on the question and add new evidence.",
                    spec.round,
                    if outcome.reasons.is_empty() {
                        judged.reasons.join("; ")
                    } else {
                        outcome.reasons.join("; ")
                    }
                ),
            );
        }
        let mut reasons = judged.reasons.clone();
        reasons.extend(outcome.reasons);
        changes.push(Change::Judgment(Judgment {
            id: self.ids.next(),
            session_id: self.session.id.clone(),
            round_index: spec.round,
            agent_persona: spec.persona.clone(),
            decision: outcome.decision.into(),
            score: judged.score,
            reasons,
            judge_model: judged.model.clone(),
            pmids: judged.pmids.clone(),
            created_at: Some(self.time.now()),
            issues: Vec::new(),
        }));
        Some(outcome.decision)
    }

    fn measure_round(&mut self, round: u32) -> RoundSignals {
        let turns = live_turns(&self.turns, round)
            .map(|t| t.content.as_str())
            .collect();
        self.measures.push(&RoundText {
            turns,
            precomputed_similarity: self.fixture.similarity.get(&round).copied(),
        })
    }

    /// The controller's decision after `round`: the recording's, when it holds one, else
    /// gavel's controller's.
    fn decide(&self, round: u32) -> ControllerDecision {
        if let Some(recorded) = self.fixture.decisions.get(&round) {
            return ControllerDecision {
                session_id: self.session.id.clone(),
                round_index: round,
                decision: recorded.decision.into(),
                signals: recorded.signals.clone(),
                decided_at: Some(self.time.now()),
                issues: Vec::new(),
            };
        }
        let latest: Vec<(&str, &str)> = live_turns(&self.turns, round)
            .map(|t| (t.agent_persona.as_str(), t.content.as_str()))
            .collect();
        let format_check = policy::format_check(&latest);
        let outcome = policy::should_continue(
            &ControllerState {
                round,
                current: &self.signals[round as usize],
                previous: (round > 1 || self.session.metadata.prior.is_some())
                    .then(|| &self.signals[round as usize - 1]),
                format_check: format_check.as_ref(),
                min_rounds: self.session.min_rounds,
                max_rounds: self.session.max_rounds,
                tokens_used: self.session.tokens_used,
                token_budget: self.session.token_budget,
                roster: &self.session.personas,
                used_personas: &self.used,
            },
            &self.config.controller,
        );
        ControllerDecision {
            session_id: self.session.id.clone(),
            round_index: round,
            decision: outcome.decision.into(),
            signals: outcome.signals,
            decided_at: Some(self.time.now()),
            issues: Vec::new(),
        }
    }

    /// Makes a decision stand: a stop ends the debate, an escalation brings its persona in
    /// from the next round.
    fn carry_out(&mut self, decision: Decision, persona: Option<String>) -> Vec<Change> {
        if decision.stops() {
            return vec![self.finish(SessionStatus::Completed)];
        }
        if decision == Decision::EscalateNewPersona
            && let Some(persona) = persona
        {
            if !self.joined.contains(&persona) {
                self.joined.push(persona.clone());
            }
            if !self.used.contains(&persona) {
                self.used.push(persona);
            }
        }
        if self.round >= self.fixture.last_round() {
            return vec![self.finish(SessionStatus::Completed)];
        }
        Vec::new()
    }

    fn finish(&mut self, status: SessionStatus) -> Change {
        self.phase = Phase::Finished;
        self.session.status = status.into();
        self.session.num_rounds = Some(self.round);
        self.session.finished_at = Some(self.time.now());
        Change::Session(self.session.clone())
    }
}

/// The turns of `round` that were not superseded, in the order they were played.
fn live_turns(turns: &[Turn], round: u32) -> impl Iterator<Item = &Turn> {
    turns
        .iter()
        .filter(move |t| t.round_number == round && !t.superseded)
}

/// A fixture's rows as a shadow-mode orchestrator would have written them: every recorded round
/// runs (the controller's decisions are counterfactuals, the recording's operator actions are
/// labels), with the thresholds of `config`. What calibration replays. A recording that holds
/// the decisions as they were made (a debate exported from a database) plays in its own mode
/// instead, as it went: its turns are what ran, and its decisions made them run. It ends where
/// it waits for an operator no action line answers (a debate still running when exported).
pub fn play_in_shadow(fixture: &Fixture, config: Arc<Config>) -> Debate {
    let mut fixture = fixture.clone();
    if fixture.decisions.is_empty() {
        fixture.session.controller_mode = ControllerMode::Shadow;
    }
    let mut debate = Debate::new(&fixture.session.id);
    let mut run = DebateRun::new(fixture, config, Ids::default());
    run.start().into_iter().for_each(|c| debate.apply(c));
    while !run.is_finished() && run.awaiting().is_none() {
        run.play_round().into_iter().for_each(|c| debate.apply(c));
    }
    debate
}
