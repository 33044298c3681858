//! What a panel draws, written down before it is drawn: the widgets, each with its area, in
//! the order they are drawn. Two sketches alike draw alike, so a panel drawn from a sketch is a
//! region [`Kept`] from the frame before while its sketch stays the same.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Gauge, Paragraph, Widget};

use super::common::Panel;
use crate::console::kept::Kept;

/// The widgets a panel draws, in order.
#[derive(Default, PartialEq)]
pub(super) struct Sketch(Vec<(Rect, Stroke)>);

/// One widget of a sketch.
#[derive(PartialEq)]
pub(super) enum Stroke {
    Panel(Panel),
    Line(Line<'static>),
    Paragraph(Paragraph<'static>),
    Gauge(Gauge<'static>),
}

impl Sketch {
    /// What `write` writes down.
    pub(super) fn of(write: impl FnOnce(&mut Sketch)) -> Sketch {
        let mut sketch = Sketch::default();
        write(&mut sketch);
        sketch
    }

    /// Draws `line` alone as the region at `area`, kept in `kept`.
    pub(super) fn line(line: Line<'static>, kept: &mut Kept, buf: &mut Buffer, area: Rect) {
        Sketch(vec![(area, Stroke::Line(line))]).draw(kept, buf, area);
    }

    /// Writes down `widget`, to be drawn in `area`.
    pub(super) fn render_widget(&mut self, widget: impl Into<Stroke>, area: Rect) {
        self.0.push((area, widget.into()));
    }

    /// Draws the sketch as the region at `area` (which holds all it draws), kept in `kept`.
    pub(super) fn draw(self, kept: &mut Kept, buf: &mut Buffer, area: Rect) {
        debug_assert!(
            self.0
                .iter()
                .all(|(inside, _)| inside.is_empty() || area.union(*inside) == area),
            "a sketch draws inside its region"
        );
        kept.draw(buf, area, self, |sketch, buf| {
            for (area, stroke) in &sketch.0 {
                match stroke {
                    Stroke::Panel(panel) => panel.render(*area, buf),
                    Stroke::Line(line) => line.render(*area, buf),
                    Stroke::Paragraph(paragraph) => paragraph.render(*area, buf),
                    Stroke::Gauge(gauge) => gauge.render(*area, buf),
                }
            }
        });
    }
}

impl From<Panel> for Stroke {
    fn from(panel: Panel) -> Stroke {
        Stroke::Panel(panel)
    }
}

impl From<Line<'static>> for Stroke {
    fn from(line: Line<'static>) -> Stroke {
        Stroke::Line(line)
    }
}

impl From<Paragraph<'static>> for Stroke {
    fn from(paragraph: Paragraph<'static>) -> Stroke {
        Stroke::Paragraph(paragraph)
    }
}

impl From<Gauge<'static>> for Stroke {
    fn from(gauge: Gauge<'static>) -> Stroke {
        Stroke::Gauge(gauge)
    }
}
