//! The console's clock, moved by the draw loop's ticks: the time a gated decision's wait runs
//! in. Against a database that is wall time; in the demo it is the simulated clock (it follows
//! the playback speed and stops while paused, as the simulator's own wait does).

use std::time::Duration;

use chrono::{DateTime, Utc};

/// A moment on this clock: milliseconds since the console started (before it, for what happened
/// earlier).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(i64);

/// Whole milliseconds of `duration`, saturating.
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Instant {
    /// This instant plus `wait`.
    pub fn after(self, wait: Duration) -> Instant {
        Instant(self.0.saturating_add(millis(wait)))
    }

    /// How long from `now` until this instant; zero once it passed.
    pub fn left(self, now: Instant) -> Duration {
        Duration::from_millis(u64::try_from(self.0.saturating_sub(now.0)).unwrap_or(0))
    }
}

/// Time since the console started, as waits count it.
#[derive(Debug, Clone, Default)]
pub struct WaitClock {
    now: Instant,
    /// The wall time of the last tick.
    wall: Option<DateTime<Utc>>,
    /// How fast waits run against wall time (the playback speed; 0 while paused).
    rate: f64,
}

impl WaitClock {
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Moves to the wall time `wall`, the time since the last tick running at the rate set. A
    /// wall clock set back moves nothing.
    pub fn tick(&mut self, wall: DateTime<Utc>) {
        if let Some(last) = self.wall {
            let passed = (wall - last).to_std().unwrap_or_default();
            self.now = self.now.after(self.scaled(passed));
        }
        self.wall = Some(wall);
    }

    /// How fast waits run from now on: 1 for a database; the playback speed, or 0 while
    /// paused, in the demo.
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = rate;
    }

    /// The instant of something that happened at the wall time `at` (a decision's
    /// `decided_at`): now, less the wall time since, at the current rate; now when `at` is not
    /// known, is in the future, or no tick came yet.
    pub fn since(&self, at: Option<DateTime<Utc>>) -> Instant {
        let ago = match (self.wall, at) {
            (Some(wall), Some(at)) => (wall - at).to_std().unwrap_or_default(),
            _ => Duration::ZERO,
        };
        Instant(self.now.0.saturating_sub(millis(self.scaled(ago))))
    }

    /// `wall` time at the current rate.
    fn scaled(&self, wall: Duration) -> Duration {
        Duration::try_from_secs_f64(wall.as_secs_f64() * self.rate.max(0.0))
            .unwrap_or(Duration::MAX)
    }
}
