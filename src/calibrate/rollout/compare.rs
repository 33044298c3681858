//! A rollout in progress ([`Rollout`]: a debate type's canary version beside its stable one)
//! and its two arms compared ([`Comparison`]): each measure with its 95% interval — a mean's t
//! interval, a rate's Wilson interval — once an arm has [`MIN_DEBATES`] finished debates; and
//! the guards that say the canary does worse ([`Guard`]).

use serde::Deserialize;

use super::stats::{Interval, Moments, wilson};
use super::tally::{ArmTally, Stop};
use crate::domain::{Arm, DEFAULTS_VERSION, SettingsVersion};

/// Finished debates an arm needs before its intervals are shown (and its guards may trip).
pub const MIN_DEBATES: u64 = 5;

/// A debate type's rollout in progress: version `canary` sent to `share_bp` basis points of its
/// new debates, the rest on `stable` (`None`: the controller's own defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    pub debate_type: String,
    pub stable: Option<i64>,
    pub canary: i64,
    pub share_bp: u32,
}

impl Rollout {
    /// The rollout a debate type's `latest` version leaves in progress, if it leaves one.
    pub fn of(latest: &SettingsVersion) -> Option<Rollout> {
        Some(Rollout {
            debate_type: latest.debate_type.clone(),
            stable: latest.stable_version,
            canary: latest.canary_version?,
            share_bp: latest.canary_share_bp.unwrap_or_default(),
        })
    }

    /// The arm of this rollout a debate of `debate_type` stamped with `settings` (its version
    /// and arm) is in: the canary's version in the canary arm, or the stable version in the
    /// stable arm ([`DEFAULTS_VERSION`] when the stable one is the controller's defaults);
    /// `None` for a debate of another type or version, or stamped with none, which the
    /// comparison leaves out.
    pub fn side(&self, debate_type: &str, settings: Option<(i64, Arm)>) -> Option<Arm> {
        if debate_type != self.debate_type {
            return None;
        }
        let (version, arm) = settings?;
        (version == self.stamped(arm)).then_some(arm)
    }

    /// The version arm `arm` plays (`None`: the controller's defaults).
    pub fn version(&self, arm: Arm) -> Option<i64> {
        match arm {
            Arm::Stable => self.stable,
            Arm::Canary => Some(self.canary),
        }
    }

    /// The version a debate of arm `arm` is stamped with.
    pub fn stamped(&self, arm: Arm) -> i64 {
        self.version(arm).unwrap_or(DEFAULTS_VERSION)
    }
}

/// A mean over an arm's debates: how many, the mean, and its interval once there are enough.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mean {
    pub n: u64,
    pub mean: Option<f64>,
    pub interval: Option<Interval>,
}

impl Mean {
    fn of(moments: &Moments) -> Mean {
        Mean {
            n: moments.n,
            mean: moments.mean(),
            interval: moments.interval().filter(|_| moments.n >= MIN_DEBATES),
        }
    }
}

/// A rate over an arm's debates: `hits` of `n`, and its interval once there are enough.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub hits: u64,
    pub n: u64,
    pub interval: Option<Interval>,
}

impl Rate {
    fn of(hits: u64, n: u64) -> Rate {
        Rate {
            hits,
            n,
            interval: wilson(hits, n).filter(|_| n >= MIN_DEBATES),
        }
    }

    /// `hits / n`; `None` of nothing.
    pub fn share(&self) -> Option<f64> {
        (self.n > 0).then(|| self.hits as f64 / self.n as f64)
    }
}

/// One arm's figures, ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmFigures {
    /// Its version (`None`: the controller's defaults).
    pub version: Option<i64>,
    pub running: u64,
    pub finished: u64,
    pub rounds: Mean,
    pub tokens: Mean,
    /// Tokens the controller would have saved, over the arm's shadow debates.
    pub saved: Mean,
    /// Debates by how they stopped, in the order of [`Stop::ALL`].
    pub stops: [Rate; 4],
    pub overridden: Rate,
    pub escalated: Rate,
    /// Verdicts that would have flipped, over the arm's shadow debates.
    pub flips: Rate,
}

impl ArmFigures {
    pub fn of(version: Option<i64>, tally: &ArmTally, running: u64) -> ArmFigures {
        let finished = tally.finished();
        ArmFigures {
            version,
            running,
            finished,
            rounds: Mean::of(&tally.rounds),
            tokens: Mean::of(&tally.tokens),
            saved: Mean::of(&tally.saved),
            stops: Stop::ALL.map(|stop| Rate::of(tally.stopped(stop), finished)),
            overridden: Rate::of(tally.overridden, finished),
            escalated: Rate::of(tally.escalated, finished),
            flips: Rate::of(tally.flips, tally.saved.n),
        }
    }

    /// Enough finished debates for intervals.
    pub fn enough(&self) -> bool {
        self.finished >= MIN_DEBATES
    }
}

/// A rollout's arms side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub rollout: Rollout,
    pub stable: ArmFigures,
    pub canary: ArmFigures,
}

impl Comparison {
    /// The guards of `guards` that trip.
    pub fn tripped(&self, guards: &[Guard]) -> Vec<Guard> {
        guards.iter().copied().filter(|g| g.trips(self)).collect()
    }
}

/// A rate the canary must not raise: `[rollout] guards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Guard {
    /// Debates an operator overrode a decision of.
    OverrideRate,
    /// Debates an operator forced an escalation in.
    EscalationRate,
    /// Shadow debates whose verdict would have flipped.
    VerdictFlipRate,
}

impl Guard {
    pub const ALL: [Guard; 3] = [
        Guard::OverrideRate,
        Guard::EscalationRate,
        Guard::VerdictFlipRate,
    ];

    /// Its name in the config.
    pub fn name(self) -> &'static str {
        match self {
            Guard::OverrideRate => "override_rate",
            Guard::EscalationRate => "escalation_rate",
            Guard::VerdictFlipRate => "verdict_flip_rate",
        }
    }

    /// What it watches, in a few words.
    pub fn what(self) -> &'static str {
        match self {
            Guard::OverrideRate => "override rate",
            Guard::EscalationRate => "escalation rate",
            Guard::VerdictFlipRate => "verdict flip rate",
        }
    }

    fn rate(self, arm: &ArmFigures) -> &Rate {
        match self {
            Guard::OverrideRate => &arm.overridden,
            Guard::EscalationRate => &arm.escalated,
            Guard::VerdictFlipRate => &arm.flips,
        }
    }

    /// Whether the canary's rate is above the stable arm's with 95% confidence: both rates over
    /// at least [`MIN_DEBATES`] debates, and the canary's Wilson interval wholly above the
    /// stable arm's (two 95% intervals that do not overlap: a stricter test than a 95%
    /// two-proportion test, so a guard trips less often by chance).
    pub fn trips(self, comparison: &Comparison) -> bool {
        let canary = self.rate(&comparison.canary).interval;
        let stable = self.rate(&comparison.stable).interval;
        canary
            .zip(stable)
            .is_some_and(|(canary, stable)| canary.low > stable.high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::rollout::tally::{Facts, Shadow};

    fn rollout() -> Rollout {
        Rollout {
            debate_type: "standard".into(),
            stable: Some(1),
            canary: 2,
            share_bp: 3000,
        }
    }

    #[test]
    fn a_debate_s_side_is_its_type_version_and_arm() {
        let r = rollout();
        assert_eq!(
            r.side("standard", Some((2, Arm::Canary))),
            Some(Arm::Canary)
        );
        assert_eq!(
            r.side("standard", Some((1, Arm::Stable))),
            Some(Arm::Stable)
        );
        assert_eq!(r.side("standard", Some((1, Arm::Canary))), None);
        assert_eq!(r.side("standard", Some((3, Arm::Stable))), None);
        assert_eq!(r.side("standard", None), None, "stamped with no version");
        assert_eq!(r.side("extended", Some((2, Arm::Canary))), None);
        let over_defaults = Rollout { stable: None, ..r };
        let defaults = Some((DEFAULTS_VERSION, Arm::Stable));
        assert_eq!(over_defaults.side("standard", defaults), Some(Arm::Stable));
        assert_eq!(over_defaults.side("standard", None), None);
    }

    fn arm(overridden: u64, of: u64) -> ArmTally {
        let mut tally = ArmTally::default();
        for n in 0..of {
            tally.add(&Facts {
                rounds: 3,
                tokens: 1000 + n,
                stop: Stop::Converged,
                overridden: n < overridden,
                escalated: false,
                shadow: Some(Shadow {
                    saved: 0,
                    flip: false,
                }),
            });
        }
        tally
    }

    fn compare(stable: &ArmTally, canary: &ArmTally) -> Comparison {
        Comparison {
            rollout: rollout(),
            stable: ArmFigures::of(Some(1), stable, 0),
            canary: ArmFigures::of(Some(2), canary, 0),
        }
    }

    #[test]
    fn a_guard_trips_only_when_the_canary_s_interval_is_wholly_above() {
        let guards = Guard::ALL;
        // 8 of 10 overridden against 0 of 10: 0.49-0.94 above 0-0.28.
        assert_eq!(
            compare(&arm(0, 10), &arm(8, 10)).tripped(&guards),
            vec![Guard::OverrideRate]
        );
        // 4 of 10 against 0 of 10: 0.17-0.69 overlaps 0-0.28.
        assert!(
            compare(&arm(0, 10), &arm(4, 10))
                .tripped(&guards)
                .is_empty()
        );
        // Every canary debate overridden, but only 4 of them: not enough to say.
        assert!(compare(&arm(0, 10), &arm(4, 4)).tripped(&guards).is_empty());
        // The canary better: nothing trips.
        assert!(
            compare(&arm(8, 10), &arm(0, 10))
                .tripped(&guards)
                .is_empty()
        );
        assert!(compare(&arm(0, 10), &arm(8, 10)).tripped(&[]).is_empty());
    }

    #[test]
    fn intervals_wait_for_enough_debates() {
        let few = ArmFigures::of(None, &arm(1, 4), 2);
        assert!(!few.enough());
        assert_eq!(few.rounds.mean, Some(3.0));
        assert_eq!((few.rounds.interval, few.overridden.interval), (None, None));
        let enough = ArmFigures::of(None, &arm(1, 5), 0);
        assert!(enough.enough());
        assert!(enough.tokens.interval.is_some() && enough.overridden.interval.is_some());
        assert_eq!(enough.stops[0].hits, 5);
        assert_eq!(enough.flips.share(), Some(0.0));
    }
}
