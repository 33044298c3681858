//! One finished debate's part in a rollout's comparison ([`Facts`]: rounds, tokens, tokens the
//! controller would have saved, how it stopped, whether an operator overrode or escalated,
//! whether the verdict would have flipped), and an arm's tally of them ([`ArmTally`]): counts
//! and sums only, so an arm takes the same memory after ten debates or a million.

use super::stats::Moments;
use crate::calibrate::RecordedDebate;
use crate::domain::{
    ActionKind, ControllerMode, Debate, Decision, Ending, Reported, TIMEOUT_OPERATOR,
};

/// How a debate stopped, as the controller decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Converged,
    MaxRounds,
    Safety,
    /// No stop decision ended it (a judge's abort, an operator's continue, the controller off).
    None,
}

impl Stop {
    pub const ALL: [Stop; 4] = [Stop::Converged, Stop::MaxRounds, Stop::Safety, Stop::None];

    /// The word the rollout view shows.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Converged => "converged",
            Stop::MaxRounds => "max_rounds",
            Stop::Safety => "safety",
            Stop::None => "none",
        }
    }

    fn of(decision: Option<Decision>) -> Stop {
        match decision {
            Some(Decision::StopConverged) => Stop::Converged,
            Some(Decision::StopMaxRounds) => Stop::MaxRounds,
            Some(Decision::StopSafety) => Stop::Safety,
            _ => Stop::None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What one finished debate adds to its arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub rounds: u32,
    /// Every token its turns spent, superseded turns included (as its calibration record
    /// counts them).
    pub tokens: u64,
    /// How it stopped: in shadow mode the controller's first stop decision (what would have
    /// stopped it), else the decision standing at its end (the controller's, or the operator's
    /// in its place).
    pub stop: Stop,
    /// An operator (not a gated wait's timeout) overrode a decision of it.
    pub overridden: bool,
    /// An operator forced an escalation in it.
    pub escalated: bool,
    /// Shadow debates only, where the fixed loop ran past the controller: the tokens spent
    /// after the controller's first stop decision (0 when it never stopped), and whether the
    /// verdict standing there differs from the verdict the fixed loop ended on.
    pub shadow: Option<Shadow>,
}

/// What a shadow debate says of the controller against the fixed loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shadow {
    pub saved: u64,
    pub flip: bool,
}

impl Facts {
    /// The facts of a finished `debate`, reduced to `record`.
    pub fn of(debate: &Debate, record: &RecordedDebate) -> Facts {
        let run = record.rounds_run();
        let operators = || {
            debate
                .actions
                .values()
                .filter(|a| a.operator != TIMEOUT_OPERATOR)
        };
        let did = |kind: ActionKind| operators().any(|a| a.action == Reported::Known(kind));
        let first_stop = debate.decisions.values().find_map(|d| {
            d.decision
                .known()
                .filter(|k| k.stops())
                .map(|k| (d.round_index.min(run), k))
        });
        let shadow = debate.session.controller_mode == Reported::Known(ControllerMode::Shadow);
        let stop = if shadow {
            first_stop.map(|(_, decision)| decision)
        } else {
            match debate.ending() {
                Some(
                    Ending::Controller(d)
                    | Ending::Accepted(d)
                    | Ending::Operator(d)
                    | Ending::Timeout(d),
                ) => d.known(),
                _ => None,
            }
        };
        Facts {
            rounds: run,
            tokens: record.tokens_after(run),
            stop: Stop::of(stop),
            overridden: did(ActionKind::Override),
            escalated: did(ActionKind::Escalate),
            shadow: shadow.then(|| {
                let at = first_stop.map_or(run, |(round, _)| round);
                Shadow {
                    saved: record.tokens_after(run) - record.tokens_after(at),
                    flip: record.verdict_after(at) != record.verdict_after(run),
                }
            }),
        }
    }
}

/// An arm's finished debates, summed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArmTally {
    pub rounds: Moments,
    pub tokens: Moments,
    /// Over shadow debates only.
    pub saved: Moments,
    /// Debates by how they stopped, in the order of [`Stop::ALL`].
    pub stops: [u64; 4],
    pub overridden: u64,
    pub escalated: u64,
    /// Shadow debates whose verdict would have flipped (of `saved.n`).
    pub flips: u64,
}

impl ArmTally {
    /// Finished debates counted.
    pub fn finished(&self) -> u64 {
        self.rounds.n
    }

    /// Debates that stopped as `stop` says.
    pub fn stopped(&self, stop: Stop) -> u64 {
        self.stops[stop.index()]
    }

    pub fn add(&mut self, facts: &Facts) {
        self.rounds.add(facts.rounds.into());
        self.tokens.add(facts.tokens);
        self.stops[facts.stop.index()] += 1;
        self.overridden += u64::from(facts.overridden);
        self.escalated += u64::from(facts.escalated);
        if let Some(shadow) = facts.shadow {
            self.saved.add(shadow.saved);
            self.flips += u64::from(shadow.flip);
        }
    }

    /// Takes back `facts` added before.
    pub fn remove(&mut self, facts: &Facts) {
        self.rounds.remove(facts.rounds.into());
        self.tokens.remove(facts.tokens);
        let stops = &mut self.stops[facts.stop.index()];
        *stops = stops.saturating_sub(1);
        self.overridden = self.overridden.saturating_sub(facts.overridden.into());
        self.escalated = self.escalated.saturating_sub(facts.escalated.into());
        if let Some(shadow) = facts.shadow {
            self.saved.remove(shadow.saved);
            self.flips = self.flips.saturating_sub(shadow.flip.into());
        }
    }
}
