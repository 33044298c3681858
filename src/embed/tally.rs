//! What an encoder has done, for the note every command that embeds prints on stderr: rounds
//! embedded (their tokens, and the wall time spent embedding, however many threads embedded at
//! once) and rounds whose vector was read back from the file of kept vectors instead.

use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An encoder's counters, shared by the threads that embed with it.
#[derive(Default)]
pub(super) struct Counters {
    embedded: AtomicU64,
    tokens: AtomicU64,
    read_back: AtomicU64,
    busy: Mutex<Busy>,
}

/// Wall time during which at least one embedding ran.
#[derive(Default)]
struct Busy {
    running: u32,
    since: Option<Instant>,
    total: Duration,
}

impl Counters {
    /// Times `embed` as part of the encoder's busy wall time.
    pub(super) fn timed<T>(&self, embed: impl FnOnce() -> T) -> T {
        self.busy(|busy| {
            if busy.running == 0 {
                busy.since = Some(Instant::now());
            }
            busy.running += 1;
        });
        let result = embed();
        self.busy(|busy| {
            busy.running -= 1;
            if busy.running == 0
                && let Some(since) = busy.since.take()
            {
                busy.total += since.elapsed();
            }
        });
        result
    }

    fn busy(&self, change: impl FnOnce(&mut Busy)) {
        change(&mut self.busy.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// A round embedded, of `tokens` tokens (special tokens included).
    pub(super) fn embedded(&self, tokens: u64) {
        self.embedded.fetch_add(1, Ordering::Relaxed);
        self.tokens.fetch_add(tokens, Ordering::Relaxed);
    }

    pub(super) fn read_back(&self) {
        self.read_back.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn tally(&self, model: &str, kept_in: Option<PathBuf>) -> Tally {
        let busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let running = busy.since.map_or(Duration::ZERO, |since| since.elapsed());
        Tally {
            model: model.to_owned(),
            embedded: self.embedded.load(Ordering::Relaxed),
            tokens: self.tokens.load(Ordering::Relaxed),
            spent: busy.total + running,
            read_back: self.read_back.load(Ordering::Relaxed),
            kept_in,
        }
    }
}

/// What an encoder has done so far: rounds embedded (`tokens` in all, in `spent` wall time),
/// and rounds whose vector was read back from the file of kept vectors (`kept_in`) instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub model: String,
    pub embedded: u64,
    pub tokens: u64,
    pub spent: Duration,
    pub read_back: u64,
    pub kept_in: Option<PathBuf>,
}

impl Tally {
    /// Whether the encoder has embedded or read back anything.
    pub fn is_empty(&self) -> bool {
        self.embedded == 0 && self.read_back == 0
    }

    /// Tokens embedded per second of wall time.
    pub fn tokens_per_second(&self) -> f64 {
        self.tokens as f64 / self.spent.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Tally {
    /// `similarity vectors: N rounds embedded, M read back from FILE (MODEL: T tokens embedded
    /// in S s, R tokens/s)`; `none kept between runs` in place of the file when none is kept.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "similarity vectors: {} rounds embedded, ", self.embedded)?;
        match &self.kept_in {
            Some(path) => write!(f, "{} read back from {}", self.read_back, path.display())?,
            None => f.write_str("none kept between runs")?,
        }
        write!(f, " ({}", self.model)?;
        if self.embedded > 0 {
            write!(
                f,
                ": {} tokens embedded in {:.1} s, {:.0} tokens/s",
                self.tokens,
                self.spent.as_secs_f64(),
                self.tokens_per_second()
            )?;
        }
        f.write_str(")")
    }
}
