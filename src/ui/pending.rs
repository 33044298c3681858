//! The pending decision of the selected debate: what the controller decided, the signals and
//! reasons behind it, what the mode means for it, and the actions. Without one, how the latest
//! decision stands.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::format::{decision_style, figure, one_line, panel};
use crate::app::{Action, Model};
use crate::domain::Debate;
use crate::domain::{ControllerDecision, ControllerMode, Reported, Signals};
use crate::theme::Theme;

pub fn render(
    model: &Model,
    debate: Option<&Debate>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let Some(debate) = debate else {
        frame.render_widget(panel("decision".to_owned(), theme, false), area);
        return;
    };
    let (title, lines) = match (debate.pending(), debate.latest_decision()) {
        (Some(pending), _) => (
            "pending decision".to_owned(),
            pending_lines(model, debate, pending, theme),
        ),
        (None, Some(latest)) => (
            "latest decision".to_owned(),
            settled_lines(debate, latest, theme),
        ),
        (None, None) => (
            "decision".to_owned(),
            vec![Line::styled(
                format!(
                    "no controller decision yet · {} · {}",
                    debate.session.status, debate.session.controller_mode
                ),
                theme.muted(),
            )],
        ),
    };
    let mut lines = lines;
    // The shown decision's own problems first, then the rest of the debate's.
    let own: Vec<&str> = debate
        .pending()
        .or(debate.latest_decision())
        .map(|d| d.issues.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let issues: Vec<&str> = own
        .iter()
        .copied()
        .chain(debate.issues().filter(|i| !own.contains(i)))
        .collect();
    if let Some(first) = issues.first() {
        let more = match issues.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        lines.insert(
            1,
            Line::styled(format!("⚠ {}{more}", one_line(first)), theme.danger()),
        );
    }
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(panel(title, theme, false));
    frame.render_widget(paragraph, area);
}

fn headline<'a>(decision: &ControllerDecision, theme: &Theme) -> Vec<Span<'a>> {
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
    spans
}

fn pending_lines<'a>(
    model: &Model,
    debate: &Debate,
    decision: &ControllerDecision,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let mode = match &debate.session.controller_mode {
        Reported::Known(ControllerMode::Gated) => {
            "gated: the orchestrator waits for you; on timeout the controller's decision stands".to_owned()
        }
        Reported::Known(ControllerMode::Shadow) => {
            "shadow: counterfactual, the fixed loop goes on; accept labels agreement, override/escalate apply next round".to_owned()
        }
        Reported::Known(ControllerMode::Enabled) => {
            "enabled: applied at once; an override or escalation applies at the next round".to_owned()
        }
        Reported::Known(ControllerMode::Off) => "off: the orchestrator ignores decisions".to_owned(),
        Reported::Unknown(raw) => format!(
            "unknown mode {:?}: how the orchestrator treats decisions is not known",
            one_line(raw)
        ),
    };
    let mut head = headline(decision, theme);
    head.push(Span::styled(format!("  ·  {mode}"), theme.muted()));
    let mut lines = vec![Line::from(head), signal_line(&decision.signals, theme)];
    lines.push(reason_line(&decision.signals, theme));
    let key =
        |action: Action| Span::styled(format!("[{}]", model.keymap.keys(action)), theme.pending());
    lines.push(if let Some(why) = &model.denied {
        Line::styled(format!("read-only: {}", one_line(why)), theme.warn())
    } else if model.read_only {
        Line::from(vec![
            Span::styled("read-only: ", theme.warn()),
            key(Action::Unlock),
            Span::styled(" unlocks actions (asks to confirm)", theme.text()),
        ])
    } else {
        Line::from(vec![
            key(Action::Accept),
            Span::styled(" accept   ", theme.text()),
            key(Action::Override),
            Span::styled(" override   ", theme.text()),
            key(Action::Escalate),
            Span::styled(" force escalation   ", theme.text()),
            Span::styled("each confirmed with y", theme.muted()),
        ])
    });
    lines
}

fn settled_lines<'a>(
    debate: &Debate,
    decision: &ControllerDecision,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let session = &debate.session;
    let mut head = headline(decision, theme);
    let standing = match debate.actions.get(&decision.round_index) {
        Some(action) => format!(
            "  ·  {} by {}: {}",
            action.action,
            one_line(&action.who()),
            action.decision
        ),
        None => "  ·  not resolved by an operator".to_owned(),
    };
    head.push(Span::styled(standing, theme.accent()));
    let status = match session.num_rounds {
        Some(n) => format!("debate {} after {n} rounds", session.status),
        None => format!("debate {}", session.status),
    };
    let mut lines = vec![
        Line::from(head),
        Line::styled(status, theme.muted()),
        signal_line(&decision.signals, theme),
    ];
    lines.push(reason_line(&decision.signals, theme));
    lines
}

/// The three convergence signals against their thresholds, then disputes and tokens.
fn signal_line<'a>(s: &Signals, theme: &Theme) -> Line<'a> {
    let check = |ok: Option<bool>| match ok {
        Some(true) => Span::styled(" ✓", theme.ok()),
        Some(false) => Span::styled(" ✗", theme.danger()),
        None => Span::styled(" ?", theme.muted()),
    };
    let similar = s
        .similarity
        .zip(s.similarity_threshold)
        .map(|(v, t)| v >= t);
    let settled = s.new_claims.zip(s.novelty_threshold).map(|(n, t)| n < t);
    let verdict = match (s.verdict_split, &s.verdict) {
        (Some(true), Some(v)) => format!("split {}", one_line(v)),
        (_, Some(v)) => one_line(v),
        (_, None) => "none".to_owned(),
    };
    let tokens = match (s.tokens_used, s.token_budget) {
        (Some(used), Some(budget)) if budget > 0 => {
            format!("{:.0}%", used as f64 / budget as f64 * 100.0)
        }
        _ => "—".to_owned(),
    };
    Line::from(vec![
        Span::styled("similarity ", theme.muted()),
        Span::styled(
            format!(
                "{} / {}",
                figure(s.similarity),
                figure(s.similarity_threshold)
            ),
            theme.text(),
        ),
        check(similar),
        Span::styled("   verdict ", theme.muted()),
        Span::styled(verdict, theme.text()),
        check(s.verdict_stable),
        Span::styled("   new claims ", theme.muted()),
        Span::styled(
            format!(
                "{} / <{}",
                s.new_claims.map_or("—".to_owned(), |n| n.to_string()),
                s.novelty_threshold
                    .map_or("—".to_owned(), |n| n.to_string())
            ),
            theme.text(),
        ),
        check(settled),
        Span::styled("   open disputes ", theme.muted()),
        Span::styled(
            s.open_disputes.map_or("—".to_owned(), |n| n.to_string()),
            theme.text(),
        ),
        Span::styled("   tokens ", theme.muted()),
        Span::styled(tokens, theme.text()),
    ])
}

/// The reasons, on one wrapped line.
fn reason_line<'a>(s: &Signals, theme: &Theme) -> Line<'a> {
    let reasons: Vec<String> = s.reasons.iter().map(|r| one_line(r)).collect();
    Line::from(vec![
        Span::styled("why: ", theme.muted()),
        Span::styled(reasons.join(" · "), theme.text()),
    ])
}
