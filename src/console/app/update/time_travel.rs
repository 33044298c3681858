//! Time: the time cursor stepping through a debate's decisions, history played forward, and
//! the feed's playback (paused, resumed with the rows held back, sped up or slowed down).

use crate::config::keys::Action;
use crate::console::app::event::Command;
use crate::console::app::model::Model;
use crate::domain::Moment;
use crate::simulate::Playback;

/// The time cursor: to the decision before or after the one shown, each as it was settled
/// (after the latest: live), or to the first or the latest.
pub(super) fn travel(model: &mut Model, action: Action) {
    let stops: Vec<Moment> = model
        .nav
        .selected
        .and_then(|seq| model.held(seq))
        .map(|live| live.stops().collect())
        .unwrap_or_default();
    let (Some(&first), Some(&latest)) = (stops.first(), stops.last()) else {
        model.flash("no decision yet to look back to", false);
        return;
    };
    let at = model.nav.past.as_ref().map(|p| p.moment);
    let to = match (action, at) {
        (Action::StepBack, None) => Some(latest),
        (Action::StepBack, Some(at)) => {
            Some(stops.iter().rev().find(|&&m| m < at).map_or(first, |&m| m))
        }
        (Action::StepForward, None) => None,
        (Action::StepForward, Some(at)) => stops.iter().find(|&&m| m > at).copied(),
        (Action::FirstDecision, _) => Some(first),
        _ => Some(latest),
    };
    model.travel(to);
    if to.is_none() {
        model.flash("live", false);
    }
}

/// Playing history forward (`space` in the past): the next moment — a decision landing, then
/// the action on it — comes after the time that passed between the two as recorded
/// ([`Debate::time_of`]), at the playback speed, between 0.2 and 10 s; after the latest, live.
pub(super) fn play_history(model: &mut Model, wall: chrono::DateTime<chrono::Utc>) {
    let Some(Some(due)) = model.nav.past.as_ref().map(|p| p.playing) else {
        return;
    };
    if due.is_some_and(|due| wall < due) {
        return;
    }
    if due.is_some() {
        let (next, _) = next_moment(model);
        model.travel(next);
        if next.is_none() {
            model.flash("live", false);
        }
    }
    let (_, wait) = next_moment(model);
    if let Some(past) = &mut model.nav.past {
        past.playing = Some(Some(wall + wait));
    }
}

/// The moment after the one shown (`None` after the latest: live), and how long history plays
/// before it lands: the recorded time between the two at the playback speed, between 0.2 and
/// 10 s (2 s when not recorded).
pub(super) fn next_moment(model: &Model) -> (Option<Moment>, chrono::Duration) {
    let live = model.nav.selected.and_then(|seq| model.held(seq));
    let at = model.nav.past.as_ref().map(|p| p.moment);
    let next = live.zip(at).and_then(|(live, at)| {
        let next = live.moments().find(|&m| m > at)?;
        Some((live, at, next))
    });
    let gap = next.and_then(|(live, at, next)| {
        let (from, to) = (live.time_of(at)?, live.time_of(next)?);
        (to - from).to_std().ok()
    });
    let seconds = gap.map_or(2.0, |g| g.as_secs_f64()) / model.time.playback.speed.max(0.01);
    let wait = chrono::Duration::milliseconds((seconds.clamp(0.2, 10.0) * 1000.0) as i64);
    (next.map(|(_, _, next)| next), wait)
}

/// `space` and the speed keys: history played forward or paused in the past; else the feed
/// paused or resumed, the demo's playback sped up or slowed down.
pub(super) fn on_playback(model: &mut Model, action: Action) -> Vec<Command> {
    match action {
        Action::Pause if model.nav.past.is_some() => toggle_history(model),
        Action::Pause if model.time.playback.paused => return resume(model),
        Action::Pause => return set_playback(model, model.time.playback.toggled()),
        Action::Faster | Action::Slower if !model.about.simulated => {
            model.flash(
                "playback speed is the demo's only: a live feed plays as it comes",
                false,
            );
        }
        Action::Faster => return set_speed(model, model.time.playback.faster()),
        Action::Slower => return set_speed(model, model.time.playback.slower()),
        _ => {}
    }
    Vec::new()
}

/// `space` in the past: plays history forward, or pauses it.
pub(super) fn toggle_history(model: &mut Model) {
    if let Some(past) = &mut model.nav.past {
        past.playing = match past.playing {
            Some(_) => None,
            None => Some(None),
        };
        let what = if past.playing.is_some() {
            "playing history forward"
        } else {
            "history paused"
        };
        model.flash(what, false);
        model.screen.dirty = true;
    }
}

/// Plays on, applying the rows held while paused.
pub(super) fn resume(model: &mut Model) -> Vec<Command> {
    let commands = set_playback(model, model.time.playback.toggled());
    for (ctx, change) in std::mem::take(&mut model.live.held_back) {
        model.apply_in(ctx, change);
    }
    commands
}

/// A speed key: the demo's playback at `playback`'s speed, said in the footer (where it
/// stops, and that playback stays paused while it is).
fn set_speed(model: &mut Model, playback: Playback) -> Vec<Command> {
    let bound = match playback.speed {
        Playback::MAX_SPEED => ", the fastest",
        Playback::MIN_SPEED => ", the slowest",
        _ => "",
    };
    let paused = if playback.paused {
        let play = model.settings.keymap.keys(Action::Pause);
        format!(" (paused: {play} plays on)")
    } else {
        String::new()
    };
    model.flash(format!("speed {}x{bound}{paused}", playback.speed), false);
    set_playback(model, playback)
}

pub(super) fn set_playback(model: &mut Model, playback: Playback) -> Vec<Command> {
    model.time.playback = playback;
    vec![Command::SetPlayback(playback)]
}
