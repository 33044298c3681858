//! The shadow-week window: for each shadow-mode debate held (by id), where the controller would
//! have stopped against where the fixed loop stopped, the tokens that stop would have saved (as
//! bars, then in the table) and the operators' agreement with the controller; the rollup across
//! debates on top. The bars and the table show the same debates, scrolled together.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, Clear, Paragraph, Row, Table, TableState, Wrap};

use super::common::{below_header, fit, one_line, panel, thousands, title};
use crate::audit::{ShadowRow, ShadowWeek};
use crate::config::theme::Theme;
use crate::console::app::{Figures, Model};
use crate::text::widths;

const HEADER: [&str; 6] = [
    "debate",
    "fixed loop",
    "controller would stop",
    "tokens",
    "would save",
    "labels agreed",
];

pub(super) fn render(model: &Model, scroll: u16, theme: &Theme, frame: &mut Frame) {
    let area = below_header(frame.area());
    let figures = model.reports.figures();
    let week = &figures.shadow;
    let notes = notes(figures, theme);
    let cells: Vec<Vec<String>> = week.rows.iter().map(cells).collect();
    let widths: Vec<Constraint> = widths(&HEADER, &cells)
        .into_iter()
        .map(|w| Constraint::Length(w as u16))
        .collect();
    let rows = week.rows.iter().zip(cells).map(|(row, cells)| {
        let style = if row.would_stop.is_some() {
            theme.text()
        } else {
            theme.muted()
        };
        Row::new(cells).style(style)
    });
    let table = Table::new(rows, widths)
        .header(Row::new(HEADER).style(theme.title()))
        .column_spacing(2);
    let block = panel(title("shadow week", figures.refreshing), theme, true)
        .title_bottom(" ↑↓ PgUp PgDn scroll · Esc close ");
    let inner = block.inner(area);
    let notes_height = Paragraph::new(notes.clone())
        .wrap(Wrap { trim: true })
        .line_count(inner.width) as u16;
    let room = inner.height.saturating_sub(notes_height + 2) / 2;
    let shown = week.rows.len().saturating_sub(usize::from(scroll));
    let bars_height = u16::try_from(shown).unwrap_or(u16::MAX).min(room);
    let [top, bars_area, bottom] = Layout::vertical([
        Constraint::Length(notes_height + 1),
        Constraint::Length(bars_height + 1),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(notes).wrap(Wrap { trim: true }), top);
    bars(week, scroll, theme, frame, bars_area);
    let mut state = TableState::default().with_offset(usize::from(scroll));
    frame.render_stateful_widget(table, bottom, &mut state);
}

/// Tokens saved per debate as bars, from the `scroll`-th debate as many as fit (the table under
/// them starts at the same debate); bars scaled to the most any debate saves.
fn bars(week: &ShadowWeek, scroll: u16, theme: &Theme, frame: &mut Frame, area: Rect) {
    let [title_area, area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(
        Line::styled(
            "tokens the controller would have saved, per debate",
            theme.muted(),
        ),
        title_area,
    );
    let most = week.rows.iter().map(|r| r.tokens_saved).max().unwrap_or(0);
    let label_width = usize::from(area.width / 4).clamp(8, 24);
    let bars: Vec<Bar> = week
        .rows
        .iter()
        .skip(usize::from(scroll))
        .take(usize::from(area.height))
        .map(|row| {
            Bar::with_label(
                fit(&one_line(&row.session_id), label_width),
                row.tokens_saved,
            )
            .text_value(format!(
                "{} ({:.0}%)",
                thousands(row.tokens_saved),
                row.saved_share() * 100.0
            ))
        })
        .collect();
    let chart = BarChart::horizontal(bars)
        .max(most.max(1))
        .bar_width(1)
        .bar_gap(0)
        .bar_style(theme.ok())
        .value_style(theme.ok().add_modifier(Modifier::REVERSED))
        .label_style(theme.text());
    frame.render_widget(chart, area);
}

/// The week in sentences above the table: debates, savings, agreement, what the columns mean,
/// and what was left out or could not be read.
fn notes(figures: &Figures, theme: &Theme) -> Vec<Line<'static>> {
    let week = &figures.shadow;
    let stopped = week.stopped_early();
    let mut notes = vec![
        Line::from(vec![
            Span::styled(
                format!(
                    "{} shadow debates · the controller would have stopped {stopped} early · ",
                    week.rows.len()
                ),
                theme.text(),
            ),
            Span::styled(
                format!(
                    "{} of {} tokens ({:.1}%) would have been saved",
                    thousands(week.tokens_saved),
                    thousands(week.tokens),
                    week.saved_share() * 100.0
                ),
                theme.ok(),
            ),
        ]),
        Line::styled(
            match week.agreement() {
                Some(rate) => format!(
                    "operators agreed with the controller on {} of {} labels ({:.0}%)",
                    week.agreed,
                    week.labels,
                    rate * 100.0
                ),
                None => "no operator labels yet: accept, override or escalate a shadow decision to label it".to_owned(),
            },
            theme.text(),
        ),
        Line::styled(
            "would stop: the controller's first stop decision · would save: tokens spent after it · agreed: labels of the same kind (stop, continue, escalate) as the controller's decision",
            theme.muted(),
        ),
    ];
    notes.extend(super::calibration::skipped(figures, theme));
    if let Some(first) = week.issues.first() {
        notes.push(Line::styled(
            format!(
                "⚠ {} labels unreadable, first: {}",
                week.issues.len(),
                one_line(first)
            ),
            theme.warn(),
        ));
    }
    notes
}

fn cells(row: &ShadowRow) -> Vec<String> {
    let fixed = if row.running {
        format!("round {} (running)", row.rounds_run)
    } else {
        format!("round {}", row.rounds_run)
    };
    let would = match row.would_stop {
        Some((round, decision)) => format!("round {round}: {decision}"),
        None => "never".to_owned(),
    };
    vec![
        one_line(&row.session_id),
        fixed,
        would,
        thousands(row.tokens),
        format!(
            "{} ({:.0}%)",
            thousands(row.tokens_saved),
            row.saved_share() * 100.0
        ),
        format!("{}/{}", row.agreed, row.labels),
    ]
}
