//! Moving about: the debates list, the rounds table, a detail view's text, focus and views.

use crate::config::keys::Action;
use crate::console::app::model::{DetailView, Focus, Model};

use super::PAGE;

/// Moving in the list, the rounds table or a text, and switching focus and views.
pub(super) fn navigate(model: &mut Model, action: Action) {
    match action {
        Action::Up => move_by(model, -1),
        Action::Down => move_by(model, 1),
        Action::PageUp => move_by(model, -PAGE),
        Action::PageDown => move_by(model, PAGE),
        Action::Top => match model.nav.focus {
            Focus::Debates => {
                if let Some(first) = model.debates.first() {
                    model.select(first);
                }
            }
            Focus::Detail => move_round(model, i32::MIN),
        },
        Action::Bottom => match (model.nav.focus, model.nav.view) {
            (Focus::Debates, _) => {
                if let Some(last) = model.debates.last() {
                    model.select(last);
                }
            }
            (Focus::Detail, DetailView::Rounds) => move_round(model, i32::MAX),
            (Focus::Detail, _) => {
                if let Some(rows) = model.screen.geometry.detail_text {
                    model.nav.detail_scroll = i32::try_from(rows.bottom()).unwrap_or(i32::MAX);
                }
            }
        },
        Action::SwitchFocus => {
            model.nav.focus = match model.nav.focus {
                Focus::Debates => Focus::Detail,
                Focus::Detail => Focus::Debates,
            }
        }
        Action::DrillIn => match (model.nav.focus, model.nav.view) {
            (Focus::Debates, _) => model.nav.focus = Focus::Detail,
            (Focus::Detail, DetailView::Rounds) => set_view(model, DetailView::Transcript),
            (Focus::Detail, _) => {}
        },
        Action::Back if model.nav.past.is_some() => {
            model.travel(None);
            model.flash("live", false);
        }
        Action::Back => {
            model.nav.focus = Focus::Debates;
            model.desk.flash = None;
        }
        Action::NextView => set_view(model, model.nav.view.step(1)),
        Action::PreviousView => set_view(model, model.nav.view.step(-1)),
        Action::ViewRounds => set_view(model, DetailView::Rounds),
        Action::ViewTranscript => set_view(model, DetailView::Transcript),
        Action::ViewJudge => set_view(model, DetailView::Judge),
        Action::ViewTrace => set_view(model, DetailView::Trace),
        Action::ViewFormat => set_view(model, DetailView::Format),
        _ => {}
    }
}

/// Shows a detail view from the selected round's start, with the arrow keys on it.
pub(super) fn set_view(model: &mut Model, view: DetailView) {
    model.nav.view = view;
    model.nav.focus = Focus::Detail;
    model.nav.detail_scroll = 0;
}

/// Moves `step` rows in the focused place: the debates list, the rounds table, or the text of
/// a detail view (scrolling up past a round's start goes to the round before it).
pub(super) fn move_by(model: &mut Model, step: i32) {
    match (model.nav.focus, model.nav.view) {
        (Focus::Debates, _) => {
            if let Some(next) = model.debates.step(model.nav.selected, i64::from(step)) {
                model.select(next);
            }
        }
        (Focus::Detail, DetailView::Rounds) => move_round(model, step),
        (Focus::Detail, DetailView::Format) => {
            model.nav.detail_scroll = (model.nav.detail_scroll + step).max(0);
            clamp_scroll(model);
        }
        (Focus::Detail, _) => {
            let scroll = model.nav.detail_scroll + step;
            if scroll < 0 && model.selected_round().is_some_and(|r| r > 1) {
                move_round(model, -1);
            } else {
                model.nav.detail_scroll = scroll.max(0);
                clamp_scroll(model);
            }
        }
    }
}

/// Selects the round `step` rounds away; following the latest again when it gets there.
pub(super) fn move_round(model: &mut Model, step: i32) {
    let Some(current) = model.selected_round() else {
        return;
    };
    let latest = model.selected_debate().map_or(0, |d| d.latest_round());
    let next = (i64::from(current) + i64::from(step)).clamp(1, i64::from(latest)) as u32;
    model.nav.point_at_round((next != latest).then_some(next));
    model.nav.detail_scroll = 0;
}

/// Keeps the detail's scroll within its text as last drawn, once a frame was.
pub(super) fn clamp_scroll(model: &mut Model) {
    if let Some(rows) = model.screen.geometry.detail_text {
        model.nav.detail_scroll = model
            .nav
            .detail_scroll
            .min(rows.total.saturating_sub(1) as i32);
    }
}
