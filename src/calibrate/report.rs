//! A calibration report: every setting of a grid replayed over every recorded debate, summed
//! per setting, with the frontier of tokens saved against verdict flips and the setting in
//! force marked. Rendered as a text table (the same cells the console shows) or as JSON.

use std::borrow::Borrow;

use rayon::prelude::*;
use serde::Serialize;

use super::record::RecordedDebate;
use super::replay::{DebateOutcome, Setting, replay};
use crate::domain::Decision;
use crate::policy::ControllerConfig;
use crate::text::{columns, inert, thousands};

/// Where replays stopped, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stops {
    pub converged: u32,
    pub max_rounds: u32,
    pub safety: u32,
    /// Ran to the real end without the setting stopping it.
    pub none: u32,
}

/// One setting's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub setting: Setting,
    /// The setting in force today.
    pub current: bool,
    /// No other setting saves at least as many tokens with at most as many flips, and is
    /// better in one of the two.
    pub frontier: bool,
    pub debates: u32,
    pub mean_rounds_used: f64,
    pub mean_rounds_run: f64,
    pub tokens_run: u64,
    pub tokens_saved: u64,
    pub tokens_saved_share: f64,
    pub verdict_flips: u32,
    pub verdict_flip_share: f64,
    pub escalations: u32,
    pub stops: Stops,
    pub labels: u32,
    pub labels_agreed: u32,
    /// Share of labels agreed with; `None` without labels.
    pub agreement: Option<f64>,
    /// Rounds with a recorded controller decision, and how many the setting decides alike.
    pub decisions_recorded: u32,
    pub decisions_agreed: u32,
    /// Each debate's outcome, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<DebateOutcome>>,
}

impl Row {
    fn new<R: Borrow<RecordedDebate>>(
        setting: Setting,
        current: bool,
        records: &[R],
        base: &ControllerConfig,
        keep_outcomes: bool,
    ) -> Row {
        let config = setting.config(base);
        let mut row = Row {
            setting,
            current,
            frontier: false,
            debates: records.len() as u32,
            mean_rounds_used: 0.0,
            mean_rounds_run: 0.0,
            tokens_run: 0,
            tokens_saved: 0,
            tokens_saved_share: 0.0,
            verdict_flips: 0,
            verdict_flip_share: 0.0,
            escalations: 0,
            stops: Stops::default(),
            labels: 0,
            labels_agreed: 0,
            agreement: None,
            decisions_recorded: 0,
            decisions_agreed: 0,
            outcomes: keep_outcomes.then(Vec::new),
        };
        let (mut used, mut run) = (0u64, 0u64);
        for record in records {
            let outcome = replay(record.borrow(), &row.setting, &config);
            used += u64::from(outcome.rounds_used);
            run += u64::from(outcome.rounds_run);
            row.tokens_run += outcome.tokens_run;
            row.tokens_saved += outcome.tokens_saved;
            row.verdict_flips += u32::from(outcome.verdict_flip);
            row.escalations += outcome.escalations;
            row.labels += outcome.labels;
            row.labels_agreed += outcome.agreed;
            row.decisions_recorded += outcome.decisions_recorded;
            row.decisions_agreed += outcome.decisions_agreed;
            match outcome.stop {
                Some(Decision::StopConverged) => row.stops.converged += 1,
                Some(Decision::StopMaxRounds) => row.stops.max_rounds += 1,
                Some(Decision::StopSafety) => row.stops.safety += 1,
                _ => row.stops.none += 1,
            }
            if let Some(outcomes) = &mut row.outcomes {
                outcomes.push(outcome);
            }
        }
        let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
        let debates = f64::from(row.debates);
        row.mean_rounds_used = share(used as f64, debates);
        row.mean_rounds_run = share(run as f64, debates);
        row.tokens_saved_share = share(row.tokens_saved as f64, row.tokens_run as f64);
        row.verdict_flip_share = share(f64::from(row.verdict_flips), debates);
        row.agreement =
            (row.labels > 0).then(|| f64::from(row.labels_agreed) / f64::from(row.labels));
        row
    }

    /// The setting's thresholds in words: `similarity 0.90 · novelty 1 · min own · max own ·
    /// budget 0.80`, or with `short` names, `sim 0.90 · nov 1 · ...`.
    pub fn thresholds(&self, short: bool) -> String {
        let cells = self.cells();
        let (similarity, novelty) = if short {
            ("sim", "nov")
        } else {
            ("similarity", "novelty")
        };
        format!(
            "{similarity} {} · {novelty} {} · min {} · max {} · budget {}",
            cells[1], cells[2], cells[3], cells[4], cells[5]
        )
    }

    /// The cells of the table, in `Report::HEADER` order.
    pub fn cells(&self) -> [String; 12] {
        let bound = |b: Option<u32>| b.map_or_else(|| "own".to_owned(), |b| b.to_string());
        let s = &self.setting;
        [
            format!(
                "{}{}",
                if self.current { "*" } else { " " },
                if self.frontier { "+" } else { " " }
            ),
            format!("{:.2}", s.similarity_threshold),
            s.novelty_threshold.to_string(),
            bound(s.min_rounds),
            bound(s.max_rounds),
            format!("{:.2}", s.budget_fraction),
            format!("{:.1}/{:.1}", self.mean_rounds_used, self.mean_rounds_run),
            format!(
                "{} ({:.1}%)",
                thousands(self.tokens_saved),
                self.tokens_saved_share * 100.0
            ),
            format!(
                "{} ({:.1}%)",
                self.verdict_flips,
                self.verdict_flip_share * 100.0
            ),
            self.escalations.to_string(),
            format!(
                "{}/{}/{}/{}",
                self.stops.converged, self.stops.max_rounds, self.stops.safety, self.stops.none
            ),
            match self.agreement {
                Some(share) => format!(
                    "{}/{} ({:.0}%)",
                    self.labels_agreed,
                    self.labels,
                    share * 100.0
                ),
                None => "-".to_owned(),
            },
        ]
    }
}

/// Every setting's row over a set of recorded debates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub debates: u32,
    pub labels: u32,
    /// Grid combinations left out because their min_rounds exceeds their max_rounds.
    pub skipped_settings: usize,
    pub rows: Vec<Row>,
    /// What could not be used from the debates' rows.
    pub issues: Vec<String>,
}

impl Report {
    pub(crate) const HEADER: [&str; 12] = [
        "",
        "similarity",
        "novelty",
        "min",
        "max",
        "budget",
        "rounds used/run",
        "tokens saved",
        "verdict flips",
        "escalations",
        "stops conv/max/safety/none",
        "label agreement",
    ];

    pub(crate) const LEGEND: &str = "* in force today   + frontier: no other setting does as well on tokens \
                              saved and verdict flips and better on one   own: each debate's own bound";

    /// Replays every setting over `records` (owned or borrowed); `current` is added when the
    /// grid lacks it.
    pub fn run<R: Borrow<RecordedDebate> + Sync>(
        records: &[R],
        mut settings: Vec<Setting>,
        skipped_settings: usize,
        current: &Setting,
        base: &ControllerConfig,
        keep_outcomes: bool,
    ) -> Report {
        if !settings.iter().any(|s| s.same_as(current)) {
            settings.push(current.clone());
        }
        let mut rows: Vec<Row> = settings
            .par_iter()
            .map(|s| Row::new(s.clone(), s.same_as(current), records, base, keep_outcomes))
            .collect();
        let points: Vec<(u64, u32)> = rows
            .iter()
            .map(|r| (r.tokens_saved, r.verdict_flips))
            .collect();
        for row in &mut rows {
            let (saved, flips) = (row.tokens_saved, row.verdict_flips);
            row.frontier = !points
                .iter()
                .any(|&(s, f)| s >= saved && f <= flips && (s > saved || f < flips));
        }
        Report {
            debates: records.len() as u32,
            labels: records.iter().map(|r| r.borrow().labels.len() as u32).sum(),
            skipped_settings,
            rows,
            issues: records
                .iter()
                .flat_map(|r| r.borrow().issues.clone())
                .collect(),
        }
    }

    /// What the grid left out, to follow the count of settings: ` (3 left out: min_rounds
    /// above max_rounds)`, or nothing.
    pub(crate) fn left_out(&self) -> String {
        match self.skipped_settings {
            0 => String::new(),
            n => format!(" ({n} left out: min_rounds above max_rounds)"),
        }
    }

    /// The setting whose decisions agree with the recorded decisions most often (the first of
    /// equals, the setting in force before others); `None` without recorded decisions.
    pub fn closest_to_recorded(&self) -> Option<&Row> {
        let mut best: Option<&Row> = None;
        for row in self.rows.iter().filter(|r| r.decisions_recorded > 0) {
            let better = best.is_none_or(|b| {
                row.decisions_agreed > b.decisions_agreed
                    || (row.decisions_agreed == b.decisions_agreed && row.current && !b.current)
            });
            if better {
                best = Some(row);
            }
        }
        best
    }

    /// The frontier's settings from the fewest verdict flips to the most (then the most tokens
    /// saved first): the path a cursor walks along it.
    pub fn frontier(&self) -> Vec<&Row> {
        let mut frontier: Vec<&Row> = self.rows.iter().filter(|r| r.frontier).collect();
        frontier.sort_by(|a, b| {
            a.verdict_flips
                .cmp(&b.verdict_flips)
                .then(b.tokens_saved.cmp(&a.tokens_saved))
        });
        frontier
    }

    /// The row of `setting` replayed again over `records` (the records the report was run
    /// over) with each debate's outcome kept; `None` when the report has no such setting. Only
    /// the settings someone looks at keep their outcomes: a grid's worth would be settings x
    /// debates of them.
    pub(crate) fn with_outcomes<R: Borrow<RecordedDebate>>(
        &self,
        setting: &Setting,
        records: &[R],
        base: &ControllerConfig,
    ) -> Option<Row> {
        let row = self.rows.iter().find(|r| r.setting.same_as(setting))?;
        Some(Row {
            frontier: row.frontier,
            ..Row::new(row.setting.clone(), row.current, records, base, true)
        })
    }

    /// The table as text, columns padded, the legend under it.
    pub fn table(&self) -> String {
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| r.cells().to_vec()).collect();
        let mut out = format!(
            "{} finished debates, {} operator labels, {} settings\n",
            self.debates,
            self.labels,
            self.rows.len()
        );
        out.push_str(&columns(&Report::HEADER, &rows));
        out.push_str(Report::LEGEND);
        out.push('\n');
        if self.skipped_settings > 0 {
            out.push_str(&format!(
                "{} grid settings left out: min_rounds above max_rounds\n",
                self.skipped_settings
            ));
        }
        out
    }

    /// Each debate's outcome under each setting, when the report kept them.
    pub fn outcomes_table(&self) -> String {
        const HEADER: [&str; 8] = [
            "setting",
            "debate",
            "rounds used/run",
            "stop",
            "tokens saved/run",
            "verdict at stop",
            "verdict at end",
            "labels agreed",
        ];
        let mut rows = Vec::new();
        for row in &self.rows {
            let cells = row.cells();
            let setting = format!(
                "{} {}/{}/{}/{}/{}",
                cells[0].trim(),
                cells[1],
                cells[2],
                cells[3],
                cells[4],
                cells[5]
            );
            for o in row.outcomes.iter().flatten() {
                let verdict = |v: &Option<String>| inert(v.as_deref().unwrap_or("-"));
                rows.push(vec![
                    setting.trim().to_owned(),
                    inert(&o.session_id),
                    format!("{}/{}", o.rounds_used, o.rounds_run),
                    o.stop.map_or_else(|| "none".to_owned(), |d| d.to_string()),
                    format!("{}/{}", thousands(o.tokens_saved), thousands(o.tokens_run)),
                    verdict(&o.verdict_at_stop),
                    format!(
                        "{}{}",
                        verdict(&o.verdict_at_end),
                        if o.verdict_flip { "  (flip)" } else { "" }
                    ),
                    format!("{}/{}", o.agreed, o.labels),
                ]);
            }
        }
        format!(
            "\nper debate (setting: similarity/novelty/min/max/budget)\n{}",
            columns(&HEADER, &rows)
        )
    }
}
