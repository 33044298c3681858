//! The controller settings' rollouts as the console knows them: each database's history as its
//! feed last gave it (the demo has none; on several databases, one a context), each debate
//! type's latest version there, the first database's rollouts in progress (for the reports
//! worker, which compares their arms), the guards that trip on those comparisons, and a new
//! version being written ([`Draft`], for one context's database) until it is sent
//! ([`Publishing`]). Plain data, changed only by `update`.

use std::collections::BTreeSet;

use super::contexts::Ctx;
use crate::calibrate::rollout::{Comparison, Guard, Rollout};
use crate::domain::{SettingsValues, SettingsVersion, percent};
use crate::store::postgres::MAX_HISTORY;

/// The longest share typed, in characters (`12.34`, with room to spare).
pub const MAX_SHARE: usize = 8;

/// A new version of a debate type's settings.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsChange {
    /// New values, sent to `share_bp` basis points of new debates, with the evidence they came
    /// from.
    Publish {
        values: SettingsValues,
        share_bp: u32,
        evidence: serde_json::Value,
    },
    /// The canary `version` sent to every new debate.
    Promote { version: i64 },
    /// `version` withdrawn: the version before it in force again.
    Rollback { version: i64 },
}

/// A new version asked for: of which debate type, what, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Publishing {
    pub debate_type: String,
    pub change: SettingsChange,
    pub reason: String,
}

impl Publishing {
    /// What it does, in a line (not made inert: the caller does).
    pub fn what(&self) -> String {
        let of = &self.debate_type;
        match &self.change {
            SettingsChange::Publish {
                values, share_bp, ..
            } => format!(
                "publish to {} of new {of} debates: {}",
                percent(*share_bp),
                values.summary()
            ),
            SettingsChange::Promote { version } => {
                format!("promote version {version} to every new {of} debate")
            }
            SettingsChange::Rollback { version } => format!("roll back version {version} of {of}"),
        }
    }
}

/// Where a [`Draft`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Typing the reason (required).
    Reason,
    /// Typing the share, in percent (a publish only).
    Share,
    /// Asking to confirm.
    Confirm,
}

/// A new version being written: its reason typed, then a publish's share, then confirmed.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub publishing: Publishing,
    /// The share as typed, in percent (a publish only).
    pub share: String,
    pub step: Step,
    /// The calibration cursor it was started from, to go back to when cancelled (else the
    /// rollout view).
    pub from_calibration: Option<usize>,
    /// The context whose database it is written to (0 on one database).
    pub ctx: Ctx,
}

/// A guard tripped by a rollout in progress: its canary does worse than the stable arm.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tripped {
    pub debate_type: String,
    pub canary: i64,
    pub guard: Guard,
}

/// The context whose rollouts the reports worker compares and the guards watch: the first.
pub const COMPARED: Ctx = 0;

/// One database's settings history, as its feed last gave it.
#[derive(Debug, Clone, Default)]
struct History {
    versions: Option<Result<Vec<SettingsVersion>, String>>,
    /// Where each debate type's latest version stands in `versions`, by type.
    latest: Vec<usize>,
}

impl History {
    /// Each debate type's latest version (the state in force), by type.
    fn latest(&self) -> impl Iterator<Item = &SettingsVersion> {
        let versions = match &self.versions {
            Some(Ok(versions)) => versions.as_slice(),
            _ => &[],
        };
        self.latest.iter().map(|&at| &versions[at])
    }
}

/// The rollouts as the console knows them.
#[derive(Debug, Clone, Default)]
pub struct Rollouts {
    /// Each context's history, by context (one on one database): as many as the console has
    /// databases, each bounded as the feed reads it.
    histories: Vec<History>,
    /// The rollouts in progress in [`COMPARED`]'s database, by debate type.
    rollouts: Vec<Rollout>,
    /// Counts the histories of [`COMPARED`] taken, so that the worker hears of its rollouts
    /// once each.
    generation: u64,
    /// `[rollout] guards`.
    guards: Vec<Guard>,
    tripped: BTreeSet<Tripped>,
    /// Tripped since the last announcement.
    arrivals: Vec<Tripped>,
}

impl Rollouts {
    pub fn new(guards: Vec<Guard>) -> Rollouts {
        Rollouts {
            guards,
            ..Rollouts::default()
        }
    }

    /// Context `ctx`'s history as its database last gave it, oldest first, or why it would
    /// not; `None` without a database (the demo) or until it is read.
    pub fn history(&self, ctx: Ctx) -> Option<Result<&[SettingsVersion], &str>> {
        self.histories
            .get(usize::from(ctx))?
            .versions
            .as_ref()
            .map(|h| h.as_deref().map_err(String::as_str))
    }

    /// Takes the history context `ctx`'s database gave (its newest [`MAX_HISTORY`] versions,
    /// as the feed reads it); for [`COMPARED`], guards of rollouts no longer in progress let go.
    /// `ctx` is one of the console's contexts (the caller checks).
    pub(super) fn set_history(
        &mut self,
        ctx: Ctx,
        mut history: Result<Vec<SettingsVersion>, String>,
    ) {
        if let Ok(versions) = &mut history {
            let beyond = versions.len().saturating_sub(MAX_HISTORY as usize);
            versions.drain(..beyond);
        }
        let mut latest: Vec<usize> = Vec::new();
        if let Ok(versions) = &history {
            let mut by_type: std::collections::BTreeMap<&str, usize> = Default::default();
            for (at, version) in versions.iter().enumerate() {
                by_type.insert(&version.debate_type, at);
            }
            latest = by_type.into_values().collect();
        }
        let at = usize::from(ctx);
        if self.histories.len() <= at {
            self.histories.resize_with(at + 1, History::default);
        }
        self.histories[at] = History {
            versions: Some(history),
            latest,
        };
        if ctx == COMPARED {
            self.follow_compared();
        }
    }

    /// [`COMPARED`]'s history changed: its rollouts in progress handed to the worker anew, the
    /// guards of those no longer in progress let go.
    fn follow_compared(&mut self) {
        let history = &self.histories[usize::from(COMPARED)];
        self.rollouts = history.latest().filter_map(Rollout::of).collect();
        self.generation += 1;
        let rollouts = &self.rollouts;
        let current = |t: &Tripped| {
            rollouts
                .iter()
                .any(|r| r.debate_type == t.debate_type && r.canary == t.canary)
        };
        self.tripped.retain(current);
        self.arrivals.retain(current);
    }

    /// Context `ctx`'s debate types' latest versions (the state in force), by type.
    pub fn latest(&self, ctx: Ctx) -> impl Iterator<Item = &SettingsVersion> {
        self.histories
            .get(usize::from(ctx))
            .into_iter()
            .flat_map(History::latest)
    }

    /// `debate_type`'s latest version in context `ctx`, if its history names it.
    pub fn latest_of(&self, ctx: Ctx, debate_type: &str) -> Option<&SettingsVersion> {
        self.latest(ctx).find(|v| v.debate_type == debate_type)
    }

    /// Version `version` of context `ctx`, if the history read there holds it.
    pub fn version(&self, ctx: Ctx, version: i64) -> Option<&SettingsVersion> {
        let Some(Ok(versions)) = self.history(ctx) else {
            return None;
        };
        versions
            .binary_search_by_key(&version, |v| v.version)
            .ok()
            .map(|at| &versions[at])
    }

    /// The rollouts in progress in [`COMPARED`]'s database, by debate type.
    pub fn rollouts(&self) -> &[Rollout] {
        &self.rollouts
    }

    /// Changes with every history of [`COMPARED`] taken.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Checks the guards on the worker's `comparisons` (those of rollouts still in progress);
    /// whether what trips changed.
    pub(super) fn check(&mut self, comparisons: &[Comparison]) -> bool {
        let tripped: BTreeSet<Tripped> = comparisons
            .iter()
            .filter(|c| self.rollouts.contains(&c.rollout))
            .flat_map(|c| {
                c.tripped(&self.guards).into_iter().map(|guard| Tripped {
                    debate_type: c.rollout.debate_type.clone(),
                    canary: c.rollout.canary,
                    guard,
                })
            })
            .collect();
        if tripped == self.tripped {
            return false;
        }
        self.arrivals
            .extend(tripped.difference(&self.tripped).cloned());
        self.arrivals.retain(|t| tripped.contains(t));
        self.tripped = tripped;
        true
    }

    /// `[rollout] guards`.
    pub fn guards(&self) -> &[Guard] {
        &self.guards
    }

    /// The guards that trip now.
    pub fn tripped(&self) -> &BTreeSet<Tripped> {
        &self.tripped
    }

    /// The debate types whose rollout (in [`COMPARED`]'s database) trips a guard, in order.
    pub fn needing(&self) -> Vec<&str> {
        let mut types: Vec<&str> = self
            .tripped
            .iter()
            .map(|t| t.debate_type.as_str())
            .collect();
        types.dedup();
        types
    }

    /// The guards tripping on `debate_type`'s rollout in context `ctx` (only [`COMPARED`]'s
    /// are watched).
    pub fn tripped_on<'a>(
        &'a self,
        ctx: Ctx,
        debate_type: &'a str,
    ) -> impl Iterator<Item = Guard> + 'a {
        self.tripped
            .iter()
            .filter(move |t| ctx == COMPARED && t.debate_type == debate_type)
            .map(|t| t.guard)
    }

    /// The guards that tripped since the last call, for the announcement.
    pub(super) fn take_arrivals(&mut self) -> Vec<Tripped> {
        std::mem::take(&mut self.arrivals)
    }
}
