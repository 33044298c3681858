//! The database side: a fresh migrated database on the throwaway server, the probe debates
//! that carry the markers, and the load. A generated debate is a running, gated session, its
//! turns (2 personas a round, about 200 bytes each), a `continue_baseline` decision a round with
//! every signal key of the contract, then (for the load) its session completed. Writers send
//! whole debates as multi-row INSERTs in one transaction, paced to a rate of turns or held back
//! while gavel lags.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use gavel::store::postgres::{LocalServer, migrate};
use tokio_postgres::{Client, NoTls, Statement};

use super::markers::{Markers, Observer, now_ns};

const PERSONAS: [&str; 2] = ["theorist", "skeptic"];
/// Rounds a probe debate takes before the next probe takes over (gavel's default bound).
pub const PROBE_ROUNDS: u64 = 10_000;

/// Creates database `name` on `server`, migrates it, and returns its connection string.
pub async fn fresh(server: &LocalServer, name: &str) -> Result<String> {
    connect(&server.url("postgres"))
        .await?
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .with_context(|| format!("creating database {name}"))?;
    let url = server.url(name);
    migrate(&mut connect(&url).await?).await?;
    if rows_in_notifications() {
        connect(&url)
            .await?
            .batch_execute(&format!("ALTER DATABASE {name} SET gavel.notify_rows = on"))
            .await
            .with_context(|| format!("carrying rows in {name}'s notifications"))?;
    }
    Ok(url)
}

/// Drops database `name` of `server`, ending whatever is still connected to it.
pub async fn drop_database(server: &LocalServer, name: &str) -> Result<()> {
    connect(&server.url("postgres"))
        .await?
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .with_context(|| format!("dropping database {name}"))
}

/// Whether `GAVEL_BENCH_NOTIFY_ROWS=on` asks for rows in notifications (the opt-in) in every
/// database the bench makes.
pub fn rows_in_notifications() -> bool {
    std::env::var("GAVEL_BENCH_NOTIFY_ROWS").is_ok_and(|v| v == "on")
}

/// A plain connection (no notifications wanted).
pub async fn connect(url: &str) -> Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    tokio::spawn(connection);
    Ok(client)
}

/// A marker: a round of the probe debate whose persona is its number.
const MARKER: &str = "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
                      tokens_used) VALUES ($1, $2, $3, 'marker', 1)";

/// A marker decided again: the decision of one of the probe debate's first
/// [`REDECIDED_ROUNDS`] rounds replaced as the contract says a round decided again is, its
/// verdict the marker's number.
const REDECIDED: &str = "INSERT INTO debate_round_decisions (session_id, round_index, decision, \
                         signal_json, decided_at) VALUES ($1, $2, 'continue_baseline', \
                         jsonb_build_object('verdict', $3::text), now()) \
                         ON CONFLICT (session_id, round_index) DO UPDATE SET \
                         decision = EXCLUDED.decision, signal_json = EXCLUDED.signal_json, \
                         decided_at = now()";

/// Rounds of the probe debate whose decisions are decided again, in turn.
const REDECIDED_ROUNDS: u64 = 20;

/// How the markers are written (`GAVEL_BENCH_PROBE`): each a new row, or each an existing row
/// written again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `insert` (the default): each marker a new round of the probe debate, its persona the
    /// marker.
    Insert,
    /// `redecide`: each marker the decision of one of the probe's first 20 rounds decided
    /// again (`INSERT ... ON CONFLICT DO UPDATE`), its verdict the marker.
    Redecide,
}

impl Pattern {
    pub fn from_env() -> Result<Pattern> {
        match std::env::var("GAVEL_BENCH_PROBE").as_deref() {
            Err(_) | Ok("insert") => Ok(Pattern::Insert),
            Ok("redecide") => Ok(Pattern::Redecide),
            Ok(other) => anyhow::bail!("GAVEL_BENCH_PROBE={other}: insert or redecide"),
        }
    }

    /// The table whose notifications of a probe debate are the markers.
    pub fn table(self) -> &'static str {
        match self {
            Pattern::Insert => "debate_rounds",
            Pattern::Redecide => "debate_round_decisions",
        }
    }

    fn statement(self) -> &'static str {
        match self {
            Pattern::Insert => MARKER,
            Pattern::Redecide => REDECIDED,
        }
    }
}

/// The marker writer: one connection, so markers commit in the order they are sent.
pub struct Probe {
    client: Client,
    pattern: Pattern,
    insert: Statement,
    markers: Markers,
    /// The first probe debate's id; the next are numbered after it (`probe1`, ...).
    name: String,
    /// The current probe debate, and the markers it holds.
    id: String,
    rounds: u64,
    /// The probe debates started.
    debates: u64,
}

impl Probe {
    /// Creates the first probe debate, `probe`.
    pub async fn create(url: &str, markers: Markers) -> Result<Probe> {
        Probe::create_named(url, markers, "probe").await
    }

    /// Creates the first probe debate, `name` (which starts with `probe`, as the bare listeners
    /// expect): a database of several has one of its own.
    pub async fn create_named(url: &str, markers: Markers, name: &str) -> Result<Probe> {
        let pattern = Pattern::from_env()?;
        let client = connect(url).await?;
        let insert = client.prepare(pattern.statement()).await?;
        let mut probe = Probe {
            client,
            pattern,
            insert,
            markers,
            name: name.to_owned(),
            id: String::new(),
            rounds: 0,
            debates: 0,
        };
        probe.start(name.to_owned()).await?;
        if pattern == Pattern::Redecide {
            probe.decide_first_rounds().await?;
        }
        Ok(probe)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// How many probe debates it started.
    pub fn debates(&self) -> u64 {
        self.debates
    }

    async fn start(&mut self, id: String) -> Result<()> {
        self.client
            .execute(
                "INSERT INTO debate_sessions (id, question, status, controller_mode, max_rounds) \
                 VALUES ($1, 'latency probe', 'running', 'gated', $2)",
                &[&id, &(PROBE_ROUNDS as i32)],
            )
            .await
            .with_context(|| format!("creating probe debate {id}"))?;
        self.id = id;
        self.rounds = 0;
        self.debates += 1;
        Ok(())
    }

    /// Writes the rounds whose decisions the markers decide again, each a turn and a first
    /// decision: written before the listeners start, so none of them counts as a marker.
    async fn decide_first_rounds(&self) -> Result<()> {
        self.client
            .execute(
                "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
                 tokens_used) SELECT $1, r, 'theorist', 'a round decided again', 1 \
                 FROM generate_series(1, $2::int) AS r",
                &[&self.id, &(REDECIDED_ROUNDS as i32)],
            )
            .await
            .context("writing the rounds decided again")?;
        self.client
            .execute(
                "INSERT INTO debate_round_decisions (session_id, round_index, decision, \
                 signal_json) SELECT $1, r, 'continue_baseline', '{\"verdict\": \"first\"}' \
                 FROM generate_series(1, $2::int) AS r",
                &[&self.id, &(REDECIDED_ROUNDS as i32)],
            )
            .await
            .context("deciding the rounds decided again")?;
        Ok(())
    }

    /// Connects again (after the server restarted), going on with the same probe debate.
    pub async fn reconnect(&mut self, url: &str) -> Result<()> {
        let client = connect(url).await?;
        self.insert = client.prepare(self.pattern.statement()).await?;
        self.client = client;
        Ok(())
    }

    /// Sends the next marker; returns the id of a new probe debate when this one was full (the
    /// console has to jump to it).
    pub async fn send(&mut self) -> Result<Option<String>> {
        let mut started = None;
        if self.pattern == Pattern::Insert && self.rounds + 1 >= PROBE_ROUNDS {
            self.start(format!("{}{}", self.name, self.debates)).await?;
            started = Some(self.id.clone());
        }
        let k = self.markers.sending();
        self.rounds += 1;
        let round = match self.pattern {
            Pattern::Insert => self.rounds as i32,
            Pattern::Redecide => ((self.rounds - 1) % REDECIDED_ROUNDS + 1) as i32,
        };
        self.client
            .execute(&self.insert, &[&self.id, &round, &format!("mk{k:07}")])
            .await
            .context("sending a marker")?;
        Ok(started)
    }
}

/// Which debates come next: numbers handed to writers in chunks.
pub struct Debates {
    next: Mutex<u64>,
    turns_each: u64,
}

impl Debates {
    pub fn new(turns_each: u64) -> Debates {
        Debates {
            next: Mutex::new(1),
            turns_each,
        }
    }

    /// The next `count` debates, none at or beyond `end`.
    pub fn claim(&self, count: u64, end: u64) -> Option<Range<u64>> {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        let start = *next;
        (start < end).then(|| {
            *next = (start + count).min(end);
            start..*next
        })
    }

    /// The number the next debate will get.
    pub fn next(&self) -> u64 {
        *self.next.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How writers are held back.
pub enum Gate {
    /// At most this many turns per second, all writers together.
    Paced {
        turns_per_sec: f64,
        started: u64,
        reserved: AtomicU64,
    },
    /// As fast as they can while `Observer::GAVEL` is at most 1 s behind; a pause lasts 10 s at
    /// the most, so the stream always moves.
    Throttled { markers: Markers, paused: AtomicU64 },
}

impl Gate {
    pub fn paced(turns_per_sec: f64) -> Gate {
        Gate::Paced {
            turns_per_sec,
            started: now_ns(),
            reserved: AtomicU64::new(0),
        }
    }

    pub fn throttled(markers: Markers) -> Gate {
        Gate::Throttled {
            markers,
            paused: AtomicU64::new(0),
        }
    }

    /// How long writers were held back because gavel lagged, added up over the writers.
    pub fn paused(&self) -> Duration {
        match self {
            Gate::Throttled { paused, .. } => Duration::from_nanos(paused.load(Ordering::Relaxed)),
            Gate::Paced { .. } => Duration::ZERO,
        }
    }

    pub async fn pass(&self, turns: u64) {
        match self {
            Gate::Paced {
                turns_per_sec,
                started,
                reserved,
            } => {
                let before = reserved.fetch_add(turns, Ordering::Relaxed);
                let slot = started + (before as f64 / turns_per_sec * 1e9) as u64;
                let wait = slot.saturating_sub(now_ns());
                tokio::time::sleep(Duration::from_nanos(wait)).await;
            }
            Gate::Throttled { markers, paused } => {
                let since = now_ns();
                while markers.lag_ns(Observer::GAVEL) > 1_000_000_000
                    && now_ns() - since < 10_000_000_000
                {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                paused.fetch_add(now_ns() - since, Ordering::Relaxed);
            }
        }
    }
}

/// What a writer does: debates below `end`, until `deadline` (ns), `chunk` debates a
/// transaction, completed or left running.
#[derive(Clone, Copy)]
pub struct Plan {
    pub end: u64,
    pub deadline: u64,
    pub chunk: u64,
    pub finish: bool,
}

/// A load writer: its connection and statements.
pub struct Writer {
    client: Client,
    sessions: Statement,
    turns: Statement,
    decisions: Statement,
    finish: Statement,
}

impl Writer {
    pub async fn connect(url: &str) -> Result<Writer> {
        let client = connect(url).await?;
        let sessions = client
            .prepare(
                "INSERT INTO debate_sessions (id, question, status, controller_mode, personas) \
                 SELECT id, question, 'running', 'gated', '[\"theorist\", \"skeptic\"]' \
                 FROM unnest($1::text[], $2::text[]) AS t(id, question)",
            )
            .await?;
        let turns = client
            .prepare(
                "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
                 tokens_used) SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], \
                 $5::int[])",
            )
            .await?;
        let decisions = client
            .prepare(
                "INSERT INTO debate_round_decisions (session_id, round_index, decision, \
                 signal_json) SELECT s, r, 'continue_baseline', j::jsonb \
                 FROM unnest($1::text[], $2::int[], $3::text[]) AS t(s, r, j)",
            )
            .await?;
        let finish = client
            .prepare(
                "UPDATE debate_sessions SET status = 'completed', num_rounds = $2, \
                 finished_at = now() WHERE id = ANY($1)",
            )
            .await?;
        Ok(Writer {
            client,
            sessions,
            turns,
            decisions,
            finish,
        })
    }

    /// Writes debates as `plan` says, through `gate`; returns the turns written.
    pub async fn run(&self, debates: &Debates, gate: &Gate, plan: Plan) -> Result<u64> {
        let mut written = 0;
        while now_ns() < plan.deadline {
            let Some(range) = debates.claim(plan.chunk, plan.end) else {
                break;
            };
            let turns = (range.end - range.start) * debates.turns_each;
            gate.pass(turns).await;
            self.write(range, debates.turns_each, plan.finish).await?;
            written += turns;
        }
        Ok(written)
    }

    /// Debates `range` with `turns_each` turns, in one transaction.
    async fn write(&self, range: Range<u64>, turns_each: u64, finish: bool) -> Result<()> {
        let ids: Vec<String> = range.clone().map(|n| format!("d{n:07}")).collect();
        let questions: Vec<String> = range
            .clone()
            .map(|n| format!("Should trial {n} proceed to phase two?"))
            .collect();
        let rounds = turns_each.div_ceil(2);
        let mut turns = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut decisions = (Vec::new(), Vec::new(), Vec::new());
        for (id, n) in ids.iter().zip(range) {
            for t in 0..turns_each {
                let (round, persona) = ((t / 2 + 1) as i32, PERSONAS[(t % 2) as usize]);
                turns.0.push(id.clone());
                turns.1.push(round);
                turns.2.push(persona);
                turns.3.push(content(n, round, persona));
                turns.4.push(180 + (n % 40) as i32);
            }
            for round in 1..=rounds as i32 {
                decisions.0.push(id.clone());
                decisions.1.push(round);
                decisions.2.push(signals(n, round, rounds as i32));
            }
        }
        let client = &self.client;
        client.batch_execute("BEGIN").await?;
        client.execute(&self.sessions, &[&ids, &questions]).await?;
        client
            .execute(
                &self.turns,
                &[&turns.0, &turns.1, &turns.2, &turns.3, &turns.4],
            )
            .await?;
        client
            .execute(&self.decisions, &[&decisions.0, &decisions.1, &decisions.2])
            .await?;
        if finish {
            client
                .execute(&self.finish, &[&ids, &(rounds as i32)])
                .await?;
        }
        client
            .batch_execute("COMMIT")
            .await
            .context("writing debates")
    }
}

/// About 200 bytes of a turn.
pub fn content(n: u64, round: i32, persona: &str) -> String {
    format!(
        "{persona}, round {round} of debate {n}: the pooled effect is small and its interval \
         wide; two of the cited trials were unblinded, so the claim needs a replication before \
         anyone relies on it. Verdict: proceed with caution."
    )
}

/// A decision's signal_json with every key of the contract.
pub fn signals(n: u64, round: i32, rounds: i32) -> String {
    let similarity = ((n * 7 + round as u64) % 90) as f64 / 100.0;
    serde_json::json!({
        "similarity": similarity,
        "similarity_threshold": 0.9,
        "verdict": "proceed with caution",
        "previous_verdict": if round > 1 { Some("proceed with caution") } else { None },
        "verdict_stable": round > 1,
        "verdict_split": false,
        "new_claims": (n + round as u64) % 4,
        "novelty_threshold": 1,
        "open_disputes": 0,
        "tokens_used": 400 * round,
        "token_budget": 400 * rounds * 2,
        "escalate_persona": null,
        "reasons": [format!("round {round} is below min_rounds or not converged")],
    })
    .to_string()
}
