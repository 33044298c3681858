//! What a console's role may write, each table checked on its own: operator actions
//! (`debate_operator_actions`) and notes (`gavel_debate_notes`), so that a refusal names the
//! privileges it lacks on the table it is about.

use tokio_postgres::Client;

use super::error::{Doing, Result};
use super::{actions, notes};
use crate::domain::Access;

/// What this connection's role may write: operator actions and notes.
pub async fn access(client: &Client) -> Result<Access> {
    let (role, actions) = refused(client, "debate_operator_actions", &actions::INSERTED).await?;
    let (_, notes) = refused(client, "gavel_debate_notes", &notes::INSERTED).await?;
    Ok(Access {
        role,
        actions,
        notes,
    })
}

/// This connection's role, and why it may not write rows of `table` (`None` when it may): it
/// needs INSERT on the `inserted` columns, SELECT on the table (to read back what was written)
/// and USAGE on the sequence of `id`. When `id` takes its values from no serial or identity
/// sequence, that part cannot be checked: the role is taken as able to write, a warning is
/// logged, and a refused write says why.
async fn refused(
    client: &Client,
    table: &str,
    inserted: &[&str],
) -> Result<(String, Option<String>)> {
    let row = client
        .query_one(
            "SELECT session_user::text, \
                    bool_and(has_column_privilege($1::text, c, 'INSERT')), \
                    has_table_privilege($1::text, 'SELECT'), \
                    pg_get_serial_sequence($1::text, 'id'), \
                    has_sequence_privilege(pg_get_serial_sequence($1::text, 'id'), 'USAGE') \
             FROM unnest($2::text[]) AS c",
            &[&table, &inserted],
        )
        .await
        .doing(format_args!("checking the privileges on {table}"))?;
    let role: String = row.get(0);
    let insert: bool = row.get(1);
    let select: bool = row.get(2);
    let sequence: Option<String> = row.get(3);
    let usage: Option<bool> = row.get(4);
    let mut missing = Vec::new();
    if !insert {
        missing.push(format!("insert into {table}"));
    }
    if !select {
        missing.push(format!("select from {table}"));
    }
    match (&sequence, usage) {
        (Some(sequence), Some(false)) => missing.push(format!("use the sequence {sequence}")),
        (None, _) => tracing::warn!(
            "{table}.id has no serial or identity sequence: whether role {role} may draw its \
             values is not checked"
        ),
        _ => {}
    }
    let why =
        (!missing.is_empty()).then(|| format!("role {role} cannot {}", missing.join(", nor ")));
    Ok((role, why))
}
