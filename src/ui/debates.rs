//! The debates list: status, mode, round, last decision and a pending marker per debate.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, TableState};

use super::format::{decision_style, one_line, panel};
use crate::app::Model;
use crate::domain::{Reported, SessionStatus};
use crate::theme::Theme;

pub fn render(model: &Model, theme: &Theme, frame: &mut Frame, area: Rect, focused: bool) {
    let rows = model.debates.iter().map(|debate| {
        let session = &debate.session;
        let unresolved = debate.unresolved();
        let marker = if debate.pending().is_some() {
            Span::styled(format!("●{unresolved}"), theme.pending())
        } else if unresolved > 0 {
            Span::styled(format!("○{unresolved}"), theme.muted())
        } else {
            Span::raw("")
        };
        let status_style = match session.status {
            Reported::Known(SessionStatus::Running) => theme.accent(),
            Reported::Known(SessionStatus::Completed) => theme.ok(),
            Reported::Known(SessionStatus::Aborted) | Reported::Unknown(_) => theme.danger(),
        };
        let last = match debate.latest_decision() {
            Some(d) => Span::styled(
                one_line(&d.decision.to_string()),
                decision_style(theme, &d.decision),
            ),
            None => Span::styled("—", theme.muted()),
        };
        let round = format!("{}/{}", debate.latest_round(), session.max_rounds);
        Row::new(vec![
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
            Cell::from(Span::styled(
                one_line(&session.controller_mode.to_string()),
                theme.muted(),
            )),
            Cell::from(Span::styled(
                one_line(&session.status.to_string()),
                status_style,
            )),
            Cell::from(Line::from(round).right_aligned()),
            Cell::from(last),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(3),
            Constraint::Length(26),
            Constraint::Fill(1),
            Constraint::Length(7),
            Constraint::Length(9),
            Constraint::Length(5),
            Constraint::Length(20),
        ],
    )
    .header(
        Row::new([
            "",
            "debate",
            "question",
            "mode",
            "status",
            "round",
            "last decision",
        ])
        .style(theme.muted()),
    )
    .row_highlight_style(theme.selection())
    .block(panel(
        format!("debates ({})", model.debates.len()),
        theme,
        focused,
    ));
    let mut state = TableState::default().with_selected(Some(model.selected));
    frame.render_stateful_widget(table, area, &mut state);
}
