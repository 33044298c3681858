//! Consoles off the primary: the primary publishes every table a console reads (the
//! publication [`PUBLICATION`], made by migration V6) and each subscriber, a database migrated
//! like the primary, subscribes to it with PostgreSQL's own logical replication; consoles LISTEN
//! there, where applied rows fire gavel's stamp and notification triggers (ENABLE ALWAYS).
//!
//! What must keep the primary's word fires for local writes only on a subscriber
//! ([`LOCAL_ONLY`]): the role stamped on an action or a note, a settings version's number and
//! state, presence's stamps, and the append-only guards (a deliberate correction on the
//! primary is applied as made; refusing it would stall the subscription for good).

use tokio_postgres::Client;

use super::error::{Doing, Error, Result};

/// The publication's name, on the primary (created by migration V6).
pub const PUBLICATION: &str = "gavel";

/// The triggers that fire for local writes only (ENABLE, not ALWAYS) on a subscriber: table,
/// trigger.
pub const LOCAL_ONLY: [(&str, &str); 10] = [
    ("debate_operator_actions", "gavel_operator_role"),
    ("debate_operator_actions", "gavel_append_only"),
    ("debate_operator_actions", "gavel_append_only_truncate"),
    ("gavel_debate_notes", "gavel_operator_role"),
    ("gavel_debate_notes", "gavel_append_only"),
    ("gavel_debate_notes", "gavel_append_only_truncate"),
    ("gavel_controller_settings", "gavel_settings_version"),
    ("gavel_controller_settings", "gavel_append_only"),
    ("gavel_controller_settings", "gavel_append_only_truncate"),
    ("gavel_presence", "gavel_presence_stamp"),
];

/// What [`check_publisher`] learnt of the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    /// The primary's system identifier, when its role may read it: a subscriber on the same
    /// server is refused (its subscription would wait for itself forever).
    system: Option<String>,
}

/// What [`subscribe`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscribed {
    /// The subscription (named so) was created now.
    Created(String),
    /// This database already subscribed to the same primary: nothing changed. `enabled`: its
    /// apply worker runs (a subscription disabled by hand does not).
    Already { name: String, enabled: bool },
}

/// Checks that the primary, as the role of the connection `primary`, can feed a subscriber:
/// logical decoding on, gavel's publication there, the role allowed to replicate and a free
/// replication slot. Each refusal says what to change.
pub async fn check_publisher(primary: &Client) -> Result<Publisher> {
    let row = primary
        .query_one(
            "SELECT current_setting('wal_level'), current_user::text,
                    (SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user),
                    EXISTS (SELECT FROM pg_publication WHERE pubname = $1),
                    current_setting('max_replication_slots')::int,
                    (SELECT count(*)::int FROM pg_replication_slots)",
            &[&PUBLICATION],
        )
        .await
        .doing("reading the primary's replication settings")?;
    let (wal_level, user): (String, String) = (row.get(0), row.get(1));
    let (may_replicate, published): (Option<bool>, bool) = (row.get(2), row.get(3));
    let (slots, used): (i32, i32) = (row.get(4), row.get(5));
    if wal_level != "logical" {
        return Err(Error::Replication(format!(
            "the primary's wal_level is {wal_level}, not logical: a subscriber needs logical \
             decoding. Run ALTER SYSTEM SET wal_level = logical on the primary (or set it in \
             postgresql.conf) and restart it"
        )));
    }
    if may_replicate != Some(true) {
        return Err(Error::Replication(format!(
            "role {user} may not replicate from the primary: the subscription connects as the \
             --subscribe-to string's role, which needs REPLICATION (ALTER ROLE {user} \
             REPLICATION, run by a superuser) and SELECT on gavel's tables (gavel grant \
             --viewer {user})"
        )));
    }
    if !published {
        return Err(Error::Replication(format!(
            "the primary has no publication {PUBLICATION}: run `gavel migrate --db PRIMARY` \
             first"
        )));
    }
    let system = primary
        .query_one(
            "SELECT system_identifier::text FROM pg_control_system()",
            &[],
        )
        .await
        .ok()
        .map(|row| row.get(0));
    if used >= slots {
        return Err(Error::Replication(format!(
            "all {slots} replication slots of the primary are in use: raise \
             max_replication_slots there (a restart), or drop a slot nobody uses (SELECT \
             slot_name, active FROM pg_replication_slots)"
        )));
    }
    Ok(Publisher { system })
}

/// Subscribes this database (migrated like the primary) to the primary's publication, the
/// subscriber's server connecting with `conninfo` itself (so it must hold everything the
/// server needs to reach the primary: host, role, password). Refuses when this role may not
/// create subscriptions, when gavel's tables here have rows already (the initial copy would
/// collide with them), when it is on the primary's own server, or when this database subscribes
/// to another primary already. Then sets [`LOCAL_ONLY`]. Run twice with the same `conninfo`, it
/// changes nothing.
pub async fn subscribe(
    client: &Client,
    conninfo: &str,
    publisher: &Publisher,
) -> Result<Subscribed> {
    let existing = client
        .query_opt(
            "SELECT subname::text, subconninfo, subenabled FROM pg_subscription
             WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND $1 = ANY (subpublications)",
            &[&PUBLICATION],
        )
        .await;
    let existing = match existing {
        Ok(existing) => existing,
        Err(e) if is_denied(&e) => return Err(cannot_subscribe(client).await),
        Err(e) => return Err(e).doing("looking for gavel's subscription"),
    };
    if let Some(row) = existing {
        let (name, subscribed_to, enabled): (String, String, bool) =
            (row.get(0), row.get(1), row.get(2));
        if subscribed_to != conninfo {
            return Err(Error::Replication(format!(
                "this database already subscribes to gavel's publication with another \
                 connection string (subscription {name}); to move it to this primary, run DROP \
                 SUBSCRIPTION {name} here first (it drops its slot on the old primary)"
            )));
        }
        keep_local(client).await?;
        return Ok(Subscribed::Already { name, enabled });
    }
    let may: bool = client
        .query_one(
            "SELECT rolsuper OR CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = \
                 'pg_create_subscription') THEN pg_has_role(current_user, \
                 'pg_create_subscription', 'MEMBER') ELSE false END
             FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
        .doing("reading this role's privileges")?
        .get(0);
    if !may {
        return Err(cannot_subscribe(client).await);
    }
    if let Some(table) = first_with_rows(client).await? {
        return Err(Error::Replication(format!(
            "{table} here has rows already: a new subscription copies the primary's rows, which \
             would collide with them. Subscribe an empty database (CREATE DATABASE ..., then \
             gavel migrate --db it --subscribe-to PRIMARY)"
        )));
    }
    // Named after this server and database: slot names are the primary's, shared by every
    // subscriber.
    let row = client
        .query_one(
            "SELECT system_identifier::text, format('gavel_%s_%s', system_identifier,
                           (SELECT oid FROM pg_database WHERE datname = current_database()))
             FROM pg_control_system()",
            &[],
        )
        .await
        .doing("naming the subscription")?;
    let (system, name): (String, String) = (row.get(0), row.get(1));
    if publisher.system.as_ref() == Some(&system) {
        return Err(Error::Replication(
            "the subscriber is on the primary's own server: a subscription to its own server \
             waits for itself forever. Subscribe a database on another server"
                .to_owned(),
        ));
    }
    let create: String = client
        .query_one(
            "SELECT format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION %I', $1::text, \
             $2::text, $3::text)",
            &[&name, &conninfo, &PUBLICATION],
        )
        .await
        .doing("writing the subscription's statement")?
        .get(0);
    client.batch_execute(&create).await.doing(
        "creating the subscription (the subscriber's server connects to the primary with the \
         --subscribe-to string itself: it must reach the primary from there, with any password \
         in it)",
    )?;
    keep_local(client).await?;
    Ok(Subscribed::Created(name))
}

/// On a database that subscribes to gavel's publication, makes [`LOCAL_ONLY`] fire for local
/// writes only (a trigger already so is left alone); whether it subscribes. `gavel migrate`
/// calls it on every run, so that a later migration's ENABLE ALWAYS cannot undo it.
pub async fn keep_local(client: &Client) -> Result<bool> {
    let subscribed = client
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_subscription WHERE subdbid = (SELECT oid FROM \
             pg_database WHERE datname = current_database()) AND $1 = ANY (subpublications))",
            &[&PUBLICATION],
        )
        .await;
    match subscribed {
        Ok(row) if row.get::<_, bool>(0) => {}
        // A role that may not read pg_subscription owns no subscription either.
        Ok(_) => return Ok(false),
        Err(e) if is_denied(&e) => return Ok(false),
        Err(e) => return Err(e).doing("looking for gavel's subscription"),
    }
    for (table, trigger) in LOCAL_ONLY {
        let always: bool = client
            .query_one(
                "SELECT coalesce((SELECT tgenabled <> 'O' FROM pg_trigger
                                  WHERE tgrelid = $1::text::regclass AND tgname = $2), false)",
                &[&table, &trigger],
            )
            .await
            .doing(format_args!("reading trigger {trigger} of {table}"))?
            .get(0);
        if always {
            client
                .batch_execute(&format!("ALTER TABLE {table} ENABLE TRIGGER {trigger}"))
                .await
                .doing(format_args!(
                    "making trigger {trigger} of {table} fire for local writes only"
                ))?;
        }
    }
    Ok(true)
}

/// How far the subscription's first copy of the primary's tables is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sync {
    /// Tables copied and followed.
    pub ready: i64,
    /// Tables of the subscription.
    pub tables: i64,
    /// Errors its apply and copy workers met (each is in the subscriber's server log).
    pub errors: i64,
}

/// Where the subscription of this database stands (see [`Sync`]).
pub async fn sync(client: &Client) -> Result<Sync> {
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE r.srsubstate IN ('r', 's')), count(*),
                    coalesce((SELECT sum(s.apply_error_count + s.sync_error_count)::bigint
                              FROM pg_stat_subscription_stats s
                              JOIN pg_subscription p ON p.oid = s.subid
                              WHERE p.subdbid = (SELECT oid FROM pg_database
                                                 WHERE datname = current_database())), 0)
             FROM pg_subscription_rel r JOIN pg_subscription p ON p.oid = r.srsubid
             WHERE p.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND $1 = ANY (p.subpublications)",
            &[&PUBLICATION],
        )
        .await
        .doing("reading the subscription's progress")?;
    Ok(Sync {
        ready: row.get(0),
        tables: row.get(1),
        errors: row.get(2),
    })
}

/// The first of the published tables that has a row here.
async fn first_with_rows(client: &Client) -> Result<Option<String>> {
    let tables: Vec<String> = client
        .query(
            "SELECT tablename::text FROM pg_publication_tables WHERE pubname = $1
             ORDER BY tablename",
            &[&PUBLICATION],
        )
        .await
        .doing("listing the published tables")?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for table in tables {
        let has = client
            .query_one(&format!("SELECT EXISTS (SELECT FROM \"{table}\")"), &[])
            .await
            .doing(format_args!("looking for rows in {table}"))?;
        if has.get::<_, bool>(0) {
            return Ok(Some(table));
        }
    }
    Ok(None)
}

/// Why this role may not subscribe.
async fn cannot_subscribe(client: &Client) -> Error {
    let user = client
        .query_one("SELECT current_user::text", &[])
        .await
        .map_or_else(|_| "this role".to_owned(), |row| row.get(0));
    Error::Replication(format!(
        "role {user} may not create a subscription on the subscriber: run the migration as a \
         superuser there (PostgreSQL 16 and later: or a member of pg_create_subscription with \
         CREATE on the database)"
    ))
}

fn is_denied(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
}
