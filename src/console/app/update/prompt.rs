//! The lines the operator types in: the filter (the list follows each key; Enter on a live
//! feed also searches the database) and the `:` line (completion, history, the commands).

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
use crate::config::theme::Theme;
use crate::console::app::command_line::{self, Colon};
use crate::console::app::event::Command;
use crate::console::app::filter::{Field, with_term};
use crate::console::app::fleet::{Seq, SortOrder};
use crate::console::app::model::{Model, Overlay};
use crate::console::app::prompt::{Prompt, Typed};
use crate::text::one_line;

use super::MAX_LINE;

/// `/` or `:`: opens the filter line (on the filter as it is) or the `:` line (empty).
pub(super) fn open_line(model: &mut Model, action: Action) {
    model.desk.flash = None;
    if action == Action::Filter {
        model.desk.prompt = Prompt::new(model.filter(), MAX_LINE);
        model.desk.overlay = Some(Overlay::Filter);
    } else {
        model.desk.prompt = Prompt::new("", MAX_LINE);
        model.desk.history.restart();
        model.desk.completion = None;
        model.desk.overlay = Some(Overlay::Command);
    }
}

/// A key in the filter line: the filter follows the typing; Enter on a live feed also searches
/// the database for the text terms.
pub(super) fn on_filter_key(model: &mut Model, key: &KeyEvent) -> Vec<Command> {
    let filter = model.filter().to_owned();
    let typed = type_into(model, &filter, MAX_LINE, key);
    let filter = match typed {
        Typed::Typing => {
            model.desk.overlay = Some(Overlay::Filter);
            model.desk.prompt.value().to_owned()
        }
        Typed::Done => model.desk.prompt.value().to_owned(),
        Typed::Cancelled => String::new(),
    };
    model.set_filter(filter);
    keep_selection_visible(model);
    let search = model
        .debates
        .filter_terms()
        .search_text()
        .map(str::to_owned);
    if typed == Typed::Done
        && model.live.link.is_some()
        && let Some(text) = search
    {
        model.flash(
            format!("searching the database for {} ...", one_line(&text)),
            false,
        );
        return vec![Command::Search(text)];
    }
    Vec::new()
}

/// Applies a key to the open prompt, which edits `text` (taken up afresh when it is not what
/// the prompt holds, e.g. a prompt just opened).
pub(super) fn type_into(model: &mut Model, text: &str, max: usize, key: &KeyEvent) -> Typed {
    if model.desk.prompt.value() != text || model.desk.prompt.max() != max {
        model.desk.prompt = Prompt::new(text, max);
    }
    model.desk.prompt.key(key)
}

/// After the filter changed: the selection stays if it is still shown, else moves to the first
/// debate shown.
pub(super) fn keep_selection_visible(model: &mut Model) {
    let shown = model
        .nav
        .selected
        .is_some_and(|seq| model.debates.is_listed(seq));
    if !shown && let Some(first) = model.debates.first() {
        model.select(first);
    }
}

/// A key in the `:` line: Tab and Shift-Tab complete, ↑ and ↓ recall earlier commands, Enter
/// runs the line, Esc closes it; anything else edits it.
pub(super) fn on_colon_line_key(model: &mut Model, key: &KeyEvent) -> Vec<Command> {
    model.desk.overlay = Some(Overlay::Command);
    let recalled = match key.code {
        KeyCode::Tab => {
            complete(model, 1);
            return Vec::new();
        }
        KeyCode::BackTab => {
            complete(model, -1);
            return Vec::new();
        }
        KeyCode::Up => model
            .desk
            .history
            .older(model.desk.prompt.value())
            .map(str::to_owned),
        KeyCode::Down => model.desk.history.newer().map(str::to_owned),
        _ => {
            model.desk.completion = None;
            match model.desk.prompt.key(key) {
                Typed::Typing => {}
                Typed::Cancelled => model.desk.overlay = None,
                Typed::Done => {
                    model.desk.overlay = None;
                    let line = model.desk.prompt.value().trim().to_owned();
                    model.desk.history.push(&line);
                    return run_colon_line(model, &line);
                }
            }
            return Vec::new();
        }
    };
    model.desk.completion = None;
    if let Some(line) = recalled {
        model.desk.prompt.set(&line);
    }
    Vec::new()
}

/// Tab (`step` 1) or Shift-Tab (-1) in the `:` line: with several completions shown, puts the
/// next (or previous) in the line; else completes the last word as far as its completions
/// agree, shows them when there are several, and adds a space after a whole command name that
/// takes an argument.
pub(super) fn complete(model: &mut Model, step: isize) {
    if let Some(shown) = &mut model.desk.completion
        && shown.candidates.len() > 1
    {
        let count = shown.candidates.len() as isize;
        let next = match shown.chosen {
            Some(at) => (at as isize + step).rem_euclid(count),
            None if step > 0 => 0,
            None => count - 1,
        } as usize;
        shown.chosen = Some(next);
        let line = shown.line(next);
        model.desk.prompt.set(&line);
        return;
    }
    let fleet = &model.debates;
    let contexts = model.live.contexts.names();
    let completion =
        command_line::complete(model.desk.prompt.value(), &contexts, |prefix, limit| {
            fleet.ids_starting(prefix, limit)
        });
    match completion.candidates.as_slice() {
        [] => model.desk.completion = Some(completion),
        [only] => {
            let mut line = completion.line(0);
            if completion.head.is_empty() && command_line::takes_argument(only) {
                line.push(' ');
            }
            model.desk.prompt.set(&line);
            model.desk.completion = None;
        }
        many => {
            let line = format!("{}{}", completion.head, command_line::common_prefix(many));
            if line.chars().count() > model.desk.prompt.value().chars().count() {
                model.desk.prompt.set(&line);
            }
            model.desk.completion = Some(completion);
        }
    }
}

/// Runs a `:` command line (see [`command_line::parse`]).
pub(super) fn run_colon_line(model: &mut Model, line: &str) -> Vec<Command> {
    let colon = match command_line::parse(line) {
        Ok(Some(colon)) => colon,
        Ok(None) => return Vec::new(),
        Err(why) => {
            model.flash(why, true);
            return Vec::new();
        }
    };
    match colon {
        Colon::Quit => model.quit = true,
        Colon::Help => model.desk.overlay = Some(Overlay::Help { scroll: 0 }),
        Colon::Who => model.desk.overlay = Some(Overlay::Who { scroll: 0 }),
        Colon::Pending => filter_by(model, Field::Pending, Some("is:pending".to_owned())),
        Colon::Waiting => filter_by(model, Field::Waiting, Some("is:waiting".to_owned())),
        Colon::Mode(mode) => filter_by(model, Field::Mode, mode.map(|m| format!("mode:{m}"))),
        Colon::Sort(order) => sort_by(model, order),
        Colon::Theme(name) => match Theme::bundled(&name) {
            Ok(theme) => model.apply_theme(theme),
            Err(why) => model.flash(format!("{why:#}"), true),
        },
        Colon::Jump(id) => return jump(model, &id),
        Colon::Context(name) => show_context(model, name.as_deref()),
    }
    Vec::new()
}

/// `:ctx NAME`: lists only that database's debates, in its theme if it has one; `:ctx all`
/// (`None`): every database's.
fn show_context(model: &mut Model, name: Option<&str>) {
    let contexts = &model.live.contexts;
    if !contexts.several() {
        model.flash("one database: there are no contexts to pick", true);
        return;
    }
    let ctx = match name {
        None => None,
        Some(name) => match contexts.find(name) {
            Some(ctx) => Some(ctx),
            None => {
                let names: Vec<&str> = contexts.iter().map(|(_, c)| c.name.as_str()).collect();
                let said = format!(
                    "no context {}: the contexts are {}, or all",
                    one_line(name),
                    names.join(", ")
                );
                model.flash(said, true);
                return;
            }
        },
    };
    model.show_context(ctx);
    keep_selection_visible(model);
    let listed = model.debates.listed();
    let said = match name {
        None => format!("every context listed ({listed} debates)"),
        Some(name) => format!("{name} listed ({listed} debates); :ctx all lists every one"),
    };
    model.flash(said, false);
}

/// Puts `term` in the filter in place of its terms on `field` (none: removes them), and says
/// what the list shows.
pub(super) fn filter_by(model: &mut Model, field: Field, term: Option<String>) {
    let filter = with_term(model.filter(), field, term.as_deref());
    model.set_filter(filter);
    keep_selection_visible(model);
    let shown = model.debates.listed();
    let message = match model.filter() {
        "" => format!("every debate listed ({shown})"),
        filter => format!(
            "filter /{} lists {shown} debates (/ edits it)",
            one_line(filter)
        ),
    };
    model.flash(message, false);
}

pub(super) fn sort_by(model: &mut Model, order: SortOrder) {
    model.set_sort(order);
    model.flash(format!("debates sorted by {}", model.sort().label()), false);
}

/// `:<id>`: selects the debate with this id, or the one debate whose id contains it; attached
/// to a database, an id held nowhere is looked up there. On several databases an id held in
/// more than one is taken from the context listed (`:ctx NAME`), else from the first, and the
/// same `:<id>` again takes the next one's.
pub(super) fn jump(model: &mut Model, text: &str) -> Vec<Command> {
    let mut exact = model.debates.seqs(text);
    if exact.is_empty() {
        let needle = text.to_lowercase();
        let mut near: Vec<(&str, Seq)> = model
            .debates
            .summaries()
            .filter(|s| s.id.to_lowercase().contains(&needle))
            .map(|s| (&*s.id, s.seq))
            .collect();
        near.sort_unstable();
        let mut ids: Vec<&str> = near.iter().map(|(id, _)| *id).collect();
        ids.dedup();
        match ids.as_slice() {
            [] if model.live.link.is_some() => {
                model.nav.jump_to = Some(text.to_owned());
                model.live.contexts.look_up();
                model.flash(
                    format!("looking up {} in the database ...", one_line(text)),
                    false,
                );
                return vec![Command::LoadHistory(text.to_owned())];
            }
            [] => {
                let text = one_line(text);
                let said = format!("no debate {text} and {}", command_line::no_command(&text));
                model.flash(said, true);
                return Vec::new();
            }
            [only] => exact = model.debates.seqs(only),
            many => {
                let shown: Vec<String> = many.iter().take(5).map(|id| one_line(id)).collect();
                model.flash(
                    format!(
                        "{} debates match {}: {} ... (Tab completes)",
                        many.len(),
                        one_line(text),
                        shown.join(", ")
                    ),
                    true,
                );
                return Vec::new();
            }
        }
    }
    let listed = model.debates.context();
    let in_listed: Vec<Seq> = exact
        .iter()
        .copied()
        .filter(|&seq| model.debates.get(seq).map(|s| s.ctx) == listed)
        .collect();
    if !in_listed.is_empty() {
        exact = in_listed;
    }
    // Again from the one selected: the next database's.
    let next = exact
        .iter()
        .position(|&seq| Some(seq) == model.nav.selected)
        .map_or(0, |at| (at + 1) % exact.len());
    model.jump(exact[next]);
    if exact.len() > 1 {
        let contexts = &model.live.contexts;
        let holders: Vec<&str> = exact
            .iter()
            .filter_map(|&seq| model.debates.get(seq))
            .map(|s| contexts.name(s.ctx))
            .collect();
        let said = format!(
            "{} is in {}: at {}'s; :{} again for the next",
            one_line(text),
            holders.join(", "),
            holders[next],
            one_line(text)
        );
        model.flash(said, false);
    }
    Vec::new()
}
