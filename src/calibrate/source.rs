//! Where recorded debates come from: recordings played to their end by the caller (fixture
//! files, played at once in shadow mode by the simulator), or the finished debates of a
//! database, read in one pass (with the window of time they span).

use tokio_postgres::Client;

use super::evidence::Window;
use super::record::{Measuring, RecordedDebate};
use super::workers::{self, Queue};
use crate::domain::{Debate, Limits};
use crate::progress::Progress;
use crate::signals::Measure;
use crate::store::postgres::{Result, finished_debates};

/// Reduces each recording to a record once `play` has played it to its end (as a shadow-mode
/// orchestrator would have: see [`crate::simulate::play_in_shadow`]), recordings in parallel
/// (a recording a thread at a time: [`workers`]), records in the recordings' order, each
/// counted on `progress`.
pub fn from_recordings<R: Sync>(
    recordings: &[R],
    play: impl Fn(&R) -> Debate + Sync,
    measuring: &Measuring,
    progress: &Progress,
) -> Vec<RecordedDebate> {
    workers::each(recordings, |recording| {
        let record = RecordedDebate::from_debate(&play(recording), measuring);
        counted(progress, measuring);
        record
    })
}

/// Every debate of the database that is no longer running, each reduced on the thread pool as
/// soon as its rows are read (so reading and measuring overlap; a debate a thread at a time:
/// [`workers`]), records in the order of the session rows, each counted on `progress` when
/// reduced. Rows are read within `limits`.
pub async fn from_database(
    client: &mut Client,
    limits: &Limits,
    measuring: &Measuring,
    progress: &Progress,
) -> Result<Vec<RecordedDebate>> {
    Ok(read_database(client, limits, measuring, progress).await?.0)
}

/// [`from_database`], with the window of the debates read: the first one's start and the last
/// one's end (`None` when no session row says when).
pub async fn read_database(
    client: &mut Client,
    limits: &Limits,
    measuring: &Measuring,
    progress: &Progress,
) -> Result<(Vec<RecordedDebate>, Option<Window>)> {
    let queue = {
        let (measuring, progress) = (measuring.clone(), progress.clone());
        Queue::start(move |debate: Debate| {
            let record = RecordedDebate::from_debate(&debate, &measuring);
            counted(&progress, &measuring);
            record
        })
    };
    let total = |total| progress.set_total(total as u64);
    let mut window = None;
    finished_debates(client, limits, total, |position, debate| {
        let session = &debate.session;
        window = Window::widen(window, session.created_at, session.finished_at);
        queue.give(position, debate);
    })
    .await?;
    Ok((queue.finish(), window))
}

/// One more debate reduced, with the rounds its measure has embedded and read back so far.
fn counted(progress: &Progress, measuring: &Measuring) {
    progress.inc(1);
    if let Measure::Semantic(encoder) = &measuring.measure {
        let tally = encoder.tally();
        if !tally.is_empty() {
            progress.say(format!(
                "{} rounds embedded, {} read back",
                tally.embedded, tally.read_back
            ));
        }
    }
}
