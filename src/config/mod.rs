//! Configuration: a TOML file read raw, then validated into [`Config`].
//!
//! Looked up at `--config PATH`, else `<config dir>/gavel/config.toml` when it exists, else the
//! built-in defaults. Every threshold the controller, the judge and the simulator use lives here.
//! So do the console's settings: its [`keys`] (the `[keys]` table over the bundled keymap) and
//! its [`theme`] (bundled or a file, reloaded on edit).

pub mod keys;
pub mod theme;

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::calibrate::Setting;
use crate::calibrate::grid::{AxisSpec, default_grid, settings};
use crate::calibrate::rollout::Guard;
use crate::domain::Limits;
use crate::embed::{self, Encoder, ModelChoice};
use crate::policy::{ControllerConfig, JudgeConfig};
use crate::signals::Measure;
use keys::{KeyOverrides, Keymap};

/// What is wrong with a configuration or theme: a file that cannot be read or used, each
/// message naming the file (and the line, where the TOML says) and what in it is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read; `what` says what it was to be (`config`, `theme`).
    #[error("cannot read {what} {}: {cause}", .path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        cause: io::Error,
    },
    /// Not TOML, or not the fields a `what` (`configuration`, `theme`) has, at `line`.
    #[error("{origin}{}: invalid {what}: {message}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        origin: String,
        line: Option<usize>,
        what: &'static str,
        message: String,
    },
    /// A `[keys]` entry that cannot be bound.
    #[error("{origin}:{line}: [keys] {message}")]
    Keys {
        origin: String,
        line: usize,
        message: String,
    },
    /// A value outside what its section takes; `problem` starts with the section,
    /// `[controller] ...`.
    #[error("{origin}: {problem}")]
    Value { origin: String, problem: String },
    /// No bundled theme has this name.
    #[error("no theme {name:?}: the bundled themes are {}, or give a theme file's path", .bundled.join(", "))]
    NoTheme {
        name: String,
        bundled: Vec<&'static str>,
    },
    /// A theme file (or its directory) could not be watched for edits.
    #[error("cannot watch {}: {cause}", .path.display())]
    Watch { path: PathBuf, cause: notify::Error },
}

/// Configuration results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The validated configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The name recorded with operator actions; see [`Config::operator_name`] for the default.
    pub operator: Option<String>,
    pub controller: ControllerConfig,
    pub judge: JudgeConfig,
    pub signals: SignalsConfig,
    pub simulator: SimulatorConfig,
    pub calibration: CalibrationConfig,
    pub ui: UiConfig,
    pub rollout: RolloutConfig,
    /// How far numbers in rows are trusted: `[limits] max_round`.
    pub limits: Limits,
    /// The `[keys]` table as written, with where each entry stands; [`Config::parse`] applies
    /// it to `keys`.
    #[serde(rename = "keys")]
    pub key_table: KeyOverrides,
    /// Key bindings: the bundled defaults with the `[keys]` table's actions rebound.
    #[serde(skip)]
    pub keys: Keymap,
    /// The databases `gavel watch` shows together, and `export`, `trace` and `calibrate` read
    /// together, when no `--db` is given (`[[contexts]]`).
    pub contexts: Vec<ContextConfig>,
}

/// One database of several a console shows: `[[contexts]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// What the console calls it (its column in the debates list, `:ctx NAME`).
    pub name: toml::Spanned<String>,
    /// A connection string, as `--db` takes it.
    pub db: Option<String>,
    /// A service of the service file (`pg_service.conf`): the same as `db = "service=NAME"`.
    pub service: Option<String>,
    /// Actions on its debates refused until unlocked, whatever its role may do.
    #[serde(default)]
    pub read_only: bool,
    /// The theme `:ctx NAME` shows it in: a bundled theme's name or a theme file.
    pub theme: Option<String>,
}

impl ContextConfig {
    /// The connection string: `db`, or the service named.
    pub fn connection(&self) -> String {
        match (&self.db, &self.service) {
            (Some(db), _) => db.clone(),
            (None, Some(service)) => format!(
                "service='{}'",
                service.replace('\\', "\\\\").replace('\'', "\\'")
            ),
            (None, None) => String::new(),
        }
    }
}

/// Which similarity the controller's first signal measures: `[signals]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignalsConfig {
    /// `semantic` (sentence embeddings, the default) or `lexical` (TF-IDF).
    pub similarity: SimilarityKind,
    /// The embedding model: `builtin` (paraphrase-MiniLM-L3-v2, compiled in), or a directory
    /// holding model.safetensors, config.json and tokenizer.json. Unset: the all-MiniLM-L6-v2
    /// `gavel models fetch` put in the data dir when it is there (see
    /// [`SignalsConfig::with_fetched_model`]), else the built-in one.
    pub model: Option<String>,
    /// Where round vectors are kept between runs (a file per model): a directory, or `off`.
    /// Unset: the data dir's `vectors`.
    pub vectors: Option<String>,
    /// Tokens of a round embedded, from its start, `[CLS]` and `[SEP]` included (256: what an
    /// orchestrator embedding each round as one all-MiniLM-L6-v2 input sees). Unset: the whole
    /// round.
    pub window: Option<usize>,
}

/// The fewest tokens `[signals] window` takes: [CLS], [SEP] and a few words.
const MIN_WINDOW: usize = 8;
/// More tokens than a round's text can hold ([`embed::MAX_ROUND_BYTES`]).
const MAX_WINDOW: usize = embed::MAX_ROUND_BYTES;

/// The two similarity measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimilarityKind {
    #[default]
    Semantic,
    Lexical,
}

impl SignalsConfig {
    /// The embedding model chosen.
    pub fn model_choice(&self) -> ModelChoice {
        match self.model.as_deref() {
            None | Some("builtin") => ModelChoice::Builtin,
            Some(dir) => ModelChoice::Dir(PathBuf::from(dir)),
        }
    }

    /// The measure in force; its model (shared by the whole process) loads on first use.
    pub fn measure(&self) -> Measure {
        match self.similarity {
            SimilarityKind::Lexical => Measure::Lexical,
            SimilarityKind::Semantic => self.semantic(),
        }
    }

    /// The semantic measure with the chosen model, whichever measure is in force.
    pub fn semantic(&self) -> Measure {
        Measure::Semantic(Encoder::shared(&self.model_choice(), self.window))
    }

    /// The directory round vectors are kept in, if they are kept.
    pub fn vector_dir(&self) -> Option<PathBuf> {
        match self.vectors.as_deref() {
            Some("off") => None,
            Some(dir) => Some(PathBuf::from(dir)),
            None => embed::default_vector_dir(),
        }
    }

    /// With no model set, the all-MiniLM-L6-v2 `gavel models fetch` put in the data dir, when
    /// all its files are there.
    pub fn with_fetched_model(mut self) -> SignalsConfig {
        if self.model.is_none()
            && let Some(dir) = embed::fetch::default_dir()
            && embed::missing_file(&dir).is_none()
        {
            self.model = Some(dir.display().to_string());
        }
        self
    }

    fn validate(&self) -> Result<(), String> {
        if let Some(window) = self.window
            && !(MIN_WINDOW..=MAX_WINDOW).contains(&window)
        {
            return Err(format!(
                "window: {window} tokens; a window holds {MIN_WINDOW} to {MAX_WINDOW}"
            ));
        }
        self.model_choice()
            .check()
            .map_err(|e| format!("model: {e}"))
    }
}

/// How the console looks and what input it takes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    /// A bundled theme's name (dark, light, high-contrast), or a theme file's path.
    pub theme: String,
    /// Mouse scrolling and selection.
    pub mouse: bool,
    /// Finished debates the console holds besides the running ones: the most recently finished
    /// this many (older ones come back from the database when jumped to).
    pub keep_finished: usize,
    /// How a decision that starts waiting for an operator is announced: not at all, the
    /// terminal bell, or a desktop notification (OSC 9, or OSC 777 for terminals that read it).
    pub notify: Notify,
    /// How long the watched orchestrator waits for an operator on a gated decision, for the
    /// countdown (`gavel watch`) of a debate whose session row does not say
    /// (`debate_sessions.gated_timeout_secs`, which the database fills in by default); the demo
    /// counts `[simulator] gated_timeout_secs`, its own.
    pub gated_timeout_secs: Option<f64>,
}

/// How the console announces a decision that starts waiting for an operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    #[default]
    Off,
    Bell,
    Osc9,
    Osc777,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            theme: "dark".to_owned(),
            mouse: false,
            // A week of a busy fleet, in well under 100 MiB.
            keep_finished: 100_000,
            notify: Notify::Off,
            gated_timeout_secs: None,
        }
    }
}

/// What `gavel calibrate` and the console's calibration view replay by default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalibrationConfig {
    /// Grid axes, e.g. `["similarity=0.80:0.95:0.05", "novelty=0,1,2"]`.
    pub grid: Vec<AxisSpec>,
}

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            grid: default_grid(),
        }
    }
}

/// How the console watches a settings rollout: `[rollout]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolloutConfig {
    /// The rates a canary must not raise (`override_rate`, `escalation_rate`,
    /// `verdict_flip_rate`): a guard trips when the canary's rate is above the stable arm's
    /// with 95% confidence (see [`Guard::trips`]), and the rollout then needs the operator.
    pub guards: Vec<Guard>,
}

impl Default for RolloutConfig {
    fn default() -> Self {
        RolloutConfig {
            guards: Guard::ALL.to_vec(),
        }
    }
}

impl RolloutConfig {
    fn validate(&self) -> Result<(), String> {
        for (at, guard) in self.guards.iter().enumerate() {
            if self.guards[..at].contains(guard) {
                return Err(format!("guards: {} is named twice", guard.name()));
            }
        }
        Ok(())
    }
}

/// The simulator's pace at 1x speed, and how long a gated debate waits for an operator.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulatorConfig {
    /// Pause before each round.
    pub round_interval_secs: f64,
    /// Pause after each turn lands.
    pub turn_interval_secs: f64,
    /// How long a gated debate waits for an operator before the controller's decision stands.
    pub gated_timeout_secs: f64,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        SimulatorConfig {
            round_interval_secs: 2.0,
            turn_interval_secs: 0.7,
            gated_timeout_secs: 90.0,
        }
    }
}

impl SimulatorConfig {
    pub(crate) fn round_interval(&self) -> Duration {
        Duration::from_secs_f64(self.round_interval_secs)
    }
    pub(crate) fn turn_interval(&self) -> Duration {
        Duration::from_secs_f64(self.turn_interval_secs)
    }
    pub(crate) fn gated_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.gated_timeout_secs)
    }

    fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("round_interval_secs", self.round_interval_secs),
            ("turn_interval_secs", self.turn_interval_secs),
            ("gated_timeout_secs", self.gated_timeout_secs),
        ] {
            if !(value.is_finite() && (0.0..=86_400.0).contains(&value)) {
                return Err(format!(
                    "{name} {value} must be between 0 and 86400 seconds"
                ));
            }
        }
        Ok(())
    }
}

impl UiConfig {
    /// The gated wait the countdown counts for a console attached to a database.
    pub(crate) fn gated_timeout(&self, simulator: &SimulatorConfig) -> Duration {
        self.gated_timeout_secs
            .map_or_else(|| simulator.gated_timeout(), Duration::from_secs_f64)
    }

    fn validate(&self) -> Result<(), String> {
        match self.gated_timeout_secs {
            Some(secs) if !(secs.is_finite() && (0.0..=86_400.0).contains(&secs)) => Err(format!(
                "gated_timeout_secs {secs} must be between 0 and 86400 seconds"
            )),
            _ => Ok(()),
        }
    }
}

impl Config {
    /// Parses and validates TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        let mut config: Config =
            toml::from_str(text).map_err(|e| invalid_toml(origin, text, "configuration", &e))?;
        config.keys = Keymap::with(&config.key_table).map_err(|e| Error::Keys {
            origin: origin.to_owned(),
            line: line_at(text, e.span.start),
            message: e.message,
        })?;
        let checks = [
            config
                .controller
                .validate()
                .map_err(|e| format!("[controller] {e}")),
            config.judge.validate().map_err(|e| format!("[judge] {e}")),
            config
                .signals
                .validate()
                .map_err(|e| format!("[signals] {e}")),
            config
                .limits
                .validate()
                .map_err(|e| format!("[limits] {e}")),
            config
                .controller
                .within(&config.limits)
                .map_err(|e| format!("[controller] {e}")),
            config
                .simulator
                .validate()
                .map_err(|e| format!("[simulator] {e}")),
            config.ui.validate().map_err(|e| format!("[ui] {e}")),
            config
                .rollout
                .validate()
                .map_err(|e| format!("[rollout] {e}")),
            settings(
                &config.calibration.grid,
                &Setting::current(&config.controller),
            )
            .map(drop)
            .map_err(|e| format!("[calibration] grid: {e}")),
        ];
        check_contexts(&config.contexts, text, origin)?;
        for check in checks {
            if let Err(problem) = check {
                return Err(Error::Value {
                    origin: origin.to_owned(),
                    problem,
                });
            }
        }
        Ok(config)
    }

    /// Loads `explicit`, else the file in the user's config directory, else the defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Config> {
        let path = match explicit {
            Some(path) => path.to_owned(),
            None => match default_path().filter(|p| p.exists()) {
                Some(path) => path,
                None => return Ok(Config::default()),
            },
        };
        let text = read("config", &path)?;
        Config::parse(&text, &path.display().to_string())
    }

    /// The operator name for actions: the configured one, else `$USER`, else the name the
    /// password database (`getpwuid_r`: /etc/passwd, or LDAP and the like through NSS) gives
    /// this process's effective user, else its numeric `uid N` (blank names are passed over).
    /// `--operator` comes before all of these.
    pub fn operator_name(&self) -> String {
        let os_user = std::iter::once_with(|| whoami::username().ok()).flatten();
        (self.operator.clone().into_iter())
            .chain(std::env::var("USER").ok())
            .chain(os_user)
            .find(|name| !name.trim().is_empty())
            .unwrap_or_else(|| {
                // SAFETY: geteuid has no preconditions and cannot fail.
                format!("uid {}", unsafe { libc::geteuid() })
            })
    }
}

/// Each `[[contexts]]` entry: a valid name no other entry has, and one of `db` or `service`;
/// an error names the entry's line.
fn check_contexts(contexts: &[ContextConfig], text: &str, origin: &str) -> Result<()> {
    for (at, context) in contexts.iter().enumerate() {
        let name = context.name.get_ref();
        let problem = if let Err(why) = crate::store::postgres::check_name(name) {
            why
        } else if contexts[..at].iter().any(|c| c.name.get_ref() == name) {
            format!("context name {name:?} is given twice")
        } else {
            match (&context.db, &context.service) {
                (Some(_), Some(_)) => {
                    format!("context {name}: db and service both given; give one")
                }
                (None, None) => format!("context {name}: give db (a connection string) or service"),
                _ => continue,
            }
        };
        return Err(Error::Invalid {
            origin: origin.to_owned(),
            line: Some(line_at(text, context.name.span().start)),
            what: "configuration",
            message: format!("[[contexts]] {problem}"),
        });
    }
    Ok(())
}

/// The text of the file at `path`, read as a `what` (`config`, `theme`).
pub fn read(what: &'static str, path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|cause| Error::Read {
        what,
        path: path.to_owned(),
        cause,
    })
}

/// A TOML file's error on one line: `origin:line: invalid {what}: message`, the line where the
/// TOML parser or a field's reader points.
pub(crate) fn invalid_toml(
    origin: &str,
    text: &str,
    what: &'static str,
    error: &toml::de::Error,
) -> Error {
    Error::Invalid {
        origin: origin.to_owned(),
        line: error.span().map(|span| line_at(text, span.start)),
        what,
        message: error.message().trim().to_owned(),
    }
}

/// The 1-based line of `text` that byte `offset` lies on, for errors in TOML files.
fn line_at(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

/// `<config dir>/gavel/config.toml`.
pub(crate) fn default_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("gavel").join("config.toml"))
}
