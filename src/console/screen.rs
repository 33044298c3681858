//! The terminal the console draws on: ratatui's, its viewport of a fixed size (resized when the
//! terminal says it was: only the frame after a resize asks it its size), each frame written as
//! what changed since the one before. The changes are found row by row: a row left as it was is
//! passed over in one comparison, and only a changed row is diffed cell by cell, by ratatui's
//! own diff (a frame after a row lands changes a few rows of the 48; ratatui diffs every cell,
//! working out the width of each symbol as it goes).

use std::io::{self, Write};

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

/// A terminal written through `W`, and what it shows.
pub struct Screen<W: Write> {
    /// Frames are rendered into its current buffer; its own diff is never used.
    terminal: Terminal<CrosstermBackend<W>>,
    /// What the terminal shows: the last frame written.
    shown: Buffer,
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
        Ok(())
    }

    /// Forgets what the terminal shows: the next frame clears it and is written whole.
    pub fn invalidate(&mut self) {
        self.shown = Buffer::empty(Rect::ZERO);
    }

    /// Where anything besides frames is written (escape sequences of the terminal's own).
    pub fn out(&mut self) -> &mut CrosstermBackend<W> {
        self.terminal.backend_mut()
    }

    /// Draws a frame of `area` (the terminal cleared first when its size changed): `render`
    /// fills it and says where the cursor goes, if anywhere; what changed is written.
    pub fn draw(
        &mut self,
        area: Rect,
        render: impl FnOnce(&mut Frame) -> Option<Position>,
    ) -> io::Result<()> {
        if self.shown.area != area {
            self.terminal.resize(area)?;
            self.shown = Buffer::empty(area);
        }
        let cursor = render(&mut self.terminal.get_frame());
        // The frame becomes what is shown; the terminal's buffer holds the frame before it,
        // and is reset for the next frame once the changes are written.
        std::mem::swap(self.terminal.current_buffer_mut(), &mut self.shown);
        let changed = changes(self.terminal.current_buffer_mut(), &self.shown);
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
        self.terminal.current_buffer_mut().reset();
        Ok(())
    }
}

/// The cells to write to turn a terminal showing `before` into one showing `after` (buffers of
/// one area), as ratatui's diff finds them: in each row that differs, the cells its diff of
/// that row finds; where more than a quarter of the rows differ (a view drawn anew), its diff of
/// the whole, which then costs less than copying the rows out.
fn changes(before: &Buffer, after: &Buffer) -> Vec<(u16, u16)> {
    let area = after.area;
    let width = usize::from(area.width);
    if width == 0 || before.area != area {
        return Vec::new();
    }
    let rows = before
        .content
        .chunks(width)
        .zip(after.content.chunks(width));
    let differing: Vec<(u16, &[Cell], &[Cell])> = (area.y..)
        .zip(rows)
        .filter(|(_, (was, is))| was != is)
        .map(|(y, (was, is))| (y, was, is))
        .collect();
    if differing.len() > usize::from(area.height) / 4 {
        return positions(before.diff(after));
    }
    let mut changed = Vec::new();
    for (y, was, is) in differing {
        let row = Rect {
            y,
            height: 1,
            ..area
        };
        let was = Buffer {
            area: row,
            content: was.to_vec(),
        };
        let is = Buffer {
            area: row,
            content: is.to_vec(),
        };
        changed.extend(positions(was.diff(&is)));
    }
    changed
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
        prop::collection::vec(
            (
                0u16..12,
                0u16..4,
                "[ab日本\u{301}❤\u{fe0f} ]{0,6}",
                any::<bool>(),
            ),
            0..6,
        )
    }

    proptest! {
        /// Row by row or whole, the changes are the ones ratatui's diff of the whole buffers
        /// finds.
        #[test]
        fn the_changes_are_ratatuis_found_row_by_row(before in texts(), after in texts()) {
            let (before, after) = (written(12, 12, &before), written(12, 12, &after));
            prop_assert_eq!(changes(&before, &after), positions(before.diff(&after)));
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
                .draw(area, |frame| {
                    frame.buffer_mut().set_string(2, 1, text, Style::new());
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
        assert!(changes(&before, &before.clone()).is_empty());
        let after = written(12, 4, &[(1, 2, "some".into(), false)]);
        assert_eq!(changes(&before, &after), vec![(2, 2)]);
    }
}
