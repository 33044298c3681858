//! The calibration window: the threshold grid replayed over the most recently finished debates,
//! the setting in force highlighted, the frontier marked; it follows debates as they finish
//! (the figures come from [`crate::app::Reports`], and the title says while they refresh).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Row, Table, TableState, Wrap};

use super::format::{below_header, one_line, panel, title};
use crate::app::{CALIBRATED, Figures, Model, RUNNING_ROWS, SETTLING};
use crate::calibrate::Report;
use crate::text::widths;
use crate::theme::Theme;

/// A warning that rows or debates were left out of the reports, if any were.
pub fn skipped(figures: &Figures, theme: &Theme) -> Option<Line<'static>> {
    let mut left_out = Vec::new();
    if figures.skipped > 0 {
        left_out.push(format!(
            "{} rows that landed faster than the reports could take them (with their debates)",
            figures.skipped
        ));
    }
    if figures.untracked > 0 {
        left_out.push(format!(
            "{} debates whose rows were let go while more than {RUNNING_ROWS} ran, or \
             {SETTLING} finished, at once",
            figures.untracked
        ));
    }
    (!left_out.is_empty()).then(|| {
        Line::styled(
            format!(
                "⚠ left out: {}; these figures may miss debates",
                left_out.join(", and ")
            ),
            theme.warn(),
        )
    })
}

pub fn render(model: &Model, scroll: u16, theme: &Theme, frame: &mut Frame) {
    let area = below_header(frame.area());
    let figures = model.reports.figures();
    let report = &figures.calibration;
    let mut notes = vec![Line::styled(
        format!(
            "{} finished debates (the latest {CALIBRATED} at most) · {} operator labels · {} settings{}",
            report.debates,
            report.labels,
            report.rows.len(),
            match report.skipped_settings {
                0 => String::new(),
                n => format!(" ({n} left out: min_rounds above max_rounds)"),
            }
        ),
        theme.text(),
    )];
    if let Some(problem) = &figures.problem {
        notes.push(Line::styled(
            format!(
                "⚠ [calibration] grid unusable, replaying the setting in force only: {}",
                one_line(problem)
            ),
            theme.danger(),
        ));
    }
    if !report.issues.is_empty() {
        notes.push(Line::styled(
            format!(
                "⚠ {} row problems, first: {}",
                report.issues.len(),
                one_line(&report.issues[0])
            ),
            theme.warn(),
        ));
    }
    notes.extend(skipped(&figures, theme));
    notes.push(Line::styled(Report::LEGEND, theme.muted()));

    let cells: Vec<Vec<String>> = report.rows.iter().map(|r| r.cells().to_vec()).collect();
    let widths: Vec<Constraint> = widths(&Report::HEADER, &cells)
        .into_iter()
        .map(|w| Constraint::Length(w as u16))
        .collect();
    let rows = report.rows.iter().zip(cells).map(|(row, cells)| {
        let style = if row.current {
            theme.accent().add_modifier(Modifier::BOLD)
        } else if row.frontier {
            theme.text()
        } else {
            theme.muted()
        };
        Row::new(cells).style(style)
    });
    let table = Table::new(rows, widths)
        .header(Row::new(Report::HEADER).style(theme.title()))
        .column_spacing(2);

    let block = panel(title("calibration", figures.refreshing), theme, true)
        .title_bottom(" ↑↓ PgUp PgDn scroll · Esc close ");
    let inner = block.inner(area);
    let [top, bottom] = Layout::vertical([
        Constraint::Length(notes.len() as u16 + 1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(notes).wrap(Wrap { trim: true }), top);
    let mut state = TableState::default().with_offset(usize::from(scroll));
    frame.render_stateful_widget(table, bottom, &mut state);
}
