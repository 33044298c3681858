//! The console's state: the debates as their rows arrived, and what the operator is doing.

use std::collections::{BTreeMap, HashMap};

use crate::domain::{
    ActionKind, Change, ControllerDecision, Decision, JudgeDecision, Judgment, OperatorAction,
    Reported, Session, Turn,
};
use crate::policy::ControllerConfig;
use crate::simulate::Playback;

use super::event::Link;

/// One debate: its session row and every row that belongs to it.
#[derive(Debug, Clone)]
pub struct Debate {
    pub session: Session,
    /// In arrival order; a superseded turn is updated in place.
    pub turns: Vec<Turn>,
    pub decisions: BTreeMap<u32, ControllerDecision>,
    pub judgments: Vec<Judgment>,
    pub actions: BTreeMap<u32, OperatorAction>,
    /// The console asked for this debate's full history.
    pub history_requested: bool,
}

/// The rows of one round, gathered for display.
#[derive(Debug, Clone)]
pub struct RoundRow<'a> {
    pub number: u32,
    pub turns: Vec<&'a Turn>,
    pub judgments: Vec<&'a Judgment>,
    pub decision: Option<&'a ControllerDecision>,
    pub action: Option<&'a OperatorAction>,
}

impl Debate {
    fn new(id: &str) -> Debate {
        Debate {
            session: Session::placeholder(id),
            turns: Vec::new(),
            decisions: BTreeMap::new(),
            judgments: Vec::new(),
            actions: BTreeMap::new(),
            history_requested: false,
        }
    }

    fn apply(&mut self, change: Change) {
        match change {
            Change::Session(session) => self.session = session,
            Change::Turn(turn) => match self.turns.iter_mut().find(|t| t.id == turn.id) {
                Some(existing) => *existing = turn,
                None => self.turns.push(turn),
            },
            Change::Decision(decision) => {
                self.decisions.insert(decision.round_index, decision);
            }
            Change::Judgment(judgment) => {
                match self.judgments.iter_mut().find(|j| j.id == judgment.id) {
                    Some(existing) => *existing = judgment,
                    None => self.judgments.push(judgment),
                }
            }
            Change::Action(action) => {
                self.actions.insert(action.round_index, action);
            }
        }
    }

    /// The highest round any row mentions.
    pub fn latest_round(&self) -> u32 {
        let turns = self.turns.iter().map(|t| t.round_number);
        let decisions = self.decisions.keys().copied();
        turns.chain(decisions).max().unwrap_or(0)
    }

    pub fn latest_decision(&self) -> Option<&ControllerDecision> {
        self.decisions.values().next_back()
    }

    /// The decision awaiting the operator: the latest one, while the debate runs, if no action
    /// resolved it.
    pub fn pending(&self) -> Option<&ControllerDecision> {
        let latest = self.latest_decision()?;
        (self.session.is_running() && !self.actions.contains_key(&latest.round_index))
            .then_some(latest)
    }

    /// Decisions of a running debate that no action resolved.
    pub fn unresolved(&self) -> usize {
        if !self.session.is_running() {
            return 0;
        }
        self.decisions
            .keys()
            .filter(|round| !self.actions.contains_key(round))
            .count()
    }

    /// One round's rows.
    pub fn round(&self, number: u32) -> RoundRow<'_> {
        RoundRow {
            number,
            turns: self
                .turns
                .iter()
                .filter(|t| t.round_number == number)
                .collect(),
            judgments: self
                .judgments
                .iter()
                .filter(|j| j.round_index == number)
                .collect(),
            decision: self.decisions.get(&number),
            action: self.actions.get(&number),
        }
    }

    /// Every round so far, first to latest.
    pub fn rounds(&self) -> Vec<RoundRow<'_>> {
        (1..=self.latest_round()).map(|n| self.round(n)).collect()
    }

    /// Every problem found reading this debate's rows, session first.
    pub fn issues(&self) -> impl Iterator<Item = &str> {
        let session = self.session.issues.iter();
        let turns = self.turns.iter().flat_map(|t| &t.issues);
        let decisions = self.decisions.values().flat_map(|d| &d.issues);
        let judgments = self.judgments.iter().flat_map(|j| &j.issues);
        session
            .chain(turns)
            .chain(decisions)
            .chain(judgments)
            .map(String::as_str)
    }

    /// Roster personas that have not spoken and were not brought in: escalation candidates.
    pub fn unused_personas(&self) -> Vec<String> {
        let brought_in: Vec<&str> = self
            .actions
            .values()
            .filter_map(|a| a.persona.as_deref())
            .collect();
        self.session
            .personas
            .iter()
            .filter(|p| !self.turns.iter().any(|t| &t.agent_persona == *p))
            .filter(|p| !brought_in.contains(&p.as_str()))
            .cloned()
            .collect()
    }
}

/// The most severe ruling among `judgments`: abort, then halt_replace, warn, continue; an
/// unknown ruling ranks above all, so that it is seen.
pub fn worst_ruling<'a>(judgments: &[&'a Judgment]) -> Option<&'a Judgment> {
    let severity = |j: &Judgment| match j.decision {
        Reported::Known(JudgeDecision::Continue) => 0,
        Reported::Known(JudgeDecision::Warn) => 1,
        Reported::Known(JudgeDecision::HaltReplace) => 2,
        Reported::Known(JudgeDecision::Abort) => 3,
        Reported::Unknown(_) => 4,
    };
    judgments.iter().copied().max_by_key(|j| severity(j))
}

/// Which list the arrow keys move in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Debates,
    Rounds,
}

/// An operator action waiting for `y`.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub session_id: String,
    pub round_index: u32,
    pub action: ActionKind,
    /// The decision that will stand.
    pub decision: Reported<Decision>,
    pub persona: Option<String>,
    /// The operator's reason, recorded with the action.
    pub note: Option<String>,
}

impl Intent {
    /// The longest note kept.
    pub const MAX_NOTE: usize = 500;

    /// The action to record, by `operator`.
    pub fn into_action(self, operator: &str) -> OperatorAction {
        OperatorAction {
            session_id: self.session_id,
            round_index: self.round_index,
            action: self.action.into(),
            decision: self.decision,
            persona: self.persona,
            operator: operator.to_owned(),
            note: self.note.filter(|n| !n.trim().is_empty()),
            created_at: None,
        }
    }
}

/// A pick list for an override (decisions) or an escalation (personas).
#[derive(Debug, Clone, PartialEq)]
pub struct Chooser {
    pub session_id: String,
    pub round_index: u32,
    pub action: ActionKind,
    pub options: Vec<String>,
    pub cursor: usize,
}

impl Chooser {
    /// The intent for the option under the cursor.
    pub fn chosen(&self) -> Intent {
        let option = self.options[self.cursor].clone();
        let (decision, persona) = match self.action {
            ActionKind::Escalate => (Reported::Known(Decision::EscalateNewPersona), Some(option)),
            _ => (Reported::parse(&option), None),
        };
        Intent {
            session_id: self.session_id.clone(),
            round_index: self.round_index,
            action: self.action,
            decision,
            persona,
            note: None,
        }
    }
}

/// A window over the console.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Choose(Chooser),
    Confirm(Intent),
    /// Typing the note for an intent; back to its confirmation on Enter.
    Note(Intent),
    /// A round's turns and rulings, scrolled by `scroll` lines.
    Round {
        number: u32,
        scroll: u16,
    },
}

/// A one-line message for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
}

/// Everything the console shows.
#[derive(Debug, Clone)]
pub struct Model {
    /// What the console is attached to, e.g. "demo: 8 recorded debates".
    pub source: String,
    /// The name recorded with this console's actions.
    pub operator: String,
    /// The thresholds drawn on charts.
    pub controller: ControllerConfig,
    /// Debates in the order they first appeared; positions never change.
    pub debates: Vec<Debate>,
    index: HashMap<String, usize>,
    pub selected: usize,
    pub focus: Focus,
    /// The round selected in the rounds table; `None` follows the latest.
    pub round_cursor: Option<u32>,
    pub overlay: Option<Overlay>,
    pub playback: Playback,
    /// Attached to a live database: its connection state, and pausing holds rows back.
    pub link: Option<Link>,
    /// Rows that arrived while a live feed was paused, applied on resume.
    pub held: Vec<Change>,
    /// An action whose write failed, kept for `r` (retry).
    pub retry: Option<OperatorAction>,
    pub flash: Option<Flash>,
    pub quit: bool,
}

impl Model {
    pub fn new(source: String, operator: String, controller: ControllerConfig) -> Model {
        Model {
            source,
            operator,
            controller,
            debates: Vec::new(),
            index: HashMap::new(),
            selected: 0,
            focus: Focus::Debates,
            round_cursor: None,
            overlay: None,
            playback: Playback::default(),
            link: None,
            held: Vec::new(),
            retry: None,
            flash: None,
            quit: false,
        }
    }

    /// A model for a live database: pausing holds rows back instead of stopping a simulator.
    pub fn live(source: String, operator: String, controller: ControllerConfig) -> Model {
        Model {
            link: Some(Link::Connecting),
            ..Model::new(source, operator, controller)
        }
    }

    /// Files a row under its debate, creating the debate on first sight.
    pub fn apply(&mut self, change: Change) {
        let id = change.session_id();
        let position = match self.index.get(id) {
            Some(&position) => position,
            None => {
                self.debates.push(Debate::new(id));
                self.index.insert(id.to_owned(), self.debates.len() - 1);
                self.debates.len() - 1
            }
        };
        self.debates[position].apply(change);
    }

    pub fn debate(&self, id: &str) -> Option<&Debate> {
        self.index.get(id).map(|&i| &self.debates[i])
    }

    pub fn selected_debate(&self) -> Option<&Debate> {
        self.debates.get(self.selected)
    }

    /// The round the rounds table highlights.
    pub fn selected_round(&self) -> Option<u32> {
        let latest = self.selected_debate()?.latest_round();
        (latest > 0).then(|| self.round_cursor.unwrap_or(latest).min(latest))
    }

    pub fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.flash = Some(Flash {
            text: text.into(),
            error,
        });
    }
}
