//! Headless reports for scripts and audits: the controller trace of one debate, and the export
//! of decisions, judgments and operator actions.

pub mod export;
pub mod trace;

pub use export::{ExportRow, Format};
pub use trace::{Trace, TraceAction, TraceRound};
