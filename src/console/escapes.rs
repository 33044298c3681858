//! The escape sequences that write a frame's changed cells to the terminal: what ratatui's
//! crossterm backend writes for them, byte for byte (a cursor move where a cell does not follow
//! the one before, the attributes and colours where they change, the symbol; every style reset
//! after the last), with each symbol written as its bytes. The backend formats every symbol
//! through crossterm's `Print`, one formatting call per cell; a row landing writes a few
//! hundred cells, and that formatting was a tenth of its frame. Cursor moves are written
//! without formatting too, each pair of colours is formatted once ([`Colours`]), and the reset
//! after the cells once for all.

use std::io::{self, Write};
use std::sync::LazyLock;

use crossterm::QueueableCommand;
use crossterm::style::{
    Attribute, Color as CrosstermColor, Colors, SetAttribute, SetBackgroundColor, SetColors,
    SetForegroundColor, SetUnderlineColor,
};
use ratatui::backend::IntoCrossterm;
use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};
use rustc_hash::FxHashMap;

/// The sequences that set each pair of colours (foreground, background) written so far, kept
/// from frame to frame: a theme has few, and formatting them was most of the cost of a row's
/// escape sequences. Debate text never sets colours; a theme changed often may, so a full set
/// starts again.
#[derive(Default)]
pub(super) struct Colours(FxHashMap<(Color, Color), Box<[u8]>>);

impl Colours {
    /// Pairs kept, at most.
    const MOST: usize = 256;

    /// Writes the sequence that sets `fg` and `bg`, as crossterm's `SetColors` writes it.
    fn set(&mut self, out: &mut impl Write, fg: Color, bg: Color) -> io::Result<()> {
        if let Some(sequence) = self.0.get(&(fg, bg)) {
            return out.write_all(sequence);
        }
        let mut sequence = Vec::new();
        sequence.queue(SetColors(Colors::new(
            fg.into_crossterm(),
            bg.into_crossterm(),
        )))?;
        out.write_all(&sequence)?;
        if self.0.len() >= Colours::MOST {
            self.0.clear();
        }
        self.0.insert((fg, bg), sequence.into_boxed_slice());
        Ok(())
    }
}

/// Moves the cursor to column `x` of row `y`, as crossterm's `MoveTo` writes it (`CSI row ;
/// column H`, counted from 1).
fn move_to(out: &mut impl Write, x: u16, y: u16) -> io::Result<()> {
    let (mut row, mut column) = (itoa::Buffer::new(), itoa::Buffer::new());
    out.write_all(b"\x1b[")?;
    out.write_all(row.format(u32::from(y) + 1).as_bytes())?;
    out.write_all(b";")?;
    out.write_all(column.format(u32::from(x) + 1).as_bytes())?;
    out.write_all(b"H")
}

/// Writes `cells` (each at its column and row) to `out`, the styles reset after them; the
/// sequences of the colours are kept in `colours`.
pub(super) fn write_cells<'c>(
    out: &mut impl Write,
    cells: impl IntoIterator<Item = (u16, u16, &'c Cell)>,
    colours: &mut Colours,
) -> io::Result<()> {
    let (mut fg, mut bg, mut underline) = (Color::Reset, Color::Reset, Color::Reset);
    let mut modifier = Modifier::empty();
    let mut next: Option<(u16, u16)> = None;
    for (x, y, cell) in cells {
        if next != Some((x, y)) {
            move_to(out, x, y)?;
        }
        next = x.checked_add(1).map(|after| (after, y));
        if cell.modifier != modifier {
            change_modifier(out, modifier, cell.modifier)?;
            modifier = cell.modifier;
        }
        if cell.fg != fg || cell.bg != bg {
            colours.set(out, cell.fg, cell.bg)?;
            (fg, bg) = (cell.fg, cell.bg);
        }
        if cell.underline_color != underline {
            out.queue(SetUnderlineColor(cell.underline_color.into_crossterm()))?;
            underline = cell.underline_color;
        }
        out.write_all(cell.symbol().as_bytes())?;
    }
    out.write_all(&RESET)
}

/// What resets every style after a frame's cells (the colours, then the attributes), as the
/// backend writes it: the same every frame, so formatted once.
static RESET: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut reset = Vec::new();
    let formatted = reset
        .queue(SetForegroundColor(CrosstermColor::Reset))
        .and_then(|r| r.queue(SetBackgroundColor(CrosstermColor::Reset)))
        .and_then(|r| r.queue(SetUnderlineColor(CrosstermColor::Reset)))
        .and_then(|r| r.queue(SetAttribute(Attribute::Reset)))
        .map(|_| ());
    // Writing into memory does not fail.
    debug_assert!(formatted.is_ok());
    reset
});

/// Turns the attributes `from` into `to`: those removed first, then those added. Bold and dim
/// end together (normal intensity), so whichever of them `to` keeps is set again.
fn change_modifier(out: &mut impl Write, from: Modifier, to: Modifier) -> io::Result<()> {
    let removed = from - to;
    let added = to - from;
    let mut set = |attribute| out.queue(SetAttribute(attribute)).map(|_| ());
    if removed.contains(Modifier::REVERSED) {
        set(Attribute::NoReverse)?;
    }
    let intensity_reset = removed.intersects(Modifier::BOLD | Modifier::DIM);
    if intensity_reset {
        set(Attribute::NormalIntensity)?;
        if to.contains(Modifier::DIM) {
            set(Attribute::Dim)?;
        }
        if to.contains(Modifier::BOLD) {
            set(Attribute::Bold)?;
        }
    }
    for (modifier, attribute) in [
        (Modifier::ITALIC, Attribute::NoItalic),
        (Modifier::UNDERLINED, Attribute::NoUnderline),
        (Modifier::CROSSED_OUT, Attribute::NotCrossedOut),
        (Modifier::HIDDEN, Attribute::NoHidden),
    ] {
        if removed.contains(modifier) {
            set(attribute)?;
        }
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        set(Attribute::NoBlink)?;
    }
    for (modifier, attribute, unless_reset) in [
        (Modifier::REVERSED, Attribute::Reverse, false),
        (Modifier::BOLD, Attribute::Bold, true),
        (Modifier::ITALIC, Attribute::Italic, false),
        (Modifier::UNDERLINED, Attribute::Underlined, false),
        (Modifier::DIM, Attribute::Dim, true),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut, false),
        (Modifier::HIDDEN, Attribute::Hidden, false),
        (Modifier::SLOW_BLINK, Attribute::SlowBlink, false),
        (Modifier::RAPID_BLINK, Attribute::RapidBlink, false),
    ] {
        if added.contains(modifier) && !(unless_reset && intensity_reset) {
            set(attribute)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ratatui::backend::{Backend, CrosstermBackend};
    use ratatui::style::Style;

    use super::*;

    fn color() -> impl Strategy<Value = Color> {
        prop_oneof![
            Just(Color::Reset),
            Just(Color::Red),
            Just(Color::DarkGray),
            any::<u8>().prop_map(Color::Indexed),
            any::<(u8, u8, u8)>().prop_map(|(r, g, b)| Color::Rgb(r, g, b)),
        ]
    }

    /// Cells in rows of a few columns (so that many follow one another), in every style.
    fn cells() -> impl Strategy<Value = Vec<(u16, u16, Cell)>> {
        let cell = (
            prop_oneof![4 => 0u16..6, 1 => 0u16..1_000, 1 => Just(u16::MAX - 1)],
            prop_oneof![4 => 0u16..3, 1 => 0u16..1_000],
            "[a日é\u{301}\u{1b} ]{1,2}",
            (color(), color(), color()),
            any::<u16>(),
        )
            .prop_map(|(x, y, symbol, (fg, bg, underline), bits)| {
                let mut cell = Cell::default();
                cell.set_symbol(&symbol);
                cell.set_style(
                    Style::new()
                        .fg(fg)
                        .bg(bg)
                        .underline_color(underline)
                        .add_modifier(Modifier::from_bits_truncate(bits)),
                );
                (x, y, cell)
            });
        prop::collection::vec(cell, 0..40)
    }

    proptest! {
        /// What the console writes is what ratatui's crossterm backend writes for the same cells.
        #[test]
        fn cells_are_written_as_the_backend_writes_them(cells in cells(), before in cells()) {
            let cells = || cells.iter().map(|(x, y, cell)| (*x, *y, cell));
            let mut backend = CrosstermBackend::new(Vec::new());
            backend.draw(cells()).unwrap();
            // The colours kept from cells written before, as from the frames before.
            let mut colours = Colours::default();
            write_cells(&mut Vec::new(), before.iter().map(|(x, y, cell)| (*x, *y, cell)), &mut colours).unwrap();
            let mut ours = Vec::new();
            write_cells(&mut ours, cells(), &mut colours).unwrap();
            prop_assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(backend.writer()));
        }
    }
}
