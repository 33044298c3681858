//! Keys in the open windows and questions that no other module owns: the unlock question, the
//! pick list, the calibration window, and how the help, shadow-week and `:who` windows scroll
//! (alike). The dialogs that type are [`super::desk`]'s and [`super::prompt`]'s.

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
use crate::console::app::model::{Chooser, Model, Overlay};

use super::PAGE;

/// A key in the unlock question: `y` unlocks, anything else leaves the console read-only.
pub(super) fn on_unlock_key(model: &mut Model, key: &KeyEvent) {
    if key.code == KeyCode::Char('y') {
        model.settings.read_only = false;
        let ctx = model.selected_ctx();
        if let Some(context) = model.live.contexts.get_mut(ctx) {
            context.read_only = false;
        }
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
