//! One run of the scenario against one gavel build, on a fresh database: gavel on its
//! pseudo-terminal and the bare listener side by side, markers at 50/s on the probe debate,
//! and the phases in order (latency at 10 debates, the stream, latency with the stream held,
//! memory, CPU idle and under load, the ingest ramp, the first frame of a fresh console).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gavel::store::postgres::LocalServer;
use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;

use super::bare::{Bare, Kind};
use super::console::{Console, Keys, LIVE};
use super::load::{self, Debates, Gate, Plan, Probe, Writer};
use super::markers::{LOST_AFTER_NS, Markers, Observer, Stats, now_ns, quantile};
use super::report::{Figures, Pair, Step, Stream};
use super::system::{cpu_secs, rss_mib};
use super::{knob, knobs};

const SECOND: u64 = 1_000_000_000;
const WRITERS: usize = 4;
/// Markers a second.
pub const MARKER_RATE: u64 = 50;
/// How long a latency phase sends markers.
const LATENCY_SECS: u64 = 20;
/// How long a CPU window and an ingest step last.
const WINDOW_SECS: u64 = 10;
/// How long gavel may take to go live.
const LIVE_LIMIT: Duration = Duration::from_secs(120);

/// The sizes of a run, from the environment.
#[derive(Debug)]
pub struct Sizes {
    pub debates: u64,
    pub turns: u64,
    /// The stream stops here even if unfinished (`GAVEL_BENCH_STREAM_SECS`).
    pub stream_limit: Duration,
    pub steps: Vec<u32>,
}

impl Sizes {
    /// `GAVEL_BENCH_DEBATES` (100,000), `GAVEL_BENCH_TURNS` (1,000,000),
    /// `GAVEL_BENCH_STREAM_SECS` (1,800), `GAVEL_BENCH_STEPS` (1000,2000,5000,10000,15000).
    pub fn from_env() -> Result<Sizes> {
        let debates: u64 = knob("GAVEL_BENCH_DEBATES", 100_000)?;
        let turns: u64 = knob("GAVEL_BENCH_TURNS", 1_000_000)?;
        if debates == 0 || turns < debates {
            bail!("GAVEL_BENCH_TURNS must be at least GAVEL_BENCH_DEBATES, and that at least 1");
        }
        Ok(Sizes {
            debates,
            turns,
            stream_limit: Duration::from_secs(knob("GAVEL_BENCH_STREAM_SECS", 1_800)?),
            steps: knobs("GAVEL_BENCH_STEPS", "1000,2000,5000,10000,15000")?,
        })
    }
}

/// A run in progress: the processes, the writers and the markers.
struct Bench {
    url: String,
    bin: String,
    markers: Markers,
    probe: Probe,
    debates: Arc<Debates>,
    writers: Vec<Arc<Writer>>,
    console: Console,
    bare: Bare,
}

/// Runs the scenario against `bin` on a fresh database `db` of `server`.
pub async fn run(server: &LocalServer, db: &str, bin: &str, sizes: &Sizes) -> Result<Figures> {
    println!("live: {bin} on a fresh database {db}");
    let url = load::fresh(server, db).await?;
    let markers = Markers::default();
    let probe = Probe::create(&url, markers.clone()).await?;
    let debates = Arc::new(Debates::new(sizes.turns / sizes.debates));
    let mut writers = Vec::new();
    for _ in 0..WRITERS {
        writers.push(Arc::new(Writer::connect(&url).await?));
    }
    // 9 other running debates, beside the probe.
    let seed = Plan {
        end: 10,
        deadline: u64::MAX,
        chunk: 9,
        finish: false,
    };
    writers[0]
        .run(&debates, &Gate::paced(f64::INFINITY), seed)
        .await?;
    let bare = Bare::spawn(Kind::Tokio, &url, markers.clone())?;
    let console = Console::spawn(bin, &url, markers.clone(), Observer::GAVEL)?;
    let mut bench = Bench {
        url,
        bin: bin.to_owned(),
        markers,
        probe,
        debates,
        writers,
        console,
        bare,
    };
    bench.watch_probe().await?;
    bench.measure(sizes).await
}

impl Bench {
    /// Waits for the console to go live, then selects the probe debate.
    async fn watch_probe(&mut self) -> Result<()> {
        self.console.open(self.probe.id(), LIVE_LIMIT).await
    }

    async fn measure(mut self, sizes: &Sizes) -> Result<Figures> {
        let mut figures = Figures::default();
        println!("live: latency at 10 debates, markers at 50/s for {LATENCY_SECS} s");
        figures.few = self.latency().await?;
        println!(
            "live: stream {} turns into {} debates, markers going on",
            sizes.turns, sizes.debates
        );
        figures.stream = self.stream(sizes).await?;
        figures.held = self.debates.next() - 1 + self.markers.sent().div_ceil(load::PROBE_ROUNDS);
        println!("live: latency at {} debates", figures.held);
        figures.many = self.latency().await?;
        figures.rss_mib = Pair {
            gavel: rss_mib(self.console.pid())?,
            bare: rss_mib(self.bare.pid())?,
        };
        println!("live: CPU idle for {WINDOW_SECS} s, then at 1,000 turns/s");
        figures.cpu_idle = self
            .cpu(tokio::time::sleep(Duration::from_secs(WINDOW_SECS)))
            .await?;
        let load = self.load(1000.0, now_ns() + WINDOW_SECS * SECOND);
        figures.cpu_load = self.cpu(load).await?;
        self.await_markers().await?;
        println!("live: ingest steps of {WINDOW_SECS} s, markers at 50/s");
        for &rate in &sizes.steps {
            let step = self.step(rate).await?;
            println!(
                "live:    {rate} turns/s ({:.0} written): gavel {}, bare {}",
                step.achieved,
                if step.sustained.gavel {
                    "sustained"
                } else {
                    "not sustained"
                },
                if step.sustained.bare {
                    "sustained"
                } else {
                    "not sustained"
                }
            );
            let failed = !step.sustained.gavel && !step.sustained.bare;
            figures.steps.push(step);
            if failed {
                break;
            }
        }
        println!("live: first frame of a fresh console on the full database");
        (figures.first_frame, figures.live) = self.first_frame().await?;
        Ok(figures)
    }

    /// Markers at 50/s for [`LATENCY_SECS`], nothing else written.
    async fn latency(&mut self) -> Result<Pair<Stats>> {
        let end = now_ns() + LATENCY_SECS * SECOND;
        let (from, to) = self.markers_until(|| now_ns() >= end).await?;
        self.await_markers().await?;
        Ok(self.stats(from, to))
    }

    fn stats(&self, from: u64, to: u64) -> Pair<Stats> {
        let of = |who| Stats::of(&self.markers.latencies(who, from, to));
        Pair {
            gavel: of(Observer::GAVEL),
            bare: of(Observer::BARE),
        }
    }

    /// Sends markers at 50/s until `stop`, printing progress every 10 s; returns the window
    /// (ns) they were sent in.
    async fn markers_until(&mut self, stop: impl Fn() -> bool) -> Result<(u64, u64)> {
        let keys = self.console.keys();
        send_markers(
            &mut self.probe,
            std::slice::from_ref(&keys),
            &self.markers,
            &self.debates,
            std::slice::from_mut(&mut self.bare),
            MARKER_RATE,
            stop,
        )
        .await
    }

    /// Waits until both observers saw every marker sent, or [`LOST_AFTER_NS`] has passed since
    /// the last was sent.
    async fn await_markers(&mut self) -> Result<()> {
        let last = now_ns();
        while now_ns() - last < LOST_AFTER_NS {
            let sent = self.markers.sent();
            if self.markers.seen(Observer::GAVEL) >= sent
                && self.markers.seen(Observer::BARE) >= sent
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.bare.check()
    }

    /// All writers writing new completed debates at `turns_per_sec` until `deadline`; the
    /// future holds nothing of `self`, so markers may be sent meanwhile.
    fn load(&self, turns_per_sec: f64, deadline: u64) -> impl Future<Output = Result<u64>> + use<> {
        let plan = Plan {
            end: u64::MAX,
            deadline,
            chunk: 10,
            finish: true,
        };
        let gate = Arc::new(Gate::paced(turns_per_sec));
        write_all(self.writers.clone(), self.debates.clone(), gate, plan)
    }

    /// Phase 2: the debates as fast as the writers go while gavel keeps up, markers meanwhile.
    async fn stream(&mut self, sizes: &Sizes) -> Result<Stream> {
        let started = Instant::now();
        let first = self.debates.next();
        let gate = Arc::new(Gate::throttled(self.markers.clone()));
        let plan = Plan {
            end: first + sizes.debates,
            deadline: now_ns() + sizes.stream_limit.as_nanos() as u64,
            chunk: 40,
            finish: true,
        };
        let done = AtomicBool::new(false);
        let writing = write_all(
            self.writers.clone(),
            self.debates.clone(),
            gate.clone(),
            plan,
        );
        let writing = async {
            let written = writing.await;
            done.store(true, Ordering::Relaxed);
            written
        };
        let keys = self.console.keys();
        let marking = send_markers(
            &mut self.probe,
            std::slice::from_ref(&keys),
            &self.markers,
            &self.debates,
            std::slice::from_mut(&mut self.bare),
            MARKER_RATE,
            || done.load(Ordering::Relaxed),
        );
        let (turns, marked) = tokio::join!(writing, marking);
        let (turns, _) = (turns?, marked?);
        let stream = Stream {
            turns,
            debates: self.debates.next() - first,
            secs: started.elapsed().as_secs_f64(),
            paused_secs: gate.paused().as_secs_f64() / WRITERS as f64,
            complete: self.debates.next() >= plan.end,
        };
        println!(
            "live:    {} turns into {} debates in {:.1} s ({:.0} turns/s; a writer held back {:.1} s)",
            stream.turns,
            stream.debates,
            stream.secs,
            stream.turns as f64 / stream.secs,
            stream.paused_secs
        );
        self.await_markers().await?;
        Ok(stream)
    }

    /// The CPU share (% of one core) of gavel and the bare listener while `window` runs.
    async fn cpu<T>(&self, window: impl Future<Output = T>) -> Result<Pair<f64>> {
        let pids = (self.console.pid(), self.bare.pid());
        let before = (cpu_secs(pids.0)?, cpu_secs(pids.1)?, Instant::now());
        window.await;
        let secs = before.2.elapsed().as_secs_f64();
        Ok(Pair {
            gavel: (cpu_secs(pids.0)? - before.0) / secs * 100.0,
            bare: (cpu_secs(pids.1)? - before.1) / secs * 100.0,
        })
    }

    /// One ingest step: `rate` turns/s for [`WINDOW_SECS`] with markers; sustained when no
    /// marker is lost and the median lag of the last 2 s is under 250 ms and at most twice that
    /// of the first 2 s, and the writers reached 90% of the rate.
    async fn step(&mut self, rate: u32) -> Result<Step> {
        let end = now_ns() + WINDOW_SECS * SECOND;
        let writing = tokio::spawn(self.load(f64::from(rate), end));
        let (from, to) = self.markers_until(|| now_ns() >= end).await?;
        let turns = writing.await.context("the writers panicked")??;
        self.await_markers().await?;
        let achieved = turns as f64 / ((to - from) as f64 / 1e9);
        let sustained = |who| {
            let median = |a: u64, b: u64| {
                let mut ms: Vec<f64> = self
                    .markers
                    .latencies(who, a, b)
                    .into_iter()
                    .flatten()
                    .map(|ns| ns as f64 / 1e6)
                    .collect();
                ms.sort_by(f64::total_cmp);
                quantile(&ms, 0.5)
            };
            let lost = self.markers.latencies(who, from, to).contains(&None);
            let (first, last) = (median(from, from + 2 * SECOND), median(to - 2 * SECOND, to));
            !lost && last < 250.0 && last <= 2.0 * first && achieved >= 0.9 * f64::from(rate)
        };
        Ok(Step {
            rate,
            achieved,
            sustained: Pair {
                gavel: sustained(Observer::GAVEL),
                bare: sustained(Observer::BARE),
            },
        })
    }

    /// Phase 7: quits the console and times a fresh one to its first frame and to live (ms).
    async fn first_frame(&mut self) -> Result<(Option<f64>, Option<f64>)> {
        let fresh = Console::spawn(&self.bin, &self.url, self.markers.clone(), Observer::GAVEL)?;
        std::mem::replace(&mut self.console, fresh).quit().await?;
        let went_live = self
            .console
            .wait_for(LIVE, LIVE_LIMIT, |v| v.live.is_some())
            .await;
        if let Err(e) = &went_live {
            println!("live:    {e:#}");
        }
        let view = self.console.view();
        let since = |t: Option<u64>| t.map(|t| (t - self.console.spawned) as f64 / 1e6);
        Ok((since(view.first_frame), since(view.live)))
    }
}

/// All `writers` as `gate` lets them, until `plan` is done; returns the turns written.
pub async fn write_all(
    writers: Vec<Arc<Writer>>,
    debates: Arc<Debates>,
    gate: Arc<Gate>,
    plan: Plan,
) -> Result<u64> {
    let mut tasks = JoinSet::new();
    for writer in writers {
        let (debates, gate) = (debates.clone(), gate.clone());
        tasks.spawn(async move { writer.run(&debates, &gate, plan).await });
    }
    let mut turns = 0;
    while let Some(written) = tasks.join_next().await {
        turns += written.context("a writer panicked")??;
    }
    Ok(turns)
}

/// Markers at `rate` a second from one connection until `stop`, jumping the console to each
/// new probe debate; prints progress every 10 s. Returns the window (ns) they were sent in.
pub async fn send_markers(
    probe: &mut Probe,
    keys: &[Keys],
    markers: &Markers,
    debates: &Debates,
    bares: &mut [Bare],
    rate: u64,
    stop: impl Fn() -> bool,
) -> Result<(u64, u64)> {
    let from = now_ns();
    let mut tick = tokio::time::interval(Duration::from_nanos(SECOND / rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut progress = from;
    while !stop() {
        tick.tick().await;
        if let Some(id) = probe.send().await? {
            for keys in keys {
                keys.send(&format!(":{id}\r"))?;
            }
        }
        if now_ns() - progress >= WINDOW_SECS * SECOND {
            progress = now_ns();
            for bare in bares.iter_mut() {
                bare.check()?;
            }
            let behind: Vec<String> = markers
                .behind_ms()
                .iter()
                .map(|(who, ms)| format!("{who}: {ms:.0}"))
                .collect();
            println!(
                "live:    {} markers; {} debates written; ms behind (0 gavel, 1 bare, 2 psycopg, \
                 3 bare on a subscriber, 4.. consoles): {}",
                markers.sent(),
                debates.next() - 1,
                behind.join(", ")
            );
        }
    }
    Ok((from, now_ns()))
}
