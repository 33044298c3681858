//! Headless reports for scripts and audits: the controller trace of one debate.

pub mod trace;

pub use trace::{Trace, TraceAction, TraceRound};
