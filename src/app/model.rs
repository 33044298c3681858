//! The console's state: the debates as their rows arrived, and what the operator is doing.

use std::collections::HashSet;

use crate::calibrate::Tracker;
use crate::config::Config;
use crate::domain::{
    ActionKind, Change, Debate, Debates, Decision, JudgeDecision, Judgment, OperatorAction,
    Reported,
};
use crate::policy::ControllerConfig;
use crate::simulate::Playback;

use super::event::Link;

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
    /// The calibration grid over the finished debates, scrolled by `scroll` rows.
    Calibration {
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
    /// The calibration grid replayed over the finished debates on screen.
    pub calibration: Tracker,
    /// Debates in the order they first appeared; positions never change.
    pub debates: Debates,
    /// Debates whose full history the console has asked a database for.
    pub history_requested: HashSet<String>,
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
    pub fn new(source: String, operator: String, config: &Config) -> Model {
        Model {
            source,
            operator,
            controller: config.controller.clone(),
            calibration: Tracker::new(&config.calibration.grid, &config.controller),
            debates: Debates::default(),
            history_requested: HashSet::new(),
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
    pub fn live(source: String, operator: String, config: &Config) -> Model {
        Model {
            link: Some(Link::Connecting),
            ..Model::new(source, operator, config)
        }
    }

    /// Files a row under its debate, creating the debate on first sight.
    pub fn apply(&mut self, change: Change) {
        self.calibration.mark(change.session_id());
        self.debates.apply(change);
    }

    /// Work done once per frame rather than once per row: the calibration of debates whose rows
    /// changed.
    pub fn settle(&mut self) {
        self.calibration.refresh(&self.debates);
    }

    pub fn debate(&self, id: &str) -> Option<&Debate> {
        self.debates.get_by_id(id)
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
