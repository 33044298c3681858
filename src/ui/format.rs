//! Text and styles shared by the panels: inert rendering of untrusted text, figures, and the
//! colour of each decision.

pub use crate::text::{inert, one_line, thousands};

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType};

use crate::domain::{Decision, JudgeDecision, Reported};
use crate::theme::Theme;

/// The whole screen under the header line, for the full-screen windows.
pub fn below_header(full: Rect) -> Rect {
    Rect {
        y: full.y + 1,
        height: full.height.saturating_sub(1),
        ..full
    }
}

/// A bordered panel with a title.
pub fn panel<'a>(title: String, theme: &Theme, focused: bool) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(format!(" {title} "))
        .title_style(theme.title())
}

/// A report window's title, saying while its figures are being refreshed.
pub fn title(name: &str, refreshing: bool) -> String {
    if refreshing {
        format!("{name} · refreshing…")
    } else {
        name.to_owned()
    }
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
