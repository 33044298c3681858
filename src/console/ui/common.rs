//! Text and styles shared by the panels: inert rendering of untrusted text, figures, and the
//! colour of each decision.

pub(super) use crate::text::{
    compact, countdown, fit, fitted, inert, on_one_line, one_line, thousands,
};

use std::borrow::Cow;
use std::fmt::Display;
use std::time::Duration;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::border;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use crate::config::theme::Theme;
use crate::domain::{Decision, JudgeDecision, Reported};

/// A `width` by `height` box in the middle of the frame (as much of it as fits), for dialogs.
pub(super) fn centered(frame: &Frame, width: u16, height: u16) -> Rect {
    let area = frame.area();
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

/// The whole screen under the header line, for the full-screen windows.
pub(crate) fn below_header(full: Rect) -> Rect {
    Rect {
        y: full.y + 1,
        height: full.height.saturating_sub(1),
        ..full
    }
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

/// A bordered panel with a title, as a block for the widgets that take one.
pub(super) fn panel<'a>(title: String, theme: &Theme, focused: bool) -> Block<'a> {
    Panel::new(title, theme, focused).block()
}

/// A bordered panel with a title. Drawn itself, it draws its edges alone: a block also styles
/// every cell inside it (with a style that changes none of them), which the panels drawn every
/// frame would pay for cell by cell. [`Panel::block`] is the same panel as a block.
#[derive(Clone, PartialEq)]
pub(super) struct Panel {
    title: String,
    border: Style,
    title_style: Style,
}

impl Panel {
    pub(super) fn new(title: String, theme: &Theme, focused: bool) -> Panel {
        Panel {
            title: format!(" {title} "),
            border: theme.border(focused),
            title_style: theme.title(),
        }
    }

    /// The same panel as a block.
    pub(super) fn block<'a>(self) -> Block<'a> {
        Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(self.border)
            .title(self.title)
            .title_style(self.title_style)
    }

    /// The area inside the borders of a panel drawn in `area`.
    pub(super) fn inner(area: Rect) -> Rect {
        Block::bordered().inner(area)
    }
}

impl Widget for &Panel {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let edges = border::ROUNDED;
        let (left, top) = (area.left(), area.top());
        let (right, bottom) = (area.right() - 1, area.bottom() - 1);
        let mut put = |x: u16, y: u16, symbol: &str| {
            buf[(x, y)].set_symbol(symbol).set_style(self.border);
        };
        // Where a panel is one cell wide or high its edges overlap: the later ones win, the
        // corners last, as a block draws them.
        for y in top..=bottom {
            put(left, y, edges.vertical_left);
        }
        for x in left..=right {
            put(x, top, edges.horizontal_top);
        }
        for y in top..=bottom {
            put(right, y, edges.vertical_right);
        }
        for x in left..=right {
            put(x, bottom, edges.horizontal_bottom);
        }
        put(right, bottom, edges.bottom_right);
        put(right, top, edges.top_right);
        put(left, bottom, edges.bottom_left);
        put(left, top, edges.top_left);
        let room = Rect {
            x: left.saturating_add(1),
            y: top,
            width: area.width.saturating_sub(2),
            height: 1,
        };
        if room.is_empty() {
            return;
        }
        let title = Line::raw(self.title.as_str());
        let width = u16::try_from(title.width()).unwrap_or(u16::MAX);
        let title_area = Rect {
            width: width.min(room.width),
            ..room
        };
        buf.set_style(title_area, self.title_style);
        title.render(title_area, buf);
    }
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

#[cfg(test)]
mod tests {
    use ratatui::style::Color;

    use super::*;

    /// A panel drawn on its edges leaves the screen as the block it stands for would, over any
    /// content, at any size, whatever its title.
    #[test]
    fn a_panel_draws_what_its_block_draws() {
        let theme = Theme::dark();
        let screen = Rect::new(0, 0, 24, 6);
        let mut before = Buffer::empty(screen);
        for y in 0..screen.height {
            let row = format!("{y}abcdefghijklmnopqrstuvwxyz");
            before.set_string(0, y, row, Style::new().fg(Color::Red).bg(Color::Blue));
        }
        let areas = [
            Rect::new(0, 0, 1, 1),
            Rect::new(0, 0, 2, 1),
            Rect::new(3, 1, 1, 4),
            Rect::new(2, 2, 3, 2),
            Rect::new(1, 1, 12, 4),
            Rect::new(0, 0, 24, 6),
            Rect::new(20, 4, 10, 10),
        ];
        let titles = [
            "rounds",
            "",
            "a title far wider than any of these",
            "日本語 wide",
        ];
        for area in areas {
            for title in titles {
                for focused in [false, true] {
                    let mut drawn = before.clone();
                    (&Panel::new(title.to_owned(), &theme, focused)).render(area, &mut drawn);
                    let mut expected = before.clone();
                    panel(title.to_owned(), &theme, focused).render(area, &mut expected);
                    assert_eq!(drawn, expected, "{area:?} {title:?} focused {focused}");
                    let block = Panel::new(title.to_owned(), &theme, focused).block();
                    assert_eq!(Panel::inner(area), block.inner(area));
                }
            }
        }
    }
}
