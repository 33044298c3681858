//! `gavel grant`: gives roles the viewer, operator or publisher role, or takes them all away.

use std::process::ExitCode;

use anyhow::Result;

use gavel::store::postgres::{
    OPERATOR_ROLE, PUBLISHER_ROLE, VIEWER_ROLE, grant, grant_publishers, revoke,
};

use super::{print, runtime, target, warn_all};

/// Grants `viewer`, `operator` and `publisher` their roles and revokes every gavel role from
/// `revoked`.
pub fn run(
    db: Option<&str>,
    viewer: &[String],
    operator: &[String],
    publisher: &[String],
    revoked: &[String],
) -> Result<ExitCode> {
    let target = target(db)?;
    let warnings = runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        let mut warnings = grant(&client, viewer, operator).await?;
        if !publisher.is_empty() {
            warnings = grant_publishers(&client, publisher).await?;
        }
        revoke(&client, revoked).await?;
        anyhow::Ok(warnings)
    })?;
    warn_all(&warnings);
    let mut report = String::new();
    for (roles, role) in [
        (viewer, VIEWER_ROLE),
        (operator, OPERATOR_ROLE),
        (publisher, PUBLISHER_ROLE),
    ] {
        for name in roles {
            report.push_str(&format!("{name}: {role}\n"));
        }
    }
    for role in revoked {
        report.push_str(&format!("{role}: no gavel role\n"));
    }
    report.push_str(&format!(
        "{}: roles {VIEWER_ROLE}, {OPERATOR_ROLE} and {PUBLISHER_ROLE} ready\n",
        target.describe()
    ));
    print(&report)?;
    Ok(ExitCode::SUCCESS)
}
