//! A debate's words interned once: each turn is read a single time into term ids, giving both
//! the round's term counts (for TF-IDF) and its claims (one id set per sentence), by the rules
//! of [`super::text`].

use rustc_hash::FxHashMap;

use super::text::{claim_line, ends_sentence, is_stopword, long_enough};

/// The distinct content words of one sentence, as ids.
pub(super) type Claim = Box<[u32]>;

/// Claims need at least this many distinct content words.
const MIN_CLAIM_WORDS: usize = 3;

/// What one round says, in term ids.
#[derive(Debug, Default)]
pub struct RoundTerms {
    /// Each content word of the round with its count, by ascending id.
    pub counts: Vec<(u32, u32)>,
    /// The round's claims, in the order its turns make them.
    pub claims: Vec<Claim>,
}

/// Every word a debate has used, each with a dense id in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Vocabulary {
    ids: FxHashMap<Box<str>, u32>,
    /// Per id: the word is a stopword (interned too, so it is looked up only once).
    stopword: Vec<bool>,
}

impl Vocabulary {
    /// Reads the turns of one round.
    pub(super) fn round(&mut self, turns: &[&str]) -> RoundTerms {
        let mut words = Vec::new();
        let mut claims = Vec::new();
        let mut sentence = Vec::new();
        for turn in turns {
            for line in turn.lines() {
                match claim_line(line) {
                    Some(line) => {
                        self.read_claim_line(line, &mut words, &mut sentence, &mut claims)
                    }
                    None => self.read_words(line, &mut words),
                }
            }
        }
        RoundTerms {
            counts: counted(words),
            claims,
        }
    }

    /// Words of a heading or `VERDICT:` line: counted, never part of a claim.
    fn read_words(&mut self, line: &str, words: &mut Vec<u32>) {
        for word in line.split(|c: char| !c.is_alphanumeric()) {
            if let Some(id) = self.content_word(word) {
                words.push(id);
            }
        }
    }

    /// Words of a line claims are read from, ending a claim at each sentence break.
    fn read_claim_line(
        &mut self,
        line: &str,
        words: &mut Vec<u32>,
        sentence: &mut Vec<u32>,
        claims: &mut Vec<Claim>,
    ) {
        let mut start = None;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_alphanumeric() {
                start.get_or_insert(i);
                continue;
            }
            if let Some(from) = start.take()
                && let Some(id) = self.content_word(&line[from..i])
            {
                words.push(id);
                sentence.push(id);
            }
            if ends_sentence(c, chars.peek().map(|&(_, next)| next)) {
                close_claim(sentence, claims);
            }
        }
        if let Some(from) = start
            && let Some(id) = self.content_word(&line[from..])
        {
            words.push(id);
            sentence.push(id);
        }
        close_claim(sentence, claims);
    }

    /// The id of `word` when it is a content word (long enough, not a stopword).
    fn content_word(&mut self, word: &str) -> Option<u32> {
        if !long_enough(word) {
            return None;
        }
        let id = if !word.is_ascii() {
            self.intern(&word.to_lowercase())
        } else if word.bytes().any(|b| b.is_ascii_uppercase()) {
            self.intern(&word.to_ascii_lowercase())
        } else {
            self.intern(word)
        };
        (!self.stopword[id as usize]).then_some(id)
    }

    fn intern(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = self.stopword.len() as u32;
        self.ids.insert(word.into(), id);
        self.stopword.push(is_stopword(word));
        id
    }
}

/// Ends the sentence in progress: a claim when it has enough distinct words.
fn close_claim(sentence: &mut Vec<u32>, claims: &mut Vec<Claim>) {
    sentence.sort_unstable();
    sentence.dedup();
    if sentence.len() >= MIN_CLAIM_WORDS {
        claims.push(sentence.as_slice().into());
    }
    sentence.clear();
}

/// Each id with the number of times it occurs, by ascending id.
fn counted(mut words: Vec<u32>) -> Vec<(u32, u32)> {
    words.sort_unstable();
    let mut counts: Vec<(u32, u32)> = Vec::new();
    for id in words {
        match counts.last_mut() {
            Some((last, n)) if *last == id => *n += 1,
            _ => counts.push((id, 1)),
        }
    }
    counts
}
