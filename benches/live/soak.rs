//! `cargo bench --bench live -- soak`: one console for `GAVEL_BENCH_SOAK_SECS` (3,600) under an
//! orchestrator at `GAVEL_BENCH_RATE` (1,000) turns/s, markers at 10/s, while the console's
//! backend is terminated (`pg_terminate_backend`) every `GAVEL_BENCH_KILL_SECS` (240) and the
//! server is restarted once, halfway (the writers finish their debates first, and write on
//! after). The console holds `GAVEL_BENCH_KEEP_FINISHED` (10,000) finished debates, so that
//! its bound is reached within the warm-up (`GAVEL_BENCH_WARMUP_SECS`, 600). A line a minute:
//! RSS, CPU, commit-to-screen and markers lost. At the end:
//!
//! - every marker on screen: none lost, and the probe's rounds on screen each once, in order;
//! - the debates the list title counts against the database's (running, plus the finished
//!   ones up to the bound): a row filed twice or lost would show;
//! - RSS and commit-to-screen in the first 10 minutes after the warm-up against the last 10.

use std::time::Duration;

use anyhow::{Context, Result};
use gavel::store::postgres::LocalServer;

use super::knob;
use super::load;
use super::markers::{Observer, Stats, now_ns};
use super::orchestrated::Observed;
use super::orchestrator::{self, Written};
use super::system::rss_mib;

const SECOND: u64 = 1_000_000_000;
const MINUTE: u64 = 60 * SECOND;
const DB: &str = "bench_soak";

/// A minute of the soak.
struct Minute {
    /// When it ended, in seconds from the start.
    at: f64,
    rss: f64,
    cpu: f64,
    latency: Stats,
    killed: u64,
}

/// Terminates the console's backends; returns how many there were.
async fn terminate(admin_url: &str) -> Result<u64> {
    let admin = load::connect(admin_url).await?;
    let killed: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = $1 AND application_name = 'gavel'",
            &[&DB],
        )
        .await?
        .get(0);
    Ok(killed as u64)
}

/// The orchestrator until `end`, terminating the console's backends at each of `kills`.
fn load_and_kill(
    run: &Observed,
    admin_url: String,
    rate: f64,
    end: u64,
    kills: Vec<u64>,
) -> impl Future<Output = Result<(Written, u64)>> + Send + 'static + use<> {
    let writing = orchestrator::stream(run.url.clone(), run.debates.clone(), rate, end);
    async move {
        let killing = async {
            let mut killed = 0;
            for at in kills {
                tokio::time::sleep(Duration::from_nanos(at.saturating_sub(now_ns()))).await;
                killed += terminate(&admin_url).await?;
            }
            anyhow::Ok(killed)
        };
        let (written, killed) = tokio::join!(writing, killing);
        Ok((written?, killed?))
    }
}

/// Runs the soak against `bin`.
pub async fn run(server: &mut LocalServer, bin: &str) -> Result<()> {
    let total: u64 = knob("GAVEL_BENCH_SOAK_SECS", 3_600)?;
    let rate: f64 = knob("GAVEL_BENCH_RATE", 1_000.0)?;
    let kill_every: u64 = knob("GAVEL_BENCH_KILL_SECS", 240)?;
    let warmup: u64 = knob("GAVEL_BENCH_WARMUP_SECS", 600)?;
    let keep: u64 = knob("GAVEL_BENCH_KEEP_FINISHED", 10_000)?;
    let config = format!("[ui]\nkeep_finished = {keep}\n");
    let admin_url = server.url("postgres");
    let mut run = Observed::start(server, DB, (bin, &config), 1, &[]).await?;
    run.marker_rate = 10;
    let pid = run.pids()[0];
    let start = now_ns();
    let (stop_at, restart_at) = (start + total * SECOND, start + total / 2 * SECOND);
    let mut kills: Vec<u64> = (1..)
        .map(|k| start + k * kill_every * SECOND)
        .take_while(|&at| at < stop_at)
        .collect();
    let mut minutes = Vec::new();
    let mut restarted = false;
    println!(
        "soak: | minute | RSS MiB | CPU % | commit-to-screen p50 / p99 / max ms | lost | backends killed |"
    );
    while now_ns() < stop_at {
        let mut end = (now_ns() + MINUTE).min(stop_at);
        if !restarted && end > restart_at {
            end = restart_at.max(now_ns() + SECOND);
        }
        let due: Vec<u64> = kills.iter().copied().filter(|&at| at < end).collect();
        kills.retain(|&at| at >= end);
        let load = load_and_kill(&run, admin_url.clone(), rate, end, due);
        let (seen, (_, killed)) = run.window(end, load).await?;
        let minute = Minute {
            at: (now_ns() - start) as f64 / 1e9,
            rss: rss_mib(pid)?,
            cpu: seen[0].cpu,
            latency: seen[0].latency,
            killed,
        };
        println!(
            "soak: | {:.1} | {:.1} | {:.1} | {:.2} / {:.2} / {:.0} | {} | {} |",
            minute.at / 60.0,
            minute.rss,
            minute.cpu,
            minute.latency.p50,
            minute.latency.p99,
            minute.latency.max,
            minute.latency.lost,
            minute.killed
        );
        minutes.push(minute);
        if !restarted && now_ns() >= restart_at {
            server.stop().context("stopping the server")?;
            server.resume().context("starting the server again")?;
            run.probe.reconnect(&run.url).await?;
            restarted = true;
            println!("soak: the server was restarted");
        }
    }
    verdict(&run, &minutes, (start, warmup, total), keep).await
}

/// The checks at the end.
async fn verdict(
    run: &Observed,
    minutes: &[Minute],
    (start, warmup, total): (u64, u64, u64),
    keep: u64,
) -> Result<()> {
    run.markers.wait_seen(&[Observer::GAVEL]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let text = run.consoles[0].view().text.clone();
    let all = run.markers.latencies(Observer::GAVEL, 0, u64::MAX);
    let lost = all.iter().filter(|l| l.is_none()).count();
    println!("soak: markers sent {}, lost {lost}", all.len());
    let shown = markers_on_screen(&text);
    let once = shown.windows(2).all(|w| w[1] == w[0] + 1);
    println!(
        "soak: the probe's rounds on screen: {} markers, {} to {}, each once and in order: {once}",
        shown.len(),
        shown.first().unwrap_or(&0),
        shown.last().unwrap_or(&0)
    );
    let client = load::connect(&run.url).await?;
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE status = 'running'), \
             count(*) FILTER (WHERE status <> 'running') FROM debate_sessions",
            &[],
        )
        .await?;
    let (running, finished): (i64, i64) = (row.get(0), row.get(1));
    let expected = running as u64 + (finished as u64).min(keep);
    println!(
        "soak: debates in the database: {running} running, {finished} finished; the list's \
         title: {:?} (expected {expected})",
        listed(&text)
    );
    let block = 600.min((total - warmup) / 2) as f64;
    let (first, last) = (warmup as f64, total as f64 - block);
    let rss = |from: f64| {
        let picked: Vec<f64> = minutes
            .iter()
            .filter(|m| m.at > from && m.at <= from + block + 1.0)
            .map(|m| m.rss)
            .collect();
        picked.iter().sum::<f64>() / picked.len().max(1) as f64
    };
    let latency = |from: f64| {
        let (a, b) = (
            start + (from * 1e9) as u64,
            start + ((from + block) * 1e9) as u64,
        );
        Stats::of(&run.markers.latencies(Observer::GAVEL, a, b))
    };
    let (r1, r2, l1, l2) = (rss(first), rss(last), latency(first), latency(last));
    println!(
        "soak: RSS {r1:.1} MiB in the {block:.0} s after the warm-up, {r2:.1} MiB in the last \
         {block:.0} s ({:.3}x)",
        r2 / r1
    );
    println!(
        "soak: commit-to-screen p50 / p99 {:.2} / {:.2} ms after the warm-up, {:.2} / {:.2} ms \
         in the last {block:.0} s ({:.2}x / {:.2}x)",
        l1.p50,
        l1.p99,
        l2.p50,
        l2.p99,
        l2.p50 / l1.p50,
        l2.p99 / l1.p99
    );
    Ok(())
}

/// The markers on the screen, in screen order.
fn markers_on_screen(text: &str) -> Vec<u64> {
    text.match_indices("mk")
        .filter_map(|(at, _)| text.get(at + 2..at + 9)?.parse().ok())
        .collect()
}

/// The count in the list's title, `debates (N)`.
fn listed(text: &str) -> Option<u64> {
    let at = text.find("debates (")? + "debates (".len();
    text[at..].split(')').next()?.trim().parse().ok()
}
