//! Where recorded debates come from: fixture files, played at once in shadow mode (every
//! recorded round runs; the controller's decisions are counterfactuals, the recording's operator
//! actions are labels), or the finished debates of a database, read in one pass.

use std::sync::Arc;

use anyhow::Result;
use rayon::prelude::*;
use tokio_postgres::Client;

use super::record::RecordedDebate;
use crate::config::Config;
use crate::domain::{ControllerMode, Debate, Debates};
use crate::simulate::{DebateRun, Fixture, Ids};
use crate::store::postgres::finished_debates;

/// Plays each fixture to its end and reduces it to a record, debates in parallel, records in
/// the fixtures' order.
pub fn from_fixtures(fixtures: &[Fixture], config: &Arc<Config>) -> Vec<RecordedDebate> {
    fixtures
        .par_iter()
        .map(|fixture| RecordedDebate::from_debate(&played(fixture, config)))
        .collect()
}

/// A fixture's rows as a shadow-mode orchestrator would have written them.
fn played(fixture: &Fixture, config: &Arc<Config>) -> Debate {
    let mut fixture = fixture.clone();
    fixture.session.controller_mode = ControllerMode::Shadow;
    let mut debate = Debate::new(&fixture.session.id);
    let mut run = DebateRun::new(fixture, config.clone(), Ids::default());
    run.start().into_iter().for_each(|c| debate.apply(c));
    while !run.is_finished() {
        run.play_round().into_iter().for_each(|c| debate.apply(c));
    }
    debate
}

/// Every debate of the database that is no longer running, reduced in parallel, records in the
/// order the debates were read.
pub async fn from_database(client: &mut Client) -> Result<Vec<RecordedDebate>> {
    let debates: Debates = finished_debates(client).await?.into_iter().collect();
    Ok(debates
        .par_iter()
        .map(RecordedDebate::from_debate)
        .collect())
}
