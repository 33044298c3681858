//! The rounds table of the selected debate: who spoke, and each round's signals, judge ruling,
//! controller decision and operator action.

use std::borrow::Cow;
use std::collections::HashSet;
use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Modifier;
use ratatui::text::Span;
use ratatui::widgets::Paragraph;

use super::common::{
    Panel, compact, decision_style, figure, fit, fitted, on_one_line, one_line, panel, reported,
    ruling_style,
};
use super::grid::{Grid, Look, Next, Pen};
use crate::config::theme::Theme;
use crate::console::app::{Model, Seq, worst_ruling};
use crate::console::kept::Kept;
use crate::domain::{Debate, Decision, JudgeDecision, RoundRow, Turn};

pub(super) fn render(
    model: &Model,
    theme: &Theme,
    frame: &mut Frame,
    kept: &mut Kept,
    area: Rect,
    focused: bool,
) {
    let Some(debate) = model.selected_debate() else {
        let block = panel("rounds".to_owned(), theme, focused);
        frame.render_widget(
            Paragraph::new("no debates yet")
                .style(theme.muted())
                .block(block),
            area,
        );
        return;
    };
    let title = format!(
        "rounds · {} · {}",
        one_line(&debate.session.id),
        one_line(&debate.session.question)
    );
    let threshold = model.about.controller.similarity_threshold;
    // Only the rounds that fit are built.
    let selected = model.selected_round().map(|r| r as usize - 1);
    let shown = usize::from(area.height.saturating_sub(3));
    let offset = first_shown(model, shown);
    let first = u32::try_from(offset + 1).unwrap_or(u32::MAX);
    let last = first.saturating_add(u32::try_from(shown).unwrap_or(u32::MAX).saturating_sub(1));
    let block = Panel::new(
        fit(&title, usize::from(area.width.saturating_sub(4))),
        theme,
        focused,
    );
    // The rounds shown that have happened; only those whose rows are written are gathered.
    let numbers = first..=last.min(debate.latest_round());
    // The selected round, or the last shown when it is past them.
    let selected = selected
        .and_then(|s| s.checked_sub(offset))
        .zip(numbers.clone().count().min(shown).checked_sub(1))
        .map(|(selected, last)| (selected.min(last), theme.selection()));
    let buf = frame.buffer_mut();
    let widths = widths(area.width);
    let look = Look {
        panel: block,
        header: HEADER[..widths.len()].to_vec(),
        widths,
        header_style: theme.muted(),
    };
    let mut grid = Grid::new(buf, kept, area, look, selected);
    let columns = grid.widths();
    let table = Rc::new(Table {
        theme: theme.clone(),
        columns: columns.clone(),
        threshold,
    });
    // Live, a round's row is drawn from the debate's rows as they stand; travelling in time,
    // from a past the key does not say.
    let live = model.selected_revisions();
    for number in numbers {
        let source = live.map(|(seq, revisions)| Source {
            table: Rc::clone(&table),
            seq,
            round: number,
            revision: revisions.of(number),
        });
        match grid.row(kept, source) {
            Next::Full => break,
            Next::Kept => {}
            Next::Write(mut pen) => {
                let round = debate.round(number);
                cells(&mut pen, &round, debate, threshold, theme, &columns);
            }
        }
    }
    grid.finish(buf, kept);
}

/// What every row of the table is drawn with: the theme, the columns, and the similarity at
/// which a round counts as converged.
#[derive(PartialEq)]
struct Table {
    theme: Theme,
    columns: Vec<usize>,
    threshold: f64,
}

/// What a round's row is drawn from, live: the table, the debate (its `seq`), the round, and
/// when its rows last changed (see [`crate::console::app::Revisions`]).
#[derive(PartialEq)]
struct Source {
    table: Rc<Table>,
    seq: Seq,
    round: u32,
    revision: (u64, u64),
}

/// The table's column heads, the operator's last.
const HEADER: [&str; 8] = [
    "#",
    "persona(s)",
    "sim",
    "verdict",
    "new",
    "judge",
    "controller",
    "operator",
];

/// The table's columns on a screen `width` wide. Narrow screens leave out the operator column
/// (the decision panel shows the resolution); the verdict gets the room, personas collapse to
/// a count when their names do not fit.
fn widths(width: u16) -> Vec<Constraint> {
    if width >= 120 {
        vec![
            Constraint::Length(3),
            Constraint::Length(24),
            Constraint::Length(5),
            Constraint::Fill(1),
            Constraint::Length(4),
            Constraint::Length(17),
            Constraint::Length(20),
            Constraint::Length(16),
        ]
    } else {
        vec![
            Constraint::Length(3),
            Constraint::Length(13),
            Constraint::Length(4),
            Constraint::Fill(1),
            Constraint::Length(3),
            Constraint::Length(13),
            Constraint::Length(17),
        ]
    }
}

/// The index of the first round a table of `shown` rows shows. Following a debate, it moves by
/// half a table at a time, so that rounds landing one by one add a row each instead of
/// scrolling (and redrawing) the whole table every time, and it keeps the round last written in
/// view: a round decided again (or judged, or acted on) above the page brings the page to it,
/// the next write to the latest round back. A selected round on that page keeps it, one above
/// it gets the first page that shows it.
pub(crate) fn first_shown(model: &Model, shown: usize) -> usize {
    let (Some(debate), Some(selected)) = (model.selected_debate(), model.selected_round()) else {
        return 0;
    };
    let step = (shown / 2).max(1);
    let page = |round: u32| (round as usize).saturating_sub(shown).div_ceil(step) * step;
    let following = page(debate.latest_round());
    let shown_round = match model.nav.round_cursor() {
        None => model.nav.written().map_or(selected, |w| w.min(selected)),
        Some(_) => selected,
    };
    if shown_round as usize > following {
        following
    } else {
        page(shown_round)
    }
}

/// One round's cells, drawn with `pen`, each cut to its column's width in `columns` (with `…`);
/// a persona who joins later (an escalation, a replacement) than the first round of `debate` is
/// marked `+`.
fn cells(
    pen: &mut Pen,
    round: &RoundRow<'_>,
    debate: &Debate,
    threshold: f64,
    theme: &Theme,
    columns: &[usize],
) {
    let width = |column: usize| columns.get(column).copied().unwrap_or(0);
    let signals = round.decision.map(|d| &d.signals);
    let similarity = signals.and_then(|s| s.similarity);
    let similarity_style = match similarity {
        Some(s) if s >= threshold => theme.ok(),
        Some(s) if s.is_finite() => theme.text(),
        Some(_) => theme.danger(),
        None => theme.muted(),
    };
    let verdict = match signals {
        Some(s) if s.verdict_split == Some(true) => Span::styled(
            fit(
                &format!("split: {}", one_line(s.verdict.as_deref().unwrap_or(""))),
                width(3),
            ),
            theme.warn(),
        ),
        Some(s) => Span::styled(
            fit(&on_one_line(s.verdict.as_deref().unwrap_or("—")), width(3)),
            if s.verdict_stable == Some(true) {
                theme.ok()
            } else {
                theme.text()
            },
        ),
        None => Span::styled("—", theme.muted()),
    };
    let new_claims = signals
        .and_then(|s| s.new_claims)
        .map_or(Cow::Borrowed("—"), |n| Cow::Owned(compact(n.into())));
    let judge = match worst_ruling(&round.judgments) {
        Some(j) => Span::styled(
            fit(
                &format!(
                    "{} {}",
                    figure(j.score),
                    reported(&j.decision, JudgeDecision::as_str, usize::MAX)
                ),
                width(5),
            ),
            ruling_style(theme, &j.decision),
        ),
        None => Span::styled("—", theme.muted()),
    };
    let controller = match round.decision {
        Some(d) => Span::styled(
            reported(&d.decision, Decision::as_str, width(6)),
            decision_style(theme, &d.decision),
        ),
        None => Span::styled("—", theme.muted()),
    };
    let operator = match round.action {
        Some(a) => Span::styled(
            fit(&one_line(&format!("{} {}", a.action, a.who())), width(7)),
            theme.accent(),
        ),
        None if round.decision.is_some() => Span::styled("·", theme.muted()),
        None => Span::raw(""),
    };
    pen.right(0, Span::raw(compact(round.number.into())));
    personas(pen, round, debate, theme, width(1));
    let similarity = figure(similarity);
    pen.left(
        2,
        [Span::styled(
            fitted(&similarity, width(2)),
            similarity_style,
        )],
    );
    pen.left(3, [verdict]);
    pen.right(4, Span::raw(new_claims));
    pen.left(5, [judge]);
    pen.left(6, [controller]);
    pen.left(7, [operator]);
}

/// Who spoke in a round, in spoken order, drawn with `pen` in the second column: their names
/// when they fit in `width`, else how many spoke (and how many joined), e.g. `4 personas +1`. A
/// superseded turn is struck through, one who joined later is marked `+`.
fn personas(pen: &mut Pen, round: &RoundRow<'_>, debate: &Debate, theme: &Theme, width: usize) {
    // A persona joined in the first round it spoke in, after the first.
    let joined = |turn: &Turn| {
        round.number > 1
            && debate
                .first_spoke(&turn.agent_persona)
                .is_none_or(|first| first >= round.number)
    };
    let names = || {
        round.turns.iter().enumerate().flat_map(|(i, turn)| {
            let style = if turn.superseded {
                theme.danger().add_modifier(Modifier::CROSSED_OUT)
            } else if joined(turn) || turn.metadata.replaces.is_some() {
                theme.warn()
            } else {
                theme.text()
            };
            let name = on_one_line(&turn.agent_persona);
            let name = if joined(turn) {
                Cow::Owned(format!("+{name}"))
            } else {
                name
            };
            let separator = (i > 0).then(|| Span::styled(" ", theme.muted()));
            separator.into_iter().chain([Span::styled(name, style)])
        })
    };
    if names().map(|span| span.width()).sum::<usize>() <= width {
        pen.left(1, names());
        return;
    }
    let spoke: HashSet<&str> = round
        .turns
        .iter()
        .map(|t| t.agent_persona.as_str())
        .collect();
    let newcomers = round.turns.iter().filter(|t| joined(t)).count();
    let count = match newcomers {
        0 => format!("{} personas", spoke.len()),
        n => format!("{} personas +{n}", spoke.len()),
    };
    let style = if newcomers > 0 {
        theme.warn()
    } else {
        theme.text()
    };
    pen.filled(1, &fit(&count, width), style);
}
