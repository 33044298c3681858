//! Text the console hands out: the selected value for the clipboard (`y`), a round's turns or
//! a debate's trace for the pager (`P`). Everything from a debate is made inert line by line
//! (see [`crate::text::inert_lines`]), so neither a paste nor a pager can be driven by it; what
//! goes to the clipboard is capped at [`COPY_LIMIT`] bytes.

use crate::domain::Debate;
use crate::text::{inert, inert_lines};

/// The most text put on the clipboard at once, in bytes: terminals refuse or cut longer OSC 52
/// sequences (the base64 sent is a third longer).
pub const COPY_LIMIT: usize = 100_000;

/// `text` cut to at most `limit` bytes at a character boundary, and whether it was cut.
pub fn capped(mut text: String, limit: usize) -> (String, bool) {
    if text.len() <= limit {
        return (text, false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// Round `round`'s turns in spoken order as `persona: content`, a blank line between turns;
/// a superseded turn says so. `None` when the round has no turn yet.
pub fn round_text(debate: &Debate, round: u32) -> Option<String> {
    let row = debate.round(round);
    if row.turns.is_empty() {
        return None;
    }
    let turns: Vec<String> = row
        .turns
        .iter()
        .map(|turn| {
            let superseded = if turn.superseded { " (superseded)" } else { "" };
            format!(
                "{}{superseded}: {}",
                inert(&turn.agent_persona),
                inert_lines(&turn.content)
            )
        })
        .collect();
    Some(turns.join("\n\n") + "\n")
}
