//! A table of one-line rows drawn cell by cell straight into the frame's buffer: what ratatui's
//! `Table` draws (the block, a header row in its style, cells in their columns with one column
//! between them, the selected row's highlight over it), without building a `Text`, a `Line` and
//! their vectors for every cell of every frame. The lists drawn each frame (the debates list,
//! the rounds table) use it, with text borrowed from the model where it can be.

use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::common::Panel;

/// A table being drawn: its columns, and the rows drawn so far.
pub(super) struct Grid {
    rows: Rect,
    columns: Rc<[Rect]>,
    drawn: u16,
}

impl Grid {
    /// Draws `panel` in `area` and, inside it, the `header` row in `header_style`; the columns
    /// are laid out as a table lays out `widths`.
    pub(super) fn new(
        buf: &mut Buffer,
        area: Rect,
        panel: Panel,
        widths: &[Constraint],
        header: &[&str],
        header_style: Style,
    ) -> Grid {
        let inner = Panel::inner(area);
        panel.render(area, buf);
        let [_, columns_area] = Layout::horizontal([Constraint::Length(0), Constraint::Fill(0)])
            .areas(Rect::new(0, 0, inner.width, 1));
        let columns = Layout::horizontal(widths.iter().copied())
            .flex(Flex::Start)
            .spacing(1)
            .split(columns_area);
        let mut grid = Grid {
            rows: Rect {
                y: inner.y.saturating_add(1),
                height: inner.height.saturating_sub(1),
                ..inner
            },
            columns,
            drawn: 0,
        };
        if inner.is_empty() {
            grid.rows.height = 0;
            return grid;
        }
        let header_row = Rect { height: 1, ..inner };
        buf.set_style(header_row, header_style);
        for (column, text) in header.iter().enumerate() {
            if let Some(area) = grid.cell(header_row.y, column) {
                Span::raw(*text).render(area, buf);
            }
        }
        grid
    }

    /// The next row, or `None` once the table is full.
    pub(super) fn row<'b>(&mut self, buf: &'b mut Buffer) -> Option<Pen<'b, '_>> {
        if self.drawn >= self.rows.height {
            return None;
        }
        let y = self.rows.y + self.drawn;
        self.drawn += 1;
        Some(Pen { buf, grid: self, y })
    }

    /// Ends the table: the row at `selected` (the last drawn when past it) in `highlight`.
    pub(super) fn finish(self, buf: &mut Buffer, selected: Option<usize>, highlight: Style) {
        if self.drawn == 0 {
            return;
        }
        if let Some(selected) = selected {
            let row = selected.min(usize::from(self.drawn) - 1) as u16;
            let area = Rect {
                y: self.rows.y + row,
                height: 1,
                ..self.rows
            };
            buf.set_style(area, highlight);
        }
    }

    /// Where `column` lies on the row at `y`.
    fn cell(&self, y: u16, column: usize) -> Option<Rect> {
        let c = self.columns.get(column)?;
        let area = Rect::new(self.rows.x + c.x, y, c.width, 1);
        (!area.is_empty()).then_some(area)
    }
}

/// Draws the cells of one row.
pub(super) struct Pen<'b, 'g> {
    buf: &'b mut Buffer,
    grid: &'g Grid,
    y: u16,
}

impl Pen<'_, '_> {
    /// `spans` one after the other in `column`, from its left, cut at its right edge.
    pub(super) fn left<'s>(&mut self, column: usize, spans: impl IntoIterator<Item = Span<'s>>) {
        let Some(mut area) = self.grid.cell(self.y, column) else {
            return;
        };
        for span in spans {
            if area.is_empty() {
                break;
            }
            let width = put(&span, area, self.buf);
            area = indent(area, u16::try_from(width).unwrap_or(u16::MAX));
        }
    }

    /// `text` in `column` in `style`, the whole column in that style.
    pub(super) fn filled(&mut self, column: usize, text: &str, style: Style) {
        if let Some(area) = self.grid.cell(self.y, column) {
            self.buf.set_style(area, style);
        }
        self.left(column, [Span::raw(text)]);
    }

    /// `span` against the right edge of `column`.
    pub(super) fn right(&mut self, column: usize, span: Span<'_>) {
        let Some(area) = self.grid.cell(self.y, column) else {
            return;
        };
        let width = span.width();
        match u16::try_from(width) {
            Ok(width) if width <= area.width => {
                put(&span, indent(area, area.width - width), self.buf);
            }
            _ => Line::from(span).right_aligned().render(area, self.buf),
        }
    }
}

/// Draws `span` from the left of `area`, cut at its right edge, as the span draws itself;
/// returns its width. Printable ASCII (most of a table's text) goes a character a cell, without
/// the span's split into graphemes and their widths.
fn put(span: &Span<'_>, area: Rect, buf: &mut Buffer) -> usize {
    let text = span.content.as_ref();
    if !text.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
        span.render(area, buf);
        return span.width();
    }
    let area = area.intersection(buf.area);
    if !area.is_empty() {
        for (i, x) in (area.left()..area.right()).take(text.len()).enumerate() {
            buf[(x, area.y)]
                .set_symbol(&text[i..=i])
                .set_style(span.style);
        }
    }
    text.len()
}

/// `area` less its first `offset` columns (as ratatui indents a line's spans).
fn indent(area: Rect, offset: u16) -> Rect {
    Rect {
        x: area.x.saturating_add(offset),
        width: area.width.saturating_sub(offset),
        ..area
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ratatui::style::{Color, Modifier};

    use super::*;

    proptest! {
        /// Whatever the text (ASCII, wide, combining, control characters) and wherever it
        /// lands, `put` leaves the cells as the span's own drawing does, and says its width.
        #[test]
        fn put_draws_what_the_span_draws(
            text in "[ -~]{0,12}|\\PC{0,8}|[a\u{301}\u{7}\t日e\u{fe0f} ]{0,10}",
            x in 0u16..14,
            width in 0u16..16,
            bold in any::<bool>(),
        ) {
            let screen = Rect::new(0, 0, 12, 2);
            let mut before = Buffer::empty(screen);
            before.set_string(0, 1, "0123456789ab", Style::new().bg(Color::Blue));
            let style = if bold {
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            let span = Span::styled(text.as_str(), style);
            let area = Rect::new(x, 1, width, 1);
            let mut drawn = before.clone();
            let said = put(&span, area, &mut drawn);
            let mut expected = before;
            (&span).render(area, &mut expected);
            prop_assert_eq!(drawn, expected);
            prop_assert_eq!(said, span.width());
        }
    }
}
