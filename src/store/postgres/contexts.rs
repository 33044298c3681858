//! Several databases in one console: each a context, named. `--db NAME=URL` names one (a name
//! is a word that is not a connection keyword, so `host=h dbname=d` stays a connection string);
//! unnamed, a context takes its database's name, and names given twice are told apart.

use super::connect::Target;
use super::libpq::KEYWORDS;

/// The longest context name, in characters (it is a column of the debates list).
pub const MAX_CONTEXT_NAME: usize = 24;

/// `NAME=URL` split into its name and its connection string; a string that names no context
/// (a URL, a connection string, `service=prod`: its first word a connection keyword) is all
/// connection string.
pub fn split_named(raw: &str) -> (Option<&str>, &str) {
    match raw.split_once('=') {
        Some((name, rest)) if check_name(name).is_ok() && !KEYWORDS.contains(&name) => {
            (Some(name), rest)
        }
        _ => (None, raw),
    }
}

/// Whether `name` may name a context: letters, digits, `-`, `_` and `.`, starting with a
/// letter, at most [`MAX_CONTEXT_NAME`] characters, and not `all` (`:ctx all` merges them).
pub fn check_name(name: &str) -> Result<(), String> {
    let well_formed = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !well_formed {
        return Err(format!(
            "context name {:?}: letters, digits, '-', '_' and '.', starting with a letter",
            crate::text::inert(name)
        ));
    }
    if name.len() > MAX_CONTEXT_NAME {
        return Err(format!(
            "context name {name:?}: at most {MAX_CONTEXT_NAME} characters"
        ));
    }
    if name == "all" {
        return Err("context name \"all\": `:ctx all` shows every context".to_owned());
    }
    Ok(())
}

/// The name of a context with no name given: its database's, made a valid name (other
/// characters become `_`; cut to [`MAX_CONTEXT_NAME`]; `db` when nothing is left).
pub fn default_name(target: &Target) -> String {
    let mut name: String = target
        .dbname()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_CONTEXT_NAME)
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "db");
        name.truncate(MAX_CONTEXT_NAME);
    }
    if name == "all" {
        name = "all-db".to_owned();
    }
    name
}

/// `names` made unique: the second `x` becomes `x-2`, the third `x-3` (skipping any taken),
/// each still within [`MAX_CONTEXT_NAME`].
pub fn unique_names(names: Vec<String>) -> Vec<String> {
    let mut taken: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let mut candidate = name.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            let suffix = format!("-{n}");
            let mut stem = name.clone();
            while stem.len() + suffix.len() > MAX_CONTEXT_NAME {
                stem.pop();
            }
            candidate = format!("{stem}{suffix}");
            n += 1;
        }
        taken.push(candidate);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_name_before_a_url_or_a_connection_string_names_a_context() {
        assert_eq!(
            split_named("prod=postgresql://h/db"),
            (Some("prod"), "postgresql://h/db")
        );
        assert_eq!(
            split_named("b=host=h dbname=d"),
            (Some("b"), "host=h dbname=d")
        );
        assert_eq!(
            split_named("staging=service=st"),
            (Some("staging"), "service=st")
        );
        assert_eq!(split_named("host=h dbname=d"), (None, "host=h dbname=d"));
        assert_eq!(split_named("service=prod"), (None, "service=prod"));
        assert_eq!(
            split_named("postgresql://h/db?a=b"),
            (None, "postgresql://h/db?a=b")
        );
        assert_eq!(
            split_named("9x=postgresql://h"),
            (None, "9x=postgresql://h")
        );
        assert_eq!(
            split_named("all=postgresql://h"),
            (None, "all=postgresql://h")
        );
        assert_eq!(split_named(""), (None, ""));
    }

    #[test]
    fn names_given_twice_are_told_apart() {
        let names = |v: &[&str]| unique_names(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(names(&["a", "b"]), ["a", "b"]);
        assert_eq!(names(&["db", "db", "db"]), ["db", "db-2", "db-3"]);
        assert_eq!(names(&["db", "db-2", "db"]), ["db", "db-2", "db-3"]);
        let long = "x".repeat(MAX_CONTEXT_NAME);
        let made = unique_names(vec![long.clone(), long]);
        assert_eq!(made[1].len(), MAX_CONTEXT_NAME);
        assert!(made[1].ends_with("-2"));
    }

    #[test]
    fn a_database_name_becomes_a_context_name() {
        let named = |raw: &str| default_name(&Target::exact(raw).unwrap());
        assert_eq!(named("host=h user=u dbname=debates"), "debates");
        assert_eq!(named("host=h user=u dbname='my db'"), "my_db");
        assert_eq!(named("host=h user=u dbname=2026"), "db2026");
        assert_eq!(named("host=h user=u dbname=all"), "all-db");
    }

    proptest! {
        /// Any string splits without a panic; a name split off is a valid name and not a
        /// keyword, and name and rest put back together are the string.
        #[test]
        fn splitting_keeps_the_whole_string(raw in "\\PC{0,40}") {
            match split_named(&raw) {
                (Some(name), rest) => {
                    prop_assert!(check_name(name).is_ok());
                    prop_assert!(!KEYWORDS.contains(&name));
                    prop_assert_eq!(format!("{name}={rest}"), raw);
                }
                (None, rest) => prop_assert_eq!(rest, raw.as_str()),
            }
        }

        /// `NAME=` before any connection string names the context NAME and leaves the string.
        #[test]
        fn a_valid_name_is_split_off(name in "[a-z][a-z0-9_.-]{0,20}", rest in "\\PC{0,40}") {
            prop_assume!(!KEYWORDS.contains(&name.as_str()) && name != "all");
            let raw = format!("{name}={rest}");
            prop_assert_eq!(split_named(&raw), (Some(name.as_str()), rest.as_str()));
        }

        /// Made unique, names are all different and each within the longest name.
        #[test]
        fn unique_names_differ(names in proptest::collection::vec("[a-c]{1,3}", 0..12)) {
            let made = unique_names(names.clone());
            prop_assert_eq!(made.len(), names.len());
            for (i, a) in made.iter().enumerate() {
                prop_assert!(a.len() <= MAX_CONTEXT_NAME);
                prop_assert!(!made[..i].contains(a));
            }
        }
    }
}
