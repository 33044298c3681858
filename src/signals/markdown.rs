//! Markdown sections that review-style debates use: `DISPUTE`, `MISSED` and `FINDINGS`.
//!
//! A section starts at an ATX heading (`## DISPUTE`, any level, any case) and runs to the next
//! heading or `VERDICT:` line. Its items are its bullet lines (`-`, `*`, `1.`); a section with text but no bullets
//! is one item. "none", "n/a", "nothing" and "-" alone do not count as items.

use super::text::verdict_value;

/// The open items of `text`'s DISPUTE and MISSED sections; `None` when it has neither section.
pub fn open_items(text: &str) -> Option<Vec<String>> {
    let mut found = false;
    let mut items = Vec::new();
    for (title, body) in sections(text) {
        if title.eq_ignore_ascii_case("dispute") || title.eq_ignore_ascii_case("missed") {
            found = true;
            items.extend(section_items(&body));
        }
    }
    found.then_some(items)
}

/// The finding ids a reviewer lists under FINDINGS as `- [ID] ...`; `None` without the section.
pub fn findings(text: &str) -> Option<Vec<String>> {
    let body = sections(text)
        .into_iter()
        .filter(|(title, _)| title.eq_ignore_ascii_case("findings"))
        .map(|(_, body)| body)
        .reduce(|a, b| a + "\n" + &b)?;
    Some(
        section_items(&body)
            .iter()
            .filter_map(|item| {
                let id = item.strip_prefix('[')?.split_once(']')?.0.trim();
                (!id.is_empty()).then(|| id.to_uppercase())
            })
            .collect(),
    )
}

fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let rest = trimmed.trim_start_matches('#');
    (rest.len() < trimmed.len() && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| rest.trim().trim_end_matches(':').trim())
}

fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(title) = heading(line) {
            out.push((title.to_owned(), String::new()));
            open = true;
        } else if verdict_value(line).is_some() {
            open = false;
        } else if open && let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn is_empty_marker(item: &str) -> bool {
    let item = item.trim().trim_end_matches('.').to_lowercase();
    matches!(item.as_str(), "" | "none" | "n/a" | "na" | "nothing" | "-")
}

fn bullet(line: &str) -> Option<&str> {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(rest);
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0)
        .then(|| line[digits..].strip_prefix(". "))
        .flatten()
}

fn section_items(body: &str) -> Vec<String> {
    let bullets: Vec<String> = body
        .lines()
        .filter_map(bullet)
        .filter(|item| !is_empty_marker(item))
        .map(|item| item.trim().to_owned())
        .collect();
    if !bullets.is_empty() || body.lines().any(|l| bullet(l).is_some()) {
        return bullets;
    }
    let prose = body.trim();
    if is_empty_marker(prose) {
        Vec::new()
    } else {
        vec![prose.to_owned()]
    }
}
