//! The header line, most important first (a narrow terminal cuts the end): the time cursor,
//! what waits for the operator, the rollouts that need them, the connection (or each database's
//! of several), where a console reading a subscriber reads and what holds it up, the other
//! consoles, read-only, the source, playback (the demo's; a live feed only says when it is
//! paused), the operator and the similarity measure. It is written down from its [`Source`]
//! alone, the values it shows gathered from the model: a frame whose source is the one the
//! header was drawn from keeps it without writing it down again.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::common::{countdown, fit, fit_line, one_line};
use super::debates;
use super::sketch::Sketch;
use crate::config::theme::Theme;
use crate::console::app::{Action, COMPARED, Link, Model, Reading, SlotTrouble, Stall, wal_size};
use crate::console::kept::Kept;
use crate::simulate::Playback;

/// Draws the header of `model` in `area` (one line), a region kept in `kept`.
pub(super) fn render(model: &Model, theme: &Theme, kept: &mut Kept, buf: &mut Buffer, area: Rect) {
    let source = Source::of(model, theme, area.width);
    Sketch::sourced(source, kept, buf, area, |source, sketch| {
        sketch.render_widget(source.line(), area);
    });
}

/// Everything the header shows, as gathered from the model.
#[derive(PartialEq)]
struct Source {
    width: u16,
    theme: Theme,
    /// The time cursor: the round it stands at, the time of its moment, and the live debate's
    /// latest round.
    past: Option<(u32, String, u32)>,
    /// The decisions pending: waiting for an operator, and advisory.
    waiting: usize,
    advisory: usize,
    /// The rollouts whose guards trip, the key that opens them, and the database whose they
    /// are when there are several.
    rollouts: Option<(Vec<String>, String, Option<String>)>,
    link: Option<Link>,
    /// Each database of several: its name, its feed's link, and whether it is read-only to
    /// this console.
    contexts: Vec<(String, Link, bool)>,
    reading: Option<Reading>,
    peers: usize,
    denied: Option<String>,
    read_only: bool,
    source: String,
    playback: Playback,
    held_back: usize,
    operator: String,
    similarity: String,
}

impl Source {
    fn of(model: &Model, theme: &Theme, width: u16) -> Source {
        let past = model.nav.past.as_ref().map(|past| {
            let at = past.debate.time_of(past.moment).map_or_else(
                || "time not recorded".to_owned(),
                |t| t.format("%H:%M:%S").to_string(),
            );
            let live = model.selected_summary().map_or(0, |s| s.latest_round);
            (past.moment.round, at, live)
        });
        let live = &model.live;
        let several = live.contexts.several();
        let needing = model.rollout.needing();
        let rollouts = (!needing.is_empty()).then(|| {
            (
                needing.into_iter().map(str::to_owned).collect(),
                model.settings.keymap.hint(Action::Rollout),
                several.then(|| live.contexts.name(COMPARED).to_owned()),
            )
        });
        let contexts = match several {
            true => live
                .contexts
                .iter()
                .map(|(_, context)| {
                    let read_only = context.read_only || context.denied.is_some();
                    (context.name.clone(), context.link.clone(), read_only)
                })
                .collect(),
            false => Vec::new(),
        };
        Source {
            width,
            theme: theme.clone(),
            past,
            waiting: model.debates.waiting(),
            advisory: model.debates.advisory(),
            rollouts,
            link: live.link.clone(),
            contexts,
            reading: live.reading.clone(),
            peers: live.peers.len(),
            denied: live.denied.clone(),
            read_only: model.settings.read_only,
            source: model.about.source.clone(),
            playback: model.time.playback,
            held_back: live.held_back.len(),
            operator: model.about.operator.clone(),
            similarity: model.about.similarity.clone(),
        }
    }

    /// The header's line.
    fn line(&self) -> Line<'static> {
        let theme = &self.theme;
        let counts = Span::styled(
            format!(" {} ", debates::counts(self.waiting, self.advisory)),
            if self.waiting > 0 {
                theme.pending()
            } else {
                theme.muted()
            },
        );
        let playback = match (&self.link, self.playback.paused) {
            (Some(_), true) => Span::styled(
                format!("│ ⏸ paused, {} rows held ", self.held_back),
                theme.warn(),
            ),
            (Some(_), false) => Span::raw(""),
            (None, true) => Span::styled("│ ⏸ paused ", theme.warn()),
            (None, false) => Span::styled(format!("│ ▶ {}x ", self.playback.speed), theme.ok()),
        };
        let link = match &self.link {
            _ if !self.contexts.is_empty() => Span::raw(""),
            None => Span::raw(""),
            Some(Link::Live) => Span::styled("│ ● live ", theme.ok()),
            Some(Link::Connecting) => Span::styled("│ ◌ connecting ", theme.warn()),
            Some(Link::Down { error, retry_in }) => Span::styled(
                format!(
                    "│ ✗ down: {} (retry in {:.1}s) ",
                    fit(&one_line(error), 48),
                    retry_in.as_secs_f64()
                ),
                theme.danger(),
            ),
        };
        let reading = self
            .reading
            .as_ref()
            .map_or_else(Vec::new, |r| reading(r, theme));
        let others = match (&self.link, self.peers) {
            (None, _) => Span::raw(""),
            (Some(_), 0) => Span::styled("│ 0 others here ", theme.muted()),
            (Some(_), 1) => Span::styled("│ 1 other here ", theme.accent()),
            (Some(_), n) => Span::styled(format!("│ {n} others here "), theme.accent()),
        };
        let access = match (&self.denied, self.read_only) {
            (Some(why), _) => Span::styled(
                format!("│ read-only: {} ", fit(&one_line(why), 40)),
                theme.warn(),
            ),
            (None, true) => Span::styled("│ read-only ", theme.warn()),
            (None, false) => Span::raw(""),
        };
        let mut spans = vec![
            Span::styled(" gavel ", theme.title()),
            Span::styled("│", theme.muted()),
            self.as_of(),
            counts,
            self.guards(),
            link,
        ];
        spans.extend(reading);
        spans.extend(self.contexts());
        spans.extend([
            others,
            access,
            Span::styled("│ ", theme.muted()),
            Span::styled(one_line(&self.source), theme.text()),
            Span::raw(" "),
            playback,
            Span::styled("│ operator ", theme.muted()),
            Span::styled(fit(&one_line(&self.operator), 24), theme.text()),
            Span::styled(" │ similarity ", theme.muted()),
            Span::styled(one_line(&self.similarity), theme.text()),
            Span::styled(" │ ? help", theme.muted()),
        ]);
        fit_line(Line::from(spans), self.width.into())
    }

    /// Where the time cursor stands, first: `as of round 3 · 14:02:11 · live: round 6` (the
    /// time of the decision, or of the action on it, in UTC); nothing when live.
    fn as_of(&self) -> Span<'static> {
        let Some((round, at, live)) = &self.past else {
            return Span::raw("");
        };
        Span::styled(
            format!(" as of round {round} · {at} · live: round {live} │"),
            self.theme.warn(),
        )
    }

    /// The rollouts whose guards trip, after the decisions waiting: `│ ⚠ rollout of standard
    /// needs you (R) ` (on several databases, `of standard in prod`: the first's, whose are
    /// guarded).
    fn guards(&self) -> Span<'static> {
        let Some((needing, key, compared)) = &self.rollouts else {
            return Span::raw("");
        };
        let at = compared
            .as_ref()
            .map_or_else(String::new, |name| format!(" in {name}"));
        let what = match needing.as_slice() {
            [one] => format!("rollout of {}{at} needs", fit(&one_line(one), 24)),
            many => format!("{} rollouts{at} need", many.len()),
        };
        Span::styled(format!("│ ⚠ {what} you ({key}) "), self.theme.danger())
    }

    /// Each database of several, how its feed stands: `│ ● prod ◌ staging ✗ qa down: why
    /// (retry in 1.2s) `; ` ro` after one locked read-only or whose role may not act.
    fn contexts(&self) -> Vec<Span<'static>> {
        let theme = &self.theme;
        if self.contexts.is_empty() {
            return Vec::new();
        }
        let mut spans = vec![Span::styled("│", theme.muted())];
        for (name, link, read_only) in &self.contexts {
            let name = one_line(name);
            let mut span = match link {
                Link::Live => Span::styled(format!(" ● {name}"), theme.ok()),
                Link::Connecting => Span::styled(format!(" ◌ {name}"), theme.warn()),
                Link::Down { error, retry_in } => Span::styled(
                    format!(
                        " ✗ {name} down: {} (retry in {:.1}s)",
                        fit(&one_line(error), 32),
                        retry_in.as_secs_f64()
                    ),
                    theme.danger(),
                ),
            };
            if *read_only {
                span.content.to_mut().push_str(" ro");
            }
            spans.push(span);
        }
        spans.push(Span::raw(" "));
        spans
    }
}

/// What the primary keeps for the subscriber, when an operator should know: `│ ✗ slot lost:
/// rebuild the subscriber `, `│ ⚠ slot inactive, keeps 80 MB `, `│ ⚠ slot keeps 1.2 GB of WAL `
/// (the slot named when there are several).
fn slot(reading: &Reading, theme: &Theme) -> Option<Span<'static>> {
    let trouble = reading.slot_trouble()?;
    let slot = |name: &str| {
        if reading.several_slots() {
            format!("slot {}", fit(&one_line(name), 40))
        } else {
            "slot".to_owned()
        }
    };
    let keeps = |mib: u64| match mib {
        0 => String::new(),
        mib => format!(", keeps {}", wal_size(mib)),
    };
    let (text, style) = match trouble {
        SlotTrouble::Unknown(why) => (
            format!("⚠ slot unknown: {}", fit(&one_line(why), 40)),
            theme.warn(),
        ),
        SlotTrouble::Lost(name) => (
            format!("✗ {} lost: rebuild the subscriber", slot(name)),
            theme.danger(),
        ),
        SlotTrouble::Missing(name) => (
            format!("✗ {} missing on the primary", slot(name)),
            theme.danger(),
        ),
        SlotTrouble::Unreserved(name, mib) => (
            format!("✗ {} about to be lost{}", slot(name), keeps(mib)),
            theme.danger(),
        ),
        SlotTrouble::Inactive(name, mib) => (
            format!("⚠ {} inactive{}", slot(name), keeps(mib)),
            theme.warn(),
        ),
        SlotTrouble::Keeping(name, mib) => (
            format!("⚠ {} keeps {} of WAL", slot(name), wal_size(mib)),
            theme.warn(),
        ),
    };
    Some(Span::styled(format!("│ {text} "), style))
}

/// Where a console reading a subscriber reads, and whatever makes what it shows stale or its
/// writes fail: `│ reading replica-1:5432/debates │ behind 0:04 `, `│ ✗ subscription gavel
/// disabled `, `│ ✗ primary: why (writes fail) `, and what the primary keeps for it.
fn reading(reading: &Reading, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(
        format!("│ reading {} ", fit(&one_line(&reading.from), 56)),
        theme.text(),
    )];
    match &reading.primary {
        Link::Live => {}
        Link::Connecting => spans.push(Span::styled("│ ◌ primary ", theme.warn())),
        Link::Down { error, .. } => spans.push(Span::styled(
            format!("│ ✗ primary: {} (writes fail) ", fit(&one_line(error), 48)),
            theme.danger(),
        )),
    }
    let stall = match reading.stall() {
        None => None,
        Some(Stall::Unknown(why)) => Some((
            format!("│ ⚠ subscription unknown: {} ", fit(&one_line(why), 40)),
            theme.warn(),
        )),
        Some(Stall::Unsubscribed) => Some(("│ ⚠ subscribes to nothing ".to_owned(), theme.warn())),
        Some(Stall::Disabled(name)) => Some((
            format!("│ ✗ subscription {} disabled ", fit(&one_line(name), 40)),
            theme.danger(),
        )),
        Some(Stall::NotApplying(name, errors)) => Some((
            format!(
                "│ ✗ subscription {} not applying{} ",
                fit(&one_line(name), 40),
                match errors {
                    Some(n) if n > 0 => format!(" ({n} errors)"),
                    _ => String::new(),
                }
            ),
            theme.danger(),
        )),
    };
    spans.extend(stall.map(|(text, style)| Span::styled(text, style)));
    if let Some(behind) = reading.lagging() {
        spans.push(Span::styled(
            format!(
                "│ behind {} ",
                countdown(Duration::from_secs(behind.as_secs()))
            ),
            theme.warn(),
        ));
    }
    spans.extend(slot(reading, theme));
    spans
}
