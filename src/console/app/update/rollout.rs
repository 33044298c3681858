//! The settings rollouts at the desk: each database's history and the worker's comparisons
//! taken in (the guards checked on them), the rollout view's keys, and a new version written —
//! published from the calibration window, promoted or rolled back from the rollout view —
//! through its reason, its share (a publish) and its confirmation, then sent to its context's
//! database, and its outcome shown. On several databases the rollouts are one context's at a
//! time: the one `:ctx NAME` lists, else the selected debate's, else the first ([`context`]).

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
use crate::console::app::contexts::Ctx;
use crate::console::app::event::Command;
use crate::console::app::model::{Model, Overlay};
use crate::console::app::prompt::{Prompt, Typed};
use crate::console::app::publish;
use crate::console::app::reports::Figures;
use crate::console::app::rollout::{Draft, MAX_SHARE, Publishing, SettingsChange, Step};
use crate::domain::{MAX_REASON, SettingsVersion, check_reason, share_from_percent};
use crate::text::one_line;

use super::overlay::scrolled;
use super::prompt::type_into;

/// The history context `ctx`'s database gave, or why it would not (a context the console
/// does not have is not taken).
pub(super) fn on_settings(
    model: &mut Model,
    ctx: Ctx,
    history: Result<Vec<SettingsVersion>, String>,
) {
    let contexts = &model.live.contexts;
    let known = match contexts.several() {
        true => contexts.get(ctx).is_some(),
        false => ctx == 0,
    };
    if known {
        model.rollout.set_history(ctx, history);
    }
}

/// The worker's figures: stored, and the guards checked on its comparisons.
pub(super) fn on_reports(model: &mut Model, figures: Figures) {
    let comparisons = figures.rollout.clone();
    model.reports.set_figures(figures);
    model.screen.dirty |= model.rollout.check(&comparisons);
}

/// The outcome of a [`Command::Publish`] sent to context `ctx`'s database, named when there
/// are several.
pub(super) fn on_published(model: &mut Model, ctx: Ctx, outcome: Result<SettingsVersion, String>) {
    let contexts = &model.live.contexts;
    let at = match contexts.several() {
        true => format!(" in {}", contexts.name(ctx)),
        false => String::new(),
    };
    match outcome {
        Ok(version) => model.flash(
            format!(
                "version {} of {}{at}: {}",
                version.version,
                version.debate_type,
                version.what()
            ),
            false,
        ),
        Err(why) => model.flash(format!("nothing was written{at}: {why}"), true),
    }
}

/// The context whose rollouts the rollout view opens on: the one `:ctx NAME` lists (the
/// operator narrowed the console to it), else the selected debate's, else the first (0 on one
/// database).
fn context(model: &Model) -> Ctx {
    model
        .debates
        .context()
        .unwrap_or_else(|| model.selected_ctx())
}

/// The rollout keys with no window open: the rollout view opens; publish, promote and roll back
/// say where they act.
pub(super) fn on_action(model: &mut Model, action: Action) {
    let key = |action| model.settings.keymap.hint(action);
    match action {
        Action::Rollout => {
            let ctx = context(model);
            let debate_type = default_type(model, ctx);
            model.desk.overlay = Some(Overlay::Rollout {
                scroll: 0,
                debate_type,
                ctx,
            });
        }
        Action::Publish => {
            let hint = format!(
                "publish from the calibration window ({}): the setting under its cursor",
                key(Action::Calibration)
            );
            model.flash(hint, false);
        }
        _ => {
            let hint = format!(
                "promote and roll back in the rollout view ({})",
                key(Action::Rollout)
            );
            model.flash(hint, false);
        }
    }
}

/// The debate type the rollout view of context `ctx` opens on: the selected debate's when it
/// is of that context and its history names the type, else the first with a rollout in
/// progress there, else the first published there.
fn default_type(model: &Model, ctx: Ctx) -> Option<String> {
    let selected = model
        .selected_debate()
        .filter(|_| model.selected_ctx() == ctx)
        .map(|d| d.session.debate_type.as_str())
        .filter(|t| model.rollout.latest_of(ctx, t).is_some());
    let rolling = model
        .rollout
        .latest(ctx)
        .find(|v| v.canary_version.is_some())
        .map(|v| v.debate_type.as_str());
    let first = model
        .rollout
        .latest(ctx)
        .next()
        .map(|v| v.debate_type.as_str());
    selected.or(rolling).or(first).map(str::to_owned)
}

/// A key in the rollout view of `debate_type` in context `ctx`: `<` `>` step through the
/// debate types, promote and roll back start their version, the rest scroll or close it.
pub(super) fn on_rollout_key(
    model: &mut Model,
    action: Option<Action>,
    scroll: u16,
    debate_type: Option<String>,
    ctx: Ctx,
) {
    let step = match action {
        Some(Action::PreviousSetting) => -1,
        Some(Action::NextSetting) => 1,
        Some(Action::Promote | Action::Rollback) => {
            let kind = action.unwrap_or(Action::Rollback);
            model.desk.overlay = Some(Overlay::Rollout {
                scroll,
                debate_type: debate_type.clone(),
                ctx,
            });
            match debate_type {
                Some(debate_type) => start_change(model, kind, ctx, &debate_type),
                None => model.flash("nothing published: nothing to promote or roll back", true),
            }
            return;
        }
        _ => {
            model.desk.overlay =
                scrolled(action, Action::Rollout, scroll).map(|scroll| Overlay::Rollout {
                    scroll,
                    debate_type,
                    ctx,
                });
            return;
        }
    };
    let types: Vec<&str> = model
        .rollout
        .latest(ctx)
        .map(|v| v.debate_type.as_str())
        .collect();
    let at = types
        .iter()
        .position(|t| Some(*t) == debate_type.as_deref())
        .unwrap_or(0) as isize;
    let next = match types.len() as isize {
        0 => None,
        len => Some(types[(at + step).rem_euclid(len) as usize].to_owned()),
    };
    model.desk.overlay = Some(Overlay::Rollout {
        scroll: 0,
        debate_type: next,
        ctx,
    });
}

/// Promote (`Action::Promote`) or roll back `debate_type`'s rollout in context `ctx`: the
/// canary, or for a roll back with no canary, the version in force.
fn start_change(model: &mut Model, kind: Action, ctx: Ctx, debate_type: &str) {
    let latest = model.rollout.latest_of(ctx, debate_type);
    let canary = latest.and_then(|v| v.canary_version);
    let change = match (kind, canary) {
        (Action::Promote, Some(version)) => SettingsChange::Promote { version },
        (Action::Promote, None) => {
            model.flash(
                format!(
                    "nothing to promote: no version of {} is rolling out",
                    one_line(debate_type)
                ),
                true,
            );
            return;
        }
        _ => match canary.or(latest.and_then(|v| v.stable_version)) {
            Some(version) => SettingsChange::Rollback { version },
            None => {
                model.flash(
                    format!(
                        "nothing to roll back: the controller's defaults are in force for {}",
                        one_line(debate_type)
                    ),
                    true,
                );
                return;
            }
        },
    };
    let publishing = Publishing {
        debate_type: debate_type.to_owned(),
        change,
        reason: String::new(),
    };
    open_draft(model, publishing, None, ctx);
}

/// The publish key in the calibration window: the setting under `cursor` to the selected
/// debate's type, in its context's database.
pub(super) fn publish_from_calibration(model: &mut Model, cursor: usize) {
    let debate_type = model
        .selected_debate()
        .map(|d| d.session.debate_type.clone())
        .filter(|t| !t.is_empty());
    let Some(debate_type) = debate_type else {
        model.flash(
            "select a debate first: the setting is published to its debate type",
            true,
        );
        return;
    };
    let ctx = model.selected_ctx();
    match publish::from_calibration(model, cursor, ctx, &debate_type) {
        Ok(publishing) => open_draft(model, publishing, Some(cursor), ctx),
        Err(why) => model.flash(format!("cannot publish: {why}"), true),
    }
}

/// Opens the reason of `publishing` for context `ctx`'s database, unless this console cannot
/// write a version there: no database, or locked read-only (`--read-only`, or the context's
/// `read_only`) until unlocked, as actions are. Publishing is a privilege of its own: a role
/// that may not act on decisions may still publish, and the database refuses a role that may
/// not.
fn open_draft(
    model: &mut Model,
    publishing: Publishing,
    from_calibration: Option<usize>,
    ctx: Ctx,
) {
    let refused = if model.live.link.is_none() {
        Some("rollouts live in a database: `gavel demo --postgres` or `gavel watch`".to_owned())
    } else if model.read_only_in(ctx) && model.denied_in(ctx).is_none() {
        let unlock = model.settings.keymap.keys(Action::Unlock);
        Some(match model.live.contexts.several() {
            true => format!(
                "{} is read-only — press {unlock} on one of its debates to unlock",
                model.live.contexts.name(ctx)
            ),
            false => format!("read-only — press {unlock} to unlock"),
        })
    } else {
        None
    };
    if let Some(why) = refused {
        model.flash(format!("nothing was written: {why}"), true);
        return;
    }
    model.desk.flash = None;
    model.desk.prompt = Prompt::new("", MAX_REASON);
    model.desk.overlay = Some(Overlay::Draft(Box::new(Draft {
        publishing,
        share: String::new(),
        step: Step::Reason,
        from_calibration,
        ctx,
    })));
}

/// A key in a version being written: Enter moves from the reason to the share (a publish) to
/// the confirmation, each checked; `y` there sends it; Esc, or any other key in the
/// confirmation, cancels.
pub(super) fn on_draft_key(
    model: &mut Model,
    mut draft: Box<Draft>,
    key: &KeyEvent,
) -> Vec<Command> {
    match draft.step {
        Step::Reason => {
            let typed = type_into(model, &draft.publishing.reason, MAX_REASON, key);
            draft.publishing.reason = model.desk.prompt.value().to_owned();
            match typed {
                Typed::Cancelled => return cancel(model, &draft),
                Typed::Typing => {}
                Typed::Done => match check_reason(&draft.publishing.reason) {
                    Err(why) => model.flash(why, true),
                    Ok(()) => {
                        model.desk.flash = None;
                        draft.step = match draft.publishing.change {
                            SettingsChange::Publish { .. } => {
                                model.desk.prompt = Prompt::new(&draft.share, MAX_SHARE);
                                Step::Share
                            }
                            _ => Step::Confirm,
                        };
                    }
                },
            }
        }
        Step::Share => {
            let typed = type_into(model, &draft.share, MAX_SHARE, key);
            draft.share = model.desk.prompt.value().to_owned();
            match typed {
                Typed::Cancelled => return cancel(model, &draft),
                Typed::Typing => {}
                Typed::Done => match share(&draft.share) {
                    Err(why) => model.flash(why, true),
                    Ok(bp) => {
                        model.desk.flash = None;
                        if let SettingsChange::Publish { share_bp, .. } =
                            &mut draft.publishing.change
                        {
                            *share_bp = bp;
                        }
                        draft.step = Step::Confirm;
                    }
                },
            }
        }
        Step::Confirm if key.code == KeyCode::Char('y') => {
            let publishing = draft.publishing;
            model.flash(
                format!("writing: {} ...", one_line(&publishing.what())),
                false,
            );
            model.desk.overlay = Some(Overlay::Rollout {
                scroll: 0,
                debate_type: Some(publishing.debate_type.clone()),
                ctx: draft.ctx,
            });
            let publish = Command::Publish(Box::new(publishing));
            return vec![model.live.contexts.to(draft.ctx, publish)];
        }
        Step::Confirm => return cancel(model, &draft),
    }
    model.desk.overlay = Some(Overlay::Draft(draft));
    Vec::new()
}

/// The debate type whose rollout this console is writing a version of (its reason, share or
/// confirmation open), with the context whose database it goes to, for presence.
pub(super) fn editing(model: &Model) -> Option<(Ctx, &str)> {
    match &model.desk.overlay {
        Some(Overlay::Draft(draft)) => Some((draft.ctx, &draft.publishing.debate_type)),
        _ => None,
    }
}

/// A share typed in percent, as basis points.
fn share(typed: &str) -> Result<u32, String> {
    let percent: f64 = typed
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("share {typed:?} is not a number: type a percent, e.g. 10 or 12.5"))?;
    share_from_percent(percent)
}

/// Drops `draft`, back to where it was started.
fn cancel(model: &mut Model, draft: &Draft) -> Vec<Command> {
    model.flash("cancelled: nothing was written", false);
    model.desk.overlay = Some(match draft.from_calibration {
        Some(cursor) => Overlay::Calibration {
            scroll: 0,
            cursor,
            table: false,
        },
        None => Overlay::Rollout {
            scroll: 0,
            debate_type: Some(draft.publishing.debate_type.clone()),
            ctx: draft.ctx,
        },
    });
    Vec::new()
}
