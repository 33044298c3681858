//! The reads gavel makes: a window of recent debates at start, one debate's history on demand,
//! the rows a batch of notifications names, and everything stamped since a watermark.

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use futures_util::TryStreamExt;
use futures_util::future::try_join5;
use serde::Deserialize;
use tokio_postgres::{Client, GenericClient, IsolationLevel, Statement};

use super::rows::{
    self, ACTION_COLUMNS, DECISION_COLUMNS, JUDGMENT_COLUMNS, SESSION_COLUMNS, TURN_COLUMNS,
};
use crate::domain::{Change, Debate, Debates, Limits, Stored};

/// The oldest transaction that was still running at a sync: every row stamped by it or a later
/// transaction may not have been seen yet.
pub type Watermark = u64;

/// The row a notification names (see the migration for the payload).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub struct Notice {
    pub table: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub round_index: Option<i32>,
    /// The key did not fit in a payload: read everything since the watermark instead.
    #[serde(default)]
    pub resync: bool,
}

impl Notice {
    /// Reads a `gavel_events` payload (a JSON object); the error names what was wrong and where
    /// in it.
    pub fn parse(payload: &str) -> Result<Notice, String> {
        let wrong = |e: String| format!("not a gavel_events payload: {e}");
        match serde_json::from_str(payload).map_err(|e| wrong(e.to_string()))? {
            object @ serde_json::Value::Object(_) => {
                serde_json::from_value(object).map_err(|e| wrong(e.to_string()))
            }
            other => Err(wrong(format!(
                "expected a JSON object, found {}",
                crate::domain::limits::clip(&other.to_string())
            ))),
        }
    }
}

async fn select<C: GenericClient, T>(
    client: &C,
    table: &str,
    columns: &str,
    filter: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    read: fn(&tokio_postgres::Row, &Limits) -> T,
    limits: &Limits,
) -> Result<Vec<T>> {
    let sql = format!("SELECT {columns} FROM {table} WHERE {filter}");
    let rows = client
        .query(&sql, params)
        .await
        .with_context(|| format!("reading {table}"))?;
    Ok(rows.iter().map(|row| read(row, limits)).collect())
}

fn session(row: &tokio_postgres::Row, limits: &Limits) -> Change {
    Change::Session(rows::session(row, limits))
}
fn turn(row: &tokio_postgres::Row, limits: &Limits) -> Change {
    Change::Turn(rows::turn(row, limits))
}
fn decision(row: &tokio_postgres::Row, limits: &Limits) -> Change {
    Change::Decision(rows::decision(row, limits))
}
fn judgment(row: &tokio_postgres::Row, limits: &Limits) -> Change {
    Change::Judgment(rows::judgment(row, limits))
}
fn action(row: &tokio_postgres::Row, limits: &Limits) -> Change {
    Change::Action(rows::action(row, limits))
}
fn stored_decision(row: &tokio_postgres::Row, limits: &Limits) -> Stored {
    rows::stored(decision(row, limits), row, 1, Some(3))
}
fn stored_judgment(row: &tokio_postgres::Row, limits: &Limits) -> Stored {
    rows::stored(judgment(row, limits), row, 2, None)
}
fn stored_action(row: &tokio_postgres::Row, limits: &Limits) -> Stored {
    rows::stored(action(row, limits), row, 1, None)
}

/// A read-only transaction that sees one consistent snapshot of every table.
async fn snapshot(client: &mut Client) -> Result<tokio_postgres::Transaction<'_>> {
    Ok(client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?)
}

async fn watermark<C: GenericClient>(client: &C) -> Result<Watermark> {
    let row = client
        .query_one("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", &[])
        .await?;
    let raw: String = row.get(0);
    raw.parse().context("reading the snapshot's xmin")
}

/// At start: the running debates and the `window` most recent ones, with their decisions and
/// actions; turns and judgments only for the running ones (the rest load when opened).
pub async fn initial(
    client: &mut Client,
    window: i64,
    limits: &Limits,
) -> Result<(Vec<Change>, Watermark)> {
    let tx = snapshot(client).await?;
    let mark = watermark(&tx).await?;
    let mut changes = select(
        &tx,
        "debate_sessions",
        SESSION_COLUMNS,
        "status = 'running' OR id IN \
         (SELECT id FROM debate_sessions ORDER BY created_at DESC NULLS LAST LIMIT $1) \
         ORDER BY created_at NULLS FIRST, id",
        &[&window],
        session,
        limits,
    )
    .await?;
    let ids: Vec<String> = changes.iter().map(|c| c.session_id().to_owned()).collect();
    let running: Vec<String> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Session(s) if s.is_running() => Some(s.id.clone()),
            _ => None,
        })
        .collect();
    let by_session = "session_id = ANY($1)";
    changes.extend(
        select(
            &tx,
            "debate_rounds",
            TURN_COLUMNS,
            &format!("{by_session} ORDER BY id"),
            &[&running],
            turn,
            limits,
        )
        .await?,
    );
    changes.extend(
        select(
            &tx,
            "debate_round_decisions",
            DECISION_COLUMNS,
            by_session,
            &[&ids],
            decision,
            limits,
        )
        .await?,
    );
    changes.extend(
        select(
            &tx,
            "debate_round_judgments",
            JUDGMENT_COLUMNS,
            &format!("{by_session} ORDER BY id"),
            &[&running],
            judgment,
            limits,
        )
        .await?,
    );
    changes.extend(
        select(
            &tx,
            "debate_operator_actions",
            ACTION_COLUMNS,
            by_session,
            &[&ids],
            action,
            limits,
        )
        .await?,
    );
    tx.commit().await?;
    Ok((changes, mark))
}

/// The rows of all five tables that match: `sessions` filters debate_sessions, `rows` the
/// other four; both take the one parameter `$1`.
async fn every_table<C: GenericClient>(
    client: &C,
    sessions: &str,
    rows: &str,
    param: &(dyn tokio_postgres::types::ToSql + Sync),
    limits: &Limits,
) -> Result<Vec<Change>> {
    let mut changes = select(
        client,
        "debate_sessions",
        SESSION_COLUMNS,
        sessions,
        &[param],
        session,
        limits,
    )
    .await?;
    changes.extend(
        select(
            client,
            "debate_rounds",
            TURN_COLUMNS,
            &format!("{rows} ORDER BY id"),
            &[param],
            turn,
            limits,
        )
        .await?,
    );
    changes.extend(rulings(client, rows, param, limits).await?);
    Ok(changes)
}

/// The decisions, judgments and operator actions that match `rows` (which takes `$1`).
async fn rulings<C: GenericClient>(
    client: &C,
    rows: &str,
    param: &(dyn tokio_postgres::types::ToSql + Sync),
    limits: &Limits,
) -> Result<Vec<Change>> {
    let mut changes = select(
        client,
        "debate_round_decisions",
        DECISION_COLUMNS,
        rows,
        &[param],
        decision,
        limits,
    )
    .await?;
    changes.extend(
        select(
            client,
            "debate_round_judgments",
            JUDGMENT_COLUMNS,
            &format!("{rows} ORDER BY id"),
            &[param],
            judgment,
            limits,
        )
        .await?,
    );
    changes.extend(
        select(
            client,
            "debate_operator_actions",
            ACTION_COLUMNS,
            rows,
            &[param],
            action,
            limits,
        )
        .await?,
    );
    Ok(changes)
}

/// Every row of one debate.
pub async fn history(client: &Client, session_id: &str, limits: &Limits) -> Result<Vec<Change>> {
    every_table(client, "id = $1", "session_id = $1", &session_id, limits).await
}

/// Debates found by a search: the most recent this many.
pub const SEARCH_LIMIT: i64 = 200;

/// The debates whose id, question, status, controller mode or roster contains `text` (in any
/// case), the most recent [`SEARCH_LIMIT`], with their decisions and actions (what the start
/// window loads of a finished debate; the rest loads when one is opened).
pub async fn search(client: &Client, text: &str, limits: &Limits) -> Result<Vec<Change>> {
    let pattern = format!("%{}%", like_escaped(text));
    let mut changes = select(
        client,
        "debate_sessions",
        SESSION_COLUMNS,
        "id ILIKE $1 OR question ILIKE $1 OR status ILIKE $1 OR controller_mode ILIKE $1 \
         OR personas::text ILIKE $1 ORDER BY created_at DESC NULLS LAST, id LIMIT $2",
        &[&pattern, &SEARCH_LIMIT],
        session,
        limits,
    )
    .await?;
    let ids: Vec<String> = changes.iter().map(|c| c.session_id().to_owned()).collect();
    let of_ids = "session_id = ANY($1)";
    let keys: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&ids];
    let decisions = select(
        client,
        "debate_round_decisions",
        DECISION_COLUMNS,
        of_ids,
        &keys,
        decision,
        limits,
    );
    let actions = select(
        client,
        "debate_operator_actions",
        ACTION_COLUMNS,
        of_ids,
        &keys,
        action,
        limits,
    );
    let (decisions, actions) = futures_util::future::try_join(decisions, actions).await?;
    changes.extend(decisions);
    changes.extend(actions);
    Ok(changes)
}

/// `text` matched literally by LIKE: its wildcards and escape character escaped.
fn like_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Every debate that is no longer running, from one snapshot, handed to `each` with its
/// position among the session rows. Sessions, decisions, judgments and actions are read first;
/// turns are streamed in debate order, so a debate is handed on as soon as its last turn is
/// read and only one debate's turns are held here at a time.
pub async fn finished_debates(
    client: &mut Client,
    limits: &Limits,
    mut each: impl FnMut(usize, Debate),
) -> Result<()> {
    let tx = snapshot(client).await?;
    let finished = "session_id IN (SELECT id FROM debate_sessions WHERE status <> $1)";
    let mut debates: Debates = select(
        &tx,
        "debate_sessions",
        SESSION_COLUMNS,
        "status <> $1",
        &[&"running"],
        session,
        limits,
    )
    .await?
    .into_iter()
    .chain(rulings(&tx, finished, &"running", limits).await?)
    .collect();
    let mut handed = vec![false; debates.len()];
    let turns = tx
        .query_raw(
            &format!(
                "SELECT {TURN_COLUMNS} FROM debate_rounds WHERE {finished} ORDER BY session_id, id"
            ),
            [&"running"],
        )
        .await
        .context("reading debate_rounds")?;
    let mut turns = std::pin::pin!(turns);
    let mut current: Option<(usize, Debate)> = None;
    while let Some(row) = turns.try_next().await.context("reading debate_rounds")? {
        let turn = rows::turn(&row, limits);
        let Some(position) = debates.position(&turn.session_id) else {
            continue;
        };
        if current.as_ref().is_none_or(|(at, _)| *at != position) {
            if let Some((at, debate)) = current.take() {
                each(at, debate);
            }
            handed[position] = true;
            current = Some((position, debates.take(position)));
        }
        if let Some((_, debate)) = current.as_mut() {
            debate.apply(Change::Turn(turn));
        }
    }
    tx.commit().await?;
    if let Some((at, debate)) = current {
        each(at, debate);
    }
    for (position, handed) in handed.into_iter().enumerate() {
        if !handed {
            each(position, debates.take(position));
        }
    }
    Ok(())
}

/// The decisions, judgments and operator actions made in `[since, until)` (either end open when
/// `None`), in one snapshot, each table ordered by debate, round and time; each read within
/// `limits` (its flags as every reader's) and with its round and `signal_json` as stored.
pub async fn audit_rows(
    client: &mut Client,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    limits: &Limits,
) -> Result<Vec<Stored>> {
    let tx = snapshot(client).await?;
    let range = |column: &str| {
        format!(
            "($1::timestamptz IS NULL OR {column} >= $1) AND ($2::timestamptz IS NULL OR {column} < $2) \
             ORDER BY session_id, round_index, {column}"
        )
    };
    let mut stored = select(
        &tx,
        "debate_round_decisions",
        DECISION_COLUMNS,
        &range("decided_at"),
        &[&since, &until],
        stored_decision,
        limits,
    )
    .await?;
    stored.extend(
        select(
            &tx,
            "debate_round_judgments",
            JUDGMENT_COLUMNS,
            &range("created_at"),
            &[&since, &until],
            stored_judgment,
            limits,
        )
        .await?,
    );
    stored.extend(
        select(
            &tx,
            "debate_operator_actions",
            ACTION_COLUMNS,
            &range("created_at"),
            &[&since, &until],
            stored_action,
            limits,
        )
        .await?,
    );
    tx.commit().await?;
    Ok(stored)
}

/// Every row stamped by a transaction at or after `since`, and the new watermark.
pub async fn changed_since(
    client: &mut Client,
    since: Watermark,
    limits: &Limits,
) -> Result<(Vec<Change>, Watermark)> {
    let tx = snapshot(client).await?;
    let mark = watermark(&tx).await?;
    let filter = "gavel_xid >= $1::text::xid8";
    let changes = every_table(&tx, filter, filter, &since.to_string(), limits).await?;
    tx.commit().await?;
    Ok((changes, mark))
}

/// The statements that read the rows a batch of notifications names, prepared once per
/// connection: a statement prepared anew would cost a round trip of its own on every batch.
pub struct Named {
    sessions: Statement,
    turns: Statement,
    decisions: Statement,
    judgments: Statement,
    actions: Statement,
}

/// Rows keyed by a debate and a round, given as two arrays.
const BY_PAIR: &str = "(session_id, round_index) IN (SELECT * FROM unnest($1::text[], $2::int[]))";

impl Named {
    pub async fn prepare(client: &Client) -> Result<Named> {
        let sql = |table: &str, columns: &str, filter: &str| {
            format!("SELECT {columns} FROM {table} WHERE {filter}")
        };
        let sessions = sql("debate_sessions", SESSION_COLUMNS, "id = ANY($1::text[])");
        let turns = sql(
            "debate_rounds",
            TURN_COLUMNS,
            "id = ANY($1::bigint[]) ORDER BY id",
        );
        let decisions = sql("debate_round_decisions", DECISION_COLUMNS, BY_PAIR);
        let judgments = sql(
            "debate_round_judgments",
            JUDGMENT_COLUMNS,
            "id = ANY($1::bigint[]) ORDER BY id",
        );
        let actions = sql("debate_operator_actions", ACTION_COLUMNS, BY_PAIR);
        let (sessions, turns, decisions, judgments, actions) = try_join5(
            client.prepare(&sessions),
            client.prepare(&turns),
            client.prepare(&decisions),
            client.prepare(&judgments),
            client.prepare(&actions),
        )
        .await
        .context("preparing the feed's reads")?;
        Ok(Named {
            sessions,
            turns,
            decisions,
            judgments,
            actions,
        })
    }

    /// The rows a batch of notifications names, each read once, in table order. The reads go
    /// out together, so a batch costs one round trip.
    pub async fn read(
        &self,
        client: &Client,
        notices: &BTreeSet<Notice>,
        limits: &Limits,
    ) -> Result<Vec<Change>> {
        let of = |table: &'static str| notices.iter().filter(move |n| n.table == table);
        let sessions: Vec<String> = of("debate_sessions")
            .filter_map(|n| n.session_id.clone())
            .collect();
        let turns: Vec<i64> = of("debate_rounds").filter_map(|n| n.id).collect();
        let judgments: Vec<i64> = of("debate_round_judgments").filter_map(|n| n.id).collect();
        let pairs = |table: &'static str| -> (Vec<String>, Vec<i32>) {
            of(table)
                .filter_map(|n| Some((n.session_id.clone()?, n.round_index?)))
                .unzip()
        };
        let (decision_sessions, decision_rounds) = pairs("debate_round_decisions");
        let (action_sessions, action_rounds) = pairs("debate_operator_actions");
        let (sessions, turns, decisions, judgments, actions) = try_join5(
            read_named(
                client,
                ("debate_sessions", &self.sessions),
                &[&sessions],
                sessions.is_empty(),
                session,
                limits,
            ),
            read_named(
                client,
                ("debate_rounds", &self.turns),
                &[&turns],
                turns.is_empty(),
                turn,
                limits,
            ),
            read_named(
                client,
                ("debate_round_decisions", &self.decisions),
                &[&decision_sessions, &decision_rounds],
                decision_sessions.is_empty(),
                decision,
                limits,
            ),
            read_named(
                client,
                ("debate_round_judgments", &self.judgments),
                &[&judgments],
                judgments.is_empty(),
                judgment,
                limits,
            ),
            read_named(
                client,
                ("debate_operator_actions", &self.actions),
                &[&action_sessions, &action_rounds],
                action_sessions.is_empty(),
                action,
                limits,
            ),
        )
        .await?;
        Ok([sessions, turns, decisions, judgments, actions].concat())
    }
}

/// One of [`Named`]'s reads; nothing is sent when no row is named.
async fn read_named(
    client: &Client,
    (table, statement): (&str, &Statement),
    keys: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    none: bool,
    row: fn(&tokio_postgres::Row, &Limits) -> Change,
    limits: &Limits,
) -> Result<Vec<Change>> {
    if none {
        return Ok(Vec::new());
    }
    let rows = client
        .query(statement, keys)
        .await
        .with_context(|| format!("reading {table}"))?;
    Ok(rows.iter().map(|r| row(r, limits)).collect())
}
