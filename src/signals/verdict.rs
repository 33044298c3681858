//! Verdict extraction: what a turn concludes.
//!
//! A turn states its verdict either on a line `VERDICT: <verdict>` (any case, markdown emphasis
//! allowed, the last such line wins) or, when the turn is a JSON object (bare or in a ```json
//! fence), in its string field `"verdict"`. Verdicts are compared after normalising: lower case,
//! inner whitespace collapsed, trailing punctuation dropped.

use super::text::verdict_value;

/// The normalised verdict a turn states, if any.
pub fn verdict(text: &str) -> Option<String> {
    let raw = text
        .lines()
        .filter_map(verdict_value)
        .next_back()
        .map(str::to_owned)
        .or_else(|| json_verdict(text))?;
    let normalised = raw
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '*', ',', ';'])
        .to_lowercase();
    (!normalised.is_empty()).then_some(normalised)
}

fn json_verdict(text: &str) -> Option<String> {
    let body = text.trim();
    let body = match body.find("```json") {
        Some(start) => {
            let rest = &body[start + 7..];
            &rest[..rest.find("```")?]
        }
        None => body,
    };
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    value.get("verdict")?.as_str().map(str::to_owned)
}
