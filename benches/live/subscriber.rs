//! `cargo bench --bench live -- subscriber`: consoles off the primary. Writers commit one row
//! a transaction on the primary (`GAVEL_BENCH_WRITERS`, 4 connections, as fast as they can, or
//! together at `GAVEL_BENCH_RATE` commits/s when it is set, for `GAVEL_BENCH_WINDOW_SECS`, 10,
//! a run) while `GAVEL_BENCH_LISTENERS` (0,10,30,100) bare
//! listeners LISTEN on `gavel_events`: first on the primary itself, then on a subscriber fed
//! by logical replication of gavel's publication (`gavel migrate --subscribe-to`). For each
//! count and place it reports the writers' throughput and commit latency, the primary's CPU
//! per commit (every process of its server: backends, WAL writer, and the WAL sender that
//! decodes for the subscriber), the subscriber's CPU, and the time from a marker's INSERT to
//! a listener's receipt of its notification; then each figure on the subscriber as a ratio of
//! the same on the primary. With `GAVEL_BENCH_PIN=1` (and two cores or more) the two servers
//! stand for two hosts: the primary, the writers and the markers run on the first core, the
//! subscriber on the second, and each server's listeners on its server's core.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gavel::store::postgres::{LocalServer, check_publisher, migrate, subscribe, sync};
use tokio::task::JoinSet;

use super::bare::{Bare, Kind};
use super::load::{self, Probe};
use super::markers::{Markers, Observer, Stats, now_ns, quantile};
use super::system::cpu_secs;
use super::{knob, knobs};

const SECOND: u64 = 1_000_000_000;
/// Markers a second, from their own connection.
const MARKERS_PER_SEC: u64 = 50;

/// What one run measured.
struct Figures {
    commits_per_sec: f64,
    /// Commit latency, ms.
    commit: Stats,
    /// The primary's CPU per commit, µs.
    primary_us: f64,
    /// The subscriber's CPU, % of a core.
    subscriber_pct: f64,
    /// INSERT sent to a listener's receipt of the notification, ms (no listener: none).
    notified: Option<Stats>,
}

/// CPU seconds used so far by each process of `server`: its postmaster and every process it
/// started.
fn server_cpu(server: &LocalServer) -> Result<HashMap<u32, f64>> {
    let postmaster = server.pid().context("the server is not running")?;
    let mut secs = HashMap::from([(postmaster, cpu_secs(postmaster)?)]);
    for entry in std::fs::read_dir("/proc")? {
        let Some(pid) = entry?
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let fields = stat.rsplit_once(')')?.1.to_owned();
                fields.split_whitespace().nth(1)?.parse::<u32>().ok()
            });
        if parent == Some(postmaster)
            && let Ok(used) = cpu_secs(pid)
        {
            secs.insert(pid, used);
        }
    }
    Ok(secs)
}

/// CPU seconds `server`'s processes used since `before` (a process started meanwhile counts
/// whole; one that ended meanwhile, for nothing).
fn server_cpu_since(server: &LocalServer, before: &HashMap<u32, f64>) -> Result<f64> {
    Ok(server_cpu(server)?
        .iter()
        .map(|(pid, now)| now - before.get(pid).copied().unwrap_or(0.0))
        .sum())
}

/// Keeps every thread of process `pid` on core `cpu`.
fn pin(pid: u32, cpu: usize) -> Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes within it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let Some(tid) = task?
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: `set` is a valid cpu_set_t of the size given.
        let pinned =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) } == 0;
        if !pinned {
            bail!("cannot pin thread {tid} of {pid} to core {cpu}");
        }
    }
    Ok(())
}

/// Pins every process of `server` to core `cpu` (the processes it starts later inherit it).
fn pin_server(server: &LocalServer, cpu: usize) -> Result<()> {
    for pid in server_cpu(server)?.keys() {
        pin(*pid, cpu)?;
    }
    Ok(())
}

/// Runs the scenario: the primary is `primary` (started with the replication settings).
pub async fn run(primary: &LocalServer, settings: &[(&str, &str)]) -> Result<()> {
    let counts: Vec<usize> = knobs("GAVEL_BENCH_LISTENERS", "0,10,30,100")?;
    let writers: usize = knob("GAVEL_BENCH_WRITERS", 4)?;
    let window: u64 = knob("GAVEL_BENCH_WINDOW_SECS", 10)?;
    let rate: f64 = knob("GAVEL_BENCH_RATE", 0.0)?;
    let pinned = knob("GAVEL_BENCH_PIN", 0u8)? == 1;
    let subscriber =
        LocalServer::start_with(5432, settings).context("starting the subscriber's server")?;
    if pinned {
        pin_server(primary, 0)?;
        pin_server(&subscriber, 1)?;
        pin(std::process::id(), 0)?;
        println!(
            "subscriber: pinned: the primary, the writers and the markers on core 0, the \
             subscriber on core 1, the listeners on their server's core"
        );
    }
    let db = "bench_subscriber";
    let primary_url = load::fresh(primary, db).await?;
    let subscriber_url = {
        load::connect(&subscriber.url("postgres"))
            .await?
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .await?;
        subscriber.url(db)
    };
    println!(
        "subscriber: {writers} writers, one row a transaction, {}, {window} s a run; \
         listeners LISTEN on gavel_events (bare: no fetch, no render); markers \
         {MARKERS_PER_SEC}/s",
        if rate > 0.0 {
            format!("{rate:.0} commits/s together")
        } else {
            "as fast as they can".to_owned()
        }
    );
    println!(
        "subscriber: | listeners | on | commits/s | commit p50 / p99 ms | primary CPU µs per \
         commit | subscriber CPU % of a core | INSERT to notified p50 / p99 ms |"
    );
    println!("subscriber: | --- | --- | --- | --- | --- | --- | --- |");
    let servers = (primary, &subscriber);
    let each = (writers, window, rate, pinned);
    let on_primary = runs(
        &counts,
        servers,
        (&primary_url, &primary_url),
        "primary",
        each,
    )
    .await?;
    // The subscriber copies nothing of the runs on the primary.
    load::connect(&primary_url)
        .await?
        .batch_execute("TRUNCATE debate_rounds")
        .await?;
    subscribe_to(&primary_url, &subscriber_url).await?;
    let on_subscriber = runs(
        &counts,
        servers,
        (&primary_url, &subscriber_url),
        "subscriber",
        each,
    )
    .await?;
    println!(
        "subscriber: the listeners on the subscriber, as a ratio of the same count on the primary:"
    );
    println!(
        "subscriber: | listeners | commits/s | commit p50 | commit p99 | primary CPU per commit \
         | INSERT to notified p50 | p99 |"
    );
    println!("subscriber: | --- | --- | --- | --- | --- | --- | --- |");
    for ((n, p), s) in counts.iter().zip(&on_primary).zip(&on_subscriber) {
        let notified = |f: fn(&Stats) -> f64| match (&s.notified, &p.notified) {
            (Some(s), Some(p)) => format!("{:.2}x", f(s) / f(p)),
            _ => "-".to_owned(),
        };
        println!(
            "subscriber: | {n} | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {} | {} |",
            s.commits_per_sec / p.commits_per_sec,
            s.commit.p50 / p.commit.p50,
            s.commit.p99 / p.commit.p99,
            s.primary_us / p.primary_us,
            notified(|x| x.p50),
            notified(|x| x.p99),
        );
    }
    Ok(())
}

/// A run for each count of listeners on `listen` (`on` names it), each row printed as it
/// comes.
async fn runs(
    counts: &[usize],
    (primary, subscriber): (&LocalServer, &LocalServer),
    (primary_url, listen): (&str, &str),
    on: &str,
    (writers, window, rate, pinned): (usize, u64, f64, bool),
) -> Result<Vec<Figures>> {
    // Listeners run on their server's core when pinned.
    let core = pinned.then_some(usize::from(on == "subscriber"));
    let mut all = Vec::new();
    for &n in counts {
        let figures = measure(
            (primary, primary_url),
            (subscriber, listen),
            (n, core),
            (writers, rate),
            window,
        )
        .await?;
        print_row(n, on, &figures);
        all.push(figures);
    }
    Ok(all)
}

/// Migrates `subscriber_url`'s database and subscribes it to the primary's publication, as
/// `gavel migrate --subscribe-to` does, then waits for the first copy.
pub(super) async fn subscribe_to(primary_url: &str, subscriber_url: &str) -> Result<()> {
    let publisher = check_publisher(&load::connect(primary_url).await?).await?;
    let mut client = load::connect(subscriber_url).await?;
    migrate(&mut client).await?;
    subscribe(&client, primary_url, &publisher).await?;
    let started = now_ns();
    loop {
        let now = sync(&client).await?;
        if now.errors > 0 {
            bail!("the subscription failed: {now:?}");
        }
        if now.tables > 0 && now.ready == now.tables {
            return Ok(());
        }
        if now_ns() - started > 60 * SECOND {
            bail!("the subscription did not copy the tables within 60 s: {now:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn print_row(n: usize, on: &str, f: &Figures) {
    let notified = f
        .notified
        .map_or("-".to_owned(), |s| format!("{:.2} / {:.2}", s.p50, s.p99));
    println!(
        "subscriber: | {n} | {on} | {:.0} | {:.3} / {:.3} | {:.0} | {:.1} | {notified} |",
        f.commits_per_sec, f.commit.p50, f.commit.p99, f.primary_us, f.subscriber_pct
    );
}

/// One run: `n` listeners on `listen` (the primary's database or the subscriber's) while the
/// writers and the markers commit on the primary.
async fn measure(
    (primary, primary_url): (&LocalServer, &str),
    (subscriber, listen): (&LocalServer, &str),
    (n, core): (usize, Option<usize>),
    (writers, rate): (usize, f64),
    window: u64,
) -> Result<Figures> {
    let markers = Markers::default();
    let mut bares = Vec::with_capacity(n);
    for i in 0..n {
        // The first listener's receipts are the figures; the others only listen.
        let log = if i == 0 {
            markers.clone()
        } else {
            Markers::default()
        };
        let bare = Bare::spawn(Kind::Tokio, listen, log)?;
        if let Some(core) = core {
            pin(bare.pid(), core)?;
        }
        bares.push(bare);
    }
    // The previous run's probe debate makes way for this run's.
    load::connect(primary_url)
        .await?
        .batch_execute(
            "DELETE FROM debate_sessions WHERE id LIKE 'probe%'; \
             DELETE FROM debate_rounds WHERE session_id LIKE 'probe%'",
        )
        .await
        .context("removing the previous probe debate")?;
    let mut probe = if n > 0 {
        Some(Probe::create(primary_url, markers.clone()).await?)
    } else {
        None
    };
    let (cpu_primary, cpu_subscriber) = (server_cpu(primary)?, server_cpu(subscriber)?);
    let started = now_ns();
    let end = started + window * SECOND;
    let mut tasks = JoinSet::new();
    let url: Arc<str> = primary_url.into();
    for w in 0..writers {
        let url = url.clone();
        // Each writer's share of the rate, as the gap between its commits (0: none).
        let gap = if rate > 0.0 {
            (writers as f64 * 1e9 / rate) as u64
        } else {
            0
        };
        tasks.spawn(async move { write(&url, w, gap, end).await });
    }
    let mut next_marker = started;
    while let Some(probe) = probe.as_mut()
        && now_ns() < end
    {
        probe.send().await?;
        next_marker += SECOND / MARKERS_PER_SEC;
        tokio::time::sleep(Duration::from_nanos(next_marker.saturating_sub(now_ns()))).await;
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done??);
    }
    let secs = (now_ns() - started) as f64 / 1e9;
    let (cpu_primary, cpu_subscriber) = (
        server_cpu_since(primary, &cpu_primary)?,
        server_cpu_since(subscriber, &cpu_subscriber)?,
    );
    let commits = latencies.len() as u64 + markers.sent();
    let notified = if n > 0 {
        markers.wait_seen(&[Observer::BARE]).await;
        for bare in &mut bares {
            bare.check()?;
        }
        Some(Stats::of(&markers.latencies(
            Observer::BARE,
            started,
            u64::MAX,
        )))
    } else {
        None
    };
    drop(bares);
    let mut ms: Vec<f64> = latencies.iter().map(|&ns| ns as f64 / 1e6).collect();
    ms.sort_by(f64::total_cmp);
    Ok(Figures {
        commits_per_sec: latencies.len() as f64 / secs,
        commit: Stats {
            count: ms.len(),
            lost: 0,
            p50: quantile(&ms, 0.5),
            p99: quantile(&ms, 0.99),
            max: quantile(&ms, 1.0),
        },
        primary_us: cpu_primary * 1e6 / commits as f64,
        subscriber_pct: cpu_subscriber / secs * 100.0,
        notified,
    })
}

/// A writer: one connection, one row a transaction until `end`, one every `gap` ns (0: as
/// fast as it can); each commit's latency (ns).
async fn write(url: &str, writer: usize, gap: u64, end: u64) -> Result<Vec<u64>> {
    let client = load::connect(url).await?;
    let insert = client
        .prepare(
            "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
             tokens_used) VALUES ($1, 1, 'theorist', 'a turn of the bench', 10)",
        )
        .await?;
    let session = format!("writer{writer}");
    let mut latencies = Vec::new();
    let mut next = now_ns();
    while now_ns() < end {
        if gap > 0 {
            next += gap;
            tokio::time::sleep(Duration::from_nanos(next.saturating_sub(now_ns()))).await;
        }
        let sent = now_ns();
        client
            .execute(&insert, &[&session])
            .await
            .context("a writer's insert")?;
        latencies.push(now_ns() - sent);
    }
    Ok(latencies)
}
