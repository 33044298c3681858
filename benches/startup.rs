//! `cargo bench --bench startup`: how long `gavel watch` takes to go live against a database
//! holding a million rounds, and how long one debate's history takes to load. Prints figures.
//!
//! The database is an orchestrator's before gavel arrives: 125,000 debates of 8 rounds (1,000
//! of them running), with a decision per round; then `migrate`, then the listener is timed
//! from start to `● live` (its start window loaded), a debate's full history is timed, and
//! 500 rounds inserted by plain SQL are timed until each reaches the console's events.

use std::time::{Duration, Instant};

use gavel::console::app::{Event, Link};
use gavel::store::postgres::{LocalServer, Target, Wanted, migrate};
use tokio::sync::mpsc::unbounded_channel;

const SESSIONS: i64 = 125_000;
const ROUNDS: i64 = 8;
const RUNNING: i64 = 1_000;

fn main() {
    let server = LocalServer::start().expect("a throwaway PostgreSQL");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let admin = Target::exact(&server.url("postgres")).unwrap().connect_driven().await.unwrap();
        admin.batch_execute("CREATE DATABASE bench").await.unwrap();
        let target = Target::exact(&server.url("bench")).unwrap();
        let mut client = target.connect_driven().await.unwrap();

        let started = Instant::now();
        client
            .batch_execute(&format!(
                "CREATE TABLE debate_sessions (id TEXT PRIMARY KEY, question TEXT, status TEXT DEFAULT 'running', \
                     created_at TIMESTAMPTZ DEFAULT now());
                 CREATE TABLE debate_rounds (id BIGSERIAL PRIMARY KEY, session_id TEXT, round_number INT, \
                     agent_persona TEXT, content TEXT, tokens_used INT);
                 CREATE TABLE debate_round_decisions (session_id TEXT, round_index INT, decision TEXT, \
                     signal_json JSONB, decided_at TIMESTAMPTZ DEFAULT now(), PRIMARY KEY (session_id, round_index));
                 INSERT INTO debate_sessions (id, question, status, created_at) \
                     SELECT 's' || n, 'Question ' || n, CASE WHEN n <= {RUNNING} THEN 'running' ELSE 'completed' END, \
                            now() - n * interval '1 second' FROM generate_series(1, {SESSIONS}) n;
                 INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                     SELECT 's' || n, r, 'theorist', repeat('A claim about the evidence. ', 8), 900 \
                     FROM generate_series(1, {SESSIONS}) n, generate_series(1, {ROUNDS}) r;
                 INSERT INTO debate_round_decisions (session_id, round_index, decision, signal_json) \
                     SELECT 's' || n, r, 'continue_baseline', '{{\"similarity\": 0.5, \"new_claims\": 3}}' \
                     FROM generate_series(1, {SESSIONS}) n, generate_series(1, {ROUNDS}) r;
                 ANALYZE;"
            ))
            .await
            .unwrap();
        println!("setup: {} debates, {} rounds, {} decisions in {:.1?}", SESSIONS, SESSIONS * ROUNDS, SESSIONS * ROUNDS, started.elapsed());

        let started = Instant::now();
        migrate(&mut client).await.unwrap();
        println!("migrate on the populated database: {:.1?}", started.elapsed());
        let started = Instant::now();
        assert!(migrate(&mut client).await.unwrap().is_empty());
        println!("migrate again (no-op): {:.1?}", started.elapsed());

        let (events, mut received) = unbounded_channel();
        let (history, wanted) = unbounded_channel();
        let started = Instant::now();
        tokio::spawn(gavel::store::postgres::listen(
            target.clone(),
            events,
            wanted,
            Default::default(),
            gavel::store::postgres::hearing().0,
            true,
        ));
        let mut rows = 0usize;
        loop {
            match tokio::time::timeout(Duration::from_secs(60), received.recv()).await.unwrap().unwrap() {
                Event::Store(_) => rows += 1,
                Event::Link(Link::Live) => break,
                _ => {}
            }
        }
        println!("watch start to live: {:.1?} ({rows} rows loaded of {} in the database)", started.elapsed(), SESSIONS * (1 + 2 * ROUNDS));

        let started = Instant::now();
        history.send(Wanted::History(format!("s{}", SESSIONS / 2))).unwrap();
        let mut loaded = 0;
        while loaded < 1 + 2 * ROUNDS {
            if let Event::Store(_) = received.recv().await.unwrap() {
                loaded += 1;
            }
        }
        println!("one old debate's history ({loaded} rows): {:.1?}", started.elapsed());

        // End to end: a round inserted by plain SQL until its row reaches the console's events.
        let mut latencies = Vec::new();
        for i in 0..500 {
            let started = Instant::now();
            client
                .execute(
                    "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, tokens_used) \
                     VALUES ('s1', $1, 'skeptic', 'late', 10)",
                    &[&(100 + i)],
                )
                .await
                .unwrap();
            loop {
                if let Event::Store(change) = received.recv().await.unwrap()
                    && let gavel::domain::Change::Turn(t) = *change
                    && t.round_number == (100 + i) as u32
                {
                    break;
                }
            }
            latencies.push(started.elapsed());
        }
        latencies.sort();
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
        println!(
            "insert to event, {} rounds: median {:.2?}, p99 {:.2?}, max {:.2?} (includes the insert's own commit)",
            latencies.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    });
}
