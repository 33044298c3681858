//! Pacing at so many a second on average, with one interval of slack: what comes after a quiet
//! spell goes at once, a flood gets one per interval. The draw loop paces its frames with it
//! ([`FRAME`]), and the live feed its reads ([`READ`]: a stream's rows read together, about once
//! a frame, instead of a round trip each).

use std::time::{Duration, Instant};

/// The console draws at most one frame this often on average (60 a second).
pub(crate) const FRAME: Duration = Duration::from_millis(16);

/// The live feed reads the rows notifications name at most this often on average: a little less
/// often than [`FRAME`], so that the frame pace gains a frame in hand every 16 reads and has one
/// when a read's rows land, unless frames for something else came between. Paced exactly as
/// often, the two paces keep whatever offset a frame drawn for something else (a countdown's
/// tick, a key) left between them, and every read's rows then wait for their frame: under a
/// stream of 2,000 turns a second, a probe row's lag sat 13 to 14 ms above its read for seconds
/// at a time.
pub(crate) const READ: Duration = Duration::from_millis(17);

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

    /// The feed reads at its pace and each read's rows land `answer` later; the draw loop draws
    /// them at its own pace, and also draws a frame for something else (the clock's tick) once a
    /// second plus a millisecond, so at every offset from the reads in turn. Returns how long each
    /// read's rows waited for their frame.
    fn waits_for_frames(read: Duration, answer: Duration) -> Vec<Duration> {
        let start = Instant::now();
        let mut reads = Pace::new(read, start);
        let mut frames = Pace::new(FRAME, start);
        let mut ticks = (1..).map(|n| start + n * Duration::from_millis(1_001));
        let mut tick = ticks.next().unwrap();
        let mut waits = Vec::new();
        let mut drawn = start;
        while reads.next() < start + Duration::from_secs(20) {
            let landed = reads.next() + answer;
            reads.went(reads.next());
            // The ticks before the rows land are drawn first, each when the pace allows.
            while tick < landed {
                drawn = tick.max(frames.next());
                frames.went(drawn);
                tick = ticks.next().unwrap();
            }
            // Rows that land while a frame waits for its turn are drawn in it.
            if landed > drawn {
                drawn = landed.max(frames.next());
                frames.went(drawn);
            }
            waits.push(drawn - landed);
        }
        waits
    }

    #[test]
    fn a_read_s_rows_never_wait_for_their_frame_whatever_was_drawn_between() {
        let answer = Duration::from_millis(2);
        let waits = waits_for_frames(READ, answer);
        assert!(waits.len() > 1_000, "{} reads", waits.len());
        assert!(
            waits.iter().all(Duration::is_zero),
            "longest wait {:?}",
            waits.iter().max()
        );
        // Paced as often as frames, the paces lock at an offset a tick left, and rows wait.
        let locked = waits_for_frames(FRAME, answer);
        let waited = locked.iter().filter(|w| !w.is_zero()).count();
        assert!(
            waited > locked.len() / 2,
            "{waited} of {} waited",
            locked.len()
        );
    }
}
