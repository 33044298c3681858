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
use ratatui::widgets::{Block, Widget};

/// A table being drawn: its columns, and the rows drawn so far.
pub(super) struct Grid {
    rows: Rect,
    columns: Rc<[Rect]>,
    drawn: u16,
}

impl Grid {
    /// Draws `block` in `area` and, inside it, the `header` row in `header_style`; the columns
    /// are laid out as a table lays out `widths`.
    pub(super) fn new(
        buf: &mut Buffer,
        area: Rect,
        block: Block,
        widths: &[Constraint],
        header: &[&str],
        header_style: Style,
    ) -> Grid {
        let inner = block.inner(area);
        block.render(area, buf);
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
            let width = u16::try_from(span.width()).unwrap_or(u16::MAX);
            span.render(area, self.buf);
            area = indent(area, width);
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
                span.render(indent(area, area.width - width), self.buf);
            }
            _ => Line::from(span).right_aligned().render(area, self.buf),
        }
    }
}

/// `area` less its first `offset` columns (as ratatui indents a line's spans).
fn indent(area: Rect, offset: u16) -> Rect {
    Rect {
        x: area.x.saturating_add(offset),
        width: area.width.saturating_sub(offset),
        ..area
    }
}
