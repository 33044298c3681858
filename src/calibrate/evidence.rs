//! A calibration as the evidence of a settings version. `gavel calibrate --json` writes each
//! report with where it came from ([`Calibration`]: the debates' source and window, the
//! similarity source and its measure); `gavel settings publish --from-calibration FILE --pick N`
//! reads such a file back ([`picked`]): the setting of the row picked ([`Pick`]), its measure,
//! and the evidence the version carries (the file's SHA-256, the pick, the grid point, the
//! source, window and count of debates; for debates of several databases, each context's name
//! and count too, the evidence of one database being as it was before contexts).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::record::SimilaritySource;
use super::replay::Setting;
use super::report::Report;
use crate::domain::{MeasureKind, SettingsValues};

/// The time of the first and of the last debate a calibration read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
}

impl Window {
    /// `window` widened to take in a debate that started at `start` and ended at `end` (either
    /// unknown).
    pub fn widen(
        window: Option<Window>,
        start: Option<DateTime<Utc>>,
        end: Option<DateTime<Utc>>,
    ) -> Option<Window> {
        let times = [start, end].into_iter().flatten();
        times.fold(window, |window, at| {
            Some(match window {
                None => Window {
                    first: at,
                    last: at,
                },
                Some(w) => Window {
                    first: w.first.min(at),
                    last: w.last.max(at),
                },
            })
        })
    }
}

/// One database of several a calibration read: its context's name, where it is (without its
/// secrets) and how many finished debates it gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextDebates {
    pub name: String,
    pub database: String,
    pub debates: u32,
}

/// One report as `gavel calibrate --json` prints it: the report's own fields, and where they
/// came from.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration<'a> {
    /// Where the debates came from: the recordings, or the database(s) (without secrets).
    pub source: &'a str,
    /// With several databases, each one's context and count of debates (absent with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contexts: Option<&'a [ContextDebates]>,
    /// The similarity source: `recorded`, `lexical` or `semantic`.
    pub similarity: SimilaritySource,
    /// Its measure, as people read it: `lexical (tfidf)`, `semantic (<model>)`.
    pub measure: String,
    /// The first and last debate's time, when known (a database's debates; recordings carry
    /// none).
    pub window: Option<Window>,
    #[serde(flatten)]
    pub report: &'a Report,
}

/// The keys a calibration's report has, besides its rows.
const REQUIRED: [&str; 5] = ["debates", "rows", "source", "similarity", "measure"];

/// Which row of a calibration to publish: `N` (1-based), or `SOURCE:N` in a file holding one
/// report per similarity source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub source: Option<SimilaritySource>,
    pub row: usize,
}

impl FromStr for Pick {
    type Err = String;

    fn from_str(raw: &str) -> Result<Pick, String> {
        let (source, row) = match raw.split_once(':') {
            Some((source, row)) => (Some(source.trim().parse::<SimilaritySource>()?), row),
            None => (None, raw),
        };
        match row.trim().parse::<usize>() {
            Ok(row) if row >= 1 => Ok(Pick { source, row }),
            _ => Err(format!(
                "--pick {raw:?}: expected a row number from 1 (N), or SOURCE:N"
            )),
        }
    }
}

impl fmt::Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Some(source) => write!(f, "{}:{}", source.name(), self.row),
            None => write!(f, "{}", self.row),
        }
    }
}

/// Why a file cannot be a version's evidence.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// Not what `gavel calibrate --json` writes: `why` says what is missing.
    #[error("{}: not a calibration (`gavel calibrate --json` output): {why}", .file.display())]
    NotACalibration { file: PathBuf, why: String },
    /// One report per similarity source, and the pick names none.
    #[error(
        "{}: holds one calibration per similarity source ({}): say which with --pick SOURCE:N, \
         e.g. --pick {}:{row}", .file.display(), .sources.join(", "), .sources[0]
    )]
    Ambiguous {
        file: PathBuf,
        sources: Vec<String>,
        row: usize,
    },
    /// The pick names a similarity source the file has no report of.
    #[error("{}: no calibration of the {wanted} similarity in it (it holds {})", .file.display(), .held.join(", "))]
    NoSuchSource {
        file: PathBuf,
        wanted: &'static str,
        held: Vec<String>,
    },
    /// The pick's row is past the report's rows.
    #[error("{}: --pick {pick}: the calibration has {rows} rows (pick 1 to {rows})", .file.display())]
    OutOfRange {
        file: PathBuf,
        pick: Pick,
        rows: usize,
    },
}

/// What a calibration's row gives a settings version.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    /// The row's setting (`None` round bounds: each debate's own).
    pub setting: Setting,
    /// The measure the similarities were measured with, and its model's provenance name.
    pub measure: MeasureKind,
    pub model: Option<String>,
    /// The version's evidence: `calibration_sha256`, `pick`, `similarity`, `grid_point`,
    /// `source`, `measure`, `window`, `debates`; and `contexts` when the calibration read
    /// several databases.
    pub evidence: Value,
}

impl Picked {
    /// `base` with the row's thresholds, bounds (each left `own` keeps `base`'s) and measure.
    pub fn over(&self, base: &SettingsValues) -> SettingsValues {
        let s = &self.setting;
        SettingsValues {
            similarity_threshold: s.similarity_threshold,
            similarity_measure: self.measure,
            similarity_model: self.model.clone(),
            novelty_floor: s.novelty_threshold,
            min_rounds: s.min_rounds.unwrap_or(base.min_rounds),
            max_rounds: s.max_rounds.unwrap_or(base.max_rounds),
            budget_fraction: s.budget_fraction,
            ..base.clone()
        }
    }
}

/// The row `pick` of the calibration `bytes` (read from `file`, named in errors).
pub fn picked(file: &Path, bytes: &[u8], pick: Pick) -> Result<Picked, EvidenceError> {
    let not = |why: String| EvidenceError::NotACalibration {
        file: file.to_owned(),
        why,
    };
    let value: Value = serde_json::from_slice(bytes).map_err(|e| not(format!("not JSON ({e})")))?;
    let Value::Object(top) = value else {
        return Err(not("not a JSON object".to_owned()));
    };
    let report = report_of(file, &top, pick)?;
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter(|key| !report.contains_key(**key))
        .map(|key| format!("{key:?}"))
        .collect();
    if !missing.is_empty() {
        return Err(not(format!("it has no {}", missing.join(", "))));
    }
    let similarity = report["similarity"].as_str().unwrap_or_default();
    if let Some(wanted) = pick.source
        && wanted.name() != similarity
    {
        return Err(EvidenceError::NoSuchSource {
            file: file.to_owned(),
            wanted: wanted.name(),
            held: vec![similarity.to_owned()],
        });
    }
    let rows = report["rows"]
        .as_array()
        .ok_or_else(|| not("its \"rows\" is not a list".to_owned()))?;
    let row = (pick.row.checked_sub(1))
        .and_then(|at| rows.get(at))
        .ok_or_else(|| EvidenceError::OutOfRange {
            file: file.to_owned(),
            pick,
            rows: rows.len(),
        })?;
    let grid_point = row.get("setting").cloned().unwrap_or(Value::Null);
    let setting: Setting = serde_json::from_value(grid_point.clone())
        .map_err(|e| not(format!("row {} has no setting ({e})", pick.row)))?;
    let label = report["measure"].as_str().unwrap_or_default();
    let (measure, model) = measure_of(label).ok_or_else(|| {
        not(format!(
            "its measure {label:?} is neither `lexical (...)` nor `semantic (<model>)`"
        ))
    })?;
    let mut evidence = serde_json::json!({
        "calibration_sha256": sha256(bytes),
        "pick": pick.row,
        "similarity": similarity,
        "grid_point": grid_point,
        "source": report["source"],
        "measure": label,
        "window": report.get("window").cloned().unwrap_or(Value::Null),
        "debates": report["debates"],
    });
    if let Some(contexts) = report.get("contexts") {
        let _: Vec<ContextDebates> = serde_json::from_value(contexts.clone())
            .map_err(|e| not(format!("its \"contexts\" is not a list of contexts ({e})")))?;
        evidence["contexts"] = contexts.clone();
    }
    Ok(Picked {
        setting,
        measure,
        model,
        evidence,
    })
}

/// The report `pick` names in a file's top object: the object itself when it is one report,
/// else its entry for the pick's similarity source.
fn report_of<'a>(
    file: &Path,
    top: &'a Map<String, Value>,
    pick: Pick,
) -> Result<&'a Map<String, Value>, EvidenceError> {
    if top.contains_key("rows") {
        return Ok(top);
    }
    let held: Vec<(&str, &Map<String, Value>)> = SimilaritySource::ALL
        .iter()
        .filter_map(|s| Some((s.name(), top.get(s.name())?.as_object()?)))
        .filter(|(_, report)| report.contains_key("rows"))
        .collect();
    let names = || held.iter().map(|(name, _)| (*name).to_owned()).collect();
    match (pick.source, held.as_slice()) {
        (_, []) => Err(EvidenceError::NotACalibration {
            file: file.to_owned(),
            why: "it has no \"rows\" (nor a report per similarity source)".to_owned(),
        }),
        (None, [(_, report)]) => Ok(report),
        (None, _) => Err(EvidenceError::Ambiguous {
            file: file.to_owned(),
            sources: names(),
            row: pick.row,
        }),
        (Some(wanted), _) => held
            .iter()
            .find(|(name, _)| *name == wanted.name())
            .map(|(_, report)| *report)
            .ok_or_else(|| EvidenceError::NoSuchSource {
                file: file.to_owned(),
                wanted: wanted.name(),
                held: names(),
            }),
    }
}

/// The measure and model a measure's label names: `lexical (tfidf)` is the lexical measure,
/// `semantic (<model>)` the semantic one with that model.
fn measure_of(label: &str) -> Option<(MeasureKind, Option<String>)> {
    let (kind, rest) = label.split_once(" (")?;
    let model = rest.strip_suffix(')')?;
    match kind.parse().ok()? {
        MeasureKind::Lexical => Some((MeasureKind::Lexical, None)),
        MeasureKind::Semantic if !model.is_empty() => {
            Some((MeasureKind::Semantic, Some(model.to_owned())))
        }
        MeasureKind::Semantic => None,
    }
}

/// The SHA-256 of `bytes` in lower-case hex.
fn sha256(bytes: &[u8]) -> String {
    crate::embed::hex(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

/// A version's evidence in a line, for people: `calibration sha256 <hex>, row 3 of the
/// recorded similarity's, measure lexical (tfidf), 9 debates: <source>, 2026-11-20 09:00 UTC to
/// 2026-11-27 18:00 UTC`; evidence gavel did not write is shown as its JSON. Not made inert: the
/// caller does, for where it prints.
pub fn describe(evidence: &Value) -> String {
    let text = |key: &str| evidence.get(key).and_then(Value::as_str);
    let mut parts = Vec::new();
    if let Some(digest) = text("calibration_sha256") {
        parts.push(format!("calibration sha256 {digest}"));
    }
    match (evidence.get("pick"), text("similarity")) {
        (Some(pick), Some(similarity)) => {
            parts.push(format!("row {pick} of the {similarity} similarity's"))
        }
        (Some(pick), None) => parts.push(format!("row {pick}")),
        _ => {}
    }
    if let Some(measure) = text("measure") {
        parts.push(format!("measure {measure}"));
    }
    match (evidence.get("debates"), text("source")) {
        (Some(count), Some(source)) => parts.push(format!("{count} debates: {source}")),
        (Some(count), None) => parts.push(format!("{count} debates")),
        (None, Some(source)) => parts.push(source.to_owned()),
        (None, None) => {}
    }
    if let Some(Ok(contexts)) = evidence
        .get("contexts")
        .map(|c| serde_json::from_value::<Vec<ContextDebates>>(c.clone()))
    {
        let each: Vec<String> = contexts
            .iter()
            .map(|c| format!("{} {}", c.name, c.debates))
            .collect();
        parts.push(format!("from contexts {}", each.join(", ")));
    }
    if let Some(Ok(window)) = evidence
        .get("window")
        .filter(|w| !w.is_null())
        .map(|w| serde_json::from_value::<Window>(w.clone()))
    {
        let at = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
        parts.push(format!("{} to {}", at(window.first), at(window.last)));
    }
    if parts.is_empty() {
        evidence.to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration of one report with one row, as `gavel calibrate --json` writes it, with
    /// `contexts` when given.
    fn calibration(contexts: Option<Value>) -> Vec<u8> {
        let mut report = serde_json::json!({
            "source": "the finished debates of 2 databases: ...",
            "similarity": "recorded",
            "measure": "lexical (tfidf)",
            "window": null,
            "debates": 3,
            "rows": [{"setting": {"similarity_threshold": 0.9, "novelty_threshold": 1,
                      "min_rounds": null, "max_rounds": null, "budget_fraction": 0.8}}],
        });
        if let Some(contexts) = contexts {
            report["contexts"] = contexts;
        }
        serde_json::to_vec(&report).unwrap()
    }

    fn pick(bytes: &[u8]) -> Result<Picked, EvidenceError> {
        picked(Path::new("c.json"), bytes, "1".parse().unwrap())
    }

    #[test]
    fn the_evidence_of_several_databases_names_each_context_and_of_one_is_as_before() {
        let contexts = serde_json::json!([
            {"name": "prod", "database": "h:5432/debates", "debates": 2},
            {"name": "eu", "database": "e:5432/debates", "debates": 1},
        ]);
        let several = pick(&calibration(Some(contexts.clone()))).unwrap();
        assert_eq!(several.evidence["contexts"], contexts);
        assert!(
            describe(&several.evidence).contains(
                "3 debates: the finished debates of 2 databases: ..., from contexts prod 2, eu 1"
            ),
            "{}",
            describe(&several.evidence)
        );
        let one = pick(&calibration(None)).unwrap();
        let keys: std::collections::BTreeSet<&str> = one
            .evidence
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            [
                "calibration_sha256",
                "debates",
                "grid_point",
                "measure",
                "pick",
                "similarity",
                "source",
                "window"
            ]
        );
        assert!(!describe(&one.evidence).contains("contexts"));
    }

    #[test]
    fn contexts_that_are_not_a_list_of_contexts_are_refused() {
        for bad in [
            serde_json::json!("prod"),
            serde_json::json!([{"name": "prod"}]),
        ] {
            let refused = pick(&calibration(Some(bad.clone()))).unwrap_err();
            assert!(
                refused.to_string().starts_with(
                    "c.json: not a calibration (`gavel calibrate --json` output): its \"contexts\" is not a list of contexts"
                ),
                "{bad}: {refused}"
            );
        }
    }
}
