//! Against a real PostgreSQL started from the system's server binaries (no mock), each test in
//! a database of its own on the binary's shared server (the restart test, and the plans test
//! which needs pg_stat_statements and no autovacuum, each on a server of its own; replication
//! on the binary's one pair of a primary and a subscriber, `pair`). Fails loudly when no server
//! can be started.

mod actions;
mod commands;
mod exact;
mod feed;
mod fleets;
mod migrations;
mod notify_rows;
pub(crate) mod pair;
mod plans;
mod replication;
mod rewritten;
mod rollout;
mod settings;
mod several;

use std::time::{Duration, Instant};

use gavel::console::app::{Command, Event, Link, update};
use gavel::domain::{ActionKind, Decision, OperatorAction, Reported};
use gavel::policy::ControllerConfig;
use gavel::store::postgres::{KEEPALIVE, migrate, record};
use tokio_postgres::Client;

use crate::common;
use common::pg::{
    Console, Database, SESSION, database, fresh_database, migrated_database, play_into, server,
    server_with, table_count, texts, write_turns,
};
use common::screen;
