//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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
    #[command(subcommand)]
    pub command: Commands,
}

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Play recorded debates through gavel's controller and judge, live in the console.
    Demo {
        /// Fixture files to play (default: the bundled recordings).
        #[arg(value_name = "FIXTURE")]
        fixtures: Vec<PathBuf>,
        /// The name recorded with your actions (default: config, then the login user).
        #[arg(long)]
        operator: Option<String>,
        /// Playback speed to start at (0.25 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
        /// Play through a throwaway local PostgreSQL (started from the system's server
        /// binaries, removed on exit) instead of memory: migrate, simulate and watch in one.
        #[arg(long)]
        postgres: bool,
    },
    /// Create or complete gavel's tables, functions and triggers in a database (idempotent).
    Migrate {
        #[command(flatten)]
        db: Db,
    },
    /// The console on a live database.
    Watch {
        #[command(flatten)]
        db: Db,
        /// The name recorded with your actions (default: config, then the login user).
        #[arg(long)]
        operator: Option<String>,
    },
    /// Play recorded debates into a database as an orchestrator would, honouring operator
    /// actions; prints each decision and how each debate ends.
    Simulate {
        #[command(flatten)]
        db: Db,
        /// Fixture files to play (default: the bundled recordings).
        #[arg(value_name = "FIXTURE")]
        fixtures: Vec<PathBuf>,
        /// Playback speed (0.25 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
    },
    /// Validate fixture files and report every problem as file:line.
    Check {
        #[arg(value_name = "FIXTURE", required = true)]
        fixtures: Vec<PathBuf>,
    },
}

/// Which database: `--db URL`, else DATABASE_URL, else the libpq environment (PGHOST, ...).
#[derive(Debug, clap::Args)]
pub struct Db {
    /// postgres://user@host/db?sslmode=verify-full, or key=value pairs.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
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
