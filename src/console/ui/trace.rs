//! The trace view — "why did this debate stop at round X?": the ending on top, then every
//! controller decision with its three signals against the thresholds it used, its reasons, and
//! the operator action on it with who took it; the latest notes operators pinned to the
//! debate on top. The same [`Trace`] `gavel trace` prints.

use ratatui::text::{Line, Span};

use super::common::{decision_style, one_line, thousands};
use super::document::{Document, Section};
use crate::audit::{Trace, TraceRound};
use crate::config::theme::Theme;
use crate::console::app::Model;
use crate::domain::{Debate, Reported, who};

pub(crate) fn document(model: &Model, debate: &Debate) -> Document<'static> {
    let theme = &model.settings.theme;
    let trace = Trace::of(debate);
    let mut head = vec![
        Line::styled(
            format!(
                "{} · {} · {} rounds of max {} · {} of {} tokens",
                one_line(&trace.controller_mode),
                one_line(&trace.status),
                trace.rounds_run,
                trace.max_rounds,
                thousands(trace.tokens_used),
                thousands(trace.token_budget)
            ),
            theme.muted(),
        ),
        Line::styled(one_line(&trace.ending), theme.title()),
    ];
    let earlier = trace.notes.len().saturating_sub(HEAD_NOTES);
    if earlier > 0 {
        head.push(Line::styled(
            format!("✎ {earlier} earlier notes: gavel trace lists every one"),
            theme.muted(),
        ));
    }
    head.extend(trace.notes.iter().skip(earlier).map(|note| {
        Line::from(vec![
            Span::styled(format!("✎ {} ", note.minute()), theme.muted()),
            Span::styled(
                format!(
                    "{}: ",
                    one_line(&who(&note.operator, note.operator_role.as_deref()))
                ),
                theme.accent(),
            ),
            Span::styled(one_line(&note.note), theme.text()),
        ])
    }));
    head.extend(
        trace
            .issues
            .iter()
            .map(|i| Line::styled(format!("⚠ {}", one_line(i)), theme.danger())),
    );
    let sections = trace
        .rounds
        .iter()
        .map(|round| section(theme, round))
        .collect();
    Document {
        title: format!("trace · {}", one_line(&debate.session.id)),
        head,
        sections,
    }
}

/// Notes shown on top of the trace view at most: the latest.
const HEAD_NOTES: usize = 3;

/// One round of the trace: its decision and signals on a line, then its reasons, the judge's
/// abort and the operator's note.
fn section(theme: &Theme, round: &TraceRound) -> Section<'static> {
    const LABELS: [&str; 6] = [
        "",
        "",
        "similarity ",
        "verdict ",
        "new claims ",
        "operator ",
    ];
    let cells = round.cells();
    let decision = Reported::parse(round.decision.as_deref().unwrap_or("-"));
    let mut first = vec![
        Span::styled(format!("round {:<3}", cells[0]), theme.muted()),
        Span::styled(
            format!("{:<22}", cells[1]),
            decision_style(theme, &decision),
        ),
    ];
    for (label, cell) in LABELS.iter().zip(&cells).skip(2) {
        if cell.is_empty() {
            continue;
        }
        first.push(Span::styled(format!("  {label}"), theme.muted()));
        let style = if cell.ends_with('✗') {
            theme.danger()
        } else if cell.ends_with('✓') {
            theme.ok()
        } else {
            theme.text()
        };
        first.push(Span::styled(cell.clone(), style));
    }
    let mut lines = vec![Line::from(first)];
    lines.extend(
        round
            .reasons
            .iter()
            .map(|r| Line::styled(format!("    - {}", one_line(r)), theme.text())),
    );
    if let Some(abort) = &round.judge_abort {
        lines.push(Line::styled(
            format!("    - judge aborted the debate: {}", one_line(abort)),
            theme.danger(),
        ));
    }
    if let Some(note) = round.action.as_ref().and_then(|a| a.note.as_deref()) {
        lines.push(Line::styled(
            format!("    - operator note: {}", one_line(note)),
            theme.accent(),
        ));
    }
    Section {
        round: round.round,
        lines,
    }
}
