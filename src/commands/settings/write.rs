//! `gavel settings publish`, `promote` and `rollback`: what is asked checked first (a reason,
//! a share, the values' ranges, a known debate type, a calibration's row), so that a bad input
//! writes nothing; then one insert, which the database checks against the history and stamps.

use std::path::Path;

use anyhow::{Context, Result};
use tokio_postgres::Client;

use gavel::calibrate::{Pick, Picked, picked};
use gavel::cli::{Values, parse_share};
use gavel::config::{Config, SimilarityKind};
use gavel::domain::{
    ControllerMode, MeasureKind, SettingsValues, SettingsVersion, WHOLE_SHARE, check_reason,
};
use gavel::store::postgres::{
    Publication, Target, known_debate_type, publish, settings_in_force, settings_version,
};
use gavel::text::one_line;

use super::{Shown, known_types, print_json};
use crate::commands::print;

/// A publish as asked, checked before connecting.
pub(super) struct Asked {
    debate_type: String,
    reason: String,
    share_bp: u32,
    /// The calibration's row the values come from.
    picked: Option<Picked>,
}

impl Asked {
    /// The publish of `debate_type`'s settings with `reason` to `share` percent of new debates
    /// (all when `None`), from `calibration`'s row (the file and the `--pick`) when given.
    pub(super) fn check(
        debate_type: &str,
        reason: Option<&str>,
        share: Option<&str>,
        calibration: Option<(&Path, &str)>,
    ) -> Result<Asked> {
        let reason = self::reason(reason)?;
        let share_bp = match share {
            Some(share) => parse_share(share).map_err(anyhow::Error::msg)?,
            None => WHOLE_SHARE,
        };
        let picked = match calibration {
            Some((file, pick)) => {
                let pick: Pick = pick.parse().map_err(anyhow::Error::msg)?;
                let bytes = std::fs::read(file)
                    .with_context(|| format!("cannot read the calibration {}", file.display()))?;
                Some(picked(file, &bytes, pick)?)
            }
            None => None,
        };
        Ok(Asked {
            debate_type: debate_type.to_owned(),
            reason,
            share_bp,
            picked,
        })
    }
}

/// `--reason`, required and not blank, trimmed.
pub(super) fn reason(reason: Option<&str>) -> Result<String> {
    let reason = reason.unwrap_or_default();
    check_reason(reason).map_err(anyhow::Error::msg)?;
    Ok(reason.trim().to_owned())
}

/// `gavel settings publish`: the values `given` over the calibration's row (if any) over the
/// version in force for the debate type (else the configured controller's), checked, then
/// written.
pub(super) async fn publish_values(
    client: Client,
    config: &Config,
    asked: &Asked,
    given: &Values,
    json: bool,
) -> Result<()> {
    let debate_type = &asked.debate_type;
    let known = debate_type == "standard"
        || config
            .controller
            .max_rounds_by_type
            .contains_key(debate_type)
        || known_debate_type(&client, debate_type).await?;
    if !known {
        let known: Vec<String> = known_types(&client, config)
            .await?
            .iter()
            .map(|t| one_line(t))
            .collect();
        anyhow::bail!(
            "unknown debate type {debate_type:?}: the known ones are {} (those of debates that \
             ran or of the settings history, [controller.max_rounds_by_type]'s, and standard)",
            known.join(", ")
        );
    }
    let base = in_force_values(&client, config, debate_type).await?;
    let from = match &asked.picked {
        Some(row) => row.over(&base),
        None => base,
    };
    let values = given
        .over(&from, || config.signals.semantic().name().to_owned())
        .map_err(anyhow::Error::msg)?;
    values.validate().map_err(anyhow::Error::msg)?;
    let change = Publication::Publish {
        values: &values,
        share_bp: asked.share_bp,
        evidence: asked.picked.as_ref().map(|row| &row.evidence),
    };
    match publish(&client, debate_type, &change, &asked.reason).await? {
        Ok(written) => done(&written, json),
        Err(why) => anyhow::bail!("cannot publish {debate_type}'s settings: {why}"),
    }
}

/// `gavel settings promote` or `rollback` (`change`) of version `at`, in its own debate type.
pub(super) async fn change(
    client: Client,
    target: Target,
    at: i64,
    change: Publication<'_>,
    reason: String,
    json: bool,
) -> Result<()> {
    let verb = match change {
        Publication::Promote { .. } => "promote",
        _ => "roll back",
    };
    let Some(found) = settings_version(&client, at).await? else {
        anyhow::bail!(
            "no settings version {at} in gavel_controller_settings of {}",
            target.describe()
        );
    };
    match publish(&client, &found.debate_type, &change, &reason).await? {
        Ok(written) => done(&written, json),
        Err(why) => anyhow::bail!("cannot {verb} version {at}: {why}"),
    }
}

/// The values new debates of `debate_type` get now (outside a rollout): the stable version's,
/// else the configured controller's.
async fn in_force_values(
    client: &Client,
    config: &Config,
    debate_type: &str,
) -> Result<SettingsValues> {
    let stable = settings_in_force(client)
        .await?
        .into_iter()
        .find(|v| v.debate_type == debate_type)
        .and_then(|v| v.stable_version);
    let values = match stable {
        Some(stable) => settings_version(client, stable)
            .await?
            .and_then(|v| v.values),
        None => None,
    };
    Ok(values.unwrap_or_else(|| configured(config, debate_type)))
}

/// The configured controller's settings for `debate_type`, in shadow mode.
fn configured(config: &Config, debate_type: &str) -> SettingsValues {
    let controller = &config.controller;
    let (measure, model) = match config.signals.similarity {
        SimilarityKind::Lexical => (MeasureKind::Lexical, None),
        SimilarityKind::Semantic => (
            MeasureKind::Semantic,
            Some(config.signals.semantic().name().to_owned()),
        ),
    };
    SettingsValues {
        mode: ControllerMode::Shadow,
        similarity_threshold: controller.similarity_threshold,
        similarity_measure: measure,
        similarity_model: model,
        novelty_floor: controller.novelty_threshold,
        min_rounds: controller.min_rounds,
        max_rounds: controller.max_rounds_for(debate_type),
        budget_fraction: controller.budget_fraction,
    }
}

/// Says what the new version did, as text or JSON.
fn done(written: &SettingsVersion, json: bool) -> Result<()> {
    if json {
        return print_json(&Shown::of(written));
    }
    let values = written.values.as_ref().map_or_else(
        || "the controller's own defaults".to_owned(),
        |v| one_line(&v.summary()),
    );
    let mut out = format!(
        "version {} of {}: {}\n  values  {values}\n",
        written.version,
        one_line(&written.debate_type),
        written.what()
    );
    if written.target.is_some() {
        out.push_str("  debates already running keep the version they started with\n");
    }
    print(&out)?;
    Ok(())
}
