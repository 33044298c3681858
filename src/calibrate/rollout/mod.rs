//! A settings rollout's two arms compared, as debates finish: the statistics ([`stats`]: Wilson
//! and t intervals from running sums), one debate's part and an arm's tally ([`tally`]), the
//! tallies of every arm seen ([`ledger`]), and a rollout's comparison and guards
//! ([`compare`]). Pure: the console's reports worker feeds it debates and reads comparisons.

pub mod compare;
pub mod ledger;
pub mod stats;
pub mod tally;

pub use compare::{ArmFigures, Comparison, Guard, MIN_DEBATES, Mean, Rate, Rollout};
pub use ledger::{ArmKey, Ledger};
pub use stats::{Interval, Moments, wilson};
pub use tally::{ArmTally, Facts, Shadow, Stop};
