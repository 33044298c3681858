//! The debates list: a pending marker, the id, the topic (on wide screens), mode and status
//! badges, the round and the last decision per debate; the title counts what is shown and
//! pending, and says the sort and the filter.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, TableState};

use super::format::{decision_style, one_line, panel};
use crate::app::{Model, Summary};
use crate::domain::{ControllerMode, Reported, SessionStatus};
use crate::theme::Theme;

/// Below this width the topic column is left out (the detail's title shows it).
const WIDE: u16 = 120;

/// Draws the rows that fit, around the selection: the cost of a frame does not grow with the
/// debates held.
pub fn render(model: &Model, theme: &Theme, frame: &mut Frame, area: Rect, focused: bool) {
    let wide = area.width >= WIDE;
    let window = model
        .debates
        .window(model.selected, usize::from(area.height.saturating_sub(3)));
    let rows = window
        .rows
        .iter()
        .filter_map(|&seq| model.debates.get(seq))
        .map(|summary| row(summary, theme, wide));
    let mut widths = vec![
        Constraint::Length(3),
        Constraint::Length(26),
        Constraint::Fill(1),
        Constraint::Length(9),
        Constraint::Length(11),
        Constraint::Length(5),
        Constraint::Length(20),
    ];
    let mut header = vec![
        "",
        "debate",
        "question",
        "mode",
        "status",
        "round",
        "last decision",
    ];
    if !wide {
        widths.remove(2);
        header.remove(2);
        widths[1] = Constraint::Fill(1);
    }
    let pending = model.debates.pending();
    let shown = if model.filter().is_empty() {
        format!("{}", model.debates.len())
    } else {
        format!(
            "{} of {} match /{}",
            model.debates.listed(),
            model.debates.len(),
            one_line(model.filter())
        )
    };
    let title = format!(
        "debates ({shown}) · {pending} pending · sorted by {}",
        model.sort().label()
    );
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.muted()))
        .row_highlight_style(theme.selection())
        .block(panel(title, theme, focused));
    let mut state = TableState::default().with_selected(window.selected);
    frame.render_stateful_widget(table, area, &mut state);
}

/// A word on a coloured background.
fn badge(text: &str, style: Style) -> Span<'static> {
    Span::styled(
        format!(" {text} "),
        style.add_modifier(Modifier::REVERSED | Modifier::BOLD),
    )
}

fn row<'a>(summary: &Summary, theme: &Theme, wide: bool) -> Row<'a> {
    let unresolved = summary.unresolved();
    let marker = if summary.pending().is_some() {
        Span::styled(format!("●{unresolved}"), theme.pending())
    } else if unresolved > 0 {
        Span::styled(format!("○{unresolved}"), theme.muted())
    } else {
        Span::raw("")
    };
    let status = match &summary.status {
        Reported::Known(SessionStatus::Running) => badge("running", theme.accent()),
        Reported::Known(SessionStatus::Completed) => badge("done", theme.ok()),
        Reported::Known(SessionStatus::Aborted) => badge("aborted", theme.danger()),
        Reported::Unknown(raw) => badge(&format!("?{}", one_line(raw)), theme.danger()),
    };
    let mode = match &summary.mode {
        Reported::Known(ControllerMode::Gated) => badge("gated", theme.pending()),
        Reported::Known(ControllerMode::Shadow) => badge("shadow", theme.muted()),
        Reported::Known(ControllerMode::Enabled) => badge("enabled", theme.accent()),
        Reported::Known(ControllerMode::Off) => badge("off", theme.muted()),
        Reported::Unknown(raw) => badge(&format!("?{}", one_line(raw)), theme.danger()),
    };
    let last = match &summary.last_decision {
        Some(decision) => Span::styled(
            one_line(&decision.to_string()),
            decision_style(theme, decision),
        ),
        None => Span::styled("—", theme.muted()),
    };
    let round = format!("{}/{}", summary.latest_round, summary.max_rounds);
    let mut cells = vec![
        Cell::from(marker),
        Cell::from(Line::from(vec![
            Span::styled(one_line(&summary.id), theme.text()),
            if summary.flagged() {
                Span::styled(" ⚠", theme.danger())
            } else {
                Span::raw("")
            },
        ])),
        Cell::from(Span::styled(summary.question.to_string(), theme.muted())),
        Cell::from(mode),
        Cell::from(status),
        Cell::from(Line::from(round).right_aligned()),
        Cell::from(last),
    ];
    if !wide {
        cells.remove(2);
    }
    Row::new(cells)
}
