//! `cargo bench --bench live [-- SCENARIO]`: gavel under a busy fleet, end to end and as a
//! black box. Prints figures, never asserts.
//!
//! Every scenario starts a throwaway PostgreSQL, migrates a fresh database, and runs the gavel
//! binary being benched (`gavel watch`; `GAVEL_BENCH_GAVEL` names another) on a
//! pseudo-terminal of 160x48, its screen emulated, beside bare listeners (LISTEN only, no fetch,
//! no render) in processes of their own. Markers (rounds of a probe debate, persona
//! `mk0000001`, ...) are inserted from one connection; a marker's latency is from its INSERT
//! sent to its first appearance on gavel's emulated screen, or to a listener's receipt of its
//! notification (CLOCK_MONOTONIC in every process). With `GAVEL_BENCH_PROBE=redecide`, each
//! marker is instead a decision of one of the probe's first 20 rounds decided again (`INSERT ...
//! ON CONFLICT DO UPDATE`), its verdict the marker, on screen in the probe's rounds table (see
//! `load::Pattern`). The scenarios:
//!
//! - `scale` (the default, [`scenario`]): 100,000 debates streamed in bulk, latency before and
//!   after, CPU, memory, the ingest ramp, the first frame; `GAVEL_BENCH_BASELINE` runs an older
//!   build too. `GAVEL_BENCH_CONTEXTS=2` runs it on two contexts: two throwaway servers, the
//!   debates and writers split between them, one `gavel watch --db a=URL --db b=URL`, the
//!   markers to each in turn beside a bare listener on each server;
//!   `GAVEL_BENCH_CONTEXTS=1,2` runs both and prints the most contexts' figures beside the
//!   others' as ratios;
//! - `orchestrated` ([`orchestrated`]): an orchestrator's write pattern (one row a
//!   transaction) at 500, 1,000 and 2,000 turns/s, each marker's lag behind the bare
//!   listeners (tokio-postgres, and psycopg when `python3` has it), and CPU;
//! - `consoles` ([`consoles`]): 1, 10 and 30 consoles on one database, the server's CPU and
//!   queries per console;
//! - `presence` ([`presence`]): 30 consoles on one database, idle and with claims changing:
//!   the messages a second on `gavel_presence`, the server's CPU for them, and how long a
//!   console killed with SIGKILL stays on the others' screens;
//! - `soak` ([`soak`]): an hour at 1,000 turns/s, the console's backend terminated every few
//!   minutes and the server restarted once;
//! - `subscriber` ([`subscriber`]): writers' throughput, commit latency and the primary's CPU
//!   per commit with 0 to 100 listeners on the primary against the same on a subscriber fed
//!   by logical replication, and the notification's latency through the subscriber;
//! - `through` ([`through`]): commit-to-screen of `gavel watch --read-from SUBSCRIBER` against
//!   `gavel watch` on the primary in the same run, beside a bare listener on each server.

mod bare;
mod console;
mod consoles;
mod load;
mod markers;
mod orchestrated;
mod orchestrator;
mod presence;
mod report;
mod scenario;
mod soak;
mod subscriber;
mod system;
mod through;

use anyhow::{Context, Result, bail};
use gavel::store::postgres::LocalServer;

fn main() -> Result<()> {
    if let Ok(url) = std::env::var(bare::MODE) {
        return bare::serve(&url);
    }
    // `cargo bench` passes `--bench`; the first other argument names the scenario.
    let scenario = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "scale".to_owned());
    let new = std::env::var("GAVEL_BENCH_GAVEL")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gavel").to_owned());
    println!("live: machine: {}", system::machine());
    println!("live: scenario {scenario}, gavel under test: {new}");
    if load::rows_in_notifications() {
        println!("live: rows in notifications (gavel.notify_rows = on, the opt-in)");
    }
    // The consoles scenario counts each console's queries.
    let mut settings = vec![("listen_addresses", "")];
    if scenario == "consoles" {
        settings.push(("shared_preload_libraries", "pg_stat_statements"));
    }
    // A primary and a subscriber, with room for a hundred listeners besides the writers.
    if scenario == "subscriber" || scenario == "through" {
        settings.extend(gavel::store::postgres::REPLICATION);
        settings.push(("max_connections", "300"));
    }
    let mut server =
        LocalServer::start_with(5432, &settings).context("starting a throwaway PostgreSQL")?;
    let runtime = tokio::runtime::Runtime::new()?;
    match scenario.as_str() {
        "scale" => scale(&server, &settings, &runtime, &new),
        "orchestrated" => runtime.block_on(orchestrated::run(&server, &new)),
        "consoles" => runtime.block_on(consoles::run(&server, &new)),
        "presence" => runtime.block_on(presence::run(&server, &new)),
        "soak" => runtime.block_on(soak::run(&mut server, &new)),
        "subscriber" => runtime.block_on(subscriber::run(&server, &settings)),
        "through" => runtime.block_on(through::run(&server, &new, &settings)),
        other => bail!(
            "no scenario {other}: scale, orchestrated, consoles, presence, soak, subscriber or \
             through"
        ),
    }
}

/// The scale scenario, against `new` and, with `GAVEL_BENCH_BASELINE`, that build too, on each
/// number of contexts `GAVEL_BENCH_CONTEXTS` lists (1): a server each beyond `server`, started
/// with the same `settings`.
fn scale(
    server: &LocalServer,
    settings: &[(&str, &str)],
    runtime: &tokio::runtime::Runtime,
    new: &str,
) -> Result<()> {
    let sizes = scenario::Sizes::from_env()?;
    let mut counts: Vec<usize> = knobs("GAVEL_BENCH_CONTEXTS", "1")?;
    counts.sort_unstable();
    counts.dedup();
    if counts.first() == Some(&0) || counts.last().is_some_and(|&n| n > 26) {
        bail!("GAVEL_BENCH_CONTEXTS counts contexts from 1 to 26");
    }
    let most = counts.last().copied().unwrap_or(1);
    let mut builds = vec![("new", "bench_new", new.to_owned())];
    if let Ok(old) = std::env::var("GAVEL_BENCH_BASELINE") {
        println!("live: baseline gavel: {old}");
        builds.push(("baseline", "bench_old", old));
    }
    println!("live: sizes: {sizes:?}, contexts: {counts:?}");
    let extra = (1..most)
        .map(|_| LocalServer::start_with(5432, settings).context("starting another PostgreSQL"))
        .collect::<Result<Vec<_>>>()?;
    let servers: Vec<&LocalServer> = std::iter::once(server).chain(&extra).collect();
    let mut runs = Vec::new();
    for &count in &counts {
        for (build, db, bin) in &builds {
            let mut label = Vec::new();
            if builds.len() > 1 {
                label.push(build.to_string());
            }
            if most > 1 {
                label.push(format!(
                    "{count} context{}",
                    if count == 1 { "" } else { "s" }
                ));
            }
            let label = label.join(", ");
            if !label.is_empty() {
                println!("live: run: {label}");
            }
            let db = format!("{db}_{count}");
            let figures = runtime.block_on(scenario::run(&servers[..count], &db, bin, &sizes))?;
            runs.push((label, figures));
        }
    }
    // The most contexts' run of the build under test, the others beside it.
    let main = runs.remove((counts.len() - 1) * builds.len());
    let others: Vec<(&str, &report::Figures)> = runs.iter().map(|(l, f)| (&**l, f)).collect();
    report::print((&main.0, &main.1), &others);
    Ok(())
}

/// A number from the environment, or `default`.
pub fn knob<T: std::str::FromStr>(name: &str, default: T) -> Result<T> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .ok()
            .with_context(|| format!("{name}={v} is not a number")),
        Err(_) => Ok(default),
    }
}

/// A comma-separated list of numbers from the environment, or `default`.
pub fn knobs<T: std::str::FromStr>(name: &str, default: &str) -> Result<Vec<T>> {
    let list = std::env::var(name).unwrap_or_else(|_| default.to_owned());
    list.split(',')
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()
        .with_context(|| format!("{name}={list} is not a list of numbers"))
}
