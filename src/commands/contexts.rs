//! Which databases a command reads, each a context, by one rule for every command that takes
//! `--db` more than once (`watch`, `export`, `trace`, `calibrate`): each `--db` is a
//! `[[contexts]]` entry's name or `[NAME=]URL`; without `--db`, the config's `[[contexts]]`;
//! with none of those, DATABASE_URL and the environment. A context is named as given, else
//! after its database, names given twice told apart.

use anyhow::{Context as _, Result};

use gavel::config::Config;
use gavel::store::postgres::{Target, default_name, split_named, unique_names};

use super::{target, warn_all};

/// A database asked for, before it is named: `--db [NAME=]URL`, or a `[[contexts]]` entry.
pub struct Wanted {
    pub name: Option<String>,
    pub target: Target,
    pub read_only: bool,
    pub theme: Option<String>,
}

/// A database to read, under its context's name.
pub struct Named {
    pub name: String,
    pub target: Target,
}

impl Named {
    /// `context NAME (host:port/db)`, for messages.
    pub fn describe(&self) -> String {
        format!("context {} ({})", self.name, self.target.describe())
    }
}

/// The databases asked for: each `--db` (a `[[contexts]]` entry's name, or `[NAME=]URL`), else
/// the config's `[[contexts]]`; none leaves the choice to DATABASE_URL and the environment.
pub fn wanted(db: &[String], config: &Config) -> Result<Vec<Wanted>> {
    let configured = |name: &str| config.contexts.iter().find(|c| c.name.get_ref() == name);
    let mut wanted = Vec::new();
    if db.is_empty() {
        for context in &config.contexts {
            let name = context.name.get_ref();
            let target = Target::parse(&context.connection())
                .with_context(|| format!("[[contexts]] {name}"))?;
            warn_all(&target.warnings());
            wanted.push(Wanted {
                name: Some(name.clone()),
                target,
                read_only: context.read_only,
                theme: context.theme.clone(),
            });
        }
        return Ok(wanted);
    }
    for (at, raw) in db.iter().enumerate() {
        let one = match configured(raw.as_str()) {
            Some(context) => {
                let target = Target::parse(&context.connection())
                    .with_context(|| format!("[[contexts]] {raw}"))?;
                warn_all(&target.warnings());
                Wanted {
                    name: Some(raw.clone()),
                    target,
                    read_only: context.read_only,
                    theme: context.theme.clone(),
                }
            }
            None => {
                let (name, url) = split_named(raw);
                let which =
                    name.map_or_else(|| format!("--db #{}", at + 1), |n| format!("--db {n}"));
                let target = if db.len() == 1 && name.is_none() {
                    // As ever: warned of by `target`.
                    target(Some(url))?
                } else {
                    let target = Target::parse(url).context(which)?;
                    warn_all(&target.warnings());
                    target
                };
                Wanted {
                    name: name.map(str::to_owned),
                    target,
                    read_only: false,
                    theme: None,
                }
            }
        };
        wanted.push(one);
    }
    Ok(wanted)
}

/// The context names of `wanted`, in order: each as given, else its database's, made unique.
pub fn names(wanted: &[Wanted]) -> Vec<String> {
    unique_names(
        wanted
            .iter()
            .map(|w| w.name.clone().unwrap_or_else(|| default_name(&w.target)))
            .collect(),
    )
}

/// The databases a command reads ([`wanted`], DATABASE_URL and the environment when nothing
/// names one), each under its context's name.
pub fn databases(db: &[String], config: &Config) -> Result<Vec<Named>> {
    let mut wanted = wanted(db, config)?;
    if wanted.is_empty() {
        let target = target(None)?;
        wanted.push(Wanted {
            name: None,
            target,
            read_only: false,
            theme: None,
        });
    }
    let names = names(&wanted);
    Ok(wanted
        .into_iter()
        .zip(names)
        .map(|(w, name)| Named {
            name,
            target: w.target,
        })
        .collect())
}

/// What `read` gives of each database, in order. The first that fails fails the command, its
/// error naming its context when there are several: a part of the data, read as the whole,
/// would mislead.
pub async fn read_each<'a, T, Read>(
    databases: &'a [Named],
    mut read: impl FnMut(&'a Named) -> Read,
) -> Result<Vec<T>>
where
    Read: Future<Output = Result<T>>,
{
    let mut each = Vec::with_capacity(databases.len());
    for database in databases {
        let read = read(database).await;
        each.push(match databases.len() {
            1 => read?,
            _ => read.with_context(|| database.describe())?,
        });
    }
    Ok(each)
}

/// Where the command read, for messages: the one database, or each context.
pub fn describe(databases: &[Named]) -> String {
    match databases {
        [one] => one.target.describe(),
        several => several
            .iter()
            .map(Named::describe)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "[[contexts]]\nname = \"prod\"\ndb = \"host=p dbname=debates\"\n\
                          read_only = true\n\n[[contexts]]\nname = \"eu\"\ndb = \"host=e dbname=eu\"\n";

    fn names_of(db: &[&str], config: &Config) -> Vec<String> {
        let db: Vec<String> = db.iter().map(|s| s.to_string()).collect();
        databases(&db, config)
            .unwrap()
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    #[test]
    fn every_command_names_its_databases_by_one_rule() {
        let config = Config::parse(CONFIG, "config.toml").unwrap();
        assert_eq!(names_of(&[], &config), ["prod", "eu"], "the config's");
        assert_eq!(names_of(&["eu"], &config), ["eu"], "one by its name");
        assert_eq!(
            names_of(
                &[
                    "host=a dbname=debates",
                    "x=host=b dbname=debates",
                    "host=c dbname=debates"
                ],
                &config
            ),
            ["debates", "x", "debates-2"],
            "named as given, else after the database, made unique"
        );
        let wanted = wanted(&["prod".into()], &config).unwrap();
        assert!(
            wanted[0].read_only,
            "a configured context keeps its settings"
        );
        assert_eq!(wanted[0].target.dbname(), "debates");
    }

    #[test]
    fn a_bad_connection_string_of_several_names_its_place() {
        let config = Config::default();
        let db = ["host=a dbname=d".to_owned(), "b=port=notaport".to_owned()];
        let refused = databases(&db, &config).err().unwrap();
        assert!(
            format!("{refused:#}").starts_with("--db b: "),
            "{refused:#}"
        );
    }
}
