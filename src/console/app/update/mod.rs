//! `update`: the one function that changes the console's state, and the one dispatcher: each
//! event goes from here to the module for its kind, and none of those modules hands an event
//! on to another. [`events`]: what the feed, the backend, the terminal and the clock say (rows,
//! ticks, the role's rights, outcomes, themes); [`keys`]: the operator's actions with no
//! overlay open, and the mouse; an open overlay's keys to the module that owns it: [`overlay`]
//! (the windows and questions), [`desk`] (the dialogs of the operator's actions on decisions,
//! the take-over question, notes) or [`prompt`] (the filter and `:` lines). Below them:
//! [`nav`] (moving about), [`time_travel`] (the time cursor and playback) and [`hand_out`] (the
//! clipboard, the pager); [`rollout`] owns the settings' history, the rollout view and the
//! dialogs that publish, promote or roll back a version. Keys become [`Action`]s through the keymap; text typed into a prompt
//! goes to the prompt. After every event, the watched report, the calibration cursor's
//! setting, a history to load and what presence says follow the model.

mod desk;
mod events;
mod hand_out;
mod keys;
mod nav;
mod overlay;
mod prompt;
mod rollout;
mod time_travel;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::event::{Command, Event};
use super::fleet::Seq;
use super::model::{Model, Overlay};
use super::reports::Watched;
use crate::config::keys::Action;
use crate::domain::Status;

/// Rows moved by a page key.
const PAGE: i32 = 20;
/// The longest filter and `:` command, in characters.
pub const MAX_LINE: usize = 200;
/// Rows a paused live feed holds back at most; the feed resumes when it would hold more.
pub const HELD_BACK: usize = 50_000;

/// Applies one event; returns what the backend must do.
pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    // What one database of several said: handled as the same event from one database, with
    // its context.
    let (ctx, event) = match event {
        Event::In(ctx, event) => (Some(ctx), *event),
        event => (None, event),
    };
    let before = watched(model);
    let asks = matches!(event, Event::Key(_) | Event::Reports(_));
    model.screen.dirty |= match &event {
        // Filing a row says whether it shows.
        Event::Store(_) => model.live.link.is_some() && model.time.playback.paused,
        Event::Reports(_) => before.is_some(),
        Event::Tick(_) => countdown_shown(model),
        _ => true,
    };
    let mut commands = Vec::new();
    match event {
        Event::Key(key) if key.kind == KeyEventKind::Release => {}
        Event::Key(key) => commands = on_key(model, key),
        Event::Mouse(mouse) if model.settings.mouse => keys::on_mouse(model, mouse),
        Event::Mouse(_) => {}
        Event::Store(change) => commands = events::on_row(model, ctx.unwrap_or(0), *change),
        Event::Tick(wall) => events::on_tick(model, wall),
        Event::Access(access) => match ctx {
            Some(ctx) => events::on_context_access(model, ctx, access),
            None => events::on_access(model, access),
        },
        Event::Resolved(outcome) => events::on_resolved(model, ctx.unwrap_or(0), outcome),
        Event::Noted(outcome) => events::on_noted(model, outcome),
        Event::Theme(theme) => events::on_theme(model, theme),
        Event::Paged(outcome) => events::on_paged(model, outcome),
        Event::Reports(figures) => rollout::on_reports(model, *figures),
        // Each database's settings history is its own, and so is a version written there.
        Event::Settings(history) => rollout::on_settings(model, ctx.unwrap_or(0), history),
        Event::Published(outcome) => rollout::on_published(model, ctx.unwrap_or(0), outcome),
        Event::Link(link) => match ctx {
            Some(ctx) => events::on_context_link(model, ctx, link),
            None => model.live.link = Some(link),
        },
        Event::Presence(peers) => match ctx {
            Some(ctx) => events::on_context_presence(model, ctx, peers),
            None => model.live.peers = peers,
        },
        Event::Replica(replica) => {
            if let Some(reading) = &mut model.live.reading {
                reading.apply(replica);
            }
        }
        Event::Resize(width, height) => model.screen.size = (width, height),
        Event::History { id, found } if ctx.is_some() => {
            events::on_context_history(model, &id, found);
        }
        Event::History { id, found } => events::on_history(model, &id, found),
        // Unwrapped above: an event is tagged once.
        Event::In(..) => {}
    }
    let rate = match (&model.live.link, model.time.playback.paused) {
        (Some(_), _) => 1.0,
        (None, true) => 0.0,
        (None, false) => model.time.playback.speed,
    };
    model.time.clock.set_rate(rate);
    let after = watched(model);
    model.reports.watch(after);
    if asks && let Some(Overlay::Calibration { cursor, .. }) = model.desk.overlay {
        model.reports.select(cursor);
    }
    commands.extend(
        model
            .take_wanted()
            .map(|(ctx, id)| model.live.contexts.to(ctx, Command::LoadHistory(id))),
    );
    commands.extend(presence(model));
    commands
}

/// A key: Ctrl-C quits; an open overlay takes it (to the module that owns that overlay), else
/// its [`Action`] acts.
fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Command> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        model.quit = true;
        return Vec::new();
    }
    let action = model.settings.keymap.action(&key);
    let Some(open) = model.desk.overlay.take() else {
        return action.map_or_else(Vec::new, |a| keys::on_action(model, a));
    };
    // The overlay is out of the model while its key is handled; put back unless the key closes it.
    match open {
        Overlay::Filter => return prompt::on_filter_key(model, &key),
        Overlay::Command => return prompt::on_colon_line_key(model, &key),
        Overlay::Confirm(intent) => return desk::on_confirm_key(model, intent, &key),
        Overlay::Pin(session_id) => return desk::on_pin_key(model, session_id, &key),
        Overlay::Note(intent) => desk::on_note_key(model, intent, &key),
        Overlay::TakeOver(kind) => desk::on_take_over_key(model, kind, &key),
        Overlay::Unlock => overlay::on_unlock_key(model, &key),
        Overlay::Choose(chooser) => overlay::on_choose_key(model, chooser, action),
        Overlay::Calibration {
            scroll,
            cursor,
            table,
        } => {
            model.desk.overlay = overlay::on_calibration_key(model, action, scroll, cursor, table);
            if action == Some(Action::Publish) {
                rollout::publish_from_calibration(model, cursor);
            }
        }
        Overlay::Rollout {
            scroll,
            debate_type,
            ctx,
        } => rollout::on_rollout_key(model, action, scroll, debate_type, ctx),
        Overlay::Draft(draft) => return rollout::on_draft_key(model, draft, &key),
        Overlay::Help { scroll } => {
            model.desk.overlay = overlay::scrolled(action, Action::Help, scroll)
                .map(|scroll| Overlay::Help { scroll });
        }
        Overlay::ShadowWeek { scroll } => {
            model.desk.overlay = overlay::scrolled(action, Action::ShadowWeek, scroll)
                .map(|scroll| Overlay::ShadowWeek { scroll });
        }
        Overlay::Who { scroll } => {
            model.desk.overlay = overlay::scrolled(action, Action::Quit, scroll)
                .map(|scroll| Overlay::Who { scroll });
        }
    }
    Vec::new()
}

/// On a live database: what this console now tells the others (its operator, the debate
/// selected, the waiting decision its open dialog claims, the rollout it is writing a version
/// of), when that changed.
fn presence(model: &mut Model) -> Vec<Command> {
    if model.live.link.is_none() {
        return Vec::new();
    }
    let looking = model
        .nav
        .selected
        .and_then(|seq| model.debates.get(seq))
        .map(|s| &*s.id);
    let claim = desk::claim(model);
    let editing = rollout::editing(model);
    let editing_in = editing.map(|(ctx, _)| ctx);
    // On several databases the same id may be looked at in another.
    let selected = model.nav.selected.map(|seq| model.ctx_of(seq));
    let same = model.live.contexts.told == selected
        && model.live.said.as_ref().is_some_and(|s| {
            s.looking.as_deref() == looking
                && s.operator == model.about.operator
                && s.claim == claim
                && s.editing.as_deref() == editing.map(|(_, t)| t)
        });
    if same {
        return Vec::new();
    }
    let status = Status {
        operator: model.about.operator.clone(),
        looking: looking.map(str::to_owned),
        claim,
        editing: editing.map(|(_, t)| t.to_owned()),
    };
    model.live.said = Some(status.clone());
    model.live.contexts.told = selected;
    if !model.live.contexts.several() {
        return vec![Command::Present(status)];
    }
    // Each database hears of the debate looked at, the decision claimed and the rollout
    // edited only when they are its own.
    let said = model.live.contexts.iter().map(|(ctx, _)| {
        let own = selected == Some(ctx);
        let status = Status {
            operator: status.operator.clone(),
            looking: status.looking.clone().filter(|_| own),
            claim: status.claim.clone().filter(|_| own),
            editing: status.editing.clone().filter(|_| editing_in == Some(ctx)),
        };
        Command::In(ctx, Box::new(Command::Present(status)))
    });
    said.collect()
}

/// Whether a countdown is on screen: in the list, the decision panel or a dialog.
fn countdown_shown(model: &Model) -> bool {
    let waits = |seq: Seq| model.debates.get(seq).is_some_and(|s| s.waiting());
    let dialog = model
        .desk
        .overlay
        .as_ref()
        .and_then(Overlay::deciding)
        .and_then(|(id, _, _)| model.seq_of(id));
    model.drawn_rows().iter().any(|&seq| waits(seq))
        || model.nav.selected.is_some_and(waits)
        || dialog.is_some_and(waits)
}

/// The report the open window shows, if any.
fn watched(model: &Model) -> Option<Watched> {
    match model.desk.overlay {
        Some(Overlay::Calibration { .. }) => Some(Watched::Calibration),
        Some(Overlay::ShadowWeek { .. }) => Some(Watched::ShadowWeek),
        Some(Overlay::Rollout { .. }) => Some(Watched::Rollout),
        _ => None,
    }
}
