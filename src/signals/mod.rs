//! Signals from text: what the round controller reads off a debate's rounds.
//!
//! Deterministic and local (no model download): a lexical similarity between consecutive rounds
//! (TF-IDF cosine, replaceable through [`Similarity`] and overridden by a precomputed value an
//! orchestrator wrote with an embedding model), the count of new claims, the round's verdict and
//! the open DISPUTE/MISSED items. Pure functions of the text; nothing here touches I/O.

mod claims;
mod markdown;
mod similarity;
mod text;
mod verdict;

pub use claims::new_claims;
pub use markdown::{findings, open_items};
pub use similarity::{Similarity, TfIdfCosine};
pub use verdict::verdict;

/// The text of one round: its live (not superseded) turns, in order.
#[derive(Debug, Clone, Default)]
pub struct RoundText<'a> {
    pub turns: Vec<&'a str>,
    /// A similarity to the previous round computed elsewhere (an orchestrator's embeddings);
    /// used instead of the lexical measure when present.
    pub precomputed_similarity: Option<f64>,
}

impl RoundText<'_> {
    fn joined(&self) -> String {
        self.turns.join("\n")
    }
}

/// The signals of one round, measured against the rounds before it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundSignals {
    /// Similarity to the previous round; `None` for the first round.
    pub similarity: Option<f64>,
    /// The round's verdict: the one verdict its turns agree on, or every distinct verdict
    /// joined with " | " when they split.
    pub verdict: Option<String>,
    /// The turns of the round state different verdicts.
    pub verdict_split: bool,
    /// Claims in this round that no earlier round made.
    pub new_claims: u32,
    /// Items still listed under DISPUTE or MISSED; `None` when no turn has such a section.
    pub open_disputes: Option<u32>,
}

/// Measures the last of `rounds` against the ones before it.
pub fn extract(rounds: &[RoundText<'_>], measure: &dyn Similarity) -> RoundSignals {
    let Some(current) = rounds.last() else {
        return RoundSignals::default();
    };
    let joined: Vec<String> = rounds.iter().map(RoundText::joined).collect();
    let texts: Vec<&str> = joined.iter().map(String::as_str).collect();
    let similarity = if rounds.len() < 2 {
        None
    } else {
        current
            .precomputed_similarity
            .or_else(|| Some(measure.similarity(&texts)))
    };
    let mut verdicts: Vec<String> = current.turns.iter().filter_map(|t| verdict(t)).collect();
    verdicts.sort();
    verdicts.dedup();
    let open_disputes = current
        .turns
        .iter()
        .filter_map(|t| open_items(t))
        .map(|items| items.len() as u32)
        .reduce(|a, b| a + b);
    RoundSignals {
        similarity,
        verdict_split: verdicts.len() > 1,
        verdict: (!verdicts.is_empty()).then(|| verdicts.join(" | ")),
        new_claims: new_claims(&texts),
        open_disputes,
    }
}
