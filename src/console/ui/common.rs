//! Text and styles shared by the panels: inert rendering of untrusted text, figures, and the
//! colour of each decision.

pub(super) use crate::text::{
    compact, countdown, fit, fitted, inert, on_one_line, one_line, thousands,
};

use std::borrow::Cow;
use std::fmt::Display;
use std::time::Duration;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};

use crate::config::theme::Theme;
use crate::domain::{Decision, JudgeDecision, Reported};

/// The whole screen under the header line, for the full-screen windows.
pub(crate) fn below_header(full: Rect) -> Rect {
    Rect {
        y: full.y + 1,
        height: full.height.saturating_sub(1),
        ..full
    }
}

/// The width of each column of a bordered table in `area` with these column `widths` (one
/// column of space between columns, as a table has): for cutting a cell's text to fit, with `…`.
pub(crate) fn column_widths(widths: &[Constraint], area: Rect) -> Vec<usize> {
    let inner = Rect::new(0, 0, area.width.saturating_sub(2), 1);
    Layout::horizontal(widths.iter().copied())
        .spacing(1)
        .split(inner)
        .iter()
        .map(|column| usize::from(column.width))
        .collect()
}

/// The time a gated decision has left, as shown: `1:23 left`, or `timed out` once it ran out
/// (the orchestrator's timeout action has not landed yet).
pub(super) fn time_left(left: Duration) -> String {
    if left.is_zero() {
        "timed out".to_owned()
    } else {
        format!("{} left", countdown(left))
    }
}

/// `line` cut to `width` columns, its last span ending in `…` when cut.
pub(crate) fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let room = width.saturating_sub(used);
        if room == 0 {
            break;
        }
        let text = fit(&span.content, room);
        used += Span::raw(text.clone()).width();
        let cut = text.ends_with('…') && !span.content.ends_with('…');
        spans.push(Span::styled(text, span.style));
        if cut {
            break;
        }
    }
    Line::from(spans)
}

/// A bordered panel with a title.
pub(super) fn panel<'a>(title: String, theme: &Theme, focused: bool) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(format!(" {title} "))
        .title_style(theme.title())
}

/// A report window's title, saying while its figures are being refreshed.
pub(super) fn title(name: &str, refreshing: bool) -> String {
    if refreshing {
        format!("{name} · refreshing…")
    } else {
        name.to_owned()
    }
}

pub(crate) fn decision_style(theme: &Theme, decision: &Reported<Decision>) -> Style {
    match decision {
        Reported::Known(Decision::StopConverged) => theme.ok(),
        Reported::Known(Decision::ContinueBaseline) => theme.text(),
        Reported::Known(Decision::EscalateNewPersona) => theme.warn(),
        Reported::Known(Decision::StopMaxRounds) => theme.accent(),
        Reported::Known(Decision::StopSafety) | Reported::Unknown(_) => {
            theme.danger().add_modifier(Modifier::BOLD)
        }
    }
}

pub(crate) fn ruling_style(theme: &Theme, ruling: &Reported<JudgeDecision>) -> Style {
    match ruling {
        Reported::Known(JudgeDecision::Continue) => theme.ok(),
        Reported::Known(JudgeDecision::Warn) => theme.warn(),
        Reported::Known(JudgeDecision::HaltReplace) => theme.danger(),
        Reported::Known(JudgeDecision::Abort) | Reported::Unknown(_) => {
            theme.danger().add_modifier(Modifier::BOLD)
        }
    }
}

/// A reported value as a cell shows it, [`one_line`] and [`fit`] to `width`: a known one by its
/// name, borrowed when it fits, an unknown one as it was reported.
pub(super) fn reported<T: Copy + Display>(
    value: &Reported<T>,
    name: fn(T) -> &'static str,
    width: usize,
) -> Cow<'static, str> {
    match value {
        Reported::Known(known) => fitted(name(*known), width),
        Reported::Unknown(_) => Cow::Owned(fit(&one_line(&value.to_string()), width)),
    }
}

/// A figure that may be missing or not a number, as shown in a cell.
pub(super) fn figure(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.2}"),
        Some(v) => format!("{v}"),
        None => "—".to_owned(),
    }
}
