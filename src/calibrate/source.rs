//! Where recorded debates come from: fixture files, played at once in shadow mode (every
//! recorded round runs; the controller's decisions are counterfactuals, the recording's operator
//! actions are labels), or the finished debates of a database, read in one pass.

use anyhow::Result;
use rayon::prelude::*;
use tokio_postgres::Client;

use super::record::{Measuring, RecordedDebate};
use crate::domain::{ControllerMode, Debate, Limits};
use crate::simulate::{DebateRun, Fixture};
use crate::store::postgres::finished_debates;

/// Plays each fixture to its end and reduces it to a record, debates in parallel, records in
/// the fixtures' order. `new_run` prepares a fixture's run (with the thresholds in force).
pub fn from_fixtures(
    fixtures: &[Fixture],
    new_run: impl Fn(Fixture) -> DebateRun + Sync,
    measuring: &Measuring,
) -> Vec<RecordedDebate> {
    fixtures
        .par_iter()
        .map(|fixture| RecordedDebate::from_debate(&played(fixture, &new_run), measuring))
        .collect()
}

/// A fixture's rows as a shadow-mode orchestrator would have written them.
fn played(fixture: &Fixture, new_run: impl Fn(Fixture) -> DebateRun) -> Debate {
    let mut fixture = fixture.clone();
    fixture.session.controller_mode = ControllerMode::Shadow;
    let mut debate = Debate::new(&fixture.session.id);
    let mut run = new_run(fixture);
    run.start().into_iter().for_each(|c| debate.apply(c));
    while !run.is_finished() {
        run.play_round().into_iter().for_each(|c| debate.apply(c));
    }
    debate
}

/// Every debate of the database that is no longer running, each reduced on the thread pool as
/// soon as its rows are read (so reading and measuring overlap), records in the order of the
/// session rows. Rows are read within `limits`.
pub async fn from_database(
    client: &mut Client,
    limits: &Limits,
    measuring: &Measuring,
) -> Result<Vec<RecordedDebate>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    finished_debates(client, limits, |position, debate| {
        let sender = sender.clone();
        let measuring = measuring.clone();
        rayon::spawn(move || {
            // The receiver is gone only when reading failed, and that error is returned.
            let _ = sender.send((position, RecordedDebate::from_debate(&debate, &measuring)));
        });
    })
    .await?;
    drop(sender);
    let mut records: Vec<(usize, RecordedDebate)> = receiver.iter().collect();
    records.sort_unstable_by_key(|(position, _)| *position);
    Ok(records.into_iter().map(|(_, record)| record).collect())
}
