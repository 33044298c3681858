//! Rendering: `view(&Model, &mut Frame, &mut Kept)` draws the whole console from read-only state
//! (and says where the cursor goes), one file per panel, in the model's theme. The main
//! screen's panels (the header, the tables row by row, the tabs, the charts, the decision, the
//! footer's hints) are written down first (most as a [`sketch`] of their widgets, the tables in
//! their [`grid`], the similarity chart as its points) and drawn as regions kept from the frame
//! before while they show the same: a frame after a row lands draws what the row changed. The
//! [`header`], the tabs, the token budget, the footer's hints, the debates list's panel and the
//! tables' rows are written down from a source, the values they show: while it stays the same,
//! they are not even written down.
//! Every string that came from a debate passes through [`common::inert`] (or
//! [`common::one_line`]) before it reaches the terminal.
//!
//! [`areas`] is the one place the screen is laid out; the draw loop records each frame's
//! [`geometry`] in the model, where `update` reads where a mouse click landed and how far a
//! view can scroll.

mod calibration;
mod charts;
mod common;
mod debates;
mod document;
mod draft;
mod footer;
mod format_view;
mod grid;
mod grid_chart;
mod header;
mod judge;
mod overlay;
mod pending;
mod rollout;
mod rounds;
mod shadow;
mod sketch;
mod trace;
mod transcript;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};

use crate::config::theme::Theme;
use crate::console::app::{DetailView, Focus, Geometry, Model, table_rows};
use crate::console::kept::Kept;

use common::one_line;

use sketch::Sketch;

/// Where each part of the main screen goes.
#[derive(Debug, Clone, Copy)]
pub struct Areas {
    pub header: Rect,
    pub list: Rect,
    pub tabs: Rect,
    pub detail: Rect,
    pub pending: Rect,
    /// The similarity chart and the token gauge, in the rounds view only.
    pub charts: Option<(Rect, Rect)>,
    pub footer: Rect,
}

/// Lays out the main screen for `model` in `area`.
pub fn areas(model: &Model, area: Rect) -> Areas {
    let roomy = area.height >= 36;
    let held = u16::try_from(model.debates.len()).unwrap_or(u16::MAX);
    let list_height = held.saturating_add(3).clamp(5, if roomy { 14 } else { 7 });
    let band_height = match (roomy, model.nav.view) {
        (true, DetailView::Rounds) => 11,
        (true, _) => 8,
        (false, _) => 7,
    };
    let [header, list, tabs, detail, band, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(list_height),
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(band_height),
        Constraint::Length(1),
    ])
    .areas(area);
    // The decision comes first: on a narrow screen a pending one takes the charts' room.
    let deciding = area.width < 120
        && model
            .selected_debate()
            .is_some_and(|d| d.pending().is_some());
    let (pending, charts) = if model.nav.view == DetailView::Rounds && !deciding {
        let [pending, chart, budget] = Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Percentage(27),
            Constraint::Percentage(20),
        ])
        .areas(band);
        (pending, Some((chart, budget)))
    } else {
        (band, None)
    };
    Areas {
        header,
        list,
        tabs,
        detail,
        pending,
        charts,
        footer,
    }
}

/// Draws the console, each panel of the main screen a region kept in `kept` from the frame
/// before while it shows the same (its tables row by row); returns where the terminal's cursor
/// goes (in a text being typed), if anywhere.
pub fn view(model: &Model, frame: &mut Frame, kept: &mut Kept) -> Option<Position> {
    let theme = &model.settings.theme;
    let areas = areas(model, frame.area());
    header::render(model, theme, kept, frame.buffer_mut(), areas.header);
    debates::render(
        model,
        theme,
        frame,
        kept,
        areas.list,
        model.nav.focus == Focus::Debates,
    );
    let tabs_source = (model.nav.view, theme.clone());
    Sketch::sourced(
        tabs_source,
        kept,
        frame.buffer_mut(),
        areas.tabs,
        |(view, theme), sketch| sketch.render_widget(tabs(*view, theme), areas.tabs),
    );
    let focused = model.nav.focus == Focus::Detail;
    let debate = model.selected_debate();
    match (model.nav.view, text_view(model)) {
        (_, Some(document)) => document.render(model, frame, areas.detail, focused),
        (DetailView::Format, None) => format_view::render(model, frame, areas.detail, focused),
        (_, None) => rounds::render(model, theme, frame, kept, areas.detail, focused),
    }
    let controller = &model.about.controller;
    if let Some((chart, budget)) = areas.charts {
        charts::similarity(debate, controller, theme, kept, frame.buffer_mut(), chart);
        charts::budget(debate, controller, theme, kept, frame.buffer_mut(), budget);
    }
    Sketch::of(|sketch| pending::render(model, debate, theme, sketch, areas.pending)).draw(
        kept,
        frame.buffer_mut(),
        areas.pending,
    );
    let typing = footer::render(model, theme, frame, kept, areas.footer);
    let writing = match &model.desk.overlay {
        Some(overlay) => {
            kept.spoil();
            overlay::render(model, overlay, theme, frame)
        }
        None => None,
    };
    writing.or(typing)
}

/// The layout of a frame of `model` as `update` reads it (see [`Geometry`]), at the current
/// screen size.
pub fn geometry(model: &Model) -> Geometry {
    let (width, height) = model.screen.size;
    let areas = areas(model, Rect::new(0, 0, width, height));
    let detail_text = if width == 0 || height == 0 {
        None
    } else {
        match (model.nav.view, text_view(model)) {
            (_, Some(document)) => Some(document.extent(model, areas.detail)),
            (DetailView::Format, None) => Some(format_view::extent(model, areas.detail)),
            (_, None) => None,
        }
    };
    Geometry {
        list: areas.list,
        detail: areas.detail,
        first_round_shown: rounds::first_shown(model, table_rows(areas.detail)),
        detail_text,
    }
}

/// The current detail view's text, for the views read round by round.
fn text_view(model: &Model) -> Option<document::Document<'static>> {
    let build = match model.nav.view {
        DetailView::Transcript => transcript::document,
        DetailView::Judge => judge::document,
        DetailView::Trace => trace::document,
        DetailView::Rounds | DetailView::Format => return None,
    };
    Some(document::of(model, model.nav.view.title(), build))
}

/// The views' tabs, the `current` one highlighted.
fn tabs(current: DetailView, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for (i, view) in DetailView::ALL.iter().enumerate() {
        let style = if *view == current {
            theme.selection().patch(theme.title())
        } else {
            theme.muted()
        };
        spans.push(Span::styled(format!(" {} {} ", i + 1, view.title()), style));
    }
    spans.push(Span::styled("  v/V next/previous view", theme.muted()));
    Line::from(spans)
}
