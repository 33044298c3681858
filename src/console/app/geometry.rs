//! The last frame's layout as [`update`](super::update) needs it: where the debates list and
//! the detail were drawn (for mouse clicks) and how far the detail's text scrolls. The draw
//! loop records it for each frame (the ui computes it); nothing here lays anything out.

use ratatui::layout::{Position, Rect};

/// A part of the screen the mouse can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    Debates,
    Detail,
}

/// How far a text view scrolls: the rows its text takes, and the rows shown at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextRows {
    pub total: usize,
    pub shown: usize,
}

impl TextRows {
    /// The scroll that shows the last page.
    pub fn bottom(self) -> usize {
        self.total.saturating_sub(self.shown)
    }
}

/// One frame's layout; the default (nothing drawn yet) has no regions and no text to scroll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    /// Where the debates list was drawn.
    pub list: Rect,
    /// Where the detail was drawn.
    pub detail: Rect,
    /// The index of the first round the rounds table showed.
    pub first_round_shown: usize,
    /// The rows of the detail view's text from the selected round on; `None` for a table.
    pub detail_text: Option<TextRows>,
}

impl Geometry {
    /// How many debates the list shows.
    pub(crate) fn list_rows(&self) -> usize {
        table_rows(self.list)
    }

    /// The region under the screen cell `(column, row)`, and which list row of it, if any (for
    /// the debates list and the rounds table, counting from the first row shown).
    pub(crate) fn region_at(&self, column: u16, row: u16) -> Option<(Region, Option<usize>)> {
        let position = Position::new(column, row);
        let (region, area, offset) = if self.list.contains(position) {
            (Region::Debates, self.list, 0)
        } else if self.detail.contains(position) {
            (Region::Detail, self.detail, self.first_round_shown)
        } else {
            return None;
        };
        // A table inside a border, under one header row.
        let first_row = area.y + 2;
        let shown = table_rows(area);
        let index = (row >= first_row && row < first_row + shown as u16)
            .then(|| offset + usize::from(row - first_row));
        Some((region, index))
    }
}

/// The rows of a bordered table with one header row in `area`.
pub fn table_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(3))
}
