//! The settings rollouts at the desk: the history and the worker's comparisons taken in (the
//! guards checked on them), the rollout view's keys, and a new version written — published from
//! the calibration window, promoted or rolled back from the rollout view — through its reason,
//! its share (a publish) and its confirmation, then sent, and its outcome shown.

use crossterm::event::{KeyCode, KeyEvent};

use crate::config::keys::Action;
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

/// The history the database gave, or why it would not.
pub(super) fn on_settings(model: &mut Model, history: Result<Vec<SettingsVersion>, String>) {
    model.rollout.set_history(history);
}

/// The worker's figures: stored, and the guards checked on its comparisons.
pub(super) fn on_reports(model: &mut Model, figures: Figures) {
    let comparisons = figures.rollout.clone();
    model.reports.set_figures(figures);
    model.screen.dirty |= model.rollout.check(&comparisons);
}

/// The outcome of a [`Command::Publish`].
pub(super) fn on_published(model: &mut Model, outcome: Result<SettingsVersion, String>) {
    match outcome {
        Ok(version) => model.flash(
            format!(
                "version {} of {}: {}",
                version.version,
                version.debate_type,
                version.what()
            ),
            false,
        ),
        Err(why) => model.flash(format!("nothing was written: {why}"), true),
    }
}

/// The rollout keys with no window open: the rollout view opens; publish, promote and roll back
/// say where they act.
pub(super) fn on_action(model: &mut Model, action: Action) {
    let key = |action| model.settings.keymap.hint(action);
    match action {
        Action::Rollout => {
            let debate_type = default_type(model);
            model.desk.overlay = Some(Overlay::Rollout {
                scroll: 0,
                debate_type,
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

/// The debate type the rollout view opens on: the selected debate's when the history names it,
/// else the first with a rollout in progress, else the first published.
fn default_type(model: &Model) -> Option<String> {
    let selected = model
        .selected_debate()
        .map(|d| d.session.debate_type.as_str())
        .filter(|t| model.rollout.latest_of(t).is_some());
    let rolling = model
        .rollout
        .rollouts()
        .first()
        .map(|r| r.debate_type.as_str());
    let first = model
        .rollout
        .latest()
        .next()
        .map(|v| v.debate_type.as_str());
    selected.or(rolling).or(first).map(str::to_owned)
}

/// A key in the rollout view of `debate_type`: `<` `>` step through the debate types, promote
/// and roll back start their version, the rest scroll or close it.
pub(super) fn on_rollout_key(
    model: &mut Model,
    action: Option<Action>,
    scroll: u16,
    debate_type: Option<String>,
) {
    let step = match action {
        Some(Action::PreviousSetting) => -1,
        Some(Action::NextSetting) => 1,
        Some(Action::Promote | Action::Rollback) => {
            let kind = action.unwrap_or(Action::Rollback);
            model.desk.overlay = Some(Overlay::Rollout {
                scroll,
                debate_type: debate_type.clone(),
            });
            match debate_type {
                Some(debate_type) => start_change(model, kind, &debate_type),
                None => model.flash("nothing published: nothing to promote or roll back", true),
            }
            return;
        }
        _ => {
            model.desk.overlay =
                scrolled(action, Action::Rollout, scroll).map(|scroll| Overlay::Rollout {
                    scroll,
                    debate_type,
                });
            return;
        }
    };
    let types: Vec<&str> = model
        .rollout
        .latest()
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
    });
}

/// Promote (`Action::Promote`) or roll back `debate_type`'s rollout: the canary, or for a roll
/// back with no canary, the version in force.
fn start_change(model: &mut Model, kind: Action, debate_type: &str) {
    let latest = model.rollout.latest_of(debate_type);
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
    open_draft(model, publishing, None);
}

/// The publish key in the calibration window: the setting under `cursor` to the selected
/// debate's type.
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
    match publish::from_calibration(model, cursor, &debate_type) {
        Ok(publishing) => open_draft(model, publishing, Some(cursor)),
        Err(why) => model.flash(format!("cannot publish: {why}"), true),
    }
}

/// Opens the reason of `publishing`, unless this console cannot write a version: no database,
/// or started read-only (`--read-only`). Publishing is a privilege of its own: a role that may
/// not act on decisions may still publish, and the database refuses a role that may not.
fn open_draft(model: &mut Model, publishing: Publishing, from_calibration: Option<usize>) {
    let refused = if model.live.link.is_none() {
        Some("rollouts live in a database: `gavel demo --postgres` or `gavel watch`".to_owned())
    } else if model.read_only_in(0) && model.denied_in(0).is_none() {
        let unlock = model.settings.keymap.keys(Action::Unlock);
        Some(format!("read-only — press {unlock} to unlock"))
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
            });
            return vec![Command::Publish(Box::new(publishing))];
        }
        Step::Confirm => return cancel(model, &draft),
    }
    model.desk.overlay = Some(Overlay::Draft(draft));
    Vec::new()
}

/// The debate type whose rollout this console is writing a version of (its reason, share or
/// confirmation open), for presence.
pub(super) fn editing(model: &Model) -> Option<&str> {
    match &model.desk.overlay {
        Some(Overlay::Draft(draft)) => Some(&draft.publishing.debate_type),
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
        },
    });
    Vec::new()
}
