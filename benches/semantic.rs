//! `cargo bench --bench semantic`: what the semantic similarity costs, beside the TF-IDF cosine
//! in the same run. Prints figures: model load time and resident memory, then per-round latency
//! (a round measured against the one before it, its vector not cached) for a 2 KB and a 25 KB
//! round, and a round whose vector is cached. The built-in model always; all-MiniLM-L6-v2 when
//! its files are in the data dir (`gavel models fetch`) or in GAVEL_TEST_MODEL_DIR.
//!
//! Round texts are the bundled fixtures' turns, repeated to size, each made distinct by a
//! leading sentence so no vector comes from the cache unless asked for.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gavel::embed::{Encoder, ModelChoice};
use gavel::signals::{DebateSignals, Measure, RoundText};
use gavel::simulate::Fixture;

const SAMPLES: usize = 5;

fn main() {
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
