//! Claim novelty: how many claims a round adds to what earlier rounds already said.
//!
//! A claim is a sentence with at least three content words. A claim of the last round is new
//! when no claim of an earlier round shares half of its words (Jaccard similarity of the word
//! sets below 0.5); restating a claim in the same round counts it once.

use std::collections::BTreeSet;

use super::text::{sentences, tokens};

const MIN_CLAIM_WORDS: usize = 3;
const SAME_CLAIM_JACCARD: f64 = 0.5;

type Claim = BTreeSet<String>;

fn claims(text: &str) -> Vec<Claim> {
    sentences(text)
        .map(|s| tokens(s).collect::<Claim>())
        .filter(|words| words.len() >= MIN_CLAIM_WORDS)
        .collect()
}

fn jaccard(a: &Claim, b: &Claim) -> f64 {
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// Claims of the last of `rounds` that no earlier round made.
pub fn new_claims(rounds: &[&str]) -> u32 {
    let Some((current, earlier)) = rounds.split_last() else {
        return 0;
    };
    let mut known: Vec<Claim> = earlier.iter().flat_map(|r| claims(r)).collect();
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
