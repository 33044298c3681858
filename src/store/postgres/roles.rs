//! The roles gavel's users are granted: [`VIEWER_ROLE`] watches (SELECT on the contract's
//! tables, gavel_debate_notes and gavel_controller_settings; LISTEN needs no privilege in
//! PostgreSQL) and says it is here (its row of gavel_presence: SELECT, INSERT and UPDATE of
//! `status`, DELETE, and the sequence; the table's trigger keeps each row its role's own); [`OPERATOR_ROLE`] also records operator actions and pins notes (INSERT on the
//! columns gavel writes of debate_operator_actions and gavel_debate_notes, and their sequences);
//! [`PUBLISHER_ROLE`], a privilege of its own, publishes, promotes and rolls back the
//! controller's settings (INSERT on the columns gavel writes of gavel_controller_settings, and
//! its sequence) and watches.
//! None may UPDATE or DELETE anything; the audit trail's triggers refuse that to every role.
//! All are NOLOGIN group roles: login roles become viewers, operators or publishers by
//! membership, so the role stamped on an action or a version (`session_user`) is the person's
//! own.

use super::error::{Doing, Result};
use tokio_postgres::Client;

use super::actions::INSERTED;
use super::notes;
use super::settings;

/// The group role of those who watch.
pub const VIEWER_ROLE: &str = "gavel_viewer";
/// The group role of those who also resolve decisions.
pub const OPERATOR_ROLE: &str = "gavel_operator";
/// The group role of those who publish the controller's settings.
pub const PUBLISHER_ROLE: &str = "gavel_publisher";

/// Creates the two roles when missing and grants them their privileges on this database's
/// tables (roles are the cluster's, privileges each database's). Idempotent; needs CREATEROLE
/// (or a superuser) and ownership of the tables. Each step is a statement of its own, so a step
/// that fails rolls back nothing before it; each role is created in a block of its own that
/// takes another gavel creating the same role at the same moment as done. CONNECT on the
/// database needs its owner, who is often not the tables' owner (managed PostgreSQL): when
/// [`VIEWER_ROLE`] ends up without it, a warning is returned and the rest goes on (PUBLIC has
/// CONNECT unless the owner revoked it, and then the viewer has it through PUBLIC).
pub async fn ensure_roles(client: &Client) -> Result<Vec<String>> {
    for role in [VIEWER_ROLE, OPERATOR_ROLE, PUBLISHER_ROLE] {
        client
            .batch_execute(&format!(
                "DO $$
                 BEGIN
                     IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN
                         CREATE ROLE {role} NOLOGIN;
                     END IF;
                 EXCEPTION WHEN duplicate_object OR unique_violation THEN
                     NULL; -- another gavel created it at the same moment
                 END
                 $$"
            ))
            .await
            .doing(format_args!("creating the role {role}"))?;
    }
    let mut warnings = Vec::new();
    if let Some(why) = grant_connect(client).await {
        warnings.push(format!(
            "{VIEWER_ROLE} has no CONNECT on this database ({why}): its members connect only \
             where they have it otherwise; the database's owner runs GRANT CONNECT ON DATABASE \
             ... TO {VIEWER_ROLE}"
        ));
    }
    let steps = [
        format!(
            "DO $$ BEGIN
                 EXECUTE format('GRANT USAGE ON SCHEMA %I TO {VIEWER_ROLE}', current_schema());
             END $$"
        ),
        format!(
            "GRANT SELECT ON debate_sessions, debate_rounds, debate_round_decisions,
                 debate_round_judgments, debate_operator_actions, gavel_debate_notes,
                 gavel_controller_settings, gavel_presence
                 TO {VIEWER_ROLE}"
        ),
        format!(
            "GRANT INSERT (console, status), UPDATE (status), DELETE ON gavel_presence \
             TO {VIEWER_ROLE}"
        ),
        format!("GRANT USAGE ON SEQUENCE gavel_presence_console_seq TO {VIEWER_ROLE}"),
        format!("GRANT {VIEWER_ROLE} TO {OPERATOR_ROLE}"),
        format!("GRANT {VIEWER_ROLE} TO {PUBLISHER_ROLE}"),
        format!(
            "GRANT INSERT ({}) ON gavel_controller_settings TO {PUBLISHER_ROLE}",
            settings::INSERTED.join(", ")
        ),
        format!(
            "GRANT USAGE ON SEQUENCE gavel_controller_settings_version_seq TO {PUBLISHER_ROLE}"
        ),
        format!(
            "GRANT INSERT ({}) ON debate_operator_actions TO {OPERATOR_ROLE}",
            INSERTED.join(", ")
        ),
        format!(
            "GRANT INSERT ({}) ON gavel_debate_notes TO {OPERATOR_ROLE}",
            notes::INSERTED.join(", ")
        ),
        format!("GRANT USAGE ON SEQUENCE gavel_debate_notes_id_seq TO {OPERATOR_ROLE}"),
        format!(
            "DO $$
             DECLARE
                 ids text := pg_get_serial_sequence('debate_operator_actions', 'id');
             BEGIN
                 IF ids IS NOT NULL THEN
                     EXECUTE format('GRANT USAGE ON SEQUENCE %s TO {OPERATOR_ROLE}', ids);
                 END IF;
             END
             $$"
        ),
    ];
    for step in steps {
        client.batch_execute(&step).await.doing(format_args!(
            "setting up the roles {VIEWER_ROLE}, {OPERATOR_ROLE} and {PUBLISHER_ROLE}"
        ))?;
    }
    Ok(warnings)
}

/// Grants CONNECT on this database to [`VIEWER_ROLE`]; why it does not have it afterwards, if
/// it does not (through PUBLIC it may). PostgreSQL only warns a grantor without the grant
/// option, so the privilege is checked rather than the statement's outcome.
async fn grant_connect(client: &Client) -> Option<String> {
    let granted = client
        .batch_execute(&format!(
            "DO $$ BEGIN
                 EXECUTE format('GRANT CONNECT ON DATABASE %I TO {VIEWER_ROLE}', current_database());
             END $$"
        ))
        .await;
    let has = client
        .query_one(
            &format!(
                "SELECT has_database_privilege('{VIEWER_ROLE}', current_database(), 'CONNECT')"
            ),
            &[],
        )
        .await;
    match (granted, has) {
        (_, Ok(row)) if row.get::<_, bool>(0) => None,
        (Err(e), _) | (_, Err(e)) => Some(
            e.as_db_error()
                .map_or_else(|| e.to_string(), |db| db.message().to_owned()),
        ),
        (Ok(()), Ok(_)) => Some("only the database's owner may grant it".to_owned()),
    }
}

/// Makes each of `viewers` a viewer and each of `operators` an operator (after
/// [`ensure_roles`], whose warnings are returned).
pub async fn grant(
    client: &Client,
    viewers: &[String],
    operators: &[String],
) -> Result<Vec<String>> {
    let warnings = ensure_roles(client).await?;
    let memberships = viewers
        .iter()
        .map(|r| (VIEWER_ROLE, r))
        .chain(operators.iter().map(|r| (OPERATOR_ROLE, r)));
    for (group, role) in memberships {
        client
            .batch_execute(&format!("GRANT {group} TO {}", quoted(role)))
            .await
            .doing(format_args!("granting {group} to role {role:?}"))?;
    }
    Ok(warnings)
}

/// Makes each of `publishers` a publisher of the controller's settings (the roles ensured
/// first, as by [`grant`]).
pub async fn grant_publishers(client: &Client, publishers: &[String]) -> Result<Vec<String>> {
    let warnings = ensure_roles(client).await?;
    for role in publishers {
        client
            .batch_execute(&format!("GRANT {PUBLISHER_ROLE} TO {}", quoted(role)))
            .await
            .doing(format_args!("granting {PUBLISHER_ROLE} to role {role:?}"))?;
    }
    Ok(warnings)
}

/// Takes every gavel role away from each of `roles`.
pub async fn revoke(client: &Client, roles: &[String]) -> Result<()> {
    for role in roles {
        client
            .batch_execute(&format!(
                "REVOKE {PUBLISHER_ROLE}, {OPERATOR_ROLE}, {VIEWER_ROLE} FROM {}",
                quoted(role)
            ))
            .await
            .doing(format_args!("revoking gavel's roles from role {role:?}"))?;
    }
    Ok(())
}

/// A role name as an SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
