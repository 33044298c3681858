//! Rendering: `view(&Model, &Theme, &mut Frame)` draws the whole console from read-only state,
//! one file per panel. Every string that came from a debate passes through [`format::inert`]
//! (or [`format::one_line`]) before it reaches the terminal.

mod calibration;
mod charts;
mod debates;
mod format;
mod overlay;
mod pending;
mod rounds;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::app::{Focus, Link, Model};
use crate::theme::Theme;

pub use format::{inert, one_line};

/// Draws the console.
pub fn view(model: &Model, theme: &Theme, frame: &mut Frame) {
    let list_height = (model.debates.len() as u16 + 3).clamp(5, 14);
    let [header, list, table, band, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(list_height),
        Constraint::Min(6),
        Constraint::Length(11),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let [pending_area, chart, budget] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Percentage(27),
        Constraint::Percentage(20),
    ])
    .areas(band);

    render_header(model, theme, frame, header);
    debates::render(model, theme, frame, list, model.focus == Focus::Debates);
    let debate = model.selected_debate();
    rounds::render(model, theme, frame, table, model.focus == Focus::Rounds);
    charts::similarity(debate, &model.controller, theme, frame, chart);
    charts::budget(debate, &model.controller, theme, frame, budget);
    pending::render(debate, theme, frame, pending_area);
    render_footer(model, theme, frame, footer);
    if let Some(overlay) = &model.overlay {
        overlay::render(model, overlay, theme, frame);
    }
}

fn render_header(model: &Model, theme: &Theme, frame: &mut Frame, area: Rect) {
    let pending: usize = model
        .debates
        .iter()
        .filter(|d| d.pending().is_some())
        .count();
    let playback = match (&model.link, model.playback.paused) {
        (Some(_), true) => Span::styled(
            format!(" ⏸ paused, {} rows held ", model.held.len()),
            theme.warn(),
        ),
        (None, true) => Span::styled(" ⏸ paused ", theme.warn()),
        (_, false) => Span::styled(format!(" ▶ {}x ", model.playback.speed), theme.ok()),
    };
    let link = match &model.link {
        None => Span::raw(""),
        Some(Link::Live) => Span::styled("│ ● live ", theme.ok()),
        Some(Link::Connecting) => Span::styled("│ ◌ connecting ", theme.warn()),
        Some(Link::Down { error, retry_in }) => Span::styled(
            format!(
                "│ ✗ down: {} (retry in {:.1}s) ",
                one_line(error),
                retry_in.as_secs_f64()
            ),
            theme.danger(),
        ),
    };
    let line = Line::from(vec![
        Span::styled(" gavel ", theme.title()),
        Span::styled("│ ", theme.muted()),
        Span::styled(one_line(&model.source), theme.text()),
        Span::styled(" │", theme.muted()),
        playback,
        link,
        Span::styled("│ operator ", theme.muted()),
        Span::styled(one_line(&model.operator), theme.text()),
        Span::styled(" │ ", theme.muted()),
        Span::styled(
            format!("{pending} pending"),
            if pending > 0 {
                theme.pending()
            } else {
                theme.muted()
            },
        ),
        Span::styled(" │ ? help  q quit", theme.muted()),
    ]);
    frame.render_widget(line, area);
}

fn render_footer(model: &Model, theme: &Theme, frame: &mut Frame, area: Rect) {
    let line = match &model.flash {
        Some(flash) => Line::styled(
            format!(" {}", one_line(&flash.text)),
            if flash.error {
                theme.danger()
            } else {
                theme.ok()
            },
        ),
        None => Line::styled(
            " ↑↓ move  Enter drill in  Esc back  a accept  o override  e escalate  space pause  +/- speed  ? help",
            theme.muted(),
        ),
    };
    frame.render_widget(line, area);
}
