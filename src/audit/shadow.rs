//! The shadow week's rollup: for each shadow-mode debate, the round where the controller would
//! have stopped (its first recorded stop decision) against the round where the fixed loop
//! stopped, the tokens spent after the would-be stop (what enabling it would have saved), and
//! how often the operators' labels agreed with the controller; summed across debates.

use crate::calibrate::Class;
use crate::calibrate::record::labels;
use crate::domain::{ControllerMode, Debate, Decision, Reported};

/// One shadow-mode debate.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowRow {
    pub session_id: String,
    pub running: bool,
    /// Rounds the fixed loop ran (so far, while running).
    pub rounds_run: u32,
    /// The controller's first stop: its round and decision.
    pub would_stop: Option<(u32, Decision)>,
    /// Every token the debate's turns spent, superseded turns included.
    pub tokens: u64,
    /// Tokens spent in rounds after the would-be stop.
    pub tokens_saved: u64,
    /// Operator accepts, overrides and escalations (gated timeouts are not labels).
    pub labels: u32,
    /// Labels of the same kind (stop, continue, escalate) as the controller's decision.
    pub agreed: u32,
}

/// Every shadow-mode debate and the sums.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShadowWeek {
    pub rows: Vec<ShadowRow>,
    pub tokens: u64,
    pub tokens_saved: u64,
    pub labels: u32,
    pub agreed: u32,
    /// Labels that could not be read, with table and key.
    pub issues: Vec<String>,
}

impl ShadowWeek {
    pub fn of<'a>(debates: impl IntoIterator<Item = &'a Debate>) -> ShadowWeek {
        ShadowWeek::sum(
            debates
                .into_iter()
                .filter(|d| ShadowRow::is_shadow(d))
                .map(ShadowRow::of),
        )
    }

    /// The rollup of shadow debates' rows, each with the issues found reading its labels.
    pub fn sum(rows: impl IntoIterator<Item = (ShadowRow, Vec<String>)>) -> ShadowWeek {
        let mut week = ShadowWeek::default();
        for (row, issues) in rows {
            week.tokens += row.tokens;
            week.tokens_saved += row.tokens_saved;
            week.labels += row.labels;
            week.agreed += row.agreed;
            week.rows.push(row);
            week.issues.extend(issues);
        }
        week
    }

    /// Debates the controller would have stopped before the fixed loop did.
    pub fn stopped_early(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.would_stop.is_some_and(|(round, _)| round < r.rounds_run))
            .count()
    }

    /// Share of all shadow tokens that would have been saved.
    pub(crate) fn saved_share(&self) -> f64 {
        share(self.tokens_saved, self.tokens)
    }

    /// Share of labels that agreed with the controller; `None` without labels.
    pub fn agreement(&self) -> Option<f64> {
        (self.labels > 0).then(|| f64::from(self.agreed) / f64::from(self.labels))
    }
}

impl ShadowRow {
    /// Whether the debate runs in shadow mode (the rollup's debates).
    pub(crate) fn is_shadow(debate: &Debate) -> bool {
        debate.session.controller_mode == Reported::Known(ControllerMode::Shadow)
    }

    /// One shadow debate's row, with the issues found reading its labels.
    pub fn of(debate: &Debate) -> (ShadowRow, Vec<String>) {
        let mut issues = Vec::new();
        let rounds_run = debate.latest_round();
        let would_stop = debate.decisions.values().find_map(|d| {
            d.decision
                .known()
                .filter(|k| k.stops())
                .map(|k| (d.round_index, k))
        });
        let tokens = debate.turns.iter().map(|t| u64::from(t.tokens_used)).sum();
        let tokens_saved = would_stop.map_or(0, |(round, _)| {
            debate
                .turns
                .iter()
                .filter(|t| t.round_number > round)
                .map(|t| u64::from(t.tokens_used))
                .sum()
        });
        let labels = labels(debate, rounds_run, &mut issues);
        let agreed = labels
            .iter()
            .filter(|label| {
                let controller = debate
                    .decisions
                    .get(&label.round)
                    .and_then(|d| d.decision.known());
                controller.map(Class::of) == Some(label.class)
            })
            .count();
        let row = ShadowRow {
            session_id: debate.session.id.clone(),
            running: debate.session.is_running(),
            rounds_run,
            would_stop,
            tokens,
            tokens_saved,
            labels: labels.len() as u32,
            agreed: agreed as u32,
        };
        (row, issues)
    }

    pub(crate) fn saved_share(&self) -> f64 {
        share(self.tokens_saved, self.tokens)
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
