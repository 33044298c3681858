//! The console's state: the debates held (a summary of each, the full rows of the selected one
//! and of the most recently changed), and what the operator is doing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::config::theme::Theme;
use crate::config::{Config, Notify};
use crate::domain::limits::MAX_ROUND_CEILING;
use crate::domain::{
    ActionKind, Change, Debate, DebateNote, Decision, JudgeDecision, Judgment, MeasureKind, Moment,
    OperatorAction, Peer, Reported, Status, who,
};
use crate::policy::ControllerConfig;
use crate::signals::Measure;
use crate::simulate::Playback;
use crate::text::one_line;

use super::command_line::{Completion, History};
use super::contexts::{Context, Contexts, Ctx};
use super::event::Link;
use super::fleet::{Fleet, Seq, SortOrder, Summary, Window};
use super::geometry::Geometry;
use super::prompt::Prompt;
use super::reading::Reading;
use super::reports::Reports;
use super::rollout::{Draft, Rollouts};
use super::wait_clock::WaitClock;
use crate::config::keys::Keymap;

/// The most severe ruling among `judgments` (abort, then halt_replace, warn, continue; an
/// unknown ruling ranks above all, so that it is seen), and of the turns given that ruling, the
/// one with the lowest score (a score that is missing or not a number counts as the lowest).
pub fn worst_ruling<'a>(judgments: &[&'a Judgment]) -> Option<&'a Judgment> {
    let severity = |j: &Judgment| match j.decision {
        Reported::Known(JudgeDecision::Continue) => 0,
        Reported::Known(JudgeDecision::Warn) => 1,
        Reported::Known(JudgeDecision::HaltReplace) => 2,
        Reported::Known(JudgeDecision::Abort) => 3,
        Reported::Unknown(_) => 4,
    };
    let score = |j: &Judgment| {
        j.score
            .filter(|s| s.is_finite())
            .unwrap_or(f64::NEG_INFINITY)
    };
    judgments.iter().copied().max_by(|a, b| {
        severity(a)
            .cmp(&severity(b))
            .then_with(|| score(b).total_cmp(&score(a)))
    })
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
    pub(crate) fn into_action(self, operator: &str) -> OperatorAction {
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
    /// The calibration chart and, below it, the debates of the setting under the cursor (the
    /// `cursor`-th of the frontier, from the fewest verdict flips) or, `table`, every setting;
    /// the list below scrolled by `scroll` rows.
    Calibration {
        scroll: u16,
        cursor: usize,
        table: bool,
    },
    /// The shadow-week rollup, scrolled by `scroll` rows.
    ShadowWeek {
        scroll: u16,
    },
    /// Typing the debates filter; the list follows each key.
    Filter,
    /// Typing a command after `:` (the text is the desk's [`Desk::prompt`]).
    Command,
    /// Asking to confirm that a read-only console may act.
    Unlock,
    /// The other consoles on the database (`:who`), scrolled by `scroll` rows.
    Who {
        scroll: u16,
    },
    /// Asking whether to take over a decision another console is deciding, before the dialog
    /// of this action opens.
    TakeOver(ActionKind),
    /// Typing a note to pin to this debate (the text is the desk's [`Desk::prompt`]).
    Pin(String),
    /// The rollout of `debate_type`'s settings (`None`: nothing is published) in context
    /// `ctx`'s database (0 on one database), both arms side by side, scrolled by `scroll` rows.
    Rollout {
        scroll: u16,
        debate_type: Option<String>,
        ctx: Ctx,
    },
    /// A new settings version being written: its reason and share typed (the text is the
    /// desk's [`Desk::prompt`]), then confirmed.
    Draft(Box<Draft>),
}

impl Overlay {
    /// The decision a dialog is about to resolve (its debate and round) and the note typed so
    /// far, for the dialogs that act.
    pub fn deciding(&self) -> Option<(&str, u32, Option<&str>)> {
        match self {
            Overlay::Choose(c) => Some((&c.session_id, c.round_index, None)),
            Overlay::Confirm(i) | Overlay::Note(i) => {
                Some((&i.session_id, i.round_index, i.note.as_deref()))
            }
            _ => None,
        }
    }
}

/// A one-line message for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
}

/// The selected debate as it stood at one of its decisions, while the operator looks back.
#[derive(Debug, Clone)]
pub struct Past {
    /// Where it stands: a decision landed, or the action on it.
    pub moment: Moment,
    /// Its rows as they stood then (`Debate::as_of`), moved along at each step.
    pub debate: Debate,
    /// What the live debate's rows were when `debate` was made from them ([`Held::touched`]):
    /// a step from a past whose live rows changed since makes it anew.
    seen: u64,
    /// `space` plays history forward: the wall time of the next step (`None` until the next
    /// tick sets it), while it plays.
    pub playing: Option<Option<chrono::DateTime<chrono::Utc>>>,
}

/// A debate whose full rows the console holds: the open one, and the most recently changed.
#[derive(Debug, Clone)]
struct Held {
    debate: Debate,
    /// Holds every row of the debate (or they were asked for): rows filed since it was first
    /// seen without a database, or since its history was requested.
    whole: bool,
    /// When a row last landed or it was opened, for letting go of the least recent.
    touched: u64,
    /// What the rounds table draws each round's row from (see [`Revisions`]).
    revisions: Revisions,
}

/// When each of a debate's rounds last changed, live, counted in rows landed: what the rounds
/// table draws a round's row from, besides the round's number. A row that may change rounds
/// other than its own (a row of a round written again, which may have moved; a row of no
/// round; a persona's first turn, which marks it joined in later rounds) changes every round.
#[derive(Debug, Clone, Default)]
pub struct Revisions {
    /// When a row last changed every round.
    every: u64,
    /// When a row of each round last landed, since (looked up for every round row drawn: a
    /// quick hash, the rounds being bounded by the ceiling, nothing to flood it with).
    rounds: FxHashMap<u32, u64>,
}

impl Revisions {
    /// When round `round`'s row last changed.
    pub fn of(&self, round: u32) -> (u64, u64) {
        (self.every, self.rounds.get(&round).copied().unwrap_or(0))
    }

    /// A row of `round` (or, `None`, of every round) landed at `touch`.
    fn landed(&mut self, round: Option<u32>, touch: u64) {
        match round {
            Some(round) => {
                self.rounds.insert(round, touch);
            }
            None => {
                self.every = touch;
                self.rounds.clear();
            }
        }
    }
}

/// Everything the console shows, grouped by what it is about.
#[derive(Debug, Clone)]
pub struct Model {
    /// What the console is attached to and acts as.
    pub about: About,
    /// How the operator set the console up: theme, keys, mouse, announcements, read-only.
    pub settings: Settings,
    /// A summary of every debate held, in the list's order and filter.
    pub debates: Fleet,
    /// Full rows of the selected debate and of the most recently changed ones.
    rows: Rows,
    /// The calibration grid and the shadow week as the reports worker last reported them, and
    /// the rows landed since they were handed to it.
    pub reports: Reports,
    /// The controller settings' history and its rollouts, the guards that trip.
    pub rollout: Rollouts,
    /// Where the operator is: the debate, view and round selected, the time cursor.
    pub nav: Navigation,
    /// What the operator is doing: the open overlay, the prompt, the last message, an action
    /// to retry, notes kept.
    pub desk: Desk,
    /// The live database: the link, rows held back while paused, the other consoles, the
    /// role's rights.
    pub live: Live,
    /// The clocks: the one gated waits count in, and the simulator's playback.
    pub time: Time,
    /// The terminal: its size, the last frame's layout, whether to draw again.
    pub screen: Screen,
    pub quit: bool,
}

/// What the console is attached to and acts as.
#[derive(Debug, Clone)]
pub struct About {
    /// What the console is attached to, e.g. "demo: 8 recorded debates".
    pub source: String,
    /// The similarity measure gavel's own controller and calibration use, in a few words.
    pub similarity: String,
    /// The name recorded with this console's actions.
    pub operator: String,
    /// The thresholds drawn on charts.
    pub controller: ControllerConfig,
    /// The similarity measure and its model's provenance name (semantic only), which a version
    /// published over the controller's defaults takes.
    pub measure: (MeasureKind, Option<String>),
    /// That measure as people read it, `lexical (tfidf)` or `semantic (<model>)`: what the
    /// calibration window's similarities are measured with where no decision recorded one.
    pub measure_label: String,
    /// How long a gated decision waits for an operator, for the countdowns of debates whose
    /// session row does not say (see [`About::gated_wait`]).
    pub gated_timeout: Duration,
    /// A simulator's clock is behind the feed (the demo, also with `--postgres`): playback
    /// speed applies.
    pub simulated: bool,
}

impl About {
    /// How long a debate's gated decision waits: what its session row says
    /// (`debate_sessions.gated_timeout_secs`), else [`About::gated_timeout`].
    pub fn gated_wait(&self, said: Option<Duration>) -> Duration {
        said.unwrap_or(self.gated_timeout)
    }
}

/// How the operator set the console up.
#[derive(Debug, Clone)]
pub struct Settings {
    pub theme: Theme,
    /// Shared: the footer's hints are kept while it stays the same one.
    pub keymap: Arc<Keymap>,
    /// Whether mouse scrolling and clicks are on.
    pub mouse: bool,
    /// How a decision that starts waiting is announced.
    pub notify: Notify,
    /// Refuses operator actions until unlocked (with confirmation).
    pub read_only: bool,
}

/// The full rows the console holds, and what it asks a backend for.
#[derive(Debug, Clone, Default)]
struct Rows {
    /// Full rows of the selected debate and of the most recently changed ones.
    held: HashMap<Seq, Held>,
    /// Counts rows landing, for [`Held::touched`].
    touches: u64,
    /// The debate whose history to ask the backend for, and its context.
    wanted: Option<(Ctx, String)>,
    /// Decisions that started waiting since the last announcement.
    arrivals: usize,
}

/// Where the operator is.
#[derive(Debug, Clone)]
pub struct Navigation {
    /// The selected debate; rows landing never move it.
    pub selected: Option<Seq>,
    pub focus: Focus,
    pub view: DetailView,
    /// The round selected in the rounds table; `None` follows the latest.
    round_cursor: Option<u32>,
    /// The selected debate's round last written again (a round decided again, a judgment
    /// revised, a turn marked superseded) since the operator last moved the cursor and the
    /// latest round last had a new row: following, the rounds table keeps it in view, so a round
    /// written again above the page is on screen as its row lands.
    written: Option<u32>,
    /// The time cursor: the selected debate as it stood at a decision; `None` is live.
    pub past: Option<Past>,
    /// Rows scrolled in the transcript, judge and trace views, from the selected round's start.
    pub detail_scroll: i32,
    /// A debate asked for by `:` that the database is still loading; selected when it lands.
    pub jump_to: Option<String>,
}

impl Navigation {
    /// The round selected in the rounds table; `None` follows the latest.
    pub fn round_cursor(&self) -> Option<u32> {
        self.round_cursor
    }

    /// The selected debate's round last written again, while the table is to keep it in view.
    pub fn written(&self) -> Option<u32> {
        self.written
    }

    /// Notes a row of the selected debate filed: `rewritten`, the round of a row that replaced a
    /// different version of itself; `latest`, the round of a new row of the latest round (the
    /// table follows the latest again).
    fn wrote(&mut self, rewritten: Option<u32>, latest: Option<u32>) {
        if rewritten.is_some() {
            self.written = rewritten;
        } else if latest.is_some() {
            self.written = None;
        }
    }

    /// Puts the rounds table's cursor on `round` (`None` follows the latest): the table shows
    /// where the operator points, whichever round was written before.
    pub fn point_at_round(&mut self, round: Option<u32>) {
        self.round_cursor = round;
        self.written = None;
    }
}

/// What the operator is doing.
#[derive(Debug, Clone, Default)]
pub struct Desk {
    pub overlay: Option<Overlay>,
    /// The text being typed in the open prompt: the note, the filter or the `:` line.
    pub prompt: Prompt,
    /// The `:` commands run this session.
    pub history: History,
    /// The completions the `:` line offers, while they are shown.
    pub completion: Option<Completion>,
    pub flash: Option<Flash>,
    /// An action whose write failed, kept for `r` (retry).
    pub retry: Option<OperatorAction>,
    /// The context of [`Desk::retry`]'s database (0 on one database).
    pub retry_in: Ctx,
    /// The note of a dialog closed because its decision was resolved elsewhere, offered again
    /// in the next note.
    pub kept_note: Option<String>,
    /// A note that was not pinned, offered again when a note is next typed on its debate.
    pub(super) unpinned: Option<DebateNote>,
}

/// The live database, when the console is attached to one.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// Attached to a live database: its connection state, and pausing holds rows back.
    pub link: Option<Link>,
    /// Rows that arrived while a live feed was paused (each with its context), applied on
    /// resume.
    pub held_back: Vec<(Ctx, Change)>,
    /// The other consoles on the live database, as presence last said.
    pub peers: Vec<Peer>,
    /// What this console last told the others.
    pub said: Option<Status>,
    /// The database role this console's actions are stamped with, once the database said so.
    pub role: Option<String>,
    /// Why the database refuses this console's actions (its role may only watch, or, attached
    /// to a database, `CHECKING_ACCESS` until the database says): read-only, and unlocking
    /// cannot help, until a (re)connect finds the role may act.
    pub denied: Option<String>,
    /// Why the database refuses this console's notes (its role may not pin them, or, attached
    /// to a database, `CHECKING_ACCESS` until the database says), whatever it says of actions.
    pub unpinnable: Option<String>,
    /// Reading a subscriber of the database written: where, and how it stands with the primary.
    pub reading: Option<Reading>,
    /// The databases shown together, when there are several: each one's link, rights and
    /// peers (the fields above then say the console's as a whole), and which the list shows.
    pub contexts: Contexts,
}

/// The console's clocks.
#[derive(Debug, Clone, Default)]
pub struct Time {
    /// The time gated decisions wait in, moved by [`super::Event::Tick`].
    pub clock: WaitClock,
    pub playback: Playback,
}

/// The terminal the console is drawn on.
#[derive(Debug, Clone, Default)]
pub struct Screen {
    /// The terminal's size, for laying out the next frame.
    pub size: (u16, u16),
    /// The last frame's layout, recorded by the draw loop: where mouse clicks land, how far
    /// the detail scrolls.
    pub geometry: Geometry,
    /// Something on screen may have changed since the last frame.
    pub(super) dirty: bool,
    /// The debates the list drew last frame.
    drawn: Window,
}

/// Why a console attached to a database holds actions back until its first connect: whether
/// its role may record them is not known yet.
pub(crate) const CHECKING_ACCESS: &str = "checking this role's rights…";

/// Debates whose full rows are held besides the selected one: the most recently changed.
pub const HELD_DEBATES: usize = 64;

impl Model {
    pub fn new(source: String, operator: String, config: &Config) -> Model {
        let measure = config.signals.measure();
        let kind = match measure {
            Measure::Lexical => (MeasureKind::Lexical, None),
            Measure::Semantic(_) => (MeasureKind::Semantic, Some(measure.name().to_owned())),
        };
        Model {
            about: About {
                source,
                similarity: measure.short().to_owned(),
                operator,
                controller: config.controller.clone(),
                measure: kind,
                measure_label: measure.label(),
                gated_timeout: config.simulator.gated_timeout(),
                simulated: true,
            },
            settings: Settings {
                theme: Theme::dark(),
                keymap: Arc::new(config.keys.clone()),
                mouse: config.ui.mouse,
                notify: config.ui.notify,
                read_only: false,
            },
            debates: Fleet::new(config.ui.keep_finished),
            rows: Rows::default(),
            reports: Reports::default(),
            rollout: Rollouts::new(config.rollout.guards.clone()),
            nav: Navigation {
                selected: None,
                focus: Focus::Debates,
                view: DetailView::Rounds,
                round_cursor: None,
                written: None,
                past: None,
                detail_scroll: 0,
                jump_to: None,
            },
            desk: Desk::default(),
            live: Live::default(),
            time: Time::default(),
            screen: Screen {
                dirty: true,
                ..Screen::default()
            },
            quit: false,
        }
    }

    /// A model for a live database: pausing holds rows back instead of stopping a simulator, and
    /// actions are held until the database says whether this role may record them.
    pub fn live(source: String, operator: String, config: &Config) -> Model {
        let mut model = Model::new(source, operator, config);
        model.live.link = Some(Link::Connecting);
        model.live.denied = Some(CHECKING_ACCESS.to_owned());
        model.live.unpinnable = Some(CHECKING_ACCESS.to_owned());
        model.about.gated_timeout = config.ui.gated_timeout(&config.simulator);
        model.about.simulated = false;
        model
    }

    /// Files a row under its debate, creating the debate on first sight (the first debate seen
    /// is selected).
    pub fn apply(&mut self, change: Change) {
        self.apply_in(0, change);
    }

    /// Files a row of context `ctx`'s database (see [`Model::apply`]).
    pub fn apply_in(&mut self, ctx: Ctx, change: Change) {
        if self.live.contexts.several() {
            self.reports
                .landed_in(self.live.contexts.name(ctx), &change);
        } else {
            self.reports.landed(&change);
        }
        let filed = self.debates.apply_in(ctx, &change, &self.time.clock);
        let seq = filed.seq;
        self.screen.dirty |= filed.reordered
            || self.nav.selected == Some(seq)
            || self.screen.drawn.rows.contains(&seq);
        self.rows.arrivals += usize::from(filed.waits);
        self.close_resolved_dialog(seq, &change);
        self.rows.touches += 1;
        let whole = self.live.link.is_none();
        let held = self.rows.held.entry(seq).or_insert_with(|| Held {
            debate: Debate::new(change.session_id()),
            // Rows from the first on, without a database to miss them in between.
            whole: whole && filed.created,
            touched: 0,
            revisions: Revisions::default(),
        });
        held.touched = self.rows.touches;
        let round = change.round();
        let rewritten = held.debate.rewrites(&change);
        // The rounds whose rows it changes: none, one, or (`None`) maybe any.
        let rounds = match &change {
            Change::Session(_) | Change::Note(_) => None,
            _ if rewritten.is_some() => Some(None),
            Change::Turn(turn)
                if held
                    .debate
                    .first_spoke(&turn.agent_persona)
                    .is_some_and(|first| first > turn.round_number) =>
            {
                Some(None)
            }
            _ => Some(round.filter(|round| (1..=MAX_ROUND_CEILING).contains(round))),
        };
        if let Some(round) = rounds {
            held.revisions.landed(round, self.rows.touches);
        }
        held.debate.apply(change);
        if self.nav.selected == Some(seq) {
            let latest = held.debate.latest_round();
            self.nav.wrote(rewritten, round.filter(|&r| r >= latest));
        }
        self.let_go();
        if self.nav.selected.is_none() {
            self.select(seq);
        }
        if let Some(id) = &self.nav.jump_to
            && self.debates.get(seq).is_some_and(|s| *s.id == **id)
        {
            self.nav.jump_to = None;
            self.jump(seq);
        }
    }

    /// Closes a dialog on a decision that `change` shows resolved or changed: resolved (by
    /// another console, an operator elsewhere, or a timeout), decided again otherwise, or its
    /// debate finished. Says by whom, and keeps the typed note for the next dialog.
    fn close_resolved_dialog(&mut self, seq: Seq, change: &Change) {
        let Some((session_id, round, note)) =
            self.desk.overlay.as_ref().and_then(Overlay::deciding)
        else {
            return;
        };
        if change.session_id() != session_id || self.seq_of(session_id) != Some(seq) {
            return;
        }
        let (session_id, note) = (session_id.to_owned(), note.map(str::to_owned));
        let why = match change {
            Change::Action(a) if a.round_index == round => format!(
                "resolved by {}: {} {}",
                one_line(&a.who()),
                a.action,
                a.decision
            ),
            // A newer decision leaves this one pending (the contract): only its own round
            // decided again, otherwise than the dialog was opened on, closes it.
            Change::Decision(d)
                if d.round_index == round
                    && self
                        .debate(&session_id)
                        .and_then(|debate| debate.decisions.get(&round))
                        .is_some_and(|was| was.decision != d.decision) =>
            {
                format!("decided again: now {}", d.decision)
            }
            Change::Session(s) if !s.is_running() => format!("the debate is {}", s.status),
            _ => return,
        };
        let kept = note.filter(|n| !n.trim().is_empty());
        let saying = if kept.is_some() {
            " — your note is kept for your next action"
        } else {
            ""
        };
        self.flash(
            format!(
                "closed {} round {round}: {why}{saying}",
                one_line(&session_id)
            ),
            true,
        );
        if kept.is_some() {
            self.desk.kept_note = kept;
        }
        self.desk.overlay = None;
        self.screen.dirty = true;
    }

    /// What to announce, as `[ui] notify` asks, of the decisions that started waiting for an
    /// operator and the rollout guards that tripped since the last call (once a frame: a burst
    /// of rows rings once).
    pub fn announcement(&mut self) -> Option<String> {
        let arrived = std::mem::take(&mut self.rows.arrivals);
        let tripped = self.rollout.take_arrivals();
        if (arrived == 0 && tripped.is_empty()) || self.settings.notify == Notify::Off {
            return None;
        }
        let mut said = Vec::new();
        if arrived > 0 {
            let what = if arrived == 1 {
                "a decision".to_owned()
            } else {
                format!("{arrived} decisions")
            };
            let waiting = self.debates.waiting();
            said.push(format!("{what} waiting for you ({waiting} in all)"));
        }
        // On several databases, the guarded rollouts' database named.
        let at = match self.live.contexts.several() {
            true => format!(" in {}", self.live.contexts.name(super::rollout::COMPARED)),
            false => String::new(),
        };
        for t in &tripped {
            said.push(format!(
                "the canary of {}{at} (version {}) raises the {}: roll it back?",
                t.debate_type,
                t.canary,
                t.guard.what()
            ));
        }
        Some(format!("gavel: {}", said.join("; ")))
    }

    /// How long the decision `summary` waits on has left; `None` unless one waits.
    /// Another console deciding round `round` of debate `session_id`: who (its name, with the
    /// database role when that differs; not yet escaped) and for how long.
    pub fn deciding(&self, session_id: &str, round: u32) -> Option<(String, Duration)> {
        self.deciding_in(self.ctx_of_id(session_id), session_id, round)
    }

    /// [`Model::deciding`] on context `ctx`'s database: another console there deciding.
    pub fn deciding_in(
        &self,
        ctx: Ctx,
        session_id: &str,
        round: u32,
    ) -> Option<(String, Duration)> {
        let peers = self.context(ctx).map_or(&self.live.peers, |c| &c.peers);
        let peer = peers.iter().find(|p| p.claims(session_id, round))?;
        let held = self
            .time
            .clock
            .now()
            .left(self.time.clock.since(peer.claimed_at));
        Some((who(&peer.status.operator, Some(&peer.role)), held))
    }

    /// The other consoles writing a version of `debate_type`'s rollout in context `ctx`'s
    /// database: who (its name, with the database role when that differs; not yet escaped).
    pub fn editing<'a>(
        &'a self,
        ctx: Ctx,
        debate_type: &'a str,
    ) -> impl Iterator<Item = String> + 'a {
        let peers = self.context(ctx).map_or(&self.live.peers, |c| &c.peers);
        peers
            .iter()
            .filter(move |p| p.status.editing.as_deref() == Some(debate_type))
            .map(|p| who(&p.status.operator, Some(&p.role)))
    }

    pub fn time_left(&self, summary: &Summary) -> Option<Duration> {
        summary.waiting().then(|| {
            summary
                .decided
                .after(self.about.gated_wait(summary.gated_timeout()))
                .left(self.time.clock.now())
        })
    }

    /// Lets go of the full rows of the least recently changed debates beyond [`HELD_DEBATES`]
    /// (never the selected one's).
    fn let_go(&mut self) {
        if self.rows.held.len() <= HELD_DEBATES + 1 {
            return;
        }
        let oldest = self
            .rows
            .held
            .iter()
            .filter(|(seq, _)| Some(**seq) != self.nav.selected)
            .min_by_key(|(_, held)| held.touched)
            .map(|(seq, _)| *seq);
        if let Some(seq) = oldest {
            self.rows.held.remove(&seq);
        }
    }

    /// Selects the debate `seq` for `:`, clearing a filter that hides it (and showing every
    /// context when it is another's).
    pub fn jump(&mut self, seq: Seq) {
        let hidden = !self.debates.is_listed(seq);
        if hidden {
            self.set_filter(String::new());
            if !self.debates.is_listed(seq) {
                self.show_context(None);
            }
        }
        self.select(seq);
        self.nav.focus = Focus::Debates;
        let id = self
            .debates
            .get(seq)
            .map_or_else(String::new, |s| one_line(&s.id));
        let note = if hidden { " (filter cleared)" } else { "" };
        self.flash(format!("at {id}{note}"), false);
    }

    /// Work done once per frame rather than once per row: letting go of the longest-finished
    /// debates beyond what is kept, and noting which debates the list draws.
    pub fn prepare_frame(&mut self) {
        self.debates.retain(self.nav.selected);
        self.note_drawn();
    }

    /// Records the frame about to be drawn: its layout, and which debates its list shows.
    pub fn record_frame(&mut self, geometry: Geometry) {
        self.screen.geometry = geometry;
        self.note_drawn();
    }

    fn note_drawn(&mut self) {
        self.screen.drawn = self
            .debates
            .window(self.nav.selected, self.screen.geometry.list_rows());
    }

    /// The debates the list drew last frame.
    pub(crate) fn drawn_rows(&self) -> &[Seq] {
        &self.screen.drawn.rows
    }

    /// Whether anything on screen may have changed since the last call.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.screen.dirty)
    }

    /// The full rows of the debate with this id, if held (see [`Model::seq_of`]).
    pub fn debate(&self, id: &str) -> Option<&Debate> {
        self.held(self.seq_of(id)?)
    }

    /// The debate with this id: the selected one when it has it (the dialogs, the notes and
    /// the retries are about it), else the first context's that has one.
    pub fn seq_of(&self, id: &str) -> Option<Seq> {
        self.nav
            .selected
            .filter(|&seq| self.debates.get(seq).is_some_and(|s| &*s.id == id))
            .or_else(|| self.debates.seq(id))
    }

    /// The context of the selected debate (0 with none).
    pub fn selected_ctx(&self) -> Ctx {
        self.nav.selected.map_or(0, |seq| self.ctx_of(seq))
    }

    /// The context of the debate with this id (see [`Model::seq_of`]; 0 when none is held).
    pub fn ctx_of_id(&self, id: &str) -> Ctx {
        self.seq_of(id).map_or(0, |seq| self.ctx_of(seq))
    }

    /// The context of the debate `seq` (0 on one database, or when it is not held).
    pub fn ctx_of(&self, seq: Seq) -> Ctx {
        self.debates.get(seq).map_or(0, |s| s.ctx)
    }

    /// Context `ctx`, when the console is on several databases (on one, [`Live`] says all).
    fn context(&self, ctx: Ctx) -> Option<&Context> {
        let contexts = &self.live.contexts;
        contexts.get(ctx).filter(|_| contexts.several())
    }

    /// Why context `ctx`'s database refuses this console's actions, if it does (on one
    /// database, [`Live::denied`]).
    pub fn denied_in(&self, ctx: Ctx) -> Option<&str> {
        self.context(ctx)
            .map_or(self.live.denied.as_deref(), |c| c.denied.as_deref())
    }

    /// Why context `ctx`'s database refuses this console's notes, if it does.
    pub fn unpinnable_in(&self, ctx: Ctx) -> Option<&str> {
        self.context(ctx)
            .map_or(self.live.unpinnable.as_deref(), |c| c.unpinnable.as_deref())
    }

    /// The role context `ctx`'s database stamps this console's actions with.
    pub fn role_in(&self, ctx: Ctx) -> Option<&str> {
        self.context(ctx)
            .map_or(self.live.role.as_deref(), |c| c.role.as_deref())
    }

    /// Whether actions on context `ctx`'s debates are locked until unlocked: the console is
    /// read-only, or that context is.
    pub fn read_only_in(&self, ctx: Ctx) -> bool {
        self.settings.read_only || self.live.contexts.get(ctx).is_some_and(|c| c.read_only)
    }

    /// Whether the list has a context column: several contexts, every one shown.
    pub fn columned(&self) -> bool {
        self.live.contexts.several() && self.debates.context().is_none()
    }

    /// Lists only context `ctx`'s debates (`None`: every context's), in its own theme if it
    /// has one (every context's: the theme in force before).
    pub fn show_context(&mut self, ctx: Option<Ctx>) {
        let own = ctx
            .and_then(|ctx| self.live.contexts.get(ctx))
            .and_then(|c| c.theme.clone());
        match own {
            Some(theme) => {
                let base = std::mem::replace(&mut self.settings.theme, theme);
                self.live.contexts.base_theme.get_or_insert(base);
            }
            None => {
                if let Some(base) = self.live.contexts.base_theme.take() {
                    self.settings.theme = base;
                }
            }
        }
        self.debates.show_context(ctx);
        self.screen.dirty = true;
    }

    /// When history played forward (`space` in the past) wants a tick of the wall clock: when
    /// its next step is due, or at once (the earliest time there is) when it has just started
    /// and a tick is to set that; `None` while it does not play. The draw loop ticks then,
    /// besides once a second, so that each step lands after its own gap.
    pub fn history_due(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        let playing = self.nav.past.as_ref()?.playing?;
        Some(playing.unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC))
    }

    /// The full rows of the debate `seq`, if held.
    pub fn held(&self, seq: Seq) -> Option<&Debate> {
        self.rows.held.get(&seq).map(|held| &held.debate)
    }

    /// The selected debate's full rows, unless the filter hides it: as they stood at the time
    /// cursor's decision when it is set.
    pub fn selected_debate(&self) -> Option<&Debate> {
        let seq = self
            .nav
            .selected
            .filter(|&seq| self.debates.is_listed(seq))?;
        if let Some(past) = &self.nav.past {
            return Some(&past.debate);
        }
        self.rows.held.get(&seq).map(|held| &held.debate)
    }

    /// The selected debate's `seq` and when each of its rounds last changed, as its rows stand
    /// (what the rounds table draws live from); none while travelling in time, or without one.
    pub fn selected_revisions(&self) -> Option<(Seq, &Revisions)> {
        if self.nav.past.is_some() {
            return None;
        }
        let seq = self
            .nav
            .selected
            .filter(|&seq| self.debates.is_listed(seq))?;
        self.rows.held.get(&seq).map(|held| (seq, &held.revisions))
    }

    /// Moves the time cursor to the selected debate's `moment` (its rows as they stood then,
    /// from the rows held: nothing is read again; a step from one moment to another copies only
    /// the rows it gains), or back to live (`None`).
    pub fn travel(&mut self, moment: Option<Moment>) {
        let live = self.nav.selected.and_then(|seq| self.rows.held.get(&seq));
        let past = self.nav.past.take();
        let playing = past.as_ref().and_then(|p| p.playing).map(|_| None);
        self.nav.past = moment.zip(live).map(|(moment, live)| {
            let debate = match past {
                Some(mut past) if past.seen == live.touched => {
                    past.debate.step_to(&live.debate, moment);
                    past.debate
                }
                _ => live.debate.as_of(moment),
            };
            Past {
                moment,
                debate,
                seen: live.touched,
                playing,
            }
        });
        self.nav.point_at_round(moment.map(|m| m.round));
        self.nav.detail_scroll = 0;
        self.screen.dirty = true;
    }

    /// The selected debate's summary, unless the filter hides it.
    pub fn selected_summary(&self) -> Option<&Summary> {
        let seq = self
            .nav
            .selected
            .filter(|&seq| self.debates.is_listed(seq))?;
        self.debates.get(seq)
    }

    /// The filter as typed: the list shows only the debates whose id, question, persona,
    /// status or mode contain it.
    pub fn filter(&self) -> &str {
        self.debates.filter()
    }

    pub fn sort(&self) -> SortOrder {
        self.debates.sort()
    }

    pub fn set_filter(&mut self, filter: String) {
        self.arrange(self.sort(), &filter);
    }

    pub fn set_sort(&mut self, sort: SortOrder) {
        let filter = self.filter().to_owned();
        self.arrange(sort, &filter);
    }

    /// Orders and filters the list anew, the filter's terms matched against the contexts' names
    /// too on several databases.
    fn arrange(&mut self, sort: SortOrder, filter: &str) {
        let names = self.live.contexts.names();
        self.debates.arrange(sort, filter, &names);
    }

    /// Selects the debate `seq`, from its latest round; its full rows are asked for unless held.
    pub fn select(&mut self, seq: Seq) {
        if Some(seq) != self.nav.selected {
            self.nav.selected = Some(seq);
            self.nav.past = None;
            self.nav.point_at_round(None);
            self.nav.detail_scroll = 0;
        }
        let Some((ctx, id)) = self.debates.get(seq).map(|s| (s.ctx, s.id.clone())) else {
            return;
        };
        self.rows.touches += 1;
        let held = self.rows.held.entry(seq).or_insert_with(|| Held {
            debate: Debate::new(&id),
            whole: false,
            touched: 0,
            revisions: Revisions::default(),
        });
        held.touched = self.rows.touches;
        if !held.whole {
            held.whole = true;
            self.rows.wanted = Some((ctx, id.to_string()));
        }
        self.let_go();
    }

    /// The debate whose history the backend should load, once, and its context.
    pub(crate) fn take_wanted(&mut self) -> Option<(Ctx, String)> {
        self.rows.wanted.take()
    }

    /// The round the rounds table highlights.
    pub fn selected_round(&self) -> Option<u32> {
        let latest = self.selected_debate()?.latest_round();
        (latest > 0).then(|| self.nav.round_cursor.unwrap_or(latest).min(latest))
    }

    /// Applies `theme` (the watched theme file's, or `:theme`'s) and says so.
    pub(crate) fn apply_theme(&mut self, theme: Theme) {
        self.flash(format!("theme {} applied", theme.name), false);
        self.settings.theme = theme;
    }

    pub fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.desk.flash = Some(Flash {
            text: text.into(),
            error,
        });
    }
}
