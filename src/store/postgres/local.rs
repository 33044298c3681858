//! A throwaway PostgreSQL server from the system's server binaries, for `gavel demo --postgres`
//! and the tests: a fresh cluster in a temporary directory, reachable only through a unix
//! socket unless asked for TCP (and, for the connection tests, with passwords and a pg_hba.conf
//! of their own), removed when dropped. As root it runs as the `postgres` user (postgres refuses
//! root). Readiness is read from `postmaster.pid`, never guessed with a sleep. A server started
//! with [`LocalServer::start_replicating`] decodes its WAL logically and has room for many
//! subscriptions, as either side of a publication and subscription (a primary and the
//! subscribers consoles read from).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::error::{Doing, Error, Result};

/// What a server needs to publish to, or subscribe to, many databases at once: logical
/// decoding, and a replication slot, a WAL sender and an apply worker for each subscription
/// (with room for the table synchronisation workers of a new one).
pub const REPLICATION: [(&str, &str); 6] = [
    ("wal_level", "logical"),
    ("max_replication_slots", "64"),
    ("max_wal_senders", "64"),
    ("max_logical_replication_workers", "64"),
    ("max_worker_processes", "80"),
    ("max_sync_workers_per_subscription", "2"),
];

/// A running throwaway server.
#[derive(Debug)]
pub struct LocalServer {
    bin: PathBuf,
    root: PathBuf,
    owner: Option<(u32, u32)>,
    port: u16,
    /// `-c name=value` settings the server starts with.
    settings: Vec<(String, String)>,
    server: Option<Child>,
}

impl LocalServer {
    /// Creates a cluster and starts it, reachable through its unix socket only.
    pub fn start() -> Result<LocalServer> {
        LocalServer::start_with(5432, &[("listen_addresses", "")])
    }

    /// Creates a cluster and starts it, reachable through its unix socket only, ready to be
    /// either side of logical replication: [`REPLICATION`]'s settings.
    pub fn start_replicating() -> Result<LocalServer> {
        let settings: Vec<(&str, &str)> = [("listen_addresses", "")]
            .into_iter()
            .chain(REPLICATION)
            .collect();
        LocalServer::start_with(5432, &settings)
    }

    /// Creates a cluster and starts it on `port` with `settings` (for example
    /// `listen_addresses=127.0.0.1` and `ssl=on`).
    pub fn start_with(port: u16, settings: &[(&str, &str)]) -> Result<LocalServer> {
        LocalServer::create(port, settings, None)
    }

    /// Like [`LocalServer::start_with`], for a server that asks for passwords: the superuser
    /// `postgres` gets `password` (stored as scram-sha-256) and `hba` replaces pg_hba.conf
    /// before the first start (keep a `local ... trust` line to administer it through the
    /// socket).
    pub fn start_secured(
        port: u16,
        settings: &[(&str, &str)],
        password: &str,
        hba: &str,
    ) -> Result<LocalServer> {
        LocalServer::create(port, settings, Some((password, hba)))
    }

    fn create(
        port: u16,
        settings: &[(&str, &str)],
        secured: Option<(&str, &str)>,
    ) -> Result<LocalServer> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let bin = server_binaries()?;
        let root = std::env::temp_dir().join(format!(
            "gavel-pg-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let at = || format!("preparing {}", root.display());
        if root.exists() {
            std::fs::remove_dir_all(&root).doing(at())?;
        }
        std::fs::create_dir_all(&root).doing(at())?;
        let owner = postgres_owner()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid)).doing(format_args!(
                "handing {} to the postgres user",
                root.display()
            ))?;
        }
        let mut server = LocalServer {
            bin,
            root,
            owner,
            port,
            settings: settings
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            server: None,
        };
        let data = server.data_dir();
        let log_file = server.root.join("initdb.log");
        let log = std::fs::File::create(&log_file)
            .doing(format_args!("creating {}", log_file.display()))?;
        let mut initdb = server.command("initdb");
        initdb.args(["--no-sync", "-A", "trust"]);
        if let Some((password, _)) = secured {
            let file = server.root.join("pwfile");
            std::fs::write(&file, password).doing(format_args!("writing {}", file.display()))?;
            LocalServer::give(&file)?;
            initdb.arg("--pwfile").arg(&file);
        }
        let status = initdb
            .args(["-U", "postgres", "-E", "UTF8", "--no-instructions", "-D"])
            .arg(&data)
            .stdout(log.try_clone().doing("sharing initdb's log")?)
            .stderr(log)
            .status()
            .doing("running initdb")?;
        if !status.success() {
            return Err(Error::LocalServer(format!(
                "initdb failed: {}",
                read_log(&log_file)
            )));
        }
        if let Some((_, hba)) = secured {
            std::fs::write(data.join("pg_hba.conf"), hba).doing("writing pg_hba.conf")?;
        }
        server.resume()?;
        Ok(server)
    }

    fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.owner {
            command.uid(uid).gid(gid);
        }
        command.env_remove("PGDATA").stdin(Stdio::null());
        command
    }

    /// Hands a file to the user servers run as (as PostgreSQL wants of its key files).
    pub fn give(path: &Path) -> Result<()> {
        if let Some((uid, gid)) = postgres_owner()? {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).doing(format_args!(
                "handing {} to the postgres user",
                path.display()
            ))?;
        }
        Ok(())
    }

    /// A connection string for database `dbname` on this server, through its socket; read it
    /// with [`super::Target::exact`], so that no PG* variable, service or password file of the
    /// environment redirects it.
    pub fn url(&self, dbname: &str) -> String {
        format!(
            "host={} port={} user=postgres dbname={dbname}",
            self.root.display(),
            self.port
        )
    }

    /// The postmaster's process id while the server runs (the benchmarks sum the CPU of it and
    /// its children).
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Starts the server (again, after [`LocalServer::stop`]) and waits until it accepts
    /// connections.
    pub fn resume(&mut self) -> Result<()> {
        let data = self.data_dir();
        let _ = std::fs::remove_file(data.join("postmaster.pid"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.root.join("server.log"))
            .doing("opening the server's log")?;
        let mut command = self.command("postgres");
        command
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&self.root)
            .args(["-p", &self.port.to_string(), "-F"]);
        for (name, value) in &self.settings {
            command.arg("-c").arg(format!("{name}={value}"));
        }
        let child = command
            .stdout(log.try_clone().doing("sharing the server's log")?)
            .stderr(log)
            .spawn()
            .doing("starting postgres")?;
        self.server = Some(child);
        self.wait_ready()
    }

    fn wait_ready(&mut self) -> Result<()> {
        let pid_file = self.data_dir().join("postmaster.pid");
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&pid_file)
                && text
                    .lines()
                    .nth(7)
                    .is_some_and(|status| status.trim() == "ready")
            {
                return Ok(());
            }
            if let Some(child) = self.server.as_mut()
                && let Some(status) = child.try_wait().doing("waiting for postgres")?
            {
                return Err(Error::LocalServer(format!(
                    "postgres exited ({status}): {}",
                    read_log(&self.root.join("server.log"))
                )));
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err(Error::LocalServer(
                    "postgres did not become ready within 60 s".to_owned(),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn pg_ctl_stop(&self, mode: &str) -> std::io::Result<std::process::ExitStatus> {
        self.command("pg_ctl")
            .arg("stop")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-m", mode, "-w"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
    }

    /// Stops the server (fast shutdown: open connections are cut), keeping its data.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.server.take() else {
            return Ok(());
        };
        let status = self.pg_ctl_stop("fast").doing("running pg_ctl stop")?;
        if !status.success() {
            child.kill().doing("stopping postgres")?;
        }
        child.wait().doing("waiting for postgres to stop")?;
        Ok(())
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = self.pg_ctl_stop("immediate");
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn read_log(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The directory holding `initdb` and `postgres`: `pg_config --bindir`, else the newest
/// `/usr/lib/postgresql/*/bin`.
fn server_binaries() -> Result<PathBuf> {
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let mut candidates: Vec<PathBuf> = from_pg_config.into_iter().collect();
    if let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut found: Vec<PathBuf> = versions.flatten().map(|v| v.path().join("bin")).collect();
        found.sort();
        candidates.extend(found.into_iter().rev());
    }
    candidates
        .into_iter()
        .find(|dir| dir.join("initdb").exists() && dir.join("postgres").exists())
        .ok_or_else(|| {
            Error::LocalServer(
                "no PostgreSQL server binaries found (initdb and postgres): install the server \
                 package, e.g. `apt-get install postgresql`"
                    .to_owned(),
            )
        })
}

/// As root, the uid and gid of the `postgres` user, whom the server must run as.
fn postgres_owner() -> Result<Option<(u32, u32)>> {
    if effective_uid().doing("reading this process's user")? != 0 {
        return Ok(None);
    }
    users()
        .doing("reading /etc/passwd")?
        .into_iter()
        .find(|(name, _, _)| name == "postgres")
        .map(|(_, uid, gid)| Some((uid, gid)))
        .ok_or_else(|| {
            Error::LocalServer(
                "running as root, but there is no `postgres` user to run the server as".to_owned(),
            )
        })
}

fn effective_uid() -> std::io::Result<u32> {
    // /proc/self belongs to the effective user.
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m))
}

/// Name, uid and gid of every user in /etc/passwd.
fn users() -> std::io::Result<Vec<(String, u32, u32)>> {
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    Ok(passwd
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            Some((
                (*fields.first()?).to_owned(),
                fields.get(2)?.parse().ok()?,
                fields.get(3)?.parse().ok()?,
            ))
        })
        .collect())
}
