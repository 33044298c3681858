//! Sentence embeddings for the semantic similarity between rounds.
//!
//! Two models: the built-in paraphrase-MiniLM-L3-v2 (4-bit weights compiled into the binary by
//! pocket-encoder: nothing to fetch) and a sentence-transformers BERT directory (all-MiniLM-L6-v2,
//! put in the data dir by `gavel models fetch`). An [`Encoder`] is shared by every debate of the
//! process ([`Encoder::shared`]): its model is loaded once, on first use. A round's text (its
//! first [`MAX_ROUND_BYTES`]) is cut into sentences packed into chunks that fit the model's
//! window, counted with the model's own tokenizer; the chunk vectors are averaged (weighted by
//! their tokens) into the round's unit vector. Vectors are cached by a SHA-256 of the round's
//! text, at most [`CACHE_VECTORS`] of them, so a round is embedded once however many debates,
//! replays or calibrations read it; and, once a command has called [`keep_vectors_in`], on disk
//! ([`vectors`]), so a later process reads them back instead of embedding again.

mod bert;
mod chunk;
pub mod fetch;
pub mod vectors;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokenizers::Tokenizer;

pub use chunk::{Chunk, pack, sentences};
use vectors::VectorFile;

/// The most text of one round that is embedded (the rest is not read): bounds the time and
/// memory an untrusted round can cost, about a second with the built-in model.
pub const MAX_ROUND_BYTES: usize = 32 * 1024;
/// Round vectors kept (1.5 KiB each: about 25 MiB at most).
pub const CACHE_VECTORS: usize = 16_384;
/// The built-in model's name, as `similarity_model` records it.
pub const BUILTIN_NAME: &str = "paraphrase-minilm-l3-v2-q4";
/// The built-in model's tokenizer, the very file pocket-encoder compiles in (a test checks its
/// SHA-256 against the crate's): chunks are counted with it.
const BUILTIN_TOKENIZER: &[u8] =
    include_bytes!("../../assets/paraphrase-minilm-l3-v2/tokenizer.json");
/// The built-in model's window, special tokens included.
const BUILTIN_WINDOW: usize = 128;

/// Which model embeds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModelChoice {
    /// paraphrase-MiniLM-L3-v2, compiled in.
    Builtin,
    /// A sentence-transformers BERT directory ([`bert::FILES`]).
    Dir(PathBuf),
}

impl ModelChoice {
    /// The model's name: [`BUILTIN_NAME`], or the directory's name in lower case.
    pub fn name(&self) -> String {
        match self {
            ModelChoice::Builtin => BUILTIN_NAME.to_owned(),
            ModelChoice::Dir(dir) => dir
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_else(|| dir.display().to_string()),
        }
    }

    /// Whether the model's files are there, without reading them; the error names the first
    /// file missing.
    pub fn check(&self) -> Result<(), String> {
        match self {
            ModelChoice::Builtin => Ok(()),
            ModelChoice::Dir(dir) => missing_file(dir).map_or(Ok(()), |path| {
                Err(format!(
                    "model directory {}: no {} (fetch the model with `gavel models fetch`)",
                    dir.display(),
                    path
                ))
            }),
        }
    }
}

/// The first of a model directory's files that is not there.
pub fn missing_file(dir: &Path) -> Option<&'static str> {
    bert::FILES.into_iter().find(|f| !dir.join(f).is_file())
}

/// A model shared by every debate of the process, loaded on first use, with its vector cache.
/// Clones share both.
#[derive(Clone)]
pub struct Encoder(Arc<Shared>);

struct Shared {
    choice: ModelChoice,
    name: String,
    loaded: OnceLock<Result<Loaded, String>>,
    cache: Mutex<Cache>,
    disk: Mutex<Disk>,
    embedded: AtomicU64,
    read_back: AtomicU64,
}

/// What an encoder has done so far: rounds embedded, and rounds whose vector was read back from
/// the file of kept vectors (`kept_in`) instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub embedded: u64,
    pub read_back: u64,
    pub kept_in: Option<PathBuf>,
}

/// Where an encoder keeps its vectors beyond the process.
enum Disk {
    /// Nowhere: no command asked for it, or the file failed (said once, in the log).
    Off,
    /// In this file, opened on first use (the model gives the vectors' length).
    Closed(PathBuf),
    Open(VectorFile),
}

/// The directory every encoder made from now on keeps its vectors in, a file per model
/// (`<model name>.vectors`). Commands that embed call it once, at start; tests do not, so they
/// write nothing.
pub fn keep_vectors_in(dir: PathBuf) {
    let _ = VECTOR_DIR.set(dir);
}

static VECTOR_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Where vectors are kept when the configuration does not say: the data dir's `vectors`.
pub fn default_vector_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("gavel").join("vectors"))
}

struct Loaded {
    backend: Backend,
    /// Counts tokens (no truncation, no padding).
    tokenizer: Tokenizer,
    /// Tokens per input, special tokens included.
    window: usize,
    /// The length of its vectors.
    dimensions: usize,
}

enum Backend {
    Builtin(pocket_encoder::Encoder),
    Bert(Box<bert::Bert>),
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encoder({})", self.0.name)
    }
}

impl Encoder {
    /// The process's encoder for `choice`, made on first request (the model itself is loaded
    /// on first use).
    pub fn shared(choice: &ModelChoice) -> Encoder {
        static ENCODERS: Mutex<Vec<Encoder>> = Mutex::new(Vec::new());
        let mut encoders = ENCODERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = encoders.iter().find(|e| &e.0.choice == choice) {
            return found.clone();
        }
        let disk = match VECTOR_DIR.get() {
            Some(dir) => Disk::Closed(dir.join(format!("{}.vectors", choice.name()))),
            None => Disk::Off,
        };
        let encoder = Encoder(Arc::new(Shared {
            name: choice.name(),
            choice: choice.clone(),
            loaded: OnceLock::new(),
            cache: Mutex::new(Cache::default()),
            disk: Mutex::new(disk),
            embedded: AtomicU64::new(0),
            read_back: AtomicU64::new(0),
        }));
        encoders.push(encoder.clone());
        encoder
    }

    /// The model's name, as `similarity_model` records it.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Loads the model now if it is not loaded yet.
    pub fn load(&self) -> Result<(), String> {
        self.loaded().map(|_| ())
    }

    fn loaded(&self) -> Result<&Loaded, String> {
        self.0
            .loaded
            .get_or_init(|| load(&self.0.choice))
            .as_ref()
            .map_err(|e| format!("the similarity model {}: {e}", self.0.name))
    }

    /// The unit vector of a round made of `turns`; `None` when they hold no text.
    pub fn round(&self, turns: &[&str]) -> Result<Option<Arc<[f32]>>, String> {
        let text = round_text(turns);
        let key: [u8; 32] = ring::digest::digest(&ring::digest::SHA256, text.as_bytes())
            .as_ref()
            .try_into()
            .expect("a SHA-256 is 32 bytes");
        if let Some(found) = self.cache().get(&key) {
            return Ok(Some(found));
        }
        if let Some(kept) = self.kept(&key) {
            self.0.read_back.fetch_add(1, Ordering::Relaxed);
            let vector: Arc<[f32]> = kept.into();
            self.cache().insert(key, vector.clone());
            return Ok(Some(vector));
        }
        let Some(vector) = self.embed(&text)? else {
            return Ok(None);
        };
        self.0.embedded.fetch_add(1, Ordering::Relaxed);
        self.cache().insert(key, vector.clone());
        self.keep(key, &vector);
        Ok(Some(vector))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.0.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the encoder has done so far.
    pub fn tally(&self) -> Tally {
        Tally {
            embedded: self.0.embedded.load(Ordering::Relaxed),
            read_back: self.0.read_back.load(Ordering::Relaxed),
            kept_in: match &*self.0.disk.lock().unwrap_or_else(|e| e.into_inner()) {
                Disk::Open(file) => Some(file.path().to_owned()),
                _ => None,
            },
        }
    }

    /// The vector kept on disk for `key`.
    fn kept(&self, key: &[u8; 32]) -> Option<Vec<f32>> {
        match &*self.disk() {
            Disk::Open(file) => file.get(key),
            _ => None,
        }
    }

    /// Keeps `vector` on disk; a file that cannot take it is said in the log and not used again.
    fn keep(&self, key: [u8; 32], vector: &[f32]) {
        let mut disk = self.disk();
        if let Disk::Open(file) = &mut *disk
            && let Err(error) = file.put(key, vector)
        {
            tracing::warn!("similarity vectors are no longer kept: {error}");
            *disk = Disk::Off;
        }
    }

    /// The vector file, opened on first use once the model is loaded (a file that fails to open
    /// is said in the log and not tried again).
    fn disk(&self) -> std::sync::MutexGuard<'_, Disk> {
        let mut disk = self.0.disk.lock().unwrap_or_else(|e| e.into_inner());
        if let Disk::Closed(path) = &*disk
            && let Ok(loaded) = self.loaded()
        {
            *disk = match VectorFile::open(path, loaded.dimensions) {
                Ok(file) => {
                    tracing::info!(
                        "similarity vectors: {} kept in {}",
                        file.len(),
                        path.display()
                    );
                    Disk::Open(file)
                }
                Err(error) => {
                    tracing::warn!("similarity vectors are not kept: {error}");
                    Disk::Off
                }
            };
        }
        disk
    }

    /// The chunks `text` is embedded as.
    pub fn chunks(&self, text: &str) -> Result<Vec<Chunk>, String> {
        let loaded = self.loaded()?;
        // Two special tokens ([CLS], [SEP]) go round every chunk.
        let window = loaded.window - 2;
        Ok(pack(text, window, |sentence| {
            match loaded.tokenizer.encode(sentence, false) {
                Ok(encoding) => {
                    let count = encoding.len();
                    let fits = match encoding.get_offsets().get(window.wrapping_sub(1)) {
                        Some(&(_, end)) if count > window => floor_char(sentence, end),
                        _ => sentence.len(),
                    };
                    (count, fits)
                }
                // Text the tokenizer refuses is not embedded.
                Err(_) => (0, 0),
            }
        }))
    }

    fn embed(&self, text: &str) -> Result<Option<Arc<[f32]>>, String> {
        let loaded = self.loaded()?;
        let chunks = self.chunks(text)?;
        if chunks.is_empty() {
            return Ok(None);
        }
        let vectors: Vec<Vec<f32>> = match &loaded.backend {
            Backend::Builtin(encoder) => encoder
                .embed(&chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>())
                .map_err(|e| e.to_string())?,
            Backend::Bert(model) => chunks
                .iter()
                .map(|chunk| {
                    let encoding = loaded
                        .tokenizer
                        .encode(chunk.text.as_str(), true)
                        .map_err(|e| e.to_string())?;
                    let mut ids = encoding.get_ids().to_vec();
                    if ids.len() > model.window {
                        let last = ids[ids.len() - 1];
                        ids.truncate(model.window - 1);
                        ids.push(last);
                    }
                    model.embed(&ids).map_err(|e| e.to_string())
                })
                .collect::<Result<_, String>>()?,
        };
        let mut sum = vec![0f64; vectors[0].len()];
        for (chunk, vector) in chunks.iter().zip(&vectors) {
            let norm = vector
                .iter()
                .map(|&v| f64::from(v).powi(2))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 && norm.is_finite() {
                let weight = chunk.tokens as f64 / norm;
                sum.iter_mut()
                    .zip(vector)
                    .for_each(|(s, &v)| *s += weight * f64::from(v));
            }
        }
        let norm = sum.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return Ok(None);
        }
        Ok(Some(sum.iter().map(|v| (v / norm) as f32).collect()))
    }
}

/// The cosine of two unit vectors, in `0.0..=1.0` (opposed vectors count as unrelated).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    dot.clamp(0.0, 1.0)
}

/// A round's turns as one text, cut to [`MAX_ROUND_BYTES`] at a character boundary.
fn round_text(turns: &[&str]) -> String {
    let mut text = String::new();
    for turn in turns {
        if text.len() >= MAX_ROUND_BYTES {
            break;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&turn[..floor_char(turn, MAX_ROUND_BYTES - text.len())]);
    }
    text
}

/// The largest character boundary of `text` at or below `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn load(choice: &ModelChoice) -> Result<Loaded, String> {
    let (backend, tokenizer, window, dimensions) = match choice {
        ModelChoice::Builtin => (
            Backend::Builtin(pocket_encoder::Encoder::new().map_err(|e| e.to_string())?),
            Tokenizer::from_bytes(BUILTIN_TOKENIZER).map_err(|e| e.to_string())?,
            BUILTIN_WINDOW,
            pocket_encoder::model_info().dimensions,
        ),
        ModelChoice::Dir(dir) => {
            choice.check()?;
            let path = dir.join("tokenizer.json");
            let tokenizer =
                Tokenizer::from_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let model = bert::Bert::load(dir)?;
            let (window, dimensions) = (model.window, model.dimensions);
            (
                Backend::Bert(Box::new(model)),
                tokenizer,
                window,
                dimensions,
            )
        }
    };
    let mut tokenizer = tokenizer;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|e| e.to_string())?;
    Ok(Loaded {
        backend,
        tokenizer,
        window,
        dimensions,
    })
}

/// Round vectors by the SHA-256 of the round's text; the oldest goes first when full.
#[derive(Default)]
struct Cache {
    vectors: HashMap<[u8; 32], Arc<[f32]>>,
    order: VecDeque<[u8; 32]>,
}

impl Cache {
    fn get(&self, key: &[u8; 32]) -> Option<Arc<[f32]>> {
        self.vectors.get(key).cloned()
    }

    fn insert(&mut self, key: [u8; 32], vector: Arc<[f32]>) {
        if self.vectors.insert(key, vector).is_none() {
            self.order.push_back(key);
            while self.order.len() > CACHE_VECTORS {
                if let Some(oldest) = self.order.pop_front() {
                    self.vectors.remove(&oldest);
                }
            }
        }
    }
}
