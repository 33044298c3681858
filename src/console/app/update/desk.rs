//! The operator's desk: accept, override, escalate, retry, unlock and the next waiting
//! decision; their dialogs (the take-over question, the confirmation, its note) and the claim
//! they make; pinning a note to a debate; whether an action may be sent.

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
use crate::console::app::contexts::Ctx;
use crate::console::app::event::Command;
use crate::console::app::model::{Chooser, Intent, Model, Overlay};
use crate::console::app::prompt::{Prompt, Typed};
use crate::domain::{
    ActionKind, Claim, ControllerDecision, Debate, DebateNote, Decision, MAX_NOTE, OperatorAction,
    Reported,
};
use crate::store::ResolveError;
use crate::text::one_line;

use super::prompt::type_into;

/// Unlocking, and the actions on decisions: accept, override, escalate, retry, the next one
/// waiting.
pub(super) fn on_decision_action(model: &mut Model, action: Action) -> Vec<Command> {
    // Locks and rights are those of the selected debate's database.
    let ctx = model.selected_ctx();
    match action {
        Action::Unlock if model.denied_in(ctx).is_some() => {
            let why = model.denied_in(ctx).unwrap_or_default().to_owned();
            model.flash(format!("still read-only: {why}"), true);
        }
        Action::Unlock if model.read_only_in(ctx) => model.desk.overlay = Some(Overlay::Unlock),
        Action::Unlock => model.flash("not read-only: actions are already on", false),
        Action::Accept | Action::Override | Action::Escalate if model.nav.past.is_some() => {
            let live = model.settings.keymap.keys(Action::Back);
            model.flash(
                format!("in the past: nothing is decided there — {live} returns to live"),
                true,
            );
        }
        Action::Accept | Action::Override | Action::Escalate | Action::Retry
            if model.read_only_in(ctx) =>
        {
            let why = match model.denied_in(ctx) {
                Some(why) => format!("read-only: nothing is recorded — {why}"),
                None => {
                    let unlock = model.settings.keymap.keys(Action::Unlock);
                    format!("read-only: nothing is recorded — press {unlock} to unlock")
                }
            };
            model.flash(why, true);
        }
        Action::Retry => {
            // The action's own database, whichever debate is selected now.
            let ctx = model.desk.retry_in;
            match model.desk.retry.take() {
                None => model.flash("nothing to retry", true),
                Some(action) if landed(model, ctx, &action) => {
                    model.flash(recorded("recorded after all", &action), false);
                }
                Some(action) => match may_send(model, ctx, &action) {
                    Err(why) => {
                        model.flash(format!("not retried, nothing was recorded: {why}"), true);
                    }
                    Ok(()) => {
                        model.flash("retrying ...", false);
                        return vec![model.live.contexts.to(ctx, Command::Resolve(action))];
                    }
                },
            }
        }
        Action::NextWaiting => match model.debates.next_waiting_where(model.nav.selected, |s| {
            s.pending()
                .is_none_or(|round| model.deciding_in(s.ctx, &s.id, round).is_none())
        }) {
            None => model.flash("no decision waits for you", false),
            Some(seq) => {
                model.jump(seq);
                if let Some(summary) = model.debates.get(seq) {
                    let left = model.time_left(summary).unwrap_or_default();
                    let waiting = model.debates.waiting();
                    let round = summary.pending().unwrap_or_default();
                    let claimed = model
                        .deciding_in(summary.ctx, &summary.id, round)
                        .map(|(who, _)| format!("; {} deciding", one_line(&who)))
                        .unwrap_or_default();
                    model.flash(
                        format!(
                            "{} round {round} waits for you: {} left ({waiting} waiting){claimed}",
                            one_line(&summary.id),
                            crate::text::countdown(left)
                        ),
                        false,
                    );
                }
            }
        },
        Action::Accept => ask_or_open(model, ActionKind::Accept),
        Action::Override => ask_or_open(model, ActionKind::Override),
        Action::Escalate => ask_or_open(model, ActionKind::Escalate),
        _ => {}
    }
    Vec::new()
}

/// Opens the dialog of `action`, first asking whether to take over when another console is
/// deciding the decision (claims are advice: the database still decides every race).
pub(super) fn ask_or_open(model: &mut Model, action: ActionKind) {
    let claimed = acted_on(model).and_then(|p| model.deciding(&p.session_id, p.round_index));
    match claimed {
        Some(_) => model.desk.overlay = Some(Overlay::TakeOver(action)),
        None => open_decision_dialog(model, action),
    }
}

/// The decision an action goes to on the selected debate: the one of the round picked in the
/// rounds table while it is pending, else the latest pending one (any decision of a running
/// debate without an action is pending, the contract says).
fn acted_on(model: &Model) -> Option<&ControllerDecision> {
    let debate = model.selected_debate()?;
    model
        .selected_round()
        .and_then(|round| debate.pending_at(round))
        .or_else(|| debate.pending())
}

/// Opens the confirmation (accept) or the pick list (override, escalate) for the decision
/// [`acted_on`].
fn open_decision_dialog(model: &mut Model, action: ActionKind) {
    let Some(debate) = model.selected_debate() else {
        return;
    };
    let Some(pending) = acted_on(model) else {
        let id = debate.session.id.clone();
        model.flash(format!("no pending decision on {id}"), true);
        return;
    };
    let session_id = pending.session_id.clone();
    let round_index = pending.round_index;
    let options: Vec<String> = match action {
        ActionKind::Accept => {
            let intent = Intent {
                session_id,
                round_index,
                action,
                decision: pending.decision.clone(),
                persona: pending.signals.escalate_persona.clone(),
                note: None,
            };
            let action = intent.clone().into_action(&model.about.operator);
            match may_send(model, model.selected_ctx(), &action) {
                Ok(()) => model.desk.overlay = Some(Overlay::Confirm(intent)),
                Err(why) => model.flash(format!("cannot accept: {why}"), true),
            }
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
    model.desk.overlay = Some(Overlay::Choose(Chooser {
        session_id,
        round_index,
        action,
        options,
        cursor: 0,
    }));
}

/// A key in the question whether to take over a decision another console is deciding: `y`
/// opens the dialog of `action`, anything else leaves it to the other operator.
pub(super) fn on_take_over_key(model: &mut Model, action: ActionKind, key: &KeyEvent) {
    if key.code == KeyCode::Char('y') {
        open_decision_dialog(model, action);
    } else {
        model.flash("left to the other operator: nothing was recorded", false);
    }
}

/// A key in the confirmation of an operator action: `y` sends it, `n` types a note, anything
/// else cancels.
pub(super) fn on_confirm_key(
    model: &mut Model,
    mut intent: Intent,
    key: &KeyEvent,
) -> Vec<Command> {
    match key.code {
        KeyCode::Char('n') => {
            if intent.note.is_none() {
                intent.note = model.desk.kept_note.take();
            }
            model.desk.prompt = Prompt::new(intent.note.as_deref().unwrap_or(""), Intent::MAX_NOTE);
            model.desk.overlay = Some(Overlay::Note(intent));
        }
        KeyCode::Char('y') => {
            let action = intent.into_action(&model.about.operator);
            let ctx = model.ctx_of_id(&action.session_id);
            if let Err(why) = may_send(model, ctx, &action) {
                model.flash(format!("not sent, nothing was recorded: {why}"), true);
                return Vec::new();
            }
            model.flash(
                format!("sending {} {} ...", action.action, action.decision),
                false,
            );
            return vec![model.live.contexts.to(ctx, Command::Resolve(action))];
        }
        _ => model.flash("cancelled: nothing was recorded", false),
    }
    Vec::new()
}

/// A key while the note of an operator action is typed: Enter and Esc go back to its
/// confirmation (Esc without the note).
pub(super) fn on_note_key(model: &mut Model, mut intent: Intent, key: &KeyEvent) {
    let typed = type_into(
        model,
        intent.note.as_deref().unwrap_or(""),
        Intent::MAX_NOTE,
        key,
    );
    intent.note = Some(model.desk.prompt.value().to_owned());
    match typed {
        Typed::Typing => model.desk.overlay = Some(Overlay::Note(intent)),
        Typed::Done => model.desk.overlay = Some(Overlay::Confirm(intent)),
        Typed::Cancelled => {
            intent.note = None;
            model.desk.overlay = Some(Overlay::Confirm(intent));
        }
    }
}

/// The waiting decision this console's open dialog claims: none for a console that may not
/// act, or once the decision no longer waits (resolved, timed out, superseded).
pub(super) fn claim(model: &Model) -> Option<Claim> {
    let (session_id, round, _) = model.desk.overlay.as_ref()?.deciding()?;
    let ctx = model.ctx_of_id(session_id);
    if model.read_only_in(ctx) || model.denied_in(ctx).is_some() {
        return None;
    }
    let waits = model
        .seq_of(session_id)
        .and_then(|seq| model.debates.get(seq));
    waits.filter(|s| s.waiting() && s.pending() == Some(round))?;
    Some(Claim {
        session_id: session_id.to_owned(),
        round,
    })
}

/// `N`: opens the note line for the selected debate, unless this console may not pin notes:
/// the database's reason when its role may not, else the unlock it waits for when read-only
/// (a role that may pin notes and not act pins them all the same).
pub(super) fn open_note(model: &mut Model) {
    let ctx = model.selected_ctx();
    if let Some(why) = model.unpinnable_in(ctx) {
        let why = format!("cannot pin a note: {why}");
        model.flash(why, true);
        return;
    }
    if model.read_only_in(ctx) && model.denied_in(ctx).is_none() {
        let unlock = model.settings.keymap.keys(Action::Unlock);
        model.flash(
            format!("read-only: cannot pin a note — press {unlock} to unlock"),
            true,
        );
        return;
    }
    let Some(id) = model.selected_debate().map(|d| d.session.id.clone()) else {
        model.flash("no debate selected: nothing to note", true);
        return;
    };
    let kept = model
        .desk
        .unpinned
        .take_if(|n| n.session_id == id)
        .map(|n| n.text)
        .unwrap_or_default();
    model.desk.flash = None;
    model.desk.prompt = Prompt::new(&kept, MAX_NOTE);
    model.desk.overlay = Some(Overlay::Pin(id));
}

/// A key in the note line: Enter pins the note, Esc drops it.
pub(super) fn on_pin_key(model: &mut Model, session_id: String, key: &KeyEvent) -> Vec<Command> {
    match model.desk.prompt.key(key) {
        Typed::Typing => model.desk.overlay = Some(Overlay::Pin(session_id)),
        Typed::Cancelled => model.flash("note dropped: nothing was pinned", false),
        Typed::Done => {
            match DebateNote::draft(
                &session_id,
                &model.about.operator,
                model.desk.prompt.value(),
            ) {
                Ok(note) => {
                    model.flash(
                        format!("pinning a note to {} ...", one_line(&session_id)),
                        false,
                    );
                    let ctx = model.ctx_of_id(&session_id);
                    return vec![model.live.contexts.to(ctx, Command::Note(note))];
                }
                Err(why) => model.flash(format!("not pinned: {why}"), true),
            }
        }
    }
    Vec::new()
}

/// What the console says of an action recorded: `what`, then who did what where.
pub(super) fn recorded(what: &str, action: &OperatorAction) -> String {
    format!(
        "{what}: {} {} {} on {} round {}",
        action.operator, action.action, action.decision, action.session_id, action.round_index
    )
}

/// The full rows of the debate `id` of context `ctx`, if held.
fn debate_in<'m>(model: &'m Model, ctx: Ctx, id: &str) -> Option<&'m Debate> {
    model.held(model.debates.seq_in(ctx, id)?)
}

/// Whether the decision `action` resolves (on context `ctx`'s database) is on screen as
/// resolved by `action` itself, written by this console's role there: an attempt that was not
/// answered did land.
pub(super) fn landed(model: &Model, ctx: Ctx, action: &OperatorAction) -> bool {
    debate_in(model, ctx, &action.session_id)
        .and_then(|debate| debate.actions.get(&action.round_index))
        .is_some_and(|row| action.is_recorded_as(row, model.role_in(ctx)))
}

/// Whether `action` may be sent, as far as the console knows: not read-only, its debate on
/// screen, its decision not yet resolved and still open (the store checks again when it writes).
pub(super) fn may_send(model: &Model, ctx: Ctx, action: &OperatorAction) -> Result<(), String> {
    if let Some(why) = model.denied_in(ctx) {
        return Err(why.to_owned());
    }
    if model.read_only_in(ctx) {
        return Err("the console is read-only".to_owned());
    }
    let Some(debate) = debate_in(model, ctx, &action.session_id) else {
        return Err(format!("no debate {} on screen", action.session_id));
    };
    if let Some(existing) = debate.actions.get(&action.round_index) {
        return Err(ResolveError::AlreadyResolved(Box::new(existing.clone())).to_string());
    }
    action
        .check_open(&debate.decision_state(action.round_index))
        .map_err(|why| why.to_string())
}
