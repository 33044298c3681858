//! The selected debate's similarity per round against its threshold, and its token budget
//! against the safety line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, Gauge, GraphType, Paragraph};

use super::common::{compact, fit, fit_line, panel, thousands};
use crate::config::theme::Theme;
use crate::domain::Debate;
use crate::policy::ControllerConfig;

pub(super) fn similarity(
    debate: Option<&Debate>,
    config: &ControllerConfig,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let threshold = config.similarity_threshold;
    let block = panel(format!("similarity vs {threshold:.2}"), theme, false);
    let Some(debate) = debate else {
        frame.render_widget(block, area);
        return;
    };
    let points: Vec<(f64, f64)> = debate
        .decisions
        .values()
        .filter_map(|d| Some((f64::from(d.round_index), d.signals.similarity?)))
        .filter(|(_, s)| s.is_finite())
        .collect();
    let last = f64::from(debate.session.max_rounds.max(debate.latest_round()).max(2));
    let line = [(1.0, threshold), (last, threshold)];
    let datasets = vec![
        Dataset::default()
            .graph_type(GraphType::Line)
            .marker(Marker::Braille)
            .style(theme.threshold())
            .data(&line),
        Dataset::default()
            .graph_type(GraphType::Line)
            .marker(Marker::Braille)
            .style(theme.series())
            .data(&points),
        Dataset::default()
            .graph_type(GraphType::Scatter)
            .marker(Marker::Dot)
            .style(theme.series())
            .data(&points),
    ];
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .bounds([1.0, last])
                .labels(["1".to_owned(), format!("{last} rounds")])
                .style(theme.muted()),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, 1.0])
                .labels(["0", "0.5", "1"])
                .style(theme.muted()),
        );
    frame.render_widget(chart, area);
}

pub(super) fn budget(
    debate: Option<&Debate>,
    config: &ControllerConfig,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let block = panel("token budget".to_owned(), theme, false);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(debate) = debate else {
        return;
    };
    let session = &debate.session;
    let spent = session.budget_spent();
    let safety = config.budget_fraction;
    let [gauge_area, marker_area, facts] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let gauge = Gauge::default()
        .ratio(spent.clamp(0.0, 1.0))
        .label(format!("{:.0}%", spent * 100.0))
        .gauge_style(if spent > safety {
            theme.danger()
        } else {
            theme.ok()
        });
    frame.render_widget(gauge, gauge_area);
    let column = (f64::from(marker_area.width) * safety).round() as usize;
    let label = format!("{:.0}% safety", safety * 100.0);
    let marker = if column + label.len() < usize::from(marker_area.width) {
        format!("{}▲ {label}", " ".repeat(column.saturating_sub(1)))
    } else {
        format!("{:>width$}", format!("{label} ▲"), width = column)
    };
    frame.render_widget(Line::styled(marker, theme.threshold()), marker_area);
    let spent = |figure: fn(u64) -> String| {
        Line::from(vec![
            Span::styled(figure(session.tokens_used), theme.text()),
            Span::styled(" of ", theme.muted()),
            Span::styled(figure(session.token_budget), theme.text()),
            Span::styled(" tokens", theme.muted()),
        ])
    };
    let in_full = spent(thousands);
    let text = vec![
        if in_full.width() <= usize::from(facts.width) {
            in_full
        } else {
            fit_line(spent(compact), facts.width.into())
        },
        Line::styled(
            fit(
                &format!(
                    "rounds {} to {} · {}",
                    session.min_rounds,
                    session.max_rounds,
                    super::one_line(&session.debate_type)
                ),
                facts.width.into(),
            ),
            theme.muted(),
        ),
    ];
    frame.render_widget(Paragraph::new(text), facts);
}
