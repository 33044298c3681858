//! The rollout view: a debate type's settings rollout, its two arms side by side — version,
//! share, values — and each measure with its 95% interval as debates land (the reports worker's
//! comparison, read from the model as it is), the guards that trip, who else is editing it, and
//! the type's versions, newest first, in the room left. Without a database, or with nothing
//! published, it says so and how to get there. On several databases it is one context's
//! rollouts, named in its title; the arms are compared for the first context's alone (the
//! reports worker follows those), and another's says so. Only the lines that fit are made.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::common::{below_header, compact, fit, one_line, panel, title};
use crate::calibrate::rollout::{
    ArmFigures, Comparison, Guard, Interval, MIN_DEBATES, Mean, Rate, Stop,
};
use crate::config::theme::Theme;
use crate::console::app::{Action, COMPARED, Ctx, Model};
use crate::domain::{SettingsVersion, WHOLE_SHARE, percent};

/// The measures' column, in characters.
const LABEL: usize = 16;
/// An arm's column, in characters at most.
const COLUMN: usize = 36;

/// What the view shows: the rollout of `debate_type` (`None`: nothing published) in context
/// `ctx`, scrolled by `scroll` rows.
pub(super) struct View<'a> {
    pub scroll: u16,
    pub debate_type: Option<&'a str>,
    pub ctx: Ctx,
}

pub(super) fn render(model: &Model, view: View, theme: &Theme, frame: &mut Frame) {
    let View {
        scroll,
        debate_type,
        ctx,
    } = view;
    let area = below_header(frame.area());
    let key = |action| model.settings.keymap.hint(action);
    let figures = model.reports.figures();
    let mut name = match debate_type {
        Some(t) => format!("rollout · {}", fit(&one_line(t), 40)),
        None => "rollout".to_owned(),
    };
    let contexts = &model.live.contexts;
    if contexts.several() {
        name.push_str(&format!(" · in {}", contexts.name(ctx)));
    }
    let block = panel(title(&name, figures.refreshing), theme, true).title_bottom(format!(
        " {} {} debate type · {} promote · {} roll back · ↑↓ scroll · Esc close ",
        key(Action::PreviousSetting),
        key(Action::NextSetting),
        key(Action::Promote),
        key(Action::Rollback),
    ));
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let lines = match (model.rollout.history(ctx), debate_type) {
        (None, _) if model.live.link.is_none() => absent(
            "rollouts live in a database: the demo keeps no settings history. `gavel demo \
             --postgres` (or `gavel watch` on a database) publishes, compares and rolls back.",
            width,
            theme,
        ),
        (None, _) => absent("reading the settings history…", width, theme),
        (Some(Err(why)), _) => vec![Line::styled(
            format!("the settings history cannot be read: {}", one_line(why)),
            theme.danger(),
        )],
        (Some(Ok(_)), None) => absent(
            &format!(
                "nothing published: every debate type runs under the controller's own defaults. \
                 Publish a setting from the calibration window ({}, then {} on the setting under \
                 its cursor).",
                key(Action::Calibration),
                key(Action::Publish)
            ),
            width,
            theme,
        ),
        (Some(Ok(_)), Some(debate_type)) => of_type(model, ctx, debate_type, width, theme),
    };
    let rows = usize::from(inner.height);
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(usize::from(scroll))
        .take(rows)
        .map(|line| super::common::fit_line(line, width))
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(shown), inner);
}

/// A message where the rollout would be.
fn absent(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    crate::text::wrap(text, width, 6)
        .into_iter()
        .map(|line| Line::styled(line, theme.muted()))
        .collect()
}

/// `debate_type`'s state in context `ctx`, its arms compared when a rollout is in progress
/// there, then its versions.
fn of_type(
    model: &Model,
    ctx: Ctx,
    debate_type: &str,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let key = |action| model.settings.keymap.hint(action);
    let Some(latest) = model.rollout.latest_of(ctx, debate_type) else {
        return vec![Line::styled(
            "nothing published for this debate type: the controller's own defaults stand",
            theme.muted(),
        )];
    };
    let mut lines = Vec::new();
    let compared = ctx == COMPARED;
    let comparison = model.reports.figures().rollout.iter().find(|c| {
        compared
            && c.rollout.debate_type == debate_type
            && Some(c.rollout.canary) == latest.canary_version
    });
    match latest.canary_version {
        Some(canary) => lines.push(Line::styled(
            format!(
                "version {canary} rolling out to {} of new debates, the rest on {}",
                percent(latest.canary_share_bp.unwrap_or_default()),
                stable_name(latest.stable_version)
            ),
            theme.pending(),
        )),
        None => lines.push(Line::styled(
            format!(
                "no rollout in progress: {} in force for every new debate · publish from the \
                 calibration window ({})",
                stable_name(latest.stable_version),
                key(Action::Calibration)
            ),
            theme.text(),
        )),
    }
    for who in model.editing(ctx, debate_type) {
        lines.push(Line::styled(
            format!(
                "{} is editing the rollout of {}",
                one_line(&who),
                one_line(debate_type)
            ),
            theme.warn(),
        ));
    }
    let tripped: Vec<Guard> = model.rollout.tripped_on(ctx, debate_type).collect();
    if !tripped.is_empty() {
        let what: Vec<&str> = tripped.iter().map(|g| g.what()).collect();
        lines.push(Line::styled(
            format!(
                "⚠ the canary raises the {} (95% intervals apart): {} rolls it back",
                what.join(", "),
                key(Action::Rollback)
            ),
            theme.danger(),
        ));
    }
    let share = |bp: u32| percent(bp);
    let canary_share = latest.canary_share_bp.unwrap_or(0);
    lines.push(values_line(
        model,
        ctx,
        "stable",
        latest.stable_version,
        share(WHOLE_SHARE - canary_share),
        theme,
    ));
    if let Some(canary) = latest.canary_version {
        lines.push(values_line(
            model,
            ctx,
            "canary",
            Some(canary),
            share(canary_share),
            theme,
        ));
    }
    if let Some(comparison) = comparison {
        lines.extend(arms_compared(model, comparison, width, theme));
    } else if !compared && latest.canary_version.is_some() {
        let first = model.live.contexts.name(COMPARED);
        let why = format!(
            "arms compared, and guards watched, for {first}'s rollouts only (the first \
             database): each database numbers its versions on its own"
        );
        lines.extend(
            crate::text::wrap(&why, width, 3)
                .into_iter()
                .map(|line| Line::styled(line, theme.muted())),
        );
    }
    lines.push(Line::styled("versions, newest first:", theme.muted()));
    let versions = model
        .rollout
        .history(ctx)
        .and_then(Result::ok)
        .unwrap_or(&[]);
    lines.extend(
        versions
            .iter()
            .rev()
            .filter(|v| v.debate_type == debate_type)
            .take(100)
            .map(|v| version_line(v, theme)),
    );
    lines
}

/// `version N`, or the controller's defaults.
fn stable_name(version: Option<i64>) -> String {
    version.map_or_else(
        || "the controller's defaults".to_owned(),
        |v| format!("version {v}"),
    )
}

/// An arm's version, share and values (of context `ctx`'s history) in a line.
fn values_line(
    model: &Model,
    ctx: Ctx,
    arm: &str,
    version: Option<i64>,
    share: String,
    theme: &Theme,
) -> Line<'static> {
    let values = version
        .and_then(|v| model.rollout.version(ctx, v))
        .and_then(|v| v.values.as_ref())
        .map_or_else(
            || match version {
                None => "the controller's own defaults".to_owned(),
                Some(_) => "values not among the versions read".to_owned(),
            },
            |values| one_line(&values.summary()),
        );
    let version = version.map_or_else(|| "defaults".to_owned(), |v| format!("v{v}"));
    Line::from(vec![
        Span::styled(format!("{arm:<7}{version} · {share} · "), theme.title()),
        Span::styled(values, theme.text()),
    ])
}

/// A version of the history in a line: number, what it did, when, by whom, why.
fn version_line(v: &SettingsVersion, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!(
                " v{} {} · {} by {}: ",
                v.version,
                v.what(),
                v.published_at.format("%Y-%m-%d %H:%M UTC"),
                one_line(&v.published_by)
            ),
            theme.muted(),
        ),
        Span::styled(one_line(&v.reason), theme.text()),
    ])
}

/// The two arms' measures side by side, with what their intervals are.
fn arms_compared(
    model: &Model,
    comparison: &Comparison,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let column = (width.saturating_sub(LABEL) / 2).min(COLUMN);
    let (stable, canary) = (&comparison.stable, &comparison.canary);
    let row = |label: &str, cell: &dyn Fn(&ArmFigures) -> String| {
        Line::styled(
            format!(
                "{label:<LABEL$}{:<column$}{}",
                fit(&cell(stable), column.saturating_sub(1)),
                fit(&cell(canary), column.saturating_sub(1))
            ),
            theme.text(),
        )
    };
    let (left, right) = (
        arm_name("stable", stable.version),
        arm_name("canary", canary.version),
    );
    let mut lines = vec![Line::styled(
        format!("{:<LABEL$}{left:<column$}{right}", ""),
        theme.title(),
    )];
    lines.push(row("debates", &|a| {
        format!("{} finished · {} running", a.finished, a.running)
    }));
    lines.push(row("rounds/debate", &|a| {
        mean(&a.rounds, |x| format!("{x:.1}"))
    }));
    lines.push(row("tokens/debate", &|a| mean(&a.tokens, tokens)));
    lines.push(row("saved/debate", &|a| match a.saved.n {
        0 => "— (no shadow debates)".to_owned(),
        n => format!("{} · {n} shadow", mean(&a.saved, tokens)),
    }));
    for (at, stop) in Stop::ALL.iter().enumerate() {
        let label = match stop {
            Stop::None => "no stop".to_owned(),
            stop => format!("stop {}", stop.name()),
        };
        lines.push(row(&label, &|a| rate(&a.stops[at])));
    }
    lines.push(row("overridden", &|a| rate(&a.overridden)));
    lines.push(row("escalated", &|a| rate(&a.escalated)));
    lines.push(row("verdict flips", &|a| match a.flips.n {
        0 => "— (no shadow debates)".to_owned(),
        _ => rate(&a.flips),
    }));
    if !(stable.enough() && canary.enough()) {
        lines.push(Line::styled(
            format!(
                "not enough debates yet: intervals once each arm has {MIN_DEBATES} finished \
                 debates (stable {}, canary {})",
                stable.finished, canary.finished
            ),
            theme.warn(),
        ));
    }
    let guards: Vec<&str> = model.rollout.guards().iter().map(|g| g.name()).collect();
    let notes = format!(
        "means with 95% t intervals, rates with 95% Wilson intervals · saved and flips: shadow \
         debates, the controller's first stop against the fixed loop · guards: {}",
        if guards.is_empty() {
            "none".to_owned()
        } else {
            guards.join(", ")
        }
    );
    lines.extend(
        crate::text::wrap(&notes, width, 3)
            .into_iter()
            .map(|line| Line::styled(line, theme.muted())),
    );
    lines
}

/// An arm's column heading: `stable (version 1)`, `stable (defaults)`.
fn arm_name(arm: &str, version: Option<i64>) -> String {
    match version {
        Some(v) => format!("{arm} (version {v})"),
        None => format!("{arm} (defaults)"),
    }
}

/// Tokens, short: `5.1k`.
fn tokens(x: f64) -> String {
    compact(x.max(0.0).round() as u64)
}

/// A mean and its interval when there is one: `4.2 (3.8–4.6)`; `—` of nothing.
fn mean(m: &Mean, shown: impl Fn(f64) -> String) -> String {
    match (m.mean, m.interval) {
        (None, _) => "—".to_owned(),
        (Some(x), None) => shown(x),
        (Some(x), Some(Interval { low, high })) => {
            format!("{} ({}–{})", shown(x), shown(low.max(0.0)), shown(high))
        }
    }
}

/// A rate, its share and its interval when there is one: `2 of 12 · 17% (5–45%)`.
fn rate(r: &Rate) -> String {
    let share = r
        .share()
        .map_or_else(String::new, |s| format!(" · {:.0}%", s * 100.0));
    let interval = r.interval.map_or_else(String::new, |i| {
        format!(" ({:.0}–{:.0}%)", i.low * 100.0, i.high * 100.0)
    });
    format!("{} of {}{share}{interval}", r.hits, r.n)
}
