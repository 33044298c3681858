//! The console's state and the only place it changes.
//!
//! Every input arrives as one [`Event`]; [`update`] applies it to the [`Model`] and may answer
//! with [`Command`]s for a backend to carry out (record an operator action, change playback).
//! The results come back as events, and so do the reports worker's figures
//! ([`Event::Reports`]). [`Rollouts`] keeps the controller settings' history and the rollouts
//! in progress. The model is state only: nothing here does I/O, starts a thread,
//! waits or locks.

pub mod command_line;
mod contexts;
mod copy;
mod event;
pub mod filter;
mod fleet;
mod geometry;
mod model;
pub mod prompt;
mod publish;
mod reading;
mod reports;
mod rollout;
mod update;
mod wait_clock;

pub use crate::config::keys::{Action, Key, KeyError, KeyOverrides, Keymap};
pub use contexts::{Context, Contexts, Ctx};
pub use copy::{COPY_LIMIT, capped, round_text};
pub use event::{Command, Event, Link};
pub use fleet::{Fleet, Seq, SortOrder, Summary, Window};
pub use geometry::{Geometry, Region, TextRows, table_rows};
pub use model::{
    About, Chooser, Desk, DetailView, Flash, Focus, HELD_DEBATES, Intent, Live, Model, Navigation,
    Overlay, Past, Revisions, Screen, Settings, Time, worst_ruling,
};
pub use reading::{KEPT_SHOWN_MIB, Reading, SlotTrouble, Stall, wal_size};
pub use reports::{CALIBRATED, Figures, RUNNING_ROWS, Reports, SETTLING, Watched, at_cursor};
pub use rollout::{
    COMPARED, Draft, MAX_SHARE, Publishing, Rollouts, SettingsChange, Step, Tripped,
};
pub use update::{HELD_BACK, MAX_LINE, update};
pub use wait_clock::{Instant, WaitClock};
