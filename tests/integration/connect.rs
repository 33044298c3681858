//! Connecting the way psql does, against real PostgreSQL servers each test starts itself: TLS
//! with a test CA and server certificate made here (rcgen), scram-sha-256 passwords, a client
//! certificate for a `cert` pg_hba line, the system's store for verify-full only (through the
//! gavel binary, with `SSL_CERT_FILE`), a socket directory with `hostaddr` reached over TCP, the
//! password file (read again at every connection), the PG* environment merged with `--db`
//! (through the gavel binary), and several hosts where only one is the primary, followed by the
//! live feed across a failover. Environments are passed explicitly, with HOME a scratch
//! directory, so nothing of the machine's own ~/.pgpass or PG* variables leaks in.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gavel::console::app::{Event, Link};
use gavel::domain::Change;
use gavel::store::postgres::{LocalServer, Target, hearing, listen, migrate};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use tokio::sync::mpsc::unbounded_channel;

/// The superuser's password: a colon and a backslash, to exercise the password file's escapes.
const PASSWORD: &str = "correct:horse\\battery";
const CLIENT_USER: &str = "certuser";

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("gavel-connect-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A test CA, a server certificate for localhost and 127.0.0.1, a client certificate for
/// `certuser`, and a second CA that signed nothing the server has.
fn make_certificates(scratch: &Scratch) {
    let ca_params = |name: &str| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params
    };
    let ca = CertifiedIssuer::self_signed(ca_params("gavel test CA"), KeyPair::generate().unwrap())
        .unwrap();
    scratch.write("ca.pem", &ca.pem(), 0o644);
    let other =
        CertifiedIssuer::self_signed(ca_params("someone else"), KeyPair::generate().unwrap())
            .unwrap();
    scratch.write("other-ca.pem", &other.pem(), 0o644);
    let leaf = |names: Vec<String>, common_name: &str, file: &str| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        let cert = params.signed_by(&key, &ca).unwrap();
        scratch.write(&format!("{file}.crt"), &cert.pem(), 0o644);
        scratch.write(&format!("{file}.key"), &key.serialize_pem(), 0o600)
    };
    let server_key = leaf(
        vec!["localhost".into(), "127.0.0.1".into()],
        "localhost",
        "server",
    );
    LocalServer::give(&server_key).unwrap();
    leaf(vec![], CLIENT_USER, "client");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server on 127.0.0.1 that speaks only TLS: scram-sha-256 for everyone but `certuser`, who
/// must show a client certificate signed by the test CA.
fn tls_server(scratch: &Scratch) -> (LocalServer, u16) {
    make_certificates(scratch);
    let port = free_port();
    let hba = format!(
        "local all all trust\n\
         hostssl all {CLIENT_USER} 127.0.0.1/32 cert\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n"
    );
    let (cert, key, ca) = (
        scratch.path("server.crt"),
        scratch.path("server.key"),
        scratch.path("ca.pem"),
    );
    let server = LocalServer::start_secured(
        port,
        &[
            ("listen_addresses", "127.0.0.1"),
            ("ssl", "on"),
            ("ssl_cert_file", &cert),
            ("ssl_key_file", &key),
            ("ssl_ca_file", &ca),
        ],
        PASSWORD,
        &hba,
    )
    .expect("a TLS and scram-sha-256 throwaway PostgreSQL");
    (server, port)
}

/// An environment of exactly `vars`, with HOME the scratch directory.
fn env(scratch: &Scratch, vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let mut vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    vars.push(("HOME".into(), scratch.0.display().to_string()));
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// Connects and answers `sql`'s first column, or the error's message.
async fn ask(target: gavel::store::postgres::Result<Target>, sql: &str) -> Result<String, String> {
    let target = target.map_err(|e| e.to_string())?;
    let client = target.connect_driven().await.map_err(|e| e.to_string())?;
    let rows = client.simple_query(sql).await.map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_certificates_are_checked_as_sslmode_says() {
    let scratch = Scratch::new("verify");
    let (_server, port) = tls_server(&scratch);
    let ca = scratch.path("ca.pem");
    let other = scratch.path("other-ca.pem");
    let with_password = env(&scratch, &[("PGPASSWORD", PASSWORD)]);
    let connect = |conninfo: String| Target::resolve(&conninfo, &with_password);
    let base = format!("host=localhost port={port} user=postgres dbname=postgres");
    let encrypted = "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

    let verified = ask(
        connect(format!("{base} sslmode=verify-full sslrootcert={ca}")),
        encrypted,
    )
    .await;
    assert_eq!(verified.as_deref(), Ok("true"));

    // verify-full without sslrootcert trusts the system's store (which has no test CA) and
    // checks the host name. (The store may be empty on a bare machine; the message then says so.)
    let untrusted = ask(connect(format!("{base} sslmode=verify-full")), encrypted).await;
    let untrusted = untrusted.unwrap_err();
    assert!(
        untrusted.starts_with(&format!(
            "cannot connect to localhost:{port}/postgres: localhost:{port}: the server's \
             certificate is not signed by a trusted certificate authority (trusted: the system's \
             roots"
        )) && untrusted.ends_with(
            "no sslrootcert given); give the CA's certificate with sslrootcert=FILE or \
             PGSSLROOTCERT"
        ),
        "{untrusted}"
    );
    // verify-ca does not check the name, so it trusts nothing but a given CA: without one it is
    // refused before any connection is tried.
    let no_root = connect(format!("{base} sslmode=verify-ca")).map(|t| t.describe());
    assert_eq!(
        format!("{:#}", no_root.unwrap_err()),
        format!(
            "sslmode in the connection string: root certificate file \"{}\" does not exist; \
             verify-ca trusts only the CA certificates given there. Either provide the file \
             (sslrootcert=FILE or PGSSLROOTCERT), or use sslmode=verify-full, which also checks \
             the host name, with the system's trusted roots (sslrootcert=system)",
            scratch.path(".postgresql/root.crt")
        )
    );
    let unknown_ca = ask(
        connect(format!("{base} sslmode=verify-ca sslrootcert={other}")),
        encrypted,
    )
    .await;
    assert!(
        unknown_ca
            .as_ref()
            .unwrap_err()
            .contains(&format!("(trusted: sslrootcert \"{other}\")")),
        "{unknown_ca:?}"
    );
    // libpq: with a root certificate file, require checks the chain too.
    let require_with_root = ask(
        connect(format!("{base} sslmode=require sslrootcert={other}")),
        encrypted,
    )
    .await;
    assert!(
        require_with_root
            .unwrap_err()
            .contains("not signed by a trusted"),
        "require with sslrootcert checks the chain"
    );
    let require = ask(connect(format!("{base} sslmode=require")), encrypted).await;
    assert_eq!(require.as_deref(), Ok("true"), "require checks nothing");

    // The host name: verify-ca does not check it, verify-full does.
    let renamed = format!(
        "host=db.invalid hostaddr=127.0.0.1 port={port} user=postgres dbname=postgres sslrootcert={ca}"
    );
    let ca_only = ask(connect(format!("{renamed} sslmode=verify-ca")), encrypted).await;
    assert_eq!(ca_only.as_deref(), Ok("true"));
    // A socket directory with hostaddr is reached over TCP, so sslmode applies (the server
    // has no plain lines: a plain connection would be refused).
    let socket_dir_by_address = format!(
        "host={} hostaddr=127.0.0.1 port={port} user=postgres dbname=postgres",
        scratch.0.display()
    );
    for mode in ["require", "prefer"] {
        let over_tcp = ask(
            connect(format!("{socket_dir_by_address} sslmode={mode}")),
            encrypted,
        )
        .await;
        assert_eq!(over_tcp.as_deref(), Ok("true"), "sslmode={mode}");
    }
    let full = ask(connect(format!("{renamed} sslmode=verify-full")), encrypted).await;
    assert!(
        full.as_ref().unwrap_err().contains(
            "the server's certificate does not name the host \"db.invalid\" (sslmode=verify-full \
             checks the host name; verify-ca does not)"
        ),
        "{full:?}"
    );

    // The environment's PGSSLROOTCERT and PGSSLMODE, and the default application name.
    let from_env = env(
        &scratch,
        &[
            ("PGPASSWORD", PASSWORD),
            ("PGSSLMODE", "verify-full"),
            ("PGSSLROOTCERT", &ca),
        ],
    );
    let name = ask(
        Target::resolve(&base, &from_env),
        "SELECT application_name || ' ' || ssl::text FROM pg_stat_activity JOIN pg_stat_ssl \
         USING (pid) WHERE pid = pg_backend_pid()",
    )
    .await;
    assert_eq!(name.as_deref(), Ok("gavel true"));

    // The server has no plain lines: disable is refused by it, allow falls back to TLS.
    let plain = ask(connect(format!("{base} sslmode=disable")), encrypted).await;
    assert!(
        plain
            .as_ref()
            .unwrap_err()
            .contains("no pg_hba.conf entry for host \"127.0.0.1\""),
        "{plain:?}"
    );
    let allow = ask(connect(format!("{base} sslmode=allow")), encrypted).await;
    assert_eq!(allow.as_deref(), Ok("true"));

    let wrong = ask(
        Target::resolve(
            &format!("{base} password=wrong sslmode=require"),
            &env(&scratch, &[]),
        ),
        encrypted,
    )
    .await;
    assert!(
        wrong
            .as_ref()
            .unwrap_err()
            .contains("password authentication failed for user \"postgres\""),
        "{wrong:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_come_from_the_password_file() {
    let scratch = Scratch::new("pgpass");
    let (_server, port) = tls_server(&scratch);
    let escaped = PASSWORD.replace('\\', "\\\\").replace(':', "\\:");
    let line = format!("# gavel's test\nlocalhost:{port}:*:postgres:{escaped}\n");
    let pgpass = scratch.write(".pgpass", &line, 0o600);
    let conninfo = format!("postgresql://postgres@localhost:{port}/postgres?sslmode=require");
    let who = "SELECT current_user";

    let home = env(&scratch, &[]);
    assert_eq!(
        ask(Target::resolve(&conninfo, &home), who).await.as_deref(),
        Ok("postgres"),
        "~/.pgpass"
    );
    let elsewhere = scratch.write("elsewhere/pgpass", &line, 0o600);
    std::fs::remove_file(&pgpass).unwrap();
    let named = env(&scratch, &[("PGPASSFILE", elsewhere.to_str().unwrap())]);
    assert_eq!(
        ask(Target::resolve(&conninfo, &named), who)
            .await
            .as_deref(),
        Ok("postgres"),
        "PGPASSFILE"
    );
    let keyword = format!("{conninfo}&passfile={}", elsewhere.display());
    assert_eq!(
        ask(Target::resolve(&keyword, &home), who).await.as_deref(),
        Ok("postgres"),
        "passfile="
    );

    // A file others may read is not used, and the failure says why.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o644)).unwrap();
    let target = Target::resolve(&conninfo, &named).unwrap();
    let warning = format!(
        "password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
        elsewhere.display()
    );
    assert_eq!(target.warnings(), std::slice::from_ref(&warning));
    let refused = ask(Ok(target), who).await.unwrap_err();
    assert!(
        refused.ends_with(&format!("(note: {warning})")),
        "{refused}"
    );

    // The file is read at every connection, not once: a password changed in it (rotated) is
    // used by the next connection of the same target.
    let rotating = scratch.write("rotating", "*:*:*:*:old-password\n", 0o600);
    let rotating_env = env(&scratch, &[("PGPASSFILE", rotating.to_str().unwrap())]);
    let target = Target::resolve(&conninfo, &rotating_env).unwrap();
    let stale = ask(Ok(target.clone()), who).await;
    assert!(
        stale
            .as_ref()
            .unwrap_err()
            .contains("password authentication failed"),
        "{stale:?}"
    );
    scratch.write("rotating", &format!("*:*:*:*:{escaped}\n"), 0o600);
    assert_eq!(
        ask(Ok(target), who).await.as_deref(),
        Ok("postgres"),
        "the password written since"
    );

    // A wrong password from the file is named as such.
    let wrong = scratch.write("wrong", "*:*:*:*:nope\n", 0o600);
    let wrong = env(&scratch, &[("PGPASSFILE", wrong.to_str().unwrap())]);
    let refused = ask(Target::resolve(&conninfo, &wrong), who)
        .await
        .unwrap_err();
    assert!(
        refused.contains(&format!(
            "password authentication failed for user \"postgres\" (password retrieved from file \
             \"{}\", line 1)",
            scratch.path("wrong")
        )),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_passes_a_cert_line() {
    let scratch = Scratch::new("clientcert");
    let (server, port) = tls_server(&scratch);
    superuser(&server)
        .await
        .batch_execute(&format!("CREATE ROLE {CLIENT_USER} LOGIN"))
        .await
        .unwrap();
    let ca = scratch.path("ca.pem");
    let base = format!(
        "host=localhost port={port} user={CLIENT_USER} dbname=postgres sslmode=verify-full sslrootcert={ca}"
    );
    let who = "SELECT current_user";
    let none = env(&scratch, &[]);
    let (cert, key) = (scratch.path("client.crt"), scratch.path("client.key"));

    let with_cert = format!("{base} sslcert={cert} sslkey={key}");
    assert_eq!(
        ask(Target::resolve(&with_cert, &none), who)
            .await
            .as_deref(),
        Ok(CLIENT_USER)
    );
    let from_env = env(&scratch, &[("PGSSLCERT", &cert), ("PGSSLKEY", &key)]);
    assert_eq!(
        ask(Target::resolve(&base, &from_env), who).await.as_deref(),
        Ok(CLIENT_USER),
        "PGSSLCERT and PGSSLKEY"
    );
    let without = ask(Target::resolve(&base, &none), who).await.unwrap_err();
    assert!(
        without.contains("connection requires a valid client certificate"),
        "{without}"
    );

    // libpq's default place, ~/.postgresql/postgresql.{crt,key}.
    let text = |path: &str| std::fs::read_to_string(path).unwrap();
    scratch.write(".postgresql/postgresql.crt", &text(&cert), 0o644);
    let loose = scratch.write(".postgresql/postgresql.key", &text(&key), 0o644);
    let error = format!("{:#}", Target::resolve(&base, &none).unwrap_err());
    assert_eq!(
        error,
        format!(
            "sslkey: private key file \"{}\" has group or world access; file must have \
             permissions u=rw (0600) or less if owned by the current user, or permissions \
             u=rw,g=r (0640) or less if owned by root",
            loose.display()
        )
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        ask(Target::resolve(&base, &none), who).await.as_deref(),
        Ok(CLIENT_USER),
        "~/.postgresql/postgresql.crt"
    );
}

/// `gavel migrate` with `env` only, and what it printed (stdout, then stderr).
fn gavel(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let output = crate::common::gavel()
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &scratch.0)
        .envs(env.iter().copied())
        .arg("--log-dir")
        .arg(scratch.0.join("log"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_fills_in_what_db_leaves_out() {
    let scratch = Scratch::new("environment");
    let (_server, port) = tls_server(&scratch);
    let (port_text, ca) = (port.to_string(), scratch.path("ca.pem"));
    let environment = [
        ("PGPORT", port_text.as_str()),
        ("PGUSER", "postgres"),
        ("PGPASSWORD", PASSWORD),
        ("PGSSLMODE", "verify-full"),
        ("PGSSLROOTCERT", ca.as_str()),
    ];
    let (ok, out) = gavel(
        &scratch,
        &["migrate", "--db", "host=localhost dbname=postgres"],
        &environment,
    );
    assert!(ok, "{out}");
    assert!(
        out.starts_with(&format!("localhost:{port}/postgres: applied ")),
        "{out}"
    );

    // The same through a service, with the password from ~/.pgpass.
    let services = scratch.write(
        "services.conf",
        &format!(
            "[debates]\nhost=localhost\nport={port}\ndbname=postgres\nuser=postgres\n\
             sslmode=verify-full\nsslrootcert={ca}\n"
        ),
        0o644,
    );
    let escaped = PASSWORD.replace('\\', "\\\\").replace(':', "\\:");
    scratch.write(".pgpass", &format!("*:*:*:postgres:{escaped}\n"), 0o600);
    let by_service = [
        ("PGSERVICE", "debates"),
        ("PGSERVICEFILE", services.to_str().unwrap()),
    ];
    let (ok, out) = gavel(&scratch, &["migrate"], &by_service);
    assert!(ok, "{out}");
    assert_eq!(
        out,
        format!(
            "localhost:{port}/postgres: up to date\nroles gavel_viewer and gavel_operator ready\n"
        )
    );

    // A bad value is named with where it came from, before anything is tried.
    let (ok, out) = gavel(
        &scratch,
        &["migrate", "--db", "host=localhost"],
        &[("PGSSLMODE", "verify_full")],
    );
    assert!(!ok);
    assert_eq!(
        out,
        "gavel: invalid sslmode value \"verify_full\" from PGSSLMODE: expected disable, allow, \
         prefer, require, verify-ca or verify-full\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_roots_serve_verify_full_only() {
    let scratch = Scratch::new("system-roots");
    let (_server, port) = tls_server(&scratch);
    // The test CA stands in for a public one: the system's store is SSL_CERT_FILE.
    let ca = scratch.path("ca.pem");
    let environment = [("SSL_CERT_FILE", ca.as_str()), ("PGPASSWORD", PASSWORD)];
    let migrate = |host: &str, mode: &str| {
        let db = format!("{host} port={port} user=postgres dbname=postgres sslmode={mode}");
        gavel(&scratch, &["migrate", "--db", &db], &environment)
    };
    let misnamed = "host=db.invalid hostaddr=127.0.0.1";

    let (ok, out) = migrate("host=localhost", "verify-full");
    assert!(ok, "verify-full with the system's roots: {out}");
    let (ok, out) = migrate(misnamed, "verify-full");
    assert!(!ok);
    assert!(
        out.contains("does not name the host \"db.invalid\""),
        "the system's roots with the name checked: {out}"
    );
    // verify-ca would accept any certificate a public CA issued, for any name: refused.
    let (ok, out) = migrate(misnamed, "verify-ca");
    assert!(!ok);
    assert!(
        out.starts_with(&format!(
            "gavel: sslmode in the connection string: root certificate file \"{}\" does not exist",
            scratch.path(".postgresql/root.crt")
        )),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_timeout_bounds_a_server_that_never_answers() {
    let scratch = Scratch::new("timeout");
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let error = ask(
        Target::resolve(
            &format!("host=127.0.0.1 port={port} user=u"),
            &env(&scratch, &[("PGCONNECT_TIMEOUT", "2")]),
        ),
        "SELECT 1",
    )
    .await
    .unwrap_err();
    assert_eq!(
        error,
        format!(
            "cannot connect to 127.0.0.1:{port}/u: 127.0.0.1:{port}: timeout expired after 2 s \
             (connect_timeout)"
        )
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    drop(silent);
}

/// A plain server on 127.0.0.1 that trusts everyone, with gavel's tables.
async fn plain_server() -> (LocalServer, u16) {
    let port = free_port();
    let server = LocalServer::start_with(port, &[("listen_addresses", "127.0.0.1")])
        .expect("a throwaway PostgreSQL");
    migrate(&mut superuser(&server).await).await.unwrap();
    (server, port)
}

/// The superuser through the server's socket, allowed to write even on a read-only server.
async fn superuser(server: &LocalServer) -> tokio_postgres::Client {
    let admin = format!(
        "{} options='-c default_transaction_read_only=off'",
        server.url("postgres")
    );
    Target::exact(&admin)
        .unwrap()
        .connect_driven()
        .await
        .unwrap()
}

/// Makes a server read-only (`on`) or read-write (`off`) for new sessions, and waits until it is.
async fn set_read_only(server: &LocalServer, on: &str) {
    let client = superuser(server).await;
    client
        .batch_execute(&format!(
            "ALTER SYSTEM SET default_transaction_read_only = {on}"
        ))
        .await
        .unwrap();
    client
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let fresh = Target::exact(&server.url("postgres")).unwrap();
    while ask(Ok(fresh.clone()), "SHOW default_transaction_read_only")
        .await
        .as_deref()
        != Ok(on)
    {
        assert!(
            Instant::now() < deadline,
            "the server never became read-only={on}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_several_hosts_the_primary_is_found_and_followed_after_a_failover() {
    let scratch = Scratch::new("hosts");
    let closed = free_port();
    let (mut first, first_port) = plain_server().await;
    let (second, second_port) = plain_server().await;
    set_read_only(&second, "on").await;
    let none = env(&scratch, &[("USER", "postgres")]);
    let target = |ports: String, attrs: &str| {
        Target::resolve(
            &format!(
                "host=127.0.0.1,127.0.0.1 port={ports} dbname=postgres sslmode=disable \
                 target_session_attrs={attrs}"
            ),
            &none,
        )
    };
    let port = "SHOW port";

    let past_a_closed_port = ask(target(format!("{closed},{first_port}"), "any"), port).await;
    assert_eq!(past_a_closed_port, Ok(first_port.to_string()));
    let read_only_first = format!("{second_port},{first_port}");
    assert_eq!(
        ask(target(read_only_first.clone(), "any"), port).await,
        Ok(second_port.to_string()),
        "any takes the first that answers, read-only or not"
    );
    assert_eq!(
        ask(target(read_only_first.clone(), "read-write"), port).await,
        Ok(first_port.to_string())
    );
    assert_eq!(
        ask(target(read_only_first.clone(), "read-only"), port).await,
        Ok(second_port.to_string())
    );
    // Neither is in recovery: both are primaries, neither a standby; prefer-standby takes any.
    assert_eq!(
        ask(target(read_only_first.clone(), "primary"), port).await,
        Ok(second_port.to_string())
    );
    let no_standby = ask(target(read_only_first.clone(), "standby"), port).await;
    assert_eq!(
        no_standby.unwrap_err(),
        format!(
            "cannot connect to 127.0.0.1:{second_port},127.0.0.1:{first_port}/postgres: \
             127.0.0.1:{second_port}: server is not in hot standby mode (target_session_attrs); \
             127.0.0.1:{first_port}: server is not in hot standby mode (target_session_attrs)"
        )
    );
    assert_eq!(
        ask(target(read_only_first, "prefer-standby"), port).await,
        Ok(second_port.to_string())
    );
    let nowhere = ask(
        target(format!("{second_port},{closed}"), "read-write"),
        port,
    )
    .await;
    let nowhere = nowhere.unwrap_err();
    assert!(
        nowhere.starts_with(&format!(
            "cannot connect to 127.0.0.1:{second_port},127.0.0.1:{closed}/postgres: \
             127.0.0.1:{second_port}: session is read-only (target_session_attrs); \
             127.0.0.1:{closed}: "
        )),
        "{nowhere}"
    );

    // The live feed: on the primary first; after it fails and the other is promoted, the feed
    // reconnects to the new primary and carries its rows.
    let both = target(format!("{first_port},{second_port}"), "read-write").unwrap();
    let (events_tx, mut events) = unbounded_channel();
    let (_history_tx, history) = unbounded_channel();
    let (presence, _heard) = hearing();
    let feed = tokio::spawn(listen(
        both,
        events_tx,
        history,
        Default::default(),
        presence,
        true,
    ));
    let mut next_live = async || {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, events.recv()).await {
                Ok(Some(Event::Link(Link::Live))) => return,
                Ok(Some(_)) => {}
                other => panic!("the feed never went live: {other:?}"),
            }
        }
    };
    next_live().await;
    first.stop().unwrap();
    set_read_only(&second, "off").await;
    next_live().await;
    superuser(&second)
        .await
        .batch_execute("INSERT INTO debate_sessions (id, question) VALUES ('after-failover', 'q')")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Some(Event::Store(change))) => {
                if let Change::Session(session) = *change
                    && session.id == "after-failover"
                {
                    break;
                }
            }
            Ok(Some(_)) => {}
            other => panic!("the new primary's row never arrived: {other:?}"),
        }
    }
    feed.abort();
}
