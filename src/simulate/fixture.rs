//! Fixture files: recorded debates the simulator plays, in JSON Lines.
//!
//! One JSON object per line, blank lines ignored. The first record is the session; then turns in
//! the order they were spoken; optional round records carry a precomputed similarity; optional
//! action records carry an operator's resolution of a round's decision (a shadow week's labels).
//!
//! ```text
//! {"session": {"id": "...", "question": "...", "debate_type": "standard", "controller_mode": "gated",
//!              "personas": ["theorist", "skeptic", ...], "token_budget": 60000}}
//! {"turn": {"round": 1, "persona": "theorist", "tokens": 1400, "content": "...",
//!           "judge": {"score": 0.82, "flags": [], "reasons": [], "model": "...", "pmids": []}}}
//! {"round": {"round": 2, "similarity": 0.93}}
//! {"action": {"round": 2, "action": "override", "decision": "continue_baseline", "operator": "ana"}}
//! {"decision": {"round": 2, "decision": "stop_converged", "signals": {"similarity": 0.93, ...}}}
//! ```
//!
//! A recording exported from a database (`gavel export --format recording`) also carries what
//! was decided as it was recorded: each judge's `ruling` and the controller's `decision` records
//! stand instead of what gavel's own judge policy and controller would rule.
//!
//! Every problem is reported as `file:line: what is wrong`, all of them at once; a file that
//! cannot be read as `file: cannot read (why)`. Wherever recordings are named, a folder stands for
//! the `*.jsonl` files directly in it ([`Fixture::load_each`]).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::limits::{agents, clip, tokens};
use crate::domain::{
    ActionKind, ControllerMode, Crux, Decision, Disagreement, JudgeDecision, Limits, Phase,
    PmidCheck, Reported, SessionMetadata, Signals,
};
use crate::policy::JudgeFlag;

/// `(source, text)` of a file in `fixtures/`, embedded in the binary.
macro_rules! bundled {
    ($name:literal) => {
        (
            concat!("fixtures/", $name),
            include_str!(concat!("../../fixtures/", $name)),
        )
    };
}

/// The fixtures that ship inside the binary: the demo's default, in the order it lists them.
const BUNDLED: &[(&str, &str)] = &[
    bundled!("gated_converges_round3.jsonl"),
    bundled!("review_disputes.jsonl"),
    bundled!("escalation_new_persona.jsonl"),
    bundled!("budget_safety.jsonl"),
    bundled!("judge_interventions.jsonl"),
    bundled!("panel_wastewater.jsonl"),
    bundled!("never_converges.jsonl"),
    bundled!("followup_min_rounds.jsonl"),
    bundled!("shadow_week_salt.jsonl"),
];

/// The session line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    pub id: String,
    pub question: String,
    #[serde(default = "standard")]
    pub debate_type: String,
    pub controller_mode: ControllerMode,
    /// The roster. Personas that speak in round 1 open the debate; the others wait to be
    /// brought in by an escalation.
    pub personas: Vec<String>,
    pub min_rounds: Option<u32>,
    pub max_rounds: Option<u32>,
    pub token_budget: u64,
    #[serde(default)]
    pub metadata: SessionMetadata,
}

fn standard() -> String {
    "standard".to_owned()
}

/// What the judge model reported on a turn; the judge policy turns it into a ruling.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    /// Needed unless the ruling is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<JudgeFlag>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pmids: Vec<PmidCheck>,
    /// The ruling as a judge recorded it: it stands instead of gavel's judge policy's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ruling: Option<JudgeDecision>,
}

/// A turn line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnSpec {
    pub round: u32,
    pub persona: String,
    pub tokens: u32,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aspect: Option<String>,
    /// Played only when the judge halted this persona's turn in the same round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// Cruxes this turn names (panel debates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cruxes: Vec<Crux>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSpec>,
    /// The 1-based line of the file this turn came from.
    #[serde(skip)]
    pub line: usize,
}

/// A round line: a similarity to the previous round computed by an orchestrator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoundSpec {
    pub round: u32,
    pub similarity: f64,
}

/// An action line: how an operator resolved the controller's decision after a round.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    pub round: u32,
    pub action: ActionKind,
    /// The decision that stands; for accept, the controller's own when left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// For escalate: the persona brought in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    pub operator: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A decision line: the controller's decision after a round as an orchestrator recorded it,
/// with the signals it recorded; it stands instead of gavel's controller's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionSpec {
    pub round: u32,
    pub decision: Decision,
    #[serde(default)]
    pub signals: Signals,
}

/// One line of a recording.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum Record {
    Session(SessionSpec),
    Turn(TurnSpec),
    Round(RoundSpec),
    Action(ActionSpec),
    Decision(DecisionSpec),
}

/// A validated recorded debate.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Where it came from, as shown in errors.
    pub source: String,
    pub session: SessionSpec,
    pub turns: Vec<TurnSpec>,
    /// Precomputed similarity per round.
    pub similarity: BTreeMap<u32, f64>,
    /// Recorded operator actions, by the round whose decision they resolve.
    pub actions: BTreeMap<u32, ActionSpec>,
    /// Recorded controller decisions, by round.
    pub decisions: BTreeMap<u32, DecisionSpec>,
}

/// One problem in a fixture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureError {
    pub source: String,
    /// The 1-based line at fault; `None` for the file (or folder) as a whole.
    pub line: Option<usize>,
    pub message: String,
}

impl FixtureError {
    /// A problem with the file or folder `path` as a whole.
    fn whole(path: &Path, message: String) -> FixtureError {
        FixtureError {
            source: path.display().to_string(),
            line: None,
            message,
        }
    }
}

impl fmt::Display for FixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

/// Every problem found in a fixture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureErrors(pub Vec<FixtureError>);

impl fmt::Display for FixtureErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for FixtureErrors {}

impl Fixture {
    /// Reads and validates a fixture file within the default [`Limits`].
    pub fn load(path: &Path) -> Result<Fixture, FixtureErrors> {
        Fixture::load_within(path, &Limits::default())
    }

    /// Reads and validates a fixture file; rounds and counts must lie within `limits`.
    pub(crate) fn load_within(path: &Path, limits: &Limits) -> Result<Fixture, FixtureErrors> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            FixtureErrors(vec![FixtureError::whole(
                path,
                format!("cannot read ({e})"),
            )])
        })?;
        Fixture::parse_within(&path.display().to_string(), &text, limits)
    }

    /// Reads and validates the recordings `paths` name, each on its own: a file as given, a
    /// folder as the `*.jsonl` files directly in it (not in its subfolders, not hidden ones), in
    /// name order. A folder that cannot be listed or holds no recording is one error naming it.
    /// A file named twice (itself and through its folder, say) is read once; a second file
    /// with a debate id already read is refused, naming the first: each debate plays once.
    pub fn load_each(paths: &[PathBuf], limits: &Limits) -> Vec<Result<Fixture, FixtureErrors>> {
        let mut read = BTreeSet::new();
        let mut debates: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut loaded = Vec::new();
        for path in paths {
            let files = match recordings(path) {
                Ok(files) => files,
                Err(e) => {
                    loaded.push(Err(FixtureErrors(vec![e])));
                    continue;
                }
            };
            for file in files {
                if !read.insert(std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone())) {
                    continue;
                }
                loaded.push(Fixture::load_within(&file, limits).and_then(|fixture| {
                    match debates.entry(fixture.session.id.clone()) {
                        Entry::Vacant(first) => {
                            first.insert(file);
                            Ok(fixture)
                        }
                        Entry::Occupied(first) => Err(FixtureErrors(vec![FixtureError {
                            source: file.display().to_string(),
                            line: Some(1),
                            message: format!(
                                "debate {} is also {}'s: each debate plays once",
                                clip(&format!("{:?}", fixture.session.id)),
                                first.get().display()
                            ),
                        }])),
                    }
                }));
            }
        }
        loaded
    }

    /// The fixtures bundled with gavel.
    pub fn bundled() -> Result<Vec<Fixture>, FixtureErrors> {
        BUNDLED
            .iter()
            .map(|(source, text)| Fixture::parse(source, text))
            .collect()
    }

    /// Parses and validates fixture text within the default [`Limits`]; `source` names it in
    /// errors.
    pub fn parse(source: &str, text: &str) -> Result<Fixture, FixtureErrors> {
        Fixture::parse_within(source, text, &Limits::default())
    }

    /// Parses and validates fixture text; rounds and counts must lie within `limits`.
    pub fn parse_within(
        source: &str,
        text: &str,
        limits: &Limits,
    ) -> Result<Fixture, FixtureErrors> {
        let mut check = Checker {
            source,
            limits: *limits,
            errors: Vec::new(),
        };
        let records = Records::read(text, &mut check);
        let Some((_, session)) = records.session else {
            // A first record that failed to parse has already been reported.
            if records.first_failed != Some(true) {
                check.fail(
                    1,
                    "no session record: the first line must be {\"session\": {...}}",
                );
            }
            return Err(FixtureErrors(check.errors));
        };
        let turns = records.turns;
        check.turns(&session, &turns);
        let played: BTreeSet<u32> = turns.iter().map(|t| t.round).collect();
        let similarity = check.similarities(&session, &played, records.rounds);
        let actions = check.actions(&session, &played, records.actions);
        let decisions = check.decisions(&session, &played, records.decisions);
        if check.errors.is_empty() {
            Ok(Fixture {
                source: source.to_owned(),
                session,
                turns,
                similarity,
                actions,
                decisions,
            })
        } else {
            check.errors.sort_by_key(|e| e.line);
            Err(FixtureErrors(check.errors))
        }
    }

    /// The turn lines of one round, in file order.
    pub fn round(&self, round: u32) -> impl Iterator<Item = &TurnSpec> {
        self.turns.iter().filter(move |t| t.round == round)
    }

    /// The last round the recording holds.
    pub fn last_round(&self) -> u32 {
        self.turns.iter().map(|t| t.round).max().unwrap_or(0)
    }
}

/// The recordings `path` stands for: itself, or when it is a folder the `*.jsonl` files directly
/// in it, hidden ones left out, sorted by name.
fn recordings(path: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let cannot_list = |e: std::io::Error| FixtureError::whole(path, format!("cannot read ({e})"));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(cannot_list)? {
        let file = entry.map_err(cannot_list)?.path();
        let hidden = file
            .file_name()
            .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."));
        if !hidden && file.extension().is_some_and(|e| e == "jsonl") && file.is_file() {
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(FixtureError::whole(
            path,
            "a folder with no recordings (no *.jsonl files in it)".to_owned(),
        ));
    }
    files.sort();
    Ok(files)
}

/// serde_json's message without its "at line 1 column N" tail, with the column in front.
fn json_error(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(head, _)| head);
    format!("column {}: {message}", e.column())
}

/// A recording's records by kind, each with its line, as read (only the session record is
/// checked on reading: the others are checked against it).
struct Records {
    session: Option<(usize, SessionSpec)>,
    turns: Vec<TurnSpec>,
    rounds: Vec<(usize, RoundSpec)>,
    actions: Vec<(usize, ActionSpec)>,
    decisions: Vec<(usize, DecisionSpec)>,
    /// Whether the first record failed to parse (`None`: there was no record).
    first_failed: Option<bool>,
}

impl Records {
    /// Reads every non-blank line of `text` as a record; what cannot be read goes to `check`.
    fn read(text: &str, check: &mut Checker) -> Records {
        let mut records = Records {
            session: None,
            turns: Vec::new(),
            rounds: Vec::new(),
            actions: Vec::new(),
            decisions: Vec::new(),
            first_failed: None,
        };
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<Record>(raw);
            records.first_failed.get_or_insert(parsed.is_err());
            match parsed {
                Ok(record) => records.file(line, record, check),
                Err(e) => check.fail(line, json_error(&e)),
            }
        }
        records
    }

    fn file(&mut self, line: usize, record: Record, check: &mut Checker) {
        match record {
            Record::Session(spec) => {
                if let Some((first, _)) = &self.session {
                    check.fail(
                        line,
                        format!("a second session record (the first is on line {first})"),
                    );
                    return;
                }
                if !self.turns.is_empty()
                    || !self.rounds.is_empty()
                    || !self.actions.is_empty()
                    || !self.decisions.is_empty()
                {
                    check.fail(
                        line,
                        "the session record must come before turns, rounds, actions and decisions",
                    );
                }
                check.session(line, &spec);
                self.session = Some((line, spec));
            }
            Record::Turn(mut spec) => {
                spec.line = line;
                self.turns.push(spec);
            }
            Record::Round(spec) => self.rounds.push((line, spec)),
            Record::Action(spec) => self.actions.push((line, spec)),
            Record::Decision(spec) => self.decisions.push((line, spec)),
        }
    }
}

struct Checker<'a> {
    source: &'a str,
    limits: Limits,
    errors: Vec<FixtureError>,
}

impl Checker<'_> {
    fn fail(&mut self, line: usize, message: impl Into<String>) {
        self.errors.push(FixtureError {
            source: self.source.to_owned(),
            line: Some(line),
            message: message.into(),
        });
    }

    fn session(&mut self, line: usize, spec: &SessionSpec) {
        if spec.id.trim().is_empty() || spec.id.chars().any(|c| c.is_control()) {
            self.fail(line, "session id must be non-empty printable text");
        }
        if spec.personas.is_empty() {
            self.fail(line, "personas must list at least one persona");
        }
        let unique: BTreeSet<&String> = spec.personas.iter().collect();
        if unique.len() != spec.personas.len() {
            self.fail(line, "personas lists a persona twice");
        }
        if spec.token_budget == 0 {
            self.fail(line, "token_budget must be positive");
        }
        if let (Some(min), Some(max)) = (spec.min_rounds, spec.max_rounds)
            && min > max
        {
            self.fail(line, format!("min_rounds {min} exceeds max_rounds {max}"));
        }
        if spec.max_rounds == Some(0) {
            self.fail(line, "max_rounds must be at least 1");
        }
        let counts = [
            (
                "min_rounds",
                spec.min_rounds
                    .map(|n| self.limits.rounds(n.into()).map(drop)),
            ),
            (
                "max_rounds",
                spec.max_rounds
                    .map(|n| self.limits.rounds(n.into()).map(drop)),
            ),
            (
                "metadata.agent_count",
                spec.metadata
                    .agent_count
                    .map(|n| agents(n.into()).map(drop)),
            ),
            (
                "token_budget",
                Some(tokens::<u64>(i64::try_from(spec.token_budget).unwrap_or(i64::MAX)).map(drop)),
            ),
        ];
        for (name, check) in counts {
            if let Some(Err(problem)) = check {
                self.fail(line, format!("{name}: {problem}"));
            }
        }
        for problem in spec.metadata.clone().leave_out_of_bounds() {
            self.fail(line, format!("metadata.{problem}"));
        }
    }

    /// Checks an action line; true when it is usable.
    fn action(
        &mut self,
        line: usize,
        session: &SessionSpec,
        played: &BTreeSet<u32>,
        spec: &ActionSpec,
    ) -> bool {
        let before = self.errors.len();
        if session.controller_mode == ControllerMode::Off {
            self.fail(
                line,
                "an action resolves a controller decision, and controller_mode off makes none",
            );
        }
        if !played.contains(&spec.round) {
            self.fail(line, format!("round {} has no turns", spec.round));
        }
        if spec.operator.trim().is_empty() || spec.operator.chars().any(char::is_control) {
            self.fail(line, "operator must be non-empty printable text");
        }
        match spec.action {
            ActionKind::Accept => {}
            ActionKind::Override if spec.decision.is_none() => {
                self.fail(line, "an override needs the decision that stands");
            }
            ActionKind::Override => {}
            ActionKind::Escalate => match &spec.persona {
                None => self.fail(line, "an escalate needs the persona brought in"),
                Some(p) if !session.personas.contains(p) => self.fail(
                    line,
                    format!("persona {p:?} is not in the session's personas"),
                ),
                Some(_) => {}
            },
        }
        if spec.action != ActionKind::Escalate
            && spec.decision == Some(Decision::EscalateNewPersona)
        {
            self.fail(
                line,
                "an escalation is recorded as action escalate, with its persona",
            );
        }
        self.errors.len() == before
    }

    /// Checks the cruxes a turn names: a known type, a claim, and sides from the roster.
    fn cruxes(&mut self, line: usize, session: &SessionSpec, cruxes: &[Crux]) {
        for crux in cruxes {
            if let Reported::Unknown(kind) = &crux.kind {
                let known: Vec<&str> = Disagreement::ALL.iter().map(|d| d.as_str()).collect();
                self.fail(
                    line,
                    format!(
                        "unknown crux type {kind:?} (expected one of: {})",
                        known.join(", ")
                    ),
                );
            }
            if crux.claim.trim().is_empty() {
                self.fail(line, "a crux with an empty claim");
            }
            for persona in crux
                .between
                .iter()
                .filter(|p| !session.personas.contains(p))
            {
                self.fail(
                    line,
                    format!(
                        "crux between persona {persona:?}, who is not in the session's personas"
                    ),
                );
            }
        }
    }

    fn turns(&mut self, session: &SessionSpec, turns: &[TurnSpec]) {
        if turns.is_empty() {
            self.fail(1, "no turn records");
            return;
        }
        let mut round = 0;
        let mut spoken: BTreeSet<&str> = BTreeSet::new();
        for turn in turns {
            let line = turn.line;
            if turn.round == 0 {
                self.fail(line, "round numbers start at 1");
            } else if let Err(problem) = self.limits.round(turn.round.into()) {
                self.fail(line, format!("round: {problem}"));
            } else if turn.round < round {
                self.fail(
                    line,
                    format!(
                        "round {} after round {round}: turns must be in order",
                        turn.round
                    ),
                );
            } else if turn.round > round + 1 {
                self.fail(
                    line,
                    format!("round {} skips round {}", turn.round, round + 1),
                );
            }
            if turn.round != round {
                round = turn.round;
                spoken.clear();
            }
            self.turn(session, turn, round, &mut spoken);
        }
        if !turns.iter().any(|t| t.round == 1 && t.replaces.is_none()) {
            self.fail(turns[0].line, "round 1 has no opening turn");
        }
    }

    /// Checks one turn of round `round`, in which `spoken` have spoken before it.
    fn turn<'t>(
        &mut self,
        session: &SessionSpec,
        turn: &'t TurnSpec,
        round: u32,
        spoken: &mut BTreeSet<&'t str>,
    ) {
        let line = turn.line;
        if !session.personas.contains(&turn.persona) {
            self.fail(
                line,
                format!(
                    "persona {:?} is not in the session's personas",
                    turn.persona
                ),
            );
        }
        if turn.content.trim().is_empty() {
            self.fail(line, "content is empty");
        }
        match &turn.replaces {
            Some(replaced) if !spoken.contains(replaced.as_str()) => self.fail(
                line,
                format!("replaces {replaced:?}, who has not spoken earlier in round {round}"),
            ),
            Some(replaced) if *replaced == turn.persona => {
                self.fail(line, "a persona cannot replace itself")
            }
            Some(_) => {}
            None => {
                if !spoken.insert(&turn.persona) {
                    self.fail(
                        line,
                        format!("{} speaks twice in round {round}", turn.persona),
                    );
                }
            }
        }
        if let Some(judge) = &turn.judge {
            match judge.score {
                Some(score) if !(score.is_finite() && (0.0..=1.0).contains(&score)) => {
                    self.fail(line, format!("judge score {score} is outside 0..1"));
                }
                None if judge.ruling.is_none() => {
                    self.fail(line, "a judge needs a score unless its ruling is recorded");
                }
                _ => {}
            }
        }
        self.cruxes(line, session, &turn.cruxes);
        let aspects = &session.metadata.aspects;
        if let Some(aspect) = &turn.aspect
            && !aspects.is_empty()
            && !aspects.contains(aspect)
        {
            self.fail(
                line,
                format!(
                    "aspect {aspect:?} is not in the session's metadata.aspects ({})",
                    aspects.join(", ")
                ),
            );
        }
    }

    /// The similarities the round lines give, by round; a line that cannot be used goes to
    /// the errors.
    fn similarities(
        &mut self,
        session: &SessionSpec,
        played: &BTreeSet<u32>,
        rounds: Vec<(usize, RoundSpec)>,
    ) -> BTreeMap<u32, f64> {
        let mut similarity = BTreeMap::new();
        for (line, spec) in rounds {
            if !played.contains(&spec.round) {
                self.fail(line, format!("round {} has no turns", spec.round));
            } else if spec.round < 2 && session.metadata.prior.is_none() {
                self.fail(
                    line,
                    "round 1 has no previous round (nor a prior) to be similar to",
                );
            } else if !(0.0..=1.0).contains(&spec.similarity) {
                self.fail(
                    line,
                    format!("similarity {} is outside 0..1", spec.similarity),
                );
            } else if similarity.insert(spec.round, spec.similarity).is_some() {
                self.fail(
                    line,
                    format!("a second similarity for round {}", spec.round),
                );
            }
        }
        similarity
    }

    /// The usable decision lines, by round; the others go to the errors.
    fn decisions(
        &mut self,
        session: &SessionSpec,
        played: &BTreeSet<u32>,
        lines: Vec<(usize, DecisionSpec)>,
    ) -> BTreeMap<u32, DecisionSpec> {
        let mut decisions = BTreeMap::new();
        for (line, spec) in lines {
            if session.controller_mode == ControllerMode::Off {
                self.fail(line, "a decision line, and controller_mode off makes none");
            } else if !played.contains(&spec.round) {
                self.fail(line, format!("round {} has no turns", spec.round));
            } else if let Some(p) = spec
                .signals
                .escalate_persona
                .as_ref()
                .filter(|p| !session.personas.contains(p))
            {
                self.fail(
                    line,
                    format!("escalate_persona {p:?} is not in the session's personas"),
                );
            } else if let Entry::Vacant(slot) = decisions.entry(spec.round) {
                slot.insert(spec);
            } else {
                self.fail(line, format!("a second decision for round {}", spec.round));
            }
        }
        decisions
    }

    /// The usable action lines, by round; the others go to the errors.
    fn actions(
        &mut self,
        session: &SessionSpec,
        played: &BTreeSet<u32>,
        lines: Vec<(usize, ActionSpec)>,
    ) -> BTreeMap<u32, ActionSpec> {
        let mut actions = BTreeMap::new();
        for (line, spec) in lines {
            if self.action(line, session, played, &spec) {
                match actions.entry(spec.round) {
                    Entry::Occupied(_) => {
                        self.fail(line, format!("a second action for round {}", spec.round));
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(spec);
                    }
                }
            }
        }
        actions
    }
}
