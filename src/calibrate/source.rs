//! Where recorded debates come from: recordings played to their end by the caller (fixture
//! files, played at once in shadow mode by the simulator), or the finished debates of a
//! database, read in one pass.

use anyhow::Result;
use rayon::prelude::*;
use tokio_postgres::Client;

use super::record::{Measuring, RecordedDebate};
use crate::domain::{Debate, Limits};
use crate::store::postgres::finished_debates;

/// Reduces each recording to a record once `play` has played it to its end (as a shadow-mode
/// orchestrator would have: see [`crate::simulate::play_in_shadow`]), recordings in parallel,
/// records in the recordings' order.
pub fn from_recordings<R: Sync>(
    recordings: &[R],
    play: impl Fn(&R) -> Debate + Sync,
    measuring: &Measuring,
) -> Vec<RecordedDebate> {
    recordings
        .par_iter()
        .map(|recording| RecordedDebate::from_debate(&play(recording), measuring))
        .collect()
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
