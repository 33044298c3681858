//! gavel's integration tests, as one binary: one build and one link for all of them, and one
//! PostgreSQL server that the tests against a database share (`common::pg::fresh_database`: a
//! database per test). A test that changes the cluster itself (stops or restarts it, creates
//! login roles, asks for passwords or TLS) starts a server of its own (`common::pg::server`).
//!
//! Each module below is one area, named as the docs' "Tested by" lines name it.

mod common;

mod audit_trail;
mod calibrate;
mod cli;
mod command_line;
mod completions;
mod config;
mod connect;
mod console;
mod contexts;
mod contexts_rollout;
mod controller;
mod convergence;
mod copy;
mod docs;
mod export;
mod faults;
mod filter;
mod fixtures;
mod fleet;
mod footer;
mod fuzz;
mod judge;
mod kept;
mod layers;
mod notes;
mod older_rounds;
mod operator_desk;
mod postgres;
mod presence;
mod read_apart;
mod read_apart_faults;
mod reading;
mod report;
mod rollout;
mod semantic;
mod signals;
mod simulator;
mod snapshots;
mod team;
mod terminal_and_exits;
mod text_input;
mod time_travel;
mod tmux_smoke;
mod trace;
mod untrusted;
mod update;
mod vectors;
