//! `gavel migrate`: brings a database's schema up to date and sets up the two roles.

use std::process::ExitCode;

use anyhow::Result;

use gavel::progress::Stage;
use gavel::store::postgres::{OPERATOR_ROLE, VIEWER_ROLE, ensure_roles, migrate_each, migrations};

use super::{print, runtime, stop_on_interrupt, target, warn_all};

/// Applies the migrations not applied yet, each counted on stderr as it starts (one on a large
/// table can take minutes); a role that may not create roles only warns.
pub fn run(db: Option<&str>) -> Result<ExitCode> {
    stop_on_interrupt()?;
    let target = target(db)?;
    runtime()?.block_on(async {
        let mut client = target.connect_driven().await?;
        let stage = Stage::count("migrating", migrations().len() as u64, "migrations");
        let mut started = false;
        let applied = migrate_each(&mut client, |name| {
            if std::mem::replace(&mut started, true) {
                stage.inc(1);
            }
            stage.say(name.to_owned());
        })
        .await?;
        drop(stage);
        if applied.is_empty() {
            print(&format!("{}: up to date\n", target.describe()))?;
        } else {
            print(&format!(
                "{}: applied {}\n",
                target.describe(),
                applied.join(", ")
            ))?;
        }
        match ensure_roles(&client).await {
            Ok(warnings) => {
                warn_all(&warnings);
                print(&format!("roles {VIEWER_ROLE} and {OPERATOR_ROLE} ready\n"))?;
            }
            Err(e) => eprintln!(
                "gavel: warning: roles not set up ({e:#}); run `gavel grant` as a role \
                 that may create roles"
            ),
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
