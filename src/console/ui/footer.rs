//! The footer: the filter, `:` and note prompts while they are open (scrolled sideways so that the
//! cursor stays in view, the terminal's cursor where the text's is, the `:` line's completions
//! on the row above), else the last message, else the key hints — made from the keymap in force
//! and dropped least important first when the width runs out, never cut.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::common::{inert, one_line};
use super::sketch::Sketch;
use crate::config::keys::Keymap;
use crate::config::theme::Theme;
use crate::console::app::prompt::Prompt;
use crate::console::app::{Action, Model, Overlay};
use crate::console::kept::Kept;

/// The longest filter and `:` line (as `update` keeps them).
const MAX_LINE: usize = crate::console::app::MAX_LINE;

/// Draws the footer; a message or the hints are a region kept in `kept`.
pub(super) fn render(
    model: &Model,
    theme: &Theme,
    frame: &mut Frame,
    kept: &mut Kept,
    area: Rect,
) -> Option<Position> {
    let line = match (&model.desk.overlay, &model.desk.flash) {
        (Some(Overlay::Filter), _) => {
            let prompt = synced(&model.desk.prompt, model.filter(), MAX_LINE);
            let hints = [
                "  words all match · id: q: persona: status: mode: is:pending · ! negates · Enter keep · Esc clear",
                "  id: q: persona: mode: is:pending !not · Enter keep · Esc clear",
                "  Enter keep · Esc clear",
            ];
            return line_prompt(&prompt, " filter /", &hints, theme, frame, area);
        }
        (Some(Overlay::Command), _) => {
            let hints = [
                "  Tab complete · ↑↓ earlier · Enter run · Esc cancel",
                "  Tab complete · Esc cancel",
            ];
            let cursor = line_prompt(&model.desk.prompt, " :", &hints, theme, frame, area);
            completions(model, theme, frame, area);
            return cursor;
        }
        (Some(Overlay::Pin(id)), _) => {
            let label = format!(" note on {}: ", super::common::fit(&one_line(id), 24));
            let hints = [
                "  pinned for every operator, not an action · Enter pin · Esc drop",
                "  Enter pin · Esc drop",
            ];
            return line_prompt(&model.desk.prompt, &label, &hints, theme, frame, area);
        }
        (_, Some(flash)) => {
            let style = if flash.error {
                theme.danger()
            } else {
                theme.ok()
            };
            Line::styled(format!(" {}", one_line(&flash.text)), style)
        }
        (_, None) => {
            // The same hints frame after frame: written down only when what they are made of
            // changes.
            let source = Hints {
                keymap: Arc::clone(&model.settings.keymap),
                simulated: model.about.simulated,
                width: usize::from(area.width),
                style: theme.muted(),
            };
            Sketch::sourced(source, kept, frame.buffer_mut(), area, |hints, sketch| {
                sketch.render_widget(Line::styled(hints.line(), hints.style), area);
            });
            return None;
        }
    };
    Sketch::line(line, kept, frame.buffer_mut(), area);
    None
}

/// `prompt` when it holds `text`, else a prompt holding `text` (the cursor at its end).
pub(super) fn synced(prompt: &Prompt, text: &str, max: usize) -> Prompt {
    if prompt.value() == text {
        prompt.clone()
    } else {
        Prompt::new(text, max)
    }
}

/// A one-line prompt: its label, the text scrolled to keep the cursor in view, the first of
/// `hints` (longest first) that leaves at least 24 columns of text; returns where the terminal's
/// cursor goes.
fn line_prompt(
    prompt: &Prompt,
    label: &str,
    hints: &[&str],
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) -> Option<Position> {
    let label_width = label.width() as u16;
    let rest = area.width.saturating_sub(label_width);
    let hint = hints
        .iter()
        .find(|h| rest >= h.width() as u16 + 24)
        .copied()
        .unwrap_or("");
    let hint_width = hint.width() as u16;
    let text_width = rest - hint_width;
    frame.render_widget(Span::styled(label.to_owned(), theme.pending()), area);
    let text = Rect {
        x: area.x + label_width,
        width: text_width,
        ..area
    };
    let (scroll, column) = prompt.line(text_width);
    frame.render_widget(
        Paragraph::new(inert(prompt.value()))
            .style(theme.text())
            .scroll((0, scroll)),
        text,
    );
    if hint_width > 0 {
        let at = Rect {
            x: text.x + text_width,
            width: hint_width,
            ..area
        };
        frame.render_widget(Span::styled(hint.to_owned(), theme.muted()), at);
    }
    (text_width > 0).then(|| Position::new(text.x + column, area.y))
}

/// The `:` line's completions on the row above the footer: the one put in the line
/// highlighted, those that do not fit counted.
fn completions(model: &Model, theme: &Theme, frame: &mut Frame, footer: Rect) {
    let Some(completion) = &model.desk.completion else {
        return;
    };
    if footer.y == 0 {
        return;
    }
    let row = Rect {
        y: footer.y - 1,
        ..footer
    };
    let width = usize::from(row.width);
    let mut spans = vec![Span::styled(" ", theme.muted())];
    let mut used = 1;
    if completion.candidates.is_empty() {
        spans.push(Span::styled("no completion", theme.warn()));
    }
    let count = completion.candidates.len();
    for (at, candidate) in completion.candidates.iter().enumerate() {
        let shown = one_line(candidate);
        let after = count - at - 1;
        let reserve = if after == 0 {
            0
        } else {
            format!("+{after} more").width()
        };
        if used + shown.width() + 2 + reserve > width {
            spans.push(Span::styled(format!("+{} more", count - at), theme.muted()));
            break;
        }
        used += shown.width() + 2;
        let style = if completion.chosen == Some(at) {
            theme.selection()
        } else {
            theme.accent()
        };
        spans.push(Span::styled(shown, style));
        spans.push(Span::raw("  "));
    }
    if completion.more {
        spans.push(Span::styled("(more ids match: type more)", theme.muted()));
    }
    frame.render_widget(Clear, row);
    frame.render_widget(Line::from(spans).style(theme.text()), row);
}

/// A hint: how important it is (0 first), and its text.
type Hint = (u8, String);

/// What the key hints are made of: the keymap in force, whether the debates are simulated
/// (their speed can be changed), the width they fit in and their style.
#[derive(PartialEq)]
struct Hints {
    keymap: Arc<Keymap>,
    simulated: bool,
    width: usize,
    style: Style,
}

impl Hints {
    /// The key hints that fit in the width, in their usual order, the least important dropped
    /// first.
    fn line(&self) -> String {
        let key = |action| self.keymap.hint(action);
        let views: Vec<String> = [
            Action::ViewRounds,
            Action::ViewTranscript,
            Action::ViewJudge,
            Action::ViewTrace,
            Action::ViewFormat,
        ]
        .into_iter()
        .map(key)
        .collect();
        let views = if views.concat() == "12345" {
            "1-5".to_owned()
        } else {
            views.join("")
        };
        let mut all: Vec<Hint> = vec![
            (0, format!("{}{} move", key(Action::Up), key(Action::Down))),
            (4, format!("{} drill in", key(Action::DrillIn))),
            (6, format!("{} focus", key(Action::SwitchFocus))),
            (5, format!("{views} views")),
            (3, format!("{} filter", key(Action::Filter))),
            (3, format!("{} command", key(Action::ColonLine))),
            (1, format!("{} accept", key(Action::Accept))),
            (1, format!("{} override", key(Action::Override))),
            (1, format!("{} escalate", key(Action::Escalate))),
            (2, format!("{} next waiting", key(Action::NextWaiting))),
            (7, format!("{} copy", key(Action::Copy))),
            (7, format!("{} pager", key(Action::Pager))),
            (5, format!("{} pause", key(Action::Pause))),
        ];
        if self.simulated {
            all.push((
                8,
                format!("{}{} speed", key(Action::Faster), key(Action::Slower)),
            ));
        }
        all.push((2, format!("{} help", key(Action::Help))));
        all.push((2, format!("{} quit", key(Action::Quit))));
        fit(&all, self.width)
    }
}

/// The hints that fit in `width` columns two spaces apart after a leading space, in their
/// order, taken most important first.
fn fit(hints: &[Hint], width: usize) -> String {
    let mut order: Vec<usize> = (0..hints.len()).collect();
    order.sort_by_key(|&i| hints[i].0);
    let mut kept = vec![false; hints.len()];
    let mut used = 1;
    for i in order {
        let w = hints[i].1.width() + if used > 1 { 2 } else { 0 };
        if used + w <= width {
            kept[i] = true;
            used += w;
        }
    }
    let shown: Vec<&str> = hints
        .iter()
        .zip(kept)
        .filter(|(_, kept)| *kept)
        .map(|((_, text), _)| text.as_str())
        .collect();
    format!(" {}", shown.join("  "))
}
