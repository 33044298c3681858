//! `gavel migrate`: the SQL files in `migrations/`, embedded and applied by refinery, which
//! records what it applied (`refinery_schema_history`) so that a second run changes nothing.
//! The SQL itself is idempotent too, so a database where the orchestrator created the tables
//! first gains only what it lacks. An advisory lock keeps two migrating gavels apart.

use super::error::{Doing, Error, Result};
use refinery::Target;
use tokio_postgres::Client;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// Any number, as long as every gavel uses the same one.
const LOCK: i64 = 0x6761_7665_6c00;

/// Applies what is missing; returns the names of the migrations applied now.
pub async fn migrate(client: &mut Client) -> Result<Vec<String>> {
    migrate_each(client, |_| {}).await
}

/// Every migration there is, by name, in the order they apply.
pub fn migrations() -> Vec<String> {
    let runner = embedded::migrations::runner();
    runner
        .get_migrations()
        .iter()
        .map(|m| m.to_string())
        .collect()
}

/// As [`migrate`], one migration at a time (each in its own transaction), `next` told the name
/// of each (applied already or not) before it is looked at.
pub async fn migrate_each(client: &mut Client, mut next: impl FnMut(&str)) -> Result<Vec<String>> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK])
        .await
        .doing("taking the migration lock")?;
    let mut applied = Vec::new();
    let mut failed = None;
    for migration in embedded::migrations::runner().get_migrations() {
        next(&migration.to_string());
        let runner =
            embedded::migrations::runner().set_target(Target::Version(migration.version()));
        match runner.run_async(client).await {
            Ok(report) => applied.extend(report.applied_migrations().iter().map(|m| m.to_string())),
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK])
        .await
        .doing("releasing the migration lock")?;
    match failed {
        Some(error) => Err(Error::Migration(error)),
        None => Ok(applied),
    }
}
