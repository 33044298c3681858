//! The databases a console shows together, each a context: its name, how its link stands, what
//! its role may do, the other consoles on it, whether it is locked read-only, its theme. A
//! console on one database has no contexts here:
//! everything is as [`super::Live`] says, and a debate's context is always 0.

use crate::config::theme::Theme;
use crate::domain::{Access, Peer};

use super::event::{Command, Link};
use super::model::CHECKING_ACCESS;

/// A context's number, in the order the contexts were given (`--db`, `[[contexts]]`).
pub type Ctx = u16;

/// One database of several.
#[derive(Debug, Clone)]
pub struct Context {
    /// What the console calls it (unique among the contexts).
    pub name: String,
    /// Its feed's connection.
    pub link: Link,
    /// The database role its actions are stamped with, once it said so.
    pub role: Option<String>,
    /// Why it refuses this console's actions (its role may only watch), or that its rights
    /// are not known yet.
    pub denied: Option<String>,
    /// Why it refuses this console's notes.
    pub unpinnable: Option<String>,
    /// Locked read-only (`read_only = true` in its `[[contexts]]` entry) until unlocked.
    pub read_only: bool,
    /// The other consoles on it.
    pub peers: Vec<Peer>,
    /// The theme `:ctx NAME` shows it in, if it has one of its own.
    pub theme: Option<Theme>,
}

impl Context {
    /// A context not yet connected, its rights not yet known.
    pub fn new(name: String, read_only: bool, theme: Option<Theme>) -> Context {
        Context {
            name,
            link: Link::Connecting,
            role: None,
            denied: Some(CHECKING_ACCESS.to_owned()),
            unpinnable: Some(CHECKING_ACCESS.to_owned()),
            read_only,
            peers: Vec::new(),
            theme,
        }
    }

    /// Takes what the database now lets its role do.
    pub(crate) fn grant(&mut self, access: Access) {
        self.role = Some(access.role);
        self.unpinnable = access.notes;
        self.denied = access.actions;
    }
}

/// The contexts of a console on several databases (none on one). Which of them the list shows
/// is the list's own business ([`super::Fleet::context`]).
#[derive(Debug, Clone, Default)]
pub struct Contexts {
    all: Vec<Context>,
    /// The theme in force before `:ctx NAME` applied a context's own, for `:ctx all`.
    pub(crate) base_theme: Option<Theme>,
    /// Databases that said they have no debate by the id `:` looks up, since it was asked.
    unfound: usize,
    /// The context of the debate the others were last told this console looks at.
    pub(crate) told: Option<Ctx>,
}

impl Contexts {
    /// The contexts `all`.
    pub fn new(all: Vec<Context>) -> Contexts {
        Contexts {
            all,
            base_theme: None,
            unfound: 0,
            told: None,
        }
    }

    /// Whether the console shows several databases (else it has no contexts).
    pub fn several(&self) -> bool {
        self.all.len() > 1
    }

    pub fn get(&self, ctx: Ctx) -> Option<&Context> {
        self.all.get(usize::from(ctx))
    }

    pub(crate) fn get_mut(&mut self, ctx: Ctx) -> Option<&mut Context> {
        self.all.get_mut(usize::from(ctx))
    }

    /// Every context, with its number.
    pub fn iter(&self) -> impl Iterator<Item = (Ctx, &Context)> {
        (0..).zip(&self.all)
    }

    /// The contexts' names, by number; none on one database.
    pub fn names(&self) -> Vec<&str> {
        match self.several() {
            true => self.all.iter().map(|c| c.name.as_str()).collect(),
            false => Vec::new(),
        }
    }

    /// The context called `name`.
    pub fn find(&self, name: &str) -> Option<Ctx> {
        self.iter()
            .find(|(_, c)| c.name == name)
            .map(|(ctx, _)| ctx)
    }

    /// The context name of `ctx`, `""` when there are no contexts.
    pub fn name(&self, ctx: Ctx) -> &str {
        self.get(ctx).map_or("", |c| c.name.as_str())
    }

    /// The link of the console as a whole, for what does not look at each context: live when
    /// every context is; down when one is (the first down); else connecting.
    pub fn overall(&self) -> Link {
        if let Some(down) = self
            .all
            .iter()
            .find(|c| matches!(c.link, Link::Down { .. }))
        {
            return down.link.clone();
        }
        if self.all.iter().all(|c| c.link == Link::Live) {
            Link::Live
        } else {
            Link::Connecting
        }
    }

    /// Every context's peers, one after the other (for `:who` and the header's count).
    pub fn peers(&self) -> Vec<Peer> {
        self.all
            .iter()
            .flat_map(|c| c.peers.iter().cloned())
            .collect()
    }

    /// A debate is looked up by id in every database: none has said it lacks it yet.
    pub(crate) fn look_up(&mut self) {
        self.unfound = 0;
    }

    /// One more database said it has no debate by the id looked up: whether every one has.
    pub(crate) fn unfound_everywhere(&mut self) -> bool {
        self.unfound += 1;
        self.unfound >= self.all.len()
    }

    /// `command` for context `ctx`'s database alone: addressed to it when there are several
    /// (a console on one database sends it as it is).
    pub fn to(&self, ctx: Ctx, command: Command) -> Command {
        if self.several() {
            Command::In(ctx, Box::new(command))
        } else {
            command
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contexts(links: &[Link]) -> Contexts {
        Contexts::new(
            links
                .iter()
                .enumerate()
                .map(|(at, link)| Context {
                    link: link.clone(),
                    ..Context::new(format!("c{at}"), false, None)
                })
                .collect(),
        )
    }

    #[test]
    fn the_console_is_live_when_every_context_is_and_down_when_one_is() {
        let down = Link::Down {
            error: "refused".into(),
            retry_in: std::time::Duration::from_secs(1),
        };
        assert_eq!(contexts(&[Link::Live, Link::Live]).overall(), Link::Live);
        assert_eq!(
            contexts(&[Link::Live, Link::Connecting]).overall(),
            Link::Connecting
        );
        assert_eq!(contexts(&[Link::Connecting, down.clone()]).overall(), down);
    }

    #[test]
    fn a_command_is_addressed_only_on_several_databases() {
        let history = Command::LoadHistory("d".into());
        assert_eq!(contexts(&[Link::Live]).to(0, history.clone()), history);
        assert_eq!(
            contexts(&[Link::Live, Link::Live]).to(1, history.clone()),
            Command::In(1, Box::new(history))
        );
    }

    #[test]
    fn a_lookup_is_missing_once_every_database_said_so() {
        let mut contexts = contexts(&[Link::Live, Link::Live]);
        contexts.look_up();
        assert!(!contexts.unfound_everywhere());
        assert!(contexts.unfound_everywhere());
        contexts.look_up();
        assert!(!contexts.unfound_everywhere());
    }
}
