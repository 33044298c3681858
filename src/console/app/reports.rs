//! The console's reports over many debates — the calibration grid replayed over the finished
//! debates, the shadow-week rollup, and the arms of each settings rollout compared — as the
//! model knows them: the figures last heard from
//! the reports worker (`crate::console::reports`, owned by the run loop, which delivers them as
//! [`super::Event::Reports`]), and what the model has for that worker: the rows landed since the
//! run loop last handed them over, the report on screen, and the calibration cursor's setting.
//! Plain data: nothing here waits, locks or talks to the worker.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::audit::ShadowWeek;
use crate::calibrate::rollout::Comparison;
use crate::calibrate::{Report, Row, Setting};
use crate::domain::Change;

/// Finished debates calibrated: the most recently finished this many.
pub const CALIBRATED: usize = 2_000;
/// Finished debates that may wait to settle (their rows not all in yet); beyond, those waiting
/// longest are left out of the reports (reduced before their rows settle, they might be
/// measured from part of them).
pub const SETTLING: usize = 500;
/// Running debates whose rows the worker holds (what a record needs when one finishes): the
/// most recently active this many.
pub const RUNNING_ROWS: usize = 1_000;

/// Which report the operator is looking at: only that one is kept current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    Calibration,
    ShadowWeek,
    Rollout,
}

/// The figures, as last computed.
#[derive(Debug, Clone)]
pub struct Figures {
    pub calibration: Arc<Report>,
    pub shadow: Arc<ShadowWeek>,
    /// The setting the calibration window's cursor is on, with each debate's outcome under it
    /// (see `Reports::selecting`).
    pub selected: Option<Arc<Row>>,
    /// Each rollout in progress (of those last handed to the worker), its arms compared, by
    /// debate type.
    pub rollout: Arc<Vec<Comparison>>,
    /// The first and last time (a debate's start or end) of the finished debates calibrated,
    /// when their rows say.
    pub window: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// Rows landed since the watched report was computed: it is being refreshed.
    pub refreshing: bool,
    /// Why the configured grid could not be used (only the setting in force is replayed).
    pub problem: Option<String>,
    /// Rows left out because the worker was far behind (the console was flooded); their
    /// debates are left out with them (a record of part of a debate's rows would be wrong, and
    /// would measure rounds whose recorded signals were among the rows left out).
    pub skipped: u64,
    /// Debates left out because more than [`RUNNING_ROWS`] ran at once and theirs were the
    /// least active, or more than [`SETTLING`] finished at once and theirs were the latest.
    pub untracked: u64,
}

impl Default for Figures {
    /// No debates yet: what the console shows until the worker first reports.
    fn default() -> Figures {
        Figures {
            calibration: Arc::new(Report {
                debates: 0,
                labels: 0,
                skipped_settings: 0,
                rows: Vec::new(),
                issues: Vec::new(),
            }),
            shadow: Arc::default(),
            selected: None,
            rollout: Arc::default(),
            window: None,
            refreshing: false,
            problem: None,
            skipped: 0,
            untracked: 0,
        }
    }
}

/// The frontier setting under the calibration window's `cursor` (the last when the frontier
/// shrank below it).
pub fn at_cursor(report: &Report, cursor: usize) -> Option<&Row> {
    let frontier = report.frontier();
    frontier
        .get(cursor.min(frontier.len().saturating_sub(1)))
        .copied()
}

/// The reports as the model holds them: the figures last heard, and what waits for the worker.
#[derive(Debug, Clone, Default)]
pub struct Reports {
    figures: Figures,
    /// Rows landed since the run loop last took them (see [`Reports::take_rows`]).
    rows: Vec<Change>,
    watched: Option<Watched>,
    selecting: Option<Setting>,
}

impl Reports {
    /// The figures as the worker last reported them.
    pub fn figures(&self) -> &Figures {
        &self.figures
    }

    /// Rows landed that wait to be handed to the worker.
    pub fn waiting(&self) -> usize {
        self.rows.len()
    }

    /// The rows landed since the last call, for the worker (the run loop takes them once a
    /// frame, or sooner when many wait).
    pub(crate) fn take_rows(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.rows)
    }

    /// The report on screen, which the worker keeps current.
    pub fn watched(&self) -> Option<Watched> {
        self.watched
    }

    /// The setting under the calibration window's cursor, whose debates' outcomes the worker
    /// is to keep in [`Figures::selected`].
    pub(crate) fn selecting(&self) -> Option<&Setting> {
        self.selecting.as_ref()
    }

    pub(super) fn landed(&mut self, change: &Change) {
        self.rows.push(change.clone());
    }

    /// A row landed in the database called `context`, of several: the reports know its debate
    /// as `context/id`, so that the same id in two databases is two debates there too.
    pub(super) fn landed_in(&mut self, context: &str, change: &Change) {
        let mut change = change.clone();
        let id = change.session_id_mut();
        *id = format!("{context}/{id}");
        self.rows.push(change);
    }

    pub(super) fn set_figures(&mut self, figures: Figures) {
        self.figures = figures;
    }

    pub(super) fn watch(&mut self, watched: Option<Watched>) {
        self.watched = watched;
    }

    /// The calibration window's cursor is on the `cursor`-th setting of the frontier (see
    /// [`at_cursor`]); a setting is cloned only when the cursor moved to another.
    pub(super) fn select(&mut self, cursor: usize) {
        let Some(row) = at_cursor(&self.figures.calibration, cursor) else {
            return;
        };
        if !self
            .selecting
            .as_ref()
            .is_some_and(|s| s.same_as(&row.setting))
        {
            self.selecting = Some(row.setting.clone());
        }
    }
}
