//! Text and styles shared by the panels: inert rendering of untrusted text, figures, and the
//! colour of each decision.

use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType};

use crate::domain::{Decision, JudgeDecision, Reported};
use crate::theme::Theme;

/// `text` with every control character made visible and harmless: C0 controls become their
/// Unicode control pictures (ESC shows as ␛), DEL as ␡, C1 controls and bidirectional
/// overrides as �. Nothing in the result can move the cursor or restyle the terminal.
pub fn inert(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('�'),
            '\u{7f}' => '␡',
            '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => '�',
            other => other,
        })
        .collect()
}

/// `text` on one line: runs of whitespace (newlines included) become one space, then
/// [`inert`].
pub fn one_line(text: &str) -> String {
    inert(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `n` with thousands separators: 41200 -> "41,200".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A bordered panel with a title.
pub fn panel<'a>(title: String, theme: &Theme, focused: bool) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(format!(" {title} "))
        .title_style(theme.title())
}

pub fn decision_style(theme: &Theme, decision: &Reported<Decision>) -> Style {
    match decision {
        Reported::Known(Decision::StopConverged) => theme.ok(),
        Reported::Known(Decision::ContinueBaseline) => theme.text(),
        Reported::Known(Decision::EscalateNewPersona) => theme.warn(),
        Reported::Known(Decision::StopMaxRounds) => theme.accent(),
        Reported::Known(Decision::StopSafety) | Reported::Unknown(_) => {
            theme.danger().add_modifier(Modifier::BOLD)
        }
    }
}

pub fn ruling_style(theme: &Theme, ruling: &Reported<JudgeDecision>) -> Style {
    match ruling {
        Reported::Known(JudgeDecision::Continue) => theme.ok(),
        Reported::Known(JudgeDecision::Warn) => theme.warn(),
        Reported::Known(JudgeDecision::HaltReplace) => theme.danger(),
        Reported::Known(JudgeDecision::Abort) | Reported::Unknown(_) => {
            theme.danger().add_modifier(Modifier::BOLD)
        }
    }
}

/// A figure that may be missing or not a number, as shown in a cell.
pub fn figure(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.2}"),
        Some(v) => format!("{v}"),
        None => "—".to_owned(),
    }
}
