//! The transcript view: every turn with its persona and round, superseded turns struck through
//! next to the turn that replaced them, the judge's warnings inline, long content wrapped and
//! cut at a limit that says how much was left out.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::common::{figure, inert, one_line, ruling_style, thousands};
use super::document::{Document, Section};
use crate::config::theme::Theme;
use crate::console::app::Model;
use crate::domain::{Debate, JudgeDecision, Judgment, Reported, RoundRow, Turn};

/// Content beyond this many characters per turn is cut, with a note saying how much.
const MAX_TURN_CHARS: usize = 20_000;

/// The transcript of `debate` from the selected round on.
pub(crate) fn document(model: &Model, debate: &Debate) -> Document<'static> {
    let theme = &model.settings.theme;
    // Only the rounds shown are built: a turn's text is the costly part of a frame.
    let from = model.selected_round().unwrap_or(1);
    let sections = debate
        .rounds_in(from..=u32::MAX)
        .iter()
        .map(|row| {
            let mut lines = vec![Line::styled(
                format!("── round {} ──", row.number),
                theme.title(),
            )];
            for turn in &row.turns {
                turn_lines(theme, row, turn, &mut lines);
            }
            Section {
                round: row.number,
                lines,
            }
        })
        .collect();
    Document {
        title: format!("transcript · {}", one_line(&debate.session.id)),
        head: Vec::new(),
        sections,
    }
}

/// A turn as the transcript shows it: its head, its warnings, its text, then a blank line.
fn turn_lines(theme: &Theme, row: &RoundRow, turn: &Turn, lines: &mut Vec<Line<'static>>) {
    let judged: Vec<&Judgment> = row
        .judgments
        .iter()
        .copied()
        .filter(|j| j.agent_persona == turn.agent_persona)
        .collect();
    lines.push(turn_head(theme, row, turn, &judged));
    for issue in turn
        .issues
        .iter()
        .chain(judged.iter().flat_map(|j| &j.issues))
    {
        lines.push(Line::styled(
            format!("⚠ {}", one_line(issue)),
            theme.danger(),
        ));
    }
    if let Some(warning) = &turn.metadata.judge_warning {
        lines.push(Line::styled(
            format!("⚠ warned before speaking: {}", one_line(warning)),
            theme.warn(),
        ));
    }
    for judgment in judged
        .iter()
        .filter(|j| j.decision != Reported::Known(JudgeDecision::Continue))
        .filter(|j| !j.reasons.is_empty())
    {
        let reasons: Vec<String> = judgment.reasons.iter().map(|r| one_line(r)).collect();
        lines.push(Line::styled(
            format!("⚠ judge {}: {}", judgment.decision, reasons.join(" · ")),
            ruling_style(theme, &judgment.decision),
        ));
    }
    turn_text(theme, turn, lines);
    lines.push(Line::raw(""));
}

/// A turn's head: round, persona (struck through when superseded), what it replaced or was
/// replaced by, phase, aspect, tokens and the judge's rulings.
fn turn_head(theme: &Theme, row: &RoundRow, turn: &Turn, judged: &[&Judgment]) -> Line<'static> {
    let mut head = vec![Span::styled(format!("r{} ", row.number), theme.muted())];
    head.push(Span::styled(
        one_line(&turn.agent_persona),
        if turn.superseded {
            theme
                .danger()
                .add_modifier(Modifier::CROSSED_OUT | Modifier::BOLD)
        } else {
            theme.accent().add_modifier(Modifier::BOLD)
        },
    ));
    if turn.superseded {
        let replacement = row
            .turns
            .iter()
            .find(|t| t.metadata.replaces.as_deref() == Some(&turn.agent_persona));
        head.push(Span::styled(
            match replacement {
                Some(r) => format!("  superseded, replaced by {}", one_line(&r.agent_persona)),
                None => "  superseded".to_owned(),
            },
            theme.danger(),
        ));
    }
    if let Some(replaced) = &turn.metadata.replaces {
        head.push(Span::styled(
            format!("  replaces {}", one_line(replaced)),
            theme.warn(),
        ));
    }
    if let Some(phase) = &turn.metadata.phase {
        head.push(Span::styled(
            format!("  {}", one_line(&phase.to_string())),
            theme.muted(),
        ));
    }
    if let Some(aspect) = &turn.metadata.aspect {
        head.push(Span::styled(
            format!("  aspect {}", one_line(aspect)),
            theme.muted(),
        ));
    }
    head.push(Span::styled(
        format!("  {} tokens", thousands(u64::from(turn.tokens_used))),
        theme.muted(),
    ));
    for judgment in judged {
        head.push(Span::styled(
            format!(
                "  judge {} {}",
                figure(judgment.score),
                one_line(&judgment.decision.to_string())
            ),
            ruling_style(theme, &judgment.decision),
        ));
    }
    Line::from(head)
}

/// A turn's text, inert, tabs expanded, cut at [`MAX_TURN_CHARS`] with a note of how much
/// was left out.
fn turn_text(theme: &Theme, turn: &Turn, lines: &mut Vec<Line<'static>>) {
    let content: String = turn.content.chars().take(MAX_TURN_CHARS).collect();
    let style = if turn.superseded {
        theme.muted().add_modifier(Modifier::CROSSED_OUT)
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
}
