//! The `:` command line: reading a command ([`parse`]), completing what is typed ([`complete`])
//! and recalling earlier commands ([`History`]). Pure: the debates' ids come from the caller,
//! and only when the operator asks for a completion, at most [`ID_CANDIDATES`] of them.

use crate::config::theme;
use crate::domain::ControllerMode;

use super::fleet::SortOrder;

/// A command read from the `:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Colon {
    /// `:pending`: list only debates with a pending decision.
    Pending,
    /// `:waiting`: list only debates whose decision waits for the operator.
    Waiting,
    /// `:mode <mode>`: list only debates in that mode; `:mode` alone lists every mode again.
    Mode(Option<ControllerMode>),
    /// `:sort <arrival|pending|id>`.
    Sort(SortOrder),
    /// `:theme <name>`: a bundled theme.
    Theme(String),
    /// `:help`: the keys.
    Help,
    /// `:who`: the other consoles on the database.
    Who,
    /// `:q`, `:quit`.
    Quit,
    /// `:<debate id>` (or a unique part of one): select that debate.
    Jump(String),
    /// `:ctx NAME`: list only that database's debates, of several; `:ctx all` (`None`): every
    /// database's.
    Context(Option<String>),
}

/// The commands: their names (the first offered by completion, the others also understood),
/// what their argument may be (none: they take none), and what they do.
const COMMANDS: &[(&[&str], Argument, &str)] = &[
    (
        &["pending"],
        Argument::None,
        "list only the debates with a decision pending",
    ),
    (
        &["waiting"],
        Argument::None,
        "list only the debates waiting for you",
    ),
    (
        &["mode"],
        Argument::Mode,
        "list only the debates in that mode; alone, all",
    ),
    (&["sort"], Argument::Sort, "sort the debates list"),
    (
        &["theme"],
        Argument::Theme,
        "apply a bundled theme for the session",
    ),
    (&["help"], Argument::None, "this help"),
    (
        &["who"],
        Argument::None,
        "the other consoles on the database",
    ),
    (&["quit", "q"], Argument::None, "quit"),
];

/// The command named `name`: its first name and its argument.
fn command(name: &str) -> Option<(&'static str, Argument)> {
    COMMANDS
        .iter()
        .find(|(names, _, _)| names.contains(&name))
        .map(|(names, argument, _)| (names[0], *argument))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Argument {
    None,
    Mode,
    Sort,
    Theme,
}

/// The sort orders by name.
const SORTS: &[(&str, SortOrder)] = &[
    ("arrival", SortOrder::Arrival),
    ("pending", SortOrder::PendingFirst),
    ("id", SortOrder::Id),
];

/// Debate ids offered for one completion at most.
pub const ID_CANDIDATES: usize = 50;

impl Argument {
    /// The values this argument may take.
    fn values(self) -> Vec<&'static str> {
        match self {
            Argument::None => Vec::new(),
            Argument::Mode => ControllerMode::ALL.iter().map(|m| m.as_str()).collect(),
            Argument::Sort => SORTS.iter().map(|(name, _)| *name).collect(),
            Argument::Theme => theme::bundled_names().collect(),
        }
    }
}

/// Every command as the operator may type it, with what it does, for the help:
/// (`:mode <off|shadow|...>`, `list only ...`), ..., and a debate id last.
pub fn usages() -> Vec<(String, &'static str)> {
    let commands = COMMANDS.iter().map(|(names, argument, what)| {
        let names: Vec<String> = names.iter().map(|name| format!(":{name}")).collect();
        let usage = match argument {
            Argument::None => names.join(" "),
            _ => format!("{} <{}>", names.join(" "), argument.values().join("|")),
        };
        (usage, *what)
    });
    let id = (
        ":<debate id>".to_owned(),
        "select that debate (or the one whose id holds it)",
    );
    commands.chain(std::iter::once(id)).collect()
}

/// The command that picks a context, on several databases only.
const CONTEXT: &str = "ctx";

/// `:ctx`'s usage, for the help of a console on several databases (one on a single database
/// has nothing to pick).
pub fn context_usage() -> (String, &'static str) {
    (
        ":ctx <name|all>".to_owned(),
        "list only that database's debates; all: every database's",
    )
}

/// What the console says of a word that names no command: short enough for an 80-column
/// footer.
pub(crate) fn no_command(name: &str) -> String {
    format!("no command :{name} — :help lists the commands")
}

/// Reads a command line (without its `:`); `None` when it is blank.
pub fn parse(text: &str) -> Result<Option<Colon>, String> {
    let mut words = text.split_whitespace();
    let Some(name) = words.next() else {
        return Ok(None);
    };
    let args: Vec<&str> = words.collect();
    if name == CONTEXT {
        return match args.as_slice() {
            ["all"] => Ok(Some(Colon::Context(None))),
            [context] => Ok(Some(Colon::Context(Some((*context).to_owned())))),
            _ => Err("ctx takes a context's name, or all".to_owned()),
        };
    }
    let Some((command, argument)) = command(name) else {
        return match args.as_slice() {
            [] => Ok(Some(Colon::Jump(name.to_owned()))),
            _ => Err(no_command(name)),
        };
    };
    let one = |args: &[&str]| match args {
        [arg] => Ok(arg.to_lowercase()),
        _ => Err(format!(
            "{name} takes one of {}",
            argument.values().join(", ")
        )),
    };
    let colon = match argument {
        Argument::None if !args.is_empty() => {
            return Err(format!("{name} takes no argument"));
        }
        Argument::None => match command {
            "pending" => Colon::Pending,
            "waiting" => Colon::Waiting,
            "help" => Colon::Help,
            "who" => Colon::Who,
            _ => Colon::Quit,
        },
        Argument::Mode if args.is_empty() => Colon::Mode(None),
        Argument::Mode => {
            let mode = one(&args)?;
            Colon::Mode(Some(mode.parse().map_err(|_| {
                format!(
                    "no mode {mode}: the modes are {}",
                    argument.values().join(", ")
                )
            })?))
        }
        Argument::Sort => {
            let sort = one(&args)?;
            match SORTS.iter().find(|(n, _)| *n == sort) {
                Some((_, order)) => Colon::Sort(*order),
                None => {
                    return Err(format!(
                        "no sort order {sort}: the orders are {}",
                        argument.values().join(", ")
                    ));
                }
            }
        }
        Argument::Theme => {
            let name = one(&args)?;
            if !argument.values().contains(&name.as_str()) {
                return Err(format!(
                    "no bundled theme {name}: the themes are {}",
                    argument.values().join(", ")
                ));
            }
            Colon::Theme(name)
        }
    };
    Ok(Some(colon))
}

/// What a completion offers for the word being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The line before the word completed.
    pub head: String,
    /// What the word may become, sorted.
    pub candidates: Vec<String>,
    /// More debate ids match than were offered.
    pub more: bool,
    /// The candidate put in the line by cycling through them, if any.
    pub chosen: Option<usize>,
}

impl Completion {
    /// The line with candidate `at` in place of the word.
    pub fn line(&self, at: usize) -> String {
        format!("{}{}", self.head, self.candidates[at])
    }
}

/// The completions of the last word of `text`: command names, then the argument of a command
/// (modes, sort orders, theme names; `ctx`'s, `contexts` and `all`, when the console shows
/// several databases, `contexts` their names, else empty); a first word is also completed as a
/// debate id from `ids(prefix, limit)` (ids starting with the prefix, in any order), when it is
/// not empty.
pub fn complete<'a>(
    text: &str,
    contexts: &[&str],
    ids: impl FnOnce(&str, usize) -> Vec<&'a str>,
) -> Completion {
    let (head, word) = match text.rfind(' ') {
        Some(at) => text.split_at(at + 1),
        None => ("", text),
    };
    let mut more = false;
    let mut candidates: Vec<String> = match head.split_whitespace().collect::<Vec<_>>()[..] {
        [] => {
            let ctx = (!contexts.is_empty()).then_some(CONTEXT);
            let mut names: Vec<String> = COMMANDS
                .iter()
                .map(|(names, _, _)| names[0])
                .chain(ctx)
                .filter(|name| name.starts_with(word))
                .map(str::to_owned)
                .collect();
            if !word.is_empty() {
                let found = ids(word, ID_CANDIDATES + 1);
                more = found.len() > ID_CANDIDATES;
                let mut found: Vec<String> = found
                    .into_iter()
                    .take(ID_CANDIDATES)
                    .map(str::to_owned)
                    .collect();
                found.sort_unstable();
                names.extend(found);
            }
            names
        }
        [CONTEXT] if !contexts.is_empty() => {
            let mut names: Vec<String> = contexts
                .iter()
                .copied()
                .chain(["all"])
                .filter(|name| name.starts_with(word))
                .map(str::to_owned)
                .collect();
            names.sort_unstable();
            names
        }
        [name] => command(name)
            .map(|(_, argument)| argument.values())
            .unwrap_or_default()
            .into_iter()
            .filter(|value| value.starts_with(&word.to_lowercase()))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    candidates.dedup();
    Completion {
        head: head.to_owned(),
        candidates,
        more,
        chosen: None,
    }
}

/// Whether a command by this name takes an argument (a completed name is then followed by a
/// space).
pub(crate) fn takes_argument(name: &str) -> bool {
    name == CONTEXT || command(name).is_some_and(|(_, argument)| argument != Argument::None)
}

/// The longest prefix every one of `words` starts with.
pub fn common_prefix(words: &[String]) -> &str {
    let Some(first) = words.first() else {
        return "";
    };
    let mut end = first.len();
    for word in &words[1..] {
        let same: usize = first
            .chars()
            .zip(word.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        end = end.min(same);
    }
    &first[..end]
}

/// The commands run this session, for ↑ and ↓ in the `:` line.
#[derive(Debug, Clone, Default)]
pub struct History {
    entries: Vec<String>,
    /// The entry shown, while going back through them.
    at: Option<usize>,
    /// The line being typed before going back.
    draft: String,
}

/// Commands remembered per session.
const HISTORY: usize = 100;

impl History {
    /// Remembers a command run (not twice in a row), and starts again from the newest.
    pub fn push(&mut self, line: &str) {
        let line = line.trim();
        if !line.is_empty() && self.entries.last().map(String::as_str) != Some(line) {
            self.entries.push(line.to_owned());
            if self.entries.len() > HISTORY {
                self.entries.remove(0);
            }
        }
        self.restart();
    }

    /// Forgets where ↑ had got to (the line is typed afresh).
    pub fn restart(&mut self) {
        self.at = None;
        self.draft.clear();
    }

    /// The command before the one shown (`line` is what is typed now, kept for [`History::newer`]);
    /// `None` when there is none.
    pub fn older(&mut self, line: &str) -> Option<&str> {
        let at = match self.at {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = line.to_owned();
                self.entries.len() - 1
            }
            Some(at) => at.saturating_sub(1),
        };
        self.at = Some(at);
        Some(&self.entries[at])
    }

    /// The command after the one shown, or the line that was being typed; `None` when not going
    /// back through them.
    pub fn newer(&mut self) -> Option<&str> {
        let at = self.at?;
        if at + 1 < self.entries.len() {
            self.at = Some(at + 1);
            Some(&self.entries[at + 1])
        } else {
            self.at = None;
            Some(&self.draft)
        }
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }
}
