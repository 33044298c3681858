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
use crate::text::one_line;
use crate::theme::Theme;

use super::event::Link;
use super::keys::Keymap;

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

/// Where the arrow keys act: the debates list, or the selected debate's detail view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Debates,
    Detail,
}

/// The views of the selected debate the operator switches between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailView {
    Rounds,
    Transcript,
    Judge,
    Trace,
    Format,
}

impl DetailView {
    pub const ALL: [DetailView; 5] = [
        DetailView::Rounds,
        DetailView::Transcript,
        DetailView::Judge,
        DetailView::Trace,
        DetailView::Format,
    ];

    pub fn title(self) -> &'static str {
        match self {
            DetailView::Rounds => "rounds",
            DetailView::Transcript => "transcript",
            DetailView::Judge => "judge",
            DetailView::Trace => "trace",
            DetailView::Format => "format",
        }
    }

    /// The view `step` places along, wrapping around.
    pub fn step(self, step: isize) -> DetailView {
        let at = DetailView::ALL.iter().position(|v| *v == self).unwrap_or(0) as isize;
        let len = DetailView::ALL.len() as isize;
        DetailView::ALL[(at + step).rem_euclid(len) as usize]
    }
}

/// The order of the debates list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// As the debates first appeared.
    #[default]
    Arrival,
    /// Debates with a pending decision, then running ones, then the rest.
    PendingFirst,
    /// By session id.
    Id,
}

impl SortOrder {
    pub fn next(self) -> SortOrder {
        match self {
            SortOrder::Arrival => SortOrder::PendingFirst,
            SortOrder::PendingFirst => SortOrder::Id,
            SortOrder::Id => SortOrder::Arrival,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortOrder::Arrival => "arrival",
            SortOrder::PendingFirst => "pending first",
            SortOrder::Id => "id",
        }
    }
}

/// Whether `debate` matches a filter (already lower-case): its topic, id, a persona of its
/// roster or its turns, its status or its mode contains the text.
pub fn matches_filter(debate: &Debate, needle: &str) -> bool {
    let session = &debate.session;
    let contains = |text: &str| text.to_lowercase().contains(needle);
    needle.is_empty()
        || contains(&session.id)
        || contains(&session.question)
        || contains(&session.status.to_string())
        || contains(&session.controller_mode.to_string())
        || session.personas.iter().any(|p| contains(p))
        || debate.turns.iter().any(|t| contains(&t.agent_persona))
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
            role: None,
            note: self.note.filter(|n| !n.trim().is_empty()),
            created_at: None,
            issues: Vec::new(),
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
    /// The keys, scrolled by `scroll` lines (on a short terminal they do not all fit).
    Help {
        scroll: u16,
    },
    Choose(Chooser),
    Confirm(Intent),
    /// Typing the note for an intent; back to its confirmation on Enter.
    Note(Intent),
    /// The calibration grid over the finished debates, scrolled by `scroll` rows.
    Calibration {
        scroll: u16,
    },
    /// The shadow-week rollup, scrolled by `scroll` rows.
    ShadowWeek {
        scroll: u16,
    },
    /// Typing the debates filter; the list follows each key.
    Filter,
    /// Typing a command after `:`.
    Command(String),
    /// Asking to confirm that a read-only console may act.
    Unlock,
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
    pub theme: Theme,
    pub keymap: Keymap,
    /// Whether mouse scrolling and clicks are on.
    pub mouse: bool,
    /// Refuses operator actions until unlocked (with confirmation).
    pub read_only: bool,
    /// Why the database refuses this console's actions (its role may only watch, or, attached
    /// to a database, [`CHECKING_ACCESS`] until the database says): read-only, and unlocking
    /// cannot help, until a (re)connect finds the role may act.
    pub denied: Option<String>,
    /// The database role this console's actions are stamped with, once the database said so.
    pub role: Option<String>,
    /// Shows only the debates whose topic, id, persona, status or mode contain this text.
    pub filter: String,
    pub sort: SortOrder,
    /// The selected debate, as its position in `debates`: rows landing never move it.
    pub selected: usize,
    pub focus: Focus,
    pub view: DetailView,
    /// The round selected in the rounds table; `None` follows the latest.
    pub round_cursor: Option<u32>,
    /// Rows scrolled in the transcript, judge and trace views, from the selected round's start.
    pub detail_scroll: i32,
    /// The terminal's size, for placing mouse clicks.
    pub screen: (u16, u16),
    /// A debate asked for by `:` that the database is still loading; selected when it lands.
    pub jump_to: Option<String>,
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

/// Why a console attached to a database holds actions back until its first connect: whether
/// its role may record them is not known yet.
pub const CHECKING_ACCESS: &str = "checking this role's rights…";

impl Model {
    pub fn new(source: String, operator: String, config: &Config) -> Model {
        Model {
            source,
            operator,
            controller: config.controller.clone(),
            calibration: Tracker::new(&config.calibration.grid, &config.controller),
            debates: Debates::default(),
            history_requested: HashSet::new(),
            theme: Theme::dark(),
            keymap: config.keys.clone(),
            mouse: config.ui.mouse,
            read_only: false,
            denied: None,
            role: None,
            filter: String::new(),
            sort: SortOrder::default(),
            selected: 0,
            focus: Focus::Debates,
            view: DetailView::Rounds,
            round_cursor: None,
            detail_scroll: 0,
            screen: (0, 0),
            jump_to: None,
            overlay: None,
            playback: Playback::default(),
            link: None,
            held: Vec::new(),
            retry: None,
            flash: None,
            quit: false,
        }
    }

    /// A model for a live database: pausing holds rows back instead of stopping a simulator, and
    /// actions are held until the database says whether this role may record them.
    pub fn live(source: String, operator: String, config: &Config) -> Model {
        Model {
            link: Some(Link::Connecting),
            denied: Some(CHECKING_ACCESS.to_owned()),
            ..Model::new(source, operator, config)
        }
    }

    /// Files a row under its debate, creating the debate on first sight.
    pub fn apply(&mut self, change: Change) {
        self.calibration.mark(change.session_id());
        let position = self.debates.apply(change);
        if self.jump_to.as_deref() == Some(self.debates[position].session.id.as_str()) {
            self.jump_to = None;
            self.jump(position);
        }
    }

    /// Selects the debate at `position` for `:`, clearing a filter that hides it.
    pub fn jump(&mut self, position: usize) {
        let hidden = !matches_filter(&self.debates[position], &self.filter.to_lowercase());
        if hidden {
            self.filter.clear();
        }
        self.select(position);
        self.focus = Focus::Debates;
        let id = one_line(&self.debates[position].session.id);
        let note = if hidden { " (filter cleared)" } else { "" };
        self.flash(format!("at {id}{note}"), false);
    }

    /// Work done once per frame rather than once per row: the calibration of debates whose rows
    /// changed.
    pub fn settle(&mut self) {
        self.calibration.refresh(&self.debates);
    }

    pub fn debate(&self, id: &str) -> Option<&Debate> {
        self.debates.get_by_id(id)
    }

    /// The selected debate, unless the filter hides it.
    pub fn selected_debate(&self) -> Option<&Debate> {
        self.debates
            .get(self.selected)
            .filter(|d| matches_filter(d, &self.filter.to_lowercase()))
    }

    /// The positions of the debates the list shows, in its order.
    pub fn visible(&self) -> Vec<usize> {
        let needle = self.filter.to_lowercase();
        let mut shown: Vec<usize> = (0..self.debates.len())
            .filter(|&i| matches_filter(&self.debates[i], &needle))
            .collect();
        match self.sort {
            SortOrder::Arrival => {}
            SortOrder::PendingFirst => shown.sort_by_key(|&i| {
                let debate = &self.debates[i];
                (debate.pending().is_none(), !debate.session.is_running())
            }),
            SortOrder::Id => {
                shown.sort_by(|&a, &b| self.debates[a].session.id.cmp(&self.debates[b].session.id))
            }
        }
        shown
    }

    /// Selects the debate at `position` in `debates`, from its latest round.
    pub fn select(&mut self, position: usize) {
        if position != self.selected {
            self.selected = position;
            self.round_cursor = None;
            self.detail_scroll = 0;
        }
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
