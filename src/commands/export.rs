//! `gavel export`: the audit trail as JSON lines or CSV, to a file or standard output.

use std::io;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::Limits;
use gavel::store::postgres::audit_rows;
use gavel::text::inert;

use super::{runtime, target};

/// Exports the rows written between `since` and `until`.
pub fn run(
    db: Option<&str>,
    format: Format,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    output: Option<&Path>,
    limits: &Limits,
) -> Result<ExitCode> {
    let target = target(db)?;
    let rows = runtime()?.block_on(async {
        let mut client = target.connect_driven().await?;
        audit_rows(&mut client, since, until, limits).await
    })?;
    // Written as stored; what a reader flagged is said, as `calibrate` says it.
    for issue in rows.iter().flat_map(|row| row.change.issues()) {
        eprintln!("gavel: note: {}", inert(issue));
    }
    let rows: Vec<ExportRow> = rows.into_iter().filter_map(ExportRow::of).collect();
    let count = match output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            export::write(rows, format, file)?
        }
        None => export::write(rows, format, io::stdout().lock())?,
    };
    eprintln!("gavel: exported {count} rows from {}", target.describe());
    Ok(ExitCode::SUCCESS)
}
