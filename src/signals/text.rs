//! Tokens and sentences: the shared vocabulary of the lexical signals.
//!
//! A token is a lower-cased alphanumeric run of two or more characters that is not a stopword.
//! Claims are read from sentences: lines that are neither markdown headings nor `VERDICT:`
//! lines, split at `.`, `?`, `!` and `;` followed by whitespace or the line's end.

/// Words too common to carry meaning in a debate.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "do", "does", "for", "from", "has", "have", "i", "if", "in",
    "into", "is", "it", "its", "may", "more", "most", "my", "no", "not", "of", "on", "or", "our",
    "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "was", "we", "were", "what", "which", "while", "who", "will", "with", "would",
    "you",
];

/// Whether a lower-cased word is too common to carry meaning.
pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Whether a raw alphanumeric run is long enough to be a token (before lower-casing).
pub(crate) fn long_enough(word: &str) -> bool {
    word.chars().nth(1).is_some()
}

/// Lower-cased content words of `text`: alphanumeric runs, stopwords and one-letter words
/// dropped.
pub(super) fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| long_enough(w))
        .map(str::to_lowercase)
        .filter(|w| !is_stopword(w))
}

/// Sentences of `text`, skipping markdown headings and `VERDICT:` lines, split at `.`, `?`, `!`
/// and `;` followed by whitespace.
pub(super) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter_map(claim_line)
        .flat_map(split_sentences)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// `line` without its bullet or quote marks, when claims may be read from it (not a heading,
/// not a `VERDICT:` line).
pub(crate) fn claim_line(line: &str) -> Option<&str> {
    let line = line.trim().trim_start_matches(['-', '*', '>', ' ']);
    (!line.starts_with('#') && !is_verdict_line(line)).then_some(line)
}

/// Whether `c`, followed by `next` (`None` at the line's end), ends a sentence.
pub(crate) fn ends_sentence(c: char, next: Option<char>) -> bool {
    matches!(c, '.' | '?' | '!' | ';') && next.is_none_or(char::is_whitespace)
}

fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if ends_sentence(c, chars.peek().map(|&(_, next)| next)) {
            out.push(&line[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&line[start..]);
    out
}

/// The value of a `VERDICT:` line (markdown emphasis allowed), if `line` is one.
pub(crate) fn verdict_value(line: &str) -> Option<&str> {
    let line = line.trim().trim_start_matches(['-', '*', '>', '#', ' ']);
    let head = line.get(..7)?;
    if !head.eq_ignore_ascii_case("verdict") {
        return None;
    }
    let rest = line[7..].trim_start_matches('*').trim_start();
    rest.strip_prefix(':').map(|v| v.trim_start_matches('*'))
}

fn is_verdict_line(line: &str) -> bool {
    verdict_value(line).is_some()
}
