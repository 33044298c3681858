//! `gavel trace`: why one debate stopped where it did, in the database it is in; with several
//! databases, in each that holds a debate of that id, each trace under its context's name.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use gavel::audit::Trace;
use gavel::domain::{Change, Debates, Limits};
use gavel::store::postgres::history;
use gavel::text::inert;

use super::contexts::{Named, describe, read_each};
use super::{print, runtime};

/// A trace with the context it was found in, as `--json` writes it with several databases.
#[derive(Serialize)]
struct InContext<'a> {
    context: &'a str,
    #[serde(flatten)]
    trace: &'a Trace,
}

/// Prints the trace of debate `session` in each of `databases` that holds it, as text or JSON:
/// with one database, the trace alone, as ever; with several, every trace found under its
/// context (text: a heading line each; JSON: a list, each trace with its `context`). A debate in
/// none of them is an error.
pub fn run(session: &str, databases: &[Named], json: bool, limits: &Limits) -> Result<ExitCode> {
    let read = runtime()?.block_on(read_each(databases, |database| async move {
        let client = database.target.connect_driven().await?;
        Ok(history(&client, session, limits).await?)
    }))?;
    let mut found = Vec::new();
    for (database, rows) in databases.iter().zip(read) {
        let has_session = rows.iter().any(|row| matches!(row, Change::Session(_)));
        let debates: Debates = rows.into_iter().collect();
        if let Some(debate) = debates.get_by_id(session).filter(|_| has_session) {
            found.push((database, Trace::of(debate)));
        }
    }
    if found.is_empty() {
        anyhow::bail!(
            "no debate {:?} in debate_sessions of {}",
            inert(session),
            describe(databases)
        );
    }
    match (databases.len(), json) {
        (1, true) => print(&format!("{}\n", serde_json::to_string_pretty(&found[0].1)?))?,
        (1, false) => print(&found[0].1.text())?,
        (_, true) => {
            let each: Vec<InContext> = found
                .iter()
                .map(|(database, trace)| InContext {
                    context: &database.name,
                    trace,
                })
                .collect();
            print(&format!("{}\n", serde_json::to_string_pretty(&each)?))?;
        }
        (_, false) => {
            let each: Vec<String> = found
                .iter()
                .map(|(database, trace)| format!("{}\n{}", database.describe(), trace.text()))
                .collect();
            print(&each.join("\n"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
