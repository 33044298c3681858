//! The debates list: a marker for a decision waiting for the operator (with the time it has
//! left) or an advisory one, its database's name when several are shown together (marked
//! when that database is down or connecting), the id (`✎` when operators pinned notes to it, `⚠` when a row was
//! read with issues), the topic (on wide screens), mode and status badges, the
//! round, and the last decision of a running debate or how a finished one ended; the title
//! counts what is shown, waiting and advisory, and says the sort and the filter. Text cut to
//! fit ends in `…`.

use std::borrow::Cow;
use std::rc::Rc;
use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::common::{
    Panel, compact, countdown, decision_style, fit, fitted, on_one_line, one_line, reported,
};
use super::grid::{Grid, Look, Next, Pen};
use crate::config::theme::Theme;
use crate::console::app::{Link, Model, Seq, SortOrder, Summary};
use crate::console::kept::Kept;
use crate::domain::{ControllerMode, Decision, Ending, Reported, SessionStatus};

/// Below this width the topic column is left out (the detail's title shows it).
const WIDE: u16 = 120;

/// Draws the rows that fit, around the selection: the cost of a frame does not grow with the
/// debates held.
pub(super) fn render(
    model: &Model,
    theme: &Theme,
    frame: &mut Frame,
    kept: &mut Kept,
    area: Rect,
    focused: bool,
) {
    let wide = area.width >= WIDE;
    let window = model.debates.window(
        model.nav.selected,
        usize::from(area.height.saturating_sub(3)),
    );
    let contexts = &model.live.contexts;
    let columned = model.columned();
    let heading = Heading {
        held: model.debates.len(),
        listed: model.debates.listed(),
        within: model
            .debates
            .context()
            .map(|ctx| one_line(contexts.name(ctx))),
        filter: model.filter().to_owned(),
        waiting: model.debates.waiting(),
        advisory: model.debates.advisory(),
        sort: model.sort(),
        context_names: columned.then(|| {
            let longest = contexts.iter().map(|(_, c)| c.name.chars().count()).max();
            longest.unwrap_or(0)
        }),
        theme: theme.clone(),
        focused,
    };
    let buf = frame.buffer_mut();
    let selected = window.selected.map(|at| (at, theme.selection()));
    let look = |heading: &Heading| heading.look(area.width);
    let mut grid = Grid::headed(buf, kept, area, heading, look, selected);
    let columns = grid.widths();
    let table = Rc::new(Table {
        theme: theme.clone(),
        columns: columns.clone(),
        wide,
        links: contexts.iter().map(|(_, c)| Shown::of(&c.link)).collect(),
    });
    let summaries = window.rows.iter().filter_map(|&seq| model.debates.get(seq));
    for summary in summaries {
        let claimed = summary
            .pending()
            .and_then(|round| model.deciding_in(summary.ctx, &summary.id, round));
        let left = model.time_left(summary);
        let claimed = claimed.map(|(who, _)| who);
        let source = Source {
            table: Rc::clone(&table),
            seq: summary.seq,
            revision: summary.revision,
            left: left.map(|left| (left.as_secs(), left.is_zero())),
            claimed: claimed.clone(),
        };
        match grid.row(kept, Some(source)) {
            Next::Full => break,
            Next::Kept => {}
            Next::Write(mut pen) => {
                let waiting = Waiting { left, claimed };
                row(
                    &mut pen,
                    model,
                    summary,
                    &waiting,
                    theme,
                    (wide, columned),
                    &columns,
                );
            }
        }
    }
    grid.finish(buf, kept);
}

/// What the list's panel and header row are drawn from: the debates held and listed (and the
/// database and filter they are listed by), the decisions pending, the order, the context
/// column's widest name (when the list has one), the theme and whether the list has the focus.
#[derive(PartialEq)]
struct Heading {
    held: usize,
    listed: usize,
    within: Option<String>,
    filter: String,
    waiting: usize,
    advisory: usize,
    sort: SortOrder,
    context_names: Option<usize>,
    theme: Theme,
    focused: bool,
}

impl Heading {
    /// The list's look on a screen `width` wide: the title counts what is shown, waiting and
    /// advisory, and says the sort and the filter.
    fn look(&self, width: u16) -> Look {
        let mut widths = vec![
            Constraint::Length(7),
            Constraint::Length(26),
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(5),
            Constraint::Length(26),
        ];
        let mut header = vec![
            "", "debate", "question", "mode", "status", "round", "decision",
        ];
        if width < WIDE {
            widths.remove(2);
            header.remove(2);
            widths[1] = Constraint::Fill(1);
        }
        if let Some(longest) = self.context_names {
            let width = u16::try_from(longest.max(5) + 2).unwrap_or(u16::MAX);
            widths.insert(1, Constraint::Length(width));
            header.insert(1, "context");
        }
        let within = self
            .within
            .as_ref()
            .map(|name| format!(" in {name}"))
            .unwrap_or_default();
        let (held, listed) = (self.held, self.listed);
        let shown = match (self.filter.as_str(), within.as_str()) {
            ("", "") => format!("{held}"),
            ("", within) => format!("{listed} of {held}{within}"),
            (filter, within) => {
                format!("{listed} of {held}{within} match /{}", one_line(filter))
            }
        };
        let title = format!(
            "debates ({shown}) · {} · sorted by {}",
            counts(self.waiting, self.advisory),
            self.sort.label()
        );
        Look {
            panel: Panel::new(
                fit(&title, usize::from(width.saturating_sub(4))),
                &self.theme,
                self.focused,
            ),
            widths,
            header,
            header_style: self.theme.muted(),
        }
    }
}

/// What every row of the list is drawn with: the theme, the columns, whether the question is
/// shown, and how each context's link stands (the context column marks it), by context.
#[derive(PartialEq)]
struct Table {
    theme: Theme,
    columns: Vec<usize>,
    wide: bool,
    links: Vec<Shown>,
}

/// What a row of the list is drawn from: the table, its debate as filed (its `seq` and
/// revision), the whole seconds its decision has left, and who claimed that decision.
#[derive(PartialEq)]
struct Source {
    table: Rc<Table>,
    seq: Seq,
    revision: u32,
    left: Option<(u64, bool)>,
    claimed: Option<String>,
}

/// How a debate's decision waits: the time it has left, and who claimed it.
struct Waiting {
    left: Option<Duration>,
    claimed: Option<String>,
}

/// How a context's link shows in the context column.
#[derive(PartialEq)]
enum Shown {
    Live,
    Connecting,
    Down,
}

impl Shown {
    fn of(link: &Link) -> Shown {
        match link {
            Link::Live => Shown::Live,
            Link::Connecting => Shown::Connecting,
            Link::Down { .. } => Shown::Down,
        }
    }
}

/// The decisions pending, as the header and the list's title say them: those waiting for an
/// operator, and the advisory ones.
pub(super) fn counts(waiting: usize, advisory: usize) -> String {
    format!("{waiting} waiting · {advisory} advisory")
}

/// A word on a coloured background, the style of a badge: ` running `, ` gated `.
fn badge(style: Style) -> Style {
    style.add_modifier(Modifier::REVERSED | Modifier::BOLD)
}

/// A badge's word as shown, ` padded `: a known one without allocating.
fn padded<'a>(text: Cow<'a, str>) -> Cow<'a, str> {
    const KNOWN: [&str; 7] = [
        " running ",
        " done ",
        " aborted ",
        " gated ",
        " shadow ",
        " enabled ",
        " off ",
    ];
    KNOWN
        .iter()
        .find(|k| k.trim() == text)
        .map_or_else(|| Cow::Owned(format!(" {text} ")), |k| Cow::Borrowed(*k))
}

/// One debate's row, drawn with `pen` in `columns` (the question's left out when not `wide`;
/// its database's name after the marker when `columned`), its decision `waiting` as it does.
fn row(
    pen: &mut Pen,
    model: &Model,
    summary: &Summary,
    waiting: &Waiting,
    theme: &Theme,
    (wide, columned): (bool, bool),
    columns: &[usize],
) {
    let claimed = &waiting.claimed;
    let marker = match (waiting.left, summary.pending()) {
        (Some(left), _) if left.is_zero() => Span::styled("● late", theme.danger()),
        (Some(left), _) if claimed.is_some() => {
            Span::styled(format!("◐ {}", countdown(left)), theme.warn())
        }
        (Some(left), _) => Span::styled(format!("● {}", countdown(left)), theme.pending()),
        (None, Some(_)) => Span::styled("○", theme.muted()),
        (None, None) => Span::raw(""),
    };
    let status = match &summary.status {
        Reported::Known(status) => {
            let style = match status {
                SessionStatus::Running => theme.accent(),
                SessionStatus::Completed => theme.ok(),
                SessionStatus::Aborted => theme.danger(),
            };
            Span::styled(padded(status.shown().into()), badge(style))
        }
        Reported::Unknown(raw) => Span::styled(
            padded(fit(&format!("?{}", one_line(raw)), 7).into()),
            badge(theme.danger()),
        ),
    };
    let mode = match &summary.mode {
        Reported::Known(ControllerMode::Gated) => ("gated".into(), theme.pending()),
        Reported::Known(ControllerMode::Shadow) => ("shadow".into(), theme.muted()),
        Reported::Known(ControllerMode::Enabled) => ("enabled".into(), theme.accent()),
        Reported::Known(ControllerMode::Off) => ("off".into(), theme.muted()),
        Reported::Unknown(raw) => (
            fit(&format!("?{}", one_line(raw)), 5).into(),
            theme.danger(),
        ),
    };
    let mode = Span::styled(padded(mode.0), badge(mode.1));
    let last_width = columns.last().copied().unwrap_or(0);
    let last = match (summary.ending(), &summary.last_decision) {
        (None, _) if let Some(who) = claimed => Span::styled(
            fit(&format!("{} deciding", one_line(who)), last_width),
            theme.warn(),
        ),
        (Some(ending), _) => Span::styled(
            fit(&one_line(&ending.to_string()), last_width),
            ending_style(theme, &ending),
        ),
        (None, Some(decision)) => Span::styled(
            reported(decision, Decision::as_str, last_width),
            decision_style(theme, decision),
        ),
        (None, None) => Span::styled("—", theme.muted()),
    };
    let mut round = compact(summary.rounds().into());
    round.push('/');
    round.push_str(&compact(summary.max_rounds.into()));
    let flag = if summary.flagged() { " ⚠" } else { "" };
    let noted = if summary.noted { " ✎" } else { "" };
    let after = usize::from(columned);
    let id_width = columns
        .get(1 + after)
        .copied()
        .unwrap_or(0)
        .saturating_sub(flag.chars().count() + noted.chars().count());
    let id = on_one_line(&summary.id);
    let id = fitted(&id, id_width);
    pen.left(0, [marker]);
    if columned {
        pen.left(1, [context(model, summary, theme)]);
    }
    pen.left(
        1 + after,
        [
            Span::styled(id.as_ref(), theme.text()),
            Span::styled(noted, theme.accent()),
            Span::styled(flag, theme.danger()),
        ],
    );
    let mut column = 2 + after;
    if wide {
        let question = fitted(&summary.question, columns.get(column).copied().unwrap_or(0));
        pen.left(column, [Span::styled(question.as_ref(), theme.muted())]);
        column += 1;
    }
    pen.left(column, [mode]);
    pen.left(column + 1, [status]);
    pen.right(column + 2, Span::raw(round));
    pen.left(column + 3, [last]);
}

/// The name of the debate's database, marked when its feed is not live (`✗` down: what the
/// row shows may be stale; `◌` connecting).
fn context<'m>(model: &'m Model, summary: &Summary, theme: &Theme) -> Span<'m> {
    let Some(context) = model.live.contexts.get(summary.ctx) else {
        return Span::raw("");
    };
    match context.link {
        Link::Live => Span::styled(context.name.as_str(), theme.muted()),
        Link::Connecting => Span::styled(format!("◌ {}", context.name), theme.warn()),
        Link::Down { .. } => Span::styled(format!("✗ {}", context.name), theme.danger()),
    }
}

/// How a finished debate's ending is coloured: an abort or a timeout stands out.
fn ending_style(theme: &Theme, ending: &Ending) -> Style {
    match ending {
        Ending::JudgeAbort => theme.danger(),
        Ending::Timeout(_) => theme.warn(),
        Ending::Operator(_) | Ending::Accepted(_) => theme.accent(),
        Ending::Controller(decision) => decision_style(theme, decision),
        Ending::FixedLoop | Ending::Unexplained => theme.muted(),
    }
}
