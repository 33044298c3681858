//! Windows over the console: help, the pick lists for override and escalation, the
//! confirmation, a round's turns, and the calibration grid.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListState, Paragraph, Wrap};

use super::calibration;
use super::format::{figure, inert, one_line, panel, ruling_style, thousands};
use crate::app::{Chooser, Intent, KEYS, Model, Overlay};
use crate::theme::Theme;

/// Content beyond this many characters per turn is cut, with a note saying how much.
const MAX_TURN_CHARS: usize = 20_000;

pub fn render(model: &Model, overlay: &Overlay, theme: &Theme, frame: &mut Frame) {
    match overlay {
        Overlay::Help => help(theme, frame),
        Overlay::Choose(chooser) => choose(chooser, theme, frame),
        Overlay::Confirm(intent) => confirm(intent, theme, frame),
        Overlay::Note(intent) => note(intent, theme, frame),
        Overlay::Round { number, scroll } => round(model, *number, *scroll, theme, frame),
        Overlay::Calibration { scroll } => calibration::render(model, *scroll, theme, frame),
    }
}

fn centered(frame: &Frame, width: u16, height: u16) -> Rect {
    let area = frame.area();
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

fn help(theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 76, KEYS.len() as u16 + 2);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<12}"), theme.pending()),
                Span::styled(*what, theme.text()),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(panel("keys".to_owned(), theme, true)),
        area,
    );
}

fn choose(chooser: &Chooser, theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 64, chooser.options.len() as u16 + 4);
    let what = match chooser.action {
        crate::domain::ActionKind::Escalate => "bring in which persona",
        _ => "override with which decision",
    };
    let title = format!(
        "{} · round {}: {what}?",
        one_line(&chooser.session_id),
        chooser.round_index
    );
    let list = List::new(chooser.options.iter().map(|o| one_line(o)))
        .style(theme.text())
        .highlight_style(theme.selection())
        .highlight_symbol("› ")
        .block(panel(title, theme, true).title_bottom(" ↑↓ move · Enter choose · Esc cancel "));
    let mut state = ListState::default().with_selected(Some(chooser.cursor));
    frame.render_widget(Clear, area);
    frame.render_stateful_widget(list, area, &mut state);
}

fn confirm(intent: &Intent, theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 72, 7);
    let what = match &intent.persona {
        Some(persona) => format!(
            "{} → {} (bring in {})",
            intent.action,
            intent.decision,
            one_line(persona)
        ),
        None => format!("{} → {}", intent.action, intent.decision),
    };
    let lines = vec![
        Line::from(vec![
            Span::styled(
                format!(
                    "{} · round {}: ",
                    one_line(&intent.session_id),
                    intent.round_index
                ),
                theme.muted(),
            ),
            Span::styled(what, theme.pending()),
        ]),
        Line::styled(
            match &intent.note {
                Some(note) => format!("note: {}", one_line(note)),
                None => String::new(),
            },
            theme.text(),
        ),
        Line::from(vec![
            Span::styled("[y]", theme.pending()),
            Span::styled(" confirm    ", theme.text()),
            Span::styled("[n]", theme.pending()),
            Span::styled(" note    ", theme.text()),
            Span::styled("any other key cancels", theme.muted()),
        ]),
    ];
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel("confirm".to_owned(), theme, true)),
        area,
    );
}

fn note(intent: &Intent, theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 72, 5);
    let text = intent.note.as_deref().unwrap_or("");
    let lines = vec![Line::from(vec![
        Span::styled(one_line(text), theme.text()),
        Span::styled("▏", theme.pending()),
    ])];
    let block = panel("note for this action".to_owned(), theme, true)
        .title_bottom(" Enter done · Esc drop the note ");
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}

fn round(model: &Model, number: u32, scroll: u16, theme: &Theme, frame: &mut Frame) {
    let Some(debate) = model.selected_debate() else {
        return;
    };
    let full = frame.area();
    let area = centered(
        frame,
        full.width.saturating_sub(8),
        full.height.saturating_sub(4),
    );
    let row = debate.round(number);
    let mut lines: Vec<Line> = Vec::new();
    for turn in &row.turns {
        let mut head = vec![Span::styled(
            one_line(&turn.agent_persona),
            if turn.superseded {
                theme
                    .danger()
                    .add_modifier(Modifier::CROSSED_OUT | Modifier::BOLD)
            } else {
                theme.title()
            },
        )];
        if turn.superseded {
            head.push(Span::styled("  superseded", theme.danger()));
        }
        if let Some(replaced) = &turn.metadata.replaces {
            head.push(Span::styled(
                format!("  replaces {}", one_line(replaced)),
                theme.warn(),
            ));
        }
        if let Some(aspect) = &turn.metadata.aspect {
            head.push(Span::styled(
                format!("  aspect {}", one_line(aspect)),
                theme.muted(),
            ));
        }
        if let Some(phase) = &turn.metadata.phase {
            head.push(Span::styled(
                format!("  {}", one_line(&phase.to_string())),
                theme.muted(),
            ));
        }
        head.push(Span::styled(
            format!("  {} tokens", thousands(u64::from(turn.tokens_used))),
            theme.muted(),
        ));
        for judgment in row
            .judgments
            .iter()
            .filter(|j| j.agent_persona == turn.agent_persona)
        {
            head.push(Span::styled(
                format!(
                    "  judge {} {}",
                    figure(judgment.score),
                    one_line(&judgment.decision.to_string())
                ),
                ruling_style(theme, &judgment.decision),
            ));
        }
        lines.push(Line::from(head));
        let judged = row
            .judgments
            .iter()
            .filter(|j| j.agent_persona == turn.agent_persona);
        for issue in turn.issues.iter().chain(judged.flat_map(|j| &j.issues)) {
            lines.push(Line::styled(
                format!("⚠ {}", one_line(issue)),
                theme.danger(),
            ));
        }
        if let Some(warning) = &turn.metadata.judge_warning {
            lines.push(Line::styled(
                format!("⚠ {}", one_line(warning)),
                theme.warn(),
            ));
        }
        for judgment in row
            .judgments
            .iter()
            .filter(|j| j.agent_persona == turn.agent_persona)
        {
            if !judgment.reasons.is_empty() {
                let reasons: Vec<String> = judgment.reasons.iter().map(|r| one_line(r)).collect();
                lines.push(Line::styled(
                    format!("judge: {}", reasons.join(" · ")),
                    theme.muted(),
                ));
            }
        }
        let content: String = turn.content.chars().take(MAX_TURN_CHARS).collect();
        let style = if turn.superseded {
            theme.muted()
        } else {
            theme.text()
        };
        lines.extend(
            content
                .lines()
                .map(|l| Line::styled(inert(&l.replace('\t', "    ")), style)),
        );
        let total = turn.content.chars().count();
        if total > MAX_TURN_CHARS {
            lines.push(Line::styled(
                format!(
                    "… {} more characters not shown",
                    thousands((total - MAX_TURN_CHARS) as u64)
                ),
                theme.warn(),
            ));
        }
        lines.push(Line::raw(""));
    }
    let title = format!("{} · round {number}", one_line(&debate.session.id));
    let block = panel(title, theme, true).title_bottom(" ↑↓ PgUp PgDn scroll · Esc close ");
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        area,
    );
}
