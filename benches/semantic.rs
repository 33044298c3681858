//! `cargo bench --bench semantic`: what the semantic similarity costs, beside the TF-IDF cosine
//! in the same run. Prints figures: model load time and resident memory, then per-round latency
//! (a round measured against the one before it, its vector not cached) for a 2 KB and a 25 KB
//! round, and a round whose vector is cached. The built-in model always; all-MiniLM-L6-v2 when
//! its files are in the data dir (`gavel models fetch`) or in GAVEL_TEST_MODEL_DIR.
//!
//! Round texts are the bundled fixtures' turns, repeated to size, each made distinct by a
//! leading sentence so no vector comes from the cache unless asked for.
//!
//! Then each model against its floor: its FLOPs per token (from its shape: layers, hidden and
//! intermediate sizes, window), this machine's f32 matrix-multiply rate measured on the same
//! shapes (candle, every core), and the tokens per second the release binary embeds, cold, from
//! a fresh home (`gavel calibrate DIR --similarity semantic` over generated recordings: its
//! stderr note), whole rounds and `[signals] window = 256`. Last, what the window changes on
//! the bundled and generated debates: time, and how far each round's similarity moves.
//!
//! `cargo bench --bench semantic -- latency floor window` picks sections (all by default).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gavel::embed::{Encoder, ModelChoice};
use gavel::signals::{DebateSignals, Measure, RoundText};
use gavel::simulate::Fixture;
use generated::{FreshHome, Generator, write_recordings};

mod generated;

const SAMPLES: usize = 5;

fn main() {
    let picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| picked.is_empty() || picked.iter().any(|p| p == name);
    let mut models = vec![Model::BUILTIN];
    if let Some(dir) = fetched() {
        models.push(Model::l6(dir));
    }
    if wanted("latency") {
        latency();
    }
    if wanted("floor") {
        floor(&models);
    }
    if wanted("window") {
        window(&models);
    }
}

/// A model's name, directory (none for the built-in one) and shape.
struct Model {
    name: &'static str,
    dir: Option<PathBuf>,
    layers: usize,
    hidden: usize,
    intermediate: usize,
    /// Tokens per input, special tokens included.
    window: usize,
}

impl Model {
    /// paraphrase-MiniLM-L3-v2 (its config.json: 3 layers, 384, 1536; 128 tokens in gavel).
    const BUILTIN: Model = Model {
        name: "built-in paraphrase-MiniLM-L3-v2 (4-bit)",
        dir: None,
        layers: 3,
        hidden: 384,
        intermediate: 1536,
        window: 128,
    };

    /// all-MiniLM-L6-v2, its shape read from its config.json.
    fn l6(dir: PathBuf) -> Model {
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        let size = |key: &str| config[key].as_u64().unwrap() as usize;
        Model {
            name: "all-MiniLM-L6-v2 (f32)",
            layers: size("num_hidden_layers"),
            hidden: size("hidden_size"),
            intermediate: size("intermediate_size"),
            window: 256,
            dir: Some(dir),
        }
    }

    fn choice(&self) -> ModelChoice {
        self.dir
            .clone()
            .map_or(ModelChoice::Builtin, ModelChoice::Dir)
    }

    /// Multiply-adds counted twice, per token of a full window: the Q, K, V and output
    /// projections (4 h x h), the feed-forward pair (2 h x i), and attention over the window
    /// (scores and weighted sum, 2 x window x h), every layer.
    fn flops_per_token(&self) -> f64 {
        let (h, i, n) = (
            self.hidden as f64,
            self.intermediate as f64,
            self.window as f64,
        );
        self.layers as f64 * 2.0 * (4.0 * h * h + 2.0 * h * i + 2.0 * n * h)
    }
}

fn latency() {
    let corpus: String = Fixture::bundled()
        .expect("bundled fixtures")
        .iter()
        .flat_map(|f| f.turns.iter().map(|t| t.content.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    println!(
        "machine: {} threads; {SAMPLES} samples per figure, median shown",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    let mut measures = vec![("tf-idf (baseline)".to_owned(), Measure::Lexical)];
    let rss = rss_kib();
    let started = Instant::now();
    let builtin = Encoder::shared(&ModelChoice::Builtin, None);
    builtin.load().expect("the built-in model loads");
    println!(
        "load built-in paraphrase-MiniLM-L3-v2 (4-bit, compiled in): {:.0?}, RSS +{} MiB",
        started.elapsed(),
        (rss_kib() - rss) / 1024
    );
    measures.push((
        "built-in minilm-l3 q4".to_owned(),
        Measure::Semantic(builtin),
    ));
    match fetched() {
        Some(dir) => {
            let rss = rss_kib();
            let started = Instant::now();
            let encoder = Encoder::shared(&ModelChoice::Dir(dir.clone()), None);
            encoder.load().expect("all-MiniLM-L6-v2 loads");
            println!(
                "load all-MiniLM-L6-v2 (f32, {}): {:.0?}, RSS +{} MiB",
                dir.display(),
                started.elapsed(),
                (rss_kib() - rss) / 1024
            );
            measures.push((
                "all-MiniLM-L6-v2 f32".to_owned(),
                Measure::Semantic(encoder),
            ));
        }
        None => println!("all-MiniLM-L6-v2: not fetched (gavel models fetch), not measured"),
    }
    println!("RSS with the models loaded: {} MiB", rss_kib() / 1024);
    println!();
    println!(
        "{:<24} {:>14} {:>14} {:>14}",
        "measure", "2 KB round", "25 KB round", "cached round"
    );
    let mut serial = 0;
    for (name, measure) in &measures {
        let mut cells = Vec::new();
        for size in [2_000, 25_000] {
            let times: Vec<Duration> = (0..SAMPLES)
                .map(|_| {
                    serial += 1;
                    let previous = round(&corpus, size, serial);
                    serial += 1;
                    let next = round(&corpus, size, serial);
                    let mut signals = DebateSignals::new(measure.similarity());
                    push(&mut signals, &previous);
                    let started = Instant::now();
                    push(&mut signals, &next);
                    started.elapsed()
                })
                .collect();
            cells.push(median(times));
        }
        let cached = round(&corpus, 2_000, 0);
        let mut signals = DebateSignals::new(measure.similarity());
        push(&mut signals, &cached);
        let times = (0..SAMPLES)
            .map(|_| {
                let started = Instant::now();
                push(&mut signals, &cached);
                started.elapsed()
            })
            .collect();
        cells.push(median(times));
        println!(
            "{name:<24} {:>14} {:>14} {:>14}",
            format!("{:.2?}", cells[0]),
            format!("{:.2?}", cells[1]),
            format!("{:.2?}", cells[2])
        );
    }
}

/// all-MiniLM-L6-v2's directory, when its files are there.
fn fetched() -> Option<PathBuf> {
    std::env::var_os("GAVEL_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .or_else(gavel::embed::fetch::default_dir)
        .filter(|dir| gavel::embed::missing_file(dir).is_none())
}

/// A round of about `size` bytes, distinct for each `serial`.
fn round(corpus: &str, size: usize, serial: usize) -> String {
    let mut text = format!("Sample {serial} opens this round.\n");
    while text.len() < size {
        let room = size - text.len();
        let mut cut = room.min(corpus.len());
        while !corpus.is_char_boundary(cut) {
            cut -= 1;
        }
        text.push_str(&corpus[..cut]);
    }
    text
}

fn push(signals: &mut DebateSignals, text: &str) {
    std::hint::black_box(signals.push(&RoundText {
        turns: vec![text],
        precomputed_similarity: None,
    }));
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The process's resident memory, from /proc (0 where there is none).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Each model against its floor: FLOPs per token, the machine's f32 matmul rate on the model's
/// shapes, the floor that makes, and what the release binary embeds from a fresh home.
fn floor(models: &[Model]) {
    println!();
    println!(
        "floor: {} threads; tokens/s measured by the release binary, cold, from a fresh home",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let home = FreshHome::new("floor");
    let recordings = home.0.join("recordings");
    let (turns, bytes) = write_recordings(&recordings, 4, 8, 5);
    println!(
        "  recordings: 4 generated debates x 8 rounds x 7 agents ({turns} turns of {:.1} KB)",
        bytes as f64 / turns as f64 / 1000.0
    );
    for model in models {
        let flops = model.flops_per_token();
        let rate = matmul_rate(model);
        println!(
            "  {}: {:.1} MFLOP per token ({} layers, hidden {}, intermediate {}, window {}); \
             f32 matmul {:.1} GFLOP/s on its shapes: floor {:.0} tokens/s",
            model.name,
            flops / 1e6,
            model.layers,
            model.hidden,
            model.intermediate,
            model.window,
            rate / 1e9,
            rate / flops
        );
        for window in [None, Some(256)] {
            let (tally, elapsed) = embed_with_binary(&home, model, window, &recordings);
            println!(
                "    {}: {tally} — {:.0}% of the floor; the run {elapsed:.1?}",
                window.map_or("whole rounds".to_owned(), |w| format!("window {w}")),
                100.0 * tokens_per_second(&tally) / (rate / flops)
            );
        }
    }
}

/// FLOP/s of f32 matrix multiplies of a model's shapes (a window of tokens through a projection
/// and through the feed-forward layer), as candle runs them on every core; the best of a few.
fn matmul_rate(model: &Model) -> f64 {
    use candle_core::{Device, Tensor};
    let (n, h, i) = (model.window, model.hidden, model.intermediate);
    let tokens = Tensor::randn(0f32, 1.0, (n, h), &Device::Cpu).unwrap();
    let projection = Tensor::randn(0f32, 1.0, (h, h), &Device::Cpu).unwrap();
    let up = Tensor::randn(0f32, 1.0, (h, i), &Device::Cpu).unwrap();
    let flops = 2.0 * (n * h * h + n * h * i) as f64;
    let mut best = Duration::MAX;
    for _ in 0..20 {
        let started = Instant::now();
        std::hint::black_box(tokens.matmul(&projection).unwrap());
        std::hint::black_box(tokens.matmul(&up).unwrap());
        best = best.min(started.elapsed());
    }
    flops / best.as_secs_f64()
}

/// `gavel calibrate RECORDINGS --similarity semantic` with `model`, from an emptied fresh home
/// (a config file only to set the window); its note of what it embedded, and its wall time.
fn embed_with_binary(
    home: &FreshHome,
    model: &Model,
    window: Option<usize>,
    recordings: &std::path::Path,
) -> (String, Duration) {
    home.reset();
    let mut command = home.command(env!("CARGO_BIN_EXE_gavel"));
    if let Some(window) = window {
        let config = home.0.join("window.toml");
        std::fs::write(&config, format!("[signals]\nwindow = {window}\n")).unwrap();
        command.arg("--config").arg(config);
    }
    if let Some(dir) = &model.dir {
        command.arg("--model").arg(dir);
    }
    let started = Instant::now();
    let output = command
        .arg("calibrate")
        .arg(recordings)
        .args(["--similarity", "semantic", "--grid", "similarity=0.9"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let note = stderr
        .lines()
        .find_map(|l| l.strip_prefix("gavel: note: similarity vectors: "))
        .unwrap_or("nothing embedded")
        .to_owned();
    (note, elapsed)
}

/// The tokens/s a vectors note reports.
fn tokens_per_second(note: &str) -> f64 {
    note.rsplit_once(", ")
        .and_then(|(_, rate)| rate.strip_suffix(" tokens/s)"))
        .and_then(|rate| rate.parse().ok())
        .unwrap_or(0.0)
}

/// What `[signals] window = 256` changes against whole rounds, in process and cold (no vector
/// kept), on the bundled recordings and on generated debates: the time embedding takes, and
/// how far each round's similarity moves.
fn window(models: &[Model]) {
    println!();
    println!("window 256 against whole rounds (in process, cold):");
    let bundled: Vec<Vec<Vec<String>>> = Fixture::bundled()
        .expect("bundled fixtures")
        .iter()
        .map(|f| {
            (1..=f.last_round())
                .map(|round| f.round(round).map(|t| t.content.clone()).collect())
                .collect()
        })
        .collect();
    let mut generator = Generator::new(9);
    let generated: Vec<Vec<Vec<String>>> = (0..4)
        .map(|_| generator.debate(8, (1_200, 1_800)))
        .collect();
    for model in models {
        for (corpus, debates) in [("bundled", &bundled), ("generated", &generated)] {
            let (whole, whole_time) = similarities(model, None, debates);
            let (windowed, windowed_time) = similarities(model, Some(256), debates);
            let moves: Vec<f64> = whole
                .iter()
                .zip(&windowed)
                .map(|(a, b)| (a - b).abs())
                .collect();
            let crossed = whole
                .iter()
                .zip(&windowed)
                .filter(|(a, b)| (**a >= 0.9) != (**b >= 0.9))
                .count();
            println!(
                "  {}, {corpus} ({} rounds compared): whole {whole_time:.2?}, window {windowed_time:.2?} \
                 ({:.1}x faster); similarity moves by {:.3} on average, {:.3} at most; {crossed} \
                 rounds cross 0.9",
                model.name,
                moves.len(),
                whole_time.as_secs_f64() / windowed_time.as_secs_f64(),
                moves.iter().sum::<f64>() / moves.len().max(1) as f64,
                moves.iter().copied().fold(0.0, f64::max)
            );
        }
    }
}

/// Every round's similarity to the one before it (from round 2), measured by `model` reading
/// `window` tokens of a round, and the time it took.
fn similarities(
    model: &Model,
    window: Option<usize>,
    debates: &[Vec<Vec<String>>],
) -> (Vec<f64>, Duration) {
    let measure = Measure::Semantic(Encoder::shared(&model.choice(), window));
    let started = Instant::now();
    let mut out = Vec::new();
    for debate in debates {
        let mut signals = DebateSignals::new(measure.similarity());
        for turns in debate {
            let round = signals.push(&RoundText {
                turns: turns.iter().map(String::as_str).collect(),
                precomputed_similarity: None,
            });
            out.extend(round.similarity);
        }
    }
    (out, started.elapsed())
}
