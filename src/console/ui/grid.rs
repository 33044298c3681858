//! A table of one-line rows drawn cell by cell straight into the frame's buffer: what ratatui's
//! `Table` draws (the block, a header row in its style, cells in their columns with one column
//! between them, the selected row's highlight over it), without building a `Text`, a `Line` and
//! their vectors for every cell of every frame. The lists drawn each frame (the debates list,
//! the rounds table) use it, with text borrowed from the model where it can be. The panel with
//! its header row, and each row (written down first), are regions [`Kept`] from the frame
//! before, keyed by what they show: a row that shows what it did is not drawn again. A panel
//! drawn from the same heading (what its title and columns are made from) the frame before is
//! not even written down again, nor its columns laid out. Where the table gives a row's source
//! (what it is drawn from, cheaper to compare than to describe: a debate's revision, the clock's
//! second), a row drawn from the same source in the same place the frame before is not even
//! written down again: it is kept, or, where only its highlight moved, the row written then is
//! drawn again highlighted anew.

use std::ops::Range;
use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::common::Panel;
use crate::console::kept::{Kept, Sourced};

/// A table being drawn: its columns, the row highlighted, and the rows written down so far,
/// each kept by its source `S` if it has one.
pub(super) struct Grid<S> {
    rows: Rect,
    /// The frame's area: what a row's region is cut to.
    bounds: Rect,
    columns: Rc<[Rect]>,
    /// The row highlighted, and how.
    selected: Option<(usize, Style)>,
    written: Vec<Written<S>>,
}

/// A row of a table, as written down.
enum Written<S> {
    /// Written down (from its source, if it has one): the region's key.
    Shown(Sourced<Option<S>, Row>),
    /// Drawn from the same source in the same place the frame before: kept as it is.
    Kept,
}

/// What [`Grid::row`] asks of its caller.
pub(super) enum Next<'g> {
    /// The table is full.
    Full,
    /// The row was written from the same source the frame before: nothing to write (it is
    /// kept, or drawn again as written then where its highlight moved).
    Kept,
    /// The row, to write.
    Write(Pen<'g>),
}

/// What one row shows: what is written in which column, the table's columns and the row's
/// highlight. Two rows alike are drawn alike.
#[derive(Clone, PartialEq)]
struct Row {
    columns: Rc<[Rect]>,
    writes: Vec<Write>,
    /// The text of every span written, one after the other.
    text: String,
    /// Each span written: where its text ends in `text`, and its style.
    spans: Vec<(usize, Style)>,
    highlight: Option<Style>,
}

/// One write into a column of a row: its spans, a range of the row's.
#[derive(Clone, PartialEq)]
struct Write {
    column: usize,
    how: How,
    spans: Range<usize>,
}

#[derive(Clone, PartialEq)]
enum How {
    /// One span after the other from the column's left, cut at its right edge.
    Left,
    /// The span against the column's right edge.
    Right,
    /// The whole column in a style, then the span from its left.
    Filled(Style),
}

/// A table's panel and its header row: what they show.
#[derive(PartialEq)]
struct Chrome {
    panel: Panel,
    header: Vec<&'static str>,
    columns: Rc<[Rect]>,
    header_style: Style,
}

impl Chrome {
    /// The panel and header row `look` says, in `area`: its columns laid out as a table lays
    /// out the widths.
    fn of(look: Look, area: Rect) -> Chrome {
        let Look {
            panel,
            widths,
            header,
            header_style,
        } = look;
        let columns = Layout::horizontal(widths)
            .flex(Flex::Start)
            .spacing(1)
            .split(Rect::new(0, 0, Panel::inner(area).width, 1));
        Chrome {
            panel,
            header,
            columns,
            header_style,
        }
    }

    /// Draws the panel in `area` and, inside it, the header row.
    fn draw(&self, area: Rect, buf: &mut Buffer) {
        let inner = Panel::inner(area);
        (&self.panel).render(area, buf);
        if inner.is_empty() {
            return;
        }
        let header_row = Rect { height: 1, ..inner };
        buf.set_style(header_row, self.header_style);
        for (column, text) in self.header.iter().enumerate() {
            if let Some(area) = cell(&self.columns, header_row, column) {
                Span::raw(*text).render(area, buf);
            }
        }
    }
}

/// How a table looks: its panel, its columns' widths, its header row and the header's style.
pub(super) struct Look {
    pub(super) panel: Panel,
    pub(super) widths: Vec<Constraint>,
    pub(super) header: Vec<&'static str>,
    pub(super) header_style: Style,
}

impl<S: PartialEq + 'static> Grid<S> {
    /// Draws the `look`'s panel in `area` and, inside it, the header row, as a region kept in
    /// `kept`; the row at `selected` (if any) is to be highlighted, in its style.
    pub(super) fn new(
        buf: &mut Buffer,
        kept: &mut Kept,
        area: Rect,
        look: Look,
        selected: Option<(usize, Style)>,
    ) -> Grid<S> {
        let chrome = Chrome::of(look, area);
        let columns = Rc::clone(&chrome.columns);
        kept.draw(buf, area, chrome, |chrome, buf| chrome.draw(area, buf));
        Grid::within(buf.area, area, columns, selected)
    }

    /// As [`Grid::new`], the look written down by `look` from `heading` (all it reads), and
    /// not even written down where the frame before drew the panel from the same heading.
    pub(super) fn headed<H: PartialEq + 'static>(
        buf: &mut Buffer,
        kept: &mut Kept,
        area: Rect,
        heading: H,
        look: impl FnOnce(&H) -> Look,
        selected: Option<(usize, Style)>,
    ) -> Grid<S> {
        let chrome = kept.draw_sourced(
            buf,
            area,
            heading,
            |heading| Chrome::of(look(heading), area),
            |chrome, buf| chrome.draw(area, buf),
        );
        // A panel outside the frame has no columns to draw rows in.
        let columns = chrome.map_or_else(|| Rc::from([]), |chrome| Rc::clone(&chrome.columns));
        Grid::within(buf.area, area, columns, selected)
    }

    /// A table in the panel at `area` (in a frame of `bounds`) with `columns`, no row written.
    fn within(
        bounds: Rect,
        area: Rect,
        columns: Rc<[Rect]>,
        selected: Option<(usize, Style)>,
    ) -> Grid<S> {
        let inner = Panel::inner(area);
        let rows = if inner.is_empty() {
            Rect { height: 0, ..inner }
        } else {
            Rect {
                y: inner.y.saturating_add(1),
                height: inner.height.saturating_sub(1),
                ..inner
            }
        };
        Grid {
            rows,
            bounds,
            columns,
            selected,
            // A row for each line, without growing: every line is written down each frame.
            written: Vec::with_capacity(usize::from(rows.height)),
        }
    }

    /// The width of each column.
    pub(super) fn widths(&self) -> Vec<usize> {
        self.columns
            .iter()
            .map(|column| usize::from(column.width))
            .collect()
    }

    /// The next row, drawn from `source` (everything the row shows but its highlight; `None`:
    /// the row has none, and is written down every frame): to write; kept as the frame before
    /// drew it from the same source in the same place, or drawn again as written then where
    /// only its highlight changed (the selection moved, a round landed below it); or none once
    /// the table is full.
    pub(super) fn row(&mut self, kept: &Kept, source: Option<S>) -> Next<'_> {
        let at = self.written.len();
        if at >= usize::from(self.rows.height) {
            return Next::Full;
        }
        let highlight = self
            .selected
            .and_then(|(selected, style)| (selected == at).then_some(style));
        // A row without a source is written down every frame.
        let was = source
            .as_ref()
            .and_then(|_| kept.drawn_from::<_, Row>(self.bounds, line(self.rows, at), &source));
        if let Some(was) = was {
            let written = match was.highlight == highlight {
                true => Written::Kept,
                false => Written::Shown(Sourced {
                    source,
                    shown: Row {
                        highlight,
                        ..was.clone()
                    },
                }),
            };
            self.written.push(written);
            return Next::Kept;
        }
        let row = self.blank_row(highlight);
        self.written
            .push(Written::Shown(Sourced { source, shown: row }));
        match self.written.last_mut() {
            Some(Written::Shown(written)) => Next::Write(Pen {
                row: &mut written.shown,
            }),
            _ => Next::Full,
        }
    }

    /// A row with nothing written yet, its buffers sized for a row's usual writes at once
    /// (growing them write by write cost more than writing them).
    fn blank_row(&self, highlight: Option<Style>) -> Row {
        Row {
            columns: Rc::clone(&self.columns),
            writes: Vec::with_capacity(self.columns.len()),
            text: String::with_capacity(usize::from(self.rows.width)),
            spans: Vec::with_capacity(2 * self.columns.len()),
            highlight,
        }
    }

    /// Draws the rows written, each a region kept in `kept`.
    pub(super) fn finish(self, buf: &mut Buffer, kept: &mut Kept) {
        let mut written = self.written.into_iter();
        for area in (0..usize::from(self.rows.height)).map(|at| line(self.rows, at)) {
            match written.next() {
                Some(Written::Shown(written)) => {
                    kept.draw(buf, area, written, |written, buf| {
                        written.shown.draw(buf, area);
                    });
                }
                Some(Written::Kept) => kept.keep(buf, area),
                // A row left blank is a region too: a row gone from the table (a page turned)
                // goes with it.
                None => kept.draw(buf, area, (), |(), _| {}),
            }
        }
    }
}

/// The line of row `at` of a table's `rows`.
fn line(rows: Rect, at: usize) -> Rect {
    Rect {
        y: rows.y.saturating_add(u16::try_from(at).unwrap_or(u16::MAX)),
        height: 1,
        ..rows
    }
}

/// Where `column` lies on the row `row` of a table with `columns`.
fn cell(columns: &[Rect], row: Rect, column: usize) -> Option<Rect> {
    let c = columns.get(column)?;
    let area = Rect::new(row.x + c.x, row.y, c.width, 1);
    (!area.is_empty()).then_some(area)
}

/// Writes down the cells of one row.
pub(super) struct Pen<'g> {
    row: &'g mut Row,
}

impl Pen<'_> {
    /// `spans` one after the other in `column`, from its left, cut at its right edge.
    pub(super) fn left<'s>(&mut self, column: usize, spans: impl IntoIterator<Item = Span<'s>>) {
        self.write(column, How::Left, spans);
    }

    /// `text` in `column` in `style`, the whole column in that style.
    pub(super) fn filled(&mut self, column: usize, text: &str, style: Style) {
        self.write(column, How::Filled(style), [Span::raw(text)]);
    }

    /// `span` against the right edge of `column`.
    pub(super) fn right(&mut self, column: usize, span: Span<'_>) {
        self.write(column, How::Right, [span]);
    }

    fn write<'s>(&mut self, column: usize, how: How, spans: impl IntoIterator<Item = Span<'s>>) {
        let row = &mut *self.row;
        let start = row.spans.len();
        for span in spans {
            row.text.push_str(&span.content);
            row.spans.push((row.text.len(), span.style));
        }
        let spans = start..row.spans.len();
        row.writes.push(Write { column, how, spans });
    }
}

impl Row {
    /// The row's span `i`.
    fn span(&self, i: usize) -> Span<'_> {
        let start = i.checked_sub(1).map_or(0, |before| self.spans[before].0);
        let (end, style) = self.spans[i];
        Span::styled(&self.text[start..end], style)
    }

    /// Draws the row on `area`, a line of the table.
    fn draw(&self, buf: &mut Buffer, area: Rect) {
        for write in &self.writes {
            let Some(mut cell) = cell(&self.columns, area, write.column) else {
                continue;
            };
            let spans = write.spans.clone().map(|i| self.span(i));
            match write.how {
                How::Left => {}
                How::Filled(style) => buf.set_style(cell, style),
                How::Right => {
                    for span in spans {
                        right(&span, cell, buf);
                    }
                    continue;
                }
            }
            for span in spans {
                if cell.is_empty() {
                    break;
                }
                let width = put(&span, cell, buf);
                cell = indent(cell, u16::try_from(width).unwrap_or(u16::MAX));
            }
        }
        if let Some(highlight) = self.highlight {
            buf.set_style(area, highlight);
        }
    }
}

/// Draws `span` against the right edge of `area`.
fn right(span: &Span<'_>, area: Rect, buf: &mut Buffer) {
    let width = span.width();
    match u16::try_from(width) {
        Ok(width) if width <= area.width => {
            put(span, indent(area, area.width - width), buf);
        }
        _ => Line::from(span.clone()).right_aligned().render(area, buf),
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
