//! An orchestrator's write pattern, as a SciDEX-style orchestrator writes while its debates
//! run: a debate of [`ROUNDS`] rounds of the four [`PERSONAS`], its session row first, each
//! turn as it is spoken, the controller's decision after each round, then the session
//! completed; every row its own transaction (autocommit), as the rows are produced.
//! [`stream`] runs several such writers, each one debate at a time, their turns paced together
//! to a rate (the other rows follow their round).

use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::task::JoinSet;
use tokio_postgres::{Client, Statement};

use super::load::{self, Debates, Gate, content, signals};
use super::markers::now_ns;

pub const PERSONAS: [&str; 4] = ["theorist", "skeptic", "domain_expert", "synthesizer"];
pub const ROUNDS: i32 = 8;
/// Rows a debate writes: its session, its turns, a decision a round, its completion.
pub const ROWS_PER_DEBATE: u64 = 1 + PERSONAS.len() as u64 * ROUNDS as u64 + ROUNDS as u64 + 1;
/// Turns a debate speaks.
pub const TURNS_PER_DEBATE: u64 = PERSONAS.len() as u64 * ROUNDS as u64;
/// Connections writing at once (so about this many debates run at a time).
pub const WRITERS: usize = 8;

/// What a stream wrote.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written {
    pub turns: u64,
    pub rows: u64,
}

/// One writer: its connection and statements.
struct Orchestrator {
    client: Client,
    session: Statement,
    turn: Statement,
    decision: Statement,
    finish: Statement,
}

impl Orchestrator {
    async fn connect(url: &str) -> Result<Orchestrator> {
        let client = load::connect(url).await?;
        let session = client
            .prepare(
                "INSERT INTO debate_sessions (id, question, status, controller_mode, personas, \
                 max_rounds) VALUES ($1, $2, 'running', 'shadow', \
                 '[\"theorist\", \"skeptic\", \"domain_expert\", \"synthesizer\"]', $3)",
            )
            .await?;
        let turn = client
            .prepare(
                "INSERT INTO debate_rounds (session_id, round_number, agent_persona, content, \
                 tokens_used) VALUES ($1, $2, $3, $4, $5)",
            )
            .await?;
        let decision = client
            .prepare(
                "INSERT INTO debate_round_decisions (session_id, round_index, decision, \
                 signal_json) VALUES ($1, $2, $3, $4::text::jsonb)",
            )
            .await?;
        let finish = client
            .prepare(
                "UPDATE debate_sessions SET status = 'completed', num_rounds = $2, \
                 finished_at = now() WHERE id = $1",
            )
            .await?;
        Ok(Orchestrator {
            client,
            session,
            turn,
            decision,
            finish,
        })
    }

    /// Whole debates through `gate` until `deadline` (ns), looked at between debates: every
    /// debate begun is completed.
    async fn run(&self, debates: &Debates, gate: &Gate, deadline: u64) -> Result<Written> {
        let mut written = Written::default();
        while now_ns() < deadline {
            let Some(n) = debates.claim(1, u64::MAX) else {
                break;
            };
            self.debate(n.start, gate).await?;
            written.turns += TURNS_PER_DEBATE;
            written.rows += ROWS_PER_DEBATE;
        }
        Ok(written)
    }

    async fn debate(&self, n: u64, gate: &Gate) -> Result<()> {
        let id = format!("d{n:07}");
        let question = format!("Should trial {n} proceed to phase two?");
        let c = &self.client;
        c.execute(&self.session, &[&id, &question, &ROUNDS]).await?;
        for round in 1..=ROUNDS {
            for persona in PERSONAS {
                gate.pass(1).await;
                let tokens = 180 + (n % 40) as i32;
                let text = content(n, round, persona);
                c.execute(&self.turn, &[&id, &round, &persona, &text, &tokens])
                    .await?;
            }
            let decision = if round == ROUNDS {
                "stop_max_rounds"
            } else {
                "continue_baseline"
            };
            let json = signals(n, round, ROUNDS);
            c.execute(&self.decision, &[&id, &round, &decision, &json])
                .await?;
        }
        c.execute(&self.finish, &[&id, &ROUNDS])
            .await
            .with_context(|| format!("completing debate {id}"))?;
        Ok(())
    }
}

/// [`WRITERS`] orchestrator connections writing debates at `turns_per_sec` together until
/// `deadline` (ns); the future holds nothing borrowed, so markers may be sent meanwhile.
pub async fn stream(
    url: String,
    debates: Arc<Debates>,
    turns_per_sec: f64,
    deadline: u64,
) -> Result<Written> {
    let gate = Arc::new(Gate::paced(turns_per_sec));
    let mut tasks = JoinSet::new();
    for _ in 0..WRITERS {
        let writer = Orchestrator::connect(&url).await?;
        let (debates, gate) = (debates.clone(), gate.clone());
        tasks.spawn(async move { writer.run(&debates, &gate, deadline).await });
    }
    let mut total = Written::default();
    while let Some(written) = tasks.join_next().await {
        let written = written.context("a writer panicked")??;
        total.turns += written.turns;
        total.rows += written.rows;
    }
    Ok(total)
}
