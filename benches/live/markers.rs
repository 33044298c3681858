//! Markers: probe rounds whose INSERT time is recorded, and when each observer (gavel's
//! emulated screen, the bare listener) first had each one. Marker k (from 1, across every probe
//! debate of a run) is the round whose persona is `mk{k:07}`. Times are CLOCK_MONOTONIC
//! nanoseconds, comparable across processes.

use std::sync::{Arc, Mutex, MutexGuard};

/// A marker not seen this long after its INSERT was sent counts as lost.
pub const LOST_AFTER_NS: u64 = 10_000_000_000;

/// CLOCK_MONOTONIC now, in nanoseconds (the same clock in every process of the machine).
pub fn now_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Who saw a marker: gavel's screen, a bare listener, or one of several consoles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observer(usize);

impl Observer {
    /// The console under test.
    pub const GAVEL: Observer = Observer(0);
    /// The bare tokio-postgres listener.
    pub const BARE: Observer = Observer(1);
    /// The bare psycopg listener.
    pub const PSYCOPG: Observer = Observer(2);
    /// The bare tokio-postgres listener on a subscriber (the `through` scenario).
    pub const BARE_SUBSCRIBER: Observer = Observer(3);

    /// Console `n` (from 0) of a run with several.
    pub fn console(n: usize) -> Observer {
        Observer(4 + n)
    }
}

#[derive(Default)]
struct Log {
    /// When marker k + 1's INSERT was sent.
    sent: Vec<u64>,
    /// Per observer, when marker k + 1 was first seen (filled in order).
    seen: Vec<Vec<u64>>,
}

impl Log {
    fn seen(&mut self, who: Observer) -> &mut Vec<u64> {
        if self.seen.len() <= who.0 {
            self.seen.resize_with(who.0 + 1, Vec::new);
        }
        &mut self.seen[who.0]
    }
}

/// The markers of one run, shared by the writer and both observers' reader threads.
#[derive(Clone, Default)]
pub struct Markers(Arc<Mutex<Log>>);

impl Markers {
    fn log(&self) -> MutexGuard<'_, Log> {
        // A reader thread that panicked leaves the log as it was: still readable.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that the next marker's INSERT is sent now; returns its number.
    pub fn sending(&self) -> u64 {
        let mut log = self.log();
        log.sent.push(now_ns());
        log.sent.len() as u64
    }

    /// How many markers were sent.
    pub fn sent(&self) -> u64 {
        self.log().sent.len() as u64
    }

    /// How many markers `who` has seen.
    pub fn seen(&self, who: Observer) -> u64 {
        self.log().seen(who).len() as u64
    }

    /// `who` saw marker `k` at `at`: so did it every earlier one not yet seen. A number not
    /// sent yet (a half-drawn screen) is ignored.
    pub fn seen_upto(&self, who: Observer, k: u64, at: u64) {
        let mut log = self.log();
        let sent = log.sent.len() as u64;
        let seen = log.seen(who);
        while (seen.len() as u64) < k.min(sent) {
            seen.push(at);
        }
    }

    /// `who` saw the next marker at `at` (the listener hears them in commit order).
    pub fn seen_next(&self, who: Observer, at: u64) {
        let next = self.seen(who) + 1;
        self.seen_upto(who, next, at);
    }

    /// How far `who` is behind: the age of the oldest marker it has not seen (0 when none).
    pub fn lag_ns(&self, who: Observer) -> u64 {
        let mut log = self.log();
        let seen = log.seen(who).len();
        log.sent
            .get(seen)
            .map_or(0, |&sent| now_ns().saturating_sub(sent))
    }

    /// How far behind (ms) each observer that has seen a marker is, by observer number.
    pub fn behind_ms(&self) -> Vec<(usize, f64)> {
        let log = self.log();
        let now = now_ns();
        log.seen
            .iter()
            .enumerate()
            .filter(|(_, seen)| !seen.is_empty())
            .map(|(who, seen)| {
                let lag = log
                    .sent
                    .get(seen.len())
                    .map_or(0, |&s| now.saturating_sub(s));
                (who, lag as f64 / 1e6)
            })
            .collect()
    }

    /// The latency of each marker sent in `from..to` (ns), `None` where it was lost.
    pub fn latencies(&self, who: Observer, from: u64, to: u64) -> Vec<Option<u64>> {
        let mut log = self.log();
        log.seen(who);
        let seen = &log.seen[who.0];
        log.sent
            .iter()
            .enumerate()
            .filter(|&(_, &sent)| (from..to).contains(&sent))
            .map(|(k, &sent)| {
                seen.get(k)
                    .map(|&at| at.saturating_sub(sent))
                    .filter(|&latency| latency <= LOST_AFTER_NS)
            })
            .collect()
    }
}

impl Markers {
    /// Waits until each of `who` saw every marker sent, or [`LOST_AFTER_NS`] has passed.
    pub async fn wait_seen(&self, who: &[Observer]) {
        let started = now_ns();
        while now_ns() - started < LOST_AFTER_NS {
            let sent = self.sent();
            if who.iter().all(|&w| self.seen(w) >= sent) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// For each marker sent in `from..to`: how much later `who` saw it than `base` did (ms, may
    /// be negative), `None` where either lost it.
    pub fn lags(&self, who: Observer, base: Observer, from: u64, to: u64) -> Vec<Option<f64>> {
        let (of, by) = (
            self.latencies(who, from, to),
            self.latencies(base, from, to),
        );
        of.iter()
            .zip(&by)
            .map(|(a, b)| Some((*a.as_ref()? as f64 - *b.as_ref()? as f64) / 1e6))
            .collect()
    }
}

/// Latency figures of one observer over a window of markers, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub count: usize,
    pub lost: usize,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(latencies: &[Option<u64>]) -> Stats {
        let ms: Vec<Option<f64>> = latencies
            .iter()
            .map(|ns| ns.map(|ns| ns as f64 / 1e6))
            .collect();
        Stats::of_ms(&ms)
    }

    /// The same of figures already in milliseconds (`None`: lost).
    pub fn of_ms(figures: &[Option<f64>]) -> Stats {
        let mut ms: Vec<f64> = figures.iter().flatten().copied().collect();
        ms.sort_by(f64::total_cmp);
        Stats {
            count: figures.len(),
            lost: figures.len() - ms.len(),
            p50: quantile(&ms, 0.5),
            p99: quantile(&ms, 0.99),
            max: quantile(&ms, 1.0),
        }
    }
}

/// The `q` quantile of sorted values (NaN when there are none).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}
