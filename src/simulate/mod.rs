//! The orchestrator stand-in: plays recorded debates ([`Fixture`]) round by round through the
//! round controller and the judge policy, honouring the controller mode and operator actions.
//!
//! [`DebateRun`] is the pure state machine (tested without time); [`open`] writes its session
//! row and [`drive`] paces it on a [`Clock`] the operator can pause and speed up, writing every
//! row to a store.

mod clock;
mod driver;
mod fixture;
mod run;

pub use clock::{Clock, Playback};
pub use driver::{drive, open};
pub use fixture::{Fixture, FixtureError, FixtureErrors, JudgeSpec, SessionSpec, TurnSpec};
pub use run::{DebateRun, Ids};
