//! The judge view: per turn, the judge's ruling, score, reasons and model, and each cited PMID
//! with whether it was verified; turns the judge has not ruled on are said to be so.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::common::{figure, one_line, ruling_style};
use super::document::{Document, Section};
use crate::config::theme::Theme;
use crate::console::app::Model;
use crate::domain::{Debate, Judgment, RoundRow};

/// The judge view of `debate`: every ruling from the selected round on, by persona, under a
/// count of rulings and of PMIDs not verified.
pub(crate) fn document(model: &Model, debate: &Debate) -> Document<'static> {
    let theme = &model.settings.theme;
    let unverified = debate
        .judgments
        .iter()
        .flat_map(|j| &j.pmids)
        .filter(|p| !p.verified)
        .count();
    let cited: usize = debate.judgments.iter().map(|j| j.pmids.len()).sum();
    let head = vec![Line::styled(
        format!(
            "{} rulings on {} turns · {cited} PMIDs cited, {unverified} not verified",
            debate.judgments.len(),
            debate.turns.len()
        ),
        if unverified > 0 {
            theme.warn()
        } else {
            theme.muted()
        },
    )];
    // Only the rounds shown are built (the view starts at the selected round).
    let from = model.selected_round().unwrap_or(1);
    let sections = debate
        .rounds_in(from..=u32::MAX)
        .iter()
        .map(|row| {
            let mut lines = vec![Line::styled(
                format!("── round {} ──", row.number),
                theme.title(),
            )];
            let mut personas: Vec<&str> = Vec::new();
            let spoken = row.turns.iter().map(|t| t.agent_persona.as_str());
            for persona in spoken.chain(row.judgments.iter().map(|j| j.agent_persona.as_str())) {
                if !personas.contains(&persona) {
                    personas.push(persona);
                }
            }
            for persona in personas {
                persona_lines(theme, row, persona, &mut lines);
            }
            lines.push(Line::raw(""));
            Section {
                round: row.number,
                lines,
            }
        })
        .collect();
    Document {
        title: format!("judge · {}", one_line(&debate.session.id)),
        head,
        sections,
    }
}

/// What the judge ruled on `persona`'s turns of `row` (or that it did not rule).
fn persona_lines(theme: &Theme, row: &RoundRow, persona: &str, lines: &mut Vec<Line<'static>>) {
    let name = Span::styled(
        format!("{:<22}", one_line(persona)),
        theme.accent().add_modifier(Modifier::BOLD),
    );
    let mut judged = row
        .judgments
        .iter()
        .filter(|j| j.agent_persona == persona)
        .peekable();
    if judged.peek().is_none() {
        lines.push(Line::from(vec![
            name.clone(),
            Span::styled("not judged", theme.muted()),
        ]));
    }
    for judgment in judged {
        ruling_lines(theme, name.clone(), judgment, lines);
    }
}

/// One ruling: decision, score and model, then its reasons, the PMIDs it checked and what
/// could not be read of it.
fn ruling_lines(
    theme: &Theme,
    name: Span<'static>,
    judgment: &Judgment,
    lines: &mut Vec<Line<'static>>,
) {
    lines.push(Line::from(vec![
        name,
        Span::styled(
            format!("{:<13}", one_line(&judgment.decision.to_string())),
            ruling_style(theme, &judgment.decision),
        ),
        Span::styled("score ", theme.muted()),
        Span::styled(format!("{:<6}", figure(judgment.score)), theme.text()),
        Span::styled("model ", theme.muted()),
        Span::styled(
            judgment
                .judge_model
                .as_deref()
                .map_or("—".to_owned(), one_line),
            theme.text(),
        ),
    ]));
    if !judgment.reasons.is_empty() {
        let reasons: Vec<String> = judgment.reasons.iter().map(|r| one_line(r)).collect();
        lines.push(Line::from(vec![
            Span::styled("    reasons: ", theme.muted()),
            Span::styled(reasons.join(" · "), theme.text()),
        ]));
    }
    if !judgment.pmids.is_empty() {
        let mut spans = vec![Span::styled("    PMIDs: ", theme.muted())];
        for check in &judgment.pmids {
            let (mark, style) = if check.verified {
                ("✓ verified", theme.ok())
            } else {
                ("✗ not verified", theme.danger())
            };
            spans.push(Span::styled(
                format!("{} ", one_line(&check.pmid)),
                theme.text(),
            ));
            spans.push(Span::styled(format!("{mark}   "), style));
        }
        lines.push(Line::from(spans));
    }
    for issue in &judgment.issues {
        lines.push(Line::styled(
            format!("    ⚠ {}", one_line(issue)),
            theme.danger(),
        ));
    }
}
