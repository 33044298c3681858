//! `cargo bench --bench live -- orchestrated`: the console under an orchestrator's write
//! pattern (see [`orchestrator`]: one row a transaction, 42 rows a debate of 32 turns), beside
//! the bare listeners in the same run: the tokio-postgres one and, when `python3` has it,
//! psycopg's. Markers go on at 50/s throughout. In order:
//!
//! 1. commit-to-screen with 10 debates and nothing else written (20 s), then one read's round
//!    trip timed, and the target it sets by default (see [`target`]);
//! 2. `GAVEL_BENCH_DEBATES` (10,000) debates written in bulk, then commit-to-screen again, and
//!    the read's round trip and the target again (a read among that many rows);
//! 3. each rate of `GAVEL_BENCH_RATES` (500,1000,2000 turns/s) for `GAVEL_BENCH_WINDOW_SECS`
//!    (30): each marker's lag, on gavel's screen against its receipt by the bare listener,
//!    and the CPU of every process; then resident memory.
//!
//! With `GAVEL_BENCH_LAGS=FILE`, every window's markers are also appended to FILE, one line each
//! (see [`record`]), to see how a window's lags are spread over it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use gavel::store::postgres::LocalServer;

use super::bare::{Bare, Kind};
use super::console::Console;
use super::knob;
use super::load::{self, Debates, Gate, Plan, Probe};
use super::markers::{Markers, Observer, Stats, now_ns};
use super::orchestrator::{self, Written};
use super::scenario::{MARKER_RATE, Progress, send_markers, write_all};
use super::system::{cpu_secs, rss_mib};

const SECOND: u64 = 1_000_000_000;
const LIVE_LIMIT: Duration = Duration::from_secs(120);

/// The processes observed, and the markers.
pub struct Observed {
    pub url: String,
    pub markers: Markers,
    pub probe: Probe,
    pub debates: Arc<Debates>,
    pub bares: Vec<Bare>,
    pub consoles: Vec<Console>,
    /// Markers a second.
    pub marker_rate: u64,
}

/// One observer's figures over a window.
pub struct Seen {
    pub who: &'static str,
    pub latency: Stats,
    /// Lag behind the baseline listener, per marker (gavel only).
    pub lag: Option<Stats>,
    /// % of one core.
    pub cpu: f64,
}

impl Observed {
    /// A fresh database `db` with the probe debate and 9 others running, the bare listeners and
    /// `consoles` consoles (with `config` as their configuration file, when not empty), each
    /// live with the probe open.
    pub async fn start(
        server: &LocalServer,
        db: &str,
        (bin, config): (&str, &str),
        consoles: usize,
        bares: &[Kind],
    ) -> Result<Observed> {
        let url = load::fresh(server, db).await?;
        let markers = Markers::default();
        let probe = Probe::create(&url, markers.clone()).await?;
        let debates = Arc::new(Debates::new(10));
        let seed = Plan {
            end: 10,
            deadline: u64::MAX,
            chunk: 9,
            finish: false,
        };
        load::Writer::connect(&url)
            .await?
            .run(&debates, &Gate::paced(f64::INFINITY), seed)
            .await?;
        let bares = bares
            .iter()
            .filter(|kind| kind.available())
            .map(|&kind| Bare::spawn(kind, &url, markers.clone()))
            .collect::<Result<Vec<_>>>()?;
        let mut spawned = Vec::new();
        for n in 0..consoles {
            let who = console_observer(n, consoles);
            spawned.push(Console::spawn_configured(
                bin,
                &url,
                markers.clone(),
                who,
                config,
            )?);
        }
        for console in &mut spawned {
            console.open(probe.id(), LIVE_LIMIT).await?;
        }
        Ok(Observed {
            url,
            markers,
            probe,
            debates,
            bares,
            consoles: spawned,
            marker_rate: MARKER_RATE,
        })
    }

    /// The observers: each console, then each bare listener.
    pub fn observers(&self) -> Vec<Observer> {
        let consoles = self.consoles.len();
        let mut who: Vec<Observer> = (0..consoles)
            .map(|n| console_observer(n, consoles))
            .collect();
        who.extend(self.bares.iter().map(Bare::observer));
        who
    }

    /// The listener lags are measured against: psycopg's when there, else tokio-postgres's.
    pub fn baseline(&self) -> Observer {
        self.bares
            .iter()
            .map(Bare::observer)
            .find(|&o| o == Observer::PSYCOPG)
            .unwrap_or(Observer::BARE)
    }

    /// The processes, as the observers.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self.consoles.iter().map(Console::pid).collect();
        pids.extend(self.bares.iter().map(Bare::pid));
        pids
    }

    /// Markers at 50/s until `end` (ns) while `load` runs; then every observer's figures over
    /// the markers sent meanwhile, and the load's outcome.
    pub async fn window<T>(
        &mut self,
        end: u64,
        load: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<(Vec<Seen>, T)>
    where
        T: Send + 'static,
    {
        let pids = self.pids();
        let before: Vec<f64> = pids.iter().map(|&p| cpu_secs(p)).collect::<Result<_>>()?;
        let started = now_ns();
        let loading = tokio::spawn(load);
        let keys: Vec<_> = self.consoles.iter().map(Console::keys).collect();
        let (from, to) = send_markers(
            &mut self.probe,
            &keys,
            &self.markers,
            &mut Progress::new(vec![self.debates.clone()]),
            &mut self.bares,
            self.marker_rate,
            || now_ns() >= end,
        )
        .await?;
        let outcome = loading.await.context("the load panicked")??;
        let secs = (now_ns() - started) as f64 / 1e9;
        let after: Vec<f64> = pids.iter().map(|&p| cpu_secs(p)).collect::<Result<_>>()?;
        let observers = self.observers();
        self.markers.wait_seen(&observers).await;
        for bare in &mut self.bares {
            bare.check()?;
        }
        let baseline = self.baseline();
        if let Ok(path) = std::env::var("GAVEL_BENCH_LAGS") {
            let latencies = self.markers.latencies(Observer::GAVEL, from, to);
            let lags = self.markers.lags(Observer::GAVEL, baseline, from, to);
            record(&path, started, &latencies, &lags)
                .with_context(|| format!("recording each marker in {path}"))?;
        }
        let seen = observers
            .iter()
            .zip(before.iter().zip(&after))
            .map(|(&who, (b, a))| Seen {
                who: name(who),
                latency: Stats::of(&self.markers.latencies(who, from, to)),
                lag: (!self.bares.iter().any(|bare| bare.observer() == who))
                    .then(|| Stats::of_ms(&self.markers.lags(who, baseline, from, to))),
                cpu: (a - b) / secs * 100.0,
            })
            .collect();
        Ok((seen, outcome))
    }
}

/// Appends a window's markers to the file at `path`, a line each: the window's start (ns), the
/// marker's number in the window, gavel's lag behind the baseline listener and its
/// commit-to-screen (ms; `NaN` where gavel, or for the lag the baseline listener, lost it).
fn record(path: &str, window: u64, latencies: &[Option<u64>], lags: &[Option<f64>]) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?,
    );
    for (k, (latency, lag)) in latencies.iter().zip(lags).enumerate() {
        let latency = latency.map_or(f64::NAN, |ns| ns as f64 / 1e6);
        writeln!(
            out,
            "{window} {k} {:.3} {latency:.3}",
            lag.unwrap_or(f64::NAN)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Console `n` of `of`: gavel itself when it is the only one.
fn console_observer(n: usize, of: usize) -> Observer {
    if of == 1 {
        Observer::GAVEL
    } else {
        Observer::console(n)
    }
}

pub fn name(who: Observer) -> &'static str {
    match who {
        Observer::BARE => "bare tokio-postgres",
        Observer::PSYCOPG => "bare psycopg",
        _ => "gavel",
    }
}

/// Runs the scenario against `bin`.
pub async fn run(server: &LocalServer, bin: &str) -> Result<()> {
    let rates: Vec<u32> = super::knobs("GAVEL_BENCH_RATES", "500,1000,2000")?;
    let window: u64 = knob("GAVEL_BENCH_WINDOW_SECS", 30)?;
    let bulk: u64 = knob("GAVEL_BENCH_DEBATES", 10_000)?;
    let mut run = Observed::start(
        server,
        "bench_orchestrated",
        (bin, ""),
        1,
        &[Kind::Tokio, Kind::Psycopg],
    )
    .await?;
    println!("orchestrated: baseline listener: {}", name(run.baseline()));
    header();
    let quiet = || async { Ok(Written::default()) };
    let end = now_ns() + 20 * SECOND;
    let (seen, _) = run.window(end, quiet()).await?;
    print_rows("10 debates, quiet", &seen, None);
    target(&run, &seen).await?;
    let held = ingest(&mut run, bulk).await?;
    let end = now_ns() + 20 * SECOND;
    let (seen, _) = run.window(end, quiet()).await?;
    print_rows(&format!("{held} debates, quiet"), &seen, None);
    target(&run, &seen).await?;
    for rate in rates {
        let end = now_ns() + window * SECOND;
        let load = orchestrator::stream(run.url.clone(), run.debates.clone(), rate.into(), end);
        let (seen, written) = run.window(end, load).await?;
        print_rows(&format!("{rate} turns/s"), &seen, Some((written, window)));
    }
    for (who, pid) in run.observers().into_iter().zip(run.pids()) {
        println!(
            "orchestrated: RSS of {}: {:.1} MiB",
            name(who),
            rss_mib(pid)?
        );
    }
    Ok(())
}

/// Writes `count` debates in bulk (40 a transaction, as fast as the console keeps within 1 s),
/// markers going on; returns the debates then held.
async fn ingest(run: &mut Observed, count: u64) -> Result<u64> {
    let first = run.debates.next();
    let mut writers = Vec::new();
    for _ in 0..4 {
        writers.push(Arc::new(load::Writer::connect(&run.url).await?));
    }
    let plan = Plan {
        end: first + count,
        deadline: u64::MAX,
        chunk: 40,
        finish: true,
    };
    let gate = Arc::new(Gate::throttled(run.markers.clone()));
    let done = Arc::new(AtomicBool::new(false));
    let writing = {
        let (debates, done) = (run.debates.clone(), done.clone());
        tokio::spawn(async move {
            let written = write_all(writers, debates, gate, plan).await;
            done.store(true, Ordering::Relaxed);
            written
        })
    };
    let keys: Vec<_> = run.consoles.iter().map(Console::keys).collect();
    send_markers(
        &mut run.probe,
        &keys,
        &run.markers,
        &mut Progress::new(vec![run.debates.clone()]),
        &mut run.bares,
        run.marker_rate,
        || done.load(Ordering::Relaxed),
    )
    .await?;
    writing.await.context("the writers panicked")??;
    run.markers.wait_seen(&run.observers()).await;
    // Numbered from 1, and the probe besides.
    Ok(run.debates.next())
}

/// The target for commit-to-screen by default: the baseline listener's receipt, plus one read's
/// round trip (a turn read by its id as the feed reads it once the table has grown, its plan
/// kept: a prepared statement, as PostgreSQL plans one by default; timed here on a connection
/// of its own, one after the other), plus 0.25 ms for the console's own work.
async fn target(run: &Observed, seen: &[Seen]) -> Result<()> {
    let client = load::connect(&run.url).await?;
    let read = client
        .prepare(
            "SELECT id::text, session_id::text, round_number::text, agent_persona::text, \
             content::text, tokens_used::text, superseded::text, metadata::text, \
             extract(epoch from created_at)::text FROM debate_rounds WHERE id = $1::bigint \
             ORDER BY debate_rounds.id",
        )
        .await?;
    let newest: i64 = client
        .query_one("SELECT coalesce(max(id), 0) FROM debate_rounds", &[])
        .await?
        .get(0);
    let mut trips = Vec::new();
    for n in 0..500 {
        let start = now_ns();
        client.query(&read, &[&(newest - n % 50)]).await?;
        trips.push(Some((now_ns() - start) as f64 / 1e6));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let trip = Stats::of_ms(&trips).p50;
    let baseline = name(run.baseline());
    if let (Some(bare), Some(gavel)) = (
        seen.iter().find(|s| s.who == baseline),
        seen.iter().find(|s| s.who == "gavel"),
    ) {
        let target = bare.latency.p50 + trip + 0.25;
        println!(
            "orchestrated: one read's round trip p50 {trip:.2} ms; target by default: {baseline} \
             {:.2} + {trip:.2} + 0.25 = {target:.2} ms ({:.2}x); gavel {:.2} ms ({:.2}x)",
            bare.latency.p50,
            target / bare.latency.p50,
            gavel.latency.p50,
            gavel.latency.p50 / bare.latency.p50,
        );
    }
    Ok(())
}

fn header() {
    println!(
        "orchestrated: | load | who | commit-to-screen (or receipt) p50 / p99 / max ms | lost | \
         lag behind the baseline listener p50 / p99 / max ms | CPU % of a core | rows/s written |"
    );
    println!("orchestrated: | --- | --- | --- | --- | --- | --- | --- |");
}

fn print_rows(load: &str, seen: &[Seen], written: Option<(Written, u64)>) {
    let rows = written.map_or("".to_owned(), |(w, secs)| {
        format!(
            "{:.0} ({:.0} turns/s)",
            w.rows as f64 / secs as f64,
            w.turns as f64 / secs as f64
        )
    });
    for s in seen {
        let lag = s.lag.map_or("".to_owned(), |l| {
            format!("{:.2} / {:.2} / {:.1}", l.p50, l.p99, l.max)
        });
        println!(
            "orchestrated: | {load} | {} | {:.2} / {:.2} / {:.1} | {} | {lag} | {:.1} | {rows} |",
            s.who, s.latency.p50, s.latency.p99, s.latency.max, s.latency.lost, s.cpu
        );
    }
}
