//! Rows as a hostile writer leaves them, read by the database's lenient readers within the
//! default limits, and a console model fed with them.

use gavel::console::app::{Event, Model, update};
use gavel::domain::{Change, Limits};
use gavel::store::postgres::rows::{decision_from, session_from, turn_from};

/// A round number far beyond any limit.
pub const HUGE: &str = "2147483647";

/// A `debate_rounds` row of debate `s` as text columns, in `TURN_COLUMNS` order.
pub fn turn_row(id: &str, round: Option<&str>, tokens: &str, content: &str) -> Change {
    Change::Turn(turn_from(
        &[
            Some(id),
            Some("s"),
            round,
            Some("theorist"),
            Some(content),
            Some(tokens),
            Some("false"),
            None,
            None,
        ],
        &Limits::default(),
    ))
}

/// A `debate_round_decisions` row of debate `s`.
pub fn decision_row(round: &str, signals: &str) -> Change {
    Change::Decision(decision_from(
        &[
            Some("s"),
            Some(round),
            Some("continue_baseline"),
            Some(signals),
            None,
        ],
        &Limits::default(),
    ))
}

/// A running debate `s` whose session row claims absurd counts.
pub fn hostile_session() -> Change {
    Change::Session(session_from(
        &[
            Some("s"),
            Some("Topic \u{1b}[2J\u{2028}"),
            None,
            Some("running"),
            Some("gated"),
            Some("-1"),
            Some("-5"),
            Some(HUGE),
            Some("-100"),
            Some("99999999999999999"),
            Some(r#"["theorist", "skeptic"]"#),
            Some(
                r#"{"agent_count": -3, "complexity": 0.5, "cost_usd": -2, "budget_usd": 1e300,
                    "usd_per_1k_tokens": 0.01}"#,
            ),
            Some("NaN"),
            Some("Infinity"),
        ],
        &Limits::default(),
    ))
}

/// `model` once it has been handed `rows`, settled.
pub fn fed(mut model: Model, rows: impl IntoIterator<Item = Change>) -> Model {
    for row in rows {
        update(&mut model, Event::Store(Box::new(row)));
    }
    model.prepare_frame();
    model
}
