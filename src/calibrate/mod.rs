//! Threshold calibration from recorded debates: what would the controller have done with other
//! thresholds? Each finished debate is reduced once to its rounds' signals ([`record`]); every
//! setting of a grid ([`grid`]) is replayed over those records with no further I/O
//! ([`replay`](mod@replay)) and summed per setting ([`report`]): rounds used, tokens saved, verdict flips,
//! escalations, stops by kind, agreement with operator labels, and the frontier of tokens saved
//! against verdict flips. [`html`] makes the report a file to share; [`evidence`] carries a
//! calibration's row, with where it came from, into a published settings version; [`rollout`]
//! compares the two arms of a settings rollout as their debates finish.

pub mod evidence;
pub mod grid;
pub mod html;
pub mod record;
pub mod replay;
pub mod report;
pub mod rollout;
pub mod source;
mod workers;

pub use evidence::{Calibration, ContextDebates, EvidenceError, Pick, Picked, Window, picked};
pub use grid::{AxisSpec, default_grid, settings};
pub use record::{Class, Label, Measuring, RecordedDebate, RoundFacts, SimilaritySource};
pub use replay::{DebateOutcome, Setting, replay};
pub use report::{Report, Row, Stops};
pub use source::{from_database, from_recordings, read_database};
