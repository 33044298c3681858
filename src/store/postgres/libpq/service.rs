//! Connection services (`service=name`, `PGSERVICE`): `[name]` sections of `key=value` lines in
//! the user's file (`PGSERVICEFILE`, else `~/.pg_service.conf`), else the system's
//! (`PGSYSCONFDIR/pg_service.conf`, else `/etc/postgresql-common/pg_service.conf`), as libpq
//! reads them. Errors name the file and line.

use std::path::{Path, PathBuf};

use super::conninfo::KEYWORDS;

/// Why a service's settings cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ServiceError {
    #[error("definition of service \"{0}\" not found")]
    NotFound(String),
    #[error("syntax error in {0}")]
    Syntax(Line),
    #[error("nested service specifications not supported in {0}")]
    Nested(Line),
    #[error("invalid connection option \"{key}\" in {at}")]
    UnknownOption { key: String, at: Line },
}

/// A line of a service file, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub file: PathBuf,
    pub line: usize,
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "service file \"{}\", line {}",
            self.file.display(),
            self.line
        )
    }
}

/// One setting of a service, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Setting {
    pub key: String,
    pub value: String,
    pub file: PathBuf,
    pub line: usize,
}

/// The settings of service `name` from the first of `files` that defines it (absent files are
/// skipped).
pub(crate) fn lookup(name: &str, files: &[PathBuf]) -> Result<Vec<Setting>, ServiceError> {
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(settings) = section(&text, name, file)? {
            return Ok(settings);
        }
    }
    Err(ServiceError::NotFound(name.to_owned()))
}

/// The settings of section `name` in `text`, `None` when it has no such section. Lines of other
/// sections are not looked at, as in libpq.
pub(super) fn section(
    text: &str,
    name: &str,
    file: &Path,
) -> Result<Option<Vec<Setting>>, ServiceError> {
    let mut settings: Option<Vec<Setting>> = None;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || Line {
            file: file.to_owned(),
            line: index + 1,
        };
        if let Some(header) = line.strip_prefix('[') {
            if settings.is_some() {
                break;
            }
            if header.strip_suffix(']') == Some(name) {
                settings = Some(Vec::new());
            }
            continue;
        }
        let Some(found) = settings.as_mut() else {
            continue;
        };
        let Some((key, value)) = line.split_once('=') else {
            return Err(ServiceError::Syntax(at()));
        };
        let key = key.trim();
        if key == "service" {
            return Err(ServiceError::Nested(at()));
        }
        if !KEYWORDS.contains(&key) {
            return Err(ServiceError::UnknownOption {
                key: key.to_owned(),
                at: at(),
            });
        }
        found.push(Setting {
            key: key.to_owned(),
            value: value.trim().to_owned(),
            file: file.to_owned(),
            line: index + 1,
        });
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "\
# services
[other]
this line is not looked at

[prod]
host=db.example.com
 port = 5433
dbname=debates

[staging]
host=staging
";

    #[test]
    fn a_section_is_read_up_to_the_next_one() {
        let file = Path::new("svc.conf");
        let prod = section(FILE, "prod", file).unwrap().unwrap();
        let read: Vec<(&str, &str, usize)> = prod
            .iter()
            .map(|s| (s.key.as_str(), s.value.as_str(), s.line))
            .collect();
        assert_eq!(
            read,
            [
                ("host", "db.example.com", 6),
                ("port", "5433", 7),
                ("dbname", "debates", 8)
            ]
        );
        assert_eq!(section(FILE, "absent", file).unwrap(), None);
        let error = |text| section(text, "s", file).unwrap_err().to_string();
        assert_eq!(
            error("[s]\nhost db\n"),
            "syntax error in service file \"svc.conf\", line 2"
        );
        assert_eq!(
            error("[s]\nsslrootcrt=x\n"),
            "invalid connection option \"sslrootcrt\" in service file \"svc.conf\", line 2"
        );
        assert_eq!(
            error("[s]\nservice=t\n"),
            "nested service specifications not supported in service file \"svc.conf\", line 2"
        );
    }

    #[test]
    fn the_first_file_defining_the_service_wins() {
        let dir = std::env::temp_dir().join(format!("gavel-service-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (user, system) = (dir.join("user.conf"), dir.join("system.conf"));
        std::fs::write(&user, "[mine]\nhost=u\n").unwrap();
        std::fs::write(&system, "[mine]\nhost=s\n[prod]\nhost=p\n").unwrap();
        let files = [dir.join("absent.conf"), user.clone(), system.clone()];
        assert_eq!(lookup("mine", &files).unwrap()[0].file, user);
        assert_eq!(lookup("prod", &files).unwrap()[0].value, "p");
        assert_eq!(
            lookup("nope", &files).unwrap_err(),
            ServiceError::NotFound("nope".into())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    proptest! {
        #[test]
        fn written_sections_read_back(
            sections in proptest::collection::btree_map(
                "[a-z][a-z0-9_]{0,8}",
                proptest::collection::vec(
                    (proptest::sample::select(KEYWORDS).prop_filter("not nested", |k| *k != "service"),
                     "[^\\s=#\\[][^\r\n]{0,10}[^\\s]|[^\\s=#\\[]"),
                    0..5,
                ),
                1..4,
            ),
        ) {
            let mut text = String::new();
            for (name, settings) in &sections {
                text.push_str(&format!("# {name}\n[{name}]\n"));
                for (key, value) in settings {
                    text.push_str(&format!("{key}={value}\n"));
                }
                text.push('\n');
            }
            for (name, settings) in &sections {
                let read = section(&text, name, Path::new("f")).unwrap().unwrap();
                let read: Vec<(&str, &str)> = read.iter().map(|s| (s.key.as_str(), s.value.as_str())).collect();
                let written: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
                prop_assert_eq!(read, written);
            }
        }
    }
}
