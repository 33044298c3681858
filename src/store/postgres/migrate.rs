//! `gavel migrate`: the SQL files in `migrations/`, embedded and applied by refinery, which
//! records what it applied (`refinery_schema_history`) so that a second run changes nothing.
//! The SQL itself is idempotent too, so a database where the orchestrator created the tables
//! first gains only what it lacks. An advisory lock keeps two migrating gavels apart.

use super::error::{Doing, Error, Result};
use tokio_postgres::Client;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// Any number, as long as every gavel uses the same one.
const LOCK: i64 = 0x6761_7665_6c00;

/// Applies what is missing; returns the names of the migrations applied now.
pub async fn migrate(client: &mut Client) -> Result<Vec<String>> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK])
        .await
        .doing("taking the migration lock")?;
    let report = embedded::migrations::runner().run_async(client).await;
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK])
        .await
        .doing("releasing the migration lock")?;
    let report = report.map_err(Error::Migration)?;
    Ok(report
        .applied_migrations()
        .iter()
        .map(|m| m.to_string())
        .collect())
}
