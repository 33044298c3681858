//! The password file (`~/.pgpass`, `PGPASSFILE`, `passfile=`): lines of
//! `hostname:port:database:username:password`, `*` matching anything in the first four fields,
//! `\:` and `\\` escaping, `#` starting a comment; anything after the password's next unescaped
//! `:` is ignored. As libpq does, a file that the group or others may read is not used (the
//! caller is told why), and a missing file is no error.

use std::path::{Path, PathBuf};

/// Why a password file may not be used (libpq warns and goes on without it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unusable {
    #[error("password file \"{}\" is not a plain file", .0.display())]
    NotAFile(PathBuf),
    #[error(
        "password file \"{}\" has group or world access; permissions should be u=rw (0600) or \
         less",
        .0.display()
    )]
    Exposed(PathBuf),
    #[error("cannot read password file \"{}\": {cause}", file.display())]
    Unreadable {
        file: PathBuf,
        cause: std::io::Error,
    },
}

/// Where a password came from, for messages.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub password: String,
    pub file: PathBuf,
    pub line: usize,
}

impl std::fmt::Debug for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} (password ***)", self.file.display(), self.line)
    }
}

/// The connection a password is looked up for; a unix-socket or empty host is `localhost`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    pub host: &'a str,
    pub port: &'a str,
    pub database: &'a str,
    pub user: &'a str,
}

/// The first entry of `path` that matches, `Ok(None)` when none does or the file is absent,
/// `Err` when the file may not be used.
pub(crate) fn lookup(path: &Path, wanted: Wanted<'_>) -> Result<Option<Found>, Unusable> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(_) => return Ok(None),
    };
    if !metadata.is_file() {
        return Err(Unusable::NotAFile(path.to_owned()));
    }
    if std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o077 != 0 {
        return Err(Unusable::Exposed(path.to_owned()));
    }
    let text = std::fs::read_to_string(path).map_err(|cause| Unusable::Unreadable {
        file: path.to_owned(),
        cause,
    })?;
    Ok(find(&text, wanted).map(|(line, password)| Found {
        password,
        file: path.to_owned(),
        line,
    }))
}

/// The 1-based line and password of the first entry in `text` matching `wanted`.
pub(crate) fn find(text: &str, wanted: Wanted<'_>) -> Option<(usize, String)> {
    let host = if wanted.host.is_empty() || wanted.host.starts_with('/') {
        "localhost"
    } else {
        wanted.host
    };
    let port = if wanted.port.is_empty() {
        "5432"
    } else {
        wanted.port
    };
    let wanted = [host, port, wanted.database, wanted.user];
    text.lines().enumerate().find_map(|(index, line)| {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let fields = split(line)?;
        fields[..4]
            .iter()
            .zip(wanted)
            .all(|(field, wanted)| field.as_deref().is_none_or(|f| f == wanted))
            .then(|| (index + 1, fields[4].clone().unwrap_or_else(|| "*".into())))
    })
}

/// The five fields of a line, de-escaped; `None` for a lone `*` (a wildcard). A line with fewer
/// than five fields is no entry; as in libpq, the password ends at the next unescaped `:`.
fn split(line: &str) -> Option<[Option<String>; 5]> {
    let mut fields: Vec<(String, bool)> = vec![(String::new(), false)];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == ':' {
            if fields.len() == 5 {
                break;
            }
            fields.push((String::new(), false));
            continue;
        }
        let (field, escaped) = fields.last_mut()?;
        if c == '\\' {
            field.push(chars.next().unwrap_or('\\'));
            *escaped = true;
        } else {
            field.push(c);
        }
    }
    let fields: Vec<Option<String>> = fields
        .into_iter()
        .map(|(field, escaped)| (escaped || field != "*").then_some(field))
        .collect();
    fields.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "\
# production
db.example.com:5432:debates:gavel:s3cret
*:*:*:alice:a\\:b\\\\c:d
localhost:5433:*:*:local
weird\\:host:*:*:*:w
short:line
\\#hash:*:*:*:h
";

    fn wanted<'a>(host: &'a str, port: &'a str, database: &'a str, user: &'a str) -> Wanted<'a> {
        Wanted {
            host,
            port,
            database,
            user,
        }
    }

    #[test]
    fn entries_match_field_by_field_with_wildcards_and_escapes() {
        let cases = [
            (
                wanted("db.example.com", "", "debates", "gavel"),
                Some((2, "s3cret")),
            ),
            (wanted("db.example.com", "5433", "debates", "gavel"), None),
            (wanted("anywhere", "1", "x", "alice"), Some((3, "a:b\\c"))),
            (
                wanted("/var/run/postgresql", "5433", "x", "bob"),
                Some((4, "local")),
            ),
            (wanted("", "5433", "x", "bob"), Some((4, "local"))),
            (wanted("weird:host", "5432", "d", "u"), Some((5, "w"))),
            (wanted("short", "line", "d", "u"), None),
            (wanted("#hash", "5432", "d", "u"), Some((7, "h"))),
            (wanted("# production", "5432", "d", "u"), None),
        ];
        for (wanted, expected) in cases {
            let found = find(FILE, wanted);
            assert_eq!(
                found.as_ref().map(|(l, p)| (*l, p.as_str())),
                expected,
                "{wanted:?}"
            );
        }
    }

    #[test]
    fn a_file_others_may_read_is_refused_and_an_absent_one_is_no_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("gavel-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pgpass");
        std::fs::write(&path, "*:*:*:*:pw\n").unwrap();
        let any = wanted("h", "5432", "d", "u");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            lookup(&path, any).unwrap_err().to_string(),
            format!(
                "password file \"{}\" has group or world access; permissions should be u=rw \
                 (0600) or less",
                path.display()
            )
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            lookup(&path, any).unwrap(),
            Some(Found {
                password: "pw".into(),
                file: path.clone(),
                line: 1
            })
        );
        assert_eq!(lookup(&dir.join("absent"), any).unwrap(), None);
        assert!(matches!(
            lookup(&dir, any),
            Err(Unusable::NotAFile(file)) if file == dir
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn escape(field: &str) -> String {
        let escaped = field.replace('\\', "\\\\").replace(':', "\\:");
        // A line starting with `#` is a comment.
        match escaped.strip_prefix('#') {
            Some(rest) => format!("\\#{rest}"),
            None => escaped,
        }
    }

    proptest! {
        #[test]
        fn an_escaped_entry_matches_exactly_its_own_fields(
            fields in proptest::array::uniform4("[^\r\n]{1,10}"),
            password in "[^\r\n]{0,10}",
            other in "[^\r\n]{1,10}",
        ) {
            prop_assume!(!fields[0].starts_with('/') && fields[0] != "localhost");
            prop_assume!(!fields.iter().any(|f| f == "*"));
            let line: Vec<String> = fields.iter().map(|f| escape(f)).collect();
            let text = format!("{}:{}\n", line.join(":"), escape(&password));
            let own = wanted(&fields[0], &fields[1], &fields[2], &fields[3]);
            prop_assert_eq!(find(&text, own), Some((1, password.clone())));
            for i in 0..4 {
                let mut changed = fields.clone();
                prop_assume!(changed[i] != other);
                changed[i] = other.clone();
                let w = wanted(&changed[0], &changed[1], &changed[2], &changed[3]);
                prop_assert_eq!(find(&text, w), None);
                // A wildcard in that field matches any value.
                let mut wild = line.clone();
                wild[i] = "*".into();
                let text = format!("{}:{}\n", wild.join(":"), escape(&password));
                prop_assert_eq!(find(&text, w), Some((1, password.clone())));
            }
            // An unescaped colon ends the password; what follows is no part of it.
            let text = format!("{}:{}:{}\n", line.join(":"), escape(&password), escape(&other));
            prop_assert_eq!(find(&text, own), Some((1, password.clone())));
        }
    }
}
