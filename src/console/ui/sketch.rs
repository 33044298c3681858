//! What a panel draws, written down before it is drawn: the widgets, each with its area, in
//! the order they are drawn. Two sketches alike draw alike, so a panel drawn from a sketch is a
//! region [`Kept`] from the frame before while its sketch stays the same. A panel that says what
//! it is drawn from (its source, cheaper to compare than to write down) is not even written down
//! again while that stays the same.

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

    /// Draws what `write` writes down from `source` (all it reads) as the region at `area`,
    /// kept in `kept`; where the frame before drew it there from the same source, it is kept
    /// without being written down.
    pub(super) fn sourced<S: PartialEq + 'static>(
        source: S,
        kept: &mut Kept,
        buf: &mut Buffer,
        area: Rect,
        write: impl FnOnce(&S, &mut Sketch),
    ) {
        kept.draw_sourced(
            buf,
            area,
            source,
            |source| Sketch::of(|sketch| write(source, sketch)),
            |sketch, buf| sketch.render(area, buf),
        );
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
        kept.draw(buf, area, self, |sketch, buf| sketch.render(area, buf));
    }

    /// Draws its widgets, in order, in the region at `region`.
    fn render(&self, region: Rect, buf: &mut Buffer) {
        debug_assert!(
            self.0
                .iter()
                .all(|(inside, _)| inside.is_empty() || region.union(*inside) == region),
            "a sketch draws inside its region"
        );
        for (area, stroke) in &self.0 {
            match stroke {
                Stroke::Panel(panel) => panel.render(*area, buf),
                Stroke::Line(line) => line.render(*area, buf),
                Stroke::Paragraph(paragraph) => paragraph.render(*area, buf),
                Stroke::Gauge(gauge) => gauge.render(*area, buf),
            }
        }
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
