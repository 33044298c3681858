//! Claim novelty: how many claims a round adds to what earlier rounds already said.
//!
//! A claim is a sentence with at least three content words. A claim of a round is new when no
//! claim of an earlier round shares half of its words (Jaccard similarity of the word sets
//! below 0.5); restating a claim in the same round counts it once.
//!
//! Earlier claims are held in an index with prefix filtering, so a new claim is compared only
//! with the few that could reach the threshold. With every claim's words in one fixed order,
//! two sets whose Jaccard similarity is at least 1/2 share a word among the first
//! `len / 2 + 1` words of each (their prefixes); only claims sharing a prefix word, and of a
//! length within a factor of two, are compared in full.

use super::terms::Claim;

/// Every claim a debate has made, indexed by the words of their prefixes.
#[derive(Debug, Default)]
pub struct ClaimIndex {
    claims: Vec<Claim>,
    /// Per word id: the claims whose prefix holds it.
    postings: Vec<Vec<u32>>,
    /// Per claim: the last probe that looked at it, so a probe compares each claim once.
    probed: Vec<u32>,
    probe: u32,
}

impl ClaimIndex {
    /// Counts the claims of the next round that no earlier round made, then files all of them.
    /// A claim found new is filed at once, so its restatement later in the round is not new;
    /// the others are filed when the round is over.
    pub fn round(&mut self, claims: Vec<Claim>) -> u32 {
        let mut fresh = 0;
        let mut repeated = Vec::new();
        for claim in claims {
            if self.knows(&claim) {
                repeated.push(claim);
            } else {
                fresh += 1;
                self.file(claim);
            }
        }
        for claim in repeated {
            self.file(claim);
        }
        fresh
    }

    /// Whether a filed claim shares at least half of `claim`'s words (Jaccard >= 1/2).
    fn knows(&mut self, claim: &[u32]) -> bool {
        self.probe = self.probe.wrapping_add(1);
        let (shortest, longest) = (claim.len().div_ceil(2), claim.len() * 2);
        for &word in prefix(claim) {
            let Some(posting) = self.postings.get(word as usize) else {
                continue;
            };
            for &index in posting {
                let index = index as usize;
                if self.probed[index] == self.probe {
                    continue;
                }
                self.probed[index] = self.probe;
                let other = &self.claims[index];
                if (shortest..=longest).contains(&other.len()) && half_shared(claim, other) {
                    return true;
                }
            }
        }
        false
    }

    fn file(&mut self, claim: Claim) {
        let index = self.claims.len() as u32;
        for &word in prefix(&claim) {
            let word = word as usize;
            if word >= self.postings.len() {
                self.postings.resize_with(word + 1, Vec::new);
            }
            self.postings[word].push(index);
        }
        self.claims.push(claim);
        self.probed.push(0);
    }
}

/// The words of a claim that any claim at Jaccard >= 1/2 with it must share one of.
fn prefix(claim: &[u32]) -> &[u32] {
    &claim[..claim.len() / 2 + 1]
}

/// Jaccard similarity of two word sets (both in descending order) at least 1/2:
/// shared / (a + b - shared) >= 1/2, that is 3 * shared >= a + b.
fn half_shared(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Greater => i += 1,
            std::cmp::Ordering::Less => j += 1,
        }
    }
    3 * shared >= a.len() + b.len()
}
