//! The terminal the console draws on: ratatui's, its viewport of a fixed size (resized when the
//! terminal says it was: only the frame after a resize asks it its size), each frame written as
//! what changed since the one before. A frame is drawn over the one before: the regions the
//! view keeps ([`Kept`]) stay in place, everything else is blanked and drawn anew. Only the rows
//! where something was drawn anew are compared with what the terminal shows, and only a row
//! that changed is diffed cell by cell, by ratatui's own diff (a frame after a row lands draws
//! and compares a few rows of the 48; ratatui diffs every cell, working out the width of each
//! symbol as it goes).

use std::io::{self, Write};
use std::ops::Range;

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

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
        let (cursor, compared) = loop {
            let mut open = blank_but(self.terminal.current_buffer_mut(), self.kept.areas());
            let cursor = render(&mut self.terminal.get_frame(), &mut self.kept);
            match self.kept.finish() {
                Drawn::Again => continue,
                Drawn::Anywhere => break (cursor, vec![true; open.len()]),
                Drawn::Within(drawn) => {
                    for rect in drawn {
                        for y in rect.top()..rect.bottom() {
                            open[usize::from(y - area.y)] = true;
                        }
                    }
                    break (cursor, open);
                }
            }
        };
        let frame = self.terminal.current_buffer_mut();
        let (changed, rows) = changes(&self.shown, frame, &compared);
        // The frame stays for the next to be drawn over; what is shown takes the rows that
        // changed.
        let width = usize::from(area.width);
        for y in rows {
            let start = self.shown.index_of(area.x, y);
            self.shown.content[start..start + width]
                .clone_from_slice(&frame.content[start..start + width]);
        }
        let shown = &self.shown;
        let out = self.terminal.backend_mut();
        out.draw(changed.iter().map(|&(x, y)| (x, y, &shown[(x, y)])))?;
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
}

/// Blanks `buf` but for the `kept` areas; says of each row whether any of it was blanked.
fn blank_but(buf: &mut Buffer, kept: impl Iterator<Item = Rect>) -> Vec<bool> {
    let area = buf.area;
    let (width, height) = (usize::from(area.width), usize::from(area.height));
    // Each kept area's columns on each of its rows, in row order then column order.
    let mut covered: Vec<(usize, usize, usize)> = Vec::new();
    for rect in kept.map(|rect| rect.intersection(area)) {
        let (start, end) = (
            usize::from(rect.left() - area.left()),
            usize::from(rect.right() - area.left()),
        );
        covered
            .extend((rect.top()..rect.bottom()).map(|y| (usize::from(y - area.top()), start, end)));
    }
    covered.sort_unstable();
    let mut open = vec![false; height];
    if width == 0 {
        return open;
    }
    let mut covered = covered.into_iter().peekable();
    for ((y, row), open) in buf.content.chunks_mut(width).enumerate().zip(&mut open) {
        let mut from = 0;
        let on_this_row = std::iter::from_fn(|| covered.next_if(|&(row, ..)| row == y));
        for (start, end) in on_this_row
            .map(|(_, start, end)| (start, end))
            .chain([(width, width)])
        {
            if start > from {
                row[from..start].iter_mut().for_each(Cell::reset);
                *open = true;
            }
            from = from.max(end);
        }
    }
    open
}

/// The cells to write to turn a terminal showing `before` into one showing `after` (buffers of
/// one area), as ratatui's diff finds them, and the rows that differ, among the rows
/// `compared` says may (one flag a row): in each row that differs, the cells its diff finds in
/// the stretch of the row from a little before its first differing cell to a little after its
/// last (see [`AROUND`]: a row landing changes a few cells of a few rows, and only they are
/// copied out and compared); where those stretches make up more than a quarter of the screen
/// (a view drawn anew), its diff of the whole, which then costs less than copying them out.
fn changes(before: &Buffer, after: &Buffer, compared: &[bool]) -> (Vec<(u16, u16)>, Vec<u16>) {
    let area = after.area;
    let width = usize::from(area.width);
    if width == 0 || before.area != area {
        return (Vec::new(), Vec::new());
    }
    let rows = before
        .content
        .chunks(width)
        .zip(after.content.chunks(width));
    let differing: Vec<Differing<'_>> = (area.y..)
        .zip(rows)
        .zip(compared)
        .filter(|&(_, &compared)| compared)
        .filter_map(|((y, (was, is)), _)| Some((y, stretch(was, is)?, was, is)))
        .collect();
    let rows = differing.iter().map(|&(y, ..)| y).collect();
    let cells: usize = differing.iter().map(|(_, stretch, ..)| stretch.len()).sum();
    if cells > usize::from(area.height) * width / 4 {
        return (positions(before.diff(after)), rows);
    }
    let mut changed = Vec::new();
    for (y, stretch, was, is) in differing {
        let part = Rect {
            x: area.x + stretch.start as u16,
            y,
            width: stretch.len() as u16,
            height: 1,
        };
        let was = Buffer {
            area: part,
            content: was[stretch.clone()].to_vec(),
        };
        let is = Buffer {
            area: part,
            content: is[stretch].to_vec(),
        };
        changed.extend(positions(was.diff(&is)));
    }
    (changed, rows)
}

/// A row that differs: its place, the stretch of it to compare, and its cells before and after.
type Differing<'b> = (u16, Range<usize>, &'b [Cell], &'b [Cell]);

/// Cells either side of a row's differing cells that its diff may write or pass over: a wide
/// symbol before the first covers the cells after it, and one drawn or removed at the last has
/// its trailing cells written (ratatui's symbols are at most two cells wide; this is twice that).
const AROUND: usize = 4;

/// The stretch of a row from [`AROUND`] cells before the first cell `was` and `is` differ in to
/// `AROUND` after the last; `None` when they are alike.
fn stretch(was: &[Cell], is: &[Cell]) -> Option<Range<usize>> {
    let first = was.iter().zip(is).position(|(a, b)| a != b)?;
    let last = was.iter().zip(is).rposition(|(a, b)| a != b)?;
    Some(first.saturating_sub(AROUND)..(last + 1 + AROUND).min(is.len()))
}

/// Where a diff's cells are.
fn positions(diff: Vec<(u16, u16, &Cell)>) -> Vec<(u16, u16)> {
    diff.into_iter().map(|(x, y, _)| (x, y)).collect()
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

    proptest! {
        /// Row by row or whole, the changes are the ones ratatui's diff of the whole buffers
        /// finds.
        #[test]
        fn the_changes_are_ratatuis_found_row_by_row(before in texts(), after in texts()) {
            let (before, after) = (written(12, 12, &before), written(12, 12, &after));
            prop_assert_eq!(changes(&before, &after, &[true; 12]).0, positions(before.diff(&after)));
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
            prop_assert_eq!(changes(&before, &after, &[true; 12]).0, positions(before.diff(&after)));
        }

        /// Passing over rows where the frame holds what the terminal shows finds the same
        /// changes.
        #[test]
        fn rows_known_alike_change_nothing_found(
            before in texts(),
            after in texts(),
            compared in prop::collection::vec(any::<bool>(), 12),
        ) {
            let before = written(12, 12, &before);
            let mut after = written(12, 12, &after);
            for (y, _) in (0u16..).zip(&compared).filter(|(_, compared)| !**compared) {
                for x in 0..12 {
                    after[(x, y)] = before[(x, y)].clone();
                }
            }
            prop_assert_eq!(
                changes(&before, &after, &compared).0,
                positions(before.diff(&after))
            );
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
            changes(&before, &before.clone(), &[true; 4]),
            (vec![], vec![])
        );
        let after = written(12, 4, &[(1, 2, "some".into(), false)]);
        assert_eq!(
            changes(&before, &after, &[true; 4]),
            (vec![(2, 2)], vec![2])
        );
    }
}
