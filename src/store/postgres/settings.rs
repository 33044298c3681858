//! The controller settings' history (`gavel_controller_settings`, migration V5): versions
//! published, promoted and rolled back, each one insert the database checks against the history
//! and stamps (who, when, the state it leaves); what a debate is given at its start
//! (`gavel_settings_for`); the debate types the history may name. Only members of
//! [`PUBLISHER_ROLE`](super::PUBLISHER_ROLE) may write; the database refuses anyone else.

use chrono::{DateTime, Utc};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Json;
use tokio_postgres::{Client, Row};

use super::actions::refusal;
use super::error::{Doing, Error, Result};
use crate::domain::{
    Arm, Assigned, MeasureKind, SettingsValues, SettingsVersion, VersionKind, WHOLE_SHARE,
};

/// The channel each new version is notified on: `{"debate_type": "...", "version": 3}`.
pub const SETTINGS_CHANNEL: &str = "gavel_settings";

/// The columns gavel inserts, which a role needs INSERT on to publish.
pub(super) const INSERTED: [&str; 14] = [
    "debate_type",
    "kind",
    "target",
    "share_bp",
    "mode",
    "similarity_threshold",
    "similarity_measure",
    "similarity_model",
    "novelty_floor",
    "min_rounds",
    "max_rounds",
    "budget_fraction",
    "reason",
    "evidence",
];

/// The columns a version is read from, in the order [`version_from`] expects.
const VERSION_COLUMNS: &str = "version, debate_type, kind, target, share_bp, mode, \
    similarity_threshold, similarity_measure, similarity_model, novelty_floor, min_rounds, \
    max_rounds, budget_fraction, reason, evidence, published_by, published_at, stable_version, \
    canary_version, canary_share_bp, previous_stable";

/// The most versions one read returns: the newest.
pub const MAX_HISTORY: i64 = 1000;

/// A new version asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Publication<'a> {
    /// New values, sent to `share_bp` basis points of new debates (10000: every one).
    Publish {
        values: &'a SettingsValues,
        share_bp: u32,
        evidence: Option<&'a serde_json::Value>,
    },
    /// The canary `version` sent to every new debate.
    Promote { version: i64 },
    /// `version` (the canary, or the version the latest publish or promote put in force)
    /// withdrawn.
    Rollback { version: i64 },
}

/// Writes `change` to the history of `debate_type` with `reason`: `Ok(Ok(version))` as the
/// database numbered and stamped it, `Ok(Err(why))` when the database refused it (not a
/// publisher, a value out of range, a rollout in progress, a version no longer in force: asking
/// again cannot help), `Err` when the connection failed.
pub async fn publish(
    client: &Client,
    debate_type: &str,
    change: &Publication<'_>,
    reason: &str,
) -> Result<std::result::Result<SettingsVersion, String>> {
    let (kind, target, share, values, evidence) = match change {
        Publication::Publish {
            values,
            share_bp,
            evidence,
        } => (
            VersionKind::Publish,
            None,
            Some(i32::try_from(*share_bp).unwrap_or(i32::MAX)),
            Some(*values),
            *evidence,
        ),
        Publication::Promote { version } => {
            (VersionKind::Promote, Some(*version), None, None, None)
        }
        Publication::Rollback { version } => {
            (VersionKind::Rollback, Some(*version), None, None, None)
        }
    };
    let int = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    let placeholders: Vec<String> = (1..=INSERTED.len()).map(|i| format!("${i}")).collect();
    let written = client
        .query_one(
            &format!(
                "INSERT INTO gavel_controller_settings ({}) VALUES ({}) RETURNING {VERSION_COLUMNS}",
                INSERTED.join(", "),
                placeholders.join(", ")
            ),
            &[
                &debate_type,
                &kind.as_str(),
                &target,
                &share,
                &values.map(|v| v.mode.as_str()),
                &values.map(|v| v.similarity_threshold),
                &values.map(|v| v.similarity_measure.as_str()),
                &values.and_then(|v| v.similarity_model.as_deref()),
                &values.map(|v| int(v.novelty_floor)),
                &values.map(|v| int(v.min_rounds)),
                &values.map(|v| int(v.max_rounds)),
                &values.map(|v| v.budget_fraction),
                &reason,
                &evidence.map(Json),
            ],
        )
        .await
        .doing(format_args!("writing a {kind} of {debate_type}'s settings"));
    match written {
        Ok(row) => version_from(&row).map(Ok),
        Err(e) => match refused(&e) {
            Some(why) => Ok(Err(why)),
            None => Err(e),
        },
    }
}

/// Why the database refused a version, with what to do when the role may not publish.
fn refused(error: &Error) -> Option<String> {
    let db = error.database()?.as_db_error()?;
    if *db.code() == SqlState::INSUFFICIENT_PRIVILEGE {
        return Some(format!(
            "the database refused it: {} (SQLSTATE {}); publishing settings is a privilege of \
             its own: `gavel grant --publisher ROLE` gives it",
            db.message(),
            db.code().code()
        ));
    }
    if *db.code() == SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE {
        return Some(db.message().to_owned());
    }
    refusal(error)
}

/// The history, oldest first: of `debate_type`, or of every type; at most [`MAX_HISTORY`]
/// versions, the newest.
pub async fn settings_history(
    client: &Client,
    debate_type: Option<&str>,
) -> Result<Vec<SettingsVersion>> {
    let rows = client
        .query(
            &format!(
                "SELECT * FROM (SELECT {VERSION_COLUMNS} FROM gavel_controller_settings \
                 WHERE $1::text IS NULL OR debate_type = $1 ORDER BY version DESC LIMIT $2) AS newest \
                 ORDER BY version"
            ),
            &[&debate_type, &MAX_HISTORY],
        )
        .await
        .doing("reading the settings history")?;
    rows.iter().map(version_from).collect()
}

/// The latest version of each debate type (the state in force), by type.
pub async fn settings_in_force(client: &Client) -> Result<Vec<SettingsVersion>> {
    let rows = client
        .query(
            &format!(
                "SELECT DISTINCT ON (debate_type) {VERSION_COLUMNS} FROM gavel_controller_settings \
                 ORDER BY debate_type, version DESC"
            ),
            &[],
        )
        .await
        .doing("reading the settings in force")?;
    rows.iter().map(version_from).collect()
}

/// Version `version`, if there is one.
pub async fn settings_version(client: &Client, version: i64) -> Result<Option<SettingsVersion>> {
    let row = client
        .query_opt(
            &format!("SELECT {VERSION_COLUMNS} FROM gavel_controller_settings WHERE version = $1"),
            &[&version],
        )
        .await
        .doing(format_args!("reading settings version {version}"))?;
    row.as_ref().map(version_from).transpose()
}

/// What `gavel_settings_for` gives debate `session_id` of `debate_type`.
pub async fn settings_for(
    client: &Client,
    session_id: &str,
    debate_type: &str,
) -> Result<Assigned> {
    let row = client
        .query_one(
            "SELECT version, arm, mode, similarity_threshold, similarity_measure, \
             similarity_model, novelty_floor, min_rounds, max_rounds, budget_fraction \
             FROM gavel_settings_for($1, $2)",
            &[&session_id, &debate_type],
        )
        .await
        .doing(format_args!("asking the settings for debate {session_id}"))?;
    let wrong =
        |what: String| Error::Inconsistent(format!("gavel_settings_for({session_id:?}): {what}"));
    let arm: String = row.get(1);
    let arm = arm.parse::<Arm>().map_err(wrong)?;
    let version: Option<i64> = row.get(0);
    let values = values_at(&row, 2).map_err(wrong)?;
    Ok(Assigned {
        version,
        arm,
        values,
    })
}

/// Whether a debate of `debate_type` has run, or the history names it.
pub async fn known_debate_type(client: &Client, debate_type: &str) -> Result<bool> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM debate_sessions WHERE debate_type = $1) \
             OR EXISTS (SELECT 1 FROM gavel_controller_settings WHERE debate_type = $1)",
            &[&debate_type],
        )
        .await
        .doing("looking up the debate type")?;
    Ok(row.get(0))
}

/// Every debate type that has run or the history names, in order.
pub async fn debate_types(client: &Client) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT debate_type FROM debate_sessions WHERE debate_type IS NOT NULL \
             UNION SELECT debate_type FROM gavel_controller_settings ORDER BY 1",
            &[],
        )
        .await
        .doing("listing the debate types")?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The settings from column `first` on (mode, threshold, measure, model, novelty floor, min and
/// max rounds, budget fraction); `None` when the mode is NULL (a rollback to the defaults).
fn values_at(row: &Row, first: usize) -> std::result::Result<Option<SettingsValues>, String> {
    let mode: Option<String> = row.get(first);
    let Some(mode) = mode else {
        return Ok(None);
    };
    let count = |i: usize, name: &str| -> std::result::Result<u32, String> {
        let n: Option<i32> = row.get(first + i);
        n.and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{name} is missing or negative"))
    };
    let float = |i: usize, name: &str| -> std::result::Result<f64, String> {
        let x: Option<f64> = row.get(first + i);
        x.ok_or_else(|| format!("{name} is missing"))
    };
    let measure: Option<String> = row.get(first + 2);
    Ok(Some(SettingsValues {
        mode: mode.parse()?,
        similarity_threshold: float(1, "similarity_threshold")?,
        similarity_measure: measure
            .ok_or("similarity_measure is missing")?
            .parse::<MeasureKind>()?,
        similarity_model: row.get(first + 3),
        novelty_floor: count(4, "novelty_floor")?,
        min_rounds: count(5, "min_rounds")?,
        max_rounds: count(6, "max_rounds")?,
        budget_fraction: float(7, "budget_fraction")?,
    }))
}

/// A version as read with [`VERSION_COLUMNS`]; an error naming the version when a value is not
/// what the table's constraints allow (they were disabled, or the table is not gavel's).
fn version_from(row: &Row) -> Result<SettingsVersion> {
    let version: i64 = row.get(0);
    let wrong = |what: String| {
        Error::Inconsistent(format!(
            "gavel_controller_settings (version {version}): {what}"
        ))
    };
    let kind: String = row.get(2);
    let share = |i: usize| -> std::result::Result<Option<u32>, String> {
        let n: Option<i32> = row.get(i);
        n.map(|n| {
            u32::try_from(n)
                .ok()
                .filter(|n| *n <= WHOLE_SHARE)
                .ok_or_else(|| format!("share {n} is outside 0..{WHOLE_SHARE}"))
        })
        .transpose()
    };
    let published_at: Option<DateTime<Utc>> = row.get(16);
    Ok(SettingsVersion {
        version,
        debate_type: row.get(1),
        kind: kind.parse().map_err(wrong)?,
        target: row.get(3),
        share_bp: share(4).map_err(wrong)?.unwrap_or(WHOLE_SHARE),
        values: values_at(row, 5).map_err(wrong)?,
        reason: row.get(13),
        evidence: row
            .get::<_, Option<Json<serde_json::Value>>>(14)
            .map(|j| j.0),
        published_by: row.get::<_, Option<String>>(15).unwrap_or_default(),
        published_at: published_at.ok_or_else(|| wrong("published_at is missing".into()))?,
        stable_version: row.get(17),
        canary_version: row.get(18),
        canary_share_bp: share(19).map_err(wrong)?,
        previous_stable: row.get(20),
    })
}
