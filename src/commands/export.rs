//! `gavel export`: the audit trail as JSON lines or CSV, to a file or standard output; or whole
//! debates as recordings in the fixture format.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::{Change, Debates, Limits};
use gavel::simulate::recording;
use gavel::store::postgres::{audit_rows, history};
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

/// Writes each debate of `ids` from the database as a recording: one to `output` (a file, or
/// a folder to put `<id>.jsonl` in) or standard output; several to the folder `output`, one
/// `<id>.jsonl` each. What a recording leaves out is said; a recording `gavel check` would
/// refuse is written, its problems said, and the command fails.
pub fn recordings(
    db: Option<&str>,
    ids: &[String],
    output: Option<&Path>,
    limits: &Limits,
) -> Result<ExitCode> {
    if ids.is_empty() {
        bail!("--format recording writes the debates named with --debate ID (one or more)");
    }
    let folder = match output {
        Some(path) if ids.len() > 1 || path.is_dir() => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("cannot create the folder {}", path.display()))?;
            Some(path)
        }
        None if ids.len() > 1 => {
            bail!("several recordings go to a folder: add --output DIR")
        }
        _ => None,
    };
    let target = target(db)?;
    let debates = runtime()?.block_on(async {
        let client = target.connect_driven().await?;
        let mut debates = Vec::new();
        for id in ids {
            let rows = history(&client, id, limits).await?;
            debates.push((id, rows));
        }
        anyhow::Ok(debates)
    })?;
    let mut names = FileNames::default();
    let mut refused = false;
    for (id, rows) in debates {
        let has_session = rows.iter().any(|row| matches!(row, Change::Session(_)));
        let debates: Debates = rows.into_iter().collect();
        let Some(debate) = debates.get_by_id(id).filter(|_| has_session) else {
            bail!(
                "no debate {:?} in debate_sessions of {}",
                inert(id),
                target.describe()
            );
        };
        let path = match folder {
            Some(folder) => Some(folder.join(names.name(id))),
            None => output.map(Path::to_owned),
        };
        let source = path
            .as_ref()
            .map_or_else(|| "<stdout>".to_owned(), |p| p.display().to_string());
        let written = recording(debate, &source)?;
        for note in &written.notes {
            eprintln!("gavel: note: {}", inert(note));
        }
        match &path {
            Some(path) => std::fs::write(path, &written.text)
                .with_context(|| format!("cannot write {}", path.display()))?,
            None => io::stdout().lock().write_all(written.text.as_bytes())?,
        }
        if let Some(problems) = &written.problems {
            refused = true;
            eprintln!(
                "gavel: the recording of {:?} breaks the fixture format's rules, as its rows \
                 do; `gavel check` will refuse it:\n{}",
                inert(id),
                inert(&problems.to_string())
            );
        }
        eprintln!("gavel: wrote debate {:?} to {}", inert(id), inert(&source));
    }
    Ok(if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// File names for debates' recordings in one folder: the id with every character but ASCII
/// letters, digits, `-`, `_` and `.` made `_` (and a leading `.` too, which would hide it),
/// cut to 80 characters, numbered when two would be the same (in any case).
#[derive(Default)]
struct FileNames {
    taken: HashSet<String>,
}

impl FileNames {
    fn name(&mut self, id: &str) -> String {
        let stem: String = id
            .chars()
            .enumerate()
            .map(|(at, c)| match c {
                '.' if at == 0 => '_',
                c if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') => c,
                _ => '_',
            })
            .take(80)
            .collect();
        let stem = if stem.is_empty() {
            "_".to_owned()
        } else {
            stem
        };
        let mut name = format!("{stem}.jsonl");
        let mut n = 1;
        while !self.taken.insert(name.to_lowercase()) {
            n += 1;
            name = format!("{stem}-{n}.jsonl");
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::FileNames;

    #[test]
    fn file_names_are_safe_and_never_the_same() {
        let mut names = FileNames::default();
        assert_eq!(names.name("salt-r3"), "salt-r3.jsonl");
        assert_eq!(names.name("../etc/passwd"), "_._etc_passwd.jsonl");
        assert_eq!(names.name("a/b"), "a_b.jsonl");
        assert_eq!(names.name("a:b"), "a_b-2.jsonl");
        assert_eq!(names.name("A_B"), "A_B-3.jsonl");
        assert_eq!(names.name(""), "_.jsonl");
        assert_eq!(names.name("\u{1b}[2J"), "__2J.jsonl");
        assert_eq!(names.name(&"x".repeat(300)).len(), 86);
    }
}
