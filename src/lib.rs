//! gavel: a terminal console for the operators of multi-agent LLM debates, and the debate
//! system it watches (round controller, judge policy, convergence checks, signal extraction and
//! a simulator that plays recorded debates through them).
//!
//! Data flows one way: the simulator (or an orchestrator) writes rows to a [`store`]; each row
//! reaches the console as an [`app::Event`]; [`app::update`] changes the [`app::Model`];
//! [`ui::view`] renders it read-only; an operator's confirmed action leaves `update` as an
//! [`app::Command`], is recorded in the store, and comes back as a row.

pub mod app;
pub mod audit;
pub mod calibrate;
pub mod cli;
pub mod config;
pub mod demo;
pub mod domain;
pub mod embed;
pub mod executor;
pub mod keymap;
pub mod live;
pub mod logging;
pub mod memory;
pub mod orchestrator;
pub mod pace;
pub mod pager;
pub mod policy;
pub mod progress;
pub mod signals;
pub mod simulate;
pub mod store;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod tui;
pub mod ui;
