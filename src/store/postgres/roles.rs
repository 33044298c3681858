//! The two roles gavel's users are granted: [`VIEWER_ROLE`] watches (SELECT on the contract's
//! tables; LISTEN needs no privilege in PostgreSQL) and [`OPERATOR_ROLE`] also records operator
//! actions (INSERT on the columns gavel writes of debate_operator_actions, and its sequence).
//! Neither may UPDATE or DELETE anything; the audit trail's triggers refuse that to every role.
//! Both are NOLOGIN group roles: login roles become viewers or operators by membership, so the
//! role stamped on an action (`session_user`) is the person's own.

use anyhow::{Context, Result};
use tokio_postgres::Client;

/// The group role of those who watch.
pub const VIEWER_ROLE: &str = "gavel_viewer";
/// The group role of those who also resolve decisions.
pub const OPERATOR_ROLE: &str = "gavel_operator";

/// Creates the two roles when missing and grants them their privileges on this database's
/// tables (roles are the cluster's, privileges each database's). Idempotent; needs CREATEROLE
/// (or a superuser) and ownership of the tables.
pub async fn ensure_roles(client: &Client) -> Result<()> {
    client
        .batch_execute(&format!(
            "DO $$
             BEGIN
                 IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{VIEWER_ROLE}') THEN
                     CREATE ROLE {VIEWER_ROLE} NOLOGIN;
                 END IF;
                 IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{OPERATOR_ROLE}') THEN
                     CREATE ROLE {OPERATOR_ROLE} NOLOGIN;
                 END IF;
             EXCEPTION WHEN duplicate_object OR unique_violation THEN
                 NULL; -- another gavel created them at the same moment
             END
             $$;
             DO $$
             DECLARE
                 ids text := pg_get_serial_sequence('debate_operator_actions', 'id');
             BEGIN
                 EXECUTE format('GRANT CONNECT ON DATABASE %I TO {VIEWER_ROLE}', current_database());
                 EXECUTE format('GRANT USAGE ON SCHEMA %I TO {VIEWER_ROLE}', current_schema());
                 IF ids IS NOT NULL THEN
                     EXECUTE format('GRANT USAGE ON SEQUENCE %s TO {OPERATOR_ROLE}', ids);
                 END IF;
             END
             $$;
             GRANT SELECT ON debate_sessions, debate_rounds, debate_round_decisions,
                 debate_round_judgments, debate_operator_actions TO {VIEWER_ROLE};
             GRANT {VIEWER_ROLE} TO {OPERATOR_ROLE};
             GRANT INSERT (session_id, round_index, action, decision, persona, operator, note)
                 ON debate_operator_actions TO {OPERATOR_ROLE};"
        ))
        .await
        .with_context(|| format!("setting up the roles {VIEWER_ROLE} and {OPERATOR_ROLE}"))
}

/// Makes each of `viewers` a viewer and each of `operators` an operator (after
/// [`ensure_roles`]).
pub async fn grant(client: &Client, viewers: &[String], operators: &[String]) -> Result<()> {
    ensure_roles(client).await?;
    let memberships = viewers
        .iter()
        .map(|r| (VIEWER_ROLE, r))
        .chain(operators.iter().map(|r| (OPERATOR_ROLE, r)));
    for (group, role) in memberships {
        client
            .batch_execute(&format!("GRANT {group} TO {}", quoted(role)))
            .await
            .with_context(|| format!("granting {group} to role {role:?}"))?;
    }
    Ok(())
}

/// Takes both roles away from each of `roles`.
pub async fn revoke(client: &Client, roles: &[String]) -> Result<()> {
    for role in roles {
        client
            .batch_execute(&format!(
                "REVOKE {OPERATOR_ROLE}, {VIEWER_ROLE} FROM {}",
                quoted(role)
            ))
            .await
            .with_context(|| format!("revoking gavel's roles from role {role:?}"))?;
    }
    Ok(())
}

/// A role name as an SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
