//! Numbers gavel writes come back from PostgreSQL as the very numbers written: a similarity in
//! `signal_json` (jsonb) bit for bit, whatever f64 it is; a judge's score, which the contract
//! keeps in a `real` column, bit for bit whenever it is a value that column holds (the shortest
//! decimal of an f32, as a judge's score is written in a recording).

use gavel::domain::{Change, Decision, JudgeDecision, Session, Signals};
use gavel::simulate::Stage;
use gavel::simulate::postgres::PgStage;
use gavel::store::postgres::{Orchestrator, history};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::*;
use crate::common::rows;

/// Any f64 in 0..=1: uniform, or any bit pattern (tiny and subnormal values included).
fn similarity() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0f64..=1.0,
        (0u64..=1.0f64.to_bits()).prop_map(f64::from_bits),
    ]
}

/// Any score a `real` column holds in 0..=1, as the f64 a recording's decimal reads as.
fn score() -> impl Strategy<Value = f64> {
    (0u32..=1.0f32.to_bits()).prop_map(|bits| f32::from_bits(bits).to_string().parse().unwrap())
}

/// Writes one debate whose round `r` decision records `values[r - 1].0` and whose ruling of
/// that round scores `values[r - 1].1`, as the simulator writes them; what the database gives
/// back, by round.
async fn round_trip(
    orchestrator: &Orchestrator,
    client: &tokio_postgres::Client,
    id: &str,
    values: &[(f64, f64)],
) -> Vec<(Option<f64>, Option<f64>)> {
    let mut changes = vec![Change::Session(Session::placeholder(id))];
    for (round, &(similarity, score)) in (1..).zip(values) {
        let mut decision = rows::decision(id, round, Decision::ContinueBaseline.into());
        decision.signals = Signals {
            similarity: Some(similarity),
            ..Signals::default()
        };
        changes.push(Change::Decision(decision));
        let ruling = rows::ruling(id, 0, round, "a", JudgeDecision::Continue, score);
        changes.push(Change::Judgment(ruling));
    }
    let mut stage = PgStage::new(orchestrator, id, false).unwrap();
    stage.write(changes).await.unwrap();
    let mut back = vec![(None, None); values.len()];
    for change in history(client, id, &Default::default()).await.unwrap() {
        match change {
            Change::Decision(d) => back[d.round_index as usize - 1].0 = d.signals.similarity,
            Change::Judgment(j) => back[j.round_index as usize - 1].1 = j.score,
            _ => {}
        }
    }
    back
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn similarities_and_scores_come_back_from_the_database_bit_for_bit() {
    let Database { target, client, .. } = migrated_database("exact").await;
    let orchestrator = Orchestrator::connect(&target).await.unwrap();
    let handle = tokio::runtime::Handle::current();
    let mut runner = TestRunner::new(Config::with_cases(48));
    let case = std::sync::atomic::AtomicU32::new(0);
    let values = prop::collection::vec((similarity(), score()), 1..12);
    let outcome = runner.run(&values, |values| {
        let id = format!(
            "exact-{}",
            case.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let back = tokio::task::block_in_place(|| {
            handle.block_on(round_trip(&orchestrator, &client, &id, &values))
        });
        for (&(similarity, score), &(read_similarity, read_score)) in values.iter().zip(&back) {
            let bits = |x: Option<f64>| x.map(f64::to_bits);
            prop_assert_eq!(
                bits(read_similarity),
                Some(similarity.to_bits()),
                "{}",
                similarity
            );
            prop_assert_eq!(bits(read_score), Some(score.to_bits()), "{}", score);
        }
        Ok(())
    });
    outcome.unwrap();
}
