//! The selected debate's similarity per round against its threshold, and its token budget
//! against the safety line, each a region kept from the frame before while it shows the same.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, Gauge, GraphType, Paragraph, Widget};

use super::common::{Panel, compact, fit, fit_line, thousands};
use super::sketch::Sketch;
use crate::config::theme::Theme;
use crate::console::kept::Kept;
use crate::domain::Debate;
use crate::policy::ControllerConfig;

/// Draws the similarity chart in `area`, a region kept in `kept`.
pub(super) fn similarity(
    debate: Option<&Debate>,
    config: &ControllerConfig,
    theme: &Theme,
    kept: &mut Kept,
    buf: &mut Buffer,
    area: Rect,
) {
    let threshold = config.similarity_threshold;
    let panel = Panel::new(format!("similarity vs {threshold:.2}"), theme, false);
    let Some(debate) = debate else {
        let mut sketch = Sketch::default();
        sketch.render_widget(panel, area);
        sketch.draw(kept, buf, area);
        return;
    };
    let points: Vec<(f64, f64)> = debate
        .decisions
        .values()
        .filter_map(|d| Some((f64::from(d.round_index), d.signals.similarity?)))
        .filter(|(_, s)| s.is_finite())
        .collect();
    let chart = SimilarityChart {
        panel,
        threshold,
        last: f64::from(debate.session.max_rounds.max(debate.latest_round()).max(2)),
        points,
        styles: [theme.threshold(), theme.series(), theme.muted()],
    };
    kept.draw(buf, area, chart, |chart, buf| chart.render(area, buf));
}

/// What the similarity chart shows: each round's similarity, from the first round to `last`,
/// against the threshold.
#[derive(PartialEq)]
struct SimilarityChart {
    panel: Panel,
    threshold: f64,
    last: f64,
    points: Vec<(f64, f64)>,
    /// The threshold's, the series' and the axes' styles.
    styles: [Style; 3],
}

impl SimilarityChart {
    fn render(&self, area: Rect, buf: &mut Buffer) {
        let [threshold_style, series, muted] = self.styles;
        let line = [(1.0, self.threshold), (self.last, self.threshold)];
        let datasets = vec![
            Dataset::default()
                .graph_type(GraphType::Line)
                .marker(Marker::Braille)
                .style(threshold_style)
                .data(&line),
            Dataset::default()
                .graph_type(GraphType::Line)
                .marker(Marker::Braille)
                .style(series)
                .data(&self.points),
            Dataset::default()
                .graph_type(GraphType::Scatter)
                .marker(Marker::Dot)
                .style(series)
                .data(&self.points),
        ];
        Chart::new(datasets)
            .block(self.panel.clone().block())
            .x_axis(
                Axis::default()
                    .bounds([1.0, self.last])
                    .labels(["1".to_owned(), format!("{} rounds", self.last)])
                    .style(muted),
            )
            .y_axis(
                Axis::default()
                    .bounds([0.0, 1.0])
                    .labels(["0", "0.5", "1"])
                    .style(muted),
            )
            .render(area, buf);
    }
}

/// Draws the token budget's panel in `area`, a region kept in `kept` while what it is drawn from
/// stays the same.
pub(super) fn budget(
    debate: Option<&Debate>,
    config: &ControllerConfig,
    theme: &Theme,
    kept: &mut Kept,
    buf: &mut Buffer,
    area: Rect,
) {
    let source = Budget {
        spending: debate.map(|debate| {
            let session = &debate.session;
            Spending {
                spent: session.budget_spent(),
                tokens_used: session.tokens_used,
                token_budget: session.token_budget,
                rounds: (session.min_rounds, session.max_rounds),
                debate_type: session.debate_type.clone(),
            }
        }),
        safety: config.budget_fraction,
        theme: theme.clone(),
    };
    Sketch::sourced(source, kept, buf, area, |budget, sketch| {
        budget.write(sketch, area);
    });
}

/// What the token budget's panel is drawn from: the selected debate's spending, the safety
/// line, and the theme.
#[derive(PartialEq)]
struct Budget {
    spending: Option<Spending>,
    safety: f64,
    theme: Theme,
}

/// A debate's tokens: the share of its budget spent, the tokens used and the budget, its
/// rounds (least and most) and its type.
#[derive(PartialEq)]
struct Spending {
    spent: f64,
    tokens_used: u64,
    token_budget: u64,
    rounds: (u32, u32),
    debate_type: String,
}

impl Budget {
    /// Writes the panel in `area` down in `sketch`.
    fn write(&self, sketch: &mut Sketch, area: Rect) {
        let Budget {
            spending,
            safety,
            theme,
        } = self;
        let inner = Panel::inner(area);
        sketch.render_widget(Panel::new("token budget".to_owned(), theme, false), area);
        let Some(spending) = spending else {
            return;
        };
        let spent = spending.spent;
        let [gauge_area, marker_area, facts] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(inner);
        let gauge = Gauge::default()
            .ratio(spent.clamp(0.0, 1.0))
            .label(format!("{:.0}%", spent * 100.0))
            .gauge_style(if spent > *safety {
                theme.danger()
            } else {
                theme.ok()
            });
        sketch.render_widget(gauge, gauge_area);
        let column = (f64::from(marker_area.width) * safety).round() as usize;
        let label = format!("{:.0}% safety", safety * 100.0);
        let marker = if column + label.len() < usize::from(marker_area.width) {
            format!("{}▲ {label}", " ".repeat(column.saturating_sub(1)))
        } else {
            format!("{:>width$}", format!("{label} ▲"), width = column)
        };
        sketch.render_widget(Line::styled(marker, theme.threshold()), marker_area);
        let tokens = |figure: fn(u64) -> String| {
            Line::from(vec![
                Span::styled(figure(spending.tokens_used), theme.text()),
                Span::styled(" of ", theme.muted()),
                Span::styled(figure(spending.token_budget), theme.text()),
                Span::styled(" tokens", theme.muted()),
            ])
        };
        let in_full = tokens(thousands);
        let (least, most) = spending.rounds;
        let text = vec![
            if in_full.width() <= usize::from(facts.width) {
                in_full
            } else {
                fit_line(tokens(compact), facts.width.into())
            },
            Line::styled(
                fit(
                    &format!(
                        "rounds {least} to {most} · {}",
                        super::one_line(&spending.debate_type)
                    ),
                    facts.width.into(),
                ),
                theme.muted(),
            ),
        ];
        sketch.render_widget(Paragraph::new(text), facts);
    }
}
