//! gavel: a terminal console for the operators of multi-agent LLM debates, and the debate
//! system it watches (round controller, judge policy, convergence checks, signal extraction and
//! a simulator that plays recorded debates through them).
//!
//! The modules, lowest layer first (a module imports only modules below it; ARCHITECTURE.md
//! has the whole table):
//! - the core: [`domain`] (the contract's rows as types), [`text`], [`progress`], [`pace`],
//!   [`embed`], [`signals`], [`policy`];
//! - [`store`]: where rows live (in memory, or PostgreSQL);
//! - over the store: [`calibrate`], [`audit`], [`config`] (with the console's keys and themes),
//!   [`logging`], [`simulate`];
//! - [`console`]: the operator's terminal console and its two backends;
//! - [`cli`]: the command line, whose commands `main.rs` runs.
//!
//! Data flows one way: the simulator (or an orchestrator) writes rows to a [`store`]; each row
//! reaches the console as a [`console::app::Event`]; [`console::app::update`] changes the
//! [`console::app::Model`]; [`console::ui::view`] renders it read-only; an operator's confirmed
//! action leaves `update` as a [`console::app::Command`], is recorded in the store, and comes
//! back as a row.

#![warn(unreachable_pub)]

pub mod audit;
pub mod calibrate;
pub mod cli;
pub mod config;
pub mod console;
pub mod domain;
pub mod embed;
pub mod logging;
pub mod pace;
pub mod policy;
pub mod progress;
pub mod signals;
pub mod simulate;
pub mod store;
pub mod text;
