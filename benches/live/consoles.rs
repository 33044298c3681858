//! `cargo bench --bench live -- consoles`: many consoles on one primary. For each count of
//! `GAVEL_BENCH_CONSOLES` (1,10,30), that many `gavel watch` on a fresh database, each live
//! with the probe open, then an orchestrator at `GAVEL_BENCH_RATE` (1,000) turns/s for
//! `GAVEL_BENCH_WINDOW_SECS` (30), markers at 50/s, beside the bare listeners (the lag is
//! behind psycopg's when there). It reports the database server's CPU (every server process, and the
//! consoles' backends alone), the queries a second each console's backend ran (the database's
//! transactions less the writers' and the markers'), each console's commit-to-screen and lag
//! behind the bare listener, and the consoles' own CPU (on the same machine as the server).

use anyhow::{Context, Result};
use gavel::store::postgres::LocalServer;
use tokio_postgres::Client;

use super::bare::Kind;
use super::load;
use super::markers::now_ns;
use super::orchestrated::{Observed, Seen};
use super::orchestrator;
use super::system::cpu_secs;
use super::{knob, knobs};

const SECOND: u64 = 1_000_000_000;

/// The server's processes as its statistics list them: (pid, whether a console's backend).
async fn server_pids(admin: &Client, db: &str) -> Result<Vec<(u32, bool)>> {
    let rows = admin
        .query(
            "SELECT pid, coalesce(datname = $1 AND application_name = 'gavel', false) \
             FROM pg_stat_activity",
            &[&db],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get::<_, i32>(0) as u32, r.get(1)))
        .collect())
}

/// CPU seconds of every server process, and of the consoles' backends.
fn server_cpu(pids: &[(u32, bool)]) -> (f64, f64) {
    pids.iter().fold((0.0, 0.0), |(all, consoles), &(pid, console)| {
        // A process that ended meanwhile counts for nothing.
        let secs = cpu_secs(pid).unwrap_or(0.0);
        (all + secs, consoles + if console { secs } else { 0.0 })
    })
}

async fn transactions(admin: &Client, db: &str) -> Result<i64> {
    Ok(admin
        .query_one(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1",
            &[&db],
        )
        .await?
        .get(0))
}

/// Runs the scenario against `bin`.
pub async fn run(server: &LocalServer, bin: &str) -> Result<()> {
    let counts: Vec<usize> = knobs("GAVEL_BENCH_CONSOLES", "1,10,30")?;
    let rate: f64 = knob("GAVEL_BENCH_RATE", 1_000.0)?;
    let window: u64 = knob("GAVEL_BENCH_WINDOW_SECS", 30)?;
    let admin = load::connect(&server.url("postgres")).await?;
    println!(
        "consoles: | consoles | server CPU, all (% of a core) | the consoles' backends | \
         per console | queries/s per console | commit-to-screen p50 / p99 ms, worst console | \
         lag behind bare p50 / p99 ms, worst console | markers lost | consoles' own CPU, each |"
    );
    println!("consoles: | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for n in counts {
        let db = format!("bench_consoles_{n}");
        let mut run = Observed::start(server, &db, (bin, ""), n, &[Kind::Tokio, Kind::Psycopg]).await?;
        let pids = server_pids(&admin, &db).await?;
        let (cpu_before, xacts_before) = (server_cpu(&pids), transactions(&admin, &db).await?);
        let (sent_before, started) = (run.markers.sent(), now_ns());
        let end = started + window * SECOND;
        let load = orchestrator::stream(run.url.clone(), run.debates.clone(), rate, end);
        let (seen, written) = run.window(end, load).await?;
        let secs = (now_ns() - started) as f64 / 1e9;
        let cpu_after = server_cpu(&pids);
        let xacts = transactions(&admin, &db).await? - xacts_before;
        let markers = (run.markers.sent() - sent_before) as i64;
        let consoles_queries = (xacts - written.rows as i64 - markers) as f64 / secs / n as f64;
        let all = (cpu_after.0 - cpu_before.0) / secs * 100.0;
        let backends = (cpu_after.1 - cpu_before.1) / secs * 100.0;
        let gavels: Vec<&Seen> = seen.iter().filter(|s| s.lag.is_some()).collect();
        let worst = |f: fn(&Seen) -> f64| gavels.iter().map(|s| f(s)).fold(f64::NAN, f64::max);
        let lost: usize = gavels.iter().map(|s| s.latency.lost).sum();
        let own = gavels.iter().map(|s| s.cpu).sum::<f64>() / n as f64;
        println!(
            "consoles: | {n} | {all:.1} | {backends:.1} | {:.2} | {consoles_queries:.0} | \
             {:.2} / {:.2} | {:.2} / {:.2} | {lost} | {own:.1} |",
            backends / n as f64,
            worst(|s| s.latency.p50),
            worst(|s| s.latency.p99),
            worst(|s| s.lag.as_ref().map_or(f64::NAN, |l| l.p50)),
            worst(|s| s.lag.as_ref().map_or(f64::NAN, |l| l.p99)),
        );
        println!(
            "consoles:    ({n} consoles: {:.0} rows/s written, {:.0} turns/s)",
            written.rows as f64 / secs,
            written.turns as f64 / secs
        );
        drop(run);
        admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .await
            .context("dropping the database")?;
    }
    Ok(())
}
