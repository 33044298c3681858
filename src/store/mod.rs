//! Where debate rows live. [`MemoryStore`] is the embedded backend behind the demo: the
//! simulator writes rows into it, the console subscribes to them, and operator actions are
//! recorded in it exactly once.

mod memory;

pub use memory::MemoryStore;

use crate::domain::OperatorAction;

/// An operator action lost a race: the decision was already resolved, by `existing`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "round {} of {} was already resolved by {}: {} -> {}",
    existing.round_index, existing.session_id, existing.operator, existing.action, existing.decision
)]
pub struct AlreadyResolved {
    pub existing: Box<OperatorAction>,
}
