//! `cargo bench --bench live`: gavel under a busy fleet, end to end and as a black box. Prints
//! figures, never asserts.
//!
//! It starts a throwaway PostgreSQL, migrates a fresh database, and runs the gavel binary being
//! benched (`gavel watch`) on a pseudo-terminal of 160x48, its screen emulated, beside a bare
//! tokio-postgres listener (LISTEN only, no fetch, no render) in a process of its own. Markers
//! (rounds of a probe debate, persona `mk0000001`, ...) are inserted at 50/s from one
//! connection; a marker's latency is from its INSERT sent to its first appearance on gavel's
//! emulated screen, or to the listener's receipt of its notification (CLOCK_MONOTONIC in every
//! process). In order:
//!
//! 1. latency with 10 debates held, 20 s of markers;
//! 2. a stream of `GAVEL_BENCH_TURNS` turns (1,000,000) into `GAVEL_BENCH_DEBATES` debates
//!    (100,000) from 4 writers in multi-row transactions, as fast as they go while gavel stays
//!    within 1 s of the markers (stopped after `GAVEL_BENCH_STREAM_SECS`, 1,800);
//! 3. latency with those debates held; then resident memory;
//! 4. CPU of both processes idle and at 1,000 turns/s (10 s each);
//! 5. ingest steps (`GAVEL_BENCH_STEPS`, 1000,2000,5000,10000,15000 turns/s, 10 s each): the
//!    highest one each sustains (no marker lost, lag not growing, under 250 ms);
//! 6. `q`, then a fresh console on the full database: spawn to first frame and to `● live`.
//!
//! `GAVEL_BENCH_BASELINE=path/to/old/gavel` runs the same scenario against that build
//! afterwards, on a database of its own, and the table shows both and the ratio new/old.

mod bare;
mod console;
mod load;
mod markers;
mod report;
mod scenario;
mod system;

use anyhow::{Context, Result};
use gavel::store::postgres::LocalServer;

fn main() -> Result<()> {
    if let Ok(url) = std::env::var(bare::MODE) {
        return bare::serve(&url);
    }
    let sizes = scenario::Sizes::from_env()?;
    let new = env!("CARGO_BIN_EXE_gavel");
    let baseline = std::env::var("GAVEL_BENCH_BASELINE").ok();
    println!("live: machine: {}", system::machine());
    println!("live: gavel under test: {new}");
    if let Some(old) = &baseline {
        println!("live: baseline gavel: {old}");
    }
    println!("live: sizes: {sizes:?}");
    let server = LocalServer::start().context("starting a throwaway PostgreSQL")?;
    let runtime = tokio::runtime::Runtime::new()?;
    let figures = runtime.block_on(scenario::run(&server, "bench_new", new, &sizes))?;
    let old = match &baseline {
        Some(old) => Some(runtime.block_on(scenario::run(&server, "bench_old", old, &sizes))?),
        None => None,
    };
    report::print(&figures, old.as_ref());
    Ok(())
}
