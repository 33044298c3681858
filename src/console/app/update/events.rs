//! Events other than the operator's keys and mouse, as `update()` hands them here: rows, ticks,
//! the role's rights, the outcomes of actions and notes sent, a history's answer, themes, the
//! pager's end.

use crate::config::keys::Action;
use crate::config::theme::Theme;
use crate::console::app::command_line;
use crate::console::app::contexts::{Context, Ctx};
use crate::console::app::event::{Command, Link};
use crate::console::app::model::{CHECKING_ACCESS, Model};
use crate::console::pager;
use crate::domain::{Access, Change, DebateNote, OperatorAction, Peer};
use crate::store::{NoteFailed, ResolveError};
use crate::text::one_line;

use super::HELD_BACK;
use super::desk::recorded;
use super::time_travel::{play_history, resume};

/// A row of context `ctx` landed: filed, or held back while a live feed is paused (resuming
/// the feed when it would hold more than [`HELD_BACK`]).
pub(super) fn on_row(model: &mut Model, ctx: Ctx, change: Change) -> Vec<Command> {
    if model.live.link.is_none() || !model.time.playback.paused {
        model.apply_in(ctx, change);
        return Vec::new();
    }
    model.live.held_back.push((ctx, change));
    if model.live.held_back.len() < HELD_BACK {
        return Vec::new();
    }
    let commands = resume(model);
    model.flash(
        format!("resumed: {HELD_BACK} rows were held, as many as a pause holds"),
        true,
    );
    commands
}

/// The wall clock's tick: the wait clock moves, history played forward steps when due.
pub(super) fn on_tick(model: &mut Model, wall: chrono::DateTime<chrono::Utc>) {
    model.time.clock.tick(wall);
    play_history(model, wall);
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

/// One database of several connected, went down or is trying again: its own link (down until
/// it is live again, through its retries), and the console's as a whole (live when every one
/// is). One going down says so once; its debates stay listed, marked, and its feed catches up
/// when it is back.
pub(super) fn on_context_link(model: &mut Model, ctx: Ctx, link: Link) {
    let Some(context) = model.live.contexts.get_mut(ctx) else {
        return;
    };
    let was_down = matches!(context.link, Link::Down { .. });
    // Trying again after a failure, it is still down until it is live: its mark stays put.
    if was_down && link == Link::Connecting {
        return;
    }
    let went_down = matches!(link, Link::Down { .. }) && !was_down;
    context.link = link;
    if went_down {
        let said = format!(
            "{} is down: its debates are marked, the others flow on",
            context.name
        );
        model.flash(said, true);
    }
    model.live.link = Some(model.live.contexts.overall());
}

/// What one database of several now lets this console do there: its rights are that
/// context's alone (a role that may only watch it leaves the others' actions on).
pub(super) fn on_context_access(model: &mut Model, ctx: Ctx, access: Access) {
    let Some(context) = model.live.contexts.get_mut(ctx) else {
        return;
    };
    let was_denied = context
        .denied
        .as_ref()
        .is_some_and(|why| why != CHECKING_ACCESS);
    context.grant(access);
    // Locked while its role may not act, and left locked when it may again, until unlocked.
    context.read_only |= context.denied.is_some();
    let name = context.name.clone();
    match context.denied.clone() {
        Some(why) => model.flash(format!("{name} is read-only: {why}"), true),
        None if was_denied => {
            let unlock = model.settings.keymap.keys(Action::Unlock);
            model.flash(
                format!("this role may now record actions on {name}: press {unlock} to unlock"),
                false,
            );
        }
        None => {}
    }
    // The console's own fields say whether any context lets it act, and pin notes.
    model.live.denied = refused_everywhere(model, |c| &c.denied);
    model.live.unpinnable = refused_everywhere(model, |c| &c.unpinnable);
}

/// The first context's reason when every context refuses what `refusal` says; `None` when
/// one allows it.
fn refused_everywhere(
    model: &Model,
    refusal: impl Fn(&Context) -> &Option<String>,
) -> Option<String> {
    let contexts = &model.live.contexts;
    let mut reasons = contexts.iter().map(|(_, c)| refusal(c));
    let first = reasons.next()?.clone()?;
    reasons.all(Option::is_some).then_some(first)
}

/// The other consoles on one database of several: its own, and all of them for `:who`.
pub(super) fn on_context_presence(model: &mut Model, ctx: Ctx, peers: Vec<Peer>) {
    if let Some(context) = model.live.contexts.get_mut(ctx) {
        context.peers = peers;
        model.live.peers = model.live.contexts.peers();
    }
}

/// The outcome of an operator action sent (to context `ctx`'s database): recorded, failed
/// (kept for a retry there) or refused.
pub(super) fn on_resolved(
    model: &mut Model,
    ctx: Ctx,
    outcome: Result<OperatorAction, ResolveError>,
) {
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
            model.desk.retry_in = ctx;
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

/// Every row of a debate asked for was sent: a debate `:` looked up that is not there is said
/// so; one found whose rows a paused feed holds back is selected when it plays on.
pub(super) fn on_history(model: &mut Model, id: &str, found: bool) {
    if model.nav.jump_to.as_deref() != Some(id) {
        return;
    }
    let id = one_line(id);
    if found {
        let play = model.settings.keymap.keys(Action::Pause);
        model.flash(
            format!("found {id}: paused, it shows when {play} plays on"),
            false,
        );
    } else {
        model.nav.jump_to = None;
        let said = format!(
            "no debate {id} in the database, and {}",
            command_line::no_command(&id)
        );
        model.flash(said, true);
    }
}

/// One database of several answered a debate looked up by id: said missing only once every
/// database said it has none.
pub(super) fn on_context_history(model: &mut Model, id: &str, found: bool) {
    if model.nav.jump_to.as_deref() != Some(id) {
        return;
    }
    if found || model.live.contexts.unfound_everywhere() {
        on_history(model, id, found);
    }
}

/// The theme file watched changed: its theme applied, or the one in force kept.
pub(super) fn on_theme(model: &mut Model, theme: Result<Box<Theme>, String>) {
    match theme {
        Ok(theme) => model.apply_theme(*theme),
        Err(why) => {
            let kept = format!(
                "theme not applied, keeping {}: {why}",
                model.settings.theme.name
            );
            model.flash(kept, true);
        }
    }
}

/// The pager ended: said only when it did not run.
pub(super) fn on_paged(model: &mut Model, outcome: Result<(), pager::Error>) {
    if let Err(why) = outcome {
        model.flash(format!("the pager did not run: {why}"), true);
    }
}
