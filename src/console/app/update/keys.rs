//! The operator's keys with no overlay open: each [`Action`] to what it does, or to the module
//! that does it; the mouse's wheel and clicks.

use crossterm::event::{MouseButton, MouseEventKind};

use crate::config::keys::Action;
use crate::console::app::event::Command;
use crate::console::app::geometry::Region;
use crate::console::app::model::{DetailView, Focus, Model, Overlay};

use super::desk::{on_decision_action, open_note};
use super::hand_out::{copy, page};
use super::nav::{move_by, navigate};
use super::prompt::open_line;
use super::rollout;
use super::time_travel::{on_playback, travel};

/// An action with no overlay open.
pub(super) fn on_action(model: &mut Model, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => model.quit = true,
        Action::Help => model.desk.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::Calibration => {
            model.desk.overlay = Some(Overlay::Calibration {
                scroll: 0,
                cursor: 0,
                table: false,
            });
        }
        Action::ShadowWeek => model.desk.overlay = Some(Overlay::ShadowWeek { scroll: 0 }),
        // The calibration window's own keys: nothing outside it.
        Action::PreviousSetting | Action::NextSetting => {}
        Action::Filter | Action::ColonLine => open_line(model, action),
        Action::Copy => return copy(model),
        Action::Note => open_note(model),
        Action::Pager => return page(model),
        Action::Sort => {
            model.set_sort(model.sort().next());
            model.flash(format!("debates sorted by {}", model.sort().label()), false);
        }
        Action::Pause | Action::Faster | Action::Slower => return on_playback(model, action),
        Action::Rollout | Action::Publish | Action::Promote | Action::Rollback => {
            rollout::on_action(model, action)
        }
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

/// Mouse wheel scrolls where the pointer is (or the open window); a left click selects a
/// debate or a round.
pub(super) fn on_mouse(model: &mut Model, mouse: crossterm::event::MouseEvent) {
    let step = match mouse.kind {
        MouseEventKind::ScrollUp => -3,
        MouseEventKind::ScrollDown => 3,
        MouseEventKind::Down(MouseButton::Left) => 0,
        _ => return,
    };
    if let Some(overlay) = &mut model.desk.overlay {
        if let Overlay::Help { scroll }
        | Overlay::Calibration { scroll, .. }
        | Overlay::ShadowWeek { scroll }
        | Overlay::Who { scroll }
        | Overlay::Rollout { scroll, .. } = overlay
        {
            *scroll = scroll.saturating_add_signed(step as i16);
        }
        return;
    }
    let Some((region, row)) = model.screen.geometry.region_at(mouse.column, mouse.row) else {
        return;
    };
    model.nav.focus = match region {
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
                .window(model.nav.selected, model.screen.geometry.list_rows());
            if let Some(&seq) = window.rows.get(row) {
                model.select(seq);
            }
        }
        (Region::Detail, Some(row)) if model.nav.view == DetailView::Rounds => {
            let latest = model.selected_debate().map_or(0, |d| d.latest_round());
            let number = row as u32 + 1;
            if number <= latest {
                model
                    .nav
                    .point_at_round((number != latest).then_some(number));
            }
        }
        _ => {}
    }
}
