//! Similarity between consecutive rounds, measured as each round lands.

use super::terms::RoundTerms;

/// One round as a similarity measure sees it.
#[derive(Debug, Clone, Copy)]
pub struct MeasuredRound<'a> {
    /// The round's live turns, in order.
    pub turns: &'a [&'a str],
    /// Its content words as ids of the debate's vocabulary (dense, in order of first use),
    /// each with its count, by ascending id.
    pub terms: &'a [(u32, u32)],
}

impl<'a> MeasuredRound<'a> {
    pub fn new(turns: &'a [&'a str], terms: &'a RoundTerms) -> MeasuredRound<'a> {
        MeasuredRound {
            turns,
            terms: &terms.counts,
        }
    }
}

/// A measure of how alike the latest round is to the one before it, in `0.0..=1.0`. One value
/// per debate, fed its rounds one at a time, so a round costs the same however many came
/// before.
pub trait Similarity: Send + std::fmt::Debug {
    /// Takes the debate's next round.
    fn push(&mut self, round: MeasuredRound<'_>);
    /// How alike the last round pushed is to the one before it; 0 with fewer than two rounds.
    fn latest(&mut self) -> f64;
    /// The measure's name, as `signal_json.similarity_model` records it.
    fn model(&self) -> &str;
}

/// The name of the TF-IDF cosine in `similarity_model`.
pub const LEXICAL_NAME: &str = "tfidf";

/// TF-IDF cosine: rounds are documents, weighted by smoothed inverse document frequency over
/// the rounds so far (so later rounds never change an earlier round's figure). Document
/// frequencies are kept up to date as rounds land; only the last two rounds' counts are held.
/// Sums run in term order, so a figure is the same on every run, and identical rounds measure
/// exactly 1.
#[derive(Debug, Clone, Default)]
pub struct TfIdfCosine {
    rounds: u32,
    /// Per term id: how many rounds use it.
    document_frequency: Vec<u32>,
    previous: Vec<(u32, u32)>,
    current: Vec<(u32, u32)>,
}

impl Similarity for TfIdfCosine {
    fn push(&mut self, round: MeasuredRound<'_>) {
        self.previous = std::mem::replace(&mut self.current, round.terms.to_vec());
        for &(id, _) in round.terms {
            let id = id as usize;
            if id >= self.document_frequency.len() {
                self.document_frequency.resize(id + 1, 0);
            }
            self.document_frequency[id] += 1;
        }
        self.rounds += 1;
    }

    fn latest(&mut self) -> f64 {
        if self.rounds < 2 {
            return 0.0;
        }
        let n = f64::from(self.rounds);
        let weight = |&(id, count): &(u32, u32)| {
            let frequency = f64::from(self.document_frequency[id as usize]);
            f64::from(count) * (((1.0 + n) / (1.0 + frequency)).ln() + 1.0)
        };
        let squares = |terms: &[(u32, u32)]| {
            terms
                .iter()
                .map(|t| {
                    let w = weight(t);
                    w * w
                })
                .sum::<f64>()
        };
        let (a, b) = (&self.previous, &self.current);
        let (mut i, mut j, mut dot) = (0, 0, 0.0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Equal => {
                    dot += weight(&a[i]) * weight(&b[j]);
                    i += 1;
                    j += 1;
                }
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        let denominator = (squares(a) * squares(b)).sqrt();
        if denominator == 0.0 {
            0.0
        } else {
            (dot / denominator).clamp(0.0, 1.0)
        }
    }

    fn model(&self) -> &str {
        LEXICAL_NAME
    }
}
