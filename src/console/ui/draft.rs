//! The dialog of a new settings version being written (on several databases, titled with the
//! one it goes to): what it will write (for a publish, its values and the calibration it came
//! from), then the reason typed (required), then the share
//! (a publish), then the confirmation — the text typed on one line, scrolled to keep the cursor
//! in view, the terminal's cursor where the text's is.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::common::{centered, fit_line, inert, one_line, panel};
use super::footer::synced;
use crate::config::theme::Theme;
use crate::console::app::{Draft, MAX_SHARE, Model, SettingsChange, Step};
use crate::domain::MAX_REASON;
use crate::text::wrap;

/// The dialog's width at most.
const WIDTH: u16 = 76;
/// Lines of the reason the confirmation shows.
const REASON_LINES: usize = 3;

pub(super) fn render(
    model: &Model,
    draft: &Draft,
    theme: &Theme,
    frame: &mut Frame,
) -> Option<Position> {
    let width = WIDTH.min(frame.area().width);
    let inner = usize::from(width.saturating_sub(2));
    let publishing = &draft.publishing;
    // On several databases, the one it is written to.
    let contexts = &model.live.contexts;
    let to = match contexts.several() {
        true => format!(" · in {}", contexts.name(draft.ctx)),
        false => String::new(),
    };
    let mut lines: Vec<Line> = wrap(&one_line(&publishing.what()), inner, 3)
        .into_iter()
        .map(|l| Line::styled(l, theme.pending()))
        .collect();
    for who in model.editing(draft.ctx, &publishing.debate_type) {
        let line = format!(
            "{} is editing the rollout of {} too: the database numbers each version once, and \
             refuses one that no longer fits",
            one_line(&who),
            one_line(&publishing.debate_type)
        );
        lines.extend(
            wrap(&line, inner, 2)
                .into_iter()
                .map(|l| Line::styled(l, theme.warn())),
        );
    }
    if let SettingsChange::Publish { evidence, .. } = &publishing.change {
        let source = evidence
            .get("source")
            .and_then(|s| s.as_str())
            .unwrap_or_default();
        lines.push(fit_line(
            Line::styled(format!("evidence: {}", one_line(source)), theme.muted()),
            inner,
        ));
    }
    let (label, text, max, hint) = match draft.step {
        Step::Reason => (
            "reason: ",
            &publishing.reason,
            MAX_REASON,
            "why, for the history (required) · Enter next · Esc cancel",
        ),
        Step::Share => (
            "share %: ",
            &draft.share,
            MAX_SHARE,
            "of new debates, above 0 up to 100 · Enter next · Esc cancel",
        ),
        Step::Confirm => {
            let reason = format!("reason: {}", one_line(&publishing.reason));
            lines.extend(
                wrap(&reason, inner, REASON_LINES)
                    .into_iter()
                    .map(|l| Line::styled(l, theme.text())),
            );
            lines.push(Line::from(vec![
                Span::styled("[y]", theme.pending()),
                Span::styled(" write this version    ", theme.text()),
                Span::styled("any other key cancels", theme.muted()),
            ]));
            let area = centered(frame, width, lines.len() as u16 + 2);
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new(lines).block(panel(format!("confirm{to}"), theme, true)),
                area,
            );
            return None;
        }
    };
    lines.push(Line::styled(hint, theme.muted()));
    let prompt = synced(&model.desk.prompt, text, max);
    let area = centered(frame, width, lines.len() as u16 + 3);
    let block = panel(format!("a new settings version{to}"), theme, true);
    let room = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
    let row = Rect {
        y: room.bottom().saturating_sub(1),
        height: 1,
        ..room
    };
    let label_width = label.len() as u16;
    frame.render_widget(Span::styled(label, theme.pending()), row);
    let field = Rect {
        x: row.x + label_width,
        width: row.width.saturating_sub(label_width),
        ..row
    };
    let (scroll, column) = prompt.line(field.width);
    frame.render_widget(
        Paragraph::new(inert(prompt.value()))
            .style(theme.text())
            .scroll((0, scroll)),
        field,
    );
    (column < field.width).then(|| Position::new(field.x + column, field.y))
}
