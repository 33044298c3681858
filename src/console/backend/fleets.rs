//! Several databases behind one console: each context runs the live backend of one database
//! unchanged (its feed, catch-up and reconnects, its writer, its presence), its events tagged
//! with its context on their way to the console ([`Event::In`]); the console's commands go to
//! the database they are addressed to ([`Command::In`]: an action, a note, a settings version
//! written, what this console tells that database's others), a search, a history looked up by
//! id and presence to every one, anything else to the first. One database slow or down holds up
//! none of the others.

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::console::app::{Command, Ctx, Event};
use crate::console::backend::live;
use crate::domain::Limits;
use crate::store::postgres::Sides;

/// Starts following every database of `sides` (context 0 first, in their order); returns the
/// sender for the console's commands. Rows are read, and actions checked, within `limits`.
pub fn start(
    sides: Vec<Sides>,
    events: UnboundedSender<Event>,
    limits: Limits,
) -> UnboundedSender<Command> {
    let databases: Vec<UnboundedSender<Command>> = (0..)
        .zip(sides)
        .map(|(ctx, sides)| {
            let (tagged, said) = unbounded_channel();
            tokio::spawn(tag(ctx, said, events.clone()));
            live::start(sides, tagged, None, limits)
        })
        .collect();
    let (commands, receiver) = unbounded_channel();
    tokio::spawn(route(receiver, databases));
    commands
}

/// Hands on what one database's backend says, tagged with its context, until the console is
/// gone.
async fn tag(ctx: Ctx, mut said: UnboundedReceiver<Event>, events: UnboundedSender<Event>) {
    while let Some(event) = said.recv().await {
        if events.send(Event::In(ctx, Box::new(event))).is_err() {
            return;
        }
    }
}

/// Sends each of the console's commands to the databases it is for, until the console is gone.
async fn route(mut commands: UnboundedReceiver<Command>, databases: Vec<UnboundedSender<Command>>) {
    while let Some(command) = commands.recv().await {
        let leaving = command == Command::Leave;
        for (ctx, command) in addressed(command, databases.len()) {
            if let Some(database) = databases.get(usize::from(ctx)) {
                // A database's backend ends only with the console, or once it took leave.
                let _ = database.send(command);
            }
        }
        if leaving {
            // The console has taken leave once every database's backend has.
            for database in &databases {
                database.closed().await;
            }
            return;
        }
    }
}

/// Where `command` goes among `count` databases: where it is addressed; a search, a history
/// looked up by id, what this console says to the others or its leave, to every one; the terminal's
/// business (copy, page), nowhere; anything else (playback; a settings version the console did
/// not address, which it always does on several) to the first.
fn addressed(command: Command, count: usize) -> Vec<(Ctx, Command)> {
    let every = |command: Command| -> Vec<(Ctx, Command)> {
        (0..count)
            .filter_map(|ctx| Ctx::try_from(ctx).ok())
            .map(|ctx| (ctx, command.clone()))
            .collect()
    };
    match command {
        Command::In(ctx, command) => vec![(ctx, *command)],
        Command::Search(_) | Command::LoadHistory(_) | Command::Present(_) | Command::Leave => {
            every(command)
        }
        Command::Copy(_) | Command::Page { .. } => Vec::new(),
        command => vec![(0, command)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_goes_where_it_is_addressed_or_to_every_database() {
        let history = |id: &str| Command::LoadHistory(id.to_owned());
        assert_eq!(
            addressed(Command::In(1, Box::new(history("d"))), 3),
            [(1, history("d"))]
        );
        assert_eq!(
            addressed(history("d"), 3),
            [(0, history("d")), (1, history("d")), (2, history("d"))]
        );
        let search = Command::Search("x".to_owned());
        assert_eq!(addressed(search.clone(), 2).len(), 2);
        assert_eq!(addressed(Command::Copy("t".to_owned()), 2), []);
        assert_eq!(
            addressed(Command::Leave, 2),
            [(0, Command::Leave), (1, Command::Leave)]
        );
        let playback = Command::SetPlayback(crate::simulate::Playback::default());
        assert_eq!(addressed(playback.clone(), 2), [(0, playback)]);
    }

    /// A settings version written in the second database goes there alone.
    #[test]
    fn a_settings_version_goes_to_its_own_database_only() {
        use crate::console::app::{Publishing, SettingsChange};
        let publish = Command::Publish(Box::new(Publishing {
            debate_type: "standard".to_owned(),
            change: SettingsChange::Rollback { version: 2 },
            reason: "the canary raises the override rate".to_owned(),
        }));
        assert_eq!(
            addressed(Command::In(1, Box::new(publish.clone())), 2),
            [(1, publish)]
        );
    }

    /// The console's leave goes to every database, and is over (the console's sender closed)
    /// only once every database's backend has taken it and gone.
    #[tokio::test]
    async fn leave_is_taken_by_every_database_before_the_console_goes() {
        let (first, mut first_hears) = unbounded_channel();
        let (second, mut second_hears) = unbounded_channel();
        let (commands, receiver) = unbounded_channel();
        let routing = tokio::spawn(route(receiver, vec![first, second]));
        commands.send(Command::Leave).unwrap();
        assert_eq!(first_hears.recv().await, Some(Command::Leave));
        drop(first_hears);
        assert_eq!(second_hears.recv().await, Some(Command::Leave));
        tokio::task::yield_now().await;
        assert!(
            !commands.is_closed(),
            "the second database has not gone yet"
        );
        drop(second_hears);
        routing.await.unwrap();
        assert!(commands.is_closed());
    }
}
