//! Simulated time: the operator's pause and playback speed, shared by every simulated debate.

use std::time::Duration;

use tokio::sync::watch;

/// Whether the feed plays, and how fast.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playback {
    pub paused: bool,
    pub speed: f64,
}

impl Playback {
    pub(crate) const MIN_SPEED: f64 = 0.25;
    pub(crate) const MAX_SPEED: f64 = 16.0;

    /// Twice as fast, up to the maximum.
    pub fn faster(self) -> Playback {
        Playback {
            speed: (self.speed * 2.0).min(Self::MAX_SPEED),
            ..self
        }
    }

    /// Half as fast, down to the minimum.
    pub fn slower(self) -> Playback {
        Playback {
            speed: (self.speed / 2.0).max(Self::MIN_SPEED),
            ..self
        }
    }

    pub(crate) fn toggled(self) -> Playback {
        Playback {
            paused: !self.paused,
            ..self
        }
    }
}

impl Default for Playback {
    fn default() -> Self {
        Playback {
            paused: false,
            speed: 1.0,
        }
    }
}

/// A reader of the shared playback setting that sleeps in simulated time.
#[derive(Debug, Clone)]
pub struct PlaybackClock(watch::Receiver<Playback>);

impl PlaybackClock {
    pub fn new(playback: watch::Receiver<Playback>) -> PlaybackClock {
        PlaybackClock(playback)
    }

    /// Sleeps for `duration` of simulated time: frozen while paused, scaled by the speed.
    /// Returns early when the playback setting is gone (the console has quit).
    pub async fn sleep(&mut self, duration: Duration) {
        const STEP: f64 = 0.05;
        let mut left = duration.as_secs_f64();
        while left > 0.0 {
            let playback = *self.0.borrow_and_update();
            if playback.paused {
                if self.0.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let real = (left / playback.speed).min(STEP);
            tokio::time::sleep(Duration::from_secs_f64(real)).await;
            left -= real * playback.speed;
        }
    }
}
