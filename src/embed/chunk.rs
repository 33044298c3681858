//! A round's text cut into sentences and packed into chunks that fit a model's token window.
//! A sentence longer than the window is cut at its last token that fits; nothing else is lost.

use std::ops::Range;

/// A piece of text to embed and how many tokens it holds (special tokens not counted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub text: String,
    pub tokens: usize,
}

/// The sentences of `text` as byte ranges: a sentence ends at `.`, `!` or `?` followed by
/// white space, or at a line break; surrounding white space is left out and blank sentences
/// are dropped.
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\n' => Some(at),
            '.' | '!' | '?' => chars
                .peek()
                .filter(|(_, next)| next.is_whitespace())
                .map(|_| at + c.len_utf8()),
            _ => None,
        };
        if let Some(end) = end {
            push_trimmed(text, start..end, &mut out);
            start = end;
        }
    }
    push_trimmed(text, start..text.len(), &mut out);
    out
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let piece = &text[range.clone()];
    let trimmed = piece.trim();
    if !trimmed.is_empty() {
        let start = range.start + (piece.len() - piece.trim_start().len());
        out.push(start..start + trimmed.len());
    }
}

/// Packs the sentences of `text` in order into chunks of at most `window` tokens, as `count`
/// counts them: `count` returns a sentence's token count and the byte length of its longest
/// prefix that fits `window` tokens (the whole length when it fits).
pub fn pack(text: &str, window: usize, count: impl Fn(&str) -> (usize, usize)) -> Vec<Chunk> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current = Chunk {
        text: String::new(),
        tokens: 0,
    };
    for range in sentences(text) {
        let sentence = &text[range];
        let (mut tokens, fits) = count(sentence);
        let sentence = if tokens > window {
            tokens = window;
            &sentence[..fits]
        } else {
            sentence
        };
        if tokens == 0 {
            continue;
        }
        if current.tokens + tokens > window && current.tokens > 0 {
            chunks.push(std::mem::replace(
                &mut current,
                Chunk {
                    text: String::new(),
                    tokens: 0,
                },
            ));
        }
        if !current.text.is_empty() {
            current.text.push(' ');
        }
        current.text.push_str(sentence);
        current.tokens += tokens;
    }
    if current.tokens > 0 {
        chunks.push(current);
    }
    chunks
}
