//! The format view: what a debate's format adds. For a panel: the selected round's parallel
//! takes side by side as cards, the aspects with their rounds, the clashes between personas
//! whose verdicts differ, the crux cards with their disagreement type, and each persona's
//! position shift from opening to closing. For an extended debate: its complexity score, agent
//! count and cost against its budget. Every debate shows its tokens against its budget.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use super::common::{inert, one_line, panel, thousands};
use crate::config::theme::Theme;
use crate::console::app::Model;
use crate::console::app::TextRows;
use crate::domain::{Debate, Disagreement, Reported, RoundRow, Turn};
use crate::signals::verdict;

/// Rows of the takes' cards at most.
const CARD_HEIGHT: u16 = 9;

/// Columns of a take's card at least: a round with more takes than fit shows those that do, the
/// last one saying how many more there are (a writer decides how many rows a round has).
const CARD_MIN_WIDTH: u16 = 16;

pub(super) fn render(model: &Model, frame: &mut Frame, area: Rect, focused: bool) {
    let theme = &model.settings.theme;
    let Some(debate) = model.selected_debate() else {
        frame.render_widget(panel("format".to_owned(), theme, focused), area);
        return;
    };
    let block = panel(
        format!("format · {}", one_line(&debate.session.id)),
        theme,
        focused,
    )
    .title_bottom(" ↑↓ scroll · takes of the selected round (1 rounds view to pick) ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let round = model.selected_round().map(|n| debate.round(n));
    let takes: Vec<&Turn> = round
        .as_ref()
        .map(|r| r.turns.iter().copied().filter(|t| !t.superseded).collect())
        .unwrap_or_default();
    let (cards, text) = split(inner, takes.len());
    if let (Some(cards), Some(round)) = (cards, &round) {
        render_cards(round, &takes, theme, frame, cards);
    }
    let paragraph = Paragraph::new(lines(debate, theme)).wrap(Wrap { trim: false });
    let last = paragraph.line_count(text.width).saturating_sub(1);
    let scroll = (model.nav.detail_scroll.max(0) as usize).min(last);
    frame.render_widget(
        paragraph.scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        text,
    );
}

/// Rows the text under the cards takes, and the rows it is shown in, for scrolling.
pub(crate) fn extent(model: &Model, area: Rect) -> TextRows {
    let Some(debate) = model.selected_debate() else {
        return TextRows::default();
    };
    let inner = panel(String::new(), &model.settings.theme, false).inner(area);
    let takes = model.selected_round().map_or(0, |n| {
        debate
            .round(n)
            .turns
            .iter()
            .filter(|t| !t.superseded)
            .count()
    });
    let (_, text) = split(inner, takes);
    TextRows {
        total: Paragraph::new(lines(debate, &model.settings.theme))
            .wrap(Wrap { trim: false })
            .line_count(text.width),
        shown: usize::from(text.height),
    }
}

/// The cards' area (when a round has parallel takes) and the text's.
fn split(inner: Rect, takes: usize) -> (Option<Rect>, Rect) {
    if takes < 2 {
        return (None, inner);
    }
    let height = CARD_HEIGHT.min(inner.height / 2);
    let [cards, text] =
        Layout::vertical([Constraint::Length(height), Constraint::Fill(1)]).areas(inner);
    (Some(cards), text)
}

fn render_cards(
    round: &RoundRow<'_>,
    takes: &[&Turn],
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let fit = usize::from((area.width / CARD_MIN_WIDTH).max(1));
    let shown = takes.len().min(fit);
    let slots = Layout::horizontal(vec![Constraint::Fill(1); shown]).split(area);
    for (i, (turn, slot)) in takes.iter().zip(slots.iter()).enumerate() {
        let more = match takes.len() - shown {
            hidden if hidden > 0 && i + 1 == shown => format!(" +{hidden} more ·"),
            _ => String::new(),
        };
        let aspect = turn
            .metadata
            .aspect
            .as_deref()
            .map(|a| format!(" · {}", one_line(a)))
            .unwrap_or_default();
        let card = Block::bordered()
            .border_type(BorderType::Plain)
            .border_style(theme.border(false))
            .title(format!(
                "{more} r{} {}{aspect} ",
                round.number,
                one_line(&turn.agent_persona)
            ))
            .title_style(theme.accent());
        let stance = verdict(&turn.content).unwrap_or_else(|| "no verdict".to_owned());
        let mut lines = vec![Line::styled(
            one_line(&stance),
            theme.text().add_modifier(Modifier::BOLD),
        )];
        lines.extend(
            turn.content
                .lines()
                .filter(|l| !l.trim().is_empty() && verdict(l).is_none())
                .map(|l| Line::styled(inert(l), theme.muted())),
        );
        frame.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: true }).block(card),
            *slot,
        );
    }
}

fn heading(text: &str, theme: &Theme) -> Line<'static> {
    Line::styled(text.to_owned(), theme.title())
}

/// Everything under the cards.
fn lines(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let session = &debate.session;
    let meta = &session.metadata;
    let format = meta.format.as_deref().unwrap_or(&session.debate_type);
    let mut lines = vec![Line::from(vec![
        Span::styled("format ", theme.muted()),
        Span::styled(one_line(format), theme.text()),
        Span::styled(
            format!(" · {} personas on the roster · ", session.personas.len()),
            theme.muted(),
        ),
        Span::styled(
            format!(
                "{} of {} tokens",
                thousands(session.tokens_used),
                thousands(session.token_budget)
            ),
            theme.text(),
        ),
        Span::styled(
            format!(" ({:.0}%)", session.budget_spent() * 100.0),
            share_style(session.budget_spent(), theme),
        ),
    ])];
    lines.extend(extended(debate, theme));
    lines.push(Line::raw(""));
    lines.extend(aspects(debate, theme));
    lines.push(Line::raw(""));
    lines.extend(clashes(debate, theme));
    lines.push(Line::raw(""));
    lines.extend(cruxes(debate, theme));
    lines.push(Line::raw(""));
    lines.extend(shifts(debate, theme));
    lines
}

fn share_style(share: f64, theme: &Theme) -> ratatui::style::Style {
    if share >= 1.0 {
        theme.danger()
    } else if share >= 0.8 {
        theme.warn()
    } else {
        theme.ok()
    }
}

/// Complexity, agent count and cost against budget, for debates that record them.
fn extended(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let meta = &debate.session.metadata;
    if meta.complexity.is_none()
        && meta.agent_count.is_none()
        && meta.cost_usd.is_none()
        && meta.budget_usd.is_none()
    {
        return Vec::new();
    }
    let mut spans = vec![Span::styled("complexity ", theme.muted())];
    spans.push(Span::styled(
        meta.complexity
            .map_or("—".to_owned(), |c| format!("{c:.2}")),
        theme.text(),
    ));
    spans.push(Span::styled(" · agents ", theme.muted()));
    spans.push(match meta.agent_count {
        Some(n @ (3 | 5)) => Span::styled(n.to_string(), theme.text()),
        Some(n) => Span::styled(format!("{n} (expected 3 or 5)"), theme.danger()),
        None => Span::styled("—", theme.muted()),
    });
    spans.push(Span::styled(" · cost ", theme.muted()));
    match (meta.cost_usd, meta.budget_usd) {
        (Some(cost), Some(budget)) if budget > 0.0 => {
            let share = cost / budget;
            let filled = ((share.clamp(0.0, 1.0)) * 20.0).round() as usize;
            spans.push(Span::styled(
                format!("${cost:.2} of ${budget:.2} ({:.0}%) ", share * 100.0),
                share_style(share, theme),
            ));
            spans.push(Span::styled("█".repeat(filled), share_style(share, theme)));
            spans.push(Span::styled("░".repeat(20 - filled), theme.muted()));
        }
        (Some(cost), _) => spans.push(Span::styled(
            format!("${cost:.2} (no budget recorded)"),
            theme.text(),
        )),
        (None, Some(budget)) => spans.push(Span::styled(
            format!("not recorded, budget ${budget:.2}"),
            theme.muted(),
        )),
        (None, None) => spans.push(Span::styled("—", theme.muted())),
    }
    vec![Line::from(spans)]
}

/// Each aspect with the rounds that took it up, then the opening and closing rounds.
fn aspects(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let mut names: Vec<String> = debate.session.metadata.aspects.clone();
    for turn in &debate.turns {
        if let Some(aspect) = &turn.metadata.aspect
            && !names.contains(aspect)
        {
            names.push(aspect.clone());
        }
    }
    let mut lines = vec![heading("aspects", theme)];
    if names.is_empty() {
        lines.push(Line::styled(
            "  none recorded: not a panel debate",
            theme.muted(),
        ));
    }
    let rounds_where = |matches: &dyn Fn(&Turn) -> bool| -> Vec<u32> {
        let mut rounds: Vec<u32> = debate
            .turns
            .iter()
            .filter(|t| matches(t))
            .map(|t| t.round_number)
            .collect();
        rounds.dedup();
        rounds
    };
    let listed = |rounds: &[u32]| match rounds {
        [] => "not taken up yet".to_owned(),
        [one] => format!("round {one}"),
        many => format!(
            "rounds {}",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    for name in &names {
        let rounds = rounds_where(&|t: &Turn| t.metadata.aspect.as_ref() == Some(name));
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<20}", one_line(name)), theme.accent()),
            Span::styled(listed(&rounds), theme.text()),
        ]));
    }
    for phase in ["opening", "closing"] {
        let rounds = rounds_where(&|t: &Turn| {
            t.metadata.phase.as_ref().map(|p| p.to_string()).as_deref() == Some(phase)
        });
        if !rounds.is_empty() {
            lines.push(Line::from(vec![
                Span::styled(format!("  {phase:<20}"), theme.muted()),
                Span::styled(listed(&rounds), theme.text()),
            ]));
        }
    }
    lines
}

/// The verdict each persona states in a round, in speaking order.
fn stances<'a>(round: &RoundRow<'a>) -> Vec<(&'a str, String)> {
    round
        .turns
        .iter()
        .filter(|t| !t.superseded)
        .filter_map(|t| Some((t.agent_persona.as_str(), verdict(&t.content)?)))
        .collect()
}

/// Rounds where personas stated different verdicts: who stands where.
fn clashes(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![heading("clashes", theme)];
    for round in debate.rounds() {
        let stances = stances(&round);
        let mut camps: Vec<(String, Vec<&str>)> = Vec::new();
        for (persona, stance) in stances {
            match camps.iter_mut().find(|(s, _)| *s == stance) {
                Some((_, personas)) => personas.push(persona),
                None => camps.push((stance, vec![persona])),
            }
        }
        if camps.len() < 2 {
            continue;
        }
        let mut spans = vec![Span::styled(
            format!("  r{:<3}", round.number),
            theme.muted(),
        )];
        for (i, (stance, personas)) in camps.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled("  ✕  ", theme.danger()));
            }
            spans.push(Span::styled(
                format!("{}: ", one_line(stance)),
                theme.warn(),
            ));
            let names: Vec<String> = personas.iter().map(|p| one_line(p)).collect();
            spans.push(Span::styled(names.join(", "), theme.text()));
        }
        lines.push(Line::from(spans));
    }
    if lines.len() == 1 {
        lines.push(Line::styled(
            "  none: every round's stated verdicts agree",
            theme.muted(),
        ));
    }
    lines
}

/// The cruxes turns named, each as a card with its disagreement type.
fn cruxes(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![heading("cruxes", theme)];
    for turn in debate.turns.iter().filter(|t| !t.superseded) {
        for crux in &turn.metadata.cruxes {
            let style = match crux.kind {
                Reported::Known(Disagreement::Empirical) => theme.accent(),
                Reported::Known(Disagreement::Values) => theme.warn(),
                Reported::Known(Disagreement::Definition) => theme.ok(),
                Reported::Unknown(_) => theme.danger(),
            };
            let kind = match &crux.kind {
                Reported::Known(kind) => kind.to_string(),
                Reported::Unknown(raw) => format!("unknown type {:?}", one_line(raw)),
            };
            lines.push(Line::from(vec![
                Span::styled("  ┃ ", style),
                Span::styled(
                    format!(" {kind} "),
                    style.add_modifier(Modifier::REVERSED | Modifier::BOLD),
                ),
                Span::styled(format!("  {}", one_line(&crux.claim)), theme.text()),
            ]));
            let between: Vec<String> = crux.between.iter().map(|p| one_line(p)).collect();
            lines.push(Line::from(vec![
                Span::styled("  ┃ ", style),
                Span::styled(
                    format!(
                        "between {} · named by {} in round {}",
                        if between.is_empty() {
                            "—".to_owned()
                        } else {
                            between.join(" and ")
                        },
                        one_line(&turn.agent_persona),
                        turn.round_number
                    ),
                    theme.muted(),
                ),
            ]));
        }
    }
    if lines.len() == 1 {
        lines.push(Line::styled("  none named", theme.muted()));
    }
    lines
}

/// Each persona's first stated verdict against its latest.
fn shifts(debate: &Debate, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![heading("position shift, opening → closing", theme)];
    let mut positions: Vec<(&str, String, String)> = Vec::new();
    for round in debate.rounds() {
        for (persona, stance) in stances(&round) {
            match positions.iter_mut().find(|(p, _, _)| *p == persona) {
                Some((_, _, latest)) => *latest = stance,
                None => positions.push((persona, stance.clone(), stance)),
            }
        }
    }
    for (persona, opening, closing) in &positions {
        let (mark, style) = if opening == closing {
            ("held", theme.muted())
        } else {
            ("shifted", theme.warn())
        };
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<22}", one_line(persona)), theme.accent()),
            Span::styled(one_line(opening), theme.text()),
            Span::styled(" → ", theme.muted()),
            Span::styled(one_line(closing), theme.text()),
            Span::styled(format!("  {mark}"), style),
        ]));
    }
    if positions.is_empty() {
        lines.push(Line::styled("  no verdicts stated yet", theme.muted()));
    }
    lines
}
