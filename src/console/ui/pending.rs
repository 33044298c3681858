//! The decision panel for the selected debate, laid out to decide from at 80x24: a headline
//! (round, decision, time left for a gated one, what the mode does with it), the three
//! convergence signals as a fixed mini-table, then the action keys, then the reasons. Without a
//! pending decision, how the latest one stands and how the debate ended. Text cut to fit ends
//! in `…`; numbers are shortened (60k), never cut.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::common::{Panel, compact, decision_style, figure, fit, fit_line, one_line, time_left};
use super::sketch::Sketch;
use crate::config::theme::Theme;
use crate::console::app::{Action, Model};
use crate::domain::{ControllerDecision, ControllerMode, Debate, Reported, Signals};
use crate::text::{against, under, wrap};

/// Below this inner width the mini-table and the keys and reasons are stacked, not side by side.
const SIDE_BY_SIDE: u16 = 64;
/// The widest the mini-table gets beside the keys and reasons.
const TABLE_WIDTH: u16 = 40;

/// Writes the decision panel for `debate` in `area` down in `sketch`.
pub(super) fn render(
    model: &Model,
    debate: Option<&Debate>,
    theme: &Theme,
    sketch: &mut Sketch,
    area: Rect,
) {
    let Some(debate) = debate else {
        sketch.render_widget(Panel::new("decision".to_owned(), theme, false), area);
        return;
    };
    let pending = debate.pending();
    let shown = pending.or(debate.latest_decision());
    let block = Panel::new(
        fit(
            &title(model, pending.is_some(), shown.is_some()),
            usize::from(area.width.saturating_sub(4)),
        ),
        theme,
        false,
    );
    let inner = Panel::inner(area);
    sketch.render_widget(block, area);
    let Some(decision) = shown else {
        let line = format!(
            "no controller decision yet · {} · {}",
            debate.session.status, debate.session.controller_mode
        );
        sketch.render_widget(
            Line::styled(fit(&line, inner.width.into()), theme.muted()),
            inner,
        );
        return;
    };
    // A problem reading the rows gets a line of its own, under everything else.
    let issue = issues(debate, decision);
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(issue.is_some().into()),
    ])
    .areas(inner);
    sketch.render_widget(headline(debate, decision, theme, head.width), head);
    if let Some(issue) = issue {
        sketch.render_widget(
            Line::styled(
                fit(&format!("⚠ {issue}"), foot.width.into()),
                theme.danger(),
            ),
            foot,
        );
    }
    let shown = Shown {
        decision,
        pending: pending.is_some(),
        stacked: body.width < SIDE_BY_SIDE,
    };
    render_body(model, debate, &shown, sketch, body);
}

/// Under the headline: the signals, and beside or under them the action keys or how the
/// decision stands, then its reasons.
fn render_body(model: &Model, debate: &Debate, shown: &Shown, sketch: &mut Sketch, body: Rect) {
    let (theme, decision, stacked) = (&model.settings.theme, shown.decision, shown.stacked);
    // Narrow, how a settled decision stands (who acted, when, with what note) comes before the
    // signals: it is what the panel is looked at for then.
    let body = if stacked && !shown.pending {
        // Two lines at most, leaving the three convergence signals theirs.
        let most = usize::from(body.height.saturating_sub(3)).clamp(1, 2);
        let lines = standing_lines(model, theme, debate, decision, (body.width, most));
        let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        let [top, body] =
            Layout::vertical([Constraint::Length(rows), Constraint::Fill(1)]).areas(body);
        sketch.render_widget(Paragraph::new(lines), top);
        body
    } else {
        body
    };
    let table = signal_table(&decision.signals, body.height);
    let (table_area, rest) = if !stacked {
        let [table_area, _, rest] = Layout::horizontal([
            Constraint::Length(TABLE_WIDTH.min(body.width / 2)),
            Constraint::Length(2),
            Constraint::Fill(1),
        ])
        .areas(body);
        (table_area, rest)
    } else {
        let rows = u16::try_from(table.len())
            .unwrap_or(u16::MAX)
            .min(body.height);
        let [table_area, rest] =
            Layout::vertical([Constraint::Length(rows), Constraint::Fill(1)]).areas(body);
        (table_area, rest)
    };
    let table: Vec<Line> = table
        .into_iter()
        .map(|row| row.render(table_area.width, theme))
        .collect();
    sketch.render_widget(Paragraph::new(table), table_area);
    let lines = keys_and_reasons(model, theme, debate, shown, rest);
    sketch.render_widget(Paragraph::new(lines), rest);
}

/// The panel's title: whether a decision waits (and how long it has), or which one is shown.
/// In the past (the time cursor), a decision that waited then shows the whole wait, as its
/// countdown did when it was decided.
fn title(model: &Model, pending: bool, shown: bool) -> String {
    let left = match &model.nav.past {
        Some(past) => past
            .debate
            .waiting()
            .then(|| model.about.gated_wait(past.debate.session.gated_timeout)),
        None => model
            .selected_summary()
            .and_then(|summary| model.time_left(summary)),
    };
    let claimed = model
        .selected_summary()
        .and_then(|s| Some((s, s.pending()?)))
        .filter(|_| model.nav.past.is_none())
        .and_then(|(s, round)| model.deciding(&s.id, round));
    if let (true, Some(left), Some((who, held))) = (pending, left, claimed) {
        return format!(
            "decision waiting · {} · {} deciding ({})",
            time_left(left),
            one_line(&who),
            crate::text::countdown(held)
        );
    }
    match (pending, left) {
        (true, Some(left)) => format!("decision waiting for you · {}", time_left(left)),
        (true, None) => "pending decision (advisory)".to_owned(),
        (false, _) if shown => "latest decision".to_owned(),
        _ => "decision".to_owned(),
    }
}

/// The decision the panel shows, and how.
struct Shown<'a> {
    decision: &'a ControllerDecision,
    /// It waits for the operator.
    pending: bool,
    /// The panel is too narrow for the signals to stand beside the rest.
    stacked: bool,
}

/// Beside (or under) the signals: the action keys when the decision is pending, else how it
/// stands (above the signals when stacked); then its reasons, in what room is left of `area`.
fn keys_and_reasons(
    model: &Model,
    theme: &Theme,
    debate: &Debate,
    shown: &Shown,
    area: Rect,
) -> Vec<Line<'static>> {
    let Shown {
        decision,
        pending,
        stacked,
    } = *shown;
    let mut lines = Vec::new();
    if pending {
        lines.push(keys(model, theme, area.width.into()));
    } else if !stacked {
        lines.extend(standing_lines(
            model,
            theme,
            debate,
            decision,
            (area.width, 3),
        ));
    }
    let room = usize::from(area.height).saturating_sub(lines.len());
    let reasons: Vec<String> = decision
        .signals
        .reasons
        .iter()
        .map(|r| one_line(r))
        .collect();
    let why = format!("why: {}", reasons.join(" · "));
    for line in wrap(&why, area.width.into(), room) {
        lines.push(Line::styled(line, theme.text()));
    }
    let width = usize::from(area.width);
    lines.into_iter().map(|l| fit_line(l, width)).collect()
}

/// Round, decision (and persona brought in), then what the mode does with it.
fn headline(
    debate: &Debate,
    decision: &ControllerDecision,
    theme: &Theme,
    width: u16,
) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("round {} · ", decision.round_index), theme.muted()),
        Span::styled(
            one_line(&decision.decision.to_string()),
            decision_style(theme, &decision.decision),
        ),
    ];
    if let Some(persona) = &decision.signals.escalate_persona {
        spans.push(Span::styled(
            format!(" → {}", one_line(persona)),
            theme.warn(),
        ));
    }
    let mode = match &debate.session.controller_mode {
        Reported::Known(ControllerMode::Gated) => {
            "gated: waits for you; on timeout the decision stands".to_owned()
        }
        Reported::Known(ControllerMode::Shadow) => {
            "shadow: advisory; the fixed loop goes on".to_owned()
        }
        Reported::Known(ControllerMode::Enabled) => {
            "enabled: applied; an override applies next round".to_owned()
        }
        Reported::Known(ControllerMode::Off) => {
            "off: the orchestrator ignores decisions".to_owned()
        }
        Reported::Unknown(raw) => format!(
            "unknown mode {:?}: how the orchestrator treats decisions is not known",
            one_line(raw)
        ),
    };
    if debate.pending().is_some() {
        spans.push(Span::styled(format!(" · {mode}"), theme.muted()));
    }
    fit_line(Line::from(spans), width.into())
}

/// One row of the signals mini-table: a name, a figure against its threshold, and whether it
/// is met.
struct SignalRow {
    name: &'static str,
    value: String,
    met: Option<bool>,
}

impl SignalRow {
    fn render(self, width: u16, theme: &Theme) -> Line<'static> {
        let check = match self.met {
            Some(true) => Span::styled(" ✓", theme.ok()),
            Some(false) => Span::styled(" ✗", theme.danger()),
            None => Span::styled(" ?", theme.muted()),
        };
        let room = usize::from(width).saturating_sub(11 + 2);
        Line::from(vec![
            Span::styled(format!("{:<11}", self.name), theme.muted()),
            Span::styled(format!("{:<room$}", fit(&self.value, room)), theme.text()),
            check,
        ])
    }
}

/// The three convergence signals against their thresholds, then (room allowing) the tokens
/// spent and the open disputes.
fn signal_table(s: &Signals, height: u16) -> Vec<SignalRow> {
    let similar = s
        .similarity
        .zip(s.similarity_threshold)
        .map(|(v, t)| v >= t);
    let settled = s.new_claims.zip(s.novelty_threshold).map(|(n, t)| n < t);
    let verdict = match (s.verdict_split, &s.verdict) {
        (Some(true), Some(v)) => format!("split: {}", one_line(v)),
        (_, Some(v)) => one_line(v),
        (_, None) => "none".to_owned(),
    };
    let count = |n: Option<u32>| n.map_or("—".to_owned(), |n| compact(n.into()));
    let mut rows = vec![
        SignalRow {
            name: "similarity",
            value: match (s.similarity, s.similarity_threshold) {
                (Some(v), Some(t)) => against(v, t),
                (v, t) => format!("{} (needs ≥ {})", figure(v), figure(t)),
            },
            met: similar,
        },
        SignalRow {
            name: "verdict",
            value: verdict,
            met: s.verdict_stable,
        },
        SignalRow {
            name: "new claims",
            value: match (s.new_claims, s.novelty_threshold) {
                (Some(n), Some(t)) => under(n, t),
                (n, t) => format!("{} (needs < {})", count(n), count(t)),
            },
            met: settled,
        },
    ];
    if height > 3 {
        let tokens = match (s.tokens_used, s.token_budget) {
            (Some(used), Some(budget)) if budget > 0 => format!(
                "{} of {} ({:.0}%)",
                compact(used),
                compact(budget),
                used as f64 / budget as f64 * 100.0
            ),
            (Some(used), _) => compact(used),
            _ => "—".to_owned(),
        };
        rows.push(SignalRow {
            name: "tokens",
            value: tokens,
            met: None,
        });
    }
    if height > 4 {
        rows.push(SignalRow {
            name: "disputes",
            value: count(s.open_disputes),
            met: None,
        });
    }
    rows
}

/// The action keys in force, or why there are none.
fn keys(model: &Model, theme: &Theme, width: usize) -> Line<'static> {
    let key = |action: Action| {
        Span::styled(
            format!("[{}]", model.settings.keymap.keys(action)),
            theme.pending(),
        )
    };
    let ctx = model.selected_ctx();
    if let Some(why) = model.denied_in(ctx) {
        Line::styled(format!("read-only: {}", one_line(why)), theme.warn())
    } else if model.read_only_in(ctx) {
        Line::from(vec![
            Span::styled("read-only: ", theme.warn()),
            key(Action::Unlock),
            Span::styled(" unlocks actions", theme.text()),
        ])
    } else {
        let mut line = Line::from(vec![
            key(Action::Accept),
            Span::styled(" accept ", theme.text()),
            key(Action::Override),
            Span::styled(" override ", theme.text()),
            key(Action::Escalate),
            Span::styled(" escalate", theme.text()),
        ]);
        if line.width() + 12 <= width {
            line.push_span(Span::styled("  y confirms", theme.muted()));
        }
        line
    }
}

/// How a settled decision stands, wrapped to `width` in `most` lines at most.
fn standing_lines(
    model: &Model,
    theme: &Theme,
    debate: &Debate,
    decision: &ControllerDecision,
    (width, most): (u16, usize),
) -> Vec<Line<'static>> {
    wrap(&standing(model, debate, decision), width.into(), most)
        .into_iter()
        .map(|line| Line::styled(line, theme.accent()))
        .collect()
}

/// How a settled decision stands: who resolved it, when, with what left of a gated wait and
/// with what note, and how the debate ended.
fn standing(model: &Model, debate: &Debate, decision: &ControllerDecision) -> String {
    let resolved = match debate.actions.get(&decision.round_index) {
        Some(action) => {
            let when = action
                .created_at
                .map(|t| format!(" at {}", t.format("%H:%M:%S")))
                .unwrap_or_default();
            let gated = debate.session.controller_mode == ControllerMode::Gated.into();
            let waited = action.created_at.zip(decision.decided_at).filter(|_| gated);
            let left = waited.map_or_else(String::new, |(acted, decided)| {
                let waited = (acted - decided).to_std().unwrap_or_default();
                format!(
                    " ({})",
                    time_left(
                        model
                            .about
                            .gated_wait(debate.session.gated_timeout)
                            .saturating_sub(waited)
                    )
                )
            });
            let note = action
                .note
                .as_deref()
                .map_or_else(String::new, |n| format!(" · note: {}", one_line(n)));
            format!(
                "{} by {}{when}{left}: {}{note}",
                action.action,
                one_line(&action.who()),
                action.decision
            )
        }
        None => "not resolved by an operator".to_owned(),
    };
    let status = one_line(&debate.session.status.to_string());
    let ended = match (debate.ending(), debate.session.num_rounds) {
        (Some(ending), Some(n)) => format!("{status} after {n} rounds: {ending}"),
        (Some(ending), None) => format!("{status}: {ending}"),
        (None, _) => status,
    };
    one_line(&format!("{resolved} · {ended}"))
}

/// The first problem to show: the decision's own, else the debate's first, with how many more
/// the debate has (counted as its rows were filed: a frame does not go over a long debate's
/// rows, only a debate read with problems up to its first).
fn issues(debate: &Debate, decision: &ControllerDecision) -> Option<String> {
    let count = debate.issue_count().max(decision.issues.len());
    if count == 0 {
        return None;
    }
    let first = decision
        .issues
        .first()
        .map(String::as_str)
        .or_else(|| debate.issues().next())?;
    let more = match count {
        1 => String::new(),
        n => format!(" (+{} more)", n - 1),
    };
    Some(format!("{}{more}", one_line(first)))
}
