//! Sentence embeddings for the semantic similarity between rounds.
//!
//! Two models: the built-in paraphrase-MiniLM-L3-v2 (4-bit weights compiled into the binary by
//! pocket-encoder: nothing to fetch) and a sentence-transformers BERT directory (all-MiniLM-L6-v2,
//! put in the data dir by `gavel models fetch`). An [`Encoder`] is shared by every debate of the
//! process ([`Encoder::shared`]): its model is loaded once, on first use. A round's text (its
//! first [`MAX_ROUND_BYTES`]) is cut into sentences packed into chunks that fit the model's
//! window, counted with the model's own tokenizer; the chunk vectors are averaged (weighted by
//! their tokens) into the round's unit vector. Vectors are cached by a SHA-256 of the round's
//! text, at most `CACHE_VECTORS` of them, so a round is embedded once however many debates,
//! replays or calibrations read it; and, once a command has called [`keep_vectors_in`], on disk
//! ([`vectors`]), so a later process reads them back instead of embedding again.

mod bert;
mod chunk;
mod error;
pub mod fetch;
mod tally;
pub mod vectors;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokenizers::Tokenizer;

pub use chunk::{Chunk, pack, sentences};
pub use error::{Error, ModelError};
pub use tally::Tally;
use vectors::VectorFile;

/// The most text of one round that is embedded (the rest is not read): bounds the time and
/// memory an untrusted round can cost, about a second with the built-in model.
pub const MAX_ROUND_BYTES: usize = 32 * 1024;
/// Round vectors kept (1.5 KiB each: about 25 MiB at most).
pub(crate) const CACHE_VECTORS: usize = 16_384;
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
    /// A sentence-transformers BERT directory (`bert::FILES`).
    Dir(PathBuf),
}

impl ModelChoice {
    /// The model's name as `similarity_model` records it: [`BUILTIN_NAME`], or the directory's
    /// name in lower case with the first 12 hex digits of the SHA-256 of its weights
    /// (`model.safetensors`), so two models are never named alike. Reads the weights: ask once.
    pub fn name(&self) -> String {
        match self {
            ModelChoice::Builtin => BUILTIN_NAME.to_owned(),
            ModelChoice::Dir(dir) => {
                let base = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().to_lowercase())
                    .unwrap_or_else(|| dir.display().to_string());
                // Unreadable weights fail the model's load, which says why.
                match weights_digest(&dir.join(bert::FILES[0])) {
                    Ok(digest) => format!("{base}-{}", &digest[..12]),
                    Err(_) => base,
                }
            }
        }
    }

    /// Whether the model's files are there, without reading them; the error names the first
    /// file missing.
    pub fn check(&self) -> Result<(), Error> {
        match self {
            ModelChoice::Builtin => Ok(()),
            ModelChoice::Dir(dir) => missing_file(dir).map_or(Ok(()), |file| {
                Err(Error::NoModelFile {
                    dir: dir.clone(),
                    file,
                })
            }),
        }
    }
}

/// The SHA-256 of the file at `path`, in hex, read a MiB at a time.
pub(crate) fn weights_digest(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        context.update(&buffer[..n]);
    }
    Ok(hex(context.finish().as_ref()))
}

/// `bytes` in lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first of a model directory's files that is not there.
pub fn missing_file(dir: &Path) -> Option<&'static str> {
    bert::FILES.into_iter().find(|f| !dir.join(f).is_file())
}

/// A round's unit vector and the tokens embedded for it.
type Embedded = (Arc<[f32]>, u64);

/// A model shared by every debate of the process, loaded on first use, with its vector cache.
/// Clones share both.
#[derive(Clone)]
pub struct Encoder(Arc<Shared>);

struct Shared {
    choice: ModelChoice,
    /// Tokens of a round embedded, from its start ([CLS] and [SEP] included); `None`: the
    /// whole round.
    window: Option<usize>,
    /// The name `similarity_model` records, found on first use ([`ModelChoice::name`]).
    name: OnceLock<String>,
    loaded: OnceLock<Result<Loaded, String>>,
    cache: Mutex<Cache>,
    disk: Mutex<Disk>,
    counters: tally::Counters,
}

/// Where an encoder keeps its vectors beyond the process.
enum Disk {
    /// Nowhere: no command asked for it, or the file failed (said once, in the log).
    Off,
    /// In a file of this directory named after the model, opened on first use (the model
    /// gives the vectors' length).
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

/// Every encoder of the process.
static ENCODERS: Mutex<Vec<Encoder>> = Mutex::new(Vec::new());

/// What each encoder of the process that embedded or read back a vector has done.
pub fn tallies() -> Vec<Tally> {
    let encoders = ENCODERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    encoders
        .iter()
        .map(Encoder::tally)
        .filter(|t| !t.is_empty())
        .collect()
}

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
        write!(
            f,
            "Encoder({:?}, window {:?})",
            self.0.choice, self.0.window
        )
    }
}

impl Encoder {
    /// The process's encoder for `choice` reading the first `window` tokens of a round (the
    /// whole round when `None`), made on first request; the model itself is loaded on first
    /// use, when a round needs a vector.
    pub fn shared(choice: &ModelChoice, window: Option<usize>) -> Encoder {
        let mut encoders = ENCODERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = encoders
            .iter()
            .find(|e| &e.0.choice == choice && e.0.window == window)
        {
            return found.clone();
        }
        let encoder = Encoder(Arc::new(Shared {
            choice: choice.clone(),
            window,
            name: OnceLock::new(),
            loaded: OnceLock::new(),
            cache: Mutex::new(Cache::default()),
            disk: Mutex::new(VECTOR_DIR.get().cloned().map_or(Disk::Off, Disk::Closed)),
            counters: tally::Counters::default(),
        }));
        encoders.push(encoder.clone());
        encoder
    }

    /// The name `similarity_model` records: the model's ([`ModelChoice::name`]), with
    /// `@<window>` when only the first `window` tokens of a round are read.
    pub fn name(&self) -> &str {
        self.0.name.get_or_init(|| match self.0.window {
            Some(window) => format!("{}@{window}", self.0.choice.name()),
            None => self.0.choice.name(),
        })
    }

    /// Loads the model now if it is not loaded yet.
    pub fn load(&self) -> Result<(), ModelError> {
        self.loaded().map(|_| ())
    }

    fn loaded(&self) -> Result<&Loaded, ModelError> {
        self.0
            .loaded
            .get_or_init(|| load(&self.0.choice))
            .as_ref()
            .map_err(|why| ModelError::Load {
                model: self.name().to_owned(),
                why: why.clone(),
            })
    }

    /// The unit vector of a round made of `turns`; `None` when they hold no text.
    pub fn round(&self, turns: &[&str]) -> Result<Option<Arc<[f32]>>, ModelError> {
        self.vector(&round_text(turns))
    }

    /// The unit vector of a round's text ([`round_text`]); `None` when it holds none.
    pub fn vector(&self, text: &str) -> Result<Option<Arc<[f32]>>, ModelError> {
        let key: [u8; 32] = ring::digest::digest(&ring::digest::SHA256, text.as_bytes())
            .as_ref()
            .try_into()
            .expect("a SHA-256 is 32 bytes");
        if let Some(found) = self.cache().get(&key) {
            return Ok(Some(found));
        }
        if let Some(kept) = self.kept(&key) {
            self.0.counters.read_back();
            let vector: Arc<[f32]> = kept.into();
            self.cache().insert(key, vector.clone());
            return Ok(Some(vector));
        }
        let Some((vector, tokens)) = self.0.counters.timed(|| self.embed(text))? else {
            return Ok(None);
        };
        self.0.counters.embedded(tokens);
        self.cache().insert(key, vector.clone());
        self.keep(key, &vector);
        Ok(Some(vector))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.0.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the encoder has done so far.
    pub fn tally(&self) -> Tally {
        let kept_in = match &*self.0.disk.lock().unwrap_or_else(|e| e.into_inner()) {
            Disk::Open(file) => Some(file.path().to_owned()),
            _ => None,
        };
        self.0.counters.tally(self.name(), kept_in)
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
        if let Disk::Closed(dir) = &*disk
            && let Ok(loaded) = self.loaded()
        {
            let path = dir.join(format!("{}.vectors", self.name()));
            *disk = match VectorFile::open(&path, loaded.dimensions) {
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

    /// The chunks `text` is embedded as: its first `window` tokens when the encoder has one.
    pub fn chunks(&self, text: &str) -> Result<Vec<Chunk>, ModelError> {
        let loaded = self.loaded()?;
        let text = match self.0.window {
            Some(window) => &text[..loaded.measure(text, window.saturating_sub(2)).1],
            None => text,
        };
        // Two special tokens ([CLS], [SEP]) go round every chunk.
        let window = loaded.window - 2;
        Ok(pack(text, window, |sentence| {
            loaded.measure(sentence, window)
        }))
    }

    /// The unit vector of `text` and the tokens embedded for it (special tokens included).
    fn embed(&self, text: &str) -> Result<Option<Embedded>, ModelError> {
        let loaded = self.loaded()?;
        let chunks = self.chunks(text)?;
        if chunks.is_empty() {
            return Ok(None);
        }
        let vectors: Vec<Vec<f32>> = match &loaded.backend {
            Backend::Builtin(encoder) => encoder
                .embed(&chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>())
                .map_err(|e| ModelError::Embed(e.to_string()))?,
            Backend::Bert(model) => chunks
                .iter()
                .map(|chunk| {
                    let encoding = loaded
                        .tokenizer
                        .encode(chunk.text.as_str(), true)
                        .map_err(|e| ModelError::Embed(e.to_string()))?;
                    let mut ids = encoding.get_ids().to_vec();
                    if ids.len() > model.window {
                        let last = ids[ids.len() - 1];
                        ids.truncate(model.window - 1);
                        ids.push(last);
                    }
                    model
                        .embed(&ids)
                        .map_err(|e| ModelError::Embed(e.to_string()))
                })
                .collect::<Result<_, ModelError>>()?,
        };
        let tokens = chunks.iter().map(|c| c.tokens as u64 + 2).sum();
        Ok(average(&chunks, &vectors).map(|vector| (vector, tokens)))
    }
}

impl Loaded {
    /// Tokens in `text` (special tokens not counted) and the byte length of its longest prefix
    /// of at most `limit` tokens; text the tokenizer refuses counts none and is not embedded.
    fn measure(&self, text: &str, limit: usize) -> (usize, usize) {
        let Ok(encoding) = self.tokenizer.encode(text, false) else {
            return (0, 0);
        };
        let count = encoding.len();
        let fits = match encoding.get_offsets().get(limit.wrapping_sub(1)) {
            _ if count <= limit => text.len(),
            Some(&(_, end)) => floor_char(text, end),
            None => 0,
        };
        (count, fits)
    }
}

/// The chunk vectors averaged, each weighted by its tokens, as a unit vector; `None` when
/// nothing is left (every vector zero or not finite).
fn average(chunks: &[Chunk], vectors: &[Vec<f32>]) -> Option<Arc<[f32]>> {
    let mut sum = vec![0f64; vectors[0].len()];
    for (chunk, vector) in chunks.iter().zip(vectors) {
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
        return None;
    }
    Some(sum.iter().map(|v| (v / norm) as f32).collect())
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

/// A round's turns as one text (what is embedded of it), cut to [`MAX_ROUND_BYTES`] at a character boundary.
pub fn round_text(turns: &[&str]) -> String {
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
            choice.check().map_err(|e| e.to_string())?;
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
