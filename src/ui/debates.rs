//! The debates list: a pending marker, the id, the topic (on wide screens), mode and status
//! badges, the round and the last decision per debate; the title counts what is shown and
//! pending, and says the sort and the filter.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, TableState};

use super::format::{decision_style, one_line, panel};
use crate::app::Model;
use crate::domain::{ControllerMode, Debate, Reported, SessionStatus};
use crate::theme::Theme;

/// Below this width the topic column is left out (the detail's title shows it).
const WIDE: u16 = 120;

pub fn render(model: &Model, theme: &Theme, frame: &mut Frame, area: Rect, focused: bool) {
    let wide = area.width >= WIDE;
    let visible = model.visible();
    let rows = visible.iter().map(|&i| row(&model.debates[i], theme, wide));
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
    let pending = model
        .debates
        .iter()
        .filter(|d| d.pending().is_some())
        .count();
    let shown = if model.filter.is_empty() {
        format!("{}", model.debates.len())
    } else {
        format!(
            "{} of {} match /{}",
            visible.len(),
            model.debates.len(),
            one_line(&model.filter)
        )
    };
    let title = format!(
        "debates ({shown}) · {pending} pending · sorted by {}",
        model.sort.label()
    );
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.muted()))
        .row_highlight_style(theme.selection())
        .block(panel(title, theme, focused));
    let selected = visible.iter().position(|&i| i == model.selected);
    let mut state = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
}

/// A word on a coloured background.
fn badge(text: &str, style: Style) -> Span<'static> {
    Span::styled(
        format!(" {text} "),
        style.add_modifier(Modifier::REVERSED | Modifier::BOLD),
    )
}

fn row<'a>(debate: &Debate, theme: &Theme, wide: bool) -> Row<'a> {
    let session = &debate.session;
    let unresolved = debate.unresolved();
    let marker = if debate.pending().is_some() {
        Span::styled(format!("●{unresolved}"), theme.pending())
    } else if unresolved > 0 {
        Span::styled(format!("○{unresolved}"), theme.muted())
    } else {
        Span::raw("")
    };
    let status = match &session.status {
        Reported::Known(SessionStatus::Running) => badge("running", theme.accent()),
        Reported::Known(SessionStatus::Completed) => badge("done", theme.ok()),
        Reported::Known(SessionStatus::Aborted) => badge("aborted", theme.danger()),
        Reported::Unknown(raw) => badge(&format!("?{}", one_line(raw)), theme.danger()),
    };
    let mode = match &session.controller_mode {
        Reported::Known(ControllerMode::Gated) => badge("gated", theme.pending()),
        Reported::Known(ControllerMode::Shadow) => badge("shadow", theme.muted()),
        Reported::Known(ControllerMode::Enabled) => badge("enabled", theme.accent()),
        Reported::Known(ControllerMode::Off) => badge("off", theme.muted()),
        Reported::Unknown(raw) => badge(&format!("?{}", one_line(raw)), theme.danger()),
    };
    let last = match debate.latest_decision() {
        Some(d) => Span::styled(
            one_line(&d.decision.to_string()),
            decision_style(theme, &d.decision),
        ),
        None => Span::styled("—", theme.muted()),
    };
    let round = format!("{}/{}", debate.latest_round(), session.max_rounds);
    let mut cells = vec![
        Cell::from(marker),
        Cell::from(Line::from(vec![
            Span::styled(one_line(&session.id), theme.text()),
            if debate.issues().next().is_some() {
                Span::styled(" ⚠", theme.danger())
            } else {
                Span::raw("")
            },
        ])),
        Cell::from(Span::styled(one_line(&session.question), theme.muted())),
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
