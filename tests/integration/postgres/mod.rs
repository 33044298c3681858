//! Against a real PostgreSQL started from the system's server binaries (no mock), each test in
//! a database of its own on the binary's shared server (the restart test on a server of its
//! own). Fails loudly when no server can be started.

mod actions;
mod commands;
mod feed;
mod migrations;

use std::time::{Duration, Instant};

use gavel::app::{Command, Event, Link, update};
use gavel::domain::{ActionKind, Decision, OperatorAction, Reported};
use gavel::policy::ControllerConfig;
use gavel::store::postgres::{Target, migrate, record};
use tokio_postgres::Client;

use crate::common;
use common::pg::{
    Console, Database, SESSION, database, fresh_database, migrated_database, server, table_count,
    texts, write_turns,
};
use common::screen;

/// Plays `fixtures` into a migrated database at once, as an orchestrator with no pauses would.
async fn play_into(target: &Target, fixtures: Vec<gavel::simulate::Fixture>) {
    use gavel::config::{Config, SimulatorConfig};
    let config = std::sync::Arc::new(Config {
        simulator: SimulatorConfig {
            round_interval_secs: 0.0,
            turn_interval_secs: 0.0,
            gated_timeout_secs: 0.0,
        },
        ..Config::default()
    });
    let (_playback, clock) = tokio::sync::watch::channel(gavel::simulate::Playback::default());
    gavel::orchestrator::simulate(target, fixtures, config, clock, false)
        .await
        .unwrap();
}
