//! Convergence checks from review-style debates, each returning (converged, reason).
//!
//! - A debate has converged when no debater still lists a non-empty DISPUTE or MISSED section.
//! - Review rounds have converged when every finding is unanimous (listed by every reviewer),
//!   none were raised, or there are fewer than two reviewers.

use std::collections::{BTreeMap, BTreeSet};

use crate::signals::{findings, open_items};

/// Whether a check passed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Convergence {
    pub converged: bool,
    pub reason: String,
}

/// DISPUTE/MISSED check over each debater's latest turn, `(persona, text)`.
pub fn debate_converged(turns: &[(&str, &str)]) -> Convergence {
    let open: Vec<String> = turns
        .iter()
        .filter_map(|(persona, text)| {
            let items = open_items(text)?;
            (!items.is_empty()).then(|| format!("{persona} ({})", items.len()))
        })
        .collect();
    if open.is_empty() {
        Convergence {
            converged: true,
            reason: "no debater lists an open DISPUTE or MISSED item".to_owned(),
        }
    } else {
        Convergence {
            converged: false,
            reason: format!("open DISPUTE/MISSED items: {}", open.join(", ")),
        }
    }
}

/// FINDINGS check over each reviewer's turn, `(reviewer, text)`.
pub fn review_converged(reviews: &[(&str, &str)]) -> Convergence {
    let reviewers: BTreeSet<&str> = reviews.iter().map(|(r, _)| *r).collect();
    if reviewers.len() < 2 {
        return Convergence {
            converged: true,
            reason: format!("{} reviewer(s): nothing to agree on", reviewers.len()),
        };
    }
    let mut listed: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (reviewer, text) in reviews {
        for id in findings(text).unwrap_or_default() {
            listed.entry(id).or_default().insert(reviewer);
        }
    }
    if listed.is_empty() {
        return Convergence {
            converged: true,
            reason: "no findings raised".to_owned(),
        };
    }
    let split: Vec<String> = listed
        .iter()
        .filter(|(_, by)| by.len() < reviewers.len())
        .map(|(id, by)| format!("{id} ({}/{})", by.len(), reviewers.len()))
        .collect();
    if split.is_empty() {
        Convergence {
            converged: true,
            reason: format!("all {} findings unanimous", listed.len()),
        }
    } else {
        Convergence {
            converged: false,
            reason: format!("findings not unanimous: {}", split.join(", ")),
        }
    }
}

/// The check a round's format calls for: the DISPUTE/MISSED check when its turns have such
/// sections, the FINDINGS check when they list findings, none otherwise.
pub fn format_check(turns: &[(&str, &str)]) -> Option<Convergence> {
    if turns.iter().any(|(_, t)| open_items(t).is_some()) {
        Some(debate_converged(turns))
    } else if turns.iter().any(|(_, t)| findings(t).is_some()) {
        Some(review_converged(turns))
    } else {
        None
    }
}
