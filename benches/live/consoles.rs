//! `cargo bench --bench live -- consoles`: many consoles on one primary. For each count of
//! `GAVEL_BENCH_CONSOLES` (1,10,30), that many `gavel watch` on a fresh database, each live
//! with the probe open, then an orchestrator at `GAVEL_BENCH_RATE` (1,000) turns/s for
//! `GAVEL_BENCH_WINDOW_SECS` (30), markers at 50/s, beside the bare listeners (the lag is
//! behind psycopg's when there). It reports the database server's CPU (every server process,
//! the consoles' backends alone, each console's feed and presence connections, and the bare
//! listeners' backends for comparison), the statements a second each console's backend ran
//! (from pg_stat_statements: every statement but the writers' and markers' INSERTs and
//! UPDATEs), each console's commit-to-screen and lag behind the bare listener, and the
//! consoles' own CPU (on the same machine as the server), and the bench's own (its writers,
//! markers and screen readers). With `GAVEL_BENCH_IDLE_CONSOLES=1` the consoles, and the
//! threads reading their screens, run at the lowest CPU priority, so that on a machine too small
//! for them the writers keep their rate and the server's figures stay the primary's cost.

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

/// Whose a server process is: a console's feed or presence connection (`gavel`, `gavel
/// presence`), a bare listener's (`bare`), or anything else.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Console = 0,
    Presence = 1,
    Bare = 2,
    Other = 3,
}

/// The server's processes as its statistics list them, and whose each is.
pub async fn server_pids(admin: &Client, db: &str) -> Result<Vec<(u32, Owner)>> {
    let rows = admin
        .query(
            "SELECT pid, CASE WHEN datname <> $1 THEN 3 WHEN application_name = 'gavel' THEN 0 \
             WHEN application_name = 'gavel presence' THEN 1 \
             WHEN application_name = 'bare' THEN 2 ELSE 3 END \
             FROM pg_stat_activity",
            &[&db],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let owner = match r.get::<_, i32>(1) {
                0 => Owner::Console,
                1 => Owner::Presence,
                2 => Owner::Bare,
                _ => Owner::Other,
            };
            (r.get::<_, i32>(0) as u32, owner)
        })
        .collect())
}

/// CPU seconds the server processes `pids` have used so far, each owner's apart (indexed by
/// [`Owner`]); their sum is every process's.
pub fn server_cpu(pids: &[(u32, Owner)]) -> [f64; 4] {
    let mut secs = [0.0; 4];
    for &(pid, owner) in pids {
        // A process that ended meanwhile counts for nothing.
        secs[owner as usize] += cpu_secs(pid).unwrap_or(0.0);
    }
    secs
}

/// Statements run in database `db` other than the writers' and the markers' (INSERT and
/// UPDATE): the consoles' reads and keepalives.
async fn console_statements(admin: &Client, db: &str) -> Result<i64> {
    Ok(admin
        .query_one(
            "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) \
             AND query !~* '^\\s*(insert|update)'",
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
    admin
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .await
        .context("pg_stat_statements")?;
    if knob(super::console::IDLE, 0u8)? == 1 {
        println!(
            "consoles: the consoles run at the lowest CPU priority (SCHED_IDLE, nice 19): the \
             server's figures are the primary's cost; the consoles' lag and CPU are what a \
             starved console gets on this machine"
        );
    }
    println!(
        "consoles: | consoles | server CPU, all (% of a core) | the consoles' backends | \
         per console | statements/s per console | commit-to-screen p50 / p99 ms, worst console \
         | lag behind bare p50 / p99 ms, worst console | markers lost | consoles' own CPU, each |"
    );
    println!("consoles: | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for n in counts {
        let db = format!("bench_consoles_{n}");
        let bares = [Kind::Tokio, Kind::Psycopg];
        let mut run = Observed::start(server, &db, (bin, ""), n, &bares).await?;
        let pids = server_pids(&admin, &db).await?;
        let (cpu_before, statements_before) =
            (server_cpu(&pids), console_statements(&admin, &db).await?);
        let bench_before = cpu_secs(std::process::id())?;
        let started = now_ns();
        let end = started + window * SECOND;
        let load = orchestrator::stream(run.url.clone(), run.debates.clone(), rate, end);
        let (seen, written) = run.window(end, load).await?;
        let secs = (now_ns() - started) as f64 / 1e9;
        let cpu_after = server_cpu(&pids);
        let bench = (cpu_secs(std::process::id())? - bench_before) / secs * 100.0;
        let statements = console_statements(&admin, &db).await? - statements_before;
        let per_console = statements as f64 / secs / n as f64;
        let share = |i: Owner| (cpu_after[i as usize] - cpu_before[i as usize]) / secs * 100.0;
        let all = share(Owner::Console)
            + share(Owner::Presence)
            + share(Owner::Bare)
            + share(Owner::Other);
        let (backends, bare) = (
            share(Owner::Console) + share(Owner::Presence),
            share(Owner::Bare),
        );
        let gavels: Vec<&Seen> = seen.iter().filter(|s| s.lag.is_some()).collect();
        let worst = |f: fn(&Seen) -> f64| gavels.iter().map(|s| f(s)).fold(f64::NAN, f64::max);
        let lost: usize = gavels.iter().map(|s| s.latency.lost).sum();
        let own = gavels.iter().map(|s| s.cpu).sum::<f64>() / n as f64;
        println!(
            "consoles: | {n} | {all:.1} | {backends:.1} | {:.2} | {per_console:.0} | \
             {:.2} / {:.2} | {:.2} / {:.2} | {lost} | {own:.1} |",
            backends / n as f64,
            worst(|s| s.latency.p50),
            worst(|s| s.latency.p99),
            worst(|s| s.lag.as_ref().map_or(f64::NAN, |l| l.p50)),
            worst(|s| s.lag.as_ref().map_or(f64::NAN, |l| l.p99)),
        );
        println!(
            "consoles:    ({n} consoles: {:.0} rows/s written, {:.0} turns/s; the {} bare \
             listeners' backends {bare:.1}% of a core together; the bench's own process (writers, \
             markers, screen readers) {bench:.1}%)",
            written.rows as f64 / secs,
            written.turns as f64 / secs,
            run.bares.len()
        );
        drop(run);
        admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .await
            .context("dropping the database")?;
    }
    Ok(())
}
