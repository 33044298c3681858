//! Events other than the operator's keys and mouse: rows, ticks, the link and the role's
//! rights, the outcomes of actions and notes sent, resizes, themes, the pager's end.

use crossterm::event::KeyEventKind;

use crate::config::keys::Action;
use crate::config::theme::Theme;
use crate::console::app::event::{Command, Event};
use crate::console::app::model::{CHECKING_ACCESS, Model};
use crate::domain::{Access, DebateNote, OperatorAction};
use crate::store::{NoteFailed, ResolveError};
use crate::text::one_line;

use super::HELD_BACK;
use super::desk::recorded;
use super::keys::{on_key, on_mouse};
use super::rollout;
use super::time_travel::{play_history, resume};

/// Applies an event other than a key or the mouse's to the model, or passes it on.
pub(super) fn handle(model: &mut Model, event: Event) -> Vec<Command> {
    match event {
        Event::Store(change) if model.live.link.is_some() && model.time.playback.paused => {
            model.live.held_back.push(*change);
            if model.live.held_back.len() >= HELD_BACK {
                let commands = resume(model);
                model.flash(
                    format!("resumed: {HELD_BACK} rows were held, as many as a pause holds"),
                    true,
                );
                return commands;
            }
        }
        Event::Store(change) => model.apply(*change),
        Event::Reports(figures) => rollout::on_reports(model, *figures),
        Event::Settings(history) => rollout::on_settings(model, history),
        Event::Published(outcome) => rollout::on_published(model, outcome),
        Event::Tick(wall) => {
            model.time.clock.tick(wall);
            play_history(model, wall);
        }
        Event::Link(link) => model.live.link = Some(link),
        Event::Presence(peers) => model.live.peers = peers,
        Event::Access(access) => on_access(model, access),
        Event::Resolved(outcome) => on_resolved(model, outcome),
        Event::Noted(outcome) => on_noted(model, outcome),
        Event::Resize(width, height) => model.screen.size = (width, height),
        Event::Theme(Ok(theme)) => apply_theme(model, *theme),
        Event::Theme(Err(why)) => {
            let kept = format!(
                "theme not applied, keeping {}: {why}",
                model.settings.theme.name
            );
            model.flash(kept, true);
        }
        Event::Paged(Ok(())) => {}
        Event::Paged(Err(why)) => model.flash(format!("the pager did not run: {why}"), true),
        Event::Mouse(mouse) if model.settings.mouse => on_mouse(model, mouse),
        Event::Mouse(_) => {}
        Event::Key(key) if key.kind == KeyEventKind::Release => {}
        Event::Key(key) => return on_key(model, key),
    }
    Vec::new()
}

/// What the live database now lets this console do: record actions (else it is read-only),
/// pin notes.
pub(super) fn on_access(model: &mut Model, access: Access) {
    model.live.role = Some(access.role);
    model.live.unpinnable = access.notes;
    match access.actions {
        Some(why) => {
            model.settings.read_only = true;
            model.flash(format!("read-only: {why}"), true);
            model.live.denied = Some(why);
        }
        None => {
            let was_denied = model
                .live
                .denied
                .take()
                .is_some_and(|why| why != CHECKING_ACCESS);
            if was_denied {
                let unlock = model.settings.keymap.keys(Action::Unlock);
                model.flash(
                    format!("this role may now record actions: press {unlock} to unlock"),
                    false,
                );
            }
        }
    }
}

/// The outcome of an operator action sent: recorded, failed (kept for a retry) or refused.
pub(super) fn on_resolved(model: &mut Model, outcome: Result<OperatorAction, ResolveError>) {
    match outcome {
        Ok(action) => {
            model.desk.retry = None;
            model.flash(recorded("recorded", &action), false);
        }
        Err(ResolveError::Failed { action, error }) => {
            model.flash(
                format!(
                    "not recorded: {} {} on {} round {}: {error} — press r to retry",
                    action.action, action.decision, action.session_id, action.round_index
                ),
                true,
            );
            model.desk.retry = Some(*action);
        }
        Err(refused) => {
            model.desk.retry = None;
            model.flash(refused.to_string(), true);
        }
    }
}

/// The outcome of a note pinned: a note that failed is offered again.
pub(super) fn on_noted(model: &mut Model, outcome: Result<DebateNote, NoteFailed>) {
    match outcome {
        Ok(note) => {
            model.flash(
                format!("note pinned to {}", one_line(&note.session_id)),
                false,
            );
        }
        Err(failed) => {
            let note = model.settings.keymap.keys(Action::Note);
            model.flash(
                format!("{failed} — {note} on the debate offers it again"),
                true,
            );
            model.desk.unpinned = Some(*failed.note);
        }
    }
}

/// Applies a theme: from the theme file watched, or `:theme`.
pub(super) fn apply_theme(model: &mut Model, theme: Theme) {
    model.flash(format!("theme {} applied", theme.name), false);
    model.settings.theme = theme;
}
