//! The operator's console: a terminal UI over a backend's rows. Inside, lowest first:
//! [`terminal`] (the terminal's modes and the process signals that concern them); [`kept`],
//! the regions of a frame kept from the frame before; [`escapes`], the bytes a frame's changed
//! cells are written as; [`screen`], the terminal a frame is written to, what changed since the
//! frame before; [`pager`]; [`app`], the console's state and the only place it changes; [`ui`], the view drawn from that state (through `kept`);
//! [`reports`], the worker thread that computes the reports over many debates, owned by the
//! run; [`backend`], the console's commands carried out against the demo's memory store or a
//! live database; [`run`], the draw loop that ties them together on a terminal.

pub mod app;
pub mod backend;
mod escapes;
pub mod kept;
pub mod pager;
pub mod reports;
pub mod screen;
pub mod terminal;
pub mod ui;

mod run;

pub use run::{Ended, Error, run};
