//! Pacing at so many a second on average, with one interval of slack: what comes after a quiet
//! spell goes at once, a flood gets one per interval. The draw loop paces its frames with it,
//! and the live feed its reads (a stream's rows read together, once a frame, instead of a round
//! trip each).

use std::time::{Duration, Instant};

/// The earliest the next one may go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    every: Duration,
    next: Instant,
}

impl Pace {
    /// One per `every` on average, the first at once.
    pub(crate) fn new(every: Duration, now: Instant) -> Pace {
        Pace { every, next: now }
    }

    /// The earliest the next one may go.
    pub(crate) fn next(&self) -> Instant {
        self.next
    }

    /// One went at `now`: the next may follow at once when this one came at least an interval
    /// after its own predecessor, else an interval after the slot it took.
    pub(crate) fn went(&mut self, now: Instant) {
        self.next = (self.next + self.every).max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_right_after_a_lone_one_is_not_held_back_but_a_flood_gets_one_an_interval() {
        let every = Duration::from_millis(16);
        let start = Instant::now();
        let mut pace = Pace::new(every, start);
        // A countdown's tick draws a frame after a quiet second...
        let tick = start + Duration::from_secs(1);
        assert!(pace.next() <= tick);
        pace.went(tick);
        // ...and a row landing 5 ms later is drawn at once.
        let row = tick + Duration::from_millis(5);
        assert!(pace.next() <= row);
        pace.went(row);
        // From then on, they come one an interval apart.
        assert_eq!(pace.next(), tick + every);
        pace.went(tick + every);
        assert_eq!(pace.next(), tick + 2 * every);
        pace.went(tick + 2 * every);
        assert_eq!(pace.next(), tick + 3 * every);
    }
}
