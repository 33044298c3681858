//! Where the database is and how to reach it, the way psql does: `--db` (a URL or key=value
//! pairs), else `DATABASE_URL`, merged with the service and PG* environment by `super::libpq`;
//! passwords from the string, `PGPASSWORD` or the password file (read at each attempt); TLS by
//! `super::tls`. Several hosts are tried in order (or shuffled with `load_balance_hosts=random`)
//! until one matches `target_session_attrs`, on every connect, so a reconnecting listener
//! follows a failover to the new primary. Servers gavel starts itself are reached with
//! [`Target::exact`], which reads nothing but the string.

use std::future::poll_fn;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio_postgres::config::{ChannelBinding, Host, SslNegotiation};
use tokio_postgres::error::SqlState;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, Connection, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::error::{Doing, Error, Result, Told};
use super::libpq::pgpass::{self, Wanted};
use super::libpq::{Env, Params};
use super::tls::{SslMode, Tls};

/// A connection as tokio-postgres drives it.
pub(crate) type Driven = Connection<Socket, <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream>;

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
    /// As given: a host name, or a socket directory.
    host: Host,
    hostaddr: Option<IpAddr>,
    port: u16,
}

impl Endpoint {
    /// What tokio-postgres is told to connect to. With `hostaddr` that address is dialled over
    /// TCP whatever `host` is, as libpq does (so sslmode applies); `host` stays the name TLS
    /// checks, or for a socket directory, which names no server, the address itself.
    fn wire(&self) -> Host {
        match (&self.host, self.hostaddr) {
            (Host::Unix(_), Some(addr)) => Host::Tcp(addr.to_string()),
            (host, _) => host.clone(),
        }
    }

    fn describe(&self) -> String {
        match self.wire() {
            Host::Tcp(name) => format!("{name}:{}", self.port),
            Host::Unix(path) => format!("{}:{}", path.display(), self.port),
        }
    }
}

/// Where the password comes from.
#[derive(Clone)]
enum Secret {
    /// The connection string, the service or `PGPASSWORD`.
    Given(String),
    /// This password file, read at every connection attempt, so a listener that reconnects
    /// after the password was changed (and the file with it) uses the new one.
    File(PathBuf),
    None,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Given(_) => f.write_str("Given(***)"),
            Secret::File(file) => write!(f, "File({})", file.display()),
            Secret::None => f.write_str("None"),
        }
    }
}

/// The password of one attempt.
enum Password {
    Given(String),
    File(pgpass::Found),
}

impl Password {
    fn text(&self) -> &str {
        match self {
            Password::Given(password) => password,
            Password::File(found) => &found.password,
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
    secret: Secret,
    session: Session,
    shuffle: bool,
    timeout: Option<Duration>,
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
        Target::resolve(raw, &process_env)
    }

    /// A URL or key=value string taken as written: nothing is read from the environment (PG*
    /// variables, `PGSERVICE`, `HOME`), so no password file or `~/.postgresql/` file either.
    /// For the servers gavel starts itself (`demo --postgres`, the tests and benchmarks), which
    /// an operator's environment must not redirect to a real server.
    pub fn exact(raw: &str) -> Result<Target> {
        Target::resolve(raw, &|_| None)
    }

    /// A connection string merged with the service it names and `env`, as libpq does; `env`
    /// is all of the environment that is read (`HOME` included).
    pub fn resolve(raw: &str, env: Env<'_>) -> Result<Target> {
        let params = Params::resolve(raw, env)?;
        refuse_unsupported(&params)?;
        let user = match params.get("user") {
            Some(user) => user.to_owned(),
            None => ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| env(v).filter(|u| !u.is_empty()))
                .or_else(|| whoami::username().ok())
                .ok_or_else(|| {
                    Error::Setting(
                        "user: no user name given (user=, PGUSER) and none known for this process"
                            .to_owned(),
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
            .either("load_balance_hosts", "disable", "random")?
            .unwrap_or(false);
        let endpoints = endpoints(&params)?;
        let over_tcp = endpoints.iter().any(|e| matches!(e.wire(), Host::Tcp(_)));
        let tls = Tls::from_params(&params, over_tcp)?;
        let secret = match (params.get("password"), params.get("passfile")) {
            (Some(password), _) => Secret::Given(password.to_owned()),
            (None, Some(file)) => Secret::File(PathBuf::from(file)),
            (None, None) => params
                .home()
                .map_or(Secret::None, |h| Secret::File(h.join(".pgpass"))),
        };
        Ok(Target {
            endpoints,
            base,
            tls,
            secret,
            session,
            shuffle,
            timeout,
        })
    }

    /// What the user should know about the password file as it is now (that it may not be
    /// used, and why); it is read again at every connection attempt.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for endpoint in &self.endpoints {
            if let Err(unusable) = self.password(endpoint) {
                let warning = unusable.to_string();
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
        }
        warnings
    }

    /// The database's name (the user's when none was given), as the server is asked for it.
    pub fn dbname(&self) -> &str {
        self.base.get_dbname().unwrap_or("")
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
    /// The caller drives the returned `Driven` (spawns it, or polls its messages to receive
    /// notifications).
    pub async fn connect(&self) -> Result<(Client, Driven)> {
        let order = self.order();
        let passes: &[Session] = match self.session {
            Session::PreferStandby => &[Session::Standby, Session::Any],
            ref one => std::slice::from_ref(one),
        };
        let mut failures = Vec::new();
        let mut notes = Vec::new();
        for pass in passes {
            for endpoint in &order {
                let password = self.password(endpoint).unwrap_or_else(|unusable| {
                    let warning = unusable.to_string();
                    if !notes.contains(&warning) {
                        notes.push(warning);
                    }
                    None
                });
                let attempt = self.attempt(endpoint, password.as_ref(), *pass);
                let result = match self.timeout {
                    Some(limit) => {
                        tokio::time::timeout(limit, attempt)
                            .await
                            .unwrap_or_else(|_| {
                                Err(Error::Rejected(format!(
                                    "timeout expired after {} s (connect_timeout)",
                                    limit.as_secs()
                                )))
                            })
                    }
                    None => attempt.await,
                };
                match result {
                    Ok(connected) => return Ok(connected),
                    Err(e) => failures.push(format!("{}: {e}", endpoint.describe())),
                }
            }
        }
        let mut reasons = failures.join("; ");
        for note in &notes {
            reasons.push_str(&format!(" (note: {note})"));
        }
        Err(Error::Unreachable {
            target: self.describe(),
            reasons,
        })
    }

    /// Opens a connection whose messages nobody needs (no notifications), driven on a task of
    /// its own: the client alone, for queries. (`connect` leaves the driving to the caller.)
    pub async fn connect_driven(&self) -> Result<Client> {
        let (client, connection) = self.connect().await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!("database connection ended: {e}");
            }
        });
        Ok(client)
    }

    /// The servers in the order to try them: as given, or with `load_balance_hosts=random`
    /// shuffled afresh for every connection.
    fn order(&self) -> Vec<&Endpoint> {
        let mut order: Vec<&Endpoint> = self.endpoints.iter().collect();
        if self.shuffle {
            shuffle(&mut order);
        }
        order
    }

    /// The password for `endpoint` as things are now: the given one, or the password file's
    /// (read now); `Err` with a warning when the file may not be used.
    fn password(&self, endpoint: &Endpoint) -> Result<Option<Password>, pgpass::Unusable> {
        let file = match &self.secret {
            Secret::Given(password) => return Ok(Some(Password::Given(password.clone()))),
            Secret::File(file) => file,
            Secret::None => return Ok(None),
        };
        // libpq looks up `host` (a socket directory too), else `hostaddr`.
        let host = match &endpoint.host {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        };
        let wanted = Wanted {
            host: &host,
            port: &endpoint.port.to_string(),
            database: self.base.get_dbname().unwrap_or_default(),
            user: self.base.get_user().unwrap_or_default(),
        };
        Ok(pgpass::lookup(file, wanted)?.map(Password::File))
    }

    /// One server, with libpq's fallbacks between plain and TLS for `allow` and `prefer`.
    async fn attempt(
        &self,
        endpoint: &Endpoint,
        password: Option<&Password>,
        session: Session,
    ) -> Result<(Client, Driven)> {
        use tokio_postgres::config::SslMode as Wire;
        let mut config = self.base.clone();
        let wire = endpoint.wire();
        match &wire {
            Host::Tcp(name) => config.host(name),
            Host::Unix(path) => config.host_path(path),
        };
        if let Some(addr) = endpoint.hostaddr {
            config.hostaddr(addr);
        }
        config.port(endpoint.port);
        if let Some(password) = password {
            config.password(password.text());
        }
        // libpq never uses TLS on a unix socket.
        let modes: &[Wire] = match (&wire, self.tls.mode) {
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
        Err(match failure {
            Some(error) => self.explain(error, &wire, password),
            None => Error::Rejected("no way to connect".to_owned()),
        })
    }

    /// The error of a failed attempt on `wire`, with what an operator needs to fix it.
    fn explain(
        &self,
        error: tokio_postgres::Error,
        wire: &Host,
        password: Option<&Password>,
    ) -> Error {
        let host = match wire {
            Host::Tcp(name) => name.as_str(),
            Host::Unix(_) => "",
        };
        if let Some(why) = self.tls.explain(&error, host) {
            return Error::Rejected(why);
        }
        let Some(db) = error.as_db_error() else {
            return Error::Rejected(Told(&error).to_string());
        };
        let mut message = db.to_string();
        if error.code() == Some(&SqlState::INVALID_PASSWORD)
            && let Some(Password::File(found)) = password
        {
            message.push_str(&format!(
                " (password retrieved from file \"{}\", line {})",
                found.file.display(),
                found.line
            ));
        }
        Error::Rejected(message)
    }
}

/// The process's environment, where a missing `HOME` is the user's home from the passwd
/// database, as libpq finds it.
fn process_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| {
            (name == "HOME")
                .then(dirs::home_dir)
                .flatten()
                .and_then(|home| home.into_os_string().into_string().ok())
        })
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
        });
    }
    Ok(endpoints)
}

/// Keepalives, timeouts, channel binding, encoding and negotiation.
fn apply_tuning(params: &Params, config: &mut Config) -> Result<()> {
    let seconds = |v: &str| v.trim().parse::<u64>().ok().map(Duration::from_secs);
    if let Some(on) = params.flag("keepalives")? {
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

/// What [`check_session`] was doing when its question failed.
const ASKING: &str = "asking the server's state (target_session_attrs)";

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
            result = &mut query => break result.doing(ASKING)?,
            message = poll_fn(|cx| connection.poll_message(cx)) => match message {
                Some(Err(e)) => return Err(e).doing(ASKING),
                Some(Ok(_)) => {}
                None => break query.await.doing(ASKING)?,
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
        Err(Error::Rejected(format!("{refusal} (target_session_attrs)")))
    }
}

/// How long a connection that failed `failures` times in a row waits before the next attempt:
/// from 0.5 s, doubling, up to [`MAX_BACKOFF`].
pub(super) fn retry_in(failures: u32) -> Duration {
    (Duration::from_millis(250) * 2u32.pow(failures.min(6))).min(MAX_BACKOFF)
}

/// The longest wait between attempts to connect again.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

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

    #[test]
    fn random_load_balancing_tries_every_host_first_sometimes() {
        let none = env(&[("USER", "op")]);
        let first_hosts = |raw| {
            let target = Target::resolve(raw, &none).unwrap();
            let mut first = std::collections::BTreeSet::new();
            for _ in 0..200 {
                first.insert(target.order()[0].describe());
            }
            first.into_iter().collect::<Vec<_>>()
        };
        // A fair shuffle leaves a host out of first place 200 times with odds of 4 * 0.75^200.
        assert_eq!(
            first_hosts("host=a,b,c,d load_balance_hosts=random"),
            ["a:5432", "b:5432", "c:5432", "d:5432"]
        );
        assert_eq!(first_hosts("host=a,b,c,d"), ["a:5432"]);
    }

    /// A scratch home directory, removed when dropped.
    struct Home(std::path::PathBuf);

    impl Home {
        fn new(name: &str) -> Home {
            let dir =
                std::env::temp_dir().join(format!("gavel-home-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join(".postgresql")).unwrap();
            Home(dir)
        }

        fn env(&self) -> impl Fn(&str) -> Option<String> + use<> {
            let home = self.0.display().to_string();
            move |name| (name == "HOME").then(|| home.clone())
        }
    }

    impl Drop for Home {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn tls_files_are_read_only_when_tls_may_be_used() {
        use std::os::unix::fs::PermissionsExt;
        let home = Home::new("tls-files");
        let postgresql = home.0.join(".postgresql");
        std::fs::write(postgresql.join("postgresql.crt"), "not a certificate").unwrap();
        let key = postgresql.join("postgresql.key");
        std::fs::write(&key, "not a key").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let env = home.env();
        let resolve = |raw| Target::resolve(raw, &env).map_err(|e| format!("{e:#}"));
        for raw in [
            "host=/var/run/postgresql user=u",
            "host=db.example user=u sslmode=disable",
            "host=/var/run/postgresql user=u sslmode=verify-ca",
        ] {
            assert!(resolve(raw).is_ok(), "{raw}: {:?}", resolve(raw));
        }
        assert!(
            resolve("host=db.example user=u")
                .unwrap_err()
                .starts_with("sslcert: could not read"),
            "TLS may be used: the client certificate is read"
        );
        let missing_root = resolve("host=db.example user=u sslmode=verify-ca sslcertmode=disable");
        assert_eq!(
            missing_root.unwrap_err(),
            format!(
                "sslmode in the connection string: root certificate file \"{}\" does not exist; \
                 verify-ca trusts only the CA certificates given there. Either provide the file \
                 (sslrootcert=FILE or PGSSLROOTCERT), or use sslmode=verify-full, which also \
                 checks the host name, with the system's trusted roots (sslrootcert=system)",
                postgresql.join("root.crt").display()
            )
        );
        // A socket directory with hostaddr is reached over TCP, so TLS applies.
        let by_address = "host=/var/run/postgresql hostaddr=127.0.0.1 port=7 user=u \
                          sslmode=verify-ca sslcertmode=disable";
        assert!(
            resolve(by_address)
                .unwrap_err()
                .contains("root.crt\" does not exist"),
            "{by_address}"
        );
        let no_home = Target::resolve("host=h user=u sslmode=verify-ca", &|_| None).unwrap_err();
        assert!(
            format!("{no_home:#}").starts_with(
                "sslmode in the connection string: could not get home directory to locate root \
                 certificate file; verify-ca"
            ),
            "{no_home:#}"
        );
    }

    #[test]
    fn hostaddr_makes_a_socket_directory_host_a_tcp_connection() {
        let none = env(&[("USER", "op")]);
        let target = Target::resolve("host=/tmp hostaddr=127.0.0.1 port=7", &none).unwrap();
        assert!(matches!(target.endpoints[0].wire(), Host::Tcp(ref a) if a == "127.0.0.1"));
        assert_eq!(target.describe(), "127.0.0.1:7/op");
        let target = Target::resolve("host=/tmp port=7", &none).unwrap();
        assert!(matches!(target.endpoints[0].wire(), Host::Unix(_)));
    }

    #[test]
    fn exact_targets_ignore_the_process_environment() {
        // Run again in a child process whose environment would redirect any target it reaches.
        const CHILD: &str = "GAVEL_TEST_HOSTILE_ENVIRONMENT";
        if std::env::var_os(CHILD).is_none() {
            let home = Home::new("exact");
            std::fs::write(home.0.join(".pgpass"), "*:*:*:*:theirs\n").unwrap();
            let name = module_path!().split_once("::").unwrap().1;
            let output = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    &format!("{name}::exact_targets_ignore_the_process_environment"),
                ])
                .env(CHILD, "1")
                .env("HOME", &home.0)
                .envs([
                    ("PGSERVICE", "absent"),
                    ("PGHOSTADDR", "192.0.2.1"),
                    ("PGSSLMODE", "verify-full"),
                    ("PGOPTIONS", "-c default_transaction_read_only=on"),
                ])
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "{out}");
            assert!(out.contains("1 passed"), "the child ran the test: {out}");
            return;
        }
        let raw = "host=/tmp/gavel-socket port=5 user=postgres dbname=d";
        let merged = Target::parse(raw).map(|t| t.describe());
        assert_eq!(
            format!("{:#}", merged.unwrap_err()),
            "service: definition of service \"absent\" not found",
            "the environment reaches Target::parse"
        );
        let exact = Target::exact(raw).unwrap();
        assert_eq!(exact.describe(), "/tmp/gavel-socket:5/d");
        assert_eq!(exact.tls.mode, SslMode::Prefer);
        assert_eq!(exact.base.get_options(), None);
        assert!(matches!(exact.secret, Secret::None), "{:?}", exact.secret);
    }
}
