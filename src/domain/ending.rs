//! How a finished debate ended: the controller stopped it, an operator's resolution did, a gated
//! wait ran out, the judge aborted it, or the fixed loop ran its rounds.

use std::fmt;

use super::{ActionKind, ControllerMode, Decision, OperatorAction, Reported, TIMEOUT_OPERATOR};

/// How the decision of a debate's last decided round was resolved, if it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub round: u32,
    /// The operator `timeout` recorded it: a gated wait ran out.
    pub by_timeout: bool,
    /// An accept (the controller's decision stood), not an override or escalation.
    pub accepted: bool,
    /// The decision that stands.
    pub decision: Reported<Decision>,
}

impl Resolution {
    pub fn of(action: &OperatorAction) -> Resolution {
        Resolution {
            round: action.round_index,
            by_timeout: action.operator == TIMEOUT_OPERATOR,
            accepted: action.action == Reported::Known(ActionKind::Accept),
            decision: action.decision.clone(),
        }
    }
}

/// How a finished debate ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The judge ruled abort on a turn.
    JudgeAbort,
    /// The gated wait for an operator ran out; the controller's decision stood.
    Timeout(Reported<Decision>),
    /// An operator overrode the last decision or forced an escalation.
    Operator(Reported<Decision>),
    /// An operator accepted the controller's last decision.
    Accepted(Reported<Decision>),
    /// The controller's last decision, applied by the orchestrator.
    Controller(Reported<Decision>),
    /// Shadow or off: the controller's decisions were not applied; the fixed loop ran.
    FixedLoop,
    /// No decision, judge abort or resolution says why.
    Unexplained,
}

impl Ending {
    /// The ending of a finished debate in `mode` whose last decision is `last` (of round
    /// `last_round`), resolved as `resolution` says (of the latest round resolved), given
    /// whether the judge ever ruled abort.
    pub fn of(
        mode: &Reported<ControllerMode>,
        judge_aborted: bool,
        last: Option<(u32, &Reported<Decision>)>,
        resolution: Option<&Resolution>,
    ) -> Ending {
        if judge_aborted {
            return Ending::JudgeAbort;
        }
        let resolved = resolution.filter(|r| last.is_some_and(|(round, _)| round == r.round));
        match (resolved, last) {
            (Some(r), _) if r.by_timeout => Ending::Timeout(r.decision.clone()),
            (Some(r), _) if !r.accepted => Ending::Operator(r.decision.clone()),
            (Some(r), _) if applied(mode) => Ending::Accepted(r.decision.clone()),
            _ if !applied(mode) => Ending::FixedLoop,
            (_, Some((_, decision))) => Ending::Controller(decision.clone()),
            (_, None) => Ending::Unexplained,
        }
    }
}

/// Whether the orchestrator applies the controller's decisions in `mode` (an unknown mode is
/// taken at its word: it has decisions).
fn applied(mode: &Reported<ControllerMode>) -> bool {
    !matches!(
        mode,
        Reported::Known(ControllerMode::Shadow | ControllerMode::Off)
    )
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::JudgeAbort => f.write_str("judge abort"),
            Ending::Timeout(d) => write!(f, "timeout {d}"),
            Ending::Operator(d) => write!(f, "override {d}"),
            Ending::Accepted(d) => write!(f, "accepted {d}"),
            Ending::Controller(d) => write!(f, "controller {d}"),
            Ending::FixedLoop => f.write_str("fixed loop"),
            Ending::Unexplained => f.write_str("ended"),
        }
    }
}
