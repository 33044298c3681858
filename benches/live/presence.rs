//! `cargo bench --bench live -- presence`: what the presence of many consoles costs the
//! database. `GAVEL_BENCH_CONSOLES` (30) `gavel watch` on one fresh database, each on a
//! pseudo-terminal with a gated debate of its own open, its decision waiting, and each
//! counting all the others in its header before anything is measured. A bare listener (LISTEN
//! `gavel_presence`, nothing else) counts the messages and their bytes. Two windows of
//! `GAVEL_BENCH_WINDOW_SECS` (30) each:
//!
//! 1. idle: the consoles only say they are here, once a heartbeat;
//! 2. claims changing: each console opens the confirmation on its waiting decision and cancels
//!    it a second later, every 2 s, the consoles staggered over the 2 s.
//!
//! Each window reports the messages a second on `gavel_presence`, their mean size, the
//! server's CPU (every server process; the consoles' presence backends; their feed backends,
//! idle beside them; the bare listener's backend, which hears every message and sends none:
//! the floor a listening backend costs) and the consoles' own CPU. Then `GAVEL_BENCH_KILLS`
//! (5) consoles are killed with SIGKILL one after another, and every other console's header
//! is watched until its count drops: how long a dead console lingers on the others' screens.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use gavel::store::postgres::{CHANNEL, HEARTBEAT, LINGER, LocalServer, Pump, Target};
use tokio::time::Instant;

use super::console::{Console, Keys};
use super::consoles::{Owner, server_cpu, server_pids};
use super::knob;
use super::load;
use super::markers::{Markers, Observer, now_ns};
use super::system::cpu_secs;

const LIVE_LIMIT: Duration = Duration::from_secs(120);
/// How often each console takes and lets go of its claim while claims change.
const CLAIM_EVERY: Duration = Duration::from_secs(2);

/// What the bare listener heard on `gavel_presence`.
#[derive(Default)]
struct Heard {
    messages: AtomicU64,
    bytes: AtomicU64,
}

/// One window's figures: CPU as % of a core.
struct Window {
    messages_per_sec: f64,
    mean_bytes: f64,
    /// Every server process's, then each owner's (indexed by [`Owner`]).
    server: f64,
    owners: [f64; 4],
    /// Each console's own, on average.
    own: f64,
}

/// Debate `i`'s id.
fn ward(i: usize) -> String {
    format!("ward-{i:02}")
}

/// The header's count of `n` other consoles.
fn others(n: usize) -> String {
    match n {
        1 => "│ 1 other here ".to_owned(),
        n => format!("│ {n} others here "),
    }
}

/// Runs the scenario against `bin`.
pub async fn run(server: &LocalServer, bin: &str) -> Result<()> {
    let count: usize = knob("GAVEL_BENCH_CONSOLES", 30)?;
    let window = Duration::from_secs(knob("GAVEL_BENCH_WINDOW_SECS", 30)?);
    let kills: usize = knob("GAVEL_BENCH_KILLS", 5)?;
    if count < 2 {
        bail!("GAVEL_BENCH_CONSOLES={count}: presence needs two consoles at least");
    }
    let db = "bench_presence";
    let url = load::fresh(server, db).await?;
    let writer = load::connect(&url).await?;
    for i in 0..count {
        writer
            .batch_execute(&format!(
                "INSERT INTO debate_sessions (id, question, controller_mode, personas) \
                 VALUES ('{0}', 'Presence bench', 'gated', '[\"theorist\", \"skeptic\"]'); \
                 INSERT INTO debate_round_decisions (session_id, round_index, decision) \
                 VALUES ('{0}', 1, 'continue_baseline');",
                ward(i)
            ))
            .await?;
    }
    let heard = Arc::new(Heard::default());
    let bare = Target::exact(&format!("{url} application_name=bare"))?;
    let counting = heard.clone();
    let (_bare, _pump) = Pump::listen(&bare, &[CHANNEL], move |note| {
        counting.messages.fetch_add(1, Ordering::Relaxed);
        let bytes = note.payload().len() as u64;
        counting.bytes.fetch_add(bytes, Ordering::Relaxed);
        true
    })
    .await?;

    let started = Instant::now();
    let mut consoles = Vec::new();
    for i in 0..count {
        let who = Observer::console(i);
        consoles.push(Console::spawn(bin, &url, Markers::default(), who)?);
    }
    for (i, console) in consoles.iter_mut().enumerate() {
        console.open(&ward(i), LIVE_LIMIT).await?;
    }
    let everyone = others(count - 1);
    for console in &mut consoles {
        console
            .wait_for(&everyone, LIVE_LIMIT, |v| v.text.contains(&everyone))
            .await?;
    }
    println!(
        "presence: {count} consoles started, live and counting each other in {:.1} s; \
         heartbeat {HEARTBEAT:?}, a console dropped {LINGER:?} after it was last heard",
        started.elapsed().as_secs_f64()
    );
    let admin = load::connect(&server.url("postgres")).await?;
    let pids = server_pids(&admin, db).await?;
    header();
    let quiet = async {
        tokio::time::sleep(window).await;
        Ok(())
    };
    let idle = measure(&consoles, &pids, &heard, quiet).await?;
    row("idle", count, &idle);
    let keys: Vec<Keys> = consoles.iter().map(Console::keys).collect();
    let changing = measure(&consoles, &pids, &heard, claims(keys, window)).await?;
    row("claims changing", count, &changing);
    lingering(consoles, kills).await
}

/// The figures of a window that lasts as long as `load`.
async fn measure(
    consoles: &[Console],
    pids: &[(u32, Owner)],
    heard: &Heard,
    load: impl Future<Output = Result<()>>,
) -> Result<Window> {
    let own_pids: Vec<u32> = consoles.iter().map(Console::pid).collect();
    let own = || own_pids.iter().map(|&p| cpu_secs(p)).sum::<Result<f64>>();
    let (own_before, server_before) = (own()?, server_cpu(pids));
    let messages = heard.messages.load(Ordering::Relaxed);
    let bytes = heard.bytes.load(Ordering::Relaxed);
    let started = Instant::now();
    load.await?;
    let secs = started.elapsed().as_secs_f64();
    let (own_after, server_after) = (own()?, server_cpu(pids));
    let messages = heard.messages.load(Ordering::Relaxed) - messages;
    let bytes = heard.bytes.load(Ordering::Relaxed) - bytes;
    let share = |i: usize| (server_after[i] - server_before[i]) / secs * 100.0;
    let owners = [0, 1, 2, 3].map(share);
    Ok(Window {
        messages_per_sec: messages as f64 / secs,
        mean_bytes: bytes as f64 / messages.max(1) as f64,
        server: owners.iter().sum(),
        owners,
        own: (own_after - own_before) / secs * 100.0 / consoles.len() as f64,
    })
}

/// Each console opens the confirmation on its waiting decision (`a`) and cancels it (Esc) a
/// second later, every [`CLAIM_EVERY`], staggered, for `window`.
async fn claims(keys: Vec<Keys>, window: Duration) -> Result<()> {
    let end = Instant::now() + window;
    let count = keys.len() as u32;
    let tasks: Vec<_> = (0u32..)
        .zip(keys)
        .map(|(i, keys)| {
            tokio::spawn(async move {
                tokio::time::sleep(CLAIM_EVERY * i / count).await;
                while Instant::now() + CLAIM_EVERY <= end {
                    keys.send("a")?;
                    tokio::time::sleep(CLAIM_EVERY / 2).await;
                    keys.send("\x1b")?;
                    tokio::time::sleep(CLAIM_EVERY / 2).await;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    tokio::time::sleep_until(end).await;
    Ok(())
}

/// Kills `kills` consoles with SIGKILL, one after another, each time watching every other
/// console's header until its count drops; prints how long that took.
async fn lingering(mut consoles: Vec<Console>, kills: usize) -> Result<()> {
    let mut lingered = Vec::new();
    let kills = kills.min(consoles.len() - 1);
    for _ in 0..kills {
        let fewer = others(consoles.len() - 2);
        let killed = now_ns();
        // Dropping a console kills it with SIGKILL (`Child::kill`).
        drop(consoles.pop());
        let mut watching: Vec<&Console> = consoles.iter().collect();
        while !watching.is_empty() {
            watching.retain(|console| {
                let gone = console.view().text.contains(&fewer);
                if gone {
                    lingered.push((now_ns() - killed) as f64 / 1e9);
                }
                !gone
            });
            if now_ns() - killed > LIVE_LIMIT.as_nanos() as u64 {
                bail!("a killed console still counted after {LIVE_LIMIT:?}");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    lingered.sort_by(f64::total_cmp);
    let at = |q: f64| lingered[((lingered.len() - 1) as f64 * q).round() as usize];
    println!(
        "presence: a console killed with SIGKILL left the others' headers after \
         {:.2} / {:.2} / {:.2} s (min / median / max; {} kills, {} sightings)",
        at(0.0),
        at(0.5),
        at(1.0),
        kills,
        lingered.len()
    );
    Ok(())
}

fn header() {
    println!(
        "presence: | load | consoles | messages/s on gavel_presence | mean bytes | \
         deliveries/s | server CPU, all (% of a core) | presence backends, all | per console | \
         per console ÷ the bare listener's backend | feed backends, per console | the bare \
         listener's backend | each console's own CPU |"
    );
    println!("presence: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
}

fn row(load: &str, consoles: usize, w: &Window) {
    let n = consoles as f64;
    println!(
        "presence: | {load} | {consoles} | {:.1} | {:.0} | {:.0} | {:.1} | {:.2} | {:.3} | \
         {:.2} | {:.3} | {:.3} | {:.2} |",
        w.messages_per_sec,
        w.mean_bytes,
        // Every console's presence connection and the bare listener hear every message.
        w.messages_per_sec * (n + 1.0),
        w.server,
        w.owners[Owner::Presence as usize],
        w.owners[Owner::Presence as usize] / n,
        w.owners[Owner::Presence as usize] / n / w.owners[Owner::Bare as usize],
        w.owners[Owner::Console as usize] / n,
        w.owners[Owner::Bare as usize],
        w.own,
    );
}
