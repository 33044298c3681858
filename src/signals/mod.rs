//! Signals from text: what the round controller reads off a debate's rounds.
//!
//! Local (no model download): the similarity between consecutive rounds ([`Measure`]: the
//! semantic cosine of sentence embeddings, or the lexical TF-IDF cosine; overridden by a
//! precomputed value an orchestrator wrote), the count of new claims, the round's verdict and
//! the open DISPUTE/MISSED items. [`DebateSignals`] takes a debate one round at a time and reads
//! each turn once, so a round costs the same at round 30 as at round 3; [`reference`](mod@reference) keeps the
//! straightforward definitions it is tested against. Nothing here touches I/O.

mod claims;
mod markdown;
pub mod reference;
mod semantic;
mod similarity;
mod terms;
mod text;
mod verdict;

pub use markdown::{findings, open_items};
pub use semantic::SemanticCosine;
pub use similarity::{LEXICAL_NAME, MeasuredRound, Similarity, TfIdfCosine};
pub use verdict::verdict;

use claims::ClaimIndex;
use terms::Vocabulary;

use crate::embed::Encoder;

/// `similarity_model` of a round whose similarity an orchestrator computed.
pub(crate) const PRECOMPUTED_NAME: &str = "precomputed";

/// Which similarity a debate's rounds are measured with. Clones share the model.
#[derive(Debug, Clone)]
pub enum Measure {
    /// The TF-IDF cosine ([`TfIdfCosine`]).
    Lexical,
    /// The cosine of sentence embeddings ([`SemanticCosine`]).
    Semantic(Encoder),
}

impl Measure {
    /// A fresh similarity state for one debate.
    pub fn similarity(&self) -> Box<dyn Similarity> {
        match self {
            Measure::Lexical => Box::<TfIdfCosine>::default(),
            Measure::Semantic(encoder) => Box::new(SemanticCosine::new(encoder.clone())),
        }
    }

    /// The measure's name, as `similarity_model` records it.
    pub fn name(&self) -> &str {
        match self {
            Measure::Lexical => LEXICAL_NAME,
            Measure::Semantic(encoder) => encoder.name(),
        }
    }

    /// The header's few words: "lexical", or the embedding model ("minilm-l3" for the
    /// built-in one).
    pub fn short(&self) -> &str {
        match self {
            Measure::Lexical => "lexical",
            Measure::Semantic(encoder) if encoder.name() == crate::embed::BUILTIN_NAME => {
                "minilm-l3"
            }
            Measure::Semantic(encoder) => encoder.name(),
        }
    }

    /// What an operator reads: "semantic (model)" or "lexical (tfidf)".
    pub fn label(&self) -> String {
        match self {
            Measure::Lexical => format!("lexical ({LEXICAL_NAME})"),
            Measure::Semantic(encoder) => format!("semantic ({})", encoder.name()),
        }
    }
}

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
    /// What measured it: the measure's name, or `PRECOMPUTED_NAME`; `None` with no similarity.
    pub similarity_model: Option<String>,
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
        let (similarity, similarity_model) = match round.precomputed_similarity {
            _ if self.rounds == 0 => (None, None),
            Some(precomputed) => (Some(precomputed), Some(PRECOMPUTED_NAME.to_owned())),
            None => (
                Some(self.similarity.latest()),
                Some(self.similarity.model().to_owned()),
            ),
        };
        self.rounds += 1;
        let (verdict, verdict_split, open_disputes) = round_verdicts(&round.turns);
        RoundSignals {
            similarity,
            similarity_model,
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
