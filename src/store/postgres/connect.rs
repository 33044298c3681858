//! Where the database is and how to reach it, the way psql does: `--db` (a URL or key=value
//! pairs), else `DATABASE_URL`, merged with the service and PG* environment by `super::libpq`;
//! passwords from the string, `PGPASSWORD` or the password file; TLS by `super::tls`. Several
//! hosts are tried in order (or shuffled with `load_balance_hosts=random`) until one matches
//! `target_session_attrs`, on every connect, so a reconnecting listener follows a failover to
//! the new primary.

use std::future::poll_fn;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use tokio_postgres::config::{ChannelBinding, Host, SslNegotiation};
use tokio_postgres::error::SqlState;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, Connection, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::libpq::pgpass::{self, Wanted};
use super::libpq::{Env, Params};
use super::tls::{SslMode, Tls};

/// A connection as tokio-postgres drives it.
pub type Driven = Connection<Socket, <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream>;

/// Which server of several will do (libpq's `target_session_attrs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Session {
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

/// One server to try.
#[derive(Debug, Clone)]
struct Endpoint {
    host: Host,
    hostaddr: Option<IpAddr>,
    port: u16,
    password: Option<Password>,
}

#[derive(Clone)]
enum Password {
    Given(String),
    File(pgpass::Found),
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Password::Given(_) => f.write_str("Given(***)"),
            Password::File(found) => write!(f, "File({found:?})"),
        }
    }
}

/// A validated way to connect.
#[derive(Debug, Clone)]
pub struct Target {
    endpoints: Vec<Endpoint>,
    /// Everything but host, port, password and sslmode, which vary by attempt.
    base: Config,
    tls: Tls,
    session: Session,
    shuffle: bool,
    timeout: Option<Duration>,
    warnings: Vec<String>,
}

impl Target {
    /// From `--db`, else `DATABASE_URL`, merged with the process's environment.
    pub fn from_env(db: Option<&str>) -> Result<Target> {
        let url = db
            .map(str::to_owned)
            .or_else(|| std::env::var("DATABASE_URL").ok())
            .unwrap_or_default();
        Target::parse(&url)
    }

    /// A URL (`postgresql://...`) or key=value string, merged with the process's environment.
    pub fn parse(raw: &str) -> Result<Target> {
        Target::resolve(raw, &|name| std::env::var(name).ok())
    }

    /// A connection string merged with the service it names and `env`, as libpq does.
    pub fn resolve(raw: &str, env: Env<'_>) -> Result<Target> {
        let params = Params::resolve(raw, env)?;
        refuse_unsupported(&params)?;
        let user = match params.get("user") {
            Some(user) => user.to_owned(),
            None => ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| env(v).filter(|u| !u.is_empty()))
                .or_else(super::local::login_name)
                .ok_or_else(|| {
                    anyhow!(
                        "user: no user name given (user=, PGUSER) and none known for this process"
                    )
                })?,
        };
        let dbname = params.get("dbname").unwrap_or(&user).to_owned();
        let mut base = Config::new();
        base.user(&user).dbname(&dbname).application_name(
            params
                .get("application_name")
                .or(params.get("fallback_application_name"))
                .unwrap_or("gavel"),
        );
        if let Some(options) = params.get("options") {
            base.options(options);
        }
        apply_tuning(&params, &mut base)?;
        let timeout = params
            .typed("connect_timeout", "a number of seconds", |v| {
                v.trim().parse::<i64>().ok()
            })?
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(s.max(2).unsigned_abs()));
        let session = params
            .typed(
                "target_session_attrs",
                "any, read-write, read-only, primary, standby or prefer-standby",
                |v| match v {
                    "any" => Some(Session::Any),
                    "read-write" => Some(Session::ReadWrite),
                    "read-only" => Some(Session::ReadOnly),
                    "primary" => Some(Session::Primary),
                    "standby" => Some(Session::Standby),
                    "prefer-standby" => Some(Session::PreferStandby),
                    _ => None,
                },
            )?
            .unwrap_or(Session::Any);
        let shuffle = params
            .typed("load_balance_hosts", "disable or random", |v| match v {
                "disable" => Some(false),
                "random" => Some(true),
                _ => None,
            })?
            .unwrap_or(false);
        let tls = Tls::from_params(&params)?;
        let mut endpoints = endpoints(&params)?;
        let mut warnings = Vec::new();
        let given = params.get("password").map(str::to_owned);
        let passfile = params
            .get("passfile")
            .map(PathBuf::from)
            .or_else(|| params.home().map(|h| h.join(".pgpass")));
        for endpoint in &mut endpoints {
            endpoint.password = match (&given, &passfile) {
                (Some(password), _) => Some(Password::Given(password.clone())),
                (None, Some(file)) => {
                    let host = match (&endpoint.host, endpoint.hostaddr) {
                        (Host::Tcp(name), _) if !name.is_empty() => name.clone(),
                        (_, Some(addr)) => addr.to_string(),
                        _ => String::new(),
                    };
                    let wanted = Wanted {
                        host: &host,
                        port: &endpoint.port.to_string(),
                        database: &dbname,
                        user: &user,
                    };
                    match pgpass::lookup(file, wanted) {
                        Ok(found) => found.map(Password::File),
                        Err(warning) => {
                            if !warnings.contains(&warning) {
                                warnings.push(warning);
                            }
                            None
                        }
                    }
                }
                (None, None) => None,
            };
        }
        Ok(Target {
            endpoints,
            base,
            tls,
            session,
            shuffle,
            timeout,
            warnings,
        })
    }

    /// What the user should know about how the target was read (a password file that was not
    /// used, and why).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Where this connects, without secrets, for messages: `host:port,.../dbname`.
    pub fn describe(&self) -> String {
        let hosts: Vec<String> = self.endpoints.iter().map(Endpoint::describe).collect();
        format!(
            "{}/{}",
            hosts.join(","),
            self.base.get_dbname().unwrap_or("")
        )
    }

    /// Opens one connection to the first server that answers and suits `target_session_attrs`.
    /// The caller drives the returned [`Driven`] (spawns it, or polls its messages to receive
    /// notifications).
    pub async fn connect(&self) -> Result<(Client, Driven)> {
        let mut order: Vec<&Endpoint> = self.endpoints.iter().collect();
        if self.shuffle {
            shuffle(&mut order);
        }
        let passes: &[Session] = match self.session {
            Session::PreferStandby => &[Session::Standby, Session::Any],
            ref one => std::slice::from_ref(one),
        };
        let mut failures = Vec::new();
        for pass in passes {
            for endpoint in &order {
                let attempt = self.attempt(endpoint, *pass);
                let result = match self.timeout {
                    Some(limit) => {
                        tokio::time::timeout(limit, attempt)
                            .await
                            .unwrap_or_else(|_| {
                                Err(anyhow!(
                                    "timeout expired after {} s (connect_timeout)",
                                    limit.as_secs()
                                ))
                            })
                    }
                    None => attempt.await,
                };
                match result {
                    Ok(connected) => return Ok(connected),
                    Err(e) => failures.push(format!("{}: {e:#}", endpoint.describe())),
                }
            }
        }
        let mut message = failures.join("; ");
        for warning in &self.warnings {
            message.push_str(&format!(" (note: {warning})"));
        }
        bail!("cannot connect to {}: {message}", self.describe())
    }

    /// Opens a connection whose messages nobody needs: it is driven on a task of its own.
    pub async fn connect_plain(&self) -> Result<Client> {
        let (client, connection) = self.connect().await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!("database connection ended: {e}");
            }
        });
        Ok(client)
    }

    /// One server, with libpq's fallbacks between plain and TLS for `allow` and `prefer`.
    async fn attempt(&self, endpoint: &Endpoint, session: Session) -> Result<(Client, Driven)> {
        use tokio_postgres::config::SslMode as Wire;
        let mut config = self.base.clone();
        match &endpoint.host {
            Host::Tcp(name) => config.host(name),
            Host::Unix(path) => config.host_path(path),
        };
        if let Some(addr) = endpoint.hostaddr {
            config.hostaddr(addr);
        }
        config.port(endpoint.port);
        if let Some(password) = &endpoint.password {
            config.password(match password {
                Password::Given(password) => password.as_str(),
                Password::File(found) => found.password.as_str(),
            });
        }
        // libpq never uses TLS on a unix socket.
        let modes: &[Wire] = match (&endpoint.host, self.tls.mode) {
            (Host::Unix(_), _) | (_, SslMode::Disable) => &[Wire::Disable],
            (_, SslMode::Allow) => &[Wire::Disable, Wire::Require],
            (_, SslMode::Prefer) => &[Wire::Prefer, Wire::Disable],
            _ => &[Wire::Require],
        };
        let mut failure = None;
        for mode in modes {
            config.ssl_mode(*mode);
            match config.connect(self.tls.connector()).await {
                Ok((client, mut connection)) => {
                    check_session(&client, &mut connection, session).await?;
                    return Ok((client, connection));
                }
                Err(e) => {
                    // Only a refusal by the server is worth the other way round.
                    let refused = e.as_db_error().is_some();
                    failure = Some(e);
                    if !refused {
                        break;
                    }
                }
            }
        }
        let error = failure.ok_or_else(|| anyhow!("no way to connect"))?;
        Err(self.explain(&error, endpoint))
    }

    /// The error of a failed attempt, with what an operator needs to fix it.
    fn explain(&self, error: &tokio_postgres::Error, endpoint: &Endpoint) -> anyhow::Error {
        let host = match &endpoint.host {
            Host::Tcp(name) => name.as_str(),
            Host::Unix(_) => "",
        };
        if let Some(why) = self.tls.explain(error, host) {
            return anyhow!(why);
        }
        let mut message = match error.as_db_error() {
            Some(db) => db.to_string(),
            None => {
                let mut chain = error.to_string();
                let mut next = std::error::Error::source(error);
                while let Some(cause) = next {
                    chain.push_str(&format!(": {cause}"));
                    next = cause.source();
                }
                chain
            }
        };
        if error.code() == Some(&SqlState::INVALID_PASSWORD)
            && let Some(Password::File(found)) = &endpoint.password
        {
            message.push_str(&format!(
                " (password retrieved from file \"{}\", line {})",
                found.file.display(),
                found.line
            ));
        }
        anyhow!(message)
    }
}

impl Endpoint {
    fn describe(&self) -> String {
        match &self.host {
            Host::Tcp(name) => format!("{name}:{}", self.port),
            Host::Unix(path) => format!("{}:{}", path.display(), self.port),
        }
    }
}

/// The servers of `host`, `hostaddr` and `port` (comma-separated lists, one port for all or one
/// per host; an empty entry is the default).
fn endpoints(params: &Params) -> Result<Vec<Endpoint>> {
    let split = |key| params.get(key).map(|v| v.split(',').collect::<Vec<_>>());
    let addrs: Option<Vec<Option<IpAddr>>> = match split("hostaddr") {
        None => None,
        Some(list) => Some(
            list.iter()
                .map(|a| match a.trim() {
                    "" => Ok(None),
                    a => a.parse().map(Some).map_err(|_| {
                        params.refuse(
                            "hostaddr",
                            &format!("could not parse network address \"{a}\""),
                        )
                    }),
                })
                .collect::<Result<_>>()?,
        ),
    };
    let names = split("host").unwrap_or_else(|| vec![""; addrs.as_ref().map_or(1, Vec::len)]);
    if let Some(addrs) = &addrs
        && addrs.len() != names.len()
    {
        return Err(params.refuse(
            "hostaddr",
            &format!(
                "could not match {} host names to {} hostaddr values",
                names.len(),
                addrs.len()
            ),
        ));
    }
    let ports = split("port").unwrap_or_else(|| vec![""]);
    if ports.len() != 1 && ports.len() != names.len() {
        return Err(params.refuse(
            "port",
            &format!(
                "could not match {} port numbers to {} hosts",
                ports.len(),
                names.len()
            ),
        ));
    }
    let mut endpoints = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let hostaddr = addrs.as_ref().and_then(|a| a[i]);
        let port = ports[if ports.len() == 1 { 0 } else { i }].trim();
        let port = match port {
            "" => 5432,
            port => port.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                params.refuse("port", &format!("invalid port number: \"{port}\""))
            })?,
        };
        let host = match (name.trim(), hostaddr) {
            (name, _) if name.starts_with('/') => Host::Unix(PathBuf::from(name)),
            ("", Some(addr)) => Host::Tcp(addr.to_string()),
            ("", None) if std::path::Path::new("/var/run/postgresql").exists() => {
                Host::Unix(PathBuf::from("/var/run/postgresql"))
            }
            ("", None) => Host::Tcp("localhost".to_owned()),
            (name, _) => Host::Tcp(name.to_owned()),
        };
        endpoints.push(Endpoint {
            host,
            hostaddr,
            port,
            password: None,
        });
    }
    Ok(endpoints)
}

/// Keepalives, timeouts, channel binding, encoding and negotiation.
fn apply_tuning(params: &Params, config: &mut Config) -> Result<()> {
    let flag = |v: &str| match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    };
    let seconds = |v: &str| v.trim().parse::<u64>().ok().map(Duration::from_secs);
    if let Some(on) = params.typed("keepalives", "0 or 1", flag)? {
        config.keepalives(on);
    }
    if let Some(idle) = params.typed("keepalives_idle", "a number of seconds", seconds)? {
        config.keepalives_idle(idle);
    }
    if let Some(every) = params.typed("keepalives_interval", "a number of seconds", seconds)? {
        config.keepalives_interval(every);
    }
    let count = |v: &str| v.trim().parse::<u32>().ok();
    if let Some(count) = params.typed("keepalives_count", "a number", count)? {
        config.keepalives_retries(count);
    }
    let millis = |v: &str| v.trim().parse::<u64>().ok().map(Duration::from_millis);
    if let Some(limit) = params.typed("tcp_user_timeout", "milliseconds", millis)? {
        config.tcp_user_timeout(limit);
    }
    let binding = params.typed(
        "channel_binding",
        "disable, prefer or require",
        |v| match v {
            "disable" => Some(ChannelBinding::Disable),
            "prefer" => Some(ChannelBinding::Prefer),
            "require" => Some(ChannelBinding::Require),
            _ => None,
        },
    )?;
    if let Some(binding) = binding {
        config.channel_binding(binding);
    }
    let negotiation = params.typed("sslnegotiation", "postgres or direct", |v| match v {
        "postgres" => Some(SslNegotiation::Postgres),
        "direct" => Some(SslNegotiation::Direct),
        _ => None,
    })?;
    if let Some(negotiation) = negotiation {
        config.ssl_negotiation(negotiation);
    }
    params.typed("client_encoding", "UTF8 (gavel speaks only UTF-8)", |v| {
        matches!(
            v.to_ascii_uppercase().as_str(),
            "UTF8" | "UTF-8" | "UNICODE" | "AUTO"
        )
        .then_some(())
    })?;
    Ok(())
}

/// libpq keywords gavel does not implement, refused when they would ask for something.
fn refuse_unsupported(params: &Params) -> Result<()> {
    for key in ["require_auth", "requirepeer", "sslpassword"] {
        if params.get(key).is_some() {
            return Err(params.refuse(key, "is not supported by gavel"));
        }
    }
    params.typed(
        "gssencmode",
        "disable or prefer (gavel has no GSSAPI encryption)",
        |v| matches!(v, "disable" | "prefer").then_some(()),
    )?;
    params.typed(
        "replication",
        "false (gavel does not open replication connections)",
        |v| matches!(v, "0" | "false" | "off" | "no").then_some(()),
    )?;
    Ok(())
}

/// Whether the server suits `session`, asked over a connection that is driven meanwhile.
async fn check_session(client: &Client, connection: &mut Driven, session: Session) -> Result<()> {
    let (sql, wanted, refusal) = match session {
        Session::Any | Session::PreferStandby => return Ok(()),
        Session::ReadWrite => ("SHOW transaction_read_only", "off", "session is read-only"),
        Session::ReadOnly => (
            "SHOW transaction_read_only",
            "on",
            "session is not read-only",
        ),
        Session::Primary => (
            "SELECT pg_is_in_recovery()",
            "f",
            "server is in hot standby mode",
        ),
        Session::Standby => (
            "SELECT pg_is_in_recovery()",
            "t",
            "server is not in hot standby mode",
        ),
    };
    let query = client.simple_query(sql);
    tokio::pin!(query);
    let messages = loop {
        tokio::select! {
            result = &mut query => break result?,
            message = poll_fn(|cx| connection.poll_message(cx)) => match message {
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(_)) => {}
                None => break query.await?,
            },
        }
    };
    let answer = messages.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
        _ => None,
    });
    if answer.as_deref() == Some(wanted) {
        Ok(())
    } else {
        bail!("{refusal} (target_session_attrs)")
    }
}

/// Shuffles `items` with a seed from the standard library's per-process random hasher keys.
fn shuffle<T>(items: &mut [T]) {
    use std::hash::{BuildHasher, Hasher};
    let mut state = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
        | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = usize::try_from(state % (i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn hosts_ports_and_addresses_pair_up() {
        let none = env(&[("USER", "op")]);
        let target = Target::resolve("host=a,b,/tmp port=1,2,3 dbname=d", &none).unwrap();
        assert_eq!(target.describe(), "a:1,b:2,/tmp:3/d");
        let target = Target::resolve("postgresql://a,b:6000/d", &none).unwrap();
        assert_eq!(target.describe(), "a:5432,b:6000/d");
        let target = Target::resolve("hostaddr=127.0.0.1 port=7", &none).unwrap();
        assert_eq!(target.describe(), "127.0.0.1:7/op");
        let error = |raw| format!("{:#}", Target::resolve(raw, &none).unwrap_err());
        assert_eq!(
            error("host=a,b port=1,2,3"),
            "port in the connection string: could not match 3 port numbers to 2 hosts"
        );
        assert_eq!(
            error("host=a port=http"),
            "port in the connection string: invalid port number: \"http\""
        );
        assert_eq!(
            error("host=a,b hostaddr=10.0.0.1"),
            "hostaddr in the connection string: could not match 2 host names to 1 hostaddr values"
        );
        assert_eq!(
            error("host=a hostaddr=db.example.com"),
            "hostaddr in the connection string: could not parse network address \"db.example.com\""
        );
    }

    #[test]
    fn defaults_follow_libpq() {
        let target = Target::resolve("host=h", &env(&[("USER", "op"), ("PGAPPNAME", "")])).unwrap();
        assert_eq!(target.base.get_user(), Some("op"));
        assert_eq!(target.base.get_dbname(), Some("op"));
        assert_eq!(target.base.get_application_name(), Some("gavel"));
        assert_eq!(target.tls.mode, SslMode::Prefer);
        assert_eq!(target.session, Session::Any);
        assert_eq!(target.timeout, None);
        let target = Target::resolve(
            "host=h user=u fallback_application_name=fb connect_timeout=1",
            &env(&[("PGTARGETSESSIONATTRS", "read-write")]),
        )
        .unwrap();
        assert_eq!(target.base.get_application_name(), Some("fb"));
        assert_eq!(
            target.timeout,
            Some(Duration::from_secs(2)),
            "libpq's minimum"
        );
        assert_eq!(target.session, Session::ReadWrite);
        let target = Target::resolve(
            "host=h user=u application_name=mine",
            &env(&[("PGAPPNAME", "theirs")]),
        )
        .unwrap();
        assert_eq!(target.base.get_application_name(), Some("mine"));
    }

    #[test]
    fn bad_values_are_refused_naming_the_parameter() {
        let error = |raw, vars| format!("{:#}", Target::resolve(raw, &env(vars)).unwrap_err());
        assert_eq!(
            error("host=h user=u", &[("PGSSLMODE", "sometimes")]),
            "invalid sslmode value \"sometimes\" from PGSSLMODE: expected disable, allow, prefer, \
             require, verify-ca or verify-full"
        );
        assert_eq!(
            error("host=h user=u target_session_attrs=primary-ish", &[]),
            "invalid target_session_attrs value \"primary-ish\" in the connection string: \
             expected any, read-write, read-only, primary, standby or prefer-standby"
        );
        assert_eq!(
            error("host=h user=u sslmode=require sslrootcert=system", &[]),
            "sslrootcert in the connection string: weak sslmode \"require\" may not be used with \
             sslrootcert=system (use \"verify-full\")"
        );
        assert_eq!(
            error(
                "host=h user=u sslmode=verify-ca sslrootcert=/nonexistent/ca.pem",
                &[]
            ),
            "sslrootcert in the connection string: root certificate file \"/nonexistent/ca.pem\" \
             does not exist"
        );
        assert_eq!(
            error("host=h user=u", &[("PGSSLCERT", "/nonexistent/c.pem")]),
            "sslcert from PGSSLCERT: could not read \"/nonexistent/c.pem\": I/O error: No such file or \
             directory (os error 2)"
        );
        assert_eq!(
            error("host=h user=u sslpassword=x", &[]),
            "sslpassword in the connection string: is not supported by gavel"
        );
        assert_eq!(
            error("host=h user=u gssencmode=require", &[]),
            "invalid gssencmode value \"require\" in the connection string: expected disable or \
             prefer (gavel has no GSSAPI encryption)"
        );
    }

    #[test]
    fn passwords_never_reach_debug_output() {
        let target = Target::resolve(
            "postgresql://u:hunter2@h/d",
            &env(&[("PGPASSWORD", "swordfish")]),
        )
        .unwrap();
        let shown = format!("{target:?}");
        assert!(shown.contains("Given(***)"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn sslrootcert_system_means_verify_full_unless_told_otherwise() {
        let none = env(&[]);
        let target = Target::resolve("host=h user=u sslrootcert=system", &none).unwrap();
        assert_eq!(target.tls.mode, SslMode::VerifyFull);
    }

    #[test]
    fn shuffling_keeps_every_item() {
        let mut items: Vec<u32> = (0..20).collect();
        shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, (0..20).collect::<Vec<_>>());
    }
}
