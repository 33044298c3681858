//! `cargo bench --bench signals`: what a round's signals cost as a debate grows, and a shadow
//! week calibrated end to end. Prints figures; every "before" is the straightforward
//! definition (`signals::reference`, what gavel ran until the incremental state) measured in
//! the same run.
//!
//! 1. Generated debates of 7 agents whose turns (1-3 KB) restate and extend earlier claims, at
//!    8 and 32 rounds: turns per second, and the cost of the 32nd round against the 8th.
//! 2. The bundled fixtures, every round: turns per second.
//! 3. A shadow week in a throwaway PostgreSQL: 10,000 finished debates of 7 agents x 8 rounds
//!    with turns of about 1.5 KB and no recorded signals (so every round is measured from its
//!    text), calibrated over the default grid by `gavel calibrate --db` as a process, reading
//!    included. `GAVEL_BENCH_DEBATES` changes the count; `GAVEL_BENCH_BASELINE=path/to/gavel`
//!    also times that build (a previous one) on the same database, for the ratio.
//!
//! `cargo bench --bench signals -- rounds fixtures week` picks sections (all by default).

use std::process::Command;
use std::time::{Duration, Instant};

use gavel::calibrate::{self, Report, Setting, default_grid};
use gavel::policy::ControllerConfig;
use gavel::signals::{DebateSignals, RoundText, reference};
use gavel::simulate::Fixture;
use gavel::store::postgres::{LocalServer, Target, finished_debates, migrate};

const AGENTS: usize = 7;
const VERDICTS: &[&str] = &["proceed", "do not proceed", "proceed with caution"];
const STOPWORDS: &[&str] = &[
    "the", "of", "and", "in", "to", "is", "that", "with", "for", "as",
];

fn main() {
    let picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| picked.is_empty() || picked.iter().any(|p| p == name);
    if wanted("rounds") {
        per_round_cost();
    }
    if wanted("fixtures") {
        fixtures();
    }
    if wanted("week") {
        shadow_week();
    }
}

/// splitmix64: a small deterministic generator, so every run measures the same debates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Debate-like text: a lexicon with a heavy head, each debate with its own jargon, turns that
/// restate earlier sentences with a fifth of their words changed, or say something new.
struct Generator {
    rng: Rng,
    lexicon: Vec<String>,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        let mut rng = Rng(seed);
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ga", "pe", "dor", "lin", "mar", "sen",
            "tal", "vic", "bro", "cal", "fen", "gru",
        ];
        let lexicon = (0..6_000)
            .map(|_| {
                (0..2 + rng.below(3))
                    .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                    .collect()
            })
            .collect();
        Generator { rng, lexicon }
    }

    fn jargon(&mut self, jargon: &[String]) -> String {
        jargon[self.rng.below(jargon.len())].clone()
    }

    fn common(&mut self) -> String {
        let skew = ((self.rng.next() >> 11) as f64 / (1u64 << 53) as f64).powi(3);
        self.lexicon[(skew * self.lexicon.len() as f64) as usize].clone()
    }

    fn new_sentence(&mut self, jargon: &[String]) -> Vec<String> {
        (0..10 + self.rng.below(13))
            .map(|_| match self.rng.below(20) {
                0..=6 => self.jargon(jargon),
                7..=11 => STOPWORDS[self.rng.below(STOPWORDS.len())].to_owned(),
                _ => self.common(),
            })
            .collect()
    }

    /// One debate's rounds, each the turns of its agents.
    fn debate(&mut self, rounds: usize, turn_bytes: (usize, usize)) -> Vec<Vec<String>> {
        let jargon: Vec<String> = (0..80).map(|_| self.common() + "x").collect();
        let mut said: Vec<Vec<String>> = Vec::new();
        (0..rounds)
            .map(|_| {
                (0..AGENTS)
                    .map(|_| {
                        let target = turn_bytes.0 + self.rng.below(turn_bytes.1 - turn_bytes.0);
                        let mut turn = String::with_capacity(target + 64);
                        while turn.len() < target {
                            let sentence = if !said.is_empty() && self.rng.chance(0.5) {
                                let mut old = said[self.rng.below(said.len())].clone();
                                for word in &mut old {
                                    if self.rng.chance(0.2) {
                                        *word = self.common();
                                    }
                                }
                                old
                            } else {
                                self.new_sentence(&jargon)
                            };
                            turn.push_str(&sentence.join(" "));
                            turn.push_str(if self.rng.chance(0.25) { ".\n" } else { ". " });
                            said.push(sentence);
                        }
                        turn.push_str("\nVERDICT: ");
                        turn.push_str(VERDICTS[self.rng.below(VERDICTS.len())]);
                        turn
                    })
                    .collect()
            })
            .collect()
    }
}

fn round_texts(rounds: &[Vec<String>]) -> Vec<RoundText<'_>> {
    rounds
        .iter()
        .map(|turns| RoundText {
            turns: turns.iter().map(String::as_str).collect(),
            precomputed_similarity: None,
        })
        .collect()
}

/// Time spent on each round index, summed over debates, for one way of measuring.
fn cost_per_round(debates: &[Vec<Vec<String>>], incremental: bool) -> Vec<Duration> {
    let mut costs = vec![Duration::ZERO; debates[0].len()];
    for debate in debates {
        let rounds = round_texts(debate);
        let mut state = DebateSignals::default();
        for (index, cost) in costs.iter_mut().enumerate() {
            let started = Instant::now();
            if incremental {
                std::hint::black_box(state.push(&rounds[index]));
            } else {
                std::hint::black_box(reference::extract(&rounds[..=index]));
            }
            *cost += started.elapsed();
        }
    }
    costs
}

fn per_round_cost() {
    const DEBATES: usize = 12;
    let mut generator = Generator::new(7);
    let debates: Vec<_> = (0..DEBATES)
        .map(|_| generator.debate(32, (1_000, 3_000)))
        .collect();
    let bytes: usize = debates.iter().flatten().flatten().map(String::len).sum();
    println!(
        "1. generated debates: {DEBATES} x 32 rounds x {AGENTS} agents, {:.1} KB a turn on average",
        bytes as f64 / (DEBATES * 32 * AGENTS) as f64 / 1000.0
    );
    let after = cost_per_round(&debates, true);
    let before = cost_per_round(&debates, false);
    let turns_per_second = |costs: &[Duration], rounds: usize| {
        (DEBATES * rounds * AGENTS) as f64 / costs[..rounds].iter().sum::<Duration>().as_secs_f64()
    };
    let at = |costs: &[Duration], round: usize| costs[round - 1] / DEBATES as u32;
    println!(
        "   {:<34} {:>14} {:>14} {:>8}",
        "", "before (ref.)", "after", "ratio"
    );
    for rounds in [8, 32] {
        let (b, a) = (
            turns_per_second(&before, rounds),
            turns_per_second(&after, rounds),
        );
        println!(
            "   {:<34} {:>14.0} {:>14.0} {:>7.1}x",
            format!("turns/s, debates of {rounds} rounds"),
            b,
            a,
            a / b
        );
    }
    for round in [8, 32] {
        let (b, a) = (at(&before, round), at(&after, round));
        println!(
            "   {:<34} {:>14.2?} {:>14.2?} {:>7.1}x",
            format!("cost of round {round}"),
            b,
            a,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
    let growth = |costs: &[Duration]| at(costs, 32).as_secs_f64() / at(costs, 8).as_secs_f64();
    println!(
        "   {:<34} {:>13.2}x {:>13.2}x",
        "round 32 against round 8",
        growth(&before),
        growth(&after)
    );
}

fn fixtures() {
    const REPEAT: u32 = 200;
    let fixtures = Fixture::bundled().expect("bundled fixtures");
    let debates: Vec<Vec<Vec<String>>> = fixtures
        .iter()
        .map(|fixture| {
            (1..=fixture.last_round())
                .map(|round| fixture.round(round).map(|t| t.content.clone()).collect())
                .collect()
        })
        .collect();
    let turns: usize = debates.iter().flatten().map(Vec::len).sum();
    let time = |incremental: bool| {
        let started = Instant::now();
        for _ in 0..REPEAT {
            for debate in &debates {
                let rounds = round_texts(debate);
                let mut state = DebateSignals::default();
                for index in 0..rounds.len() {
                    if incremental {
                        std::hint::black_box(state.push(&rounds[index]));
                    } else {
                        std::hint::black_box(reference::extract(&rounds[..=index]));
                    }
                }
            }
        }
        (turns * REPEAT as usize) as f64 / started.elapsed().as_secs_f64()
    };
    let (before, after) = (time(false), time(true));
    println!(
        "2. bundled fixtures ({} debates, {turns} turns, x{REPEAT}): {before:.0} turns/s before, \
         {after:.0} after ({:.1}x)",
        debates.len(),
        after / before
    );
}

fn shadow_week() {
    let debates: usize = std::env::var("GAVEL_BENCH_DEBATES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    const ROUNDS: usize = 8;
    let server = LocalServer::start().expect("a throwaway PostgreSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (turns, bytes) = runtime.block_on(async {
        let admin = Target::exact(&server.url("postgres")).unwrap().connect_driven().await.unwrap();
        admin.batch_execute("CREATE DATABASE bench").await.unwrap();
        let mut client =
            Target::exact(&server.url("bench")).unwrap().connect_driven().await.unwrap();
        migrate(&mut client).await.unwrap();
        let started = Instant::now();
        let mut generator = Generator::new(11);
        let (mut turns, mut bytes) = (0, 0);
        let insert = client
            .prepare(
                "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                 SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[])",
            )
            .await
            .unwrap();
        for batch in (0..debates).collect::<Vec<_>>().chunks(250) {
            let mut columns = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for &n in batch {
                for (round, agents) in generator.debate(ROUNDS, (1_200, 1_800)).into_iter().enumerate() {
                    for (agent, content) in agents.into_iter().enumerate() {
                        bytes += content.len();
                        turns += 1;
                        columns.0.push(format!("d{n}"));
                        columns.1.push(round as i32 + 1);
                        columns.2.push(format!("agent{agent}"));
                        columns.4.push((content.len() / 4) as i32);
                        columns.3.push(content);
                    }
                }
            }
            client
                .execute(&insert, &[&columns.0, &columns.1, &columns.2, &columns.3, &columns.4])
                .await
                .unwrap();
        }
        client
            .batch_execute(&format!(
                "INSERT INTO debate_sessions (id, question, status, controller_mode, num_rounds, \
                     token_budget, personas) \
                     SELECT 'd' || n, 'Question ' || n, 'completed', 'shadow', {ROUNDS}, 200000, \
                            '[\"agent0\",\"agent1\",\"agent2\",\"agent3\",\"agent4\",\"agent5\",\"agent6\"]' \
                     FROM generate_series(0, {debates} - 1) n;
                 INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                     SELECT 'd' || n, r, 'continue_baseline', '{{}}' \
                     FROM generate_series(0, {debates} - 1) n, generate_series(1, {ROUNDS}) r;
                 INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                     SELECT 'd' || n, 3, 'accept', 'continue_baseline', 'ana' \
                     FROM generate_series(0, {debates} - 1, 10) n;
                 ANALYZE;"
            ))
            .await
            .unwrap();
        println!(
            "3. shadow week: {debates} debates x {ROUNDS} rounds x {AGENTS} agents = {turns} turns, \
             {:.2} KB a turn, {:.0} MB of text, written in {:.1?}",
            bytes as f64 / turns as f64 / 1000.0,
            bytes as f64 / 1e6,
            started.elapsed()
        );
        (turns, bytes)
    });
    let calibrate = |binary: &str| {
        let started = Instant::now();
        let output = Command::new(binary)
            .args(["calibrate", "--db", &server.url("bench")])
            .output()
            .expect("gavel calibrate runs");
        let elapsed = started.elapsed();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        (
            elapsed,
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (elapsed, table) = calibrate(env!("CARGO_BIN_EXE_gavel"));
    println!(
        "   gavel calibrate --db (one process, reading included): {elapsed:.2?}, \
         {:.0} turns/s, {:.0} MB/s",
        turns as f64 / elapsed.as_secs_f64(),
        bytes as f64 / 1e6 / elapsed.as_secs_f64()
    );
    if let Some(line) = table.lines().find(|l| l.starts_with('*')) {
        println!("   in force: {}", line.trim_end());
    }
    if let Ok(baseline) = std::env::var("GAVEL_BENCH_BASELINE") {
        let (before, its_table) = calibrate(&baseline);
        println!(
            "   the same with {baseline}: {before:.2?}, {:.0} turns/s: {:.1}x the time, {} report",
            turns as f64 / before.as_secs_f64(),
            before.as_secs_f64() / elapsed.as_secs_f64(),
            if its_table == table {
                "the same"
            } else {
                "A DIFFERENT"
            }
        );
    }
    runtime.block_on(async {
        let mut client =
            Target::exact(&server.url("bench")).unwrap().connect_driven().await.unwrap();
        let started = Instant::now();
        finished_debates(&mut client, &Default::default(), |_| {}, |_, debate| drop(std::hint::black_box(debate)))
            .await
            .unwrap();
        let read = started.elapsed();
        let started = Instant::now();
        let records = calibrate::from_database(&mut client, &Default::default(), &gavel::calibrate::Measuring::recorded(gavel::signals::Measure::Lexical), &gavel::progress::Progress::none()).await.unwrap();
        let reduced = started.elapsed();
        let config = ControllerConfig::default();
        let current = Setting::current(&config);
        let (settings, skipped) = calibrate::settings(&default_grid(), &current).unwrap();
        let started = Instant::now();
        Report::run(&records, settings, skipped, &current, &config, false);
        println!(
            "   in process: reading alone {read:.2?}; reading with signals and records {reduced:.2?}; grid {:.2?}",
            started.elapsed()
        );
    });
}
