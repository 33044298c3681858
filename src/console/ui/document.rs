//! A detail view read as text, round by round (transcript, judge, trace): it starts at the
//! selected round, so a live debate shows its latest round until the operator moves, and
//! scrolls from there by `Model::detail_scroll` wrapped rows.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::common::{one_line, panel};
use crate::console::app::Model;
use crate::console::app::TextRows;
use crate::domain::Debate;

/// One round's lines.
pub(super) struct Section<'a> {
    pub round: u32,
    pub lines: Vec<Line<'a>>,
}

/// A view's text: lines always shown on top, then the rounds.
pub(crate) struct Document<'a> {
    pub title: String,
    pub head: Vec<Line<'a>>,
    pub sections: Vec<Section<'a>>,
}

/// The document `build` makes of the selected debate, or one saying no debate is selected.
pub(super) fn of(
    model: &Model,
    view: &str,
    build: fn(&Model, &Debate) -> Document<'static>,
) -> Document<'static> {
    match model.selected_debate() {
        Some(debate) => build(model, debate),
        None => Document {
            title: view.to_owned(),
            head: vec![Line::styled(
                "no debate selected",
                model.settings.theme.muted(),
            )],
            sections: Vec::new(),
        },
    }
}

impl<'a> Document<'a> {
    /// The lines from the selected round on.
    fn body(&self, model: &Model) -> Vec<Line<'a>> {
        let from = model.selected_round().unwrap_or(1);
        self.sections
            .iter()
            .filter(|s| s.round >= from)
            .flat_map(|s| s.lines.iter().cloned())
            .collect()
    }

    /// The head's area and the body's inside the panel's `inner` area.
    fn split(&self, inner: Rect) -> [Rect; 2] {
        let head_height = Paragraph::new(self.head.clone())
            .wrap(Wrap { trim: false })
            .line_count(inner.width)
            .min(usize::from(inner.height / 2)) as u16;
        Layout::vertical([Constraint::Length(head_height), Constraint::Fill(1)]).areas(inner)
    }

    /// The rows the body takes in a panel drawn in `area`, and the rows it is shown in.
    pub(crate) fn extent(&self, model: &Model, area: Rect) -> TextRows {
        let [_, body] = self.split(Block::bordered().inner(area));
        TextRows {
            total: Paragraph::new(self.body(model))
                .wrap(Wrap { trim: false })
                .line_count(body.width),
            shown: usize::from(body.height),
        }
    }

    pub(super) fn render(self, model: &Model, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = &model.settings.theme;
        let from = model.selected_round().unwrap_or(1);
        // Rounds are numbered 1..=latest with none missing.
        let hint = match from - 1 {
            0 => " ↑↓ PgUp PgDn scroll ".to_owned(),
            n => {
                format!(" from round {from} · {n} earlier rounds: ↑ at the top, Home for round 1 ")
            }
        };
        let block = panel(one_line(&self.title), theme, focused).title_bottom(hint);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [head, body] = self.split(inner);
        frame.render_widget(
            Paragraph::new(self.head.clone()).wrap(Wrap { trim: false }),
            head,
        );
        let lines = self.body(model);
        if lines.is_empty() {
            frame.render_widget(Paragraph::new("nothing yet").style(theme.muted()), body);
            return;
        }
        let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
        let last = paragraph.line_count(body.width).saturating_sub(1);
        let scroll = (model.nav.detail_scroll.max(0) as usize).min(last);
        frame.render_widget(
            paragraph.scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
            body,
        );
    }
}
