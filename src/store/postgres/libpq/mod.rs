//! libpq's connection conventions, so that gavel is reached the way psql is: a connection string
//! (URL or key=value) whose values win, then the service it names (`service=`, `PGSERVICE`),
//! then the PG* environment, then defaults. Every value remembers where it came from, so an
//! error names the parameter and its source. The password file is looked up per host when the
//! connection is made (see `super::connect`).

mod conninfo;
pub(super) mod pgpass;
mod service;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use super::error::{Error, Result};

pub(super) use conninfo::KEYWORDS;

/// The environment values are read from (the process's, or a test's).
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Each keyword's environment variable, as libpq names them.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("host", "PGHOST"),
    ("hostaddr", "PGHOSTADDR"),
    ("port", "PGPORT"),
    ("dbname", "PGDATABASE"),
    ("user", "PGUSER"),
    ("password", "PGPASSWORD"),
    ("passfile", "PGPASSFILE"),
    ("channel_binding", "PGCHANNELBINDING"),
    ("options", "PGOPTIONS"),
    ("application_name", "PGAPPNAME"),
    ("sslmode", "PGSSLMODE"),
    ("sslnegotiation", "PGSSLNEGOTIATION"),
    ("requiressl", "PGREQUIRESSL"),
    ("sslcompression", "PGSSLCOMPRESSION"),
    ("sslcert", "PGSSLCERT"),
    ("sslkey", "PGSSLKEY"),
    ("sslcertmode", "PGSSLCERTMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("sslcrl", "PGSSLCRL"),
    ("sslcrldir", "PGSSLCRLDIR"),
    ("sslsni", "PGSSLSNI"),
    ("requirepeer", "PGREQUIREPEER"),
    ("require_auth", "PGREQUIREAUTH"),
    ("ssl_min_protocol_version", "PGSSLMINPROTOCOLVERSION"),
    ("ssl_max_protocol_version", "PGSSLMAXPROTOCOLVERSION"),
    ("gssencmode", "PGGSSENCMODE"),
    ("krbsrvname", "PGKRBSRVNAME"),
    ("gsslib", "PGGSSLIB"),
    ("gssdelegation", "PGGSSDELEGATION"),
    ("connect_timeout", "PGCONNECT_TIMEOUT"),
    ("client_encoding", "PGCLIENTENCODING"),
    ("target_session_attrs", "PGTARGETSESSIONATTRS"),
    ("load_balance_hosts", "PGLOADBALANCEHOSTS"),
];

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Given,
    Service { file: PathBuf, line: usize },
    Env(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Given => write!(f, "in the connection string"),
            Origin::Service { file, line } => {
                write!(f, "in service file \"{}\", line {line}", file.display())
            }
            Origin::Env(var) => write!(f, "from {var}"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    pub value: String,
    pub origin: Origin,
}

/// The merged parameters of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Params {
    values: BTreeMap<&'static str, Param>,
    home: Option<PathBuf>,
}

impl Params {
    /// `conninfo` merged with the service it names and `env`, as libpq merges them. Empty
    /// values count as absent. `env` is all there is: without `HOME` in it there is no home
    /// directory (no `~/.pg_service.conf`, `~/.pgpass` or `~/.postgresql/`).
    pub(super) fn resolve(conninfo: &str, env: Env<'_>) -> Result<Params> {
        let mut values = BTreeMap::new();
        let pairs = conninfo::parse(conninfo)
            .map_err(|e| Error::Setting(format!("cannot read the connection string: {e}")))?;
        for (key, value) in pairs {
            set(&mut values, &key, value, Origin::Given, true);
        }
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let service = values
            .get("service")
            .map(|p: &Param| p.value.clone())
            .or_else(|| var("PGSERVICE"));
        if let Some(name) = service {
            let files = [
                var("PGSERVICEFILE")
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".pg_service.conf"))),
                Some(
                    PathBuf::from(
                        var("PGSYSCONFDIR").unwrap_or_else(|| "/etc/postgresql-common".into()),
                    )
                    .join("pg_service.conf"),
                ),
            ];
            let files: Vec<PathBuf> = files.into_iter().flatten().collect();
            for setting in service::lookup(&name, &files)
                .map_err(|e| Error::Setting(format!("service: {e}")))?
            {
                let origin = Origin::Service {
                    file: setting.file,
                    line: setting.line,
                };
                set(&mut values, &setting.key, setting.value, origin, false);
            }
        }
        for (key, name) in ENVIRONMENT {
            if let Some(value) = var(name) {
                set(&mut values, key, value, Origin::Env(name), false);
            }
        }
        // The old spelling: requiressl=1 means sslmode=require unless sslmode is given.
        if let Some(old) = values.get("requiressl").cloned()
            && old.value == "1"
            && !values.contains_key("sslmode")
        {
            set(&mut values, "sslmode", "require".into(), old.origin, false);
        }
        Ok(Params { values, home })
    }

    /// The value of `key`, if any.
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|p| p.value.as_str())
    }

    /// The value of `key` and where it came from, if any.
    #[cfg(test)]
    pub(crate) fn param(&self, key: &str) -> Option<&Param> {
        self.values.get(key)
    }

    /// The user's home directory (`HOME`), where `~/.pgpass` and `~/.postgresql/` are.
    pub(super) fn home(&self) -> Option<&PathBuf> {
        self.home.as_ref()
    }

    /// `key` read by `read`, which returns `None` for a value it does not understand; the error
    /// names the parameter, its value, where it came from and what `expected` is.
    pub(super) fn typed<T>(
        &self,
        key: &str,
        expected: &str,
        read: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>> {
        let Some(param) = self.values.get(key) else {
            return Ok(None);
        };
        read(&param.value).map(Some).ok_or_else(|| {
            Error::Setting(format!(
                "invalid {key} value \"{}\" {}: expected {expected}",
                param.value, param.origin
            ))
        })
    }

    /// `key` as libpq's booleans are written, `0` or `1`.
    pub(super) fn flag(&self, key: &str) -> Result<Option<bool>> {
        self.either(key, "0", "1")
    }

    /// `key` as one of two words: `off` (false) or `on` (true).
    pub(super) fn either(&self, key: &str, off: &str, on: &str) -> Result<Option<bool>> {
        self.typed(key, &format!("{off} or {on}"), |v| match v {
            v if v == off => Some(false),
            v if v == on => Some(true),
            _ => None,
        })
    }

    /// An error about `key`, naming where its value came from.
    pub(super) fn refuse(&self, key: &str, why: &str) -> Error {
        Error::Setting(match self.values.get(key) {
            Some(param) => format!("{key} {}: {why}", param.origin),
            None => format!("{key}: {why}"),
        })
    }
}

fn set(
    values: &mut BTreeMap<&'static str, Param>,
    key: &str,
    value: String,
    origin: Origin,
    overwrite: bool,
) {
    let Some(key) = KEYWORDS.iter().find(|k| **k == key) else {
        return;
    };
    if value.is_empty() || (!overwrite && values.contains_key(key)) {
        return;
    }
    values.insert(key, Param { value, origin });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_string_wins_then_the_service_then_the_environment() {
        let dir = std::env::temp_dir().join(format!("gavel-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("services.conf");
        std::fs::write(
            &file,
            "[prod]\nhost=svc-host\nport=6000\nsslmode=verify-full\n",
        )
        .unwrap();
        let vars = [
            ("PGSERVICEFILE", file.to_str().unwrap()),
            ("PGSERVICE", "prod"),
            ("PGHOST", "env-host"),
            ("PGPORT", "7000"),
            ("PGUSER", "env-user"),
            ("PGPASSWORD", "env-secret"),
            ("PGAPPNAME", ""),
            ("HOME", "/home/op"),
        ];
        let env = env(&vars);
        let params = Params::resolve("host=given dbname=d", &env).unwrap();
        let got = |key| params.param(key).cloned().map(|p| (p.value, p.origin));
        assert_eq!(got("host"), Some(("given".into(), Origin::Given)));
        let at = |line| Origin::Service {
            file: file.clone(),
            line,
        };
        assert_eq!(got("port"), Some(("6000".into(), at(3))));
        assert_eq!(got("sslmode"), Some(("verify-full".into(), at(4))));
        assert_eq!(
            got("user"),
            Some(("env-user".into(), Origin::Env("PGUSER")))
        );
        assert_eq!(got("password").unwrap().0, "env-secret");
        assert_eq!(got("application_name"), None, "an empty variable is absent");
        assert_eq!(params.home(), Some(&PathBuf::from("/home/op")));

        let error = Params::resolve("service=absent", &env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "service: definition of service \"absent\" not found"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_name_the_parameter_its_value_and_its_source() {
        let env = env(&[("PGCONNECT_TIMEOUT", "soon")]);
        let params = Params::resolve("postgresql://h/d?port=x", &env).unwrap();
        let number = |v: &str| v.parse::<u16>().ok();
        assert_eq!(
            params
                .typed("port", "a port number", number)
                .unwrap_err()
                .to_string(),
            "invalid port value \"x\" in the connection string: expected a port number"
        );
        assert_eq!(
            params
                .typed("connect_timeout", "seconds", number)
                .unwrap_err()
                .to_string(),
            "invalid connect_timeout value \"soon\" from PGCONNECT_TIMEOUT: expected seconds"
        );
        assert_eq!(params.typed("keepalives", "0 or 1", number).unwrap(), None);
        assert_eq!(
            Params::resolve("host=h sslrootcrt=ca.pem", &env)
                .unwrap_err()
                .to_string(),
            "cannot read the connection string: invalid connection option \"sslrootcrt\""
        );
    }

    #[test]
    fn the_given_environment_is_all_there_is() {
        // No HOME given: no home directory, whatever the process's own HOME or passwd entry say.
        assert_eq!(Params::resolve("host=h", &env(&[])).unwrap().home(), None);
        let params = Params::resolve("host=h", &env(&[("HOME", "/home/op")])).unwrap();
        assert_eq!(params.home(), Some(&PathBuf::from("/home/op")));
    }

    #[test]
    fn flags_are_0_or_1() {
        let params = Params::resolve("keepalives=0 sslsni=1 tcp_user_timeout=yes", &env(&[]));
        let params = params.unwrap();
        assert_eq!(params.flag("keepalives").unwrap(), Some(false));
        assert_eq!(params.flag("sslsni").unwrap(), Some(true));
        assert_eq!(params.flag("channel_binding").unwrap(), None);
        assert_eq!(
            params.either("keepalives", "1", "0").unwrap(),
            Some(true),
            "the second word is true"
        );
        assert_eq!(
            params.flag("tcp_user_timeout").unwrap_err().to_string(),
            "invalid tcp_user_timeout value \"yes\" in the connection string: expected 0 or 1"
        );
    }

    #[test]
    fn requiressl_is_the_old_spelling_of_sslmode_require() {
        let params = Params::resolve("requiressl=1", &env(&[])).unwrap();
        assert_eq!(params.get("sslmode"), Some("require"));
        let params = Params::resolve("requiressl=1 sslmode=verify-ca", &env(&[])).unwrap();
        assert_eq!(params.get("sslmode"), Some("verify-ca"));
    }
}
