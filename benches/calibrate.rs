//! `cargo bench --bench calibrate`: a grid of 100 settings over 10,000 finished debates of 8
//! rounds, as `gavel calibrate --db` runs it. Prints figures.
//!
//! A throwaway PostgreSQL gets 10,000 completed shadow-mode debates (2 turns and a decision
//! with signals per round, an operator label on every tenth debate's round 3), written by plain
//! SQL. Timed: reading and reducing them (one pass, no per-setting round trips), then replaying
//! similarity 0.75..0.99 x novelty 0..3 over them, then the same grid on one thread. Reading
//! and reducing is timed with similarity as recorded and measured again lexically, in process.
//!
//! Then the gavel binary itself (`gavel calibrate --db`), each run a process of its own from a
//! fresh home (scratch XDG directories): with similarity as recorded (the baseline), then
//! measured semantically with the built-in model twice in that home: the first run embeds
//! every round (cold: each round's text is its own), the second reads them all back from the
//! vectors the first kept (warm). `GAVEL_BENCH_SEMANTIC=0` leaves the binary's runs out.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gavel::calibrate::{self, AxisSpec, Measuring, Report, Setting};
use gavel::policy::ControllerConfig;
use gavel::progress::Progress;
use gavel::signals::Measure;
use gavel::store::postgres::{LocalServer, Target, migrate};

const DEBATES: i64 = 10_000;
const ROUNDS: i64 = 8;

fn main() {
    let server = LocalServer::start().expect("a throwaway PostgreSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let records = runtime.block_on(async {
        let admin = Target::exact(&server.url("postgres")).unwrap().connect_driven().await.unwrap();
        admin.batch_execute("CREATE DATABASE bench").await.unwrap();
        let target = Target::exact(&server.url("bench")).unwrap();
        let mut client = target.connect_driven().await.unwrap();
        migrate(&mut client).await.unwrap();

        let started = Instant::now();
        client
            .batch_execute(&format!(
                "INSERT INTO debate_sessions (id, question, status, controller_mode, num_rounds, \
                     token_budget, tokens_used, personas) \
                     SELECT 'd' || n, 'Question ' || n, 'completed', 'shadow', {ROUNDS}, 40000, 0, \
                            '[\"theorist\",\"skeptic\",\"synthesizer\"]' \
                     FROM generate_series(1, {DEBATES}) n;
                 INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                     SELECT 'd' || n, r, p, 'In debate ' || n || ', round ' || r || ', the ' || p || \
                            ' weighs claim ' || (n * 31 + r * 7) % 997 || ' against claim ' || \
                            (n * 17 + r) % 991 || ' and finds the evidence ' || \
                            CASE WHEN r % 2 = 0 THEN 'thin' ELSE 'sound' END || '. VERDICT: ' || \
                            CASE WHEN r >= 3 + n % 4 THEN 'settled' ELSE 'open' END, 900 + n % 100 \
                     FROM generate_series(1, {DEBATES}) n, generate_series(1, {ROUNDS}) r, \
                          unnest(ARRAY['theorist','skeptic']) p;
                 INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                     SELECT 'd' || n, r, 'continue_baseline', jsonb_build_object( \
                         'similarity', CASE WHEN r = 1 THEN NULL ELSE least(0.99, 0.5 + r * 0.06 + (n % 7) * 0.01) END, \
                         'verdict', CASE WHEN r >= 3 + n % 4 THEN 'settled' ELSE 'open' END, \
                         'verdict_split', false, \
                         'new_claims', greatest(0, 5 - r - n % 3)) \
                     FROM generate_series(1, {DEBATES}) n, generate_series(1, {ROUNDS}) r;
                 INSERT INTO debate_operator_actions (session_id, round_index, action, decision, operator) \
                     SELECT 'd' || n, 3, 'accept', 'continue_baseline', 'ana' \
                     FROM generate_series(10, {DEBATES}, 10) n;
                 ANALYZE;"
            ))
            .await
            .unwrap();
        println!(
            "setup: {DEBATES} debates, {} turns, {} decisions in {:.1?}",
            DEBATES * ROUNDS * 2,
            DEBATES * ROUNDS,
            started.elapsed()
        );

        let started = Instant::now();
        let records = calibrate::from_database(&mut client, &Default::default(), &Measuring::recorded(Measure::Lexical), &Progress::none())
            .await
            .unwrap();
        println!(
            "read and reduce {} finished debates (one snapshot, turns streamed), similarity recorded: {:.2?}",
            records.len(),
            started.elapsed()
        );
        // `--similarity lexical`: every round measured again from its turns.
        let started = Instant::now();
        let measured = calibrate::from_database(
            &mut client,
            &Default::default(),
            &Measuring::remeasured(Measure::Lexical),
            &Progress::none(),
        )
        .await
        .unwrap();
        println!(
            "read and reduce {} finished debates, similarity lexical (measured again): {:.2?}",
            measured.len(),
            started.elapsed()
        );
        records
    });

    let base = ControllerConfig::default();
    let current = Setting::current(&base);
    let grid: Vec<AxisSpec> = ["similarity=0.75:0.99:0.01", "novelty=0:3:1"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let (settings, skipped) = calibrate::settings(&grid, &current).unwrap();
    let replays = settings.len() * records.len();

    let started = Instant::now();
    let report = Report::run(&records, settings.clone(), skipped, &current, &base, false);
    let elapsed = started.elapsed();
    println!(
        "grid of {} settings x {} debates ({} replays, {} rounds each): {:.2?} ({:.0} ns per replay, {} threads)",
        settings.len(),
        records.len(),
        replays,
        ROUNDS,
        elapsed,
        elapsed.as_nanos() as f64 / replays as f64,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let frontier = report.rows.iter().filter(|r| r.frontier).count();
    let current_row = report.rows.iter().find(|r| r.current).unwrap();
    println!(
        "  {} on the frontier; in force: {:.1} of {:.1} rounds, {:.1}% tokens saved, {} flips, agreement {:.0}%",
        frontier,
        current_row.mean_rounds_used,
        current_row.mean_rounds_run,
        current_row.tokens_saved_share * 100.0,
        current_row.verdict_flips,
        current_row.agreement.unwrap_or(0.0) * 100.0
    );

    let started = Instant::now();
    for setting in &settings {
        let config = setting.config(&base);
        for record in &records {
            std::hint::black_box(calibrate::replay(record, setting, &config));
        }
    }
    let elapsed = started.elapsed();
    println!(
        "same grid on one thread: {:.2?} ({:.0} ns per replay)",
        elapsed,
        elapsed.as_nanos() as f64 / replays as f64
    );

    if std::env::var("GAVEL_BENCH_SEMANTIC").as_deref() != Ok("0") {
        binary_runs(&server.url("bench"));
    }
}

/// `gavel calibrate --db` as a new user runs it, from a fresh home (scratch XDG directories:
/// no config, so the built-in model, and no kept vectors): similarity as recorded, then
/// semantic with no vector kept yet (cold), then semantic again in the same home (warm: every
/// vector kept by the first run).
fn binary_runs(url: &str) {
    let home = std::env::temp_dir().join(format!("gavel-bench-calibrate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    println!();
    println!("gavel calibrate --db (the binary, a process per run, fresh home, default grid):");
    let (recorded, _) = calibrate_binary(&home, url, "recorded");
    println!("  --similarity recorded (baseline): {recorded:.2?}");
    let (cold, note) = calibrate_binary(&home, url, "semantic");
    println!("  --similarity semantic, cold (no vector kept yet): {cold:.2?} ({note})");
    let (warm, note) = calibrate_binary(&home, url, "semantic");
    println!(
        "  --similarity semantic, warm (vectors kept by the run before): {warm:.2?} ({note}); {:.1}x the baseline, {:.0}x faster than embedding",
        warm.as_secs_f64() / recorded.as_secs_f64(),
        cold.as_secs_f64() / warm.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// Runs `gavel calibrate --db url --similarity source` with its XDG directories under `home`;
/// its wall time and its vectors note.
fn calibrate_binary(home: &Path, url: &str, source: &str) -> (Duration, String) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_gavel"))
        .args(["calibrate", "--db", url, "--similarity", source])
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "gavel calibrate: {stderr}");
    let note = stderr
        .lines()
        .find_map(|l| l.strip_prefix("gavel: note: similarity vectors: "))
        .unwrap_or("nothing embedded")
        .to_owned();
    (elapsed, note)
}
