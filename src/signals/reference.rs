//! The straightforward definitions of the signals, kept as the oracle that
//! [`super::DebateSignals`] is tested against and as the baseline its benchmark is measured
//! beside. Each call reads every round again from the text, so a round's cost grows with the
//! rounds before it: nothing in the product calls these.

use std::collections::{BTreeMap, BTreeSet};

use super::text::{sentences, tokens};
use super::{RoundSignals, RoundText, round_verdicts};

const MIN_CLAIM_WORDS: usize = 3;
const SAME_CLAIM_JACCARD: f64 = 0.5;

type ClaimWords = BTreeSet<String>;

/// Measures the last of `rounds` against the ones before it, with the TF-IDF cosine unless the
/// round carries a precomputed similarity.
pub fn extract(rounds: &[RoundText<'_>]) -> RoundSignals {
    let Some(current) = rounds.last() else {
        return RoundSignals::default();
    };
    let joined: Vec<String> = rounds.iter().map(|r| r.turns.join("\n")).collect();
    let texts: Vec<&str> = joined.iter().map(String::as_str).collect();
    let (similarity, similarity_model) = match current.precomputed_similarity {
        _ if rounds.len() < 2 => (None, None),
        Some(precomputed) => (Some(precomputed), Some(super::PRECOMPUTED_NAME.to_owned())),
        None => (
            Some(tfidf_similarity(&texts)),
            Some(super::LEXICAL_NAME.to_owned()),
        ),
    };
    let (verdict, verdict_split, open_disputes) = round_verdicts(&current.turns);
    RoundSignals {
        similarity,
        similarity_model,
        verdict,
        verdict_split,
        new_claims: new_claims(&texts),
        open_disputes,
    }
}

/// TF-IDF cosine of the last of `rounds` against the one before, with document frequencies
/// over all of them.
pub(crate) fn tfidf_similarity(rounds: &[&str]) -> f64 {
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

fn term_counts(text: &str) -> BTreeMap<String, f64> {
    let mut counts = BTreeMap::new();
    for token in tokens(text) {
        *counts.entry(token).or_default() += 1.0;
    }
    counts
}

/// Claims of the last of `rounds` that no earlier round made, each compared with every earlier
/// claim.
pub fn new_claims(rounds: &[&str]) -> u32 {
    let Some((current, earlier)) = rounds.split_last() else {
        return 0;
    };
    let mut known: Vec<ClaimWords> = earlier.iter().flat_map(|r| claims(r)).collect();
    let mut fresh = 0;
    for claim in claims(current) {
        if known
            .iter()
            .all(|k| jaccard(&claim, k) < SAME_CLAIM_JACCARD)
        {
            fresh += 1;
            known.push(claim);
        }
    }
    fresh
}

fn claims(text: &str) -> Vec<ClaimWords> {
    sentences(text)
        .map(|s| tokens(s).collect::<ClaimWords>())
        .filter(|words| words.len() >= MIN_CLAIM_WORDS)
        .collect()
}

fn jaccard(a: &ClaimWords, b: &ClaimWords) -> f64 {
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}
