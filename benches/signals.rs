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
//!    text), calibrated over the default grid by `gavel calibrate --db --similarity lexical` as
//!    a process from a fresh home, reading included. `GAVEL_BENCH_DEBATES` changes the count; `GAVEL_BENCH_BASELINE=path/to/gavel`
//!    also times that build (a previous one) on the same database, for the ratio.
//!
//! 4. 100 generated recordings (7 agents, turns of about 1.5 KB) of 8 and of 32 rounds,
//!    calibrated by `gavel calibrate DIR --similarity lexical` as a new user runs it: the
//!    release binary from a fresh home (scratch XDG directories: no config, no kept vectors).
//!    `GAVEL_BENCH_BASELINE` also times that build on them.
//!
//! Every run of the binary is from a fresh home. `cargo bench --bench signals -- rounds
//! fixtures week recordings` picks sections (all by default).

mod generated;

use std::time::{Duration, Instant};

use gavel::calibrate::{self, Report, Setting, default_grid};
use gavel::policy::ControllerConfig;
use gavel::signals::{DebateSignals, RoundText, reference};
use gavel::simulate::Fixture;
use gavel::store::postgres::{LocalServer, Target, finished_debates, migrate};
use generated::{AGENTS, FreshHome, Generator, write_recordings};

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
    if wanted("recordings") {
        recordings();
    }
}

/// 100 generated recordings of 8 and of 32 rounds calibrated lexically by the binary from a
/// fresh home: turns per second, and what a turn costs at 32 rounds against 8.
fn recordings() {
    const COUNT: usize = 100;
    let home = FreshHome::new("recordings");
    let mut binaries = vec![(
        "this build".to_owned(),
        env!("CARGO_BIN_EXE_gavel").to_owned(),
    )];
    if let Ok(baseline) = std::env::var("GAVEL_BENCH_BASELINE") {
        binaries.push((baseline.clone(), baseline));
    }
    println!(
        "4. gavel calibrate DIR --similarity lexical --grid similarity=0.99 --grid novelty=0, \
         {COUNT} generated recordings, release binary, fresh home, a process per run"
    );
    let mut per_turn: Vec<Vec<f64>> = vec![Vec::new(); binaries.len()];
    for rounds in [8, 32] {
        let dir = home.0.join(format!("recordings-{rounds}"));
        let (turns, bytes) = write_recordings(&dir, COUNT, rounds, 21 + rounds as u64);
        for (index, (name, binary)) in binaries.iter().enumerate() {
            home.reset();
            let started = Instant::now();
            let output = home
                .command(binary)
                .arg("calibrate")
                .arg(&dir)
                .args([
                    "--similarity",
                    "lexical",
                    "--grid",
                    "similarity=0.99",
                    "--grid",
                    "novelty=0",
                ])
                .output()
                .expect("gavel calibrate runs");
            let elapsed = started.elapsed();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let embedded = String::from_utf8_lossy(&output.stderr)
                .lines()
                .find(|l| l.contains("similarity vectors"))
                .map_or("nothing embedded".to_owned(), str::to_owned);
            println!(
                "   {rounds} rounds, {turns} turns of {:.2} KB, {name}: {elapsed:.2?}, {:.0} turns/s ({embedded})",
                bytes as f64 / turns as f64 / 1000.0,
                turns as f64 / elapsed.as_secs_f64(),
            );
            per_turn[index].push(elapsed.as_secs_f64() / turns as f64);
        }
    }
    for ((name, _), costs) in binaries.iter().zip(&per_turn) {
        println!(
            "   {name}: a turn at 32 rounds costs {:.2}x one at 8 (target: within 2x)",
            costs[1] / costs[0]
        );
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
    // These rounds carry no similarity, so `recorded` would measure them with the default
    // (semantic) measure: an embedding a round. The lexical figure is the one to read here.
    let home = FreshHome::new("week");
    let calibrate = |binary: &str| {
        home.reset();
        let started = Instant::now();
        let output = home
            .command(binary)
            .args([
                "calibrate",
                "--db",
                &server.url("bench"),
                "--similarity",
                "lexical",
            ])
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
        "   gavel calibrate --db --similarity lexical (one process, fresh home, reading included): {elapsed:.2?}, \
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
