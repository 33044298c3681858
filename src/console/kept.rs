//! Regions of a frame kept from the frame before. The view draws a region (a panel, a table's
//! row) through [`Kept::draw`] with a key: a value that says everything the region shows.
//! Where the region had the same key in the same place the frame before, it is not drawn again:
//! the screen draws each frame over the one before, leaves the regions drawn then in place, and
//! compares with what the terminal shows only what was drawn anew. A row landing then costs
//! the regions it changes, not the screen.
//!
//! A region is its drawing's alone, but for the regions drawn inside it after it (a table's
//! rows inside its panel): nothing else in a frame draws in its area. A region drawn anew
//! blanks its area first, and the regions inside it go with their cells. What draws over
//! regions (an overlay) says so with [`Kept::spoil`]: none of them is then taken as on the
//! terminal, and the next frame draws everything anew. Whatever the frame before's regions did
//! not cover is blanked and drawn every frame, as a screen without regions is.

use std::any::Any;

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use rustc_hash::FxHashMap;

/// The regions drawn in the frame before and in the frame being drawn.
#[derive(Default)]
pub struct Kept {
    /// The frame being drawn, counted from the first.
    frame: u64,
    /// Each region by its area (cut to the frame), with the area it was drawn for, its key and
    /// the frame it was last drawn in (hashed as the console's own areas, not text from a row).
    regions: FxHashMap<Rect, Region>,
    /// The areas drawn anew in the frame being drawn.
    drawn: Vec<Rect>,
    /// Something was drawn over this frame's regions.
    spoiled: bool,
    /// Counts the changes to where regions are: while it stays, so do the regions' areas.
    layout: u64,
}

/// A region drawn: the area it was drawn for (which its drawing may read), its key, and the
/// frame it was last drawn in.
struct Region {
    whole: Rect,
    key: Box<dyn Any>,
    drawn: u64,
}

impl Region {
    /// Whether it is still there in the frame `frame` (drawn the frame before), for the same
    /// area `whole`.
    fn still(&self, frame: u64, whole: Rect) -> bool {
        self.drawn + 1 == frame && self.whole == whole
    }
}

/// A region's key that also says what the region was drawn from (its source, cheaper to compare
/// than what it shows): alike when they show the same (a region drawn from another source may
/// still show what it did); the source only spares a frame describing the region again (see
/// [`Kept::drawn_from`]).
pub struct Sourced<S, T> {
    pub source: S,
    pub shown: T,
}

impl<S, T: PartialEq> PartialEq for Sourced<S, T> {
    fn eq(&self, other: &Sourced<S, T>) -> bool {
        self.shown == other.shown
    }
}

/// Where a frame drawn over the one before may differ from it, once drawn.
#[derive(Debug, PartialEq, Eq)]
pub enum Drawn {
    /// In these areas, and where the frame before's regions did not reach.
    Within(Vec<Rect>),
    /// Anywhere: something was drawn over the regions.
    Anywhere,
    /// A region of the frame before was left out of this one, its cells still in the frame:
    /// the frame is to be drawn again from blank.
    Again,
}

impl Kept {
    /// The areas of the regions the frame before drew: a frame is drawn over that one, blank
    /// but for these.
    pub fn areas(&self) -> impl Iterator<Item = Rect> + '_ {
        self.regions.keys().copied()
    }

    /// A count that changes whenever the regions' areas do (a region added where none was, or
    /// gone): what is worked out from [`Kept::areas`] holds while it stays the same.
    pub fn layout(&self) -> u64 {
        self.layout
    }

    /// The key the frame before drew the region at `area` (cut to `bounds`, the frame's area)
    /// with, if it is a `K` and the region is still there.
    pub fn key<K: 'static>(&self, bounds: Rect, area: Rect) -> Option<&K> {
        let region = self.regions.get(&area.intersection(bounds))?;
        region
            .still(self.frame, area)
            .then(|| region.key.downcast_ref::<K>())
            .flatten()
    }

    /// What the region at `area` (cut to `bounds`) shows, if the frame before drew it from
    /// `source` (with a [`Sourced`] key) and it is still there.
    pub fn drawn_from<S: PartialEq + 'static, T: 'static>(
        &self,
        bounds: Rect,
        area: Rect,
        source: &S,
    ) -> Option<&T> {
        self.key::<Sourced<S, T>>(bounds, area)
            .filter(|was| was.source == *source)
            .map(|was| &was.shown)
    }

    /// Leaves the region at `area` (cut to `buf`) as the frame before drew it, its key as it
    /// was: for a region whose [`Kept::key`] says it shows what it would.
    pub fn keep(&mut self, buf: &Buffer, area: Rect) {
        if let Some(region) = self.regions.get_mut(&area.intersection(buf.area))
            && region.still(self.frame, area)
        {
            region.drawn = self.frame;
        }
    }

    /// Draws the region at `area` (cut to `buf`) from `source`, all `write` reads: kept, and
    /// `write` not called, where the frame before drew it there from the same source; else what
    /// `write` writes down from it is drawn by `draw`, as [`Kept::draw`] draws a key. Returns what
    /// the region shows, unless it lies outside the frame.
    pub fn draw_sourced<S: PartialEq + 'static, T: PartialEq + 'static>(
        &mut self,
        buf: &mut Buffer,
        area: Rect,
        source: S,
        write: impl FnOnce(&S) -> T,
        draw: impl FnOnce(&T, &mut Buffer),
    ) -> Option<&T> {
        if self.drawn_from::<S, T>(buf.area, area, &source).is_some() {
            self.keep(buf, area);
        } else {
            let shown = write(&source);
            let sourced = Sourced { source, shown };
            self.draw(buf, area, sourced, |sourced, buf| draw(&sourced.shown, buf));
        }
        let region = self.regions.get(&area.intersection(buf.area))?;
        let sourced = region.key.downcast_ref::<Sourced<S, T>>()?;
        Some(&sourced.shown)
    }

    /// Draws the region at `area` (cut to `buf`), which shows what `key` says: left as it is
    /// (the key taken) when the frame before drew it for the same area with an equal key, else
    /// drawn by `draw` with the key (which draws nothing outside `area`) on the area blanked.
    pub fn draw<K: PartialEq + 'static>(
        &mut self,
        buf: &mut Buffer,
        area: Rect,
        key: K,
        draw: impl FnOnce(&K, &mut Buffer),
    ) {
        let whole = area;
        let area = whole.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        if let Some(region) = self.regions.get_mut(&area)
            && region.still(self.frame, whole)
            && let Some(held) = region.key.downcast_mut::<K>()
            && *held == key
        {
            // Alike, and the newer key kept (in place, without allocating): what it says
            // beyond what the region shows (a table row's source) is the latest.
            *held = key;
            region.drawn = self.frame;
            return;
        }
        // The regions inside go with the cells blanked.
        let held = self.regions.len();
        self.regions
            .retain(|&inside, _| inside == area || area.union(inside) != area);
        let gone = self.regions.len() != held;
        for y in area.top()..area.bottom() {
            let start = buf.index_of(area.x, y);
            let row = start..start + usize::from(area.width);
            buf.content[row].iter_mut().for_each(Cell::reset);
        }
        draw(&key, buf);
        let key = Box::new(key);
        let drawn = self.frame;
        let added = self
            .regions
            .insert(area, Region { whole, key, drawn })
            .is_none();
        if gone || added {
            self.layout += 1;
        }
        self.drawn.push(area);
    }

    /// Says that something was drawn over this frame's regions.
    pub fn spoil(&mut self) {
        self.spoiled = true;
    }

    /// Ends the frame: where it may differ from the frame before. A region of the frame before
    /// left out of this one is harmless where regions drawn anew cover it; anywhere else the
    /// frame is to be drawn again, and every region is forgotten.
    pub fn finish(&mut self) -> Drawn {
        let frame = self.frame;
        self.frame += 1;
        let drawn = std::mem::take(&mut self.drawn);
        let spoiled = std::mem::take(&mut self.spoiled);
        let stranded = self
            .regions
            .iter()
            .filter(|(_, region)| region.drawn != frame)
            .any(|(&left, _)| !covered(left, &drawn));
        let held = self.regions.len();
        self.regions.retain(|_, region| region.drawn == frame);
        if stranded || spoiled {
            self.regions.clear();
        }
        if self.regions.len() != held {
            self.layout += 1;
        }
        match (stranded, spoiled) {
            (true, _) => Drawn::Again,
            (false, true) => Drawn::Anywhere,
            (false, false) => Drawn::Within(drawn),
        }
    }

    /// Forgets every region: the terminal no longer shows the frame before (it was cleared,
    /// resized or left), and the next frame is drawn from blank.
    pub fn forget(&mut self) {
        self.regions.clear();
        self.layout += 1;
        self.drawn.clear();
        self.spoiled = false;
    }
}

/// Whether the `areas` together cover every cell of `rect`.
fn covered(rect: Rect, areas: &[Rect]) -> bool {
    (rect.top()..rect.bottom()).all(|y| {
        let mut spans: Vec<(u16, u16)> = areas
            .iter()
            .filter(|area| area.top() <= y && y < area.bottom())
            .map(|area| (area.left(), area.right()))
            .collect();
        spans.sort_unstable();
        let mut reached = rect.left();
        for (left, right) in spans {
            if left > reached {
                break;
            }
            reached = reached.max(right);
        }
        reached >= rect.right()
    })
}

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Style};

    use super::*;

    const SCREEN: Rect = Rect::new(0, 0, 10, 3);

    /// Draws `text` in the region at `area`, keyed by the text; says whether it was drawn.
    fn put(kept: &mut Kept, buf: &mut Buffer, area: Rect, text: &str) -> bool {
        let mut drawn = false;
        kept.draw(buf, area, text.to_owned(), |text, buf| {
            buf.set_string(area.x, area.y, text, Style::new().fg(Color::Red));
            drawn = true;
        });
        drawn
    }

    #[test]
    fn a_region_drawn_again_alike_is_left_in_place() {
        let row = Rect::new(1, 1, 6, 1);
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        assert!(put(&mut kept, &mut buf, row, "ab"));
        assert_eq!(kept.finish(), Drawn::Within(vec![row]));
        assert_eq!(kept.areas().collect::<Vec<_>>(), vec![row]);

        let drawn = buf.clone();
        assert!(!put(&mut kept, &mut buf, row, "ab"));
        assert_eq!(buf, drawn);
        assert_eq!(kept.finish(), Drawn::Within(vec![]));

        assert!(put(&mut kept, &mut buf, row, "x"), "another key is drawn");
        let mut expected = Buffer::empty(SCREEN);
        expected.set_string(1, 1, "x", Style::new().fg(Color::Red));
        assert_eq!(buf, expected, "on a blanked area");
        assert_eq!(kept.finish(), Drawn::Within(vec![row]));
    }

    #[test]
    fn a_region_left_out_of_a_frame_has_the_frame_drawn_again() {
        let (first, second) = (Rect::new(0, 0, 4, 1), Rect::new(0, 1, 4, 1));
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, first, "ab");
        put(&mut kept, &mut buf, second, "cd");
        kept.finish();
        // The second row is not drawn: its cells would be left in the frame.
        put(&mut kept, &mut buf, first, "ab");
        assert_eq!(kept.finish(), Drawn::Again);
        assert_eq!(kept.areas().count(), 0, "drawn again from blank");
        assert!(put(&mut kept, &mut Buffer::empty(SCREEN), first, "ab"));
        assert_eq!(kept.finish(), Drawn::Within(vec![first]));
    }

    #[test]
    fn a_region_left_out_under_one_drawn_anew_is_gone_with_it() {
        let (rows, row) = (Rect::new(0, 0, 4, 3), Rect::new(0, 1, 4, 1));
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, row, "ab");
        kept.finish();
        assert!(put(&mut kept, &mut buf, rows, ""));
        assert_eq!(kept.finish(), Drawn::Within(vec![rows]));
        assert_eq!(buf, Buffer::empty(SCREEN), "the row blanked");
    }

    #[test]
    fn a_region_left_out_under_several_drawn_anew_is_gone_with_them() {
        let (rows, first, rest) = (
            Rect::new(0, 0, 4, 3),
            Rect::new(0, 0, 4, 1),
            Rect::new(0, 1, 4, 2),
        );
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, rows, "");
        kept.finish();
        put(&mut kept, &mut buf, first, "ab");
        put(&mut kept, &mut buf, rest, "");
        assert_eq!(kept.finish(), Drawn::Within(vec![first, rest]));
        put(&mut kept, &mut buf, first, "ab");
        put(&mut kept, &mut buf, Rect::new(0, 1, 3, 2), "");
        assert_eq!(
            kept.finish(),
            Drawn::Again,
            "a column of the rest left over"
        );
    }

    #[test]
    fn the_regions_inside_one_drawn_anew_are_drawn_anew() {
        let (panel, row) = (Rect::new(0, 0, 6, 3), Rect::new(1, 1, 4, 1));
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, panel, "panel");
        put(&mut kept, &mut buf, row, "row");
        kept.finish();
        assert!(!put(&mut kept, &mut buf, panel, "panel"));
        assert!(
            !put(&mut kept, &mut buf, row, "row"),
            "kept inside a panel kept"
        );
        kept.finish();
        assert!(put(&mut kept, &mut buf, panel, "title"));
        assert!(
            put(&mut kept, &mut buf, row, "row"),
            "its cells went with the panel's"
        );
        assert_eq!(kept.finish(), Drawn::Within(vec![panel, row]));
        assert_eq!(buf[(1, 1)].symbol(), "r");
    }

    #[test]
    fn a_spoiled_or_forgotten_frame_keeps_nothing() {
        let row = Rect::new(0, 2, 4, 1);
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, row, "ab");
        kept.finish();
        put(&mut kept, &mut buf, row, "ab");
        kept.spoil();
        assert_eq!(kept.finish(), Drawn::Anywhere, "drawn over");
        assert_eq!(kept.areas().count(), 0);

        put(&mut kept, &mut buf, row, "ab");
        kept.finish();
        kept.forget();
        assert_eq!(kept.areas().count(), 0, "the terminal was cleared");
        assert!(put(&mut kept, &mut buf, row, "ab"));
    }

    #[test]
    fn the_layout_count_changes_when_the_regions_areas_do() {
        let (panel, row) = (Rect::new(0, 0, 6, 3), Rect::new(1, 1, 4, 1));
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        let mut counts = vec![kept.layout()];
        let mut frame = |kept: &mut Kept, drawn: &[(Rect, &str)]| {
            for (area, text) in drawn {
                put(kept, &mut buf, *area, text);
            }
            kept.finish();
            kept.layout()
        };
        counts.push(frame(&mut kept, &[(panel, "p"), (row, "a")]));
        assert_ne!(counts[1], counts[0], "regions added");
        counts.push(frame(&mut kept, &[(panel, "p"), (row, "a")]));
        counts.push(frame(&mut kept, &[(panel, "p"), (row, "b")]));
        assert_eq!(
            counts[1..],
            [counts[1]; 3],
            "kept, or drawn anew in the same place"
        );
        counts.push(frame(&mut kept, &[(panel, "p")]));
        assert_ne!(counts[4], counts[3], "the row gone (left out)");
        counts.push(frame(&mut kept, &[(panel, "p"), (row, "a")]));
        assert_ne!(counts[5], counts[4], "the row back");
        counts.push(frame(&mut kept, &[(panel, "q")]));
        assert_ne!(
            counts[6], counts[5],
            "the row gone with the panel drawn anew"
        );
        kept.forget();
        assert_ne!(kept.layout(), counts[6], "forgotten");
    }

    #[test]
    fn a_region_is_kept_as_the_buffer_cuts_it() {
        let past_the_edge = Rect::new(8, 0, 5, 2);
        let mut kept = Kept::default();
        let mut buf = Buffer::empty(SCREEN);
        put(&mut kept, &mut buf, past_the_edge, "abcde");
        assert_eq!(kept.finish(), Drawn::Within(vec![Rect::new(8, 0, 2, 2)]));
        assert!(!put(&mut kept, &mut buf, past_the_edge, "abcde"));
    }
}
