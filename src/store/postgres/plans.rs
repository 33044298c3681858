//! How the feed's reads by key are planned. Planned for its keys, a read costs the server its
//! planning every time (0.147 ms against 0.083 for a turn by id among 300,000, planning most of
//! the difference; a read of a small table planned for its keys, and prepared anew every fifth
//! read, took gavel's feed 0.50 ms against 0.23 kept); a plan kept instead is made once. A kept
//! plan is only safe where it looks the rows up by their key however the table grows: one made
//! while a table is small may scan it whole, or walk a whole index whose leading column is not
//! the key, and stays so as the table grows (once a 40 s stall). So a read keeps its plan only
//! where the generic plan PostgreSQL makes for it (for any key) looks rows up by an index that
//! leads with the key, and, while its table is small, only for a while:
//! - Once the table has [`MIN_PAGES`], for good: a scan of the table or a walk of an index only
//!   costs more against a key's lookup as it grows. A table that shrinks below the size its
//!   reads' plans were found right at has them looked at again.
//! - Below that, the plan found right may not stay so: the planner takes a table never analyzed
//!   for 10 pages at least, and once it is analyzed, a scan of its few pages may win when the
//!   server makes the plan again. So the statement is prepared anew at each look and once the
//!   notifications heard since name [`RENEWED`] rows of its table: whatever plan it runs was made
//!   at most that many rows, or one keepalive, ago, for a table that was small then.
//!
//! Sizes are looked at when the feed connects and at each keepalive. A read planned for its keys
//! is a prepared statement that serves five reads, the ones PostgreSQL plans for their
//! parameters before it would keep a plan of its own, and is then prepared anew, in the round
//! trip of its fifth read (a read sent as a statement of its own each time costs the server
//! more: parsing it).

use futures_util::future::try_join;
use serde_json::Value;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row, Statement};

use super::tables::{Key, Table};

/// Pages a table has before its reads keep their plans for good: past this, a lookup by a
/// unique key costs the planner less than any scan of the table (a scan of 16 pages and their
/// rows costs it about 28 against 8 for a lookup), and more so as it grows. Below it, a plan
/// found right may not stay so: the planner takes a table never analyzed for 10 pages at least,
/// and once it is analyzed, a scan of its few pages may win when the plan is made again.
pub(super) const MIN_PAGES: i64 = 16;

/// Rows of a small table whose notifications a read's kept plan serves before its statement is
/// prepared anew: a plan made while the table was small then scans at most the pages these rows
/// add (a page holds four rows at least, their long values stored apart: 16 pages), and
/// PostgreSQL plans five of the statement's reads for their keys, not all of them.
const RENEWED: usize = 64;

/// Reads PostgreSQL plans a prepared statement for their parameters before it may keep a plan
/// instead (`plan_cache_mode = auto`).
const PLANNED_RUNS: u8 = 5;

/// One read of a table by key: its statement, the types of its parameters, and how it is
/// planned.
pub(super) struct Read {
    sql: String,
    types: Vec<Type>,
    statement: Statement,
    plan: Plan,
}

/// How a read is planned.
enum Plan {
    /// For each read's keys: the statement serves [`PLANNED_RUNS`] reads at most, which the
    /// server plans for their keys, and is prepared anew in the round trip of the last of them.
    /// `runs`: the reads it has served; `tried`: the table's pages when a kept plan was last
    /// found wanting (a plan is tried again once the table has doubled).
    PerRead { runs: u8, tried: Option<i64> },
    /// Kept by the statement while its table is small (under [`MIN_PAGES`]), found right when
    /// last looked at: prepared anew at each look and once the notifications heard since name
    /// [`RENEWED`] rows of its table (`heard`).
    Renewed { heard: usize },
    /// Kept by the statement, found right when the table had `pages`.
    Kept { pages: i64 },
}

impl Read {
    /// The read `sql`, taking parameters of `types`, prepared, planned for each read until its
    /// table is looked at.
    pub(super) async fn prepare(
        client: &Client,
        sql: String,
        types: Vec<Type>,
    ) -> Result<Read, tokio_postgres::Error> {
        let statement = client.prepare_typed(&sql, &types).await?;
        Ok(Read {
            sql,
            types,
            statement,
            plan: Plan::PerRead {
                runs: 0,
                tried: None,
            },
        })
    }

    /// The read's statement prepared anew: no plan kept yet.
    async fn fresh(&self, client: &Client) -> Result<Statement, tokio_postgres::Error> {
        client.prepare_typed(&self.sql, &self.types).await
    }

    /// The rows the read finds for `params` (of its types), for notifications that named
    /// `named` rows of its table.
    pub(super) async fn query(
        &mut self,
        client: &Client,
        params: &[&(dyn ToSql + Sync)],
        named: usize,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let renew = match &mut self.plan {
            Plan::Kept { .. } => false,
            Plan::Renewed { heard } => {
                *heard = heard.saturating_add(named);
                *heard >= RENEWED
            }
            Plan::PerRead { runs, .. } => {
                // A statement whose last read's fresh one failed is not run again.
                if *runs >= PLANNED_RUNS {
                    self.statement = client.prepare_typed(&self.sql, &self.types).await?;
                    *runs = 0;
                }
                *runs += 1;
                *runs >= PLANNED_RUNS
            }
        };
        if !renew {
            return client.query(&self.statement, params).await;
        }
        let (rows, fresh) = try_join(
            client.query(&self.statement, params),
            client.prepare_typed(&self.sql, &self.types),
        )
        .await?;
        self.statement = fresh;
        match &mut self.plan {
            Plan::Renewed { heard } => *heard = 0,
            Plan::PerRead { runs, .. } => *runs = 0,
            Plan::Kept { .. } => {}
        }
        Ok(rows)
    }
}

/// The pages of each of `tables`, in order.
pub(super) async fn pages(
    client: &Client,
    tables: &[&Table],
) -> Result<Vec<i64>, tokio_postgres::Error> {
    let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
    let rows = client
        .query(
            "SELECT pg_relation_size(name::regclass) / current_setting('block_size')::bigint \
             FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n) ORDER BY n",
            &[&names],
        )
        .await?;
    rows.iter().map(|row| row.try_get(0)).collect()
}

/// Brings the plans of `reads`, the reads of `table` (now of `pages`), up to date: a kept plan
/// whose table shrank below the size it was found right at is looked at again; a plan kept
/// while the table is small is made anew, and looked at again once it no longer is; a read
/// planned for each read's keys tries for a kept plan again once the table has twice the pages
/// it had when the plan was found wanting. `tries` counts the tries, and names the statements
/// they prepare to look at the plans.
pub(super) async fn look_at(
    client: &mut Client,
    table: &Table,
    reads: [&mut Read; 2],
    pages: i64,
    tries: &mut u64,
) -> Result<(), tokio_postgres::Error> {
    let mut leading = None;
    for read in reads {
        let again = match read.plan {
            // Its table shrank: a plan the server made since may be wrong once it grows back.
            Plan::Kept { pages: found_at } => pages < found_at,
            // The server may have made it again since, once the table was analyzed.
            Plan::Renewed { .. } if pages < MIN_PAGES => {
                read.statement = read.fresh(client).await?;
                read.plan = Plan::Renewed { heard: 0 };
                false
            }
            Plan::Renewed { .. } => true,
            // An empty table counts as one page: its plan is not looked at every keepalive.
            Plan::PerRead { tried, .. } => {
                tried.is_none_or(|tried| pages >= tried.max(1).saturating_mul(2))
            }
        };
        if !again {
            continue;
        }
        let leading = match &leading {
            Some(leading) => leading,
            None => leading.insert(leading_columns(client, table).await?),
        };
        *tries += 1;
        let plan = generic_plan(client, &read.sql, read.types.len(), *tries).await?;
        if looks_up_by_key(&plan, table, leading) {
            read.statement = read.fresh(client).await?;
            read.plan = match pages < MIN_PAGES {
                true => Plan::Renewed { heard: 0 },
                false => Plan::Kept { pages },
            };
            continue;
        }
        tracing::debug!(
            "{}: reads planned for their keys ({pages} pages)",
            table.name
        );
        // The reads a statement planned for their keys served so far still count.
        if let Plan::PerRead { tried, .. } = &mut read.plan {
            *tried = Some(pages);
            continue;
        }
        read.statement = read.fresh(client).await?;
        read.plan = Plan::PerRead {
            runs: 0,
            tried: Some(pages),
        };
    }
    Ok(())
}

/// Each index of `table` with its leading column.
async fn leading_columns(
    client: &Client,
    table: &Table,
) -> Result<Vec<(String, String)>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT index.relname::text, a.attname::text FROM pg_index i \
             JOIN pg_class index ON index.oid = i.indexrelid \
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] \
             WHERE i.indrelid = $1::text::regclass",
            &[&table.name],
        )
        .await?;
    rows.iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect()
}

/// The plan PostgreSQL would keep for `sql` (with `params` parameters) now, as `EXPLAIN`'s
/// JSON: prepared as statement `gavel_plan_<n>` in a transaction that asks for the generic
/// plan, then let go.
async fn generic_plan(
    client: &mut Client,
    sql: &str,
    params: usize,
    n: u64,
) -> Result<Value, tokio_postgres::Error> {
    let name = format!("gavel_plan_{n}");
    let nulls = vec!["NULL"; params].join(", ");
    let tx = client.transaction().await?;
    tx.batch_execute(&format!(
        "SET LOCAL plan_cache_mode = force_generic_plan; PREPARE {name} AS {sql}"
    ))
    .await?;
    let plan: Value = tx
        .query_one(
            &format!("EXPLAIN (FORMAT JSON) EXECUTE {name}({nulls})"),
            &[],
        )
        .await?
        .try_get(0)?;
    tx.batch_execute(&format!("DEALLOCATE {name}")).await?;
    tx.commit().await?;
    Ok(plan)
}

/// Whether `plan` (`EXPLAIN`'s JSON) reads `table` only by an index that leads with the
/// table's key (`leading`: each index's leading column), never scanning it whole.
fn looks_up_by_key(plan: &Value, table: &Table, leading: &[(String, String)]) -> bool {
    let key = match table.key {
        Key::Debate | Key::Id => "id",
        Key::Round => "session_id",
    };
    let mut nodes: Vec<&Value> = plan
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|top| top.get("Plan"))
        .collect();
    let mut by_key = false;
    while let Some(node) = nodes.pop() {
        let field = |name: &str| node.get(name).and_then(Value::as_str);
        if let Some(index) = field("Index Name") {
            let leads = leading
                .iter()
                .any(|(name, column)| name == index && column == key);
            if !leads {
                return false;
            }
            by_key = true;
        } else if field("Relation Name") == Some(table.name)
            && field("Node Type") != Some("Bitmap Heap Scan")
        {
            // A sequential scan, or any other read of the table not through an index.
            return false;
        }
        nodes.extend(
            node.get("Plans")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    }
    by_key
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::postgres::tables::{DECISIONS, TURNS};

    /// Each index of the turns' table with its leading column, as `leading_columns` reads them.
    fn turns_indexes() -> Vec<(String, String)> {
        [
            ("debate_rounds_pkey", "id"),
            ("debate_rounds_session", "session_id"),
        ]
        .map(|(index, column)| (index.to_owned(), column.to_owned()))
        .to_vec()
    }

    fn explained(plan: Value) -> Value {
        json!([{ "Plan": plan }])
    }

    #[test]
    fn a_plan_is_kept_only_where_it_looks_rows_up_by_an_index_leading_with_the_key() {
        let indexes = turns_indexes();
        let by_key = explained(json!({
            "Node Type": "Index Scan", "Relation Name": "debate_rounds",
            "Index Name": "debate_rounds_pkey", "Index Cond": "(id = $1)"
        }));
        assert!(looks_up_by_key(&by_key, &TURNS, &indexes));
        let bitmap = explained(json!({
            "Node Type": "Bitmap Heap Scan", "Relation Name": "debate_rounds",
            "Plans": [{ "Node Type": "Bitmap Index Scan", "Index Name": "debate_rounds_pkey" }]
        }));
        assert!(looks_up_by_key(&bitmap, &TURNS, &indexes));
        let sorted = explained(json!({
            "Node Type": "Sort",
            "Plans": [{ "Node Type": "Seq Scan", "Relation Name": "debate_rounds" }]
        }));
        assert!(
            !looks_up_by_key(&sorted, &TURNS, &indexes),
            "a scan of the table"
        );
        let walk = explained(json!({
            "Node Type": "Index Scan", "Relation Name": "debate_rounds",
            "Index Name": "debate_rounds_session", "Index Cond": "(id = $1)"
        }));
        assert!(
            !looks_up_by_key(&walk, &TURNS, &indexes),
            "a walk of another index"
        );
        let unknown = explained(json!({
            "Node Type": "Index Scan", "Relation Name": "debate_rounds",
            "Index Name": "an_index_not_read"
        }));
        assert!(!looks_up_by_key(&unknown, &TURNS, &indexes));
        assert!(!looks_up_by_key(&json!({}), &TURNS, &indexes), "no plan");
        let nothing = explained(json!({ "Node Type": "Result" }));
        assert!(
            !looks_up_by_key(&nothing, &TURNS, &indexes),
            "no read of the table"
        );
    }

    #[test]
    fn a_rounds_lookups_one_key_after_another_are_by_key() {
        let indexes = vec![(
            "debate_round_decisions_session_id_round_index_key".to_owned(),
            "session_id".to_owned(),
        )];
        let lateral = explained(json!({
            "Node Type": "Nested Loop",
            "Plans": [
                { "Node Type": "Function Scan", "Function Name": "unnest" },
                { "Node Type": "Subquery Scan", "Plans": [{
                    "Node Type": "Index Scan",
                    "Relation Name": "debate_round_decisions",
                    "Index Name": "debate_round_decisions_session_id_round_index_key"
                }]}
            ]
        }));
        assert!(looks_up_by_key(&lateral, &DECISIONS, &indexes));
    }
}
