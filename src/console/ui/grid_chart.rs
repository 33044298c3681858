//! The calibration grid as a chart: every setting at (verdict flips, tokens saved) as shares, the
//! frontier joined, the setting in force, the one closest to the recorded decisions and the
//! cursor marked. Each is told apart by its symbol as well as its colour (colour-blind safe in
//! every theme); the legend under the chart names the symbols.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType};

use crate::calibrate::{Report, Row};
use crate::config::theme::Theme;

/// A row's place on the chart: (verdict flips share, tokens saved share).
fn point(row: &Row) -> (f64, f64) {
    (row.verdict_flip_share, row.tokens_saved_share)
}

/// A share as a percentage label: one decimal below 10%.
pub(crate) fn percent(share: f64) -> String {
    let percent = share * 100.0;
    if percent < 10.0 {
        format!("{percent:.1}%")
    } else {
        format!("{percent:.0}%")
    }
}

/// The chart of `report` with `cursor` (a frontier row) marked, and its legend on the last line
/// of `area`.
pub(super) fn render(
    report: &Report,
    cursor: Option<&Row>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let [chart_area, legend_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    let settings: Vec<(f64, f64)> = report.rows.iter().map(point).collect();
    let frontier: Vec<(f64, f64)> = report.frontier().into_iter().map(point).collect();
    let in_force: Vec<(f64, f64)> = report
        .rows
        .iter()
        .filter(|r| r.current)
        .map(point)
        .collect();
    let closest: Vec<(f64, f64)> = report
        .closest_to_recorded()
        .map(point)
        .into_iter()
        .collect();
    // Room around the furthest point, and a scale even when every setting sits at 0.
    let most =
        |pick: fn(&(f64, f64)) -> f64| settings.iter().map(pick).fold(0.01_f64, f64::max) * 1.1;
    let (x_max, y_max) = (most(|p| p.0), most(|p| p.1));
    let (across, up) = match cursor.map(point) {
        Some((x, y)) => (
            vec![(x - x_max * 0.05, y), (x + x_max * 0.05, y)],
            vec![(x, y - y_max * 0.1), (x, y + y_max * 0.1)],
        ),
        None => (Vec::new(), Vec::new()),
    };
    let line = |data, style| {
        Dataset::default()
            .graph_type(GraphType::Line)
            .marker(Marker::Braille)
            .style(style)
            .data(data)
    };
    let points = |data, marker, style| {
        Dataset::default()
            .graph_type(GraphType::Scatter)
            .marker(marker)
            .style(style)
            .data(data)
    };
    // Later datasets are drawn over earlier ones: the marked settings last.
    let datasets = vec![
        points(&settings, Marker::Dot, theme.muted()),
        line(&frontier, theme.series()),
        points(&frontier, Marker::Dot, theme.series()),
        line(&across, theme.text()),
        line(&up, theme.text()),
        points(&closest, Marker::Bar, theme.closest()),
        points(&in_force, Marker::Block, theme.in_force()),
    ];
    let axis = |title: &'static str, max: f64| {
        Axis::default()
            .title(Span::styled(title, theme.muted()))
            .bounds([0.0, max])
            .labels(["0%".to_owned(), percent(max)])
            .style(theme.muted())
    };
    let chart = Chart::new(datasets)
        .legend_position(None)
        .x_axis(axis("verdict flips", x_max))
        .y_axis(axis("tokens saved", y_max));
    frame.render_widget(chart, chart_area);
    frame.render_widget(legend(theme), legend_area);
}

/// What each symbol stands for, each in its own colour.
fn legend(theme: &Theme) -> Line<'static> {
    let entries = [
        ("•", "setting", theme.muted()),
        ("⠤•", "frontier", theme.series()),
        ("█", "in force", theme.in_force()),
        ("▄", "closest to recorded", theme.closest()),
        ("┼", "cursor", theme.text()),
    ];
    let mut spans = Vec::new();
    for (symbol, name, style) in entries {
        spans.push(Span::styled(format!("{symbol} "), style));
        spans.push(Span::styled(format!("{name}   "), theme.muted()));
    }
    Line::from(spans)
}
