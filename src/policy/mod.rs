//! The decisions the debate system makes, as pure deterministic functions: the round controller
//! ([`controller`]), the per-turn judge ([`judge`](mod@judge)) and the format-specific convergence checks
//! ([`convergence`]). Thresholds come from [`ControllerConfig`] and [`JudgeConfig`]; nothing
//! here reads a clock, a file or a database.

pub mod controller;
pub mod convergence;
pub mod judge;

pub use controller::{ControllerConfig, ControllerState, Outcome, decide, should_continue};
pub use convergence::{Convergence, debate_converged, format_check, review_converged};
pub use judge::{JudgeConfig, JudgeFlag, JudgeInput, JudgeOutcome, judge};
