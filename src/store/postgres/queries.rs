//! The reads gavel makes: a window of recent debates at start, one debate's history on demand,
//! the rows a batch of notifications names, and everything stamped since a watermark; each
//! built from the tables' descriptors (`tables`).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use futures_util::TryStreamExt;
use futures_util::future::{try_join, try_join_all};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, GenericClient, IsolationLevel};

use super::error::{Doing, Error, Result};
use super::payload::Notice;
use super::plans::{self, Read};
use super::rows;
use super::tables::{self, Key, SESSIONS, Table};
use crate::domain::{Change, Debate, Debates, Limits, Stored};

/// The oldest transaction that was still running at a sync: every row stamped by it or a later
/// transaction may not have been seen yet.
pub(crate) type Watermark = u64;

/// A query's parameters.
type Params<'a> = [&'a (dyn ToSql + Sync)];

/// The rows of `table` matching `filter`, in the table's order.
async fn select<C: GenericClient>(
    client: &C,
    table: &Table,
    filter: &str,
    params: &Params<'_>,
    limits: &Limits,
) -> Result<Vec<Change>> {
    read_with(client, table, &table.select(filter), params, |row| {
        table.read(row, limits)
    })
    .await
}

/// The rows `sql` reads from `table`, each made what `read` makes of it.
async fn read_with<C: GenericClient, T>(
    client: &C,
    table: &Table,
    sql: &str,
    params: &Params<'_>,
    read: impl Fn(&tokio_postgres::Row) -> T,
) -> Result<Vec<T>> {
    let rows = client
        .query(sql, params)
        .await
        .doing(format_args!("reading {}", table.name))?;
    Ok(rows.iter().map(read).collect())
}

/// The rows of every table of `tables` that match `filter` (with the same parameters), table
/// after table.
async fn each_table<C: GenericClient>(
    client: &C,
    tables: &[&Table],
    filter: &str,
    params: &Params<'_>,
    limits: &Limits,
) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for table in tables {
        changes.extend(select(client, table, filter, params, limits).await?);
    }
    Ok(changes)
}

/// A read-only transaction that sees one consistent snapshot of every table.
async fn snapshot(client: &mut Client) -> Result<tokio_postgres::Transaction<'_>> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .doing("starting a read-only snapshot")
}

/// The oldest transaction still running now (see [`Watermark`]).
pub(crate) async fn watermark<C: GenericClient>(client: &C) -> Result<Watermark> {
    let row = client
        .query_one("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", &[])
        .await
        .doing("reading the snapshot's xmin")?;
    let raw: String = row.get(0);
    raw.parse()
        .map_err(|_| Error::Inconsistent(format!("the snapshot's xmin {raw:?} is not a number")))
}

/// At start: the running debates and the `window` most recent ones, with the rows their list
/// summaries need (decisions, actions, the judge's aborts: see [`Table::listed`]); every row
/// of the running ones (the rest load when opened).
pub(crate) async fn initial(
    client: &mut Client,
    window: i64,
    limits: &Limits,
) -> Result<(Vec<Change>, Watermark)> {
    let tx = snapshot(client).await?;
    let mark = watermark(&tx).await?;
    let mut changes = select(
        &tx,
        &SESSIONS,
        "status = 'running' OR id IN \
         (SELECT id FROM debate_sessions ORDER BY created_at DESC NULLS LAST LIMIT $1) \
         ORDER BY debate_sessions.created_at NULLS FIRST, debate_sessions.id",
        &[&window],
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
    for table in tables::ROUNDS {
        let rows = match table.listed {
            Some(listed) => {
                let filter = format!("session_id = ANY($1) OR (session_id = ANY($2) AND {listed})");
                select(&tx, table, &filter, &[&running, &ids], limits).await?
            }
            None => select(&tx, table, "session_id = ANY($1)", &[&running], limits).await?,
        };
        changes.extend(rows);
    }
    tx.commit().await.doing("ending the snapshot")?;
    Ok((changes, mark))
}

/// The rows of all five tables that match: `sessions` filters debate_sessions, `rows` the
/// other four; both take the one parameter `$1`.
async fn every_table<C: GenericClient>(
    client: &C,
    sessions: &str,
    rows: &str,
    param: &(dyn ToSql + Sync),
    limits: &Limits,
) -> Result<Vec<Change>> {
    let mut changes = select(client, &SESSIONS, sessions, &[param], limits).await?;
    changes.extend(each_table(client, &tables::ROUNDS, rows, &[param], limits).await?);
    Ok(changes)
}

/// Every row of one debate.
pub async fn history(client: &Client, session_id: &str, limits: &Limits) -> Result<Vec<Change>> {
    every_table(client, "id = $1", "session_id = $1", &session_id, limits).await
}

/// Debates found by a search: the most recent this many.
pub(crate) const SEARCH_LIMIT: i64 = 200;

/// The debates whose id, question, status, controller mode or roster contains `text` (in any
/// case), the most recent [`SEARCH_LIMIT`], with the rows a list needs of them (what the start
/// window loads of a finished debate; the rest loads when one is opened).
pub(super) async fn search(client: &Client, text: &str, limits: &Limits) -> Result<Vec<Change>> {
    let pattern = format!("%{}%", like_escaped(text));
    let mut changes = select(
        client,
        &SESSIONS,
        "id ILIKE $1 OR question ILIKE $1 OR status ILIKE $1 OR controller_mode ILIKE $1 \
         OR (status = 'completed' AND 'done' ILIKE $1) \
         OR personas::text ILIKE $1 \
         ORDER BY debate_sessions.created_at DESC NULLS LAST, debate_sessions.id LIMIT $2",
        &[&pattern, &SEARCH_LIMIT],
        limits,
    )
    .await?;
    let ids: Vec<String> = changes.iter().map(|c| c.session_id().to_owned()).collect();
    let keys: [&(dyn ToSql + Sync); 1] = [&ids];
    let listed: Vec<(&Table, String)> = tables::ROUNDS
        .into_iter()
        .filter_map(|table| {
            let listed = table.listed?;
            Some((table, format!("session_id = ANY($1) AND {listed}")))
        })
        .collect();
    let reads = listed
        .iter()
        .map(|(table, filter)| select(client, table, filter, &keys, limits));
    changes.extend(try_join_all(reads).await?.into_iter().flatten());
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
/// position among the session rows; `total` is told how many there are before the first.
/// Sessions, decisions, judgments and actions are read first; turns are streamed in debate
/// order, so a debate is handed on as soon as its last turn is read and only one debate's turns
/// are held here at a time.
pub async fn finished_debates(
    client: &mut Client,
    limits: &Limits,
    total: impl FnOnce(usize),
    mut each: impl FnMut(usize, Debate),
) -> Result<()> {
    let tx = snapshot(client).await?;
    let finished = "session_id IN (SELECT id FROM debate_sessions WHERE status <> $1)";
    let mut debates: Debates = select(&tx, &SESSIONS, "status <> $1", &[&"running"], limits)
        .await?
        .into_iter()
        .chain(each_table(&tx, &tables::RULINGS, finished, &[&"running"], limits).await?)
        .collect();
    total(debates.len());
    let mut handed = vec![false; debates.len()];
    let turns = tx
        .query_raw(
            &tables::TURNS.select_ordered(finished, &["session_id", "id"]),
            [&"running"],
        )
        .await
        .doing("reading debate_rounds")?;
    let mut turns = std::pin::pin!(turns);
    let mut current: Option<(usize, Debate)> = None;
    while let Some(row) = turns.try_next().await.doing("reading debate_rounds")? {
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
    tx.commit().await.doing("ending the snapshot")?;
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

/// The decisions, judgments, operator actions and notes made in `[since, until)` (either end open when
/// `None`), in one snapshot, each table ordered by debate, round and time; each read within
/// `limits` (its flags as every reader's) and with its round and `signal_json` as stored.
pub async fn audit_rows(
    client: &mut Client,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    limits: &Limits,
) -> Result<Vec<Stored>> {
    let tx = snapshot(client).await?;
    let mut stored = Vec::new();
    for table in tables::AUDITED {
        let Some(audit) = &table.audit else {
            continue;
        };
        let at = audit.written_at;
        let order: &[&str] = match audit.round {
            Some(_) => &["session_id", "round_index", at],
            None => &["session_id", at],
        };
        let sql = table.select_ordered(
            &format!(
                "($1::timestamptz IS NULL OR {at} >= $1) AND ($2::timestamptz IS NULL OR {at} < $2)"
            ),
            order,
        );
        let rows = read_with(&tx, table, &sql, &[&since, &until], |row| {
            table.stored(row, limits)
        })
        .await?;
        stored.extend(rows.into_iter().flatten());
    }
    tx.commit().await.doing("ending the snapshot")?;
    Ok(stored)
}

/// Every row stamped by a transaction at or after `since`, and the new watermark.
pub(crate) async fn changed_since(
    client: &mut Client,
    since: Watermark,
    limits: &Limits,
) -> Result<(Vec<Change>, Watermark)> {
    let tx = snapshot(client).await?;
    let mark = watermark(&tx).await?;
    let filter = "gavel_xid >= $1::text::xid8";
    let changes = every_table(&tx, filter, filter, &since.to_string(), limits).await?;
    tx.commit().await.doing("ending the snapshot")?;
    Ok((changes, mark))
}

/// The reads of the rows a batch of notifications names, two a table, in [`tables::ALL`] order,
/// each planned as [`plans`] finds safe (see [`Named::look_at_plans`]).
pub(crate) struct Named {
    statements: Vec<Reads>,
    /// The plans tried so far (naming the statements each try prepares).
    tries: u64,
}

/// A table's two reads by key: of a batch's keys, and of a lone key (the common case when rows
/// land one at a time), given as itself rather than as an array, which costs the server less
/// (measured in benches/runs/2026-11-26-373ad6b).
struct Reads {
    table: &'static Table,
    many: Read,
    one: Read,
}

/// Rows keyed by a debate and a round, given as two arrays, looked up one key after another
/// (`OFFSET 0` keeps the lookup from being flattened into a join). Planned for a batch's keys,
/// this costs the server 0.69-0.78x the CPU of the semi-join `(session_id, round_index) IN
/// (SELECT * FROM unnest(...))`: 87-126 µs against 125-174 µs for 1 to 8 decisions among 80,000.
fn by_round(table: &Table) -> String {
    let lookup = table.select("session_id = wanted.debate AND round_index = wanted.round");
    format!(
        "SELECT found.* FROM unnest($1::text[], $2::int[]) AS wanted(debate, round) \
         CROSS JOIN LATERAL ({lookup} OFFSET 0) AS found"
    )
}

impl Named {
    /// Every table's reads, prepared (one round trip), each planned for its keys until
    /// [`Named::look_at_plans`].
    pub(super) async fn prepare(client: &Client) -> Result<Named> {
        let prepared = tables::ALL.into_iter().map(|table| async move {
            let ((many, many_types), (one, one_types)) = match table.key {
                Key::Debate => (
                    (table.select("id = ANY($1::text[])"), vec![Type::TEXT_ARRAY]),
                    (table.select("id = $1::text"), vec![Type::TEXT]),
                ),
                Key::Id => (
                    (
                        table.select("id = ANY($1::bigint[])"),
                        vec![Type::INT8_ARRAY],
                    ),
                    (table.select("id = $1::bigint"), vec![Type::INT8]),
                ),
                Key::Round => (
                    (by_round(table), vec![Type::TEXT_ARRAY, Type::INT4_ARRAY]),
                    (
                        table.select("session_id = $1::text AND round_index = $2::int"),
                        vec![Type::TEXT, Type::INT4],
                    ),
                ),
            };
            let (many, one) = try_join(
                Read::prepare(client, many, many_types),
                Read::prepare(client, one, one_types),
            )
            .await?;
            Ok::<_, tokio_postgres::Error>(Reads { table, many, one })
        });
        let statements = try_join_all(prepared)
            .await
            .doing("preparing the feed's reads")?;
        Ok(Named {
            statements,
            tries: 0,
        })
    }

    /// Looks at the tables' sizes, and keeps the plans of the reads where that is safe, or
    /// stops keeping them (see [`plans`]): when the feed connects, and at each keepalive.
    pub(super) async fn look_at_plans(&mut self, client: &mut Client) -> Result<()> {
        let tables: Vec<&Table> = self.statements.iter().map(|reads| reads.table).collect();
        let sizes = plans::pages(client, &tables)
            .await
            .doing("reading the tables' sizes")?;
        for (reads, pages) in self.statements.iter_mut().zip(sizes) {
            let Reads { table, many, one } = reads;
            plans::look_at(client, table, [many, one], pages, &mut self.tries)
                .await
                .doing(format_args!("planning the reads of {}", table.name))?;
        }
        Ok(())
    }

    /// The rows a batch of notifications names, each read once, in table order. The reads go
    /// out together, so a batch costs one round trip.
    pub(super) async fn read(
        &mut self,
        client: &Client,
        notices: &BTreeSet<Notice>,
        limits: &Limits,
    ) -> Result<Vec<Change>> {
        let keys: Vec<Keys> = self
            .statements
            .iter()
            .map(|reads| Keys::of(reads.table, notices))
            .collect();
        let reads = self
            .statements
            .iter_mut()
            .zip(&keys)
            .filter(|(_, keys)| !keys.is_empty())
            .map(|(Reads { table, many, one }, keys)| async move {
                let named = notices.iter().filter(|n| n.table == table.name).count();
                let rows = match keys.lone() {
                    Some(key) => one.query(client, &key, named).await,
                    None => many.query(client, &keys.params(), named).await,
                }
                .doing(format_args!("reading {}", table.name))?;
                Ok::<Vec<Change>, Error>(rows.iter().map(|row| table.read(row, limits)).collect())
            });
        // Moved, not cloned as `concat` would: each row is read and built once.
        Ok(try_join_all(reads).await?.into_iter().flatten().collect())
    }
}

/// The keys of the rows of one table that a batch of notifications names, as the table's
/// statement takes them.
enum Keys<'a> {
    Debates(Vec<&'a str>),
    Ids(Vec<i64>),
    Rounds(Vec<&'a str>, Vec<i32>),
}

impl<'a> Keys<'a> {
    /// Each key once: notices that differ elsewhere (a forged field) may name the same row, a
    /// round's key is looked up on its own (see [`by_round`]), and a row named twice is still a
    /// lone row.
    fn of(table: &Table, notices: &'a BTreeSet<Notice>) -> Keys<'a> {
        /// The keys in order, each once.
        fn distinct<T: Ord>(keys: impl Iterator<Item = T>) -> Vec<T> {
            keys.collect::<BTreeSet<T>>().into_iter().collect()
        }
        let named = notices.iter().filter(|n| n.table == table.name);
        match table.key {
            Key::Debate => Keys::Debates(distinct(named.filter_map(|n| n.session_id.as_deref()))),
            Key::Id => Keys::Ids(distinct(named.filter_map(|n| n.id))),
            Key::Round => {
                let pairs = named.filter_map(|n| Some((n.session_id.as_deref()?, n.round_index?)));
                let (debates, rounds) = distinct(pairs).into_iter().unzip();
                Keys::Rounds(debates, rounds)
            }
        }
    }

    /// No key: the table has nothing to read.
    fn is_empty(&self) -> bool {
        match self {
            Keys::Debates(ids) => ids.is_empty(),
            Keys::Ids(ids) => ids.is_empty(),
            Keys::Rounds(debates, _) => debates.is_empty(),
        }
    }

    /// The keys as the table's statement of a batch takes them: one array a key column.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        match self {
            Keys::Debates(ids) => vec![ids],
            Keys::Ids(ids) => vec![ids],
            Keys::Rounds(debates, rounds) => vec![debates, rounds],
        }
    }

    /// The one key, as the table's statement of a lone key takes it; `None` unless there is
    /// exactly one.
    fn lone(&self) -> Option<Vec<&(dyn ToSql + Sync)>> {
        /// The one key of `keys`; `None` unless there is exactly one.
        fn only<T>(keys: &[T]) -> Option<&T> {
            match keys {
                [key] => Some(key),
                _ => None,
            }
        }
        Some(match self {
            Keys::Debates(ids) => vec![only(ids)?],
            Keys::Ids(ids) => vec![only(ids)?],
            Keys::Rounds(debates, rounds) => vec![only(debates)?, only(rounds)?],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Notices that differ only where a round's key does not look (here a forged `id`) name
    /// the round once: each pair is looked up on its own, so a pair given twice is read twice.
    #[test]
    fn a_round_named_by_many_notices_is_looked_up_once() {
        let notices: BTreeSet<Notice> = (0..2_000)
            .map(|id| {
                Notice::parse(&format!(
                    r#"{{"table":"debate_round_decisions","session_id":"s1","round_index":2,"id":{id}}}"#
                ))
                .unwrap()
            })
            .chain([Notice::parse(
                r#"{"table":"debate_round_decisions","session_id":"s1","round_index":3}"#,
            )
            .unwrap()])
            .collect();
        let keys = Keys::of(&tables::DECISIONS, &notices);
        match &keys {
            Keys::Rounds(debates, rounds) => {
                assert_eq!(debates, &["s1", "s1"]);
                assert_eq!(rounds, &[2, 3]);
            }
            _ => panic!("decisions are keyed by round"),
        }
        assert!(keys.lone().is_none(), "two rounds are a batch's");
    }

    /// `notice` with a field its table's key does not look at changed.
    fn forged(notice: &Notice) -> Notice {
        let mut forged = notice.clone();
        match Table::named(&notice.table).map(|t| t.key) {
            Some(Key::Id) => forged.session_id = Some("forged".to_owned()),
            _ => forged.id = Some(99),
        }
        forged
    }

    /// A batch that names one row of a table reads it by its key alone; two, by the arrays.
    #[test]
    fn one_row_is_read_by_its_key_and_more_by_the_arrays() {
        let cases = [
            (
                &tables::SESSIONS,
                [r#""session_id":"s1""#, r#""session_id":"s2""#],
                r#"["s1"]"#,
            ),
            (&tables::TURNS, [r#""id":7"#, r#""id":8"#], "[7]"),
            (
                &tables::DECISIONS,
                [
                    r#""session_id":"s1","round_index":2"#,
                    r#""session_id":"s2","round_index":2"#,
                ],
                r#"["s1", 2]"#,
            ),
        ];
        for (table, keys, lone) in cases {
            let notices: Vec<Notice> = keys
                .iter()
                .map(|key| {
                    Notice::parse(&format!(r#"{{"table":"{}",{key}}}"#, table.name)).unwrap()
                })
                .collect();
            let one: BTreeSet<Notice> = notices[..1].iter().cloned().collect();
            let read = Keys::of(table, &one).lone().map(|key| format!("{key:?}"));
            assert_eq!(read.as_deref(), Some(lone), "{}", table.name);
            let both: BTreeSet<Notice> = notices.into_iter().collect();
            assert!(Keys::of(table, &both).lone().is_none(), "{}", table.name);
            // Named again by a notice that differs where the key does not look: still one row.
            let again: BTreeSet<Notice> = one
                .iter()
                .cloned()
                .chain([forged(one.first().unwrap())])
                .collect();
            assert_eq!(again.len(), 2, "{}", table.name);
            let read = Keys::of(table, &again).lone().map(|key| format!("{key:?}"));
            assert_eq!(read.as_deref(), Some(lone), "{}", table.name);
        }
    }
}
