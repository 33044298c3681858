//! Tokens and sentences: the shared vocabulary of the lexical signals.

/// Words too common to carry meaning in a debate.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "do", "does", "for", "from", "has", "have", "i", "if", "in",
    "into", "is", "it", "its", "may", "more", "most", "my", "no", "not", "of", "on", "or", "our",
    "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "was", "we", "were", "what", "which", "while", "who", "will", "with", "would",
    "you",
];

/// Lower-cased content words of `text`: alphanumeric runs, stopwords and one-letter words
/// dropped.
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
}

/// Sentences of `text`, skipping markdown headings and `VERDICT:` lines, split at `.`, `?`, `!`
/// and `;` followed by whitespace.
pub fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|line| line.trim().trim_start_matches(['-', '*', '>', ' ']))
        .filter(|line| !line.starts_with('#') && !is_verdict_line(line))
        .flat_map(split_sentences)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at_break = matches!(c, '.' | '?' | '!' | ';')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if at_break {
            out.push(&line[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&line[start..]);
    out
}

/// The value of a `VERDICT:` line (markdown emphasis allowed), if `line` is one.
pub fn verdict_value(line: &str) -> Option<&str> {
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
