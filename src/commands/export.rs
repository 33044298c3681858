//! `gavel export`: the audit trail as JSON lines or CSV, to a file or standard output; or whole
//! debates as recordings in the fixture format.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};

use gavel::audit::{ExportRow, Format, export};
use gavel::domain::{Change, Debates, Limits};
use gavel::simulate::recording;
use gavel::store::postgres::{audit_rows, history};
use gavel::text::inert;

use super::contexts::{Named, describe, read_each};
use super::runtime;

/// Exports the rows written between `since` and `until` in each of `databases`, context by
/// context; rows of several databases each name their context.
pub fn run(
    databases: &[Named],
    format: Format,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    output: Option<&Path>,
    limits: &Limits,
) -> Result<ExitCode> {
    let read = runtime()?.block_on(read_each(databases, |database| async move {
        let mut client = database.target.connect_driven().await?;
        Ok(audit_rows(&mut client, since, until, limits).await?)
    }))?;
    let several = databases.len() > 1;
    let mut rows = Vec::new();
    let mut counts = Vec::with_capacity(databases.len());
    for (database, stored) in databases.iter().zip(read) {
        // Written as stored; what a reader flagged is said, as `calibrate` says it.
        for issue in stored.iter().flat_map(|row| row.change.issues()) {
            match several {
                true => eprintln!("gavel: note: context {}: {}", database.name, inert(issue)),
                false => eprintln!("gavel: note: {}", inert(issue)),
            }
        }
        let before = rows.len();
        rows.extend(
            stored
                .into_iter()
                .filter_map(ExportRow::of)
                .map(|row| ExportRow {
                    context: several.then(|| database.name.clone()),
                    ..row
                }),
        );
        counts.push(format!(
            "{} from {}",
            rows.len() - before,
            database.describe()
        ));
    }
    let count = match output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            export::write(rows, format, file)?
        }
        None => export::write(rows, format, io::stdout().lock())?,
    };
    match several {
        true => eprintln!("gavel: exported {count} rows: {}", counts.join(", ")),
        false => eprintln!("gavel: exported {count} rows from {}", describe(databases)),
    }
    Ok(ExitCode::SUCCESS)
}

/// One debate found to write: its context (when several databases were read) and id, and
/// the rows read of it.
struct Found<'a> {
    context: Option<&'a str>,
    id: &'a str,
    debates: Debates,
}

/// Writes each debate of `ids` as a recording, from every one of `databases` that holds it: one
/// to `output` (a file, or a folder to put `<id>.jsonl` in) or standard output; several to the
/// folder `output`, one `<id>.jsonl` each (in a subfolder per context when several databases
/// are read). A debate none holds fails the command before anything is written. What a
/// recording leaves out is said; a recording `gavel check` would refuse is written, its
/// problems said, and the command fails.
pub fn recordings(
    databases: &[Named],
    ids: &[String],
    output: Option<&Path>,
    limits: &Limits,
) -> Result<ExitCode> {
    if ids.is_empty() {
        bail!("--format recording writes the debates named with --debate ID (one or more)");
    }
    if output.is_none() && ids.len() > 1 {
        bail!("several recordings go to a folder: add --output DIR");
    }
    let read = runtime()?.block_on(read_each(databases, |database| async move {
        let client = database.target.connect_driven().await?;
        let mut debates = Vec::with_capacity(ids.len());
        for id in ids {
            debates.push(history(&client, id, limits).await?);
        }
        anyhow::Ok(debates)
    }))?;
    let several = databases.len() > 1;
    let mut found = Vec::new();
    let mut read: Vec<_> = read.into_iter().map(Vec::into_iter).collect();
    for id in ids {
        let before = found.len();
        for (database, rows) in databases.iter().zip(&mut read) {
            let rows = rows.next().unwrap_or_default();
            if rows.iter().any(|row| matches!(row, Change::Session(_))) {
                found.push(Found {
                    context: several.then_some(database.name.as_str()),
                    id,
                    debates: rows.into_iter().collect(),
                });
            }
        }
        if found.len() == before {
            bail!(
                "no debate {:?} in debate_sessions of {}",
                inert(id),
                describe(databases)
            );
        }
    }
    let folder = match output {
        Some(path) if found.len() > 1 || path.is_dir() => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("cannot create the folder {}", path.display()))?;
            Some(path)
        }
        None if found.len() > 1 => bail!(
            "debate {:?} is in {} of the databases, a recording each: add --output DIR",
            inert(ids[0].as_str()),
            found.len()
        ),
        _ => None,
    };
    let mut names: HashMap<Option<&str>, FileNames> = HashMap::new();
    let mut refused = false;
    for Found {
        context,
        id,
        debates,
    } in &found
    {
        let Some(debate) = debates.get_by_id(id) else {
            bail!("no debate {:?} among its own rows", inert(id));
        };
        let path = match folder {
            Some(folder) => Some(in_folder(folder, *context, &mut names, id)?),
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
        let of = context.map_or_else(String::new, |c| format!(" of context {c}"));
        if let Some(problems) = &written.problems {
            refused = true;
            eprintln!(
                "gavel: the recording of {:?}{of} breaks the fixture format's rules, as its rows \
                 do; `gavel check` will refuse it:\n{}",
                inert(id),
                inert(&problems.to_string())
            );
        }
        eprintln!(
            "gavel: wrote debate {:?}{of} to {}",
            inert(id),
            inert(&source)
        );
    }
    Ok(if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Where the recording of debate `id` of `context` goes in `folder`: `<id>.jsonl` there, or in
/// its context's subfolder (made when missing), named apart from the others there.
fn in_folder<'a>(
    folder: &Path,
    context: Option<&'a str>,
    names: &mut HashMap<Option<&'a str>, FileNames>,
    id: &str,
) -> Result<PathBuf> {
    let folder = match context {
        Some(context) => {
            let sub = folder.join(context);
            std::fs::create_dir_all(&sub)
                .with_context(|| format!("cannot create the folder {}", sub.display()))?;
            sub
        }
        None => folder.to_owned(),
    };
    Ok(folder.join(names.entry(context).or_default().name(id)))
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
