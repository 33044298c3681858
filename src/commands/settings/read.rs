//! `gavel settings list` and `show`: the settings in force per debate type, a version whole,
//! the history. Every text that came from the database is made inert before it is printed.

use anyhow::Result;
use serde::Serialize;
use tokio_postgres::Client;

use gavel::calibrate::evidence::describe;
use gavel::config::Config;
use gavel::domain::{DEFAULTS_VERSION, SettingsValues, SettingsVersion, percent};
use gavel::store::postgres::{Target, settings_history, settings_in_force, settings_version};
use gavel::text::{columns, one_line};

use super::{Shown, known_types, print_json};
use crate::commands::print;

/// A version in force and its values (`None`: a rollback to the controller's own defaults).
#[derive(Serialize)]
struct Held {
    version: i64,
    values: Option<SettingsValues>,
}

/// What a debate type's new debates get.
#[derive(Serialize)]
struct TypeState {
    debate_type: String,
    /// `None`: the controller's own defaults.
    stable: Option<Held>,
    /// The version rolling out, to `canary_share_bp` basis points of new debates.
    canary: Option<Held>,
    canary_share_bp: Option<u32>,
    /// The latest change; `None` when nothing was ever published for the type.
    latest: Option<SettingsVersion>,
}

/// `gavel settings list`: each known debate type's state in force.
pub(super) async fn list(client: Client, config: &Config, json: bool) -> Result<()> {
    let latest = settings_in_force(&client).await?;
    let mut states = Vec::new();
    for debate_type in known_types(&client, config).await? {
        let latest = latest
            .iter()
            .find(|v| v.debate_type == debate_type)
            .cloned();
        let stable = held(&client, latest.as_ref().and_then(|v| v.stable_version)).await?;
        let canary = held(&client, latest.as_ref().and_then(|v| v.canary_version)).await?;
        states.push(TypeState {
            debate_type,
            stable,
            canary,
            canary_share_bp: latest.as_ref().and_then(|v| v.canary_share_bp),
            latest,
        });
    }
    if json {
        return print_json(&states);
    }
    print(&list_text(&states))?;
    Ok(())
}

/// Version `at` and its values, if there is one.
async fn held(client: &Client, at: Option<i64>) -> Result<Option<Held>> {
    let Some(at) = at else {
        return Ok(None);
    };
    Ok(Some(Held {
        version: at,
        values: settings_version(client, at).await?.and_then(|v| v.values),
    }))
}

/// The states as text: a block per debate type with a history, then the types without one.
fn list_text(states: &[TypeState]) -> String {
    let unpublished: Vec<String> = states
        .iter()
        .filter(|s| s.latest.is_none())
        .map(|s| one_line(&s.debate_type))
        .collect();
    if unpublished.len() == states.len() {
        return format!(
            "nothing published: the controller's own defaults stand for every debate type \
             (known here: {})\n",
            unpublished.join(", ")
        );
    }
    let mut out = String::new();
    for state in states {
        let Some(latest) = &state.latest else {
            continue;
        };
        out.push_str(&format!("{}\n", one_line(&state.debate_type)));
        let stable = match &state.stable {
            Some(held) => format!("version {}: {}", held.version, values_text(&held.values)),
            None => "the controller's own defaults".to_owned(),
        };
        out.push_str(&format!("  stable  {stable}\n"));
        if let (Some(canary), Some(share)) = (&state.canary, state.canary_share_bp) {
            out.push_str(&format!(
                "  canary  version {} to {} of new debates: {}\n",
                canary.version,
                percent(share),
                values_text(&canary.values)
            ));
        }
        out.push_str(&format!(
            "  latest  version {} ({}): {}; by {}, {}: {}\n",
            latest.version,
            latest.kind,
            latest.what(),
            one_line(&latest.published_by),
            when(latest),
            one_line(&latest.reason)
        ));
    }
    if !unpublished.is_empty() {
        out.push_str(&format!(
            "{}: nothing published: the controller's own defaults stand\n",
            unpublished.join(", ")
        ));
    }
    out
}

/// `gavel settings show`: version `at` whole, or the history (of `debate_type`, or all).
pub(super) async fn show(
    client: Client,
    target: Target,
    at: Option<i64>,
    debate_type: Option<&str>,
    json: bool,
) -> Result<()> {
    let Some(at) = at else {
        let versions = settings_history(&client, debate_type).await?;
        if json {
            let shown: Vec<Shown> = versions.iter().map(Shown::of).collect();
            return print_json(&shown);
        }
        print(&history_text(&versions, debate_type))?;
        return Ok(());
    };
    if at == DEFAULTS_VERSION {
        if json {
            let defaults = "the controller's own defaults";
            return print_json(
                &serde_json::json!({"version": at, "values": null, "what": defaults}),
            );
        }
        print(
            "version 0: the controller's own defaults, which debates are given (and stamped \
             with) where nothing is in force; not a row of the history\n",
        )?;
        return Ok(());
    }
    let Some(found) = settings_version(&client, at).await? else {
        anyhow::bail!(
            "no settings version {at} in gavel_controller_settings of {}",
            target.describe()
        );
    };
    if json {
        return print_json(&Shown::of(&found));
    }
    print(&version_text(&found))?;
    Ok(())
}

/// One version whole.
pub(super) fn version_text(v: &SettingsVersion) -> String {
    let evidence = v.evidence.as_ref().map_or_else(
        || "none: the values were given by hand".to_owned(),
        |e| one_line(&describe(e)),
    );
    let stable = v.stable_version.map_or_else(
        || "the controller's own defaults".to_owned(),
        |s| format!("version {s}"),
    );
    let canary = match (v.canary_version, v.canary_share_bp) {
        (Some(c), Some(share)) => format!(", version {c} to {} of them", percent(share)),
        _ => String::new(),
    };
    format!(
        "version {} of {}: {}\n  kind      {}\n  values    {}\n  reason    {}\n  \
         evidence  {evidence}\n  by        {}\n  at        {}\n  left      new debates on \
         {stable}{canary}\n",
        v.version,
        one_line(&v.debate_type),
        v.what(),
        v.kind,
        values_text(&v.values),
        one_line(&v.reason),
        one_line(&v.published_by),
        when(v)
    )
}

/// The history as a table, oldest first.
fn history_text(versions: &[SettingsVersion], debate_type: Option<&str>) -> String {
    if versions.is_empty() {
        let of = debate_type.map_or_else(String::new, |t| format!(" for {}", one_line(t)));
        return format!("nothing published{of}: the controller's own defaults stand\n");
    }
    const HEADER: [&str; 6] = ["version", "debate type", "what", "by", "at", "reason"];
    let rows: Vec<Vec<String>> = versions
        .iter()
        .map(|v| {
            vec![
                v.version.to_string(),
                one_line(&v.debate_type),
                v.what(),
                one_line(&v.published_by),
                when(v),
                one_line(&v.reason),
            ]
        })
        .collect();
    columns(&HEADER, &rows)
}

/// A version's values in a line, inert.
fn values_text(values: &Option<SettingsValues>) -> String {
    values.as_ref().map_or_else(
        || "the controller's own defaults".to_owned(),
        |v| one_line(&v.summary()),
    )
}

/// When a version was published, as people read it.
fn when(v: &SettingsVersion) -> String {
    v.published_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}
