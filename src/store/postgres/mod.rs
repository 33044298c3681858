//! The PostgreSQL backend, following `../shared/interop.md`: migrations, the live listener,
//! lenient row reading, exactly-once operator actions, and a throwaway local server.

mod actions;
mod connect;
mod libpq;
mod listener;
mod local;
mod migrate;
mod queries;
pub mod rows;
mod stage;
mod tls;

pub use actions::record;
pub use connect::Target;
pub use listener::{START_WINDOW, listen};
pub use local::LocalServer;
pub use migrate::migrate;
pub use queries::{Notice, audit_rows, finished_debates, history};
pub use stage::{Orchestrator, PgStage, simulate};
