//! `cargo bench --bench live -- through`: commit-to-screen through a subscriber against
//! direct, in one run. A primary and a subscriber fed by logical replication of gavel's
//! publication (`gavel migrate --subscribe-to`), and four observers of the same markers
//! (probe rounds inserted on the primary at 50/s): `gavel watch --db PRIMARY`, `gavel watch
//! --db PRIMARY --read-from SUBSCRIBER`, and a bare listener on each server (LISTEN only, no
//! fetch, no render). Windows of `GAVEL_BENCH_WINDOW_SECS` (30): quiet first, then under an
//! orchestrator's write pattern at each rate of `GAVEL_BENCH_RATES` (500 turns/s) on the
//! primary. For each window it prints every observer's commit-to-screen (or receipt) p50 / p99,
//! its CPU, then the console through the subscriber as a ratio of the direct one (and the bare
//! listeners' likewise), and the same figures as CSV lines (`through-csv:`).

use std::sync::Arc;

use anyhow::{Context, Result};
use gavel::store::postgres::LocalServer;

use super::bare::{Bare, Kind};
use super::console::Console;
use super::knob;
use super::load::{self, Debates, Probe};
use super::markers::{Markers, Observer, now_ns};
use super::orchestrated::{Observed, Seen};
use super::orchestrator::{self, Written};
use super::scenario::MARKER_RATE;
use super::subscriber::subscribe_to;

const SECOND: u64 = 1_000_000_000;
/// How long a console may take to go live.
const LIVE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The observers, in the order [`Observed::observers`] gives them: the two consoles, then the
/// two bare listeners.
const WHO: [&str; 4] = [
    "gavel direct",
    "gavel via subscriber",
    "bare on the primary",
    "bare on the subscriber",
];

/// Runs the scenario against `bin`; `primary` was started with `settings` (the replication
/// settings), and so is the subscriber.
pub async fn run(primary: &LocalServer, bin: &str, settings: &[(&str, &str)]) -> Result<()> {
    let rates: Vec<u32> = super::knobs("GAVEL_BENCH_RATES", "500")?;
    let window: u64 = knob("GAVEL_BENCH_WINDOW_SECS", 30)?;
    let subscriber =
        LocalServer::start_with(5432, settings).context("starting the subscriber's server")?;
    let db = "bench_through";
    let primary_url = load::fresh(primary, db).await?;
    load::connect(&subscriber.url("postgres"))
        .await?
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await?;
    let subscriber_url = subscriber.url(db);
    subscribe_to(&primary_url, &subscriber_url).await?;

    let markers = Markers::default();
    let probe = Probe::create(&primary_url, markers.clone()).await?;
    let bares = vec![
        Bare::spawn_as(Kind::Tokio, &primary_url, markers.clone(), Observer::BARE)?,
        Bare::spawn_as(
            Kind::Tokio,
            &subscriber_url,
            markers.clone(),
            Observer::BARE_SUBSCRIBER,
        )?,
    ];
    let mut consoles = vec![
        Console::spawn(bin, &primary_url, markers.clone(), Observer::console(0))?,
        Console::spawn_reading(
            bin,
            (&primary_url, &subscriber_url),
            markers.clone(),
            Observer::console(1),
        )?,
    ];
    for console in &mut consoles {
        console.open(probe.id(), LIVE_LIMIT).await?;
    }
    let mut run = Observed {
        url: primary_url,
        markers,
        probe,
        debates: Arc::new(Debates::new(10)),
        bares,
        consoles,
        marker_rate: MARKER_RATE,
    };
    println!(
        "through: markers {MARKER_RATE}/s inserted on the primary; {window} s a window; the \
         consoles on 160x48 pseudo-terminals, the bare listeners LISTEN only"
    );
    println!(
        "through: | load | who | commit-to-screen (or receipt) p50 / p99 / max ms | lost | CPU % \
         of a core |"
    );
    println!("through: | --- | --- | --- | --- | --- |");
    let quiet = async { anyhow::Ok(Written::default()) };
    let (seen, _) = run.window(now_ns() + window * SECOND, quiet).await?;
    report("quiet", &seen);
    for rate in rates {
        let end = now_ns() + window * SECOND;
        let load = orchestrator::stream(run.url.clone(), run.debates.clone(), rate.into(), end);
        let (seen, _) = run.window(end, load).await?;
        report(&format!("{rate} turns/s"), &seen);
    }
    drop(run);
    drop(subscriber);
    Ok(())
}

/// Prints a window's figures: a row an observer, the ratios through the subscriber against
/// direct, and the CSV lines.
fn report(load: &str, seen: &[Seen]) {
    for (who, s) in WHO.iter().zip(seen) {
        println!(
            "through: | {load} | {who} | {:.2} / {:.2} / {:.1} | {} | {:.1} |",
            s.latency.p50, s.latency.p99, s.latency.max, s.latency.lost, s.cpu
        );
    }
    if let [direct, via, bare, bare_via] = seen {
        println!(
            "through: {load}: gavel via the subscriber / direct: p50 {:.2}x, p99 {:.2}x; bare \
             listener on the subscriber / on the primary: p50 {:.2}x, p99 {:.2}x",
            via.latency.p50 / direct.latency.p50,
            via.latency.p99 / direct.latency.p99,
            bare_via.latency.p50 / bare.latency.p50,
            bare_via.latency.p99 / bare.latency.p99,
        );
    }
    for (who, s) in WHO.iter().zip(seen) {
        println!(
            "through-csv: {load},{who},{:.3},{:.3},{:.3},{},{},{:.1}",
            s.latency.p50, s.latency.p99, s.latency.max, s.latency.count, s.latency.lost, s.cpu
        );
    }
}
