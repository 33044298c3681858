//! The escape sequences that write a frame's changed cells to the terminal: what ratatui's
//! crossterm backend writes for them, byte for byte (a cursor move where a cell does not follow
//! the one before, the attributes and colours where they change, the symbol; every style reset
//! after the last), with each symbol written as its bytes. The backend formats every symbol
//! through crossterm's `Print`, one formatting call per cell; a row landing writes a few
//! hundred cells, and that formatting was a tenth of its frame.

use std::io::{self, Write};

use crossterm::QueueableCommand;
use crossterm::cursor::MoveTo;
use crossterm::style::{
    Attribute, Color as CrosstermColor, Colors, SetAttribute, SetBackgroundColor, SetColors,
    SetForegroundColor, SetUnderlineColor,
};
use ratatui::backend::IntoCrossterm;
use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};

/// Writes `cells` (each at its column and row) to `out`, the styles reset after them.
pub(super) fn write_cells<'c>(
    out: &mut impl Write,
    cells: impl IntoIterator<Item = (u16, u16, &'c Cell)>,
) -> io::Result<()> {
    let (mut fg, mut bg, mut underline) = (Color::Reset, Color::Reset, Color::Reset);
    let mut modifier = Modifier::empty();
    let mut next: Option<(u16, u16)> = None;
    for (x, y, cell) in cells {
        if next != Some((x, y)) {
            out.queue(MoveTo(x, y))?;
        }
        next = x.checked_add(1).map(|after| (after, y));
        if cell.modifier != modifier {
            change_modifier(out, modifier, cell.modifier)?;
            modifier = cell.modifier;
        }
        if cell.fg != fg || cell.bg != bg {
            out.queue(SetColors(Colors::new(
                cell.fg.into_crossterm(),
                cell.bg.into_crossterm(),
            )))?;
            (fg, bg) = (cell.fg, cell.bg);
        }
        if cell.underline_color != underline {
            out.queue(SetUnderlineColor(cell.underline_color.into_crossterm()))?;
            underline = cell.underline_color;
        }
        out.write_all(cell.symbol().as_bytes())?;
    }
    out.queue(SetForegroundColor(CrosstermColor::Reset))?
        .queue(SetBackgroundColor(CrosstermColor::Reset))?
        .queue(SetUnderlineColor(CrosstermColor::Reset))?
        .queue(SetAttribute(Attribute::Reset))?;
    Ok(())
}

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
            0u16..6,
            0u16..3,
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
        fn cells_are_written_as_the_backend_writes_them(cells in cells()) {
            let cells = || cells.iter().map(|(x, y, cell)| (*x, *y, cell));
            let mut backend = CrosstermBackend::new(Vec::new());
            backend.draw(cells()).unwrap();
            let mut ours = Vec::new();
            write_cells(&mut ours, cells()).unwrap();
            prop_assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(backend.writer()));
        }
    }
}
