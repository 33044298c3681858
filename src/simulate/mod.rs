//! The orchestrator stand-in: plays recorded debates ([`Fixture`]) round by round through the
//! round controller and the judge policy, honouring the controller mode and operator actions.
//!
//! [`under`] sets a debate's mode and thresholds to the settings version it was given.
//! [`DebateRun`] is the pure state machine (its timestamps from a [`TimeSource`]); [`drive`]
//! paces it on a [`PlaybackClock`] the operator can pause and speed up, writing every row to a
//! [`Stage`]; [`play`] opens several debates in order and drives them at once. The demo's stage
//! is the memory store ([`MemoryStage`]); [`postgres`] plays into a database as an orchestrator
//! would.

mod driver;
mod error;
mod fixture;
mod playback;
pub mod postgres;
mod recording;
mod run;
mod settings;

pub use driver::{MemoryStage, Stage, drive, log, play};
pub use error::{Error, Result};
pub use fixture::{
    ActionSpec, DecisionSpec, Fixture, FixtureError, FixtureErrors, JudgeSpec, SessionSpec,
    TurnSpec,
};
pub use playback::{Playback, PlaybackClock};
pub use recording::{Recording, recording};
pub use run::{DebateRun, Ids, TimeSource, play_in_shadow};
pub use settings::under;
