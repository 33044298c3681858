//! The semantic similarity: the cosine between consecutive rounds' sentence embeddings, as the
//! seed orchestrator measures it. The vectors come from a shared [`Encoder`] (one model per
//! process, vectors cached per round text), so a round costs one embedding however many
//! debates or replays read it.

use std::sync::Arc;

use super::similarity::{MeasuredRound, Similarity};
use crate::embed::{self, Encoder};

/// Cosine of the last two rounds' embeddings. A round the model cannot embed (no text, or the
/// model failed to load, which is logged once) has no vector and measures 0.
#[derive(Debug)]
pub struct SemanticCosine {
    encoder: Encoder,
    previous: Option<Arc<[f32]>>,
    current: Option<Arc<[f32]>>,
}

impl SemanticCosine {
    pub fn new(encoder: Encoder) -> SemanticCosine {
        SemanticCosine {
            encoder,
            previous: None,
            current: None,
        }
    }
}

impl Similarity for SemanticCosine {
    fn push(&mut self, round: MeasuredRound<'_>) {
        let vector = self.encoder.round(round.turns).unwrap_or_else(|e| {
            log_once(&e);
            None
        });
        self.previous = std::mem::replace(&mut self.current, vector);
    }

    fn latest(&mut self) -> f64 {
        match (&self.previous, &self.current) {
            (Some(a), Some(b)) => embed::cosine(a, b),
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
