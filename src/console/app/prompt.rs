//! A line of text the operator types — the note of an action, the debates filter, a `:`
//! command — edited with tui-input (cursor movement, word and line deletion, a kill ring) and
//! laid out for drawing: one line scrolled sideways, or wrapped rows scrolled down, with the
//! cursor always inside what is shown. Characters that could act on a terminal (controls,
//! bidirectional overrides, invisible format characters: see `crate::text::stand_in`) are
//! refused as they are typed or pasted, so the text never holds one; its length stays within
//! the prompt's limit.

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use tui_input::backend::crossterm::to_input_request;
use tui_input::{Input, InputRequest};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::text::stand_in;

/// How a key left the text being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    /// Still typing (the key edited the text, moved the cursor, or did nothing).
    Typing,
    /// Enter.
    Done,
    /// Esc.
    Cancelled,
}

/// Text being typed, at most `max` characters.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    input: Input,
    max: usize,
}

impl PartialEq for Prompt {
    fn eq(&self, other: &Prompt) -> bool {
        self.value() == other.value() && self.cursor() == other.cursor() && self.max == other.max
    }
}

/// Whether `c` may be typed: nothing that could act on a terminal or hide from a reader.
fn typeable(c: char) -> bool {
    stand_in(c).is_none()
}

impl Prompt {
    /// A prompt holding `text` (cleaned and cut to `max` characters), the cursor at its end.
    pub fn new(text: &str, max: usize) -> Prompt {
        let mut prompt = Prompt {
            input: Input::default(),
            max,
        };
        prompt.set(text);
        prompt
    }

    /// Replaces the text (cleaned and cut to the limit); the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        let clean: String = text
            .chars()
            .filter(|&c| typeable(c))
            .take(self.max)
            .collect();
        self.input = Input::new(clean);
    }

    pub fn value(&self) -> &str {
        self.input.value()
    }

    /// Characters before the cursor.
    pub fn cursor(&self) -> usize {
        self.input.cursor()
    }

    /// The longest text this prompt holds, in characters.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Applies a key: Enter and Esc end the typing; ← → Home End Ctrl-A Ctrl-E Alt-B Alt-F
    /// Ctrl-← Ctrl-→ move; Backspace, Delete, Ctrl-W / Alt-Backspace (word), Ctrl-U (line),
    /// Ctrl-K (to the end) delete; Ctrl-Y puts back what was deleted last; characters are
    /// inserted at the cursor. Anything else is ignored.
    pub fn key(&mut self, key: &KeyEvent) -> Typed {
        let alt = key.modifiers == KeyModifiers::ALT;
        let request = match key.code {
            KeyCode::Enter => return Typed::Done,
            KeyCode::Esc => return Typed::Cancelled,
            KeyCode::Char('b') if alt => Some(InputRequest::GoToPrevWord),
            KeyCode::Char('f') if alt => Some(InputRequest::GoToNextWord),
            KeyCode::Left if alt => Some(InputRequest::GoToPrevWord),
            KeyCode::Right if alt => Some(InputRequest::GoToNextWord),
            _ => to_input_request(&TermEvent::Key(*key)),
        };
        match request {
            Some(InputRequest::InsertChar(c)) if !typeable(c) => {}
            Some(request) => self.edit(request),
            None => {}
        }
        Typed::Typing
    }

    /// Makes an edit unless it would take the text past the limit.
    fn edit(&mut self, request: InputRequest) {
        let before = self.input.clone();
        if self
            .input
            .handle(request)
            .is_some_and(|changed| changed.value)
            && self.input.value().chars().count() > self.max
        {
            self.input = before;
        }
    }

    /// The text on one line `width` columns wide: how many columns are scrolled off to the
    /// left, and the cursor's column in what is shown (always less than `width`).
    pub fn line(&self, width: u16) -> (u16, u16) {
        let room = usize::from(width.max(1) - 1);
        let scroll = self.input.visual_scroll(room);
        let column = self.input.visual_cursor() - scroll;
        (clamp(scroll), clamp(column))
    }

    /// The text wrapped into rows `width` columns wide (at spaces where it can, else anywhere),
    /// and the cursor's row and column.
    pub fn rows(&self, width: u16) -> (Vec<&str>, (usize, u16)) {
        wrap(self.value(), self.input.cursor(), width)
    }
}

fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// `text` wrapped into rows of at most `width` columns, breaking after the last space of a
/// row when it has one, and where the cursor (after `cursor` characters) is: its row and
/// column. A cursor after a full last row is at the start of a row of its own (shown empty).
pub fn wrap(text: &str, cursor: usize, width: u16) -> (Vec<&str>, (usize, u16)) {
    let width = usize::from(width.max(2));
    let mut starts = vec![0];
    let (mut start, mut used, mut space) = (0, 0, None);
    for (at, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > width && at > start {
            let end = match space {
                Some(after) if after > start && after < at => after,
                _ => at,
            };
            start = end;
            starts.push(start);
            used = text[start..at].width();
            space = None;
            if used + w > width && at > start {
                // What follows the space does not fit with this character either.
                start = at;
                starts.push(start);
                used = 0;
            }
        }
        used += w;
        if c == ' ' {
            space = Some(at + 1);
        }
    }
    let mut rows: Vec<&str> = starts
        .iter()
        .zip(starts.iter().skip(1).chain([&text.len()]))
        .map(|(&from, &to)| &text[from..to])
        .collect();
    let byte = text
        .char_indices()
        .nth(cursor)
        .map_or(text.len(), |(i, _)| i);
    let row = starts.iter().rposition(|&s| s <= byte).unwrap_or(0);
    let column = text[starts[row]..byte].width();
    if column >= width {
        rows.push("");
        return (rows, (row + 1, 0));
    }
    (rows, (row, clamp(column)))
}
