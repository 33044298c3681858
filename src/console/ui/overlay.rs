//! Windows over the console: help, the pick lists for override and escalation, the
//! confirmations of an action and of an unlock, the calibration grid, the shadow week, the
//! settings rollout and a version being written, and the other consoles (`:who`).
//! (The filter and command prompts are drawn in the footer.)

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, List, ListState, Paragraph, Wrap};

use super::common::{centered, fit, fit_line, inert, one_line, panel, time_left};
use super::footer::synced;
use super::{calibration, draft, rollout, shadow};
use crate::config::theme::Theme;
use crate::console::app::command_line;
use crate::console::app::{Action, Chooser, Intent, Model, Overlay};
use crate::text::wrap;

pub(super) fn render(
    model: &Model,
    overlay: &Overlay,
    theme: &Theme,
    frame: &mut Frame,
) -> Option<Position> {
    match overlay {
        Overlay::Help { scroll } => help(model, *scroll, theme, frame),
        Overlay::Choose(chooser) => choose(model, chooser, theme, frame),
        Overlay::Confirm(intent) => confirm(model, intent, theme, frame),
        Overlay::Note(intent) => return note(model, intent, theme, frame),
        Overlay::Unlock => unlock(theme, frame),
        Overlay::Calibration {
            scroll,
            cursor,
            table,
        } => {
            let view = calibration::View {
                scroll: *scroll,
                cursor: *cursor,
                table: *table,
            };
            calibration::render(model, view, theme, frame);
        }
        Overlay::ShadowWeek { scroll } => shadow::render(model, *scroll, theme, frame),
        Overlay::Who { scroll } => who(model, *scroll, theme, frame),
        Overlay::TakeOver(action) => take_over(model, *action, theme, frame),
        Overlay::Rollout {
            scroll,
            debate_type,
            ctx,
        } => {
            let view = rollout::View {
                scroll: *scroll,
                debate_type: debate_type.as_deref(),
                ctx: *ctx,
            };
            rollout::render(model, view, theme, frame);
        }
        Overlay::Draft(d) => return draft::render(model, d, theme, frame),
        Overlay::Filter | Overlay::Command | Overlay::Pin(_) => {}
    }
    None
}

/// The keys, then the `:` line's commands.
fn help(model: &Model, scroll: u16, theme: &Theme, frame: &mut Frame) {
    let mut commands = command_line::usages();
    if model.live.contexts.several() {
        commands.push(command_line::context_usage());
    }
    let area = centered(frame, 92, (Action::ALL.len() + commands.len()) as u16 + 5);
    let mut lines: Vec<Line> = Action::ALL
        .iter()
        .map(|&action| {
            Line::from(vec![
                Span::styled(
                    format!(" {:<16}", model.settings.keymap.keys(action)),
                    theme.pending(),
                ),
                Span::styled(action.describe(), theme.text()),
            ])
        })
        .collect();
    lines.push(Line::styled(
        " remap keys in the config's [keys] table; in a confirmation y confirms, n adds a note",
        theme.muted(),
    ));
    lines.push(Line::styled(
        " the : line's commands (Tab completes, ↑↓ recall):",
        theme.muted(),
    ));
    let width = commands.iter().map(|(usage, _)| usage.len()).max();
    lines.extend(commands.into_iter().map(|(usage, what)| {
        Line::from(vec![
            Span::styled(
                format!(" {usage:<0$}  ", width.unwrap_or_default()),
                theme.pending(),
            ),
            Span::styled(what, theme.text()),
        ])
    }));
    let scrolls = lines.len() as u16 > area.height.saturating_sub(2);
    let block = panel("keys".to_owned(), theme, true).title_bottom(if scrolls {
        " ↑↓ PgUp PgDn scroll · Esc q ? close "
    } else {
        " Esc q ? close "
    });
    draw_scrolled(frame, area, lines, block, scroll);
}

fn choose(model: &Model, chooser: &Chooser, theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 64, chooser.options.len() as u16 + 4);
    let what = match chooser.action {
        crate::domain::ActionKind::Escalate => "bring in which persona",
        _ => "override with which decision",
    };
    let title = format!(
        "{} · round {}: {what}?{}",
        one_line(&chooser.session_id),
        chooser.round_index,
        countdown(model, &chooser.session_id)
    );
    let list = List::new(chooser.options.iter().map(|o| one_line(o)))
        .style(theme.text())
        .highlight_style(theme.selection())
        .highlight_symbol("› ")
        .block(
            panel(
                fit(&title, usize::from(area.width.saturating_sub(4))),
                theme,
                true,
            )
            .title_bottom(" ↑↓ move · Enter choose · Esc cancel "),
        );
    let mut state = ListState::default().with_selected(Some(chooser.cursor));
    frame.render_widget(Clear, area);
    frame.render_stateful_widget(list, area, &mut state);
}

/// The time the decision a dialog acts on has left, for its title: ` · 1:23 left` on a gated
/// decision, nothing on another.
fn countdown(model: &Model, session_id: &str) -> String {
    model
        .seq_of(session_id)
        .and_then(|seq| model.debates.get(seq))
        .and_then(|summary| model.time_left(summary))
        .map_or_else(String::new, |left| format!(" · {}", time_left(left)))
}

/// Lines of a note the confirmation shows; a longer one ends in `…` (the note editor shows it
/// whole).
const NOTE_LINES: usize = 4;

/// The confirmation of an action: what will be recorded, the note, and the keys — which stay
/// on screen however long the note.
fn confirm(model: &Model, intent: &Intent, theme: &Theme, frame: &mut Frame) {
    let width: u16 = 72;
    let inner = usize::from(width.min(frame.area().width).saturating_sub(2));
    let what = match &intent.persona {
        Some(persona) => format!(
            "{} → {} (bring in {})",
            intent.action,
            intent.decision,
            one_line(persona)
        ),
        None => format!("{} → {}", intent.action, intent.decision),
    };
    let mut lines = vec![fit_line(
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
        inner,
    )];
    if let Some((who, held)) = model.deciding(&intent.session_id, intent.round_index) {
        lines.push(fit_line(
            Line::styled(
                format!(
                    "{} deciding ({}): y takes over; the first write wins",
                    one_line(&who),
                    crate::text::countdown(held)
                ),
                theme.warn(),
            ),
            inner,
        ));
    }
    match intent.note.as_deref().filter(|n| !n.trim().is_empty()) {
        Some(note) => {
            let note = format!("note: {}", one_line(note));
            lines.extend(
                wrap(&note, inner, NOTE_LINES)
                    .into_iter()
                    .map(|l| Line::styled(l, theme.text())),
            );
        }
        None if model.desk.kept_note.is_some() => lines.push(Line::styled(
            "no note · n offers the note kept from the dialog that closed",
            theme.muted(),
        )),
        None => lines.push(Line::styled("no note", theme.muted())),
    }
    lines.push(Line::from(vec![
        Span::styled("[y]", theme.pending()),
        Span::styled(" confirm    ", theme.text()),
        Span::styled("[n]", theme.pending()),
        Span::styled(" note    ", theme.text()),
        Span::styled("any other key cancels", theme.muted()),
    ]));
    let area = centered(frame, width, lines.len() as u16 + 2);
    let title = format!("confirm{}", countdown(model, &intent.session_id));
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(panel(title, theme, true)), area);
}

/// Rows of note shown at most; a longer note scrolls with the cursor.
const NOTE_ROWS: usize = 6;

/// The note editor: the note wrapped, growing to [`NOTE_ROWS`] rows and then scrolling so that
/// the cursor's row is shown, the terminal's cursor where the text's is, and how much of the
/// limit is used.
fn note(model: &Model, intent: &Intent, theme: &Theme, frame: &mut Frame) -> Option<Position> {
    let prompt = synced(
        &model.desk.prompt,
        intent.note.as_deref().unwrap_or(""),
        Intent::MAX_NOTE,
    );
    let width = frame.area().width.min(72);
    let inner_width = width.saturating_sub(2);
    let (rows, (row, column)) = prompt.rows(inner_width);
    let shown = rows.len().max(row + 1).clamp(1, NOTE_ROWS);
    let first = (row + 1).saturating_sub(shown);
    let area = centered(frame, width, shown as u16 + 3);
    let mut lines: Vec<Line> = (first..first + shown)
        .map(|i| Line::styled(inert(rows.get(i).copied().unwrap_or("")), theme.text()))
        .collect();
    let count = prompt.value().chars().count();
    let scrolled = if rows.len() > shown {
        format!(" · rows {}-{} of {}", first + 1, first + shown, rows.len())
    } else {
        String::new()
    };
    lines.push(Line::styled(
        format!(
            "{count}/{} characters{scrolled} · ←→ Home End move · Ctrl-W word · Ctrl-U line",
            prompt.max()
        ),
        theme.muted(),
    ));
    let block = panel("note for this action".to_owned(), theme, true)
        .title_bottom(" Enter done · Esc drop the note ");
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
    let y = inner.y + (row - first) as u16;
    (y < inner.bottom() && column < inner.width).then(|| Position::new(inner.x + column, y))
}

/// `:who`: the other consoles, each under the database role that really sent its messages,
/// what it looks at and since when it is connected; their texts are escaped.
fn who(model: &Model, scroll: u16, theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 100, model.live.peers.len().max(1) as u16 + 4);
    let header = format!(
        " {:<24} {:<16} {:<32} {}",
        "operator", "database role", "looking at", "connected since"
    );
    let mut lines = vec![Line::styled(header, theme.muted())];
    if model.live.peers.is_empty() {
        let alone = match model.live.link {
            Some(_) => " no other console is connected to this database",
            None => " the demo has no other consoles: presence needs a database",
        };
        lines.push(Line::styled(alone, theme.muted()));
    }
    // On several databases, each peer under its context's name.
    let contexts = &model.live.contexts;
    let peers: Vec<(&str, &crate::domain::Peer)> = if contexts.several() {
        contexts
            .iter()
            .flat_map(|(_, c)| c.peers.iter().map(move |p| (c.name.as_str(), p)))
            .collect()
    } else {
        model.live.peers.iter().map(|p| ("", p)).collect()
    };
    for (context, peer) in peers {
        let since = peer.since.map_or_else(
            || "-".to_owned(),
            |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
        );
        let looking = match (&peer.status.editing, &peer.status.looking) {
            (Some(debate_type), _) => format!("editing the rollout of {}", one_line(debate_type)),
            (None, Some(id)) => one_line(id),
            (None, None) => "-".to_owned(),
        };
        let looking = match context {
            "" => looking,
            context => format!("{context}: {looking}"),
        };
        lines.push(Line::styled(
            format!(
                " {:<24} {:<16} {:<32} {since}",
                fit(&one_line(&peer.status.operator), 24),
                fit(&one_line(&peer.role), 16),
                fit(&looking, 32),
            ),
            theme.text(),
        ));
    }
    let title = match model.live.peers.len() {
        1 => "who else is here: 1 other console".to_owned(),
        n => format!("who else is here: {n} other consoles"),
    };
    let block = panel(title, theme, true).title_bottom(" ↑↓ scroll · Esc q close ");
    draw_scrolled(frame, area, lines, block, scroll);
}

/// Asking before acting on a decision another console is deciding.
fn take_over(model: &Model, action: crate::domain::ActionKind, theme: &Theme, frame: &mut Frame) {
    let claimed = model
        .selected_debate()
        .and_then(|d| d.pending())
        .and_then(|p| model.deciding(&p.session_id, p.round_index));
    let ask = match claimed {
        Some((who, held)) => format!(
            "{} is deciding ({}): take over?",
            one_line(&who),
            crate::text::countdown(held)
        ),
        None => "the other operator let go of it: go on?".to_owned(),
    };
    let area = centered(frame, 64, 5);
    let lines = vec![
        fit_line(Line::styled(ask, theme.warn()), 62),
        Line::from(vec![
            Span::styled("[y]", theme.pending()),
            Span::styled(format!(" {action} anyway    "), theme.text()),
            Span::styled("any other key leaves it to them", theme.muted()),
        ]),
    ];
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(panel("take over?".to_owned(), theme, true)),
        area,
    );
}

fn unlock(theme: &Theme, frame: &mut Frame) {
    let area = centered(frame, 64, 6);
    let lines = vec![
        Line::styled(
            "This console was started read-only. Unlock accept, override and escalate?",
            theme.text(),
        ),
        Line::from(vec![
            Span::styled("[y]", theme.pending()),
            Span::styled(" unlock    ", theme.text()),
            Span::styled("any other key keeps it read-only", theme.muted()),
        ]),
    ];
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel("unlock actions".to_owned(), theme, true)),
        area,
    );
}

/// Draws `lines` in `block` over `area`, cleared first, scrolled by `scroll` but never past
/// the last line.
fn draw_scrolled(
    frame: &mut Frame,
    area: Rect,
    lines: Vec<Line<'_>>,
    block: Block<'_>,
    scroll: u16,
) {
    let last = (lines.len() as u16).saturating_sub(area.height.saturating_sub(2));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((scroll.min(last), 0))
            .block(block),
        area,
    );
}
