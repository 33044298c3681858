//! The tallies behind every comparison ([`Ledger`]): each finished debate's [`Facts`] added to
//! the arm it ran in — its debate type, the settings version stamped on it and its arm — and
//! taken back when they change, so that a comparison is read off in constant time, whatever
//! rollout is in progress when it is asked for.

use std::collections::{HashMap, HashSet, VecDeque};

use super::compare::{ArmFigures, Comparison, Rollout};
use super::tally::{ArmTally, Facts};
use crate::domain::{Arm, Session};

/// Arms tallied at most (a debate type, version and arm each); a debate of an arm beyond them
/// is not counted.
pub const MAX_ARMS: usize = 4_096;
/// Debates remembered as settled (by a hash of the id), so that one whose rows come back later
/// (its history loaded again) is not counted twice: the latest this many.
pub const SETTLED: usize = 100_000;

/// The arm a debate ran in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArmKey {
    pub debate_type: String,
    /// The settings' version stamped on it (`None`: none at all, an orchestrator that did not
    /// ask; the controller's defaults are [`DEFAULTS_VERSION`](crate::domain::DEFAULTS_VERSION)).
    pub version: Option<i64>,
    pub arm: Arm,
}

impl ArmKey {
    pub fn of(session: &Session) -> ArmKey {
        ArmKey {
            debate_type: session.debate_type.clone(),
            version: session.settings.map(|(version, _)| version),
            arm: session.settings.map_or(Arm::Stable, |(_, arm)| arm),
        }
    }
}

/// Every arm's tally, what each debate whose facts may still change added to it, and the
/// debates that may no longer be counted.
#[derive(Debug, Default)]
pub struct Ledger {
    tallies: HashMap<ArmKey, ArmTally>,
    held: HashMap<String, (ArmKey, Facts)>,
    settled: HashSet<u64>,
    settled_order: VecDeque<u64>,
}

impl Ledger {
    /// Counts debate `id`'s `facts` in arm `key`, in place of what it counted before: not for a
    /// debate settled before, nor for a new arm beyond [`MAX_ARMS`].
    pub fn count(&mut self, id: &str, key: ArmKey, facts: Facts) {
        self.withdraw(id);
        if self.settled.contains(&hash(id)) {
            return;
        }
        if !self.tallies.contains_key(&key) && self.tallies.len() >= MAX_ARMS {
            return;
        }
        self.tallies.entry(key.clone()).or_default().add(&facts);
        self.held.insert(id.to_owned(), (key, facts));
    }

    /// Takes back what debate `id` counted (its rows were left out, or it runs again).
    pub fn withdraw(&mut self, id: &str) {
        if let Some((key, facts)) = self.held.remove(id)
            && let Some(tally) = self.tallies.get_mut(&key)
        {
            tally.remove(&facts);
        }
    }

    /// Debate `id`'s facts are final: what it counted stays, and it is not counted again.
    pub fn settle(&mut self, id: &str) {
        self.held.remove(id);
        let key = hash(id);
        if self.settled.insert(key) {
            self.settled_order.push_back(key);
        }
        if self.settled_order.len() > SETTLED
            && let Some(oldest) = self.settled_order.pop_front()
        {
            self.settled.remove(&oldest);
        }
    }

    /// `rollout`'s arms compared, with `running` debates running in each (stable, canary).
    pub fn compare(&self, rollout: &Rollout, running: [u64; 2]) -> Comparison {
        let figures = |arm: Arm, running: u64| {
            let key = ArmKey {
                debate_type: rollout.debate_type.clone(),
                version: Some(rollout.stamped(arm)),
                arm,
            };
            let tally = self.tallies.get(&key).cloned().unwrap_or_default();
            ArmFigures::of(rollout.version(arm), &tally, running)
        };
        Comparison {
            rollout: rollout.clone(),
            stable: figures(Arm::Stable, running[0]),
            canary: figures(Arm::Canary, running[1]),
        }
    }
}

/// How a settled debate is remembered: a 64-bit hash of its id.
fn hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::rollout::tally::Stop;

    fn facts(rounds: u32) -> Facts {
        Facts {
            rounds,
            tokens: 100,
            stop: Stop::Converged,
            overridden: false,
            escalated: false,
            shadow: None,
        }
    }

    #[test]
    fn a_settled_debate_is_not_counted_again_and_its_part_stays() {
        let mut ledger = Ledger::default();
        let canary = ArmKey {
            debate_type: "standard".into(),
            version: Some(2),
            arm: Arm::Canary,
        };
        let rollout = Rollout {
            debate_type: "standard".into(),
            stable: None,
            canary: 2,
            share_bp: 5000,
        };
        let canary_of = |ledger: &Ledger| ledger.compare(&rollout, [3, 1]).canary;
        ledger.count("d1", canary.clone(), facts(3));
        // Its rows changed: counted again in place of what it counted.
        ledger.count("d1", canary.clone(), facts(4));
        ledger.count("d2", canary.clone(), facts(6));
        assert_eq!(canary_of(&ledger).finished, 2);
        assert_eq!(canary_of(&ledger).rounds.mean, Some(5.0));
        ledger.withdraw("d2");
        ledger.settle("d1");
        ledger.count("d1", canary.clone(), facts(8));
        let after = canary_of(&ledger);
        assert_eq!(
            (after.finished, after.rounds.mean),
            (1, Some(4.0)),
            "d1 stays as it was"
        );
        let stable = ledger.compare(&rollout, [3, 1]).stable;
        assert_eq!((stable.finished, stable.running), (0, 3));
    }
}
