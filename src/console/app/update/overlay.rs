//! Keys in the open overlay: help, the pick list, the unlock and take-over questions, the
//! calibration, shadow-week and `:who` windows (scrolled alike); the dialogs that type go on
//! to [`super::desk`] and [`super::prompt`].

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
use crate::console::app::event::Command;
use crate::console::app::model::{Chooser, Model, Overlay};

use super::PAGE;
use super::desk::{on_confirm_key, on_note_key, on_pin_key, open_decision_dialog};
use super::prompt::{on_colon_line_key, on_filter_key};
use super::rollout::{on_draft_key, on_rollout_key, publish_from_calibration};

/// A key in the open `overlay` (taken out of the model; put back unless the key closes it).
pub(super) fn on_overlay_key(
    model: &mut Model,
    overlay: Overlay,
    action: Option<Action>,
    key: &KeyEvent,
) -> Vec<Command> {
    match overlay {
        Overlay::Help { scroll } => {
            model.desk.overlay =
                scrolled(action, Action::Help, scroll).map(|scroll| Overlay::Help { scroll });
        }
        Overlay::Note(intent) => on_note_key(model, intent, key),
        Overlay::Confirm(intent) => return on_confirm_key(model, intent, key),
        Overlay::Unlock => on_unlock_key(model, key),
        Overlay::Choose(chooser) => on_choose_key(model, chooser, action),
        Overlay::Calibration {
            scroll,
            cursor,
            table,
        } => {
            model.desk.overlay = on_calibration_key(model, action, scroll, cursor, table);
            if action == Some(Action::Publish) {
                publish_from_calibration(model, cursor);
            }
        }
        Overlay::Rollout {
            scroll,
            debate_type,
        } => on_rollout_key(model, action, scroll, debate_type),
        Overlay::Draft(draft) => return on_draft_key(model, draft, key),
        Overlay::ShadowWeek { scroll } => {
            model.desk.overlay = scrolled(action, Action::ShadowWeek, scroll)
                .map(|scroll| Overlay::ShadowWeek { scroll });
        }
        Overlay::Who { scroll } => {
            model.desk.overlay =
                scrolled(action, Action::Quit, scroll).map(|scroll| Overlay::Who { scroll });
        }
        Overlay::Filter => return on_filter_key(model, key),
        Overlay::Command => return on_colon_line_key(model, key),
        Overlay::Pin(session_id) => return on_pin_key(model, session_id, key),
        Overlay::TakeOver(kind) if key.code == KeyCode::Char('y') => {
            open_decision_dialog(model, kind);
        }
        Overlay::TakeOver(_) => {
            model.flash("left to the other operator: nothing was recorded", false)
        }
    }
    Vec::new()
}

/// A key in the unlock question: `y` unlocks, anything else leaves the console read-only.
pub(super) fn on_unlock_key(model: &mut Model, key: &KeyEvent) {
    if key.code == KeyCode::Char('y') {
        model.settings.read_only = false;
        model.flash("unlocked: accept, override and escalate are on", false);
    } else {
        model.flash("still read-only: nothing changed", false);
    }
}

/// A key in the pick list of an override or an escalation: the arrows move, Enter picks (on to
/// the confirmation), anything else cancels.
pub(super) fn on_choose_key(model: &mut Model, mut chooser: Chooser, action: Option<Action>) {
    match action {
        Some(Action::Up) => {
            chooser.cursor = chooser.cursor.saturating_sub(1);
            model.desk.overlay = Some(Overlay::Choose(chooser));
        }
        Some(Action::Down) => {
            chooser.cursor = (chooser.cursor + 1).min(chooser.options.len() - 1);
            model.desk.overlay = Some(Overlay::Choose(chooser));
        }
        Some(Action::DrillIn) => model.desk.overlay = Some(Overlay::Confirm(chooser.chosen())),
        _ => model.flash("cancelled: nothing was recorded", false),
    }
}

/// A key in the calibration window: the cursor moves along the frontier (the list below back to
/// its top), Tab switches the list between the cursor's debates and every setting, the rest
/// scroll or close it.
pub(super) fn on_calibration_key(
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
pub(super) fn scrolled(action: Option<Action>, opener: Action, scroll: u16) -> Option<u16> {
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
