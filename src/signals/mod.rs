//! Signals from text: what the round controller reads off a debate's rounds.
//!
//! Deterministic and local (no model download): a lexical similarity between consecutive rounds
//! (TF-IDF cosine, replaceable through [`Similarity`] and overridden by a precomputed value an
//! orchestrator wrote with an embedding model), the count of new claims, the round's verdict and
//! the open DISPUTE/MISSED items. [`DebateSignals`] takes a debate one round at a time and reads
//! each turn once, so a round costs the same at round 30 as at round 3; [`reference`] keeps the
//! straightforward definitions it is tested against. Nothing here touches I/O.

mod claims;
mod markdown;
pub mod reference;
mod similarity;
mod terms;
mod text;
mod verdict;

pub use markdown::{findings, open_items};
pub use similarity::{MeasuredRound, Similarity, TfIdfCosine};
pub use verdict::verdict;

use claims::ClaimIndex;
use terms::Vocabulary;

/// The text of one round: its live (not superseded) turns, in order.
#[derive(Debug, Clone, Default)]
pub struct RoundText<'a> {
    pub turns: Vec<&'a str>,
    /// A similarity to the previous round computed elsewhere (an orchestrator's embeddings);
    /// used instead of the lexical measure when present.
    pub precomputed_similarity: Option<f64>,
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

/// One debate's signal state: its vocabulary, every claim it has made, and the similarity
/// measure's state. Rounds are pushed in order (a follow-up debate's prior conclusion first).
#[derive(Debug)]
pub struct DebateSignals {
    vocabulary: Vocabulary,
    claims: ClaimIndex,
    similarity: Box<dyn Similarity>,
    rounds: usize,
}

impl Default for DebateSignals {
    /// Measured with the TF-IDF cosine.
    fn default() -> DebateSignals {
        DebateSignals::new(Box::<TfIdfCosine>::default())
    }
}

impl DebateSignals {
    pub fn new(similarity: Box<dyn Similarity>) -> DebateSignals {
        DebateSignals {
            vocabulary: Vocabulary::default(),
            claims: ClaimIndex::default(),
            similarity,
            rounds: 0,
        }
    }

    /// Takes the next round and measures it against the rounds before it.
    pub fn push(&mut self, round: &RoundText<'_>) -> RoundSignals {
        let terms = self.vocabulary.round(&round.turns);
        self.similarity
            .push(MeasuredRound::new(&round.turns, &terms));
        let similarity = (self.rounds > 0).then(|| {
            round
                .precomputed_similarity
                .unwrap_or_else(|| self.similarity.latest())
        });
        self.rounds += 1;
        let (verdict, verdict_split, open_disputes) = round_verdicts(&round.turns);
        RoundSignals {
            similarity,
            verdict,
            verdict_split,
            new_claims: self.claims.round(terms.claims),
            open_disputes,
        }
    }
}

/// What a round's turns conclude on their own: the verdict (every distinct one, joined, when
/// they split), whether they split, and the open DISPUTE/MISSED items.
fn round_verdicts(turns: &[&str]) -> (Option<String>, bool, Option<u32>) {
    let mut verdicts: Vec<String> = turns.iter().filter_map(|t| verdict(t)).collect();
    verdicts.sort();
    verdicts.dedup();
    let open_disputes = turns
        .iter()
        .filter_map(|t| open_items(t))
        .map(|items| items.len() as u32)
        .reduce(|a, b| a + b);
    (
        (!verdicts.is_empty()).then(|| verdicts.join(" | ")),
        verdicts.len() > 1,
        open_disputes,
    )
}
