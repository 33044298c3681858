//! `update`: the one function that changes the console's state. Keys become [`Action`]s through
//! the keymap; text typed into a prompt (filter, command, note) goes to the prompt.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::command_line::{self, Colon};
use super::copy::{COPY_LIMIT, capped, round_text};
use super::event::{Command, Event};
use super::filter::{Field, with_term};
use super::fleet::{Seq, SortOrder};
use super::geometry::Region;
use super::model::{CHECKING_ACCESS, Chooser, DetailView, Focus, Intent, Model, Overlay};
use super::prompt::{Prompt, Typed};
use super::reports::{Watched, at_cursor};
use crate::audit::Trace;
use crate::config::keys::Action;
use crate::config::theme::Theme;
use crate::domain::{
    Access, ActionKind, Claim, DebateNote, Decision, MAX_NOTE, Moment, OperatorAction, Reported,
    Status,
};
use crate::store::ResolveError;
use crate::text::{one_line, thousands};

/// Rows moved by a page key.
const PAGE: i32 = 20;
/// The longest filter and `:` command, in characters.
pub const MAX_LINE: usize = 200;
/// Rows a paused live feed holds back at most; the feed resumes when it would hold more.
pub const HELD_BACK: usize = 50_000;

/// Applies one event; returns what the backend must do.
pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    let before = watched(model);
    let asks = matches!(event, Event::Key(_) | Event::Reports);
    model.dirty |= match &event {
        // Filing a row says whether it shows.
        Event::Store(_) => model.link.is_some() && model.playback.paused,
        Event::Reports => before.is_some(),
        Event::Tick(_) => countdown_shown(model),
        _ => true,
    };
    let mut commands = handle(model, event);
    let rate = match (&model.link, model.playback.paused) {
        (Some(_), _) => 1.0,
        (None, true) => 0.0,
        (None, false) => model.playback.speed,
    };
    model.clock.set_rate(rate);
    let after = watched(model);
    if after != before {
        model.reports.watch(after);
    }
    if asks && let Some(Overlay::Calibration { cursor, .. }) = model.overlay {
        let figures = model.reports.figures();
        if let Some(row) = at_cursor(&figures.calibration, cursor) {
            model.reports.select(&row.setting);
        }
    }
    commands.extend(model.take_wanted().map(Command::LoadHistory));
    commands.extend(presence(model));
    commands
}

/// On a live database: what this console now tells the others (its operator, the debate
/// selected, the waiting decision its open dialog claims), when that changed.
fn presence(model: &mut Model) -> Option<Command> {
    model.link.as_ref()?;
    let looking = model
        .selected
        .and_then(|seq| model.debates.get(seq))
        .map(|s| &*s.id);
    let claim = claim(model);
    let same = model.said.as_ref().is_some_and(|s| {
        s.looking.as_deref() == looking && s.operator == model.operator && s.claim == claim
    });
    if same {
        return None;
    }
    let status = Status {
        operator: model.operator.clone(),
        looking: looking.map(str::to_owned),
        claim,
    };
    model.said = Some(status.clone());
    Some(Command::Present(status))
}

/// Whether a countdown is on screen: in the list, the decision panel or a dialog.
fn countdown_shown(model: &Model) -> bool {
    let waits = |seq: Seq| model.debates.get(seq).is_some_and(|s| s.waiting());
    let dialog = model
        .overlay
        .as_ref()
        .and_then(Overlay::deciding)
        .and_then(|(id, _, _)| model.debates.seq(id));
    model.drawn_rows().iter().any(|&seq| waits(seq))
        || model.selected.is_some_and(waits)
        || dialog.is_some_and(waits)
}

/// The report the open window shows, if any.
fn watched(model: &Model) -> Option<Watched> {
    match model.overlay {
        Some(Overlay::Calibration { .. }) => Some(Watched::Calibration),
        Some(Overlay::ShadowWeek { .. }) => Some(Watched::ShadowWeek),
        _ => None,
    }
}

fn handle(model: &mut Model, event: Event) -> Vec<Command> {
    match event {
        Event::Store(change) if model.link.is_some() && model.playback.paused => {
            model.held_back.push(*change);
            if model.held_back.len() >= HELD_BACK {
                let commands = resume(model);
                model.flash(
                    format!("resumed: {HELD_BACK} rows were held, as many as a pause holds"),
                    true,
                );
                return commands;
            }
        }
        Event::Store(change) => model.apply(*change),
        Event::Reports => {}
        Event::Tick(wall) => {
            model.clock.tick(wall);
            play_history(model, wall);
        }
        Event::Link(link) => model.link = Some(link),
        Event::Presence(peers) => model.peers = peers,
        Event::Access(Access::WatchOnly(why)) => {
            model.read_only = true;
            model.flash(format!("read-only: {why}"), true);
            model.denied = Some(why);
        }
        Event::Access(Access::MayAct { role }) => {
            model.role = Some(role);
            let was_denied = model
                .denied
                .take()
                .is_some_and(|why| why != CHECKING_ACCESS);
            if was_denied {
                let unlock = model.keymap.keys(Action::Unlock);
                model.flash(
                    format!("this role may now record actions: press {unlock} to unlock"),
                    false,
                );
            }
        }
        Event::Resolved(Ok(action)) => {
            model.retry = None;
            model.flash(recorded("recorded", &action), false);
        }
        Event::Resolved(Err(ResolveError::Failed { action, error })) => {
            model.flash(
                format!(
                    "not recorded: {} {} on {} round {}: {error} — press r to retry",
                    action.action, action.decision, action.session_id, action.round_index
                ),
                true,
            );
            model.retry = Some(*action);
        }
        Event::Resolved(Err(refused)) => {
            model.retry = None;
            model.flash(refused.to_string(), true);
        }
        Event::Noted(Ok(note)) => {
            model.flash(
                format!("note pinned to {}", one_line(&note.session_id)),
                false,
            );
        }
        Event::Noted(Err(failed)) => {
            let note = model.keymap.keys(Action::Note);
            model.flash(
                format!("{failed} — {note} on the debate offers it again"),
                true,
            );
            model.unpinned = Some(*failed.note);
        }
        Event::Resize(width, height) => model.screen = (width, height),
        Event::Theme(Ok(theme)) => apply_theme(model, *theme),
        Event::Theme(Err(why)) => {
            let kept = format!("theme not applied, keeping {}: {why}", model.theme.name);
            model.flash(kept, true);
        }
        Event::Paged(Ok(())) => {}
        Event::Paged(Err(why)) => model.flash(format!("the pager did not run: {why}"), true),
        Event::Mouse(mouse) if model.mouse => on_mouse(model, mouse),
        Event::Mouse(_) => {}
        Event::Key(key) if key.kind == KeyEventKind::Release => {}
        Event::Key(key) => return on_key(model, key),
    }
    Vec::new()
}

fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Command> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        model.quit = true;
        return Vec::new();
    }
    let action = model.keymap.action(&key);
    match model.overlay.take() {
        None => return action.map_or_else(Vec::new, |a| on_action(model, a)),
        Some(Overlay::Help { scroll }) => {
            model.overlay =
                scrolled(action, Action::Help, scroll).map(|scroll| Overlay::Help { scroll });
        }
        Some(Overlay::Note(intent)) => on_note_key(model, intent, &key),
        Some(Overlay::Confirm(intent)) => return on_confirm_key(model, intent, &key),
        Some(Overlay::Unlock) => {
            if key.code == KeyCode::Char('y') {
                model.read_only = false;
                model.flash("unlocked: accept, override and escalate are on", false);
            } else {
                model.flash("still read-only: nothing changed", false);
            }
        }
        Some(Overlay::Choose(mut chooser)) => match action {
            Some(Action::Up) => {
                chooser.cursor = chooser.cursor.saturating_sub(1);
                model.overlay = Some(Overlay::Choose(chooser));
            }
            Some(Action::Down) => {
                chooser.cursor = (chooser.cursor + 1).min(chooser.options.len() - 1);
                model.overlay = Some(Overlay::Choose(chooser));
            }
            Some(Action::DrillIn) => model.overlay = Some(Overlay::Confirm(chooser.chosen())),
            _ => model.flash("cancelled: nothing was recorded", false),
        },
        Some(Overlay::Calibration {
            scroll,
            cursor,
            table,
        }) => model.overlay = on_calibration_key(model, action, scroll, cursor, table),
        Some(Overlay::ShadowWeek { scroll }) => {
            model.overlay = scrolled(action, Action::ShadowWeek, scroll)
                .map(|scroll| Overlay::ShadowWeek { scroll });
        }
        Some(Overlay::Who { scroll }) => {
            model.overlay =
                scrolled(action, Action::Quit, scroll).map(|scroll| Overlay::Who { scroll });
        }
        Some(Overlay::Filter) => return on_filter_key(model, &key),
        Some(Overlay::Command) => return on_colon_line_key(model, &key),
        Some(Overlay::Pin(session_id)) => return on_pin_key(model, session_id, &key),
        Some(Overlay::TakeOver(kind)) if key.code == KeyCode::Char('y') => {
            open_decision_dialog(model, kind);
        }
        Some(Overlay::TakeOver(_)) => {
            model.flash("left to the other operator: nothing was recorded", false)
        }
    }
    Vec::new()
}

/// A key while the note of an operator action is typed: Enter and Esc go back to its
/// confirmation (Esc without the note).
fn on_note_key(model: &mut Model, mut intent: Intent, key: &KeyEvent) {
    let typed = type_into(
        model,
        intent.note.as_deref().unwrap_or(""),
        Intent::MAX_NOTE,
        key,
    );
    intent.note = Some(model.prompt.value().to_owned());
    match typed {
        Typed::Typing => model.overlay = Some(Overlay::Note(intent)),
        Typed::Done => model.overlay = Some(Overlay::Confirm(intent)),
        Typed::Cancelled => {
            intent.note = None;
            model.overlay = Some(Overlay::Confirm(intent));
        }
    }
}

/// A key in the confirmation of an operator action: `y` sends it, `n` types a note, anything
/// else cancels.
fn on_confirm_key(model: &mut Model, mut intent: Intent, key: &KeyEvent) -> Vec<Command> {
    match key.code {
        KeyCode::Char('n') => {
            if intent.note.is_none() {
                intent.note = model.kept_note.take();
            }
            model.prompt = Prompt::new(intent.note.as_deref().unwrap_or(""), Intent::MAX_NOTE);
            model.overlay = Some(Overlay::Note(intent));
        }
        KeyCode::Char('y') => {
            let action = intent.into_action(&model.operator);
            if let Err(why) = may_send(model, &action) {
                model.flash(format!("not sent, nothing was recorded: {why}"), true);
                return Vec::new();
            }
            model.flash(
                format!("sending {} {} ...", action.action, action.decision),
                false,
            );
            return vec![Command::Resolve(action)];
        }
        _ => model.flash("cancelled: nothing was recorded", false),
    }
    Vec::new()
}

/// The waiting decision this console's open dialog claims: none for a console that may not
/// act, or once the decision no longer waits (resolved, timed out, superseded).
fn claim(model: &Model) -> Option<Claim> {
    if model.read_only || model.denied.is_some() {
        return None;
    }
    let (session_id, round, _) = model.overlay.as_ref()?.deciding()?;
    let waits = model
        .debates
        .seq(session_id)
        .and_then(|seq| model.debates.get(seq));
    waits.filter(|s| s.waiting() && s.pending() == Some(round))?;
    Some(Claim {
        session_id: session_id.to_owned(),
        round,
    })
}

/// A key in the note line: Enter pins the note, Esc drops it.
fn on_pin_key(model: &mut Model, session_id: String, key: &KeyEvent) -> Vec<Command> {
    match model.prompt.key(key) {
        Typed::Typing => model.overlay = Some(Overlay::Pin(session_id)),
        Typed::Cancelled => model.flash("note dropped: nothing was pinned", false),
        Typed::Done => {
            match DebateNote::draft(&session_id, &model.operator, model.prompt.value()) {
                Ok(note) => {
                    model.flash(
                        format!("pinning a note to {} ...", one_line(&session_id)),
                        false,
                    );
                    return vec![Command::Note(note)];
                }
                Err(why) => model.flash(format!("not pinned: {why}"), true),
            }
        }
    }
    Vec::new()
}

/// `N`: opens the note line for the selected debate, unless this console may not write.
fn open_note(model: &mut Model) {
    if let Some(why) = &model.denied {
        let why = format!("cannot pin a note: {why}");
        model.flash(why, true);
        return;
    }
    if model.read_only {
        let unlock = model.keymap.keys(Action::Unlock);
        model.flash(
            format!("read-only: cannot pin a note — press {unlock} to unlock"),
            true,
        );
        return;
    }
    let Some(id) = model.selected_debate().map(|d| d.session.id.clone()) else {
        model.flash("no debate selected: nothing to note", true);
        return;
    };
    let kept = model
        .unpinned
        .take_if(|n| n.session_id == id)
        .map(|n| n.text)
        .unwrap_or_default();
    model.flash = None;
    model.prompt = Prompt::new(&kept, MAX_NOTE);
    model.overlay = Some(Overlay::Pin(id));
}

/// A key in the filter line: the filter follows the typing; Enter on a live feed also searches
/// the database for the text terms.
fn on_filter_key(model: &mut Model, key: &KeyEvent) -> Vec<Command> {
    let filter = model.filter().to_owned();
    let typed = type_into(model, &filter, MAX_LINE, key);
    let filter = match typed {
        Typed::Typing => {
            model.overlay = Some(Overlay::Filter);
            model.prompt.value().to_owned()
        }
        Typed::Done => model.prompt.value().to_owned(),
        Typed::Cancelled => String::new(),
    };
    model.set_filter(filter);
    keep_selection_visible(model);
    let search = model
        .debates
        .filter_terms()
        .search_text()
        .map(str::to_owned);
    if typed == Typed::Done
        && model.link.is_some()
        && let Some(text) = search
    {
        model.flash(
            format!("searching the database for {} ...", one_line(&text)),
            false,
        );
        return vec![Command::Search(text)];
    }
    Vec::new()
}

/// Applies a key to the open prompt, which edits `text` (taken up afresh when it is not what
/// the prompt holds, e.g. a prompt just opened).
fn type_into(model: &mut Model, text: &str, max: usize, key: &KeyEvent) -> Typed {
    if model.prompt.value() != text || model.prompt.max() != max {
        model.prompt = Prompt::new(text, max);
    }
    model.prompt.key(key)
}

/// A key in the `:` line: Tab and Shift-Tab complete, ↑ and ↓ recall earlier commands, Enter
/// runs the line, Esc closes it; anything else edits it.
fn on_colon_line_key(model: &mut Model, key: &KeyEvent) -> Vec<Command> {
    model.overlay = Some(Overlay::Command);
    let recalled = match key.code {
        KeyCode::Tab => {
            complete(model, 1);
            return Vec::new();
        }
        KeyCode::BackTab => {
            complete(model, -1);
            return Vec::new();
        }
        KeyCode::Up => model.history.older(model.prompt.value()).map(str::to_owned),
        KeyCode::Down => model.history.newer().map(str::to_owned),
        _ => {
            model.completion = None;
            match model.prompt.key(key) {
                Typed::Typing => {}
                Typed::Cancelled => model.overlay = None,
                Typed::Done => {
                    model.overlay = None;
                    let line = model.prompt.value().trim().to_owned();
                    model.history.push(&line);
                    return run_colon_line(model, &line);
                }
            }
            return Vec::new();
        }
    };
    model.completion = None;
    if let Some(line) = recalled {
        model.prompt.set(&line);
    }
    Vec::new()
}

/// Tab (`step` 1) or Shift-Tab (-1) in the `:` line: with several completions shown, puts the
/// next (or previous) in the line; else completes the last word as far as its completions
/// agree, shows them when there are several, and adds a space after a whole command name that
/// takes an argument.
fn complete(model: &mut Model, step: isize) {
    if let Some(shown) = &mut model.completion
        && shown.candidates.len() > 1
    {
        let count = shown.candidates.len() as isize;
        let next = match shown.chosen {
            Some(at) => (at as isize + step).rem_euclid(count),
            None if step > 0 => 0,
            None => count - 1,
        } as usize;
        shown.chosen = Some(next);
        let line = shown.line(next);
        model.prompt.set(&line);
        return;
    }
    let fleet = &model.debates;
    let completion = command_line::complete(model.prompt.value(), |prefix, limit| {
        fleet.ids_starting(prefix, limit)
    });
    match completion.candidates.as_slice() {
        [] => model.completion = Some(completion),
        [only] => {
            let mut line = completion.line(0);
            if completion.head.is_empty() && command_line::takes_argument(only) {
                line.push(' ');
            }
            model.prompt.set(&line);
            model.completion = None;
        }
        many => {
            let line = format!("{}{}", completion.head, command_line::common_prefix(many));
            if line.chars().count() > model.prompt.value().chars().count() {
                model.prompt.set(&line);
            }
            model.completion = Some(completion);
        }
    }
}

/// A key in the calibration window: the cursor moves along the frontier (the list below back to
/// its top), Tab switches the list between the cursor's debates and every setting, the rest
/// scroll or close it.
fn on_calibration_key(
    model: &Model,
    action: Option<Action>,
    scroll: u16,
    cursor: usize,
    table: bool,
) -> Option<Overlay> {
    let last = model
        .reports
        .figures()
        .calibration
        .frontier()
        .len()
        .saturating_sub(1);
    let cursor = cursor.min(last);
    let moved = |cursor: usize| Overlay::Calibration {
        scroll: if table { scroll } else { 0 },
        cursor,
        table,
    };
    match action {
        Some(Action::PreviousSetting) => Some(moved(cursor.saturating_sub(1))),
        Some(Action::NextSetting) => Some(moved((cursor + 1).min(last))),
        Some(Action::SwitchFocus) => Some(Overlay::Calibration {
            scroll: 0,
            cursor,
            table: !table,
        }),
        _ => scrolled(action, Action::Calibration, scroll).map(|scroll| Overlay::Calibration {
            scroll,
            cursor,
            table,
        }),
    }
}

/// A scrolling window's keys, as in k9s or lazygit: the arrows, `j`/`k`, PgUp/PgDn and Home
/// scroll it; Esc (back), `q` and the key that opened it (`opener`) close it; any other key
/// leaves it as it is. The new offset, or `None` when the window closes.
fn scrolled(action: Option<Action>, opener: Action, scroll: u16) -> Option<u16> {
    match action {
        Some(Action::Up) => Some(scroll.saturating_sub(1)),
        Some(Action::Down) => Some(scroll.saturating_add(1)),
        Some(Action::PageUp) => Some(scroll.saturating_sub(PAGE as u16)),
        Some(Action::PageDown) => Some(scroll.saturating_add(PAGE as u16)),
        Some(Action::Top) => Some(0),
        Some(Action::Back | Action::Quit) => None,
        Some(action) if action == opener => None,
        _ => Some(scroll),
    }
}

fn on_action(model: &mut Model, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => model.quit = true,
        Action::Help => model.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::Calibration => {
            model.overlay = Some(Overlay::Calibration {
                scroll: 0,
                cursor: 0,
                table: false,
            });
        }
        Action::ShadowWeek => model.overlay = Some(Overlay::ShadowWeek { scroll: 0 }),
        // The calibration window's own keys: nothing outside it.
        Action::PreviousSetting | Action::NextSetting => {}
        Action::Filter => {
            model.flash = None;
            model.prompt = Prompt::new(model.filter(), MAX_LINE);
            model.overlay = Some(Overlay::Filter);
        }
        Action::ColonLine => {
            model.flash = None;
            model.prompt = Prompt::new("", MAX_LINE);
            model.history.restart();
            model.completion = None;
            model.overlay = Some(Overlay::Command);
        }
        Action::Copy => return copy(model),
        Action::Note => open_note(model),
        Action::Pager => return page(model),
        Action::Sort => {
            model.set_sort(model.sort().next());
            model.flash(format!("debates sorted by {}", model.sort().label()), false);
        }
        Action::Pause if model.past.is_some() => {
            if let Some(past) = &mut model.past {
                past.playing = match past.playing {
                    Some(_) => None,
                    None => Some(None),
                };
                let what = if past.playing.is_some() {
                    "playing history forward"
                } else {
                    "history paused"
                };
                model.flash(what, false);
                model.dirty = true;
            }
        }
        Action::Pause if model.playback.paused => return resume(model),
        Action::Pause => return set_playback(model, model.playback.toggled()),
        Action::Faster | Action::Slower if !model.simulated => {
            model.flash(
                "playback speed is the demo's only: a live feed plays as it comes",
                false,
            );
        }
        Action::Faster => return set_playback(model, model.playback.faster()),
        Action::Slower => return set_playback(model, model.playback.slower()),
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom
        | Action::SwitchFocus
        | Action::DrillIn
        | Action::Back
        | Action::NextView
        | Action::PreviousView
        | Action::ViewRounds
        | Action::ViewTranscript
        | Action::ViewJudge
        | Action::ViewTrace
        | Action::ViewFormat => navigate(model, action),
        Action::StepBack | Action::StepForward | Action::FirstDecision | Action::LatestDecision => {
            travel(model, action)
        }
        Action::Unlock
        | Action::Accept
        | Action::Override
        | Action::Escalate
        | Action::Retry
        | Action::NextWaiting => return on_decision_action(model, action),
    }
    Vec::new()
}

/// Moving in the list, the rounds table or a text, and switching focus and views.
fn navigate(model: &mut Model, action: Action) {
    match action {
        Action::Up => move_by(model, -1),
        Action::Down => move_by(model, 1),
        Action::PageUp => move_by(model, -PAGE),
        Action::PageDown => move_by(model, PAGE),
        Action::Top => match model.focus {
            Focus::Debates => {
                if let Some(first) = model.debates.first() {
                    model.select(first);
                }
            }
            Focus::Detail => move_round(model, i32::MIN),
        },
        Action::Bottom => match (model.focus, model.view) {
            (Focus::Debates, _) => {
                if let Some(last) = model.debates.last() {
                    model.select(last);
                }
            }
            (Focus::Detail, DetailView::Rounds) => move_round(model, i32::MAX),
            (Focus::Detail, _) => {
                if let Some(rows) = model.geometry.detail_text {
                    model.detail_scroll = i32::try_from(rows.bottom()).unwrap_or(i32::MAX);
                }
            }
        },
        Action::SwitchFocus => {
            model.focus = match model.focus {
                Focus::Debates => Focus::Detail,
                Focus::Detail => Focus::Debates,
            }
        }
        Action::DrillIn => match (model.focus, model.view) {
            (Focus::Debates, _) => model.focus = Focus::Detail,
            (Focus::Detail, DetailView::Rounds) => set_view(model, DetailView::Transcript),
            (Focus::Detail, _) => {}
        },
        Action::Back if model.past.is_some() => {
            model.travel(None);
            model.flash("live", false);
        }
        Action::Back => {
            model.focus = Focus::Debates;
            model.flash = None;
        }
        Action::NextView => set_view(model, model.view.step(1)),
        Action::PreviousView => set_view(model, model.view.step(-1)),
        Action::ViewRounds => set_view(model, DetailView::Rounds),
        Action::ViewTranscript => set_view(model, DetailView::Transcript),
        Action::ViewJudge => set_view(model, DetailView::Judge),
        Action::ViewTrace => set_view(model, DetailView::Trace),
        Action::ViewFormat => set_view(model, DetailView::Format),
        _ => {}
    }
}

/// The time cursor: to the decision before or after the one shown, each as it was settled
/// (after the latest: live), or to the first or the latest.
fn travel(model: &mut Model, action: Action) {
    let stops: Vec<Moment> = model
        .selected
        .and_then(|seq| model.held(seq))
        .map(|live| live.stops().collect())
        .unwrap_or_default();
    let (Some(&first), Some(&latest)) = (stops.first(), stops.last()) else {
        model.flash("no decision yet to look back to", false);
        return;
    };
    let at = model.past.as_ref().map(|p| p.moment);
    let to = match (action, at) {
        (Action::StepBack, None) => Some(latest),
        (Action::StepBack, Some(at)) => {
            Some(stops.iter().rev().find(|&&m| m < at).map_or(first, |&m| m))
        }
        (Action::StepForward, None) => None,
        (Action::StepForward, Some(at)) => stops.iter().find(|&&m| m > at).copied(),
        (Action::FirstDecision, _) => Some(first),
        _ => Some(latest),
    };
    model.travel(to);
    if to.is_none() {
        model.flash("live", false);
    }
}

/// Playing history forward (`space` in the past): the next moment — a decision landing, then
/// the action on it — comes after the time that passed between the two as recorded
/// ([`Debate::time_of`]), at the playback speed, between 0.2 and 10 s; after the latest, live.
fn play_history(model: &mut Model, wall: chrono::DateTime<chrono::Utc>) {
    let Some(Some(due)) = model.past.as_ref().map(|p| p.playing) else {
        return;
    };
    if due.is_some_and(|due| wall < due) {
        return;
    }
    if due.is_some() {
        let (next, _) = next_moment(model);
        model.travel(next);
        if next.is_none() {
            model.flash("live", false);
        }
    }
    let (_, wait) = next_moment(model);
    if let Some(past) = &mut model.past {
        past.playing = Some(Some(wall + wait));
    }
}

/// The moment after the one shown (`None` after the latest: live), and how long history plays
/// before it lands: the recorded time between the two at the playback speed, between 0.2 and
/// 10 s (2 s when not recorded).
fn next_moment(model: &Model) -> (Option<Moment>, chrono::Duration) {
    let live = model.selected.and_then(|seq| model.held(seq));
    let at = model.past.as_ref().map(|p| p.moment);
    let next = live.zip(at).and_then(|(live, at)| {
        let next = live.moments().find(|&m| m > at)?;
        Some((live, at, next))
    });
    let gap = next.and_then(|(live, at, next)| {
        let (from, to) = (live.time_of(at)?, live.time_of(next)?);
        (to - from).to_std().ok()
    });
    let seconds = gap.map_or(2.0, |g| g.as_secs_f64()) / model.playback.speed.max(0.01);
    let wait = chrono::Duration::milliseconds((seconds.clamp(0.2, 10.0) * 1000.0) as i64);
    (next.map(|(_, _, next)| next), wait)
}

/// Unlocking, and the actions on decisions: accept, override, escalate, retry, the next one
/// waiting.
fn on_decision_action(model: &mut Model, action: Action) -> Vec<Command> {
    match action {
        Action::Unlock if model.denied.is_some() => {
            let why = model.denied.clone().unwrap_or_default();
            model.flash(format!("still read-only: {why}"), true);
        }
        Action::Unlock if model.read_only => model.overlay = Some(Overlay::Unlock),
        Action::Unlock => model.flash("not read-only: actions are already on", false),
        Action::Accept | Action::Override | Action::Escalate if model.past.is_some() => {
            let live = model.keymap.keys(Action::Back);
            model.flash(
                format!("in the past: nothing is decided there — {live} returns to live"),
                true,
            );
        }
        Action::Accept | Action::Override | Action::Escalate | Action::Retry if model.read_only => {
            let why = match &model.denied {
                Some(why) => format!("read-only: nothing is recorded — {why}"),
                None => {
                    let unlock = model.keymap.keys(Action::Unlock);
                    format!("read-only: nothing is recorded — press {unlock} to unlock")
                }
            };
            model.flash(why, true);
        }
        Action::Retry => match model.retry.take() {
            None => model.flash("nothing to retry", true),
            Some(action) if landed(model, &action) => {
                model.flash(recorded("recorded after all", &action), false);
            }
            Some(action) => match may_send(model, &action) {
                Err(why) => model.flash(format!("not retried, nothing was recorded: {why}"), true),
                Ok(()) => {
                    model.flash("retrying ...", false);
                    return vec![Command::Resolve(action)];
                }
            },
        },
        Action::NextWaiting => match model.debates.next_waiting_where(model.selected, |s| {
            s.pending()
                .is_none_or(|round| model.deciding(&s.id, round).is_none())
        }) {
            None => model.flash("no decision waits for you", false),
            Some(seq) => {
                model.jump(seq);
                if let Some(summary) = model.debates.get(seq) {
                    let left = model.time_left(summary).unwrap_or_default();
                    let waiting = model.debates.waiting();
                    let round = summary.pending().unwrap_or_default();
                    let claimed = model
                        .deciding(&summary.id, round)
                        .map(|(who, _)| format!("; {} deciding", one_line(&who)))
                        .unwrap_or_default();
                    model.flash(
                        format!(
                            "{} round {round} waits for you: {} left ({waiting} waiting){claimed}",
                            one_line(&summary.id),
                            crate::text::countdown(left)
                        ),
                        false,
                    );
                }
            }
        },
        Action::Accept => ask_or_open(model, ActionKind::Accept),
        Action::Override => ask_or_open(model, ActionKind::Override),
        Action::Escalate => ask_or_open(model, ActionKind::Escalate),
        _ => {}
    }
    Vec::new()
}

/// Plays on, applying the rows held while paused.
fn resume(model: &mut Model) -> Vec<Command> {
    let commands = set_playback(model, model.playback.toggled());
    for change in std::mem::take(&mut model.held_back) {
        model.apply(change);
    }
    commands
}

fn set_playback(model: &mut Model, playback: crate::simulate::Playback) -> Vec<Command> {
    model.playback = playback;
    vec![Command::SetPlayback(playback)]
}

/// Shows a detail view from the selected round's start, with the arrow keys on it.
fn set_view(model: &mut Model, view: DetailView) {
    model.view = view;
    model.focus = Focus::Detail;
    model.detail_scroll = 0;
}

/// Moves `step` rows in the focused place: the debates list, the rounds table, or the text of
/// a detail view (scrolling up past a round's start goes to the round before it).
fn move_by(model: &mut Model, step: i32) {
    match (model.focus, model.view) {
        (Focus::Debates, _) => {
            if let Some(next) = model.debates.step(model.selected, i64::from(step)) {
                model.select(next);
            }
        }
        (Focus::Detail, DetailView::Rounds) => move_round(model, step),
        (Focus::Detail, DetailView::Format) => {
            model.detail_scroll = (model.detail_scroll + step).max(0);
            clamp_scroll(model);
        }
        (Focus::Detail, _) => {
            let scroll = model.detail_scroll + step;
            if scroll < 0 && model.selected_round().is_some_and(|r| r > 1) {
                move_round(model, -1);
            } else {
                model.detail_scroll = scroll.max(0);
                clamp_scroll(model);
            }
        }
    }
}

/// Selects the round `step` rounds away; following the latest again when it gets there.
fn move_round(model: &mut Model, step: i32) {
    let Some(current) = model.selected_round() else {
        return;
    };
    let latest = model.selected_debate().map_or(0, |d| d.latest_round());
    let next = (i64::from(current) + i64::from(step)).clamp(1, i64::from(latest)) as u32;
    model.round_cursor = (next != latest).then_some(next);
    model.detail_scroll = 0;
}

/// Keeps the detail's scroll within its text as last drawn, once a frame was.
fn clamp_scroll(model: &mut Model) {
    if let Some(rows) = model.geometry.detail_text {
        model.detail_scroll = model.detail_scroll.min(rows.total.saturating_sub(1) as i32);
    }
}

/// After the filter changed: the selection stays if it is still shown, else moves to the first
/// debate shown.
fn keep_selection_visible(model: &mut Model) {
    let shown = model
        .selected
        .is_some_and(|seq| model.debates.is_listed(seq));
    if !shown && let Some(first) = model.debates.first() {
        model.select(first);
    }
}

/// Applies a theme: from the theme file watched, or `:theme`.
fn apply_theme(model: &mut Model, theme: Theme) {
    model.flash(format!("theme {} applied", theme.name), false);
    model.theme = theme;
}

/// Runs a `:` command line (see [`command_line::parse`]).
fn run_colon_line(model: &mut Model, line: &str) -> Vec<Command> {
    let colon = match command_line::parse(line) {
        Ok(Some(colon)) => colon,
        Ok(None) => return Vec::new(),
        Err(why) => {
            model.flash(why, true);
            return Vec::new();
        }
    };
    match colon {
        Colon::Quit => model.quit = true,
        Colon::Help => model.overlay = Some(Overlay::Help { scroll: 0 }),
        Colon::Who => model.overlay = Some(Overlay::Who { scroll: 0 }),
        Colon::Pending => filter_by(model, Field::Pending, Some("is:pending".to_owned())),
        Colon::Waiting => filter_by(model, Field::Waiting, Some("is:waiting".to_owned())),
        Colon::Mode(mode) => filter_by(model, Field::Mode, mode.map(|m| format!("mode:{m}"))),
        Colon::Sort(order) => sort_by(model, order),
        Colon::Theme(name) => match Theme::bundled(&name) {
            Ok(theme) => apply_theme(model, theme),
            Err(why) => model.flash(format!("{why:#}"), true),
        },
        Colon::Jump(id) => return jump(model, &id),
    }
    Vec::new()
}

/// Puts `term` in the filter in place of its terms on `field` (none: removes them), and says
/// what the list shows.
fn filter_by(model: &mut Model, field: Field, term: Option<String>) {
    let filter = with_term(model.filter(), field, term.as_deref());
    model.set_filter(filter);
    keep_selection_visible(model);
    let shown = model.debates.listed();
    let message = match model.filter() {
        "" => format!("every debate listed ({shown})"),
        filter => format!(
            "filter /{} lists {shown} debates (/ edits it)",
            one_line(filter)
        ),
    };
    model.flash(message, false);
}

fn sort_by(model: &mut Model, order: SortOrder) {
    model.set_sort(order);
    model.flash(format!("debates sorted by {}", model.sort().label()), false);
}

/// `:<id>`: selects the debate with this id, or the one debate whose id contains it; attached
/// to a database, an id held nowhere is looked up there.
fn jump(model: &mut Model, text: &str) -> Vec<Command> {
    let exact = model.debates.seq(text);
    let needle = text.to_lowercase();
    let mut near: Vec<(Seq, &str)> = model
        .debates
        .summaries()
        .filter(|s| s.id.to_lowercase().contains(&needle))
        .map(|s| (s.seq, &*s.id))
        .collect();
    near.sort_unstable();
    let near: Vec<(Seq, String)> = near
        .into_iter()
        .map(|(seq, id)| (seq, id.to_owned()))
        .collect();
    let position = match (exact, near.as_slice()) {
        (Some(at), _) | (None, &[(at, _)]) => at,
        (None, []) if model.link.is_some() => {
            model.jump_to = Some(text.to_owned());
            model.flash(
                format!("looking up {} in the database ...", one_line(text)),
                false,
            );
            return vec![Command::LoadHistory(text.to_owned())];
        }
        (None, []) => {
            model.flash(
                format!(
                    "no debate with id {} and no such command: the commands are {}",
                    one_line(text),
                    command_line::known()
                ),
                true,
            );
            return Vec::new();
        }
        (None, many) => {
            let ids: Vec<&str> = many.iter().take(5).map(|(_, id)| id.as_str()).collect();
            model.flash(
                format!(
                    "{} debates match {text}: {} ... (Tab completes)",
                    many.len(),
                    ids.join(", ")
                ),
                true,
            );
            return Vec::new();
        }
    };
    model.jump(position);
    Vec::new()
}

/// `y`: the selected debate's id (in the list), the trace (in the trace view) or the selected
/// round's turns (in the other views) to the clipboard, cut to [`COPY_LIMIT`].
fn copy(model: &mut Model) -> Vec<Command> {
    let Some(debate) = model.selected_debate() else {
        model.flash("nothing to copy: no debate selected", true);
        return Vec::new();
    };
    let id = one_line(&debate.session.id);
    let (what, text) = match (model.focus, model.view) {
        (Focus::Debates, _) => ("the id".to_owned(), Some(debate.session.id.to_string())),
        (Focus::Detail, DetailView::Trace) => {
            ("the trace".to_owned(), Some(Trace::of(debate).text()))
        }
        (Focus::Detail, _) => {
            let round = model.selected_round().unwrap_or(1);
            (format!("round {round}'s turns"), round_text(debate, round))
        }
    };
    let Some(text) = text else {
        model.flash(
            format!("nothing to copy: {what} of {id} has no turns yet"),
            true,
        );
        return Vec::new();
    };
    let text = crate::text::inert_lines(&text);
    let whole = text.len();
    let (text, cut) = capped(text, COPY_LIMIT);
    let message = if cut {
        format!(
            "copied the first {} of {} bytes of {what} of {id} (the clipboard takes {} at most; P pages it whole)",
            thousands(text.len() as u64),
            thousands(whole as u64),
            thousands(COPY_LIMIT as u64)
        )
    } else {
        format!("copied {what} of {id} ({} bytes)", thousands(whole as u64))
    };
    model.flash(message, false);
    vec![Command::Copy(text)]
}

/// `P`: the trace (in the trace view) or the selected round's turns in the pager.
fn page(model: &mut Model) -> Vec<Command> {
    let Some(debate) = model.selected_debate() else {
        model.flash("nothing to page: no debate selected", true);
        return Vec::new();
    };
    let id = one_line(&debate.session.id);
    if model.focus == Focus::Detail && model.view == DetailView::Trace {
        let title = format!("trace · {id}");
        let text = Trace::of(debate).text();
        return vec![Command::Page { title, text }];
    }
    let round = model.selected_round().unwrap_or(1);
    match round_text(debate, round) {
        Some(text) => {
            let title = format!("{id} · round {round}");
            vec![Command::Page { title, text }]
        }
        None => {
            model.flash(
                format!("nothing to page: round {round} of {id} has no turns yet"),
                true,
            );
            Vec::new()
        }
    }
}

/// Mouse wheel scrolls where the pointer is (or the open window); a left click selects a
/// debate or a round.
fn on_mouse(model: &mut Model, mouse: crossterm::event::MouseEvent) {
    let step = match mouse.kind {
        MouseEventKind::ScrollUp => -3,
        MouseEventKind::ScrollDown => 3,
        MouseEventKind::Down(MouseButton::Left) => 0,
        _ => return,
    };
    if let Some(overlay) = &mut model.overlay {
        if let Overlay::Help { scroll }
        | Overlay::Calibration { scroll, .. }
        | Overlay::ShadowWeek { scroll }
        | Overlay::Who { scroll } = overlay
        {
            *scroll = scroll.saturating_add_signed(step as i16);
        }
        return;
    }
    let Some((region, row)) = model.geometry.region_at(mouse.column, mouse.row) else {
        return;
    };
    model.focus = match region {
        Region::Debates => Focus::Debates,
        Region::Detail => Focus::Detail,
    };
    if step != 0 {
        move_by(model, step);
        return;
    }
    match (region, row) {
        (Region::Debates, Some(row)) => {
            let window = model
                .debates
                .window(model.selected, model.geometry.list_rows());
            if let Some(&seq) = window.rows.get(row) {
                model.select(seq);
            }
        }
        (Region::Detail, Some(row)) if model.view == DetailView::Rounds => {
            let latest = model.selected_debate().map_or(0, |d| d.latest_round());
            let number = row as u32 + 1;
            if number <= latest {
                model.round_cursor = (number != latest).then_some(number);
            }
        }
        _ => {}
    }
}

/// Opens the dialog of `action`, first asking whether to take over when another console is
/// deciding the decision (claims are advice: the database still decides every race).
fn ask_or_open(model: &mut Model, action: ActionKind) {
    let claimed = model
        .selected_debate()
        .and_then(|d| d.pending())
        .and_then(|p| model.deciding(&p.session_id, p.round_index));
    match claimed {
        Some(_) => model.overlay = Some(Overlay::TakeOver(action)),
        None => open_decision_dialog(model, action),
    }
}

/// Opens the confirmation (accept) or the pick list (override, escalate) for the selected
/// debate's pending decision.
fn open_decision_dialog(model: &mut Model, action: ActionKind) {
    let Some(debate) = model.selected_debate() else {
        return;
    };
    let Some(pending) = debate.pending() else {
        let id = debate.session.id.clone();
        model.flash(format!("no pending decision on {id}"), true);
        return;
    };
    let session_id = pending.session_id.clone();
    let round_index = pending.round_index;
    let options: Vec<String> = match action {
        ActionKind::Accept => {
            let intent = Intent {
                session_id,
                round_index,
                action,
                decision: pending.decision.clone(),
                persona: pending.signals.escalate_persona.clone(),
                note: None,
            };
            match may_send(model, &intent.clone().into_action(&model.operator)) {
                Ok(()) => model.overlay = Some(Overlay::Confirm(intent)),
                Err(why) => model.flash(format!("cannot accept: {why}"), true),
            }
            return;
        }
        ActionKind::Override => Decision::ALL
            .iter()
            .filter(|d| **d != Decision::EscalateNewPersona)
            .filter(|d| pending.decision != Reported::Known(**d))
            .map(|d| d.as_str().to_owned())
            .collect(),
        ActionKind::Escalate => debate.unused_personas(),
    };
    if options.is_empty() {
        model.flash(
            "every roster persona has already taken part: nobody to bring in",
            true,
        );
        return;
    }
    model.overlay = Some(Overlay::Choose(Chooser {
        session_id,
        round_index,
        action,
        options,
        cursor: 0,
    }));
}

/// What the console says of an action recorded: `what`, then who did what where.
fn recorded(what: &str, action: &OperatorAction) -> String {
    format!(
        "{what}: {} {} {} on {} round {}",
        action.operator, action.action, action.decision, action.session_id, action.round_index
    )
}

/// Whether the decision `action` resolves is on screen as resolved by `action` itself, written
/// by this console's role: an attempt that was not answered did land.
fn landed(model: &Model, action: &OperatorAction) -> bool {
    model
        .debate(&action.session_id)
        .and_then(|debate| debate.actions.get(&action.round_index))
        .is_some_and(|row| action.is_recorded_as(row, model.role.as_deref()))
}

/// Whether `action` may be sent, as far as the console knows: not read-only, its debate on
/// screen, its decision not yet resolved and still open (the store checks again when it writes).
fn may_send(model: &Model, action: &OperatorAction) -> Result<(), String> {
    if let Some(why) = &model.denied {
        return Err(why.clone());
    }
    if model.read_only {
        return Err("the console is read-only".to_owned());
    }
    let Some(debate) = model.debate(&action.session_id) else {
        return Err(format!("no debate {} on screen", action.session_id));
    };
    if let Some(existing) = debate.actions.get(&action.round_index) {
        return Err(ResolveError::AlreadyResolved(Box::new(existing.clone())).to_string());
    }
    action
        .check_open(&debate.decision_state(action.round_index))
        .map_err(|why| why.to_string())
}
