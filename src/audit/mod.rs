//! Reports for scripts, audits and the console: the controller trace of one debate, the export
//! of decisions, judgments and operator actions, and the shadow week's rollup.

pub mod export;
pub mod shadow;
pub mod trace;

pub use export::{ExportRow, Format};
pub use shadow::{ShadowRow, ShadowWeek};
pub use trace::{Trace, TraceAction, TraceNote, TraceRound};
