//! The terminal the console draws on: ratatui's, its viewport of a fixed size (resized when the
//! terminal says it was: only the frame after a resize asks it its size), each frame written as
//! what changed since the one before. A frame is drawn over the one before: the regions the
//! view keeps ([`Kept`]) stay in place, everything else is blanked and drawn anew. Only the
//! stretches of rows where something was blanked or drawn anew are compared with what the
//! terminal shows (a region kept is as the terminal shows it), and only the part of such a
//! stretch that changed is diffed cell by cell, by ratatui's own diff (a frame after a row lands
//! draws and compares a few rows of a table, not the panels beside them; ratatui diffs every
//! cell, working out the width of each symbol as it goes).

use std::io::{self, Write};
use std::ops::Range;

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::escapes;
use super::kept::{Drawn, Kept};

/// A terminal written through `W`, and what it shows.
pub struct Screen<W: Write> {
    /// Frames are rendered into its current buffer, which holds the last frame written until
    /// the next is drawn over it; its own diff is never used.
    terminal: Terminal<CrosstermBackend<W>>,
    /// What the terminal shows: the last frame written.
    shown: Buffer,
    /// The regions of the last frame written, for the next to keep.
    kept: Kept,
    /// What a frame's work reuses from the frames before.
    reused: Reused,
}

/// What a frame reuses from the frames before, rather than working it out or allocating it anew.
#[derive(Default)]
struct Reused {
    /// The spans the regions' areas leave uncovered, with the [`Kept::layout`] and the frame's
    /// area they were found at (at first none, as for a frame of no area).
    uncovered: ((u64, Rect), Vec<RowSpan>),
    /// A stretch of a row as shown and as drawn, copied out for ratatui's diff.
    parts: Parts,
    /// The sequences of the colours written.
    colours: escapes::Colours,
    /// The cells a frame writes, found by its diff.
    changed: Vec<(u16, u16)>,
}

impl<W: Write> Screen<W> {
    /// A screen of `area` writing to `out`.
    pub fn of(out: W, area: Rect) -> io::Result<Screen<W>> {
        let terminal = Terminal::with_options(
            CrosstermBackend::new(out),
            TerminalOptions {
                viewport: Viewport::Fixed(area),
            },
        )?;
        Ok(Screen {
            terminal,
            shown: Buffer::empty(area),
            kept: Kept::default(),
            reused: Reused::default(),
        })
    }

    /// The terminal's size, asked of it.
    pub fn size(&self) -> io::Result<Size> {
        self.terminal.size()
    }

    /// Clears the terminal: the next frame is written whole.
    pub fn clear(&mut self) -> io::Result<()> {
        self.terminal.clear()?;
        self.shown.reset();
        self.kept.forget();
        Ok(())
    }

    /// Forgets what the terminal shows: the next frame clears it and is written whole.
    pub fn invalidate(&mut self) {
        self.shown = Buffer::empty(Rect::ZERO);
        self.kept.forget();
    }

    /// What the terminal shows: the last frame written.
    pub fn shown(&self) -> &Buffer {
        &self.shown
    }

    /// Where anything besides frames is written (escape sequences of the terminal's own).
    pub fn out(&mut self) -> &mut CrosstermBackend<W> {
        self.terminal.backend_mut()
    }

    /// Draws a frame of `area` (the terminal cleared first when its size changed): `render`
    /// fills it, drawing regions through the [`Kept`] it is given, and says where the cursor goes,
    /// if anywhere; what changed is written. `render` is called again, on a blank frame, when
    /// it leaves behind a region of the frame before.
    pub fn draw(
        &mut self,
        area: Rect,
        mut render: impl FnMut(&mut Frame, &mut Kept) -> Option<Position>,
    ) -> io::Result<()> {
        if self.shown.area != area {
            self.terminal.resize(area)?;
            self.shown = Buffer::empty(area);
            self.kept.forget();
        }
        let (cursor, open) = loop {
            let mut open = self.blank_but_kept();
            let cursor = render(&mut self.terminal.get_frame(), &mut self.kept);
            match self.kept.finish() {
                Drawn::Again => continue,
                Drawn::Anywhere => break (cursor, spans_of(area, [area]).collect()),
                Drawn::Within(drawn) => {
                    open.extend(spans_of(area, drawn));
                    break (cursor, open);
                }
            }
        };
        let frame = self.terminal.current_buffer_mut();
        let Reused { parts, changed, .. } = &mut self.reused;
        let stretches = changes(&self.shown, frame, open, parts, changed);
        // The frame stays for the next to be drawn over; what is shown takes the stretches that
        // changed.
        for (y, stretch) in stretches {
            let start = self.shown.index_of(area.x, y);
            let cells = start + stretch.start..start + stretch.end;
            self.shown.content[cells.clone()].clone_from_slice(&frame.content[cells]);
        }
        let shown = &self.shown;
        let out = self.terminal.backend_mut();
        escapes::write_cells(
            out.writer_mut(),
            self.reused
                .changed
                .iter()
                .map(|&(x, y)| (x, y, &shown[(x, y)])),
            &mut self.reused.colours,
        )?;
        match cursor {
            Some(position) => {
                out.show_cursor()?;
                out.set_cursor_position(position)?;
            }
            None => out.hide_cursor()?,
        }
        Backend::flush(out)?;
        Ok(())
    }

    /// Blanks the frame being drawn but for the regions of the frame before; returns the spans
    /// blanked. While the regions stand where they stood, so do those spans: they are not
    /// worked out again.
    fn blank_but_kept(&mut self) -> Vec<RowSpan> {
        let at = (self.kept.layout(), self.terminal.current_buffer_mut().area);
        let (found_at, spans) = &mut self.reused.uncovered;
        if *found_at != at {
            *spans = uncovered(at.1, self.kept.areas());
            *found_at = at;
        }
        blank(self.terminal.current_buffer_mut(), spans);
        spans.clone()
    }
}

/// A stretch of a row where a frame may differ from what the terminal shows: the row and the
/// columns from its first to the one past its last, counted from the area's top left.
type RowSpan = (usize, usize, usize);

/// The spans `rects` (within `area`) cover.
fn spans_of(area: Rect, rects: impl IntoIterator<Item = Rect>) -> impl Iterator<Item = RowSpan> {
    rects.into_iter().flat_map(move |rect| {
        let rect = rect.intersection(area);
        let (start, end) = (
            usize::from(rect.left() - area.left()),
            usize::from(rect.right() - area.left()),
        );
        (rect.top()..rect.bottom()).map(move |y| (usize::from(y - area.top()), start, end))
    })
}

/// The spans of `area` the `kept` areas leave uncovered.
fn uncovered(area: Rect, kept: impl Iterator<Item = Rect>) -> Vec<RowSpan> {
    let width = usize::from(area.width);
    let mut covered: Vec<RowSpan> = spans_of(area, kept).collect();
    covered.sort_unstable();
    let mut uncovered = Vec::new();
    if width == 0 {
        return uncovered;
    }
    let mut covered = covered.into_iter().peekable();
    for y in 0..usize::from(area.height) {
        let mut from = 0;
        let on_this_row = std::iter::from_fn(|| covered.next_if(|&(row, ..)| row == y));
        for (start, end) in on_this_row
            .map(|(_, start, end)| (start, end))
            .chain([(width, width)])
        {
            if start > from {
                uncovered.push((y, from, start));
            }
            from = from.max(end);
        }
    }
    uncovered
}

/// Blanks the `spans` of `buf`.
fn blank(buf: &mut Buffer, spans: &[RowSpan]) {
    let width = usize::from(buf.area.width);
    for &(y, start, end) in spans {
        let row = y * width;
        buf.content[row + start..row + end]
            .iter_mut()
            .for_each(Cell::reset);
    }
}

/// Puts in `changed` the cells to write to turn a terminal showing `before` into one showing
/// `after` (buffers of one area), as ratatui's diff finds them; returns the stretches of rows
/// that differ, where only the `open` spans may (everywhere else the two are alike: regions
/// kept from the frame before). In each span that differs, the cells its diff finds in the
/// stretch from a little before its first differing cell to a little after its last (see
/// [`AROUND`]: a row landing changes a few cells of a few rows, and only they are copied out and
/// compared); where those stretches make up more than a quarter of the screen (a view drawn
/// anew), its diff of the whole, which then costs less than copying them out.
fn changes(
    before: &Buffer,
    after: &Buffer,
    mut open: Vec<RowSpan>,
    parts: &mut Parts,
    changed: &mut Vec<(u16, u16)>,
) -> Vec<(u16, Range<usize>)> {
    changed.clear();
    let area = after.area;
    let width = usize::from(area.width);
    if width == 0 || before.area != area {
        return Vec::new();
    }
    // Each row's spans in order, those that overlap or touch made one (compared once).
    open.sort_unstable();
    open.dedup_by(|next, kept| {
        let joined = next.0 == kept.0 && next.1 <= kept.2;
        if joined {
            kept.2 = kept.2.max(next.2);
        }
        joined
    });
    let mut differing: Vec<Differing<'_>> = Vec::new();
    for spans in open.chunk_by(|a, b| a.0 == b.0) {
        let row = spans[0].0;
        if row >= usize::from(area.height) {
            continue;
        }
        let cells = row * width..(row + 1) * width;
        let (was, is) = (&before.content[cells.clone()], &after.content[cells]);
        let y = area.y + row as u16;
        for stretch in stretches(was, is, spans) {
            match differing.last_mut() {
                Some((at, last, ..)) if *at == y && stretch.start <= last.end => {
                    last.end = last.end.max(stretch.end);
                }
                _ => differing.push((y, stretch, was, is)),
            }
        }
    }
    let stretches: Vec<(u16, Range<usize>)> = differing
        .iter()
        .map(|(y, stretch, ..)| (*y, stretch.clone()))
        .collect();
    let cells: usize = stretches.iter().map(|(_, stretch)| stretch.len()).sum();
    if cells > usize::from(area.height) * width / 4 {
        changed.extend(positions(before.diff_iter(after)));
        return stretches;
    }
    // Each stretch copied out into the same two buffers, one after the other.
    let (was_part, is_part) = parts;
    for (y, stretch, was, is) in differing {
        let part = Rect {
            x: area.x + stretch.start as u16,
            y,
            width: stretch.len() as u16,
            height: 1,
        };
        for (buffer, cells) in [
            (&mut *was_part, &was[stretch.clone()]),
            (&mut *is_part, &is[stretch]),
        ] {
            buffer.area = part;
            buffer.content.clear();
            buffer.content.extend_from_slice(cells);
        }
        changed.extend(positions(was_part.diff_iter(is_part)));
    }
    stretches
}

/// Two buffers a stretch of a row is copied into, as shown and as drawn, to be diffed.
type Parts = (Buffer, Buffer);

/// A stretch of a row that differs: its place, its columns, and the row's cells before and
/// after.
type Differing<'b> = (u16, Range<usize>, &'b [Cell], &'b [Cell]);

/// Cells either side of a row's differing cells that its diff may write or pass over: a wide
/// symbol before the first covers the cells after it, and one drawn or removed at the last has
/// its trailing cells written (ratatui's symbols are at most two cells wide; this is twice that).
const AROUND: usize = 4;

/// The stretches of a row (its cells `was` and `is`) to compare, in order: of each of its
/// `spans` (apart, in order) that differs, from [`AROUND`] cells before the first cell the two
/// differ in to `AROUND` after the last, within the row.
fn stretches<'s>(
    was: &'s [Cell],
    is: &'s [Cell],
    spans: &'s [RowSpan],
) -> impl Iterator<Item = Range<usize>> + 's {
    let width = is.len().min(was.len());
    spans.iter().filter_map(move |&(_, start, end)| {
        let span = start.min(width)..end.min(width);
        let pairs = || was[span.clone()].iter().zip(&is[span.clone()]);
        let first = span.start + pairs().position(|(a, b)| a != b)?;
        let last = span.start + pairs().rposition(|(a, b)| a != b)?;
        Some(first.saturating_sub(AROUND)..(last + 1 + AROUND).min(width))
    })
}

/// Where a diff's cells are.
fn positions<'c>(
    diff: impl IntoIterator<Item = (u16, u16, &'c Cell)>,
) -> impl Iterator<Item = (u16, u16)> {
    diff.into_iter().map(|(x, y, _)| (x, y))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ratatui::style::{Color, Style};

    use super::*;

    /// A buffer of `width` x `height` with `texts` written at their places (wide and
    /// combining characters, emoji with a variation selector among them).
    fn written(width: u16, height: u16, texts: &[(u16, u16, String, bool)]) -> Buffer {
        let mut buffer = Buffer::empty(Rect::new(0, 0, width, height));
        for (x, y, text, coloured) in texts {
            let style = if *coloured {
                Style::new().bg(Color::Blue)
            } else {
                Style::new()
            };
            buffer.set_stringn(*x % width, *y % height, text, usize::from(width), style);
        }
        buffer
    }

    fn texts() -> impl Strategy<Value = Vec<(u16, u16, String, bool)>> {
        texts_across(12, 6)
    }

    /// Up to `most` texts, each starting in one of the first `columns` columns.
    fn texts_across(
        columns: u16,
        most: usize,
    ) -> impl Strategy<Value = Vec<(u16, u16, String, bool)>> {
        prop::collection::vec(
            (
                0u16..columns,
                0u16..4,
                "[ab日本\u{301}❤\u{fe0f} ]{0,6}",
                any::<bool>(),
            ),
            0..most,
        )
    }

    /// Every row of a buffer of `width` x `height` open, whole.
    fn every_row(width: u16, height: u16) -> Vec<RowSpan> {
        spans_of(
            Rect::new(0, 0, width, height),
            [Rect::new(0, 0, width, height)],
        )
        .collect()
    }

    /// Where a frame differs from what the terminal shows: the cells to write, and the
    /// stretches of rows (a row and its columns) they lie in.
    type Changes = (Vec<(u16, u16)>, Vec<(u16, Range<usize>)>);

    /// Where `after` differs from `before` (see [`changes`]).
    fn found(before: &Buffer, after: &Buffer, open: Vec<RowSpan>) -> Changes {
        let mut changed = Vec::new();
        let stretches = changes(before, after, open, &mut Parts::default(), &mut changed);
        (changed, stretches)
    }

    proptest! {
        /// Row by row or whole, the changes are the ones ratatui's diff of the whole buffers
        /// finds.
        #[test]
        fn the_changes_are_ratatuis_found_row_by_row(before in texts(), after in texts()) {
            let (before, after) = (written(12, 12, &before), written(12, 12, &after));
            prop_assert_eq!(found(&before, &after, every_row(12, 12)).0, positions(before.diff(&after)).collect::<Vec<_>>());
        }

        /// A few texts changed on a wide screen (what a row landing changes): the stretches
        /// around them, not the whole, are compared, and find what the whole's diff finds.
        #[test]
        fn a_few_changes_are_found_in_their_stretches(
            common in texts_across(60, 6),
            before in texts_across(60, 3),
            after in texts_across(60, 3),
        ) {
            let screen = |changed: &[(u16, u16, String, bool)]| {
                written(60, 12, &[common.clone(), changed.to_vec()].concat())
            };
            let (before, after) = (screen(&before), screen(&after));
            prop_assert_eq!(found(&before, &after, every_row(60, 12)).0, positions(before.diff(&after)).collect::<Vec<_>>());
        }

        /// Passing over the cells where the frame holds what the terminal shows (outside the
        /// open spans, which may overlap) finds the same changes.
        #[test]
        fn cells_known_alike_change_nothing_found(
            before in texts_across(60, 8),
            after in texts_across(60, 8),
            open in prop::collection::vec((0usize..4, 0usize..60, 0usize..61), 0..10),
        ) {
            let before = written(60, 4, &before);
            let mut after = written(60, 4, &after);
            let open: Vec<RowSpan> = open
                .into_iter()
                .map(|(y, a, b)| (y, a.min(b), a.max(b)))
                .collect();
            for y in 0..4u16 {
                for x in 0..60u16 {
                    let inside = |&(row, start, end): &RowSpan| {
                        row == usize::from(y) && (start..end).contains(&usize::from(x))
                    };
                    if !open.iter().any(inside) {
                        after[(x, y)] = before[(x, y)].clone();
                    }
                }
            }
            let (changed, stretches) = found(&before, &after, open);
            prop_assert_eq!(changed, positions(before.diff(&after)).collect::<Vec<_>>());
            // What is shown takes the stretches: it is then what the frame holds.
            let mut shown = before.clone();
            for (y, stretch) in stretches {
                let start = shown.index_of(0, y);
                let cells = start + stretch.start..start + stretch.end;
                shown.content[cells.clone()].clone_from_slice(&after.content[cells]);
            }
            prop_assert_eq!(shown, after);
        }
    }

    /// A frame: a text straight on the screen's last row, maybe a panel above it drawn as a
    /// kept region keyed by its mark, then rows inside the panel's area drawn as kept regions,
    /// each keyed by its text, one a row at most.
    type Drawing = (String, Option<char>, Vec<(u16, u16, String)>);

    fn drawings() -> impl Strategy<Value = Vec<Drawing>> {
        // Few places and texts, so that a region often comes back as it was.
        let regions = prop::collection::btree_map(0u16..6, (0u16..2, "[a日\u{301} ]{0,2}"), 0..6)
            .prop_map(|rows| {
                rows.into_iter()
                    .map(|(y, (x, text))| (x, y, text))
                    .collect()
            });
        let panel = prop::option::of(prop::sample::select(vec!['+', '-']));
        prop::collection::vec(("[xy ]{0,8}", panel, regions), 1..8)
    }

    fn draw_on(frame: &mut Frame, kept: Option<&mut Kept>, (text, panel, regions): &Drawing) {
        let buf = frame.buffer_mut();
        buf.set_string(0, 6, text, Style::new().bg(Color::Blue));
        let mut kept = kept;
        if let Some(mark) = panel {
            let area = Rect::new(0, 0, 12, 6);
            let draw = |mark: &char, buf: &mut Buffer| {
                buf[(11, 0)].set_char(*mark);
                buf[(10, 5)].set_char(*mark);
            };
            match kept.as_deref_mut() {
                Some(kept) => kept.draw(buf, area, *mark, draw),
                None => draw(mark, buf),
            }
        }
        for (x, y, key) in regions {
            let area = Rect::new(*x, *y, 8, 1);
            let draw = |key: &String, buf: &mut Buffer| {
                buf.set_string(area.x, area.y, key, Style::new().fg(Color::Red));
            };
            match kept.as_deref_mut() {
                Some(kept) => kept.draw(buf, area, key.clone(), draw),
                None => draw(key, buf),
            }
        }
    }

    proptest! {
        /// Frames drawn over the ones before, their regions kept, leave the terminal as the
        /// same frames drawn whole, whichever regions come and go.
        #[test]
        fn kept_regions_leave_the_terminal_as_frames_drawn_whole(drawings in drawings()) {
            let area = Rect::new(0, 0, 12, 8);
            let mut kept = Screen::of(io::sink(), area).unwrap();
            for drawing in &drawings {
                kept.draw(area, |frame, regions| {
                    draw_on(frame, Some(regions), drawing);
                    None
                }).unwrap();
                let mut whole = Screen::of(io::sink(), area).unwrap();
                whole.draw(area, |frame, _| {
                    draw_on(frame, None, drawing);
                    None
                }).unwrap();
                prop_assert_eq!(kept.shown(), whole.shown());
                // The next frame is drawn over this one where it keeps regions.
                if kept.kept.areas().count() > 0 {
                    prop_assert_eq!(kept.terminal.current_buffer_mut().clone(), whole.shown().clone());
                }
            }
        }
    }

    /// A terminal's input, kept for the test to read.
    #[derive(Clone, Default)]
    struct Sent(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for Sent {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sent {
        /// What was sent since the last call.
        fn take(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.0.borrow_mut())).unwrap()
        }
    }

    #[test]
    fn a_frame_writes_what_changed_and_places_or_hides_the_cursor() {
        let area = Rect::new(0, 0, 20, 3);
        let sent = Sent::default();
        let mut screen = Screen::of(sent.clone(), area).unwrap();
        let draw = |screen: &mut Screen<Sent>, text: &str, cursor: Option<Position>| {
            let text = text.to_owned();
            screen
                .draw(area, |frame, _| {
                    frame.buffer_mut().set_string(2, 1, &text, Style::new());
                    cursor
                })
                .unwrap();
        };
        draw(&mut screen, "hello", Some(Position::new(7, 1)));
        let first = sent.take();
        assert!(first.contains("hello"), "{first:?}");
        // Shown, then moved to column 8, row 2 (1-based).
        assert!(
            first.contains("\x1b[?25h") && first.ends_with("\x1b[2;8H"),
            "{first:?}"
        );

        draw(&mut screen, "hello", None);
        let same = sent.take();
        assert!(
            !same.contains("hello"),
            "an unchanged frame rewrites nothing: {same:?}"
        );
        assert!(same.contains("\x1b[?25l"), "the cursor hidden: {same:?}");

        draw(&mut screen, "help!", None);
        let changed = sent.take();
        assert!(
            changed.contains("p!") && !changed.contains("hel"),
            "{changed:?}"
        );

        screen.invalidate();
        draw(&mut screen, "help!", None);
        let whole = sent.take();
        assert!(
            whole.contains("help!"),
            "after a resize the frame is written whole: {whole:?}"
        );
    }

    #[test]
    fn nothing_changed_writes_nothing_and_a_changed_cell_is_written() {
        let before = written(12, 4, &[(1, 2, "same".into(), false)]);
        assert_eq!(
            found(&before, &before.clone(), every_row(12, 4)),
            (vec![], vec![])
        );
        let after = written(12, 4, &[(1, 2, "some".into(), false)]);
        assert_eq!(
            found(&before, &after, every_row(12, 4)),
            (vec![(2, 2)], vec![(2, 0..7)])
        );
    }
}
