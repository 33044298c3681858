//! The controller's settings per debate type as the database keeps them
//! (`gavel_controller_settings`, migration V5): each version with who published it, why, on
//! what evidence, and the rollout state it leaves; what a debate is given at its start
//! ([`Assigned`]); and the arm a debate falls in ([`bucket`]), computed as the database does.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::reported::vocabulary;
use super::session::ControllerMode;

/// Basis points in the whole: a share of 10000 is every debate.
pub const WHOLE_SHARE: u32 = 10_000;

vocabulary! {
    /// Which side of a rollout a debate is on.
    Arm { Stable = "stable", Canary = "canary" }
}

vocabulary! {
    /// What a version of the settings history does.
    VersionKind { Publish = "publish", Promote = "promote", Rollback = "rollback" }
}

vocabulary! {
    /// How the similarity between rounds is measured.
    MeasureKind { Lexical = "lexical", Semantic = "semantic" }
}

/// A debate's bucket, 0..10000: the first 4 bytes of the SHA-256 of its id's UTF-8, read as an
/// unsigned big-endian integer, modulo 10000. A debate is in the canary when its bucket is below
/// the canary's share in basis points.
pub fn bucket(session_id: &str) -> u32 {
    let digest = ring::digest::digest(&ring::digest::SHA256, session_id.as_bytes());
    let first = digest.as_ref();
    u32::from_be_bytes([first[0], first[1], first[2], first[3]]) % WHOLE_SHARE
}

/// The arm of debate `session_id` in a rollout sending the canary to `share_bp` basis points.
pub fn arm_of(session_id: &str, share_bp: u32) -> Arm {
    if bucket(session_id) < share_bp {
        Arm::Canary
    } else {
        Arm::Stable
    }
}

/// The settings a version puts in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingsValues {
    pub mode: ControllerMode,
    pub similarity_threshold: f64,
    pub similarity_measure: MeasureKind,
    /// The model's provenance name (`similarity_model` in decision rows), for the semantic
    /// measure.
    pub similarity_model: Option<String>,
    /// A round converges only with fewer new claims than this.
    pub novelty_floor: u32,
    pub min_rounds: u32,
    pub max_rounds: u32,
    /// Share of the token budget past which a debate stops for safety.
    pub budget_fraction: f64,
}

/// The largest round bound a version may set.
pub const MAX_ROUNDS_BOUND: u32 = 1000;

impl SettingsValues {
    /// Checks each value against its range, as the table's constraints do; the error names the
    /// setting.
    pub fn validate(&self) -> Result<(), String> {
        let within = |name: &str, value: f64, low: f64, high: f64, low_open: bool| {
            let above_low = if low_open { value > low } else { value >= low };
            if value.is_finite() && above_low && value <= high {
                Ok(())
            } else {
                let open = if low_open { "(" } else { "" };
                Err(format!("{name} {value} is outside {open}{low}..{high}"))
            }
        };
        within(
            "similarity threshold",
            self.similarity_threshold,
            0.0,
            1.0,
            false,
        )?;
        within("budget fraction", self.budget_fraction, 0.0, 1.0, true)?;
        for (name, value, low) in [
            ("novelty floor", self.novelty_floor, 0),
            ("min rounds", self.min_rounds, 1),
            ("max rounds", self.max_rounds, 1),
        ] {
            if !(low..=MAX_ROUNDS_BOUND).contains(&value) {
                return Err(format!(
                    "{name} {value} is outside {low}..{MAX_ROUNDS_BOUND}"
                ));
            }
        }
        if self.min_rounds > self.max_rounds {
            return Err(format!(
                "min rounds {} is above max rounds {}",
                self.min_rounds, self.max_rounds
            ));
        }
        if let Some(model) = &self.similarity_model
            && !(1..=200).contains(&model.chars().count())
        {
            return Err("the similarity model's name must be 1 to 200 characters".to_owned());
        }
        Ok(())
    }

    /// The values in a line: `enabled · similarity 0.85 lexical · novelty 1 · rounds 2-8 ·
    /// budget 0.80`.
    pub fn summary(&self) -> String {
        let measure = match &self.similarity_model {
            Some(model) => format!("{} ({model})", self.similarity_measure),
            None => self.similarity_measure.to_string(),
        };
        format!(
            "{} · similarity {:.2} {measure} · novelty {} · rounds {}-{} · budget {:.2}",
            self.mode,
            self.similarity_threshold,
            self.novelty_floor,
            self.min_rounds,
            self.max_rounds,
            self.budget_fraction
        )
    }
}

/// A reason is required, of 1 to this many characters (blanks around it do not count).
pub const MAX_REASON: usize = 1000;

/// Checks a version's reason as the table does.
pub fn check_reason(reason: &str) -> Result<(), String> {
    match reason.trim().chars().count() {
        0 => Err("a reason is required: say why (--reason)".to_owned()),
        n if n > MAX_REASON => Err(format!(
            "the reason is {n} characters, more than {MAX_REASON}"
        )),
        _ => Ok(()),
    }
}

/// A share given in percent (0 < share <= 100, to a hundredth) as basis points.
pub fn share_from_percent(percent: f64) -> Result<u32, String> {
    if !percent.is_finite() || percent <= 0.0 || percent > 100.0 {
        return Err(format!(
            "share {percent}% is outside 0..100 (a share above 0, up to 100)"
        ));
    }
    let bp = (percent * 100.0).round();
    if (bp - percent * 100.0).abs() > 1e-6 {
        return Err(format!(
            "share {percent}% is finer than a hundredth of a percent"
        ));
    }
    Ok(bp as u32)
}

/// A share in basis points as percent text: `30%`, `12.5%`.
pub fn percent(share_bp: u32) -> String {
    let whole = share_bp / 100;
    match share_bp % 100 {
        0 => format!("{whole}%"),
        part if part % 10 == 0 => format!("{whole}.{}%", part / 10),
        part => format!("{whole}.{part:02}%"),
    }
}

/// One version of the settings history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingsVersion {
    pub version: i64,
    pub debate_type: String,
    pub kind: VersionKind,
    /// For a promote or rollback: the version it acts on.
    pub target: Option<i64>,
    /// The share of new debates the version is sent to, in basis points.
    pub share_bp: u32,
    /// The values it puts in force; `None` for a rollback to the controller's own defaults.
    pub values: Option<SettingsValues>,
    pub reason: String,
    /// The calibration the values came from; `None` when given by hand.
    pub evidence: Option<serde_json::Value>,
    /// The database role that wrote it.
    pub published_by: String,
    pub published_at: DateTime<Utc>,
    /// The state the version leaves: the version every other debate gets (`None`: the
    /// controller's defaults), and the canary with its share.
    pub stable_version: Option<i64>,
    pub canary_version: Option<i64>,
    pub canary_share_bp: Option<u32>,
    /// The stable version before this one.
    pub previous_stable: Option<i64>,
}

impl SettingsVersion {
    /// What the version did, in a line: `published to 30% of debates`, `promoted version 3 to
    /// every debate`, `rolled back version 3: version 1 in force again`.
    pub fn what(&self) -> String {
        let stable = |v: Option<i64>| {
            v.map_or_else(
                || "the controller's defaults".to_owned(),
                |v| format!("version {v}"),
            )
        };
        match self.kind {
            VersionKind::Publish if self.share_bp >= WHOLE_SHARE => {
                "published to every debate".to_owned()
            }
            VersionKind::Publish => format!(
                "published to {} of debates (the rest on {})",
                percent(self.share_bp),
                stable(self.stable_version)
            ),
            VersionKind::Promote => format!(
                "promoted version {} to every debate",
                self.target.unwrap_or_default()
            ),
            VersionKind::Rollback => format!(
                "rolled back version {}: {} in force",
                self.target.unwrap_or_default(),
                stable(self.stable_version)
            ),
        }
    }
}

/// The version a debate is given where nothing is in force: the controller's own defaults.
pub const DEFAULTS_VERSION: i64 = 0;

/// What a debate is given at its start (`gavel_settings_for`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assigned {
    /// The version given: [`DEFAULTS_VERSION`] where nothing is in force; `None` only from a
    /// database that answered none.
    pub version: Option<i64>,
    pub arm: Arm,
    pub values: Option<SettingsValues>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_is_the_digest_s_first_four_bytes_modulo_10000() {
        // SHA-256("abc") starts ba 78 16 bf: 3128432319.
        assert_eq!(bucket("abc"), 3_128_432_319 % 10_000);
        assert_eq!(arm_of("abc", 2320), Arm::Canary);
        assert_eq!(arm_of("abc", 2319), Arm::Stable);
        assert_eq!(arm_of("abc", WHOLE_SHARE), Arm::Canary);
    }

    #[test]
    fn shares_are_whole_basis_points_above_0_up_to_100_percent() {
        assert_eq!(share_from_percent(30.0), Ok(3000));
        assert_eq!(share_from_percent(12.34), Ok(1234));
        assert_eq!(share_from_percent(100.0), Ok(10_000));
        for bad in [0.0, -1.0, 100.5, f64::NAN, 0.001] {
            assert!(share_from_percent(bad).is_err(), "{bad}");
        }
        assert_eq!(percent(3000), "30%");
        assert_eq!(percent(1250), "12.5%");
        assert_eq!(percent(1234), "12.34%");
        assert_eq!(percent(5), "0.05%");
    }

    #[test]
    fn values_out_of_range_are_named() {
        let good = SettingsValues {
            mode: ControllerMode::Enabled,
            similarity_threshold: 0.85,
            similarity_measure: MeasureKind::Lexical,
            similarity_model: None,
            novelty_floor: 1,
            min_rounds: 2,
            max_rounds: 8,
            budget_fraction: 0.8,
        };
        assert_eq!(good.validate(), Ok(()));
        let cases = [
            (
                SettingsValues {
                    similarity_threshold: 1.5,
                    ..good.clone()
                },
                "similarity threshold 1.5 is outside 0..1",
            ),
            (
                SettingsValues {
                    budget_fraction: 0.0,
                    ..good.clone()
                },
                "budget fraction 0 is outside (0..1",
            ),
            (
                SettingsValues {
                    min_rounds: 9,
                    ..good.clone()
                },
                "min rounds 9 is above max rounds 8",
            ),
            (
                SettingsValues {
                    max_rounds: 5000,
                    ..good.clone()
                },
                "max rounds 5000 is outside 1..1000",
            ),
        ];
        for (values, why) in cases {
            assert_eq!(values.validate(), Err(why.to_owned()));
        }
        assert!(check_reason("  ").is_err());
        assert!(check_reason("calibrated on week 47").is_ok());
    }
}
