//! Rendering: `view(&Model, &mut Frame, &mut Kept)` draws the whole console from read-only state
//! (and says where the cursor goes), one file per panel, in the model's theme. The main
//! screen's panels (the header, the tables row by row, the tabs, the charts, the decision, the
//! footer's hints) are written down first (most as a [`sketch`] of their widgets, the tables in
//! their [`grid`], the similarity chart as its points) and drawn as regions kept from the frame
//! before while they show the same: a frame after a row lands draws what the row changed.
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
mod judge;
mod overlay;
mod pending;
mod rollout;
mod rounds;
mod shadow;
mod sketch;
mod trace;
mod transcript;

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};

use crate::config::theme::Theme;
use crate::console::app::{
    Contexts, DetailView, Focus, Geometry, Link, Model, Reading, SlotTrouble, Stall, table_rows,
    wal_size,
};
use crate::console::kept::Kept;

use common::one_line;

use common::{countdown, fit, fit_line};
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
    let header = header(model, theme, areas.header.width);
    Sketch::line(header, kept, frame.buffer_mut(), areas.header);
    debates::render(
        model,
        theme,
        frame,
        kept,
        areas.list,
        model.nav.focus == Focus::Debates,
    );
    Sketch::line(tabs(model, theme), kept, frame.buffer_mut(), areas.tabs);
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
        Sketch::of(|sketch| charts::budget(debate, controller, theme, sketch, budget)).draw(
            kept,
            frame.buffer_mut(),
            budget,
        );
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

/// The views' tabs, the current one highlighted.
fn tabs(model: &Model, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for (i, view) in DetailView::ALL.iter().enumerate() {
        let style = if *view == model.nav.view {
            theme.selection().patch(theme.title())
        } else {
            theme.muted()
        };
        spans.push(Span::styled(format!(" {} {} ", i + 1, view.title()), style));
    }
    spans.push(Span::styled("  v/V next/previous view", theme.muted()));
    Line::from(spans)
}

/// Where the time cursor stands, first in the header: `as of round 3 · 14:02:11 · live: round
/// 6` (the time of the decision, or of the action on it, in UTC); nothing when live.
fn as_of(model: &Model, theme: &Theme) -> Span<'static> {
    let Some(past) = &model.nav.past else {
        return Span::raw("");
    };
    let at = past.debate.time_of(past.moment).map_or_else(
        || "time not recorded".to_owned(),
        |t| t.format("%H:%M:%S").to_string(),
    );
    let live = model.selected_summary().map_or(0, |s| s.latest_round);
    Span::styled(
        format!(
            " as of round {} · {at} · live: round {live} │",
            past.moment.round
        ),
        theme.warn(),
    )
}

/// The rollouts whose guards trip, after the decisions waiting: `│ ⚠ rollout of standard needs
/// you (R) ` (on several databases, `of standard in prod`: the first's, whose are guarded).
fn guards(model: &Model, theme: &Theme) -> Span<'static> {
    let needing = model.rollout.needing();
    let key = model
        .settings
        .keymap
        .hint(crate::console::app::Action::Rollout);
    let contexts = &model.live.contexts;
    let at = match contexts.several() {
        true => format!(" in {}", contexts.name(crate::console::app::COMPARED)),
        false => String::new(),
    };
    let what = match needing.as_slice() {
        [] => return Span::raw(""),
        [one] => format!("rollout of {}{at} needs", fit(&one_line(one), 24)),
        many => format!("{} rollouts{at} need", many.len()),
    };
    Span::styled(format!("│ ⚠ {what} you ({key}) "), theme.danger())
}

/// The header, most important first (a narrow terminal cuts the end): what waits for the
/// operator, the connection, read-only, the source, playback (the demo's; a live feed only
/// says when it is paused), the operator.
fn header(model: &Model, theme: &Theme, width: u16) -> Line<'static> {
    let waiting = model.debates.waiting();
    let counts = Span::styled(
        format!(" {} ", debates::counts(model)),
        if waiting > 0 {
            theme.pending()
        } else {
            theme.muted()
        },
    );
    let playback = match (&model.live.link, model.time.playback.paused) {
        (Some(_), true) => Span::styled(
            format!("│ ⏸ paused, {} rows held ", model.live.held_back.len()),
            theme.warn(),
        ),
        (Some(_), false) => Span::raw(""),
        (None, true) => Span::styled("│ ⏸ paused ", theme.warn()),
        (None, false) => Span::styled(format!("│ ▶ {}x ", model.time.playback.speed), theme.ok()),
    };
    let link = match &model.live.link {
        _ if model.live.contexts.several() => Span::raw(""),
        None => Span::raw(""),
        Some(Link::Live) => Span::styled("│ ● live ", theme.ok()),
        Some(Link::Connecting) => Span::styled("│ ◌ connecting ", theme.warn()),
        Some(Link::Down { error, retry_in }) => Span::styled(
            format!(
                "│ ✗ down: {} (retry in {:.1}s) ",
                fit(&one_line(error), 48),
                retry_in.as_secs_f64()
            ),
            theme.danger(),
        ),
    };
    let reading = model
        .live
        .reading
        .as_ref()
        .map_or_else(Vec::new, |r| reading(r, theme));
    let others = match (&model.live.link, model.live.peers.len()) {
        (None, _) => Span::raw(""),
        (Some(_), 0) => Span::styled("│ 0 others here ", theme.muted()),
        (Some(_), 1) => Span::styled("│ 1 other here ", theme.accent()),
        (Some(_), n) => Span::styled(format!("│ {n} others here "), theme.accent()),
    };
    let access = match (&model.live.denied, model.settings.read_only) {
        (Some(why), _) => Span::styled(
            format!("│ read-only: {} ", fit(&one_line(why), 40)),
            theme.warn(),
        ),
        (None, true) => Span::styled("│ read-only ", theme.warn()),
        (None, false) => Span::raw(""),
    };
    let mut spans = vec![
        Span::styled(" gavel ", theme.title()),
        Span::styled("│", theme.muted()),
        as_of(model, theme),
        counts,
        guards(model, theme),
        link,
    ];
    spans.extend(reading);
    spans.extend(contexts(&model.live.contexts, theme));
    spans.extend([
        others,
        access,
        Span::styled("│ ", theme.muted()),
        Span::styled(one_line(&model.about.source), theme.text()),
        Span::raw(" "),
        playback,
        Span::styled("│ operator ", theme.muted()),
        Span::styled(fit(&one_line(&model.about.operator), 24), theme.text()),
        Span::styled(" │ similarity ", theme.muted()),
        Span::styled(one_line(&model.about.similarity), theme.text()),
        Span::styled(" │ ? help", theme.muted()),
    ]);
    fit_line(Line::from(spans), width.into())
}

/// Each database of several, how its feed stands: `│ ● prod ◌ staging ✗ qa down: why (retry
/// in 1.2s) `; ` ro` after one locked read-only or whose role may not act.
fn contexts(contexts: &Contexts, theme: &Theme) -> Vec<Span<'static>> {
    if !contexts.several() {
        return Vec::new();
    }
    let mut spans = vec![Span::styled("│", theme.muted())];
    for (_, context) in contexts.iter() {
        let name = one_line(&context.name);
        let mut span = match &context.link {
            Link::Live => Span::styled(format!(" ● {name}"), theme.ok()),
            Link::Connecting => Span::styled(format!(" ◌ {name}"), theme.warn()),
            Link::Down { error, retry_in } => Span::styled(
                format!(
                    " ✗ {name} down: {} (retry in {:.1}s)",
                    fit(&one_line(error), 32),
                    retry_in.as_secs_f64()
                ),
                theme.danger(),
            ),
        };
        if context.read_only || context.denied.is_some() {
            span.content.to_mut().push_str(" ro");
        }
        spans.push(span);
    }
    spans.push(Span::raw(" "));
    spans
}

/// What the primary keeps for the subscriber, when an operator should know: `│ ✗ slot lost:
/// rebuild the subscriber `, `│ ⚠ slot inactive, keeps 80 MB `, `│ ⚠ slot keeps 1.2 GB of WAL `
/// (the slot named when there are several).
fn slot(reading: &Reading, theme: &Theme) -> Option<Span<'static>> {
    let trouble = reading.slot_trouble()?;
    let slot = |name: &str| {
        if reading.several_slots() {
            format!("slot {}", fit(&one_line(name), 40))
        } else {
            "slot".to_owned()
        }
    };
    let keeps = |mib: u64| match mib {
        0 => String::new(),
        mib => format!(", keeps {}", wal_size(mib)),
    };
    let (text, style) = match trouble {
        SlotTrouble::Unknown(why) => (
            format!("⚠ slot unknown: {}", fit(&one_line(why), 40)),
            theme.warn(),
        ),
        SlotTrouble::Lost(name) => (
            format!("✗ {} lost: rebuild the subscriber", slot(name)),
            theme.danger(),
        ),
        SlotTrouble::Missing(name) => (
            format!("✗ {} missing on the primary", slot(name)),
            theme.danger(),
        ),
        SlotTrouble::Unreserved(name, mib) => (
            format!("✗ {} about to be lost{}", slot(name), keeps(mib)),
            theme.danger(),
        ),
        SlotTrouble::Inactive(name, mib) => (
            format!("⚠ {} inactive{}", slot(name), keeps(mib)),
            theme.warn(),
        ),
        SlotTrouble::Keeping(name, mib) => (
            format!("⚠ {} keeps {} of WAL", slot(name), wal_size(mib)),
            theme.warn(),
        ),
    };
    Some(Span::styled(format!("│ {text} "), style))
}

/// Where a console reading a subscriber reads, and whatever makes what it shows stale or its
/// writes fail: `│ reading replica-1:5432/debates │ behind 0:04 `, `│ ✗ subscription gavel
/// disabled `, `│ ✗ primary: why (writes fail) `, and what the primary keeps for it.
fn reading(reading: &Reading, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(
        format!("│ reading {} ", fit(&one_line(&reading.from), 56)),
        theme.text(),
    )];
    match &reading.primary {
        Link::Live => {}
        Link::Connecting => spans.push(Span::styled("│ ◌ primary ", theme.warn())),
        Link::Down { error, .. } => spans.push(Span::styled(
            format!("│ ✗ primary: {} (writes fail) ", fit(&one_line(error), 48)),
            theme.danger(),
        )),
    }
    let stall = match reading.stall() {
        None => None,
        Some(Stall::Unknown(why)) => Some((
            format!("│ ⚠ subscription unknown: {} ", fit(&one_line(why), 40)),
            theme.warn(),
        )),
        Some(Stall::Unsubscribed) => Some(("│ ⚠ subscribes to nothing ".to_owned(), theme.warn())),
        Some(Stall::Disabled(name)) => Some((
            format!("│ ✗ subscription {} disabled ", fit(&one_line(name), 40)),
            theme.danger(),
        )),
        Some(Stall::NotApplying(name, errors)) => Some((
            format!(
                "│ ✗ subscription {} not applying{} ",
                fit(&one_line(name), 40),
                match errors {
                    Some(n) if n > 0 => format!(" ({n} errors)"),
                    _ => String::new(),
                }
            ),
            theme.danger(),
        )),
    };
    spans.extend(stall.map(|(text, style)| Span::styled(text, style)));
    if let Some(behind) = reading.lagging() {
        spans.push(Span::styled(
            format!(
                "│ behind {} ",
                countdown(Duration::from_secs(behind.as_secs()))
            ),
            theme.warn(),
        ));
    }
    spans.extend(slot(reading, theme));
    spans
}
