//! The semantic similarity: the cosine between consecutive rounds' sentence embeddings, as the
//! seed orchestrator measures it. The vectors come from a shared [`Encoder`] (one model per
//! process, vectors cached per round text), so a round costs one embedding however many
//! debates or replays read it; and a round is embedded only when a similarity is asked of it or
//! of the round after it, so rounds whose similarity was recorded load no model.

use std::sync::Arc;

use super::similarity::{MeasuredRound, Similarity};
use crate::embed::{self, Encoder};

/// Cosine of the last two rounds' embeddings. A round the model cannot embed (no text, or the
/// model failed to load, which is logged once) has no vector and measures 0.
#[derive(Debug)]
pub struct SemanticCosine {
    encoder: Encoder,
    previous: Round,
    current: Round,
}

/// A round as the measure holds it: its text until a vector is asked of it (at most the
/// first [`embed::MAX_ROUND_BYTES`]), then its vector.
#[derive(Debug, Default)]
enum Round {
    #[default]
    None,
    Text(String),
    Vector(Option<Arc<[f32]>>),
}

impl Round {
    fn vector(&mut self, encoder: &Encoder) -> Option<Arc<[f32]>> {
        if let Round::Text(text) = self {
            let vector = encoder.vector(text).unwrap_or_else(|e| {
                log_once(&e.to_string());
                None
            });
            *self = Round::Vector(vector);
        }
        match self {
            Round::Vector(vector) => vector.clone(),
            _ => None,
        }
    }
}

impl SemanticCosine {
    pub fn new(encoder: Encoder) -> SemanticCosine {
        SemanticCosine {
            encoder,
            previous: Round::None,
            current: Round::None,
        }
    }
}

impl Similarity for SemanticCosine {
    fn push(&mut self, round: MeasuredRound<'_>) {
        let text = Round::Text(embed::round_text(round.turns));
        self.previous = std::mem::replace(&mut self.current, text);
    }

    fn latest(&mut self) -> f64 {
        match (
            self.previous.vector(&self.encoder),
            self.current.vector(&self.encoder),
        ) {
            (Some(a), Some(b)) => embed::cosine(&a, &b),
            _ => 0.0,
        }
    }

    fn model(&self) -> &str {
        self.encoder.name()
    }
}

/// Logs a model failure the first time it is seen: every later round would repeat it.
fn log_once(error: &str) {
    static LOGGED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    if !logged.iter().any(|e| e == error) {
        tracing::error!("{error}; rounds measure similarity 0");
        logged.push(error.to_owned());
    }
}
