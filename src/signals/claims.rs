//! Claim novelty: how many claims a round adds to what earlier rounds already said.
//!
//! A claim is a sentence with at least three content words. A claim of a round is new when no
//! claim of an earlier round shares half of its words (Jaccard similarity of the word sets
//! below 0.5); restating a claim in the same round counts it once.
//!
//! Earlier claims are held in an index with prefix filtering (as in AllPairs and PPJoin), so a
//! new claim is compared only with the few that could reach the threshold. With every claim's
//! words in one fixed order, two sets whose Jaccard similarity is at least 1/2 share a word
//! among the first `len / 2 + 1` words of each (their prefixes); only claims sharing a prefix
//! word, and of a length within a factor of two, are compared in full. The order puts the
//! debate's rarer words first, so prefixes hold words few claims use: it is fixed from the
//! words' frequencies each time the number of claims doubles, and the index rebuilt then.

use super::terms::Claim;

/// Claims filed before the first ordering by frequency.
const FIRST_ORDERING: usize = 64;

/// Every claim a debate has made, indexed by the words of their prefixes.
#[derive(Debug)]
pub(crate) struct ClaimIndex {
    /// Every claim filed, as the order keys of its words, ascending.
    claims: Vec<Box<[u64]>>,
    /// Per word id: how many filed claims use it.
    frequency: Vec<u32>,
    /// The frequencies the order was last fixed with; a word beyond them counts 0.
    ordered_by: Vec<u32>,
    /// The number of claims at which the order is fixed again.
    next_ordering: usize,
    /// Per word id: the claims whose prefix holds it, with its position there.
    postings: Vec<Vec<(u32, u32)>>,
    /// Per claim: the last probe that looked at it, so a probe compares each claim once.
    probed: Vec<u32>,
    probe: u32,
}

impl Default for ClaimIndex {
    fn default() -> ClaimIndex {
        ClaimIndex {
            claims: Vec::new(),
            frequency: Vec::new(),
            ordered_by: Vec::new(),
            next_ordering: FIRST_ORDERING,
            postings: Vec::new(),
            probed: Vec::new(),
            probe: 0,
        }
    }
}

impl ClaimIndex {
    /// Counts the claims of the next round that no earlier round made, then files all of them.
    /// A claim found new is filed at once, so its restatement later in the round is not new;
    /// the others are filed when the round is over.
    pub(super) fn round(&mut self, claims: Vec<Claim>) -> u32 {
        let mut fresh = 0;
        let mut repeated = Vec::new();
        for claim in claims {
            let keys = self.keys(claim.iter().copied());
            if self.knows(&keys) {
                repeated.push(keys);
            } else {
                fresh += 1;
                self.file(keys);
            }
        }
        for keys in repeated {
            self.file(keys);
        }
        if self.claims.len() >= self.next_ordering {
            self.reorder();
        }
        fresh
    }

    /// A claim's words as order keys, ascending: rarer (at the last ordering) first, then
    /// newer words first.
    fn keys(&self, words: impl Iterator<Item = u32>) -> Box<[u64]> {
        let mut keys: Vec<u64> = words
            .map(|word| {
                let frequency = self.ordered_by.get(word as usize).copied().unwrap_or(0);
                (u64::from(frequency) << 32) | u64::from(u32::MAX - word)
            })
            .collect();
        keys.sort_unstable();
        keys.into()
    }

    /// Whether a filed claim shares at least half of `claim`'s words (Jaccard >= 1/2).
    ///
    /// A filed claim is first met at the earliest prefix word the two share, so no word before
    /// it in either claim is shared: if the words after it cannot bring the overlap up to what
    /// the threshold needs, the claim is passed over unread (PPJoin's positional filter).
    fn knows(&mut self, claim: &[u64]) -> bool {
        self.probe = self.probe.wrapping_add(1);
        let (shortest, longest) = (claim.len().div_ceil(2), claim.len() * 2);
        for (i, &key) in prefix(claim).iter().enumerate() {
            let Some(posting) = self.postings.get(word(key) as usize) else {
                continue;
            };
            for &(index, j) in posting {
                let index = index as usize;
                if self.probed[index] == self.probe {
                    continue;
                }
                self.probed[index] = self.probe;
                let other = &self.claims[index];
                if (shortest..=longest).contains(&other.len())
                    && half_shared(
                        &claim[i + 1..],
                        &other[j as usize + 1..],
                        claim.len() + other.len(),
                    )
                {
                    return true;
                }
            }
        }
        false
    }

    fn file(&mut self, claim: Box<[u64]>) {
        for &key in claim.iter() {
            let word = word(key) as usize;
            if word >= self.frequency.len() {
                self.frequency.resize(word + 1, 0);
            }
            self.frequency[word] += 1;
        }
        self.post(self.claims.len(), &claim);
        self.claims.push(claim);
        self.probed.push(0);
    }

    fn post(&mut self, index: usize, claim: &[u64]) {
        for (position, &key) in prefix(claim).iter().enumerate() {
            let word = word(key) as usize;
            if word >= self.postings.len() {
                self.postings.resize_with(word + 1, Vec::new);
            }
            self.postings[word].push((index as u32, position as u32));
        }
    }

    /// Fixes the order from today's frequencies and files every claim again under it.
    fn reorder(&mut self) {
        self.ordered_by.clone_from(&self.frequency);
        self.next_ordering = self.claims.len() * 2;
        self.postings.iter_mut().for_each(Vec::clear);
        let claims = std::mem::take(&mut self.claims);
        self.claims = claims
            .iter()
            .map(|claim| self.keys(claim.iter().map(|&key| word(key))))
            .collect();
        for index in 0..self.claims.len() {
            let claim = std::mem::take(&mut self.claims[index]);
            self.post(index, &claim);
            self.claims[index] = claim;
        }
    }
}

/// The word id an order key stands for.
fn word(key: u64) -> u32 {
    u32::MAX - key as u32
}

/// The words of a claim that any claim at Jaccard >= 1/2 with it must share one of.
fn prefix(claim: &[u64]) -> &[u64] {
    &claim[..claim.len() / 2 + 1]
}

/// Whether two claims of `sizes` words in all, sharing one word followed by the sets `a` and
/// `b` (ascending key order), reach Jaccard similarity 1/2: shared / (sizes - shared) >= 1/2,
/// that is 3 * shared >= sizes. Stops as soon as the words left cannot get there.
fn half_shared(a: &[u64], b: &[u64], sizes: usize) -> bool {
    let needed = sizes.div_ceil(3);
    let (mut i, mut j, mut shared) = (0, 0, 1);
    while shared < needed {
        if i == a.len() || j == b.len() || shared + (a.len() - i).min(b.len() - j) < needed {
            return false;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    true
}
