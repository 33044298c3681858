//! The calibration window: the threshold grid replayed over the most recently finished debates
//! as a chart ([`super::grid_chart`]), a cursor along the frontier with its setting's figures,
//! and below either that setting's debates (where each would stop, what it would save, whether
//! its verdict flips) or every setting's row. It follows debates as they finish (the figures
//! come from [`crate::console::app::Reports`], and the title says while they refresh). Only the rows
//! on screen are formatted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Row, Table, Wrap};

use super::common::{below_header, fit_line, one_line, panel, thousands, title};
use super::grid_chart::{self, percent};
use crate::calibrate::{DebateOutcome, Report, Row as Totals};
use crate::config::theme::Theme;
use crate::console::app::{Action, CALIBRATED, Figures, Model, RUNNING_ROWS, SETTLING, at_cursor};
use crate::domain::Decision;
use crate::text::widths;

/// A warning that rows or debates were left out of the reports, if any were.
pub(super) fn skipped(figures: &Figures, theme: &Theme) -> Option<Line<'static>> {
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

/// From this terminal width on the cursor's setting is listed beside the chart, a figure a
/// line.
const WIDE_SUMMARY: usize = 120;

/// What the window shows below the chart.
#[derive(Debug, Clone, Copy)]
pub(super) struct View {
    pub scroll: u16,
    /// The frontier setting under the cursor, counted from the fewest verdict flips.
    pub cursor: usize,
    /// Every setting's row rather than the cursor's debates.
    pub table: bool,
}

pub(super) fn render(model: &Model, view: View, theme: &Theme, frame: &mut Frame) {
    let area = below_header(frame.area());
    let figures = model.reports.figures();
    let report = &figures.calibration;
    let cursor = at_cursor(report, view.cursor);
    let key = |action| model.settings.keymap.hint(action);
    let block = panel(title("calibration", figures.refreshing), theme, true).title_bottom(format!(
        " {} {} frontier · {} {} · ↑↓ scroll · Esc close ",
        key(Action::PreviousSetting),
        key(Action::NextSetting),
        key(Action::SwitchFocus),
        if view.table {
            "its debates"
        } else {
            "every setting"
        }
    ));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);

    let notes = notes(figures, theme);
    let notes_height = Paragraph::new(notes.clone())
        .wrap(Wrap { trim: true })
        .line_count(inner.width) as u16;
    let wide = usize::from(area.width) >= WIDE_SUMMARY;
    let chart_height = if wide {
        (inner.height / 2).max(12)
    } else {
        (inner.height * 2 / 5).max(8)
    };
    let summary_height = if wide { 0 } else { 2 };
    let [top, middle, summary_area, below] = Layout::vertical([
        Constraint::Length(notes_height),
        Constraint::Length(chart_height),
        Constraint::Length(summary_height),
        Constraint::Min(0),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(notes).wrap(Wrap { trim: true }), top);
    let (chart_area, summary_area) = if wide {
        let [chart, side] = Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)])
            .spacing(2)
            .areas(middle);
        (chart, side)
    } else {
        (middle, summary_area)
    };
    grid_chart::render(report, cursor, theme, frame, chart_area);
    frame.render_widget(
        Paragraph::new(summary(
            report,
            cursor,
            view.cursor,
            if wide {
                WIDE_SUMMARY
            } else {
                usize::from(summary_area.width)
            },
            theme,
        ))
        .wrap(Wrap { trim: true }),
        summary_area,
    );
    if view.table {
        settings_table(report, view.scroll, theme, frame, below);
    } else {
        let selected = figures
            .selected
            .as_deref()
            .filter(|s| cursor.is_some_and(|c| c.setting.same_as(&s.setting)));
        debates_table(selected, view.scroll, theme, frame, below);
    }
}

/// The debates, the grid's problems and what was left out, above the chart.
fn notes(figures: &Figures, theme: &Theme) -> Vec<Line<'static>> {
    let report = &figures.calibration;
    let mut notes = vec![Line::styled(
        format!(
            "{} finished debates (the latest {CALIBRATED} at most) · {} operator labels · {} settings{}",
            report.debates,
            report.labels,
            report.rows.len(),
            report.left_out()
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
    notes.extend(skipped(figures, theme));
    notes
}

/// The setting under the cursor and its figures: two lines under the chart, or a list beside
/// it when `wide`.
fn summary(
    report: &Report,
    cursor: Option<&Totals>,
    index: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let wide = width >= WIDE_SUMMARY;
    let Some(row) = cursor else {
        return vec![Line::styled(
            "no settings replayed yet: the chart fills as debates finish",
            theme.muted(),
        )];
    };
    let frontier = report.frontier().len();
    let cells = row.cells();
    let marks = match (row.current, report.closest_to_recorded()) {
        (true, _) => " · in force",
        (false, Some(closest)) if closest.setting.same_as(&row.setting) => " · closest to recorded",
        _ => "",
    };
    let place = index.min(frontier.saturating_sub(1)) + 1;
    let setting = format!(
        "┼ {place} of {frontier} on the frontier{marks}: {}",
        row.thresholds(false)
    );
    let short = format!("┼ {place}/{frontier}{marks} · {}", row.thresholds(true));
    let figures = [
        ("tokens saved", cells[7].clone()),
        ("verdict flips", cells[8].clone()),
        ("rounds used/run", cells[6].clone()),
        ("label agreement", cells[11].clone()),
        ("stops conv/max/safety/none", cells[10].clone()),
        ("escalations", cells[9].clone()),
        (
            "decided alike",
            format!(
                "{}/{} recorded rounds",
                row.decisions_agreed, row.decisions_recorded
            ),
        ),
    ];
    let figure = |(name, value): (&str, String)| {
        vec![
            Span::styled(format!("{name} "), theme.muted()),
            Span::styled(value, theme.text()),
        ]
    };
    if wide {
        let mut lines = vec![Line::styled(setting, theme.title())];
        lines.extend(figures.into_iter().map(|f| Line::from(figure(f))));
        return lines;
    }
    // Under the chart, two lines: the most telling figures first, short names.
    let names = ["saves", "flips", "rounds", "labels"];
    let mut spans = Vec::new();
    for (i, (name, (_, value))) in names.into_iter().zip(figures).enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted()));
        }
        spans.extend(figure((name, value)));
    }
    vec![
        fit_line(Line::styled(short, theme.title()), width),
        fit_line(Line::from(spans), width),
    ]
}

/// The debates of the setting under the cursor, as its replay left them.
fn debates_table(
    selected: Option<&Totals>,
    scroll: u16,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    const HEADER: [&str; 4] = ["debate", "would stop", "would save", "verdict at the stop"];
    let Some(outcomes) = selected.and_then(|s| s.outcomes.as_deref()) else {
        frame.render_widget(
            Line::styled("replaying this setting's debates…", theme.muted()),
            area,
        );
        return;
    };
    let shown = visible(outcomes, scroll, area);
    let cells: Vec<Vec<String>> = shown.iter().map(debate_cells).collect();
    let rows = shown.iter().zip(cells.clone()).map(|(o, cells)| {
        Row::new(cells).style(if o.verdict_flip {
            theme.warn()
        } else if o.stop.is_some() {
            theme.text()
        } else {
            theme.muted()
        })
    });
    table(&HEADER, &cells, rows, theme, frame, area);
}

fn debate_cells(o: &DebateOutcome) -> Vec<String> {
    let stop = match o.stop {
        Some(decision) => format!(
            "round {} of {}: {}",
            o.rounds_used,
            o.rounds_run,
            match decision {
                Decision::StopConverged => "converged".to_owned(),
                Decision::StopMaxRounds => "max rounds".to_owned(),
                Decision::StopSafety => "safety".to_owned(),
                other => other.to_string(),
            }
        ),
        None => format!("never ({} ran)", o.rounds_run),
    };
    let share = if o.tokens_run > 0 {
        o.tokens_saved as f64 / o.tokens_run as f64
    } else {
        0.0
    };
    let verdict = |v: &Option<String>| one_line(v.as_deref().unwrap_or("-"));
    let verdict = if o.verdict_flip {
        format!(
            "flips: {} → {}",
            verdict(&o.verdict_at_stop),
            verdict(&o.verdict_at_end)
        )
    } else {
        format!("holds: {}", verdict(&o.verdict_at_stop))
    };
    vec![
        one_line(&o.session_id),
        stop,
        format!("{} ({})", thousands(o.tokens_saved), percent(share)),
        verdict,
    ]
}

/// Every setting's row, the setting in force highlighted, the frontier's in plain text.
fn settings_table(report: &Report, scroll: u16, theme: &Theme, frame: &mut Frame, area: Rect) {
    let [legend, area] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(Line::styled(Report::LEGEND, theme.muted()), legend);
    let shown = visible(&report.rows, scroll, area);
    let cells: Vec<Vec<String>> = shown.iter().map(|r| r.cells().to_vec()).collect();
    let rows = shown.iter().zip(cells.clone()).map(|(row, cells)| {
        Row::new(cells).style(if row.current {
            theme.accent().add_modifier(Modifier::BOLD)
        } else if row.frontier {
            theme.text()
        } else {
            theme.muted()
        })
    });
    table(&Report::HEADER, &cells, rows, theme, frame, area);
}

/// The rows of `all` that fit in `area` under a header, from `scroll` (the last row at most).
fn visible<T>(all: &[T], scroll: u16, area: Rect) -> &[T] {
    let start = usize::from(scroll).min(all.len().saturating_sub(1));
    let end = (start + usize::from(area.height.saturating_sub(1))).min(all.len());
    &all[start.min(end)..end]
}

fn table<'a>(
    header: &'a [&'a str],
    cells: &[Vec<String>],
    rows: impl IntoIterator<Item = Row<'a>>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let widths: Vec<Constraint> = widths(header, cells)
        .into_iter()
        .map(|w| Constraint::Length(w as u16))
        .collect();
    let table = Table::new(rows, widths)
        .header(Row::new(header.iter().copied()).style(theme.title()))
        .column_spacing(2);
    frame.render_widget(table, area);
}
