//! Similarity between consecutive rounds.

use std::collections::BTreeMap;

use super::text::tokens;

/// A measure of how alike the last round is to the one before it, in `0.0..=1.0`.
pub trait Similarity: Send + Sync {
    /// `rounds` holds the text of every round so far; compare the last with the one before.
    fn similarity(&self, rounds: &[&str]) -> f64;
}

/// TF-IDF cosine: rounds are documents, weighted by smoothed inverse document frequency over
/// the rounds so far (so later rounds never change an earlier round's figure). Sums run in term
/// order, so a figure is the same on every run, and identical rounds measure exactly 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct TfIdfCosine;

impl Similarity for TfIdfCosine {
    fn similarity(&self, rounds: &[&str]) -> f64 {
        if rounds.len() < 2 {
            return 0.0;
        }
        let counts: Vec<BTreeMap<String, f64>> = rounds.iter().map(|r| term_counts(r)).collect();
        let mut document_frequency: BTreeMap<&str, f64> = BTreeMap::new();
        for doc in &counts {
            for term in doc.keys() {
                *document_frequency.entry(term).or_default() += 1.0;
            }
        }
        let n = rounds.len() as f64;
        let idf = |term: &str| ((1.0 + n) / (1.0 + document_frequency[term])).ln() + 1.0;
        let weights = |doc: &BTreeMap<String, f64>| -> BTreeMap<String, f64> {
            doc.iter().map(|(t, c)| (t.clone(), c * idf(t))).collect()
        };
        let a = weights(&counts[counts.len() - 2]);
        let b = weights(&counts[counts.len() - 1]);
        let dot: f64 = a.iter().filter_map(|(t, w)| b.get(t).map(|v| w * v)).sum();
        let squares = |v: &BTreeMap<String, f64>| v.values().map(|w| w * w).sum::<f64>();
        let denominator = (squares(&a) * squares(&b)).sqrt();
        if denominator == 0.0 {
            0.0
        } else {
            (dot / denominator).clamp(0.0, 1.0)
        }
    }
}

fn term_counts(text: &str) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    for token in tokens(text) {
        *counts.entry(token).or_default() += 1.0;
    }
    counts
}
