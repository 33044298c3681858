//! Calibration grids: `axis=values` specs, e.g. `similarity=0.80:0.95:0.05` (start:end:step,
//! both ends included), `novelty=0,1,2` (a list) or `budget=0.8` (one value), turned into every
//! combination of their values. Axes not given keep the setting in force.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use super::replay::Setting;

/// More settings than this is a typo, not an exploration.
pub(crate) const MAX_SETTINGS: usize = 10_000;

/// A threshold a grid can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Axis {
    Similarity,
    Novelty,
    MinRounds,
    MaxRounds,
    Budget,
}

impl Axis {
    const ALL: [Axis; 5] = [
        Axis::Similarity,
        Axis::Novelty,
        Axis::MinRounds,
        Axis::MaxRounds,
        Axis::Budget,
    ];

    /// The short name and the configuration key it stands for.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Axis::Similarity => ("similarity", "similarity_threshold"),
            Axis::Novelty => ("novelty", "novelty_threshold"),
            Axis::MinRounds => ("min_rounds", "min_rounds"),
            Axis::MaxRounds => ("max_rounds", "max_rounds"),
            Axis::Budget => ("budget", "budget_fraction"),
        }
    }

    fn integral(self) -> bool {
        matches!(self, Axis::Novelty | Axis::MinRounds | Axis::MaxRounds)
    }

    /// The values the axis accepts.
    fn check(self, value: f64) -> Result<(), String> {
        let (name, _) = self.names();
        if !value.is_finite() {
            return Err(format!("{name} {value} is not a number"));
        }
        if self.integral() {
            if value < 0.0 || value.fract() != 0.0 || value > 1000.0 {
                return Err(format!("{name} {value} must be a whole number 0..1000"));
            }
            if self == Axis::MaxRounds && value < 1.0 {
                return Err("max_rounds must be at least 1".to_owned());
            }
        } else if !(0.0..=1.0).contains(&value) {
            return Err(format!("{name} {value} is outside 0..1"));
        }
        Ok(())
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.names().0)
    }
}

/// One `axis=values` spec.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisSpec {
    pub axis: Axis,
    pub values: Vec<f64>,
}

impl FromStr for AxisSpec {
    type Err = String;

    fn from_str(spec: &str) -> Result<AxisSpec, String> {
        let (key, values) = spec.split_once('=').ok_or_else(|| {
            format!("{spec:?}: expected axis=values, e.g. similarity=0.80:0.95:0.05")
        })?;
        let key = key.trim();
        let axis = Axis::ALL
            .into_iter()
            .find(|a| {
                let (short, long) = a.names();
                key == short || key == long
            })
            .ok_or_else(|| {
                let known: Vec<&str> = Axis::ALL.iter().map(|a| a.names().0).collect();
                format!(
                    "{spec:?}: unknown axis {key:?} (one of {})",
                    known.join(", ")
                )
            })?;
        let number = |text: &str| -> Result<f64, String> {
            text.trim()
                .parse::<f64>()
                .map_err(|_| format!("{spec:?}: {:?} is not a number", text.trim()))
        };
        let parts: Vec<&str> = values.split(':').collect();
        let values = match parts.as_slice() {
            [start, end, step] => {
                let (start, end, step) = (number(start)?, number(end)?, number(step)?);
                if !(step > 0.0 && step.is_finite()) {
                    return Err(format!("{spec:?}: the step must be positive"));
                }
                if end < start {
                    return Err(format!("{spec:?}: the range ends before it starts"));
                }
                let count = ((end - start) / step + 1e-9).floor() as usize + 1;
                if count > MAX_SETTINGS {
                    return Err(format!("{spec:?}: more than {MAX_SETTINGS} values"));
                }
                // Rounded to 9 places so that 0.80 + 3 * 0.05 prints and compares as 0.95.
                (0..count)
                    .map(|i| ((start + i as f64 * step) * 1e9).round() / 1e9)
                    .collect()
            }
            [list] => list
                .split(',')
                .map(number)
                .collect::<Result<Vec<f64>, String>>()?,
            _ => {
                return Err(format!(
                    "{spec:?}: values are start:end:step, a,b,c or one value"
                ));
            }
        };
        for &value in &values {
            axis.check(value).map_err(|e| format!("{spec:?}: {e}"))?;
        }
        Ok(AxisSpec { axis, values })
    }
}

impl<'de> Deserialize<'de> for AxisSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = String::deserialize(deserializer)?;
        spec.parse().map_err(serde::de::Error::custom)
    }
}

/// The grid the console and `gavel calibrate` use unless told otherwise.
pub fn default_grid() -> Vec<AxisSpec> {
    ["similarity=0.80:0.95:0.05", "novelty=0,1,2"]
        .iter()
        .map(|spec| spec.parse().expect("the default grid parses"))
        .collect()
}

/// Every combination of the axes' values over `current`; combinations whose min_rounds exceeds
/// their max_rounds are left out, and counted.
pub fn settings(specs: &[AxisSpec], current: &Setting) -> Result<(Vec<Setting>, usize), String> {
    for (i, spec) in specs.iter().enumerate() {
        if specs[..i].iter().any(|s| s.axis == spec.axis) {
            return Err(format!("the grid gives {} twice", spec.axis));
        }
    }
    let total: usize = specs.iter().map(|s| s.values.len()).product();
    if total > MAX_SETTINGS {
        return Err(format!(
            "the grid has {total} settings; at most {MAX_SETTINGS} (narrow a range)"
        ));
    }
    let mut combos = vec![current.clone()];
    let mut ordered: Vec<&AxisSpec> = specs.iter().collect();
    ordered.sort_by_key(|s| s.axis);
    for spec in ordered {
        combos = combos
            .iter()
            .flat_map(|base| spec.values.iter().map(move |&v| with(base, spec.axis, v)))
            .collect();
    }
    let before = combos.len();
    combos.retain(|s| match (s.min_rounds, s.max_rounds) {
        (Some(min), Some(max)) => min <= max,
        _ => true,
    });
    let skipped = before - combos.len();
    Ok((combos, skipped))
}

fn with(base: &Setting, axis: Axis, value: f64) -> Setting {
    let mut setting = base.clone();
    match axis {
        Axis::Similarity => setting.similarity_threshold = value,
        Axis::Novelty => setting.novelty_threshold = value as u32,
        Axis::MinRounds => setting.min_rounds = Some(value as u32),
        Axis::MaxRounds => setting.max_rounds = Some(value as u32),
        Axis::Budget => setting.budget_fraction = value,
    }
    setting
}
