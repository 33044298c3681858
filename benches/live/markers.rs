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

/// Who saw a marker.
#[derive(Clone, Copy, Debug)]
pub enum Observer {
    Gavel = 0,
    Bare = 1,
}

#[derive(Default)]
struct Log {
    /// When marker k + 1's INSERT was sent.
    sent: Vec<u64>,
    /// Per observer, when marker k + 1 was first seen (filled in order).
    seen: [Vec<u64>; 2],
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
        self.log().seen[who as usize].len() as u64
    }

    /// `who` saw marker `k` at `at`: so did it every earlier one not yet seen. A number not
    /// sent yet (a half-drawn screen) is ignored.
    pub fn seen_upto(&self, who: Observer, k: u64, at: u64) {
        let mut log = self.log();
        let sent = log.sent.len() as u64;
        let seen = &mut log.seen[who as usize];
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
        let log = self.log();
        log.sent
            .get(log.seen[who as usize].len())
            .map_or(0, |&sent| now_ns().saturating_sub(sent))
    }

    /// The latency of each marker sent in `from..to` (ns), `None` where it was lost.
    pub fn latencies(&self, who: Observer, from: u64, to: u64) -> Vec<Option<u64>> {
        let log = self.log();
        let seen = &log.seen[who as usize];
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
        let mut ms: Vec<f64> = latencies
            .iter()
            .flatten()
            .map(|&ns| ns as f64 / 1e6)
            .collect();
        ms.sort_by(f64::total_cmp);
        Stats {
            count: latencies.len(),
            lost: latencies.len() - ms.len(),
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
