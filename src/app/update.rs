//! `update`: the one function that changes the console's state.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::event::{Command, Event};
use super::model::{Chooser, Focus, Intent, Model, Overlay};
use crate::domain::{ActionKind, Decision, Reported};
use crate::store::ResolveError;

/// Applies one event; returns what the backend must do.
pub fn update(model: &mut Model, event: Event) -> Vec<Command> {
    let mut commands = handle(model, event);
    commands.extend(request_history(model));
    commands
}

/// Attached to a database, the selected debate's full history is loaded once.
fn request_history(model: &mut Model) -> Option<Command> {
    model.link.as_ref()?;
    let id = &model.debates.get(model.selected)?.session.id;
    if !model.history_requested.insert(id.clone()) {
        return None;
    }
    Some(Command::LoadHistory(id.clone()))
}

fn handle(model: &mut Model, event: Event) -> Vec<Command> {
    match event {
        Event::Store(change) if model.link.is_some() && model.playback.paused => {
            model.held.push(change);
            Vec::new()
        }
        Event::Store(change) => {
            model.apply(change);
            Vec::new()
        }
        Event::Link(link) => {
            model.link = Some(link);
            Vec::new()
        }
        Event::Resolved(Ok(action)) => {
            model.retry = None;
            model.flash(
                format!(
                    "recorded: {} {} {} on {} round {}",
                    action.operator,
                    action.action,
                    action.decision,
                    action.session_id,
                    action.round_index
                ),
                false,
            );
            Vec::new()
        }
        Event::Resolved(Err(ResolveError::Failed { action, error })) => {
            model.flash(
                format!(
                    "not recorded: {} {} on {} round {}: {error} — press r to retry",
                    action.action, action.decision, action.session_id, action.round_index
                ),
                true,
            );
            model.retry = Some(*action);
            Vec::new()
        }
        Event::Resolved(Err(taken)) => {
            model.retry = None;
            model.flash(taken.to_string(), true);
            Vec::new()
        }
        Event::Resize => Vec::new(),
        Event::Key(key) if key.kind == KeyEventKind::Release => Vec::new(),
        Event::Key(key) => on_key(model, key),
    }
}

fn on_key(model: &mut Model, key: KeyEvent) -> Vec<Command> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        model.quit = true;
        return Vec::new();
    }
    match model.overlay.take() {
        None => on_main_key(model, key),
        Some(Overlay::Help) => {
            model.quit = key.code == KeyCode::Char('q');
            Vec::new()
        }
        Some(Overlay::Note(mut intent)) => {
            let note = intent.note.get_or_insert_with(String::new);
            match key.code {
                KeyCode::Char(c) if note.chars().count() < Intent::MAX_NOTE => note.push(c),
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Esc => intent.note = None,
                _ => {}
            }
            model.overlay = Some(if matches!(key.code, KeyCode::Enter | KeyCode::Esc) {
                Overlay::Confirm(intent)
            } else {
                Overlay::Note(intent)
            });
            Vec::new()
        }
        Some(Overlay::Confirm(intent)) if key.code == KeyCode::Char('n') => {
            model.overlay = Some(Overlay::Note(intent));
            Vec::new()
        }
        Some(Overlay::Confirm(intent)) => {
            if key.code == KeyCode::Char('y') {
                model.flash(
                    format!("sending {} {} ...", intent.action, intent.decision),
                    false,
                );
                vec![Command::Resolve(intent.into_action(&model.operator))]
            } else {
                model.flash("cancelled: nothing was recorded", false);
                Vec::new()
            }
        }
        Some(Overlay::Choose(mut chooser)) => {
            match key.code {
                KeyCode::Up | KeyCode::Char('k') => {
                    chooser.cursor = chooser.cursor.saturating_sub(1);
                    model.overlay = Some(Overlay::Choose(chooser));
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    chooser.cursor = (chooser.cursor + 1).min(chooser.options.len() - 1);
                    model.overlay = Some(Overlay::Choose(chooser));
                }
                KeyCode::Enter => model.overlay = Some(Overlay::Confirm(chooser.chosen())),
                _ => model.flash("cancelled: nothing was recorded", false),
            }
            Vec::new()
        }
        Some(Overlay::Round { number, scroll }) => {
            model.overlay =
                scrolled(model, key, scroll).map(|scroll| Overlay::Round { number, scroll });
            Vec::new()
        }
        Some(Overlay::Calibration { scroll }) => {
            model.overlay =
                scrolled(model, key, scroll).map(|scroll| Overlay::Calibration { scroll });
            Vec::new()
        }
    }
}

/// A scrolling window's keys: the new offset, or `None` when the key closes it (`q` also quits).
fn scrolled(model: &mut Model, key: KeyEvent, scroll: u16) -> Option<u16> {
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => Some(scroll.saturating_sub(1)),
        KeyCode::Down | KeyCode::Char('j') => Some(scroll.saturating_add(1)),
        KeyCode::PageUp => Some(scroll.saturating_sub(20)),
        KeyCode::PageDown | KeyCode::Char(' ') => Some(scroll.saturating_add(20)),
        KeyCode::Home => Some(0),
        KeyCode::Char('q') => {
            model.quit = true;
            None
        }
        _ => None,
    }
}

fn on_main_key(model: &mut Model, key: KeyEvent) -> Vec<Command> {
    match key.code {
        KeyCode::Char('q') => model.quit = true,
        KeyCode::Char('?') => model.overlay = Some(Overlay::Help),
        KeyCode::Char('c') => model.overlay = Some(Overlay::Calibration { scroll: 0 }),
        KeyCode::Char(' ') => {
            let commands = set_playback(model, model.playback.toggled());
            if !model.playback.paused {
                for change in std::mem::take(&mut model.held) {
                    model.apply(change);
                }
            }
            return commands;
        }
        KeyCode::Char('r') => {
            if let Some(action) = model.retry.take() {
                model.flash("retrying ...", false);
                return vec![Command::Resolve(action)];
            }
            model.flash("nothing to retry", true);
        }
        KeyCode::Char('+') | KeyCode::Char('=') => {
            return set_playback(model, model.playback.faster());
        }
        KeyCode::Char('-') => return set_playback(model, model.playback.slower()),
        KeyCode::Up | KeyCode::Char('k') => move_cursor(model, -1),
        KeyCode::Down | KeyCode::Char('j') => move_cursor(model, 1),
        KeyCode::Tab => {
            model.focus = match model.focus {
                Focus::Debates => Focus::Rounds,
                Focus::Rounds => Focus::Debates,
            }
        }
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => drill_in(model),
        KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => {
            model.focus = Focus::Debates;
            model.flash = None;
        }
        KeyCode::Char('a') => start_action(model, ActionKind::Accept),
        KeyCode::Char('o') => start_action(model, ActionKind::Override),
        KeyCode::Char('e') => start_action(model, ActionKind::Escalate),
        _ => {}
    }
    Vec::new()
}

fn set_playback(model: &mut Model, playback: crate::simulate::Playback) -> Vec<Command> {
    model.playback = playback;
    vec![Command::SetPlayback(playback)]
}

fn move_cursor(model: &mut Model, step: i64) {
    match model.focus {
        Focus::Debates => {
            let last = model.debates.len().saturating_sub(1) as i64;
            model.selected = (model.selected as i64 + step).clamp(0, last) as usize;
            model.round_cursor = None;
        }
        Focus::Rounds => {
            let Some(current) = model.selected_round() else {
                return;
            };
            let latest = model.selected_debate().map_or(0, |d| d.latest_round());
            let next = (i64::from(current) + step).clamp(1, i64::from(latest)) as u32;
            model.round_cursor = (next != latest).then_some(next);
        }
    }
}

fn drill_in(model: &mut Model) {
    match model.focus {
        Focus::Debates => model.focus = Focus::Rounds,
        Focus::Rounds => {
            if let Some(number) = model.selected_round() {
                model.overlay = Some(Overlay::Round { number, scroll: 0 });
            }
        }
    }
}

/// Opens the confirmation (accept) or the pick list (override, escalate) for the selected
/// debate's pending decision.
fn start_action(model: &mut Model, action: ActionKind) {
    let Some(debate) = model.selected_debate() else {
        return;
    };
    let Some(pending) = debate.pending() else {
        let id = debate.session.id.clone();
        model.flash(format!("no pending decision on {id}"), true);
        return;
    };
    let session_id = pending.session_id.clone();
    let round_index = pending.round_index;
    let options: Vec<String> = match action {
        ActionKind::Accept => {
            model.overlay = Some(Overlay::Confirm(Intent {
                session_id,
                round_index,
                action,
                decision: pending.decision.clone(),
                persona: pending.signals.escalate_persona.clone(),
                note: None,
            }));
            return;
        }
        ActionKind::Override => Decision::ALL
            .iter()
            .filter(|d| **d != Decision::EscalateNewPersona)
            .filter(|d| pending.decision != Reported::Known(**d))
            .map(|d| d.as_str().to_owned())
            .collect(),
        ActionKind::Escalate => debate.unused_personas(),
    };
    if options.is_empty() {
        model.flash(
            "every roster persona has already taken part: nobody to bring in",
            true,
        );
        return;
    }
    model.overlay = Some(Overlay::Choose(Chooser {
        session_id,
        round_index,
        action,
        options,
        cursor: 0,
    }));
}
