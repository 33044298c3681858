//! The bare listeners, the floor gavel is measured against, each in a process of its own (so
//! its CPU and memory are its own): this bench binary run again with [`MODE`] set (one
//! tokio-postgres connection, `LISTEN gavel_events`, its messages polled directly —
//! `Connection::poll_message`: a spawned connection future drops notifications), and, when
//! `python3` has psycopg 3, the same in Python ([`PSYCOPG`]: what an orchestrator's own
//! listener would be). No fetch, no render. Each prints `ready`, then the CLOCK_MONOTONIC time
//! of every `debate_rounds` notification of a probe debate, one a line. The harness side reads
//! those lines as markers seen, in commit order.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use futures_util::StreamExt;
use tokio_postgres::{AsyncMessage, NoTls};

use super::load::Pattern;
use super::markers::{Markers, Observer, now_ns};

/// Set to a connection string, runs this binary as the bare listener.
pub const MODE: &str = "GAVEL_BENCH_LISTENER";

/// The psycopg listener, run by `python3 -c` with the connection string as its argument.
const PSYCOPG: &str = r#"
import json, sys, time
import psycopg
table = sys.argv[2]
conn = psycopg.connect(sys.argv[1], autocommit=True)
conn.execute("LISTEN gavel_events")
print("ready", flush=True)
for n in conn.notifies():
    at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    if "probe" in n.payload:
        v = json.loads(n.payload)
        if v.get("table") == table and str(v.get("session_id", "")).startswith("probe"):
            print(at, flush=True)
"#;

/// Which bare listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Tokio,
    Psycopg,
}

impl Kind {
    /// Whether this machine can run it (psycopg may not be installed).
    pub fn available(self) -> bool {
        self == Kind::Tokio
            || Command::new("python3")
                .args(["-c", "import psycopg"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    }

    pub fn observer(self) -> Observer {
        match self {
            Kind::Tokio => Observer::BARE,
            Kind::Psycopg => Observer::PSYCOPG,
        }
    }
}

/// The listener's own main: listens on `url` until killed or disconnected.
pub fn serve(url: &str) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let table = Pattern::from_env()?.table();
        let (client, mut connection) = tokio_postgres::connect(url, NoTls)
            .await
            .context("the bare listener cannot connect")?;
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        let driven = tokio::spawn(async move {
            while let Some(message) = messages.next().await {
                let at = now_ns();
                match message.context("the bare listener's connection")? {
                    AsyncMessage::Notification(n) if is_marker(n.payload(), table) => {
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "{at}")?;
                        out.flush()?;
                    }
                    _ => {}
                }
            }
            anyhow::Ok(())
        });
        client.batch_execute("LISTEN gavel_events").await?;
        println!("ready");
        driven.await?
    })
}

/// A row of `table` of a probe debate: `{"table" : "debate_rounds", "session_id" :
/// "probe...", ...}` (see [`Pattern::table`]).
fn is_marker(payload: &str, table: &str) -> bool {
    payload.contains("probe")
        && serde_json::from_str::<serde_json::Value>(payload).is_ok_and(|v| {
            v["table"] == table
                && v["session_id"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("probe"))
        })
}

/// The bare listener as the harness runs it; killed when dropped.
pub struct Bare {
    who: Observer,
    child: Child,
    failure: Arc<Mutex<Option<String>>>,
}

impl Bare {
    /// Starts the listener on `url` and waits (10 s at most) until it listens.
    pub fn spawn(kind: Kind, url: &str, markers: Markers) -> Result<Bare> {
        Bare::spawn_as(kind, url, markers, kind.observer())
    }

    /// The same, its receipts recorded as `who`'s.
    pub fn spawn_as(kind: Kind, url: &str, markers: Markers, who: Observer) -> Result<Bare> {
        let mut command = match kind {
            Kind::Tokio => {
                let mut command = Command::new(std::env::current_exe()?);
                command.env(MODE, format!("{url} application_name=bare"));
                command
            }
            Kind::Psycopg => {
                let mut command = Command::new("python3");
                command.args([
                    "-c",
                    PSYCOPG,
                    &format!("{url} application_name=bare"),
                    Pattern::from_env()?.table(),
                ]);
                command
            }
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start the bare listener")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let failure = Arc::new(Mutex::new(None));
        let (ready, listening) = mpsc::channel();
        let failed = failure.clone();
        std::thread::spawn(move || {
            if let Err(e) = read_lines(BufReader::new(stdout), (&markers, who), ready) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{e:#}"));
            }
        });
        let bare = Bare {
            who,
            child,
            failure,
        };
        listening
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| anyhow!("the bare listener did not listen within 10 s"))?;
        Ok(bare)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Who it is among the markers' observers.
    pub fn observer(&self) -> Observer {
        self.who
    }

    /// Fails if the listener printed something unreadable or went away.
    pub fn check(&mut self) -> Result<()> {
        if let Some(failure) = self
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            bail!("the bare listener: {failure}");
        }
        if let Some(status) = self.child.try_wait()? {
            bail!("the bare listener exited ({status})");
        }
        Ok(())
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(
    lines: impl BufRead,
    (markers, who): (&Markers, Observer),
    ready: mpsc::Sender<()>,
) -> Result<()> {
    let mut lines = lines.lines();
    match lines.next().transpose()? {
        Some(line) if line == "ready" => ready.send(())?,
        other => bail!("expected `ready`, got {other:?}"),
    }
    for line in lines {
        let line = line?;
        let at = line
            .parse()
            .with_context(|| format!("expected a time in ns, got {line:?}"))?;
        markers.seen_next(who, at);
    }
    bail!("its output ended")
}
