//! `gavel grant`: gives roles the viewer or the operator role, or takes both away.

use std::process::ExitCode;

use anyhow::Result;

use gavel::store::postgres::{OPERATOR_ROLE, VIEWER_ROLE, grant, revoke};

use super::{print, runtime, target, warn_all};

/// Grants `viewer` and `operator` their roles and revokes both from `revoked`.
pub fn run(
    db: Option<&str>,
    viewer: &[String],
    operator: &[String],
    revoked: &[String],
) -> Result<ExitCode> {
    let target = target(db)?;
    let warnings = runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        let warnings = grant(&client, viewer, operator).await?;
        revoke(&client, revoked).await?;
        anyhow::Ok(warnings)
    })?;
    warn_all(&warnings);
    let mut report = String::new();
    for role in viewer {
        report.push_str(&format!("{role}: {VIEWER_ROLE}\n"));
    }
    for role in operator {
        report.push_str(&format!("{role}: {OPERATOR_ROLE}\n"));
    }
    for role in revoked {
        report.push_str(&format!("{role}: neither role\n"));
    }
    report.push_str(&format!(
        "{}: roles {VIEWER_ROLE} and {OPERATOR_ROLE} ready\n",
        target.describe()
    ));
    print(&report)?;
    Ok(ExitCode::SUCCESS)
}
