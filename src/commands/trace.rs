//! `gavel trace`: why one debate of the database stopped where it did.

use std::process::ExitCode;

use anyhow::Result;

use gavel::audit::Trace;
use gavel::domain::{Change, Debates, Limits};
use gavel::store::postgres::history;
use gavel::text::inert;

use super::{print, runtime, target};

/// Prints the trace of debate `session`, as text or JSON.
pub fn run(session: &str, db: Option<&str>, json: bool, limits: &Limits) -> Result<ExitCode> {
    let target = target(db)?;
    let rows = runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        history(&client, session, limits).await
    })?;
    let has_session = rows.iter().any(|row| matches!(row, Change::Session(_)));
    let debates: Debates = rows.into_iter().collect();
    let Some(debate) = debates.get_by_id(session).filter(|_| has_session) else {
        anyhow::bail!(
            "no debate {:?} in debate_sessions of {}",
            inert(session),
            target.describe()
        );
    };
    let trace = Trace::of(debate);
    if json {
        print(&format!("{}\n", serde_json::to_string_pretty(&trace)?))?;
    } else {
        print(&trace.text())?;
    }
    Ok(ExitCode::SUCCESS)
}
