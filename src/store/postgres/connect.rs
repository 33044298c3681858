//! Where the database is and how to reach it: `--db URL`, else `DATABASE_URL`, else the libpq
//! environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE). TLS through the
//! system's OpenSSL: `sslmode=require` encrypts without checking the certificate (as libpq
//! does), `verify-ca` checks it against the system roots, `verify-full` checks the host name
//! too.

use anyhow::{Context, Result, bail};
use postgres_native_tls::{MakeTlsConnector, TlsStream};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, Connection, Socket};

/// How strictly the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    Nothing,
    Certificate,
    CertificateAndHost,
}

/// A validated way to connect.
#[derive(Debug, Clone)]
pub struct Target {
    config: Config,
    verify: Verify,
}

/// A connection as tokio-postgres drives it.
pub type Driven = Connection<Socket, TlsStream<Socket>>;

impl Target {
    /// From `--db`, else `DATABASE_URL`, else the libpq environment.
    pub fn from_env(db: Option<&str>) -> Result<Target> {
        match db
            .map(str::to_owned)
            .or_else(|| std::env::var("DATABASE_URL").ok())
        {
            Some(url) => Target::parse(&url),
            None => Target::from_libpq_env(),
        }
    }

    /// A URL (`postgres://...`) or a key=value string; `sslmode` may be any of libpq's.
    pub fn parse(raw: &str) -> Result<Target> {
        let (raw, verify, mode) = take_sslmode(raw)?;
        let mut config: Config = raw
            .parse()
            .with_context(|| format!("cannot read the connection string {:?}", redact(&raw)))?;
        if let Some(mode) = mode {
            config.ssl_mode(mode);
        }
        Ok(Target { config, verify })
    }

    fn from_libpq_env() -> Result<Target> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let host = var("PGHOST").unwrap_or_else(|| {
            if std::path::Path::new("/var/run/postgresql").exists() {
                "/var/run/postgresql".to_owned()
            } else {
                "localhost".to_owned()
            }
        });
        let mut parts = vec![format!("host='{}'", escape(&host))];
        for (env, key) in [
            ("PGPORT", "port"),
            ("PGUSER", "user"),
            ("PGDATABASE", "dbname"),
            ("PGPASSWORD", "password"),
            ("PGSSLMODE", "sslmode"),
        ] {
            if let Some(value) = var(env) {
                parts.push(format!("{key}='{}'", escape(&value)));
            }
        }
        if var("PGUSER").is_none()
            && let Some(user) = var("USER")
        {
            parts.push(format!("user='{}'", escape(&user)));
        }
        Target::parse(&parts.join(" "))
    }

    /// Where this connects, without secrets, for messages.
    pub fn describe(&self) -> String {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        format!(
            "{}/{}",
            hosts.join(","),
            self.config.get_dbname().unwrap_or("")
        )
    }

    /// Opens one connection. The caller drives the returned [`Driven`] (spawns it, or polls its
    /// messages to receive notifications).
    pub async fn connect(&self) -> Result<(Client, Driven)> {
        let mut tls = native_tls::TlsConnector::builder();
        match self.verify {
            Verify::Nothing => {
                tls.danger_accept_invalid_certs(true)
                    .danger_accept_invalid_hostnames(true);
            }
            Verify::Certificate => {
                tls.danger_accept_invalid_hostnames(true);
            }
            Verify::CertificateAndHost => {}
        }
        let connector = MakeTlsConnector::new(tls.build().context("cannot set up TLS")?);
        self.config
            .connect(connector)
            .await
            .with_context(|| format!("cannot connect to {}", self.describe()))
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
}

/// Takes `sslmode` out of a connection string, because tokio-postgres knows only disable,
/// prefer and require.
fn take_sslmode(raw: &str) -> Result<(String, Verify, Option<SslMode>)> {
    let lower = raw.to_ascii_lowercase();
    let Some(at) = lower.find("sslmode=") else {
        return Ok((raw.to_owned(), Verify::Nothing, None));
    };
    let start = at + "sslmode=".len();
    let quoted = raw[start..].starts_with('\'');
    let value_start = start + usize::from(quoted);
    let value_end = raw[value_start..]
        .find(['&', ' ', '\''])
        .map_or(raw.len(), |i| value_start + i);
    let (mode, verify) = match &raw[value_start..value_end] {
        "disable" | "allow" => (SslMode::Disable, Verify::Nothing),
        "prefer" => (SslMode::Prefer, Verify::Nothing),
        "require" => (SslMode::Require, Verify::Nothing),
        "verify-ca" => (SslMode::Require, Verify::Certificate),
        "verify-full" => (SslMode::Require, Verify::CertificateAndHost),
        other => bail!(
            "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
        ),
    };
    let end = value_end + usize::from(quoted && raw[value_end..].starts_with('\''));
    let rest = format!("{}{}", &raw[..at], &raw[end..])
        .replace("?&", "?")
        .replace("&&", "&");
    let rest = rest.trim_end_matches(['?', '&', ' ']).to_owned();
    Ok((rest, verify, Some(mode)))
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\'', "\\'")
}

/// A connection string with any password hidden.
fn redact(raw: &str) -> String {
    let mut out = raw.to_owned();
    if let Some(scheme) = out.find("://")
        && let Some(at) = out.find('@')
        && let Some(colon) = out[scheme + 3..at].find(':')
    {
        out.replace_range(scheme + 3 + colon + 1..at, "***");
    }
    if let Some(at) = out.find("password=") {
        let end = out[at..].find(' ').map_or(out.len(), |i| at + i);
        out.replace_range(at + 9..end, "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmodes_map_to_transport_and_verification() {
        let cases = [
            (
                "postgres://u@h/db?sslmode=verify-full",
                "postgres://u@h/db",
                Verify::CertificateAndHost,
            ),
            (
                "postgres://u@h/db?sslmode=require&application_name=x",
                "postgres://u@h/db?application_name=x",
                Verify::Nothing,
            ),
            (
                "host=h sslmode=verify-ca dbname=d",
                "host=h  dbname=d",
                Verify::Certificate,
            ),
            ("host=h sslmode='require'", "host=h", Verify::Nothing),
        ];
        for (raw, rest, verify) in cases {
            let (got, v, mode) = take_sslmode(raw).unwrap();
            assert_eq!((got.as_str(), v), (rest, verify), "{raw}");
            assert_eq!(mode, Some(SslMode::Require));
        }
        assert!(take_sslmode("host=h sslmode=sometimes").is_err());
        assert!(Target::parse("postgres://u@h/db?sslmode=verify-full").is_ok());
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(
            redact("host=h password=secret dbname=d"),
            "host=h password=*** dbname=d"
        );
    }
}
