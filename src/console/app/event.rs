//! What flows into the console, and what it asks of a backend.

use chrono::{DateTime, Utc};

use crossterm::event::{KeyEvent, MouseEvent};

use crate::config::theme::Theme;
use crate::console::pager;
use crate::domain::{Access, Change, DebateNote, OperatorAction, Peer, SettingsVersion, Status};
use crate::simulate::Playback;
pub use crate::store::Link;
use crate::store::{Feed, NoteFailed, Replica, ResolveError};

/// Every input to the console.
#[derive(Debug, Clone)]
pub enum Event {
    /// A key the operator pressed.
    Key(KeyEvent),
    /// The terminal's size (width, height): at start and on every change.
    Resize(u16, u16),
    /// A mouse wheel turn or click (acted on only when mouse support is on).
    Mouse(MouseEvent),
    /// The active theme file changed: the theme it now holds, or why it cannot be used.
    Theme(Result<Box<Theme>, String>),
    /// A row landed in the store.
    Store(Box<Change>),
    /// The outcome of a [`Command::Resolve`].
    Resolved(Result<OperatorAction, ResolveError>),
    /// The outcome of a [`Command::Note`].
    Noted(Result<DebateNote, NoteFailed>),
    /// The live database connection changed state.
    Link(Link),
    /// What the live database lets this console do, checked on every connect.
    Access(Access),
    /// The other consoles on the live database now.
    Presence(Vec<Peer>),
    /// How the subscriber read stands with the primary written (a console reading apart).
    Replica(Replica),
    /// The controller settings' history as the live database has it now, or why it would not
    /// give it.
    Settings(Result<Vec<SettingsVersion>, String>),
    /// The outcome of a [`Command::Publish`]: the version written, or why not (the database's
    /// reason for a refusal).
    Published(Result<SettingsVersion, String>),
    /// The calibration or shadow-week figures changed: the reports worker's figures now (see
    /// [`super::Reports`]).
    Reports(Box<super::Figures>),
    /// The wall clock, once a second: gated countdowns move.
    Tick(DateTime<Utc>),
    /// Every row of debate `id`, asked for ([`Command::LoadHistory`]), was sent (before this);
    /// `found`: the backend has the debate.
    History { id: String, found: bool },
    /// A [`Command::Page`] ended: the pager ran, or why it could not.
    Paged(Result<(), pager::Error>),
    /// What one database of several said (a console on several databases: its feed's rows,
    /// link, rights, presence and histories, the outcomes of what it was asked), tagged with
    /// its context.
    In(super::contexts::Ctx, Box<Event>),
}

impl From<Feed> for Event {
    fn from(feed: Feed) -> Event {
        match feed {
            Feed::Row(change) => Event::Store(change),
            Feed::Link(link) => Event::Link(link),
            Feed::Access(access) => Event::Access(access),
            Feed::Presence(peers) => Event::Presence(peers),
            Feed::History { id, found } => Event::History { id, found },
            Feed::Settings(history) => Event::Settings(history),
            Feed::Replica(replica) => Event::Replica(replica),
        }
    }
}

/// What the console asks a backend to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Record an operator's resolution of a decision, exactly once.
    Resolve(OperatorAction),
    /// Say this to the other consoles from now on (presence, on a live database).
    Present(Status),
    /// Pin a note to a debate (append-only; not an action).
    Note(DebateNote),
    /// Write a new version of a debate type's controller settings: publish, promote or roll
    /// back.
    Publish(Box<super::rollout::Publishing>),
    /// Pause, resume or change the speed of the simulated debates.
    SetPlayback(Playback),
    /// Load every row of a debate (only the start window is loaded from a database).
    LoadHistory(String),
    /// Load the debates whose id, question, status, mode or roster contains this text (a
    /// filter confirmed), as the start window loads them: debates the console let go of, or
    /// never loaded, come back.
    Search(String),
    /// Put this text on the clipboard (OSC 52). The draw loop does it, not a backend.
    Copy(String),
    /// Show this text in the operator's pager, the console's terminal modes left meanwhile. The
    /// draw loop does it, not a backend.
    Page { title: String, text: String },
    /// This command for one database of several (its context's): an action, a note, a claim
    /// or a history goes to the debate's own database. Unaddressed, a search, a history looked
    /// up by id and presence go to every database, anything else to the first.
    In(super::contexts::Ctx, Box<Command>),
    /// The operator quit: take leave of the other consoles (a live database's presence row
    /// deleted, so that they drop this console at once), then carry out nothing more. Sent by
    /// the console's run as it ends, never by an update.
    Leave,
}
