//! One run of the scenario against one gavel build, on fresh databases: gavel on its
//! pseudo-terminal and the bare listeners side by side, markers at 50/s on a probe debate, and
//! the phases in order (latency at 10 debates, the stream, latency with the stream held,
//! memory, CPU idle and under load, the ingest ramp, the first frame of a fresh console); the
//! databases are dropped at the end, so that the next run finds the servers as fresh.
//!
//! With several contexts (`GAVEL_BENCH_CONTEXTS`), each is a database on a server of its own
//! with its share of the debates, its writers, its probe debate and a bare listener, and one
//! console watches them all (`gavel watch --db a=URL --db b=URL`). The markers go to one
//! context at a time, in turns of [`TURN_SECS`], the console showing that context's probe: each
//! marker's latency is beside the bare listener on its own server. Between turns the markers
//! pause until both observers have seen every one sent (the bare listeners share one
//! observer's place, so their receipts stay in the markers' order), and the console opens the
//! next context's probe and is given [`SETTLE`] on it, as it is on the first before the
//! markers start.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures_util::future::try_join_all;
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
/// Writers in all, shared out among the contexts.
const WRITERS: usize = 4;
/// Debates in all before the stream, the probes among them.
const FEW: u64 = 10;
/// How long the markers go to one context before the next, with several.
pub const TURN_SECS: u64 = 5;
/// How long the console is left to settle on a probe it opened before markers go there: a
/// debate opened loads its history once, and the frames after it are slower for about 100 ms.
const SETTLE: Duration = Duration::from_millis(500);
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

/// One context of a run: a fresh database, its writers, its probe debate (which the console
/// shows while the markers go here) and the bare listener on its server.
struct Side {
    /// The context's name in the console (`a`, `b`, ...).
    name: String,
    url: String,
    probe: Probe,
    debates: Arc<Debates>,
    writers: Vec<Arc<Writer>>,
    bare: Bare,
}

impl Side {
    /// Context `n` (from 0) on a fresh database `db` of `server`, with `writers` writers and
    /// `seeded` running debates beside its probe.
    async fn create(
        (n, server): (usize, &LocalServer),
        db: &str,
        markers: &Markers,
        (writers, seeded): (usize, u64),
        sizes: &Sizes,
    ) -> Result<Side> {
        let name = char::from(b'a' + n as u8).to_string();
        let url = load::fresh(server, db).await?;
        // The first context's probe is named as with one (`:probe` opens it).
        let probe = match n {
            0 => Probe::create(&url, markers.clone()).await?,
            _ => Probe::create_named(&url, markers.clone(), &format!("probe-{name}")).await?,
        };
        let debates = Arc::new(Debates::new(sizes.turns / sizes.debates));
        let mut connected = Vec::new();
        for _ in 0..writers {
            connected.push(Arc::new(Writer::connect(&url).await?));
        }
        if seeded > 0 {
            let seed = Plan {
                end: seeded + 1,
                deadline: u64::MAX,
                chunk: seeded,
                finish: false,
            };
            connected[0]
                .run(&debates, &Gate::paced(f64::INFINITY), seed)
                .await?;
        }
        let bare = Bare::spawn(Kind::Tokio, &url, markers.clone())?;
        Ok(Side {
            name,
            url,
            probe,
            debates,
            writers: connected,
            bare,
        })
    }

    /// The debates in its database (probes included).
    fn held(&self) -> u64 {
        self.debates.next() - 1 + self.probe.debates()
    }
}

/// A run in progress: the contexts, the console and the markers.
struct Bench {
    bin: String,
    markers: Markers,
    sides: Vec<Side>,
    /// The context the markers go to now, and each turn of markers: its window (ns) and context.
    marking: usize,
    turns: Vec<(u64, u64, usize)>,
    progress: Progress,
    console: Console,
}

/// Runs the scenario against `bin` on a fresh database `db` of each of `servers`, a context
/// each.
pub async fn run(servers: &[&LocalServer], db: &str, bin: &str, sizes: &Sizes) -> Result<Figures> {
    let count = servers.len();
    match count {
        1 => println!("live: {bin} on a fresh database {db}"),
        n => println!("live: {bin} on {n} contexts, a fresh database {db} on a server each"),
    }
    let markers = Markers::default();
    // The writers shared out; 10 debates in all beside the stream, the probes among them.
    let writers = (WRITERS / count).max(1);
    let seeded = (FEW / count as u64).saturating_sub(1);
    let mut sides = Vec::with_capacity(count);
    for server in servers.iter().copied().enumerate() {
        sides.push(Side::create(server, db, &markers, (writers, seeded), sizes).await?);
    }
    let contexts: Vec<(&str, &str)> = sides.iter().map(|s| (&*s.name, &*s.url)).collect();
    let console = Console::spawn_on(bin, &contexts, markers.clone(), Observer::GAVEL)?;
    let debates = sides.iter().map(|s| s.debates.clone()).collect();
    let mut bench = Bench {
        bin: bin.to_owned(),
        markers,
        sides,
        marking: 0,
        turns: Vec::new(),
        progress: Progress::new(debates),
        console,
    };
    bench.watch_probe().await?;
    let figures = bench.measure(sizes).await?;
    // The next run (another number of contexts, another build) on servers as fresh as this
    // one's: no database of this run left for autovacuum to work on meanwhile.
    for server in servers {
        load::drop_database(server, db).await?;
    }
    Ok(figures)
}

impl Bench {
    /// Waits for the console to go live, then selects the first context's probe debate.
    async fn watch_probe(&mut self) -> Result<()> {
        self.console
            .open(self.sides[0].probe.id(), LIVE_LIMIT)
            .await?;
        tokio::time::sleep(SETTLE).await;
        Ok(())
    }

    /// The debates in every context's database.
    fn held(&self) -> u64 {
        self.sides.iter().map(Side::held).sum()
    }

    async fn measure(mut self, sizes: &Sizes) -> Result<Figures> {
        let mut figures = Figures {
            few_held: self.held(),
            ..Figures::default()
        };
        println!(
            "live: latency at {} debates, markers at 50/s for {LATENCY_SECS} s",
            figures.few_held
        );
        figures.few = self.latency().await?;
        println!(
            "live: stream {} turns into {} debates, markers going on",
            sizes.turns, sizes.debates
        );
        figures.stream = self.stream(sizes).await?;
        figures.held = self.held();
        println!("live: latency at {} debates", figures.held);
        figures.many = self.latency().await?;
        let mut bare_rss = 0.0;
        for side in &self.sides {
            bare_rss += rss_mib(side.bare.pid())?;
        }
        figures.rss_mib = Pair {
            gavel: rss_mib(self.console.pid())?,
            bare: bare_rss,
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
        println!("live: first frame of a fresh console on the databases as they stand");
        (figures.first_frame, figures.live) = self.first_frame().await?;
        Ok(figures)
    }

    /// Markers at 50/s for [`LATENCY_SECS`], nothing else written.
    async fn latency(&mut self) -> Result<Pair<Stats>> {
        let end = now_ns() + LATENCY_SECS * SECOND;
        let (from, to) = self.markers_until(|| now_ns() >= end).await?;
        self.await_markers().await?;
        if self.sides.len() > 1 {
            self.print_by_context(from, to);
        }
        Ok(self.stats(from, to))
    }

    fn stats(&self, from: u64, to: u64) -> Pair<Stats> {
        let of = |who| Stats::of(&self.markers.latencies(who, from, to));
        Pair {
            gavel: of(Observer::GAVEL),
            bare: of(Observer::BARE),
        }
    }

    /// Each context's share of the latency of the markers sent in `from..to`.
    fn print_by_context(&self, from: u64, to: u64) {
        for (n, side) in self.sides.iter().enumerate() {
            let of = |who| {
                let latencies: Vec<Option<u64>> = self
                    .turns
                    .iter()
                    .filter(|&&(start, end, at)| at == n && start >= from && end <= to)
                    .flat_map(|&(start, end, _)| self.markers.latencies(who, start, end))
                    .collect();
                Stats::of(&latencies)
            };
            let (gavel, bare) = (of(Observer::GAVEL), of(Observer::BARE));
            println!(
                "live:    context {}: {} markers, gavel p50 {:.2} / p99 {:.2} ms, bare p50 {:.2} / \
                 p99 {:.2} ms, lost by gavel {}, by bare {}",
                side.name,
                gavel.count,
                gavel.p50,
                gavel.p99,
                bare.p50,
                bare.p99,
                gavel.lost,
                bare.lost
            );
        }
    }

    /// Sends markers at 50/s until `stop`, to each context in turn when there are several,
    /// printing progress every 10 s; returns the window (ns) they were sent in.
    async fn markers_until(&mut self, stop: impl Fn() -> bool) -> Result<(u64, u64)> {
        let from = now_ns();
        let several = self.sides.len() > 1;
        loop {
            let turn_end = now_ns() + TURN_SECS * SECOND;
            let keys = self.console.keys();
            let side = &mut self.sides[self.marking];
            let turn = send_markers(
                &mut side.probe,
                std::slice::from_ref(&keys),
                &self.markers,
                &mut self.progress,
                std::slice::from_mut(&mut side.bare),
                MARKER_RATE,
                || stop() || (several && now_ns() >= turn_end),
            )
            .await?;
            self.turns.push((turn.0, turn.1, self.marking));
            if stop() {
                return Ok((from, now_ns()));
            }
            self.next_context().await?;
        }
    }

    /// Once every marker sent was seen, moves the markers and the console to the next
    /// context's probe.
    async fn next_context(&mut self) -> Result<()> {
        self.await_markers().await?;
        self.marking = (self.marking + 1) % self.sides.len();
        let probe = self.sides[self.marking].probe.id().to_owned();
        self.console.show(&probe).await?;
        tokio::time::sleep(SETTLE).await;
        Ok(())
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
        self.sides.iter_mut().try_for_each(|side| side.bare.check())
    }

    /// Every context's writers writing new completed debates at `turns_per_sec` in all until
    /// `deadline`; the future holds nothing of `self`, so markers may be sent meanwhile.
    fn load(&self, turns_per_sec: f64, deadline: u64) -> impl Future<Output = Result<u64>> + use<> {
        let plan = Plan {
            end: u64::MAX,
            deadline,
            chunk: 10,
            finish: true,
        };
        let plans = vec![plan; self.sides.len()];
        self.write_every(&Arc::new(Gate::paced(turns_per_sec)), plans)
    }

    /// Every context's writers through `gate`, each as its plan in `plans` says; returns the
    /// turns written.
    fn write_every(
        &self,
        gate: &Arc<Gate>,
        plans: Vec<Plan>,
    ) -> impl Future<Output = Result<u64>> + use<> {
        let writing: Vec<_> = (self.sides.iter().zip(plans))
            .map(|(side, plan)| {
                let writers = side.writers.clone();
                write_all(writers, side.debates.clone(), gate.clone(), plan)
            })
            .collect();
        async move { Ok(try_join_all(writing).await?.into_iter().sum()) }
    }

    /// Phase 2: the debates as fast as the writers go while gavel keeps up, markers meanwhile;
    /// each context gets its share of them.
    async fn stream(&mut self, sizes: &Sizes) -> Result<Stream> {
        let started = Instant::now();
        let count = self.sides.len() as u64;
        let firsts: Vec<u64> = self.sides.iter().map(|s| s.debates.next()).collect();
        // Context n's end: its share, the first contexts taking what does not divide evenly.
        let ends: Vec<u64> = (0..count)
            .zip(&firsts)
            .map(|(n, first)| first + sizes.debates / count + u64::from(n < sizes.debates % count))
            .collect();
        let gate = Arc::new(Gate::throttled(self.markers.clone()));
        let deadline = now_ns() + sizes.stream_limit.as_nanos() as u64;
        let plans = (ends.iter())
            .map(|&end| Plan {
                end,
                deadline,
                chunk: 40,
                finish: true,
            })
            .collect();
        let done = AtomicBool::new(false);
        let writing = self.write_every(&gate, plans);
        let writing = async {
            let written = writing.await;
            done.store(true, Ordering::Relaxed);
            written
        };
        let marking = self.markers_until(|| done.load(Ordering::Relaxed));
        let (turns, marked) = tokio::join!(writing, marking);
        let (turns, _) = (turns?, marked?);
        let now: Vec<u64> = self.sides.iter().map(|s| s.debates.next()).collect();
        let writers: usize = self.sides.iter().map(|s| s.writers.len()).sum();
        let stream = Stream {
            turns,
            debates: now
                .iter()
                .zip(&firsts)
                .map(|(now, first)| now - first)
                .sum(),
            secs: started.elapsed().as_secs_f64(),
            paused_secs: gate.paused().as_secs_f64() / writers as f64,
            complete: now.iter().zip(&ends).all(|(now, end)| now >= end),
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

    /// The CPU share (% of one core) of gavel and of the bare listeners (one a context, added
    /// up) while `window` runs.
    async fn cpu<T>(&self, window: impl Future<Output = T>) -> Result<Pair<f64>> {
        let bares: Vec<u32> = self.sides.iter().map(|side| side.bare.pid()).collect();
        let bare_secs = || -> Result<f64> { bares.iter().map(|&pid| cpu_secs(pid)).sum() };
        let pid = self.console.pid();
        let before = (cpu_secs(pid)?, bare_secs()?, Instant::now());
        window.await;
        let secs = before.2.elapsed().as_secs_f64();
        Ok(Pair {
            gavel: (cpu_secs(pid)? - before.0) / secs * 100.0,
            bare: (bare_secs()? - before.1) / secs * 100.0,
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
        let contexts: Vec<(&str, &str)> = self.sides.iter().map(|s| (&*s.name, &*s.url)).collect();
        let fresh = Console::spawn_on(&self.bin, &contexts, self.markers.clone(), Observer::GAVEL)?;
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

/// The progress line of the markers, every 10 s however they are sent: the markers sent, the
/// debates written, and how far behind each observer is.
pub struct Progress {
    last: u64,
    debates: Vec<Arc<Debates>>,
}

impl Progress {
    /// Counting the debates written in `debates` (one a database).
    pub fn new(debates: Vec<Arc<Debates>>) -> Progress {
        Progress {
            last: now_ns(),
            debates,
        }
    }

    /// Whether 10 s have passed since the last line (then a line is due now).
    fn due(&mut self) -> bool {
        let due = now_ns() - self.last >= WINDOW_SECS * SECOND;
        if due {
            self.last = now_ns();
        }
        due
    }

    fn print(&self, markers: &Markers) {
        let behind: Vec<String> = markers
            .behind_ms()
            .iter()
            .map(|(who, ms)| format!("{who}: {ms:.0}"))
            .collect();
        let written: u64 = self.debates.iter().map(|d| d.next() - 1).sum();
        println!(
            "live:    {} markers; {written} debates written; ms behind (0 gavel, 1 bare, 2 psycopg, \
             3 bare on a subscriber, 4.. consoles): {}",
            markers.sent(),
            behind.join(", ")
        );
    }
}

/// Markers at `rate` a second from one connection until `stop`, jumping the console to each
/// new probe debate; prints `progress` every 10 s. Returns the window (ns) they were sent in.
pub async fn send_markers(
    probe: &mut Probe,
    keys: &[Keys],
    markers: &Markers,
    progress: &mut Progress,
    bares: &mut [Bare],
    rate: u64,
    stop: impl Fn() -> bool,
) -> Result<(u64, u64)> {
    let from = now_ns();
    let mut tick = tokio::time::interval(Duration::from_nanos(SECOND / rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    while !stop() {
        tick.tick().await;
        if let Some(id) = probe.send().await? {
            for keys in keys {
                keys.send(&format!(":{id}\r"))?;
            }
        }
        if progress.due() {
            for bare in bares.iter_mut() {
                bare.check()?;
            }
            progress.print(markers);
        }
    }
    Ok((from, now_ns()))
}
