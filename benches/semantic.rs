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
//! a fresh home, as a calibration of a real database runs it (`gavel calibrate --db URL
//! --similarity recorded` over debates whose rows carry no signals, in a throwaway
//! PostgreSQL): generated debates (long rounds of generated words) and real-sized ones (rounds
//! of a few hundred to a few thousand tokens, several speakers, the bundled recordings'
//! sentences). Each build `GAVEL_BENCH_BASELINE` names (paths separated by commas) runs the same
//! corpus right after this one: wall time, tokens/s, the fraction of the floor, CPU time, the
//! cores kept busy and the CPU the rest of the machine used, and this build's speed as a ratio
//! to each. `GAVEL_BENCH_REAL_DEBATES` sets how many real-sized debates (528). This build also
//! embeds the generated debates with `[signals] window = 256`. Last, what the window changes
//! on the bundled and generated debates: time, and how far each round's similarity moves.
//!
//! `cargo bench --bench semantic -- latency floor window` picks sections (all by default).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use gavel::embed::{Encoder, ModelChoice};
use gavel::signals::{DebateSignals, Measure, RoundText};
use gavel::simulate::Fixture;
use gavel::store::postgres::{LocalServer, Target, migrate};
use generated::{FreshHome, Generator, real_sized};

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
            let mut times: Vec<Duration> = (0..SAMPLES)
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
            cells.push(median(&mut times));
        }
        let cached = round(&corpus, 2_000, 0);
        let mut signals = DebateSignals::new(measure.similarity());
        push(&mut signals, &cached);
        let mut times: Vec<Duration> = (0..SAMPLES)
            .map(|_| {
                let started = Instant::now();
                push(&mut signals, &cached);
                started.elapsed()
            })
            .collect();
        cells.push(median(&mut times));
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

/// The middle time (of an even count, the mean of the two in the middle).
fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    let middle = times.len() / 2;
    match times.len() % 2 {
        0 => (times[middle - 1] + times[middle]) / 2,
        _ => times[middle],
    }
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
/// shapes, the floor that makes; then what the release binary embeds of each corpus, cold, from
/// a fresh home, this build first and then each baseline build one after the other, and, for
/// this build alone, the generated corpus with `[signals] window = 256`.
fn floor(models: &[Model]) {
    println!();
    println!(
        "floor: {} threads; the release binary, cold, from a fresh home: `gavel calibrate --db \
         URL --similarity recorded` over debates whose rows carry no signals (every round \
         embedded)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let server = LocalServer::start().expect("a throwaway PostgreSQL");
    let real_count = std::env::var("GAVEL_BENCH_REAL_DEBATES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(REAL_DEBATES);
    let mut generator = Generator::new(5);
    let corpora = [
        Corpus::write(
            &server,
            "generated",
            "generated: 4 debates x 8 rounds x 7 agents, turns of 1.2-1.8 KB of generated words",
            (0..4)
                .map(|_| generator.debate(8, (1_200, 1_800)))
                .collect(),
        ),
        Corpus::write(
            &server,
            "real_sized",
            &format!(
                "real-sized: {real_count} debates of 2-4 rounds x 3-6 speakers, the bundled \
                 recordings' sentences"
            ),
            real_sized(real_count, 17),
        ),
    ];
    let builds = builds();
    let repeat = std::env::var("GAVEL_BENCH_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    let home = FreshHome::new("floor");
    for model in models {
        let flops = model.flops_per_token();
        let floor = matmul_rate(model) / flops;
        println!(
            "  {}: {:.1} MFLOP per token ({} layers, hidden {}, intermediate {}, window {}); \
             f32 matmul {:.1} GFLOP/s on its shapes: floor {floor:.0} tokens/s",
            model.name,
            flops / 1e6,
            model.layers,
            model.hidden,
            model.intermediate,
            model.window,
            floor * flops / 1e9,
        );
        for corpus in &corpora {
            println!("    {}", corpus.about);
            let mut runs: Vec<Vec<Run>> = builds.iter().map(|_| Vec::new()).collect();
            let mut tokens = 0.0;
            for pass in 1..=repeat {
                for (build, runs) in builds.iter().zip(&mut runs) {
                    let run = Run::of(&home, build, model, None, corpus);
                    // Every build embeds the same rounds: tokens as this build's note counts
                    // them (this build runs first).
                    if tokens == 0.0 {
                        tokens = run.note.as_deref().map_or(0.0, note_tokens);
                    }
                    println!(
                        "      {:<12} run {pass}: {}",
                        build.label,
                        run.figures(tokens, floor)
                    );
                    runs.push(run);
                }
            }
            let middle = |runs: &[Run], of: fn(&Run) -> Duration| {
                median(&mut runs.iter().map(of).collect::<Vec<_>>())
            };
            let (wall, cpu) = (middle(&runs[0], |r| r.wall), middle(&runs[0], |r| r.cpu));
            for (build, runs) in builds.iter().zip(&runs).skip(1) {
                println!(
                    "      this build against {}: {:.2}x its speed, {:.2}x its CPU (medians of \
                     {repeat} run(s) each)",
                    build.label,
                    middle(runs, |r| r.wall).as_secs_f64() / wall.as_secs_f64(),
                    cpu.as_secs_f64() / middle(runs, |r| r.cpu).as_secs_f64()
                );
            }
        }
        let window = Run::of(&home, &builds[0], model, Some(256), &corpora[0]);
        let tokens = window.note.as_deref().map_or(0.0, note_tokens);
        println!(
            "    generated, window 256, {}: {}",
            builds[0].label,
            window.figures(tokens, floor)
        );
    }
}

/// Real-sized debates embedded by default: as many as the real debates the issue timed.
const REAL_DEBATES: usize = 528;

/// Debates written into a database of their own, rows carrying no signals.
struct Corpus {
    url: String,
    about: String,
}

impl Corpus {
    /// Writes `debates` (each its rounds, each round its speakers' turns) as finished
    /// shadow-mode debates into database `name` of `server`; no decision rows, so a
    /// calibration measures every round. Says what it wrote.
    fn write(
        server: &LocalServer,
        name: &str,
        about: &str,
        debates: Vec<Vec<Vec<String>>>,
    ) -> Corpus {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let url = server.url(name);
        let (rounds, bytes) = runtime.block_on(async {
            let admin = Target::exact(&server.url("postgres"))
                .unwrap()
                .connect_driven()
                .await
                .unwrap();
            admin
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .unwrap();
            let mut client = Target::exact(&url).unwrap().connect_driven().await.unwrap();
            migrate(&mut client).await.unwrap();
            let (mut rounds, mut bytes) = (0, 0);
            for (n, debate) in debates.iter().enumerate() {
                let id = format!("{name}-{n}");
                let speakers = debate[0].len();
                let personas: Vec<String> = (0..speakers).map(|a| format!("agent{a}")).collect();
                client
                    .execute(
                        "INSERT INTO debate_sessions (id, question, status, controller_mode, \
                         num_rounds, max_rounds, token_budget, personas, finished_at) \
                         VALUES ($1, $2, 'completed', 'shadow', $3, $3, 100000000, $4, now())",
                        &[
                            &id,
                            &format!("Question {n}?"),
                            &(debate.len() as i32),
                            &serde_json::json!(personas),
                        ],
                    )
                    .await
                    .unwrap();
                let (mut numbers, mut who, mut contents, mut tokens) =
                    (vec![], vec![], vec![], vec![]);
                for (round, turns) in debate.iter().enumerate() {
                    rounds += 1;
                    for (persona, content) in personas.iter().zip(turns) {
                        bytes += content.len();
                        numbers.push(round as i32 + 1);
                        who.push(persona.as_str());
                        contents.push(content.as_str());
                        tokens.push(content.len() as i32 / 4);
                    }
                }
                client
                    .execute(
                        "INSERT INTO debate_rounds (session_id, round_number, agent_persona, \
                         content, tokens_used) \
                         SELECT $1, r, p, c, t FROM unnest($2::int[], $3::text[], $4::text[], \
                         $5::int[]) AS u(r, p, c, t)",
                        &[&id, &numbers, &who, &contents, &tokens],
                    )
                    .await
                    .unwrap();
            }
            (rounds, bytes)
        });
        Corpus {
            url,
            about: format!(
                "{about}: {} debates, {rounds} rounds of {:.1} KB",
                debates.len(),
                bytes as f64 / rounds as f64 / 1000.0
            ),
        }
    }
}

/// A gavel binary and what to call it.
struct Build {
    label: String,
    binary: PathBuf,
}

/// This build, then each build `GAVEL_BENCH_BASELINE` names (paths separated by commas, each
/// called by its file name), in that order.
fn builds() -> Vec<Build> {
    let this = Build {
        label: "this build".to_owned(),
        binary: PathBuf::from(env!("CARGO_BIN_EXE_gavel")),
    };
    let baselines = std::env::var("GAVEL_BENCH_BASELINE").unwrap_or_default();
    std::iter::once(this)
        .chain(
            baselines
                .split(',')
                .filter(|path| !path.is_empty())
                .map(|path| Build {
                    label: Path::new(path)
                        .file_name()
                        .map_or(path.to_owned(), |n| n.to_string_lossy().into_owned()),
                    binary: PathBuf::from(path),
                }),
        )
        .collect()
}

/// One run of a build over a corpus: its wall time, its CPU time (every thread, user and
/// system), the CPU the rest of the machine used meanwhile, the cores its busiest threads kept
/// busy when they were not waiting for one, and its note of what it embedded (builds before the
/// note have none).
struct Run {
    wall: Duration,
    cpu: Duration,
    others: Duration,
    busy: f64,
    note: Option<String>,
}

impl Run {
    /// `gavel calibrate --db` over `corpus` by `build` with `model`, from an emptied fresh
    /// home (a config file only to set the window).
    fn of(
        home: &FreshHome,
        build: &Build,
        model: &Model,
        window: Option<usize>,
        corpus: &Corpus,
    ) -> Run {
        home.reset();
        let mut command = home.command(&build.binary.to_string_lossy());
        if let Some(window) = window {
            let config = home.0.join("window.toml");
            std::fs::write(&config, format!("[signals]\nwindow = {window}\n")).unwrap();
            command.arg("--config").arg(config);
        }
        if let Some(dir) = &model.dir {
            command.arg("--model").arg(dir);
        }
        command.args(["calibrate", "--db", &corpus.url, "--similarity", "recorded"]);
        command.stdout(Stdio::null()).stderr(Stdio::piped());
        let (cpu_before, machine_before) = (children_cpu(), machine_busy());
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stderr, &mut text).map(|_| text)
        });
        let mut threads = Threads::default();
        let status = loop {
            threads.sample(child.id());
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let wall = started.elapsed();
        let cpu = children_cpu() - cpu_before;
        let machine = machine_busy().saturating_sub(machine_before);
        let stderr = reader.join().unwrap().unwrap_or_default();
        assert!(status.success(), "{}: {stderr}", build.label);
        Run {
            wall,
            cpu,
            others: machine.saturating_sub(cpu),
            busy: threads.busy(),
            note: stderr
                .lines()
                .find_map(|l| l.strip_prefix("gavel: note: similarity vectors: "))
                .map(str::to_owned),
        }
    }

    /// `T tokens in W s: R tokens/s, P% of the floor; CPU C s (U µs a token, Q% of a core's
    /// share of the floor), B cores busy (K with no wait for a core); the rest of the machine O
    /// cores`, the rate over the run's wall time, `tokens` as this build counts them. On a
    /// shared machine the rate and its share of the floor fall with the load; the CPU a token
    /// much less.
    fn figures(&self, tokens: f64, floor: f64) -> String {
        let (wall, cpu) = (self.wall.as_secs_f64(), self.cpu.as_secs_f64());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let rate = tokens / wall;
        format!(
            "{tokens:.0} tokens in {wall:.1} s: {rate:.0} tokens/s, {:.0}% of the floor; CPU \
             {cpu:.1} s ({:.0} µs a token, {:.0}% of a core's share of the floor), {:.2} cores \
             busy ({:.2} with no wait for a core); the rest of the machine {:.2} cores",
            100.0 * rate / floor,
            1e6 * cpu / tokens.max(1.0),
            100.0 * tokens / cpu.max(1e-9) / (floor / cores),
            cpu / wall,
            self.busy,
            self.others.as_secs_f64() / wall,
        )
    }
}

/// A process's threads as last sampled: each one's time running and waiting for a core
/// (/proc/PID/task/TID/schedstat), and when it was first and last seen.
#[derive(Default)]
struct Threads(HashMap<String, ThreadTimes>);

struct ThreadTimes {
    running: Duration,
    waiting: Duration,
    first: Instant,
    last: Instant,
}

impl Threads {
    /// Reads the schedstat of each thread of process `pid` (nothing where there is no /proc).
    fn sample(&mut self, pid: u32) {
        let now = Instant::now();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return;
        };
        for task in tasks.flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
                continue;
            };
            let mut fields = stat.split_whitespace().map(|n| n.parse().unwrap_or(0));
            let (running, waiting) = (fields.next().unwrap_or(0), fields.next().unwrap_or(0));
            let times = self
                .0
                .entry(task.file_name().to_string_lossy().into_owned())
                .or_insert(ThreadTimes {
                    running: Duration::ZERO,
                    waiting: Duration::ZERO,
                    first: now,
                    last: now,
                });
            times.running = Duration::from_nanos(running);
            times.waiting = Duration::from_nanos(waiting);
            times.last = now;
        }
    }

    /// The cores the busiest threads (as many as this machine has cores) kept busy over the
    /// time they were not waiting for one: as many cores as they are, times the share of that
    /// time they ran. On a machine of its own a run's CPU over its wall time comes to this.
    fn busy(&self) -> f64 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut threads: Vec<&ThreadTimes> = self.0.values().collect();
        threads.sort_by_key(|t| std::cmp::Reverse(t.running));
        threads.truncate(cores);
        let running: f64 = threads.iter().map(|t| t.running.as_secs_f64()).sum();
        let not_waiting: f64 = threads
            .iter()
            .map(|t| ((t.last - t.first).saturating_sub(t.waiting)).as_secs_f64())
            .sum();
        threads.len() as f64 * running / not_waiting.max(1e-9)
    }
}

/// CPU time of this process's children waited for so far, user and system.
fn children_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// CPU time the whole machine has spent busy since boot (every core: /proc/stat less idle and
/// I/O wait), zero where there is no /proc.
fn machine_busy() -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect();
    let busy: u64 = ticks
        .iter()
        .enumerate()
        .filter(|(field, _)| !matches!(field, 3 | 4))
        .map(|(_, n)| n)
        .sum();
    // SAFETY: sysconf reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(busy * 1_000 / hz)
}

/// The tokens a vectors note says were embedded.
fn note_tokens(note: &str) -> f64 {
    note.split_once(" tokens embedded")
        .and_then(|(before, _)| before.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

/// FLOP/s of f32 matrix multiplies of a model's shapes (a window of tokens through a projection
/// and through the feed-forward layer), as candle runs them on every core; the best of those
/// of two seconds, so that on a shared machine one of them has had every core.
fn matmul_rate(model: &Model) -> f64 {
    use candle_core::{Device, Tensor};
    let (n, h, i) = (model.window, model.hidden, model.intermediate);
    let tokens = Tensor::randn(0f32, 1.0, (n, h), &Device::Cpu).unwrap();
    let projection = Tensor::randn(0f32, 1.0, (h, h), &Device::Cpu).unwrap();
    let up = Tensor::randn(0f32, 1.0, (h, i), &Device::Cpu).unwrap();
    let flops = 2.0 * (n * h * h + n * h * i) as f64;
    let mut best = Duration::MAX;
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(2) {
        let started = Instant::now();
        std::hint::black_box(tokens.matmul(&projection).unwrap());
        std::hint::black_box(tokens.matmul(&up).unwrap());
        best = best.min(started.elapsed());
    }
    flops / best.as_secs_f64()
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
