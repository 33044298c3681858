//! The PostgreSQL backend, following `docs/database-contract.md`: migrations, the live listener,
//! lenient row reading, exactly-once operator actions, notes pinned to debates, what a role may
//! write, presence, a console's two sides (a subscriber read, its primary written) and how the
//! subscriber stands with the primary, the controller settings' history and rollouts, the
//! viewer, operator and publisher roles, the publication consoles' subscribers replicate, the
//! rows an orchestrator writes (for the simulator standing in for one), and a
//! throwaway local server.

mod access;
mod actions;
mod connect;
mod contexts;
mod error;
mod heartbeat;
mod libpq;
mod listener;
mod local;
mod migrate;
mod notes;
mod notifications;
mod orchestrator;
mod payload;
mod plans;
mod presence;
mod queries;
mod replica;
mod replication;
mod roles;
pub mod rows;
mod settings;
mod sides;
mod tables;
mod tls;

pub use access::access;
pub use actions::{Observed, existing, observe, record, resolve, write_if_unchanged};
pub use connect::Target;
pub use contexts::{MAX_CONTEXT_NAME, check_name, default_name, split_named, unique_names};
pub use error::{Error, Result};
pub use listener::{KEEPALIVE, START_WINDOW, Wanted, listen};
pub use local::{LocalServer, REPLICATION};
pub use migrate::{migrate, migrate_each, migrations};
pub use notes::pin;
pub use notifications::{Notifications, Pump};
pub use orchestrator::{Orchestrator, write_decision, write_judgment, write_session, write_turn};
pub use payload::Notice;
pub use presence::{BURST, CHANNEL, HEARTBEAT, LEAVE, LINGER, REFILL, hearing, present};
pub use queries::{audit_rows, finished_debates, history};
pub use replication::{
    LOCAL_ONLY, PUBLICATION, Publisher, Subscribed, Sync, check_publisher, keep_local, subscribe,
    sync,
};
pub use roles::{
    OPERATOR_ROLE, PUBLISHER_ROLE, VIEWER_ROLE, ensure_roles, grant, grant_publishers, revoke,
};
pub use settings::{
    MAX_HISTORY, Publication, SETTINGS_CHANNEL, debate_types, known_debate_type, publish,
    settings_for, settings_history, settings_in_force, settings_version,
};
pub use sides::Sides;
