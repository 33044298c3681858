//! Bounds on the numbers an untrusted writer puts in a row: a round number or index outside
//! `1..=max_round`, or a count that is negative or absurd, is flagged where it is read (table,
//! key, column and value) and is never used to size an allocation or a loop.

use std::fmt::Display;

use serde::Deserialize;

use super::Change;

/// The highest `[limits] max_round` may be: what the console can still lay out every frame.
pub(crate) const MAX_ROUND_CEILING: u32 = 100_000;

/// The most tokens a count may claim: far beyond any debate, far below overflow.
pub const MAX_TOKENS: u64 = 1_000_000_000_000;

/// The most agents or personas a count may claim.
pub const MAX_AGENTS: u32 = 1_000;

/// The most US dollars a cost, budget or price may claim: far beyond any debate.
pub const MAX_USD: f64 = 1e9;

/// `[limits]`: how far rows are trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// The highest round number (or round index, or round count) a row may carry.
    pub max_round: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_round: 10_000 }
    }
}

impl Limits {
    /// The widest bounds: for reading back a row whose round gavel chose itself (an action it
    /// just recorded, or the one that beat it to the same decision).
    pub(crate) const WIDEST: Limits = Limits {
        max_round: MAX_ROUND_CEILING,
    };

    pub fn validate(&self) -> Result<(), String> {
        if (1..=MAX_ROUND_CEILING).contains(&self.max_round) {
            Ok(())
        } else {
            Err(format!(
                "max_round {} must be between 1 and {MAX_ROUND_CEILING}",
                self.max_round
            ))
        }
    }

    /// A round number or index: `1..=max_round`.
    pub fn round(&self, value: i64) -> Result<u32, OutOfBounds> {
        within(value, 1, u64::from(self.max_round))
    }

    /// A count of rounds (num_rounds, min_rounds, max_rounds): `0..=max_round`.
    pub fn rounds(&self, value: i64) -> Result<u32, OutOfBounds> {
        within(value, 0, u64::from(self.max_round))
    }

    /// Flags a row built in memory whose round lies outside `1..=max_round`, as the database
    /// reader would, and places it in no round (0).
    pub fn check(&self, change: &mut Change) {
        let (table, key, column, round, issues) = match change {
            Change::Session(_) | Change::Note(_) => return,
            Change::Turn(t) => (
                "debate_rounds",
                format!("id {}", t.id),
                "round_number",
                &mut t.round_number,
                &mut t.issues,
            ),
            Change::Decision(d) => (
                "debate_round_decisions",
                format!("{}, {}", d.session_id, d.round_index),
                "round_index",
                &mut d.round_index,
                &mut d.issues,
            ),
            Change::Judgment(j) => (
                "debate_round_judgments",
                format!("id {}", j.id),
                "round_index",
                &mut j.round_index,
                &mut j.issues,
            ),
            Change::Action(a) => (
                "debate_operator_actions",
                format!("{}, {}", a.session_id, a.round_index),
                "round_index",
                &mut a.round_index,
                &mut a.issues,
            ),
        };
        if let Err(problem) = self.round(i64::from(*round)) {
            issues.push(flag(table, &key, column, problem));
            *round = 0;
        }
    }
}

/// A token count: `0..=MAX_TOKENS`, or up to `T`'s largest value when that is less (a turn's
/// count is a `u32`).
pub fn tokens<T: TryFrom<u64>>(value: i64) -> Result<T, OutOfBounds> {
    within(value, 0, MAX_TOKENS)
}

/// A count of agents or personas: `0..=MAX_AGENTS`.
pub fn agents(value: i64) -> Result<u32, OutOfBounds> {
    within(value, 0, u64::from(MAX_AGENTS))
}

/// A count of claims or disputes: `0..=u32::MAX`.
pub fn count(value: i64) -> Result<u32, OutOfBounds> {
    within(value, 0, u64::from(u32::MAX))
}

/// A number outside the bounds it is read within.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} is outside {low}..={high}")]
pub struct OutOfBounds {
    pub value: i64,
    pub low: u64,
    pub high: u64,
}

/// A fractional number outside the bounds it is read within.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} is outside {low}..={high}", short(*.value))]
pub struct Outside {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// A share of a whole: `0..=1`.
pub fn share(value: f64) -> Result<f64, Outside> {
    between(value, 0.0, 1.0)
}

/// An amount of US dollars: `0..=MAX_USD`.
pub(crate) fn dollars(value: f64) -> Result<f64, Outside> {
    between(value, 0.0, MAX_USD)
}

/// `value` as written, in scientific notation when that is much shorter.
fn short(value: f64) -> String {
    if value.abs() < 1e15 {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

fn between(value: f64, low: f64, high: f64) -> Result<f64, Outside> {
    if (low..=high).contains(&value) {
        Ok(value)
    } else {
        Err(Outside { value, low, high })
    }
}

/// `value` when it lies in `low..=high` (`high` lowered to `T`'s largest value when `T` cannot
/// hold it, so that the bounds stated are the bounds applied), else why not.
fn within<T: TryFrom<u64>>(value: i64, low: u64, high: u64) -> Result<T, OutOfBounds> {
    let high = largest::<T>(high);
    u64::try_from(value)
        .ok()
        .filter(|v| (low..=high).contains(v))
        .and_then(|v| T::try_from(v).ok())
        .ok_or(OutOfBounds { value, low, high })
}

/// The largest value up to `high` that the unsigned type `T` holds.
fn largest<T: TryFrom<u64>>(high: u64) -> u64 {
    [u64::from(u32::MAX), u64::from(u16::MAX), u64::from(u8::MAX)]
        .into_iter()
        .filter(|&max| max < high)
        .fold(
            high,
            |fits, max| {
                if T::try_from(fits).is_ok() { fits } else { max }
            },
        )
}

/// One problem with one row, as the console shows it: `table (key): column: problem`.
pub fn flag(table: &str, key: &str, column: &str, problem: impl Display) -> String {
    format!("{table} ({key}): {column}: {problem}")
}

/// A value as quoted in a flag: at most 60 characters, the rest marked as left out.
pub fn clip(value: &str) -> String {
    match value.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_stated_is_a_bound_the_target_type_holds() {
        let outside = |value, high| OutOfBounds {
            value,
            low: 0,
            high,
        };
        assert_eq!(
            tokens::<u32>(5_000_000_000),
            Err(outside(5_000_000_000, 4_294_967_295))
        );
        assert_eq!(
            outside(5_000_000_000, 4_294_967_295).to_string(),
            "5000000000 is outside 0..=4294967295"
        );
        assert_eq!(tokens::<u32>(4_294_967_295), Ok(u32::MAX));
        assert_eq!(
            tokens::<u64>(5_000_000_000_000),
            Err(outside(5_000_000_000_000, 1_000_000_000_000))
        );
        assert_eq!(tokens::<u64>(5_000_000_000), Ok(5_000_000_000));
        assert_eq!(within::<u8>(300, 0, 1_000), Err::<u8, _>(outside(300, 255)));
    }
}
