//! The console's calibration: a report over the finished debates on screen, kept current as
//! debates finish or their rows arrive. Debates are marked as their rows land and only the
//! marked ones are reduced again, once per frame at most.

use std::collections::BTreeSet;

use super::grid::{self, AxisSpec};
use super::record::RecordedDebate;
use super::replay::Setting;
use super::report::Report;
use crate::domain::Debates;
use crate::policy::ControllerConfig;

#[derive(Debug, Clone)]
pub struct Tracker {
    settings: Vec<Setting>,
    skipped: usize,
    current: Setting,
    base: ControllerConfig,
    /// Sorted by id.
    records: Vec<RecordedDebate>,
    stale: BTreeSet<String>,
    report: Report,
    /// Why the configured grid could not be used (only the setting in force is replayed).
    pub problem: Option<String>,
}

impl Tracker {
    /// A tracker replaying the grid `specs` over `base`, the configuration in force; a grid
    /// that cannot be used leaves the setting in force alone, and says why.
    pub fn new(specs: &[AxisSpec], base: &ControllerConfig) -> Tracker {
        let current = Setting::current(base);
        let (settings, skipped, problem) = match grid::settings(specs, &current) {
            Ok((settings, skipped)) => (settings, skipped, None),
            Err(e) => (vec![current.clone()], 0, Some(e)),
        };
        let report = Report::run(&[], settings.clone(), skipped, &current, base, false);
        Tracker {
            settings,
            skipped,
            current,
            base: base.clone(),
            records: Vec::new(),
            stale: BTreeSet::new(),
            report,
            problem,
        }
    }

    /// A row of this debate changed.
    pub fn mark(&mut self, session_id: &str) {
        if !self.stale.contains(session_id) {
            self.stale.insert(session_id.to_owned());
        }
    }

    /// Reduces the marked debates that have finished and replays the grid when any changed.
    pub fn refresh(&mut self, debates: &Debates) {
        if self.stale.is_empty() {
            return;
        }
        let mut changed = false;
        for id in std::mem::take(&mut self.stale) {
            let at = self.records.binary_search_by(|r| r.id.cmp(&id));
            match (debates.get_by_id(&id), at) {
                (Some(debate), Ok(i)) if !debate.session.is_running() => {
                    self.records[i] = RecordedDebate::from_debate(debate);
                }
                (Some(debate), Err(i)) if !debate.session.is_running() => {
                    self.records.insert(i, RecordedDebate::from_debate(debate));
                }
                (_, Ok(i)) => {
                    self.records.remove(i);
                }
                // A running debate's rows: nothing to calibrate, nothing to replay.
                (_, Err(_)) => continue,
            }
            changed = true;
        }
        if !changed {
            return;
        }
        self.report = Report::run(
            &self.records,
            self.settings.clone(),
            self.skipped,
            &self.current,
            &self.base,
            false,
        );
    }

    pub fn report(&self) -> &Report {
        &self.report
    }
}
