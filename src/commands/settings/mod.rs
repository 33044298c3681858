//! `gavel settings`: the controller settings' history in a database
//! (`gavel_controller_settings`): what is in force per debate type and a version or the history
//! ([`read`]), and new versions: publish, promote, roll back ([`write`]), each checked here
//! before anything is written (and checked again by the database, which stamps who and when).

mod read;
mod write;

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use gavel::cli::SettingsCommand;
use gavel::config::Config;
use gavel::domain::SettingsVersion;
use gavel::store::postgres::{Publication, Target, debate_types};
use tokio_postgres::Client;

use super::{print, runtime, target};

/// Runs `command` against its database.
pub fn run(command: SettingsCommand, config: &Config) -> Result<ExitCode> {
    match command {
        SettingsCommand::List { db, json } => with_client(db.db.as_deref(), |client, _| {
            read::list(client, config, json)
        }),
        SettingsCommand::Show {
            version,
            debate_type,
            db,
            json,
        } => with_client(db.db.as_deref(), |client, target| {
            read::show(client, target, version, debate_type.as_deref(), json)
        }),
        SettingsCommand::Publish(publish) => {
            let asked = write::Asked::check(
                &publish.debate_type,
                publish.reason.as_deref(),
                publish.share.as_deref(),
                publish
                    .from_calibration
                    .as_deref()
                    .zip(publish.pick.as_deref()),
            )?;
            with_client(publish.db.db.as_deref(), |client, _| {
                write::publish_values(client, config, &asked, &publish.values, publish.json)
            })
        }
        SettingsCommand::Promote(change) => {
            let reason = write::reason(change.reason.as_deref())?;
            let promote = Publication::Promote {
                version: change.version,
            };
            with_client(change.db.db.as_deref(), |client, target| {
                write::change(client, target, change.version, promote, reason, change.json)
            })
        }
        SettingsCommand::Rollback(change) => {
            let reason = write::reason(change.reason.as_deref())?;
            let rollback = Publication::Rollback {
                version: change.version,
            };
            with_client(change.db.db.as_deref(), |client, target| {
                write::change(
                    client,
                    target,
                    change.version,
                    rollback,
                    reason,
                    change.json,
                )
            })
        }
    }
}

/// Connects to the database `db` names (or the environment's) and runs `body` with the
/// connection and its target.
fn with_client<F>(db: Option<&str>, body: impl FnOnce(Client, Target) -> F) -> Result<ExitCode>
where
    F: Future<Output = Result<()>>,
{
    let target = target(db)?;
    runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        body(client, target).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// A version as `--json` prints it: its fields and what it did.
#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    version: &'a SettingsVersion,
    what: String,
}

impl Shown<'_> {
    fn of(version: &SettingsVersion) -> Shown<'_> {
        Shown {
            version,
            what: version.what(),
        }
    }
}

/// Prints `value` as pretty JSON.
fn print_json(value: &impl Serialize) -> Result<()> {
    print(&format!("{}\n", serde_json::to_string_pretty(value)?))?;
    Ok(())
}

/// The debate types a version may be published for: those that ran or the history names, the
/// configuration's `[controller.max_rounds_by_type]` ones, and `standard`; in order.
async fn known_types(client: &Client, config: &Config) -> Result<Vec<String>> {
    let mut known = debate_types(client).await?;
    known.extend(config.controller.max_rounds_by_type.keys().cloned());
    known.push("standard".to_owned());
    known.sort();
    known.dedup();
    Ok(known)
}
