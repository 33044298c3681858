//! libpq connection strings read into keyword/value pairs: `key=value` pairs (values quoted
//! with `'...'`, `\` escaping the next character) and `postgresql://` URLs (percent-encoded,
//! several `host:port` entries separated by commas, parameters after `?`). Only the syntax and
//! the keyword names are checked here; what a value means is decided in `super::Params`.

use std::fmt;

/// Every keyword libpq 17 understands, in libpq's order.
pub(crate) const KEYWORDS: &[&str] = &[
    "service",
    "user",
    "password",
    "passfile",
    "channel_binding",
    "connect_timeout",
    "dbname",
    "host",
    "hostaddr",
    "port",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslcertmode",
    "sslpassword",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "require_auth",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "replication",
    "target_session_attrs",
    "load_balance_hosts",
    "requiressl",
];

/// Why a connection string cannot be read; the messages are libpq's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Error {
    MissingEquals(String),
    Unterminated,
    UnknownKeyword(String),
    UnknownUrlParameter(String),
    BadPercent(String),
    BadUrl(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::MissingEquals(key) => {
                write!(f, "missing \"=\" after \"{key}\" in connection info string")
            }
            Error::Unterminated => {
                write!(f, "unterminated quoted string in connection info string")
            }
            Error::UnknownKeyword(key) => write!(f, "invalid connection option \"{key}\""),
            Error::UnknownUrlParameter(key) => {
                write!(f, "invalid URI query parameter: \"{key}\"")
            }
            Error::BadPercent(token) => write!(f, "invalid percent-encoded token: \"{token}\""),
            Error::BadUrl(why) => write!(f, "invalid URI: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// The keyword/value pairs of a connection string, in the order written (a later pair wins).
pub(super) fn parse(raw: &str) -> Result<Vec<(String, String)>, Error> {
    let pairs = if let Some(rest) = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| raw.strip_prefix(scheme))
    {
        parse_url(rest)?
    } else {
        parse_pairs(raw)?
    };
    for (key, _) in &pairs {
        if !KEYWORDS.contains(&key.as_str()) {
            return Err(Error::UnknownKeyword(key.clone()));
        }
    }
    Ok(pairs)
}

fn parse_pairs(raw: &str) -> Result<Vec<(String, String)>, Error> {
    let mut pairs = Vec::new();
    let mut chars = raw.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(Error::MissingEquals(key));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(Error::Unterminated),
                    Some('\'') => break,
                    Some('\\') => value.push(chars.next().ok_or(Error::Unterminated)?),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    if let Some(escaped) = chars.next() {
                        value.push(escaped);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

/// `[user[:password]@][host[:port][,...]][/dbname][?key=value[&...]]`, after the scheme.
fn parse_url(rest: &str) -> Result<Vec<(String, String)>, Error> {
    let mut pairs = Vec::new();
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let hosts = match authority.find('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                pairs.push(("user".to_owned(), decode(user)?));
            }
            if let Some(password) = password {
                pairs.push(("password".to_owned(), decode(password)?));
            }
            &authority[at + 1..]
        }
        None => authority,
    };
    if !hosts.is_empty() {
        let (mut host_list, mut port_list) = (Vec::new(), Vec::new());
        for entry in hosts.split(',') {
            let (host, port) = split_host_port(entry)?;
            host_list.push(decode(host)?);
            port_list.push(decode(port)?);
        }
        if host_list.iter().any(|h| !h.is_empty()) {
            pairs.push(("host".to_owned(), host_list.join(",")));
        }
        if port_list.iter().any(|p| !p.is_empty()) {
            pairs.push(("port".to_owned(), port_list.join(",")));
        }
    }
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    if let Some(dbname) = path.strip_prefix('/').filter(|d| !d.is_empty()) {
        pairs.push(("dbname".to_owned(), decode(dbname)?));
    }
    for param in query.into_iter().flat_map(|q| q.split('&')) {
        if param.is_empty() {
            continue;
        }
        let (key, value) = param.split_once('=').ok_or_else(|| {
            Error::BadUrl(format!("missing key/value separator \"=\" in \"{param}\""))
        })?;
        let (key, value) = (decode(key)?, decode(value)?);
        // libpq takes the JDBC spelling `ssl=true` as `sslmode=require`.
        if key == "ssl" && value == "true" {
            pairs.push(("sslmode".to_owned(), "require".to_owned()));
        } else if KEYWORDS.contains(&key.as_str()) {
            pairs.push((key, value));
        } else {
            return Err(Error::UnknownUrlParameter(key));
        }
    }
    Ok(pairs)
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(entry: &str) -> Result<(&str, &str), Error> {
    if let Some(bracketed) = entry.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']').ok_or_else(|| {
            Error::BadUrl(format!("missing \"]\" in IPv6 host address \"{entry}\""))
        })?;
        let port = match after.strip_prefix(':') {
            Some(port) => port,
            None if after.is_empty() => "",
            None => {
                return Err(Error::BadUrl(format!(
                    "unexpected character after IPv6 host address \"{entry}\""
                )));
            }
        };
        return Ok((host, port));
    }
    Ok(entry.split_once(':').unwrap_or((entry, "")))
}

/// Percent-decoding; a decoded zero byte or invalid UTF-8 is refused.
fn decode(raw: &str) -> Result<String, Error> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = raw
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .filter(|b| *b != 0)
                .ok_or_else(|| Error::BadPercent(raw.to_owned()))?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::BadPercent(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn key_value_strings_read_as_libpq_reads_them() {
        assert_eq!(
            parse("host=h  port = 5433 dbname='my db' password='it\\'s' user=a\\ b sslmode=")
                .unwrap(),
            pairs(&[
                ("host", "h"),
                ("port", "5433"),
                ("dbname", "my db"),
                ("password", "it's"),
                ("user", "a b"),
                ("sslmode", ""),
            ])
        );
        assert_eq!(parse("   ").unwrap(), vec![]);
        assert_eq!(
            parse("host h").unwrap_err(),
            Error::MissingEquals("host".into())
        );
        assert_eq!(parse("dbname='x").unwrap_err(), Error::Unterminated);
        assert_eq!(
            parse("host=h sslrootcrt=ca.pem").unwrap_err().to_string(),
            "invalid connection option \"sslrootcrt\""
        );
    }

    #[test]
    fn urls_read_as_libpq_reads_them() {
        assert_eq!(
            parse("postgresql://al%40ice:p%3Ass@db1:5433,[::1],db3:6000/deb%20ates?sslmode=verify-full&sslrootcert=ca.pem&ssl=true")
                .unwrap(),
            pairs(&[
                ("user", "al@ice"),
                ("password", "p:ss"),
                ("host", "db1,::1,db3"),
                ("port", "5433,,6000"),
                ("dbname", "deb ates"),
                ("sslmode", "verify-full"),
                ("sslrootcert", "ca.pem"),
                ("sslmode", "require"),
            ])
        );
        assert_eq!(
            parse("postgres://%2Fvar%2Frun%2Fpostgresql/d").unwrap(),
            pairs(&[("host", "/var/run/postgresql"), ("dbname", "d")])
        );
        assert_eq!(parse("postgresql://").unwrap(), vec![]);
        assert_eq!(
            parse("postgresql://h/d?sslrootcrt=x")
                .unwrap_err()
                .to_string(),
            "invalid URI query parameter: \"sslrootcrt\""
        );
        assert_eq!(
            parse("postgresql://h/d%zz").unwrap_err().to_string(),
            "invalid percent-encoded token: \"d%zz\""
        );
        assert!(parse("postgresql://[::1/d").is_err());
    }

    fn quote(value: &str) -> String {
        format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
    }

    fn encode(value: &str) -> String {
        value
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    fn keyword() -> impl Strategy<Value = String> {
        proptest::sample::select(KEYWORDS).prop_map(str::to_owned)
    }

    proptest! {
        #[test]
        fn quoted_pairs_read_back(list in proptest::collection::vec((keyword(), "[^\u{0}]{0,12}"), 0..6)) {
            let raw: Vec<String> = list.iter().map(|(k, v)| format!("{k} = {}", quote(v))).collect();
            prop_assert_eq!(parse(&raw.join("  ")).unwrap(), list);
        }

        #[test]
        fn url_parameters_read_back(
            user in "[^\u{0}]{1,8}",
            dbname in "[^\u{0}]{1,8}",
            hosts in proptest::collection::vec(("[a-z][a-z0-9.-]{0,8}", 1u16..), 1..4),
            list in proptest::collection::vec((keyword(), "[^\u{0}]{0,12}"), 0..4),
        ) {
            let authority: Vec<String> = hosts.iter().map(|(h, p)| format!("{h}:{p}")).collect();
            let query: Vec<String> = list.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
            let url = format!(
                "postgresql://{}@{}/{}?{}",
                encode(&user),
                authority.join(","),
                encode(&dbname),
                query.join("&")
            );
            let mut expected = vec![
                ("user".to_owned(), user),
                ("host".to_owned(), hosts.iter().map(|(h, _)| h.clone()).collect::<Vec<_>>().join(",")),
                ("port".to_owned(), hosts.iter().map(|(_, p)| p.to_string()).collect::<Vec<_>>().join(",")),
                ("dbname".to_owned(), dbname),
            ];
            expected.extend(list);
            prop_assert_eq!(parse(&url).unwrap(), expected);
        }

        #[test]
        fn any_input_is_read_or_refused_without_panicking(raw in "\\PC{0,40}") {
            let _ = parse(&raw);
            let _ = parse(&format!("postgresql://{raw}"));
        }
    }
}
