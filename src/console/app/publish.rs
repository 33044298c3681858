//! A setting of the calibration window made a settings version to publish (to one database's
//! history: the selected debate's): the grid row's
//! thresholds and bounds (a bound the row leaves to each debate: the version in force's, else
//! the configured controller's), the version in force's mode (else shadow) and measure (else
//! the console's), and the evidence it came from — the SHA-256 of the calibration report as
//! JSON (`serde_json::to_string` of the console's [`Report`](crate::calibrate::Report)), the
//! grid point, the source, the window of time and the count of debates.

use serde_json::json;

use super::contexts::Ctx;
use super::model::Model;
use super::reports::at_cursor;
use super::rollout::{Publishing, SettingsChange};
use crate::domain::{ControllerMode, SettingsValues};

/// What publishing the calibration cursor's setting to `debate_type` in context `ctx`'s
/// database would write (the version in force there filling in what the setting leaves), with
/// no share and no reason yet; or why it cannot be published.
pub(crate) fn from_calibration(
    model: &Model,
    cursor: usize,
    ctx: Ctx,
    debate_type: &str,
) -> Result<Publishing, String> {
    let figures = model.reports.figures();
    let report = &figures.calibration;
    let row = at_cursor(report, cursor)
        .ok_or("no setting to publish: no finished debate has been calibrated yet")?;
    let setting = &row.setting;
    let in_force = model
        .rollout
        .latest_of(ctx, debate_type)
        .and_then(|latest| latest.stable_version)
        .and_then(|version| model.rollout.version(ctx, version))
        .and_then(|version| version.values.as_ref());
    let controller = &model.about.controller;
    let (measure, measure_model) = in_force.map_or_else(
        || model.about.measure.clone(),
        |v| (v.similarity_measure, v.similarity_model.clone()),
    );
    let values = SettingsValues {
        mode: in_force.map_or(ControllerMode::Shadow, |v| v.mode),
        similarity_threshold: setting.similarity_threshold,
        similarity_measure: measure,
        similarity_model: measure_model,
        novelty_floor: setting.novelty_threshold,
        min_rounds: setting
            .min_rounds
            .or(in_force.map(|v| v.min_rounds))
            .unwrap_or(controller.min_rounds),
        max_rounds: setting
            .max_rounds
            .or(in_force.map(|v| v.max_rounds))
            .unwrap_or_else(|| controller.max_rounds_for(debate_type)),
        budget_fraction: setting.budget_fraction,
    };
    values.validate()?;
    let report_json = serde_json::to_string(&**report).map_err(|e| e.to_string())?;
    let digest = ring::digest::digest(&ring::digest::SHA256, report_json.as_bytes());
    let window = figures
        .window
        .map(|(first, last)| json!({"first": first, "last": last}));
    let evidence = json!({
        "calibration_sha256": crate::embed::hex(digest.as_ref()),
        "grid_point": setting,
        "source": format!("console calibration over {} finished debates", report.debates),
        "similarity": "recorded",
        "measure": model.about.measure_label,
        "window": window,
        "debates": report.debates,
    });
    Ok(Publishing {
        debate_type: debate_type.to_owned(),
        change: SettingsChange::Publish {
            values,
            share_bp: 0,
            evidence,
        },
        reason: String::new(),
    })
}
