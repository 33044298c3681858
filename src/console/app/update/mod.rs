//! `update`: the one function that changes the console's state. Each event is applied by the
//! module for its kind: [`events`] (rows, ticks, the link, outcomes), [`keys`] (keys and the
//! mouse with no overlay open), [`overlay`] (keys in an open overlay), [`desk`] (the
//! operator's actions on decisions and their dialogs, notes), [`prompt`] (the filter and `:`
//! lines), [`nav`] (moving about), [`time_travel`] (the time cursor and playback),
//! [`hand_out`] (the clipboard, the pager) and [`rollout`] (the settings' history, the rollout
//! view, publishing a version). Keys become [`Action`](crate::config::keys::Action)s
//! through the keymap; text typed into a prompt goes to the prompt. After every event, the
//! watched report, the calibration cursor's setting, a history to load and what presence says
//! follow the model.

mod desk;
mod events;
mod hand_out;
mod keys;
mod nav;
mod overlay;
mod prompt;
mod rollout;
mod time_travel;

use super::event::{Command, Event};
use super::fleet::Seq;
use super::model::{Model, Overlay};
use super::reports::Watched;
use crate::domain::Status;

/// Rows moved by a page key.
const PAGE: i32 = 20;
/// The longest filter and `:` command, in characters.
pub const MAX_LINE: usize = 200;
/// Rows a paused live feed holds back at most; the feed resumes when it would hold more.
pub const HELD_BACK: usize = 50_000;

/// Applies one event; returns what the backend must do.
pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    let before = watched(model);
    let asks = matches!(event, Event::Key(_) | Event::Reports(_));
    model.screen.dirty |= match &event {
        // Filing a row says whether it shows.
        Event::Store(_) => model.live.link.is_some() && model.time.playback.paused,
        Event::Reports(_) => before.is_some(),
        Event::Tick(_) => countdown_shown(model),
        _ => true,
    };
    let mut commands = events::handle(model, event);
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
    commands.extend(model.take_wanted().map(Command::LoadHistory));
    commands.extend(presence(model));
    commands
}

/// On a live database: what this console now tells the others (its operator, the debate
/// selected, the waiting decision its open dialog claims, the rollout it is writing a version
/// of), when that changed.
fn presence(model: &mut Model) -> Option<Command> {
    model.live.link.as_ref()?;
    let looking = model
        .nav
        .selected
        .and_then(|seq| model.debates.get(seq))
        .map(|s| &*s.id);
    let claim = desk::claim(model);
    let editing = rollout::editing(model);
    let same = model.live.said.as_ref().is_some_and(|s| {
        s.looking.as_deref() == looking
            && s.operator == model.about.operator
            && s.claim == claim
            && s.editing.as_deref() == editing
    });
    if same {
        return None;
    }
    let status = Status {
        operator: model.about.operator.clone(),
        looking: looking.map(str::to_owned),
        claim,
        editing: editing.map(str::to_owned),
    };
    model.live.said = Some(status.clone());
    Some(Command::Present(status))
}

/// Whether a countdown is on screen: in the list, the decision panel or a dialog.
fn countdown_shown(model: &Model) -> bool {
    let waits = |seq: Seq| model.debates.get(seq).is_some_and(|s| s.waiting());
    let dialog = model
        .desk
        .overlay
        .as_ref()
        .and_then(Overlay::deciding)
        .and_then(|(id, _, _)| model.debates.seq(id));
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
