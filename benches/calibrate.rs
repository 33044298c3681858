//! `cargo bench --bench calibrate`: a grid of 100 settings over 10,000 finished debates of 8
//! rounds, as `gavel calibrate --db` runs it. Prints figures.
//!
//! A throwaway PostgreSQL gets 10,000 completed shadow-mode debates (2 turns and a decision
//! with signals per round, an operator label on every tenth debate's round 3), written by plain
//! SQL. Timed: reading and reducing them (one pass, no per-setting round trips), then replaying
//! similarity 0.75..0.99 x novelty 0..3 over them, then the same grid on one thread. Reading
//! and reducing is timed three ways: similarity as recorded, and measured again lexically and
//! semantically (`gavel calibrate --similarity`), the latter from cached vectors.

use std::time::Instant;

use gavel::calibrate::{self, AxisSpec, Measuring, Report, Setting};
use gavel::embed::{Encoder, ModelChoice};
use gavel::policy::ControllerConfig;
use gavel::signals::Measure;
use gavel::store::postgres::{LocalServer, Target, migrate};

const DEBATES: i64 = 10_000;
const ROUNDS: i64 = 8;

fn main() {
    let server = LocalServer::start().expect("a throwaway PostgreSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let records = runtime.block_on(async {
        let admin = Target::exact(&server.url("postgres")).unwrap().connect_plain().await.unwrap();
        admin.batch_execute("CREATE DATABASE bench").await.unwrap();
        let target = Target::exact(&server.url("bench")).unwrap();
        let mut client = target.connect_plain().await.unwrap();
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
                     SELECT 'd' || n, r, p, 'Round ' || r || ' argument. VERDICT: ' || \
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
        let records = calibrate::from_database(&mut client, &Default::default(), &Measuring::recorded(Measure::Lexical))
            .await
            .unwrap();
        println!(
            "read and reduce {} finished debates (one snapshot, turns streamed), similarity recorded: {:.2?}",
            records.len(),
            started.elapsed()
        );
        // `--similarity lexical` and `semantic`: every round measured again from its turns. The
        // debates' round texts repeat, as a fleet's vectors do once cached: the built-in model
        // embeds each distinct round once, then reads its cache.
        let semantic = Measure::Semantic(Encoder::shared(&ModelChoice::Builtin));
        for (name, measure) in [("lexical", Measure::Lexical), ("semantic", semantic)] {
            let started = Instant::now();
            let measured = calibrate::from_database(&mut client, &Default::default(), &Measuring::remeasured(measure))
                .await
                .unwrap();
            println!(
                "read and reduce {} finished debates, similarity {name} (measured again): {:.2?}",
                measured.len(),
                started.elapsed()
            );
        }
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
}
