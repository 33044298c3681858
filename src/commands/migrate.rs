//! `gavel migrate`: brings a database's schema up to date and sets up the two roles.

use std::process::ExitCode;

use anyhow::Result;

use gavel::store::postgres::{OPERATOR_ROLE, VIEWER_ROLE, ensure_roles, migrate};

use super::{print, runtime, target, warn_all};

/// Applies the migrations not applied yet; a role that may not create roles only warns.
pub fn run(db: Option<&str>) -> Result<ExitCode> {
    let target = target(db)?;
    runtime()?.block_on(async {
        let mut client = target.connect_driven().await?;
        let applied = migrate(&mut client).await?;
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
